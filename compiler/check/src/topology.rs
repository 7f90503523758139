//! The cluster topology as a graph (racks -> NVLink domains -> nodes -> GPUs, with NVLink
//! edges between GPUs), and the locality questions the checker asks of it: how many GPUs of a
//! pool fit in one node, chassis, NVLink domain or rack.

use std::collections::BTreeMap;

use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Locality, Model, Node, NodeId, PoolId};

/// A vertex of the topology graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vertex {
    /// A rack.
    Rack(String),
    /// An NVLink domain.
    Domain(String),
    /// A node.
    Node(NodeId),
    /// GPU `index` of a node.
    Gpu(NodeId, u32),
}

/// An edge of the topology graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edge {
    /// Containment (rack contains node, domain contains node, node contains GPU).
    Contains,
    /// An NVLink connection with this many links.
    Nvlink(u32),
}

/// The topology graph of a model's inventory.
pub struct Topology {
    /// The graph.
    pub graph: UnGraph<Vertex, Edge>,
}

impl Topology {
    /// Builds the graph.
    pub fn new(model: &Model) -> Topology {
        let mut graph = UnGraph::new_undirected();
        let racks: Vec<NodeIndex> = model.racks.iter().map(|rack| graph.add_node(Vertex::Rack(rack.name.to_string()))).collect();
        let domains: Vec<NodeIndex> = model.domains.iter().map(|domain| graph.add_node(Vertex::Domain(domain.name.to_string()))).collect();
        for (index, node) in model.nodes.iter().enumerate() {
            let id = NodeId::from_index(index);
            let vertex = graph.add_node(Vertex::Node(id));
            if let Some(rack) = node.rack {
                graph.add_edge(racks[rack.index()], vertex, Edge::Contains);
            }
            if let Some(domain) = node.domain {
                graph.add_edge(domains[domain.index()], vertex, Edge::Contains);
            }
            let gpus: BTreeMap<u32, NodeIndex> = node
                .gpus
                .iter()
                .map(|gpu| {
                    let gpu_vertex = graph.add_node(Vertex::Gpu(id, gpu.index));
                    graph.add_edge(vertex, gpu_vertex, Edge::Contains);
                    (gpu.index, gpu_vertex)
                })
                .collect();
            for gpu in &node.gpus {
                for link in gpu.links.iter().filter(|link| link.peer > gpu.index) {
                    if let (Some(from), Some(to)) = (gpus.get(&gpu.index), gpus.get(&link.peer)) {
                        graph.add_edge(*from, *to, Edge::Nvlink(link.links));
                    }
                }
            }
        }
        Topology { graph }
    }
}

impl Topology {
    /// The NVLink islands of each node's GPUs: the connected components of the GPU vertices
    /// under NVLink edges, as sorted GPU indices.
    pub fn nvlink_islands(&self) -> BTreeMap<NodeId, Vec<Vec<u32>>> {
        let graph = &self.graph;
        let mut sets = UnionFind::<usize>::new(graph.node_count());
        for edge in graph.edge_indices() {
            if let (Edge::Nvlink(_), Some((from, to))) = (&graph[edge], graph.edge_endpoints(edge)) {
                sets.union(from.index(), to.index());
            }
        }
        let mut islands: BTreeMap<NodeId, BTreeMap<usize, Vec<u32>>> = BTreeMap::new();
        for index in graph.node_indices() {
            if let Vertex::Gpu(node, gpu) = graph[index] {
                islands.entry(node).or_default().entry(sets.find(index.index())).or_default().push(gpu);
            }
        }
        islands
            .into_iter()
            .map(|(node, groups)| {
                let mut groups: Vec<Vec<u32>> = groups
                    .into_values()
                    .map(|mut gpus| {
                        gpus.sort_unstable();
                        gpus
                    })
                    .collect();
                groups.sort();
                (node, groups)
            })
            .collect()
    }
}

