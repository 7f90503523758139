//! The Kubernetes layout of a model: the object names of tiers, teams and pools, the labels
//! and taints placid writes on each node, and which queue holds which tier. Its children are
//! what the layout is made of: [`cells`] (the partition of the nodes into ResourceFlavors),
//! [`quota`] (how the cells are split between queues) and [`resources`] (the amounts both
//! add up).
//!
//! Invariants: the labels a ResourceFlavor selects are exactly the labels NFD writes, and they
//! are computed here once, from pool membership, so both sides cannot drift apart: a node
//! carries `<prefix>/pool-<pool>=true` if and only if it is a member of the pool, and
//! `<prefix>/cell=<cell>` if and only if it is in that cell ([`Cells`]), the one label
//! ResourceFlavors select. Nodes of a pool where a tier reserves GPUs carry the
//! `<prefix>/reserved=<pool>` taint, so only pods admitted on that pool's cells' flavors
//! (which tolerate it) land there.

use std::collections::BTreeMap;

use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Class, KubernetesSettings, Model, Node, NodeId, PoolId, TierId};
use placid_lang::name::LabelKey;

pub mod cells;
pub mod quota;
pub mod resources;

use crate::facts::NodeFact;
use crate::k8s::names::{LabelValue, ObjectName, PlacidKeys};
use cells::Cells;

/// Names of a tier's objects.
#[derive(Clone, Debug)]
pub struct TierNames {
    /// The WorkloadPriorityClass and LocalQueue name (`p0`).
    pub object: ObjectName,
    /// The PriorityClass name, with the value in it (`p0-1000`) since the value is immutable.
    pub priority_class: ObjectName,
    /// The ClusterQueue of a tier that holds reservations (`tier-p0`), if it has any or is
    /// never preempted.
    pub reserved_queue: Option<ObjectName>,
}

/// Names of a team's objects.
#[derive(Clone, Debug)]
pub struct TeamNames {
    /// The ClusterQueue name and the value of the team label (`vision`).
    pub object: ObjectName,
    /// The team's namespace.
    pub namespace: ObjectName,
}

/// A pool's names.
#[derive(Clone, Debug)]
pub struct PoolLayout {
    /// The pool as an object name: the value of its reservation taint, the base of its
    /// cells' names.
    pub flavor: ObjectName,
    /// The membership label key.
    pub label: LabelKey,
    /// Whether tiers reserve GPUs here (its nodes are tainted).
    pub reserved: bool,
}

/// What placid writes on one node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeMarks {
    /// Labels, sorted by key.
    pub labels: BTreeMap<LabelKey, LabelValue>,
    /// `NoSchedule` taints (key, value), sorted.
    pub taints: Vec<(LabelKey, LabelValue)>,
}

/// The layout of a whole model.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The label and taint keys.
    pub keys: PlacidKeys,
    /// The project's object name (Cohort, Topology, NodeFeatureRule, Argo CD project).
    pub project: ObjectName,
    /// placid's own namespace.
    pub namespace: ObjectName,
    /// By [`TierId`].
    pub tiers: Vec<TierNames>,
    /// By team index.
    pub teams: Vec<TeamNames>,
    /// By [`PoolId`].
    pub pools: Vec<PoolLayout>,
    /// The ResourceFlavors: the partition of the nodes into cells.
    pub cells: Cells,
    /// By [`NodeId`].
    pub nodes: Vec<NodeMarks>,
    /// The team label key.
    pub team_label: LabelKey,
    /// The Topology's rack level label key ([`PlacidKeys::rack_level`]), on every node; not
    /// the `rack` fact, which only nodes in a rack carry.
    pub rack_label: LabelKey,
    /// The Topology's NVLink-domain level label key ([`PlacidKeys::domain_level`]), on every
    /// node; not the `nvlink-domain` fact, which only nodes of a domain carry.
    pub domain_label: LabelKey,
    /// The node label of the chassis, the Topology level between NVLink domain and node;
    /// `None` when no node of the inventory names a chassis.
    pub chassis_label: Option<LabelKey>,
    /// The reservation taint key.
    pub reserved_taint: LabelKey,
    /// The cell label key, the one key every ResourceFlavor selects.
    pub cell_label: LabelKey,
    /// The label key that names the migration of a Rollout or AnalysisTemplate.
    pub migration_label: LabelKey,
    /// The key of every fact placid publishes on nodes ([`PlacidKeys::published_facts`]).
    pub fact_labels: Vec<(NodeFact, LabelKey)>,
}

/// Keeps the value or records the diagnostic, so every problem of a model is reported at once.
fn take<T>(diagnostics: &mut Diagnostics, result: Result<T, Diagnostic>) -> Option<T> {
    result.map_err(|diagnostic| diagnostics.push(diagnostic)).ok()
}

impl Layout {
    /// Computes the layout, or every naming and labelling problem of the model.
    pub fn new(model: &Checked, settings: &KubernetesSettings) -> Result<Layout, Diagnostics> {
        let mut diagnostics = Diagnostics::new();
        let keys = PlacidKeys::new(&settings.label_prefix.value, settings.label_prefix.span);
        let project = take(&mut diagnostics, ObjectName::map(&model.project.name, model.project.span, "project"));
        let namespace = take(&mut diagnostics, ObjectName::map(&settings.namespace, settings.span, "namespace"));
        let team_label = take(&mut diagnostics, keys.team());
        let rack_label = take(&mut diagnostics, keys.rack_level());
        let domain_label = take(&mut diagnostics, keys.domain_level());
        let chassis_label = match model.nodes.iter().any(|node| node.chassis.is_some()) {
            true => take(&mut diagnostics, keys.chassis()).map(Some),
            false => Some(None),
        };
        let reserved_taint = take(&mut diagnostics, keys.reserved());
        let migration_label = take(&mut diagnostics, keys.migration());
        let cell_label = take(&mut diagnostics, keys.cell());
        let fact_labels = take(&mut diagnostics, keys.published_facts());

        let tiers: Vec<Option<TierNames>> = model.tiers.iter().map(|tier| take(&mut diagnostics, tier_names(tier))).collect();
        let teams: Vec<Option<TeamNames>> = model
            .teams
            .iter()
            .map(|team| {
                let object = take(&mut diagnostics, ObjectName::map(&team.name, team.span, "team"));
                let namespace = take(&mut diagnostics, ObjectName::map(&team.namespace, team.span, "namespace"));
                Some(TeamNames { object: object?, namespace: namespace? })
            })
            .collect();
        let pools: Vec<Option<PoolLayout>> = model
            .pools
            .iter()
            .enumerate()
            .map(|(index, pool)| {
                let flavor = take(&mut diagnostics, ObjectName::map(&pool.name, pool.span, "pool"))?;
                let label = take(&mut diagnostics, keys.pool(&flavor, pool.span))?;
                Some(PoolLayout { flavor, label, reserved: model.is_fenced(PoolId::from_index(index)) })
            })
            .collect();

        let (
            Some(project),
            Some(namespace),
            Some(team_label),
            Some(rack_label),
            Some(domain_label),
            Some(chassis_label),
            Some(reserved_taint),
            Some(migration_label),
            Some(cell_label),
            Some(fact_labels),
        ) = (
            project,
            namespace,
            team_label,
            rack_label,
            domain_label,
            chassis_label,
            reserved_taint,
            migration_label,
            cell_label,
            fact_labels,
        )
        else {
            return Err(diagnostics);
        };
        let (Some(tiers), Some(teams), Some(pools)) = (
            tiers.into_iter().collect::<Option<Vec<_>>>(),
            teams.into_iter().collect::<Option<Vec<_>>>(),
            pools.into_iter().collect::<Option<Vec<_>>>(),
        ) else {
            return Err(diagnostics);
        };
        let cells = match Cells::new(model, &pools) {
            Ok(cells) => cells,
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                return Err(diagnostics);
            }
        };
        let mut layout = Layout {
            keys,
            project,
            namespace,
            tiers,
            teams,
            pools,
            cells,
            nodes: Vec::new(),
            team_label,
            rack_label,
            domain_label,
            chassis_label,
            reserved_taint,
            cell_label,
            migration_label,
            fact_labels,
        };
        overlapping_reservations(model, &layout.pools, &mut diagnostics);
        colliding_pools(model, &layout.pools, &mut diagnostics);
        let marks: Vec<Option<NodeMarks>> =
            (0..model.nodes.len()).map(|index| take(&mut diagnostics, layout.node_marks(model, NodeId::from_index(index)))).collect();
        match marks.into_iter().collect::<Option<Vec<_>>>() {
            Some(nodes) if diagnostics.is_empty() => {
                layout.nodes = nodes;
                Ok(layout)
            }
            _ => Err(diagnostics),
        }
    }

    /// The labels and taints of one node: its facts, its pools, its cell and the reservation
    /// taint.
    fn node_marks(&self, model: &Model, node_id: NodeId) -> Result<NodeMarks, Diagnostic> {
        let node = model.node(node_id);
        let mut labels = BTreeMap::new();
        for (fact, key) in &self.fact_labels {
            if let Some(value) = fact_value(model, node, *fact)? {
                labels.insert(key.clone(), value);
            }
        }
        // A rackless node is its NVLink domain, or itself, at the Topology's rack level, a PCIe
        // node its own NVLink domain at the domain level, and a node outside any chassis its own
        // chassis: Kueue leaves nodes lacking a level label out of TAS capacity. A rackless
        // node of a domain takes the domain as its rack, so the levels nest (the checker
        // refuses domains that mix racked and rackless nodes, E140).
        let rack = match (node.rack, node.domain) {
            (Some(rack), _) => LabelValue::from_name(&model.rack(rack).name, model.rack(rack).span)?,
            (None, Some(domain)) => LabelValue::from_name(&model.domain(domain).name, model.domain(domain).span)?,
            (None, None) => LabelValue::from_name(&node.name, node.span)?,
        };
        labels.insert(self.rack_label.clone(), rack);
        let domain = match node.domain {
            Some(domain) => LabelValue::from_name(&model.domain(domain).name, model.domain(domain).span)?,
            None => LabelValue::from_name(&node.name, node.span)?,
        };
        labels.insert(self.domain_label.clone(), domain);
        if let Some(chassis_label) = &self.chassis_label {
            let value = LabelValue::from_name(node.chassis.as_ref().unwrap_or(&node.name), node.span)?;
            labels.insert(chassis_label.clone(), value);
        }
        if let Some(cell) = self.cells.of_node(node_id) {
            labels.insert(self.cell_label.clone(), LabelValue::from_object(&self.cells.cells[cell].name));
        }
        // The node label a class's pods select on, where the class filters nodes.
        for class in model.classes.iter().filter(|class| filters_nodes(class) && fits(model, class, node)) {
            let name = ObjectName::map(&class.name, class.span, "class")?;
            labels.insert(self.keys.class(&name, class.span)?, LabelValue::yes());
        }
        let mut taints = Vec::new();
        for (pool, layout) in model.pools.iter().zip(&self.pools) {
            if pool.nodes.contains(&node_id) {
                labels.insert(layout.label.clone(), LabelValue::yes());
                if layout.reserved {
                    taints.push((self.reserved_taint.clone(), LabelValue::from_object(&layout.flavor)));
                }
            }
        }
        Ok(NodeMarks { labels, taints })
    }

    /// The names of a tier.
    pub fn tier(&self, tier: TierId) -> &TierNames {
        &self.tiers[tier.index()]
    }

    /// The layout of a pool.
    pub fn pool(&self, pool: PoolId) -> &PoolLayout {
        &self.pools[pool.index()]
    }
}