/// Refuses levels that do not nest ([`check_nesting`]) and warns about nodes that name an
/// NVLink domain but whose GPUs NVLink splits into islands.
pub(super) fn check(model: &Model, topology: &Topology, diagnostics: &mut Diagnostics) {
    check_nesting(model, diagnostics);
    for (node_id, islands) in topology.nvlink_islands() {
        let node = model.node(node_id);
        let (Some(domain), true) = (node.domain, islands.len() > 1) else { continue };
        let described: Vec<String> =
            islands.iter().map(|gpus| format!("[{}]", gpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))).collect();
        diagnostics.push(
            Diagnostic::warning(
                Code::NvlinkIslands,
                node.span,
                format!(
                    "node `{}` is in NVLink domain `{}`, but NVLink splits its GPUs into {} islands: {}",
                    node.name,
                    model.domain(domain).name,
                    islands.len(),
                    described.join(" ")
                ),
            )
            .label("GPUs not all NVLink-connected")
            .help("add the missing `nvlink` links to the inventory, or remove the node's `nvlink-domain`"),
        );
    }
}

/// Refuses levels that do not nest, as Kueue's Topology and Slurm's topology tree need: an
/// NVLink domain whose nodes are not all in one rack, or mix nodes with and without a rack (a
/// domain of rackless nodes nests: the Kubernetes target gives them the domain as rack), and a
/// chassis whose nodes are not all in one NVLink domain (or mix nodes in one and in none). One
/// error per domain or chassis, at its first node elsewhere.
fn check_nesting(model: &Model, diagnostics: &mut Diagnostics) {
    let rack_of =
        |node: &Node| node.rack.map_or_else(|| format!("(no rack: {})", node.name), |rack| format!("`{}`", model.rack(rack).name));
    nest(
        model,
        diagnostics,
        |node| node.domain,
        |node| node.rack,
        |domain, seen, node| {
            Diagnostic::error(
                Code::TopologyLevelsDoNotNest,
                node.span,
                format!(
                    "NVLink domain `{}` spans racks: node `{}` is in rack {}, node `{}` in rack {}",
                    model.domain(domain).name,
                    seen.name,
                    rack_of(seen),
                    node.name,
                    rack_of(node)
                ),
            )
            .label("in another rack than the rest of its NVLink domain")
            .help("give every node of an NVLink domain the same `rack` (name the racks a domain spans as one)")
        },
    );
    let domain_of = |node: &Node| node.domain.map_or_else(|| "none".to_owned(), |domain| format!("`{}`", model.domain(domain).name));
    nest(
        model,
        diagnostics,
        |node| node.chassis.clone(),
        |node| node.domain,
        |chassis, seen, node| {
            Diagnostic::error(
                Code::TopologyLevelsDoNotNest,
                node.span,
                format!(
                    "chassis `{chassis}` spans NVLink domains: node `{}` is in domain {}, node `{}` in domain {}",
                    seen.name,
                    domain_of(seen),
                    node.name,
                    domain_of(node)
                ),
            )
            .label("in another NVLink domain than the rest of its chassis")
            .help("give every node of a chassis the same `nvlink-domain`, or name the chassis apart")
        },
    );
}

/// Requires every node of a unit at one level (`unit`: its domain, its chassis) to share its
/// parent at the next level up (`parent`): one `refusal` per unit, at its first node elsewhere.
fn nest<U: Ord, P: PartialEq>(
    model: &Model,
    diagnostics: &mut Diagnostics,
    unit: impl Fn(&Node) -> Option<U>,
    parent: impl Fn(&Node) -> P,
    refusal: impl Fn(U, &Node, &Node) -> Diagnostic,
) {
    // The first node of each unit, and whether the unit was refused already.
    let mut first: BTreeMap<U, (NodeId, bool)> = BTreeMap::new();
    for (index, node) in model.nodes.iter().enumerate() {
        let Some(key) = unit(node) else { continue };
        let (seen, reported) = match first.get_mut(&key) {
            Some(entry) => entry,
            None => {
                first.insert(key, (NodeId::from_index(index), false));
                continue;
            }
        };
        let seen = model.node(*seen);
        if *reported || parent(node) == parent(seen) {
            continue;
        }
        *reported = true;
        diagnostics.push(refusal(key, seen, node));
    }
}

/// A unit of locality with the GPUs a pool has in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The unit's name (node, chassis, domain or rack name).
    pub name: String,
    /// GPUs of the pool in the unit.
    pub gpus: u32,
}