/// Whether `node` passes `class`'s NVLink node filter: at least `lanes` links per GPU pair and
/// an NVLink domain of at least `min-bisection`, as the engine's filter and the Slurm target's
/// features ask. A class without either filter fits every node.
pub fn fits(model: &Model, class: &Class, node: &Node) -> bool {
    let lanes = class.lanes.as_ref().is_none_or(|lanes| node.nvlink_lanes().is_some_and(|has| has >= lanes.value));
    let bisection =
        class.min_bisection.as_ref().is_none_or(|min| node.domain.is_some_and(|domain| model.domain_bisection(domain) >= min.value));
    lanes && bisection
}

/// Whether `class` filters nodes at all (then [`fits`] decides which carry its label).
pub fn filters_nodes(class: &Class) -> bool {
    class.lanes.is_some() || class.min_bisection.is_some()
}

/// The label value of `fact` on `node`, `None` when placid writes no such label there: a node
/// outside a rack has no `rack` and one outside an NVLink domain no `nvlink-domain`, as the
/// inventory says, so a plugin reads the same missing value from labels as from the inventory
/// (the Topology's levels are labels of their own, on every node: [`Layout::node_marks`]).
/// The other facts are what the scoring plugins read from Node labels when the extender is not
/// given the inventory; a node without a price gets no cost label (the feature is then missing).
fn fact_value(model: &Model, node: &Node, fact: NodeFact) -> Result<Option<LabelValue>, Diagnostic> {
    let value = match fact {
        NodeFact::Rack => match node.rack {
            Some(rack) => LabelValue::from_name(&model.rack(rack).name, model.rack(rack).span)?,
            None => return Ok(None),
        },
        // Only a node of a domain has one, as the inventory (and so the plugins) say; the
        // Topology's level is another label ([`PlacidKeys::domain_level`]).
        NodeFact::NvlinkDomain => match node.domain {
            Some(domain) => LabelValue::from_name(&model.domain(domain).name, model.domain(domain).span)?,
            None => return Ok(None),
        },
        NodeFact::CostPerGpuHour => match node.cost_per_gpu_hour {
            Some(price) => LabelValue::from_plain(price.major().to_string()),
            None => return Ok(None),
        },
        NodeFact::NvlinkGbps => LabelValue::from_plain(node.nvlink_bandwidth().gigabytes_per_second().to_string()),
        NodeFact::Nvlink => LabelValue::from_plain(node.has_nvlink().to_string()),
        NodeFact::Capacity => LabelValue::from_plain(node.capacity.as_str().to_owned()),
        NodeFact::NvlinkLanes => match node.nvlink_lanes() {
            Some(lanes) => LabelValue::from_plain(lanes.to_string()),
            None => return Ok(None),
        },
        // Rounded down, so a node matching `Gt` on the label has at least that bandwidth.
        NodeFact::NvlinkBisectionGbps => match node.domain {
            Some(domain) => LabelValue::from_plain(model.domain_bisection(domain).whole_gigabytes_per_second(false).to_string()),
            None => return Ok(None),
        },
        // Published by the kubelet and GPU feature discovery, never by placid.
        NodeFact::Arch | NodeFact::GpuMemoryMib | NodeFact::MigCapable => return Ok(None),
    };
    Ok(Some(value))
}

/// A node carries one taint per key and effect, so pools where tiers reserve GPUs (each
/// tainting its nodes `<prefix>/reserved=<pool>`) must not share nodes: one error per pair.
fn overlapping_reservations(model: &Model, pools: &[PoolLayout], diagnostics: &mut Diagnostics) {
    let fenced: Vec<&placid_lang::model::Pool> =
        model.pools.iter().zip(pools).filter(|(_, layout)| layout.reserved).map(|(pool, _)| pool).collect();
    for (index, first) in fenced.iter().enumerate() {
        for second in &fenced[index + 1..] {
            let shared: Vec<NodeId> = second.nodes.iter().copied().filter(|node| first.nodes.binary_search(node).is_ok()).collect();
            if let Some(node) = shared.first() {
                diagnostics.push(
                    Diagnostic::error(
                        Code::KubernetesOverlappingReservations,
                        second.span,
                        format!(
                            "pools `{}` and `{}` both hold reserved GPUs and share {} node(s), such as `{}`",
                            first.name,
                            second.name,
                            shared.len(),
                            model.node(*node).name
                        ),
                    )
                    .label("shares nodes with another reserved pool")
                    .help("a node carries one reservation taint: reserve GPUs in pools that share no nodes"),
                );
            }
        }
    }
}

/// Two pools that map to one object name would write one membership label and one
/// reservation taint value for both: one error at the second.
fn colliding_pools(model: &Model, pools: &[PoolLayout], diagnostics: &mut Diagnostics) {
    let mut seen: BTreeMap<&str, &placid_lang::model::Pool> = BTreeMap::new();
    for (pool, layout) in model.pools.iter().zip(pools) {
        if let Some(first) = seen.insert(layout.flavor.as_str(), pool) {
            diagnostics.push(
                Diagnostic::error(
                    Code::KubernetesNameCollision,
                    pool.span,
                    format!("pools `{}` and `{}` both become `{}` on Kubernetes", first.name, pool.name, layout.flavor),
                )
                .label("maps to the same label as another pool")
                .help("rename one of the pools: names are lower-cased and `_` and `.` become `-`"),
            );
        }
    }
}

fn tier_names(tier: &placid_lang::model::Tier) -> Result<TierNames, Diagnostic> {
    let object = ObjectName::map(&tier.name, tier.span, "tier")?;
    let priority_class = object.join(&tier.priority.value.to_string(), tier.span, "tier")?;
    let reserved_queue = if tier.runs_on_reservations() { Some(ObjectName::fixed(&format!("tier-{object}"), tier.span)?) } else { None };
    Ok(TierNames { object, priority_class, reserved_queue })
}