/// The GPUs of the nodes `pool` reaches (a node another pool's reservation fences off is not
/// reached, `model/shares.rs`) grouped by the unit `locality` names, largest first; `None`
/// for [`Locality::Any`]. Nodes outside any unit of that kind (no NVLink domain, say) form no
/// unit.
pub fn units(model: &Model, pool: PoolId, locality: Locality) -> Option<Vec<Unit>> {
    let fences = model.fences();
    let mut groups: BTreeMap<String, u32> = BTreeMap::new();
    for id in fences.reach(pool) {
        let node = model.node(id);
        let key = match locality {
            Locality::Any => return None,
            Locality::Node => Some(node.name.to_string()),
            Locality::Chassis => node.chassis.as_ref().map(ToString::to_string),
            Locality::NvlinkDomain => node.domain.map(|domain| model.domain(domain).name.to_string()),
            Locality::Rack => node.rack.map(|rack| model.rack(rack).name.to_string()),
        };
        if let Some(key) = key {
            *groups.entry(key).or_default() += node.gpu_count();
        }
    }
    let mut units: Vec<Unit> = groups.into_iter().map(|(name, gpus)| Unit { name, gpus }).collect();
    units.sort_by(|left, right| right.gpus.cmp(&left.gpus).then_with(|| left.name.cmp(&right.name)));
    Some(units)
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::{Code, Diagnostics};

    use crate::testing::load_project;

    /// The E140 errors of an inventory of `(node, rack)` pairs, all in NVLink domain `d1`.
    fn nesting_errors(nodes: &[(&str, Option<&str>)]) -> Vec<String> {
        let nodes: Vec<String> = nodes
            .iter()
            .map(|(name, rack)| {
                let rack = rack.map(|rack| format!(" rack=\"{rack}\"")).unwrap_or_default();
                format!("node \"{name}\" arch=\"x86_64\" nvlink-domain=\"d1\"{rack}")
            })
            .collect();
        errors_of(&nodes)
    }

    /// The E140 errors of an inventory of nodes given by their `node` line (without the block).
    fn errors_of(nodes: &[String]) -> Vec<String> {
        let inventory: String = nodes.iter().map(|node| format!("{node} {{\n    gpu 0 model=\"H200\"\n}}\n")).collect();
        let compilation = load_project("", &inventory, "");
        let mut diagnostics = Diagnostics::new();
        super::check_nesting(&compilation.model, &mut diagnostics);
        diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.code == Code::TopologyLevelsDoNotNest)
            .map(|diagnostic| diagnostic.message.clone())
            .collect()
    }

    #[test]
    fn a_domain_in_one_rack_nests() {
        assert!(nesting_errors(&[("n1", Some("r1")), ("n2", Some("r1"))]).is_empty());
    }

    #[test]
    fn a_domain_spanning_racks_is_refused_once() {
        let errors = nesting_errors(&[("n1", Some("r1")), ("n2", Some("r2")), ("n3", Some("r3"))]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("`d1` spans racks") && errors[0].contains("`n2`"), "{}", errors[0]);
    }

    #[test]
    fn a_domain_mixing_racked_and_rackless_nodes_is_refused() {
        assert_eq!(nesting_errors(&[("n1", Some("r1")), ("n2", None)]).len(), 1);
        assert!(nesting_errors(&[("n1", None), ("n2", None)]).is_empty());
    }

    #[test]
    fn a_chassis_spanning_nvlink_domains_is_refused_once() {
        let node = |name: &str, chassis: &str, domain: Option<&str>| {
            let domain = domain.map(|domain| format!(" nvlink-domain=\"{domain}\"")).unwrap_or_default();
            format!("node \"{name}\" arch=\"x86_64\" rack=\"r1\" chassis=\"{chassis}\"{domain}")
        };
        assert!(errors_of(&[node("n1", "c1", Some("d1")), node("n2", "c1", Some("d1")), node("n3", "c2", Some("d2"))]).is_empty());
        let errors = errors_of(&[node("n1", "c1", Some("d1")), node("n2", "c1", Some("d2")), node("n3", "c1", None)]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("chassis `c1` spans NVLink domains") && errors[0].contains("`n2`"), "{}", errors[0]);
        assert_eq!(errors_of(&[node("n1", "c1", None), node("n2", "c1", Some("d1"))]).len(), 1);
    }
}
