//! Pools, cost centers, classes, scores, tiers and teams, lowered in dependency order so each
//! kind can resolve references to the kinds before it.

use crate::diag::{Code, Diagnostic};
use crate::expr::{self, Type};
use crate::lower::context::Cx;
use crate::lower::names::{Declarations, Names};
use crate::lower::reader::{NodeReader, Optional};
use crate::lower::schema;
use crate::lower::values;
use crate::model::{
    Arch, CapacityKind, Checkpoint, Class, ClassId, CommLevel, CostCenter, CostCenterId, Direction, DomainId, Filter, Locality, MetricId,
    Model, NodeId, NvlinkNeed, Penalty, Pool, PoolId, PreemptMode, Preemption, Reservation, Route, Score, ScoreId, Selector, Team, TeamId,
    Tier, TierId,
};
use crate::source::Sources;
use crate::span::Spanned;

/// The largest team share: a million teams at the maximum still sum within `u64`, and a
/// thousand within Slurm's 32-bit `Fairshare`.
const MAX_SHARE: u32 = 1_000_000;

/// Name tables of every kind, for the passes that resolve references.
pub(super) struct Tables {
    pub pools: Names<PoolId>,
    pub cost_centers: Names<CostCenterId>,
    pub classes: Names<ClassId>,
    pub scores: Names<ScoreId>,
    pub tiers: Names<TierId>,
    pub teams: Names<TeamId>,
    pub metrics: Names<MetricId>,
    pub domains: Names<DomainId>,
}

/// Lowers every declaration of one kind: duplicates are reported, elements that fail are
/// remembered as broken, and the rest get ids in declaration order.
pub(super) fn lower_kind<'a, Id: Copy, T>(
    cx: &mut Cx,
    kind: &'static str,
    nodes: &[NodeReader<'a>],
    names: &mut Names<Id>,
    elements: &mut Vec<T>,
    make_id: fn(usize) -> Id,
    mut lower: impl FnMut(&mut Cx, &NodeReader<'a>, Spanned<crate::name::Name>) -> Option<T>,
) {
    let mut declarations = Declarations::new(kind);
    for node in nodes {
        let Some(args) = node.expect_args(cx, 1, 1, &format!("the {kind}'s name")) else {
            continue;
        };
        let Some(name) = args[0].name(cx) else {
            continue;
        };
        if !declarations.declare(cx, &name) {
            continue;
        }
        let text = name.value.as_str().to_owned();
        match lower(cx, node, name.clone()) {
            Some(element) => {
                names.insert(&name.value, make_id(elements.len()), name.span);
                elements.push(element);
            }
            None => names.insert_broken(&text),
        }
    }
}

pub(super) fn lower_all<'a>(cx: &mut Cx, sources: &Sources, model: &mut Model, of_kind: &dyn Fn(&str) -> Vec<NodeReader<'a>>) -> Tables {
    let mut tables = Tables {
        pools: Names::new("pool"),
        cost_centers: Names::new("cost-center"),
        classes: Names::new("class"),
        scores: Names::new("score"),
        tiers: Names::new("tier"),
        teams: Names::new("team"),
        metrics: Names::new("metric"),
        domains: Names::new("nvlink domain"),
    };
    for (index, domain) in model.domains.iter().enumerate() {
        tables.domains.insert(&domain.name, DomainId::from_index(index), domain.span);
    }

    let mut pools = Vec::new();
    lower_kind(cx, "pool", &of_kind("pool"), &mut tables.pools, &mut pools, PoolId::from_index, |cx, node, name| {
        lower_pool(cx, model, &tables.domains, node, name)
    });
    model.pools = pools;

    let mut cost_centers = Vec::new();
    lower_kind(
        cx,
        "cost-center",
        &of_kind("cost-center"),
        &mut tables.cost_centers,
        &mut cost_centers,
        CostCenterId::from_index,
        lower_cost_center,
    );
    model.cost_centers = cost_centers;

    let mut classes = Vec::new();
    lower_kind(cx, "class", &of_kind("class"), &mut tables.classes, &mut classes, ClassId::from_index, lower_class);
    model.classes = classes;

    let mut scores = Vec::new();
    lower_kind(cx, "score", &of_kind("score"), &mut tables.scores, &mut scores, ScoreId::from_index, |cx, node, name| {
        lower_score(cx, sources, node, name)
    });
    model.scores = scores;

    let mut tiers = Vec::new();
    let mut tier_names = Names::new("tier");
    lower_kind(cx, "tier", &of_kind("tier"), &mut tier_names, &mut tiers, TierId::from_index, |cx, node, name| {
        lower_tier(cx, &tables, node, name)
    });
    tables.tiers = tier_names;
    model.tiers = tiers;

    let mut teams = Vec::new();
    let mut team_names = Names::new("team");
    lower_kind(cx, "team", &of_kind("team"), &mut team_names, &mut teams, TeamId::from_index, |cx, node, name| {
        lower_team(cx, &tables, &model.tiers, node, name)
    });
    tables.teams = team_names;
    model.teams = teams;
    tables
}

fn lower_pool(
    cx: &mut Cx,
    model: &Model,
    domains: &Names<DomainId>,
    node: &NodeReader<'_>,
    name: Spanned<crate::name::Name>,
) -> Option<Pool> {
    node.props(cx, schema::POOL.properties);
    let children = node.children(cx, schema::POOL.children);
    if children.is_empty() {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), format!("pool `{}` selects nothing", name.value))
                .label("no `select`")
                .help("add `select nvlink-domain=\"...\"`, `select arch=\"x86_64\" capacity=\"spot\"` or similar"),
        );
        return None;
    }
    let mut selectors = Vec::new();
    let mut ok = true;
    for child in &children {
        match lower_selector(cx, domains, child) {
            Some(selector) => selectors.push(selector),
            None => ok = false,
        }
    }
    if !ok {
        return None;
    }
    let nodes: Vec<NodeId> = (0..model.nodes.len())
        .map(NodeId::from_index)
        .filter(|id| selectors.iter().any(|selector| selector_matches(model, selector, *id)))
        .collect();
    let gpus = nodes.iter().map(|id| model.node(*id).gpu_count()).sum();
    Some(Pool { name: name.value, span: name.span, selectors, nodes, gpus })
}

fn lower_selector(cx: &mut Cx, domains: &Names<DomainId>, node: &NodeReader<'_>) -> Option<Selector> {
    let props = node.props(cx, schema::POOL_SELECT.properties);
    let labels_nodes = node.children(cx, schema::POOL_SELECT.children);
    let arch = props
        .get("arch")
        .map(|value| value.keyword(cx, &[("riscv64", Arch::Riscv64), ("x86_64", Arch::X86_64), ("aarch64", Arch::Aarch64)]));
    let domain = props.get("nvlink-domain").map(|value| value.name(cx).and_then(|name| domains.resolve(cx, &name)).map(|id| id.value));
    let rack = props.get("rack").map(|value| value.name(cx));
    let chassis = props.get("chassis").map(|value| value.name(cx));
    let capacity = props.get("capacity").map(|value| {
        value.keyword(cx, &[("reserved", CapacityKind::Reserved), ("on-demand", CapacityKind::OnDemand), ("spot", CapacityKind::Spot)])
    });
    let gpu_model = props.get("gpu-model").map(|value| value.name(cx));
    let mut labels = Vec::new();
    for label in &labels_nodes {
        let args = label.leaf_args(cx, 2, 2, "a label key and value")?;
        let (key, value) = (args[0].string(cx)?, args[1].string(cx)?);
        labels.push(values::label(cx, &key, &value)?);
    }
    if props_empty(&[arch.is_some(), domain.is_some(), rack.is_some(), chassis.is_some(), capacity.is_some(), gpu_model.is_some()])
        && labels.is_empty()
    {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), "`select` without conditions would select every node")
                .label("no condition")
                .help("give at least one of arch=, nvlink-domain=, rack=, chassis=, capacity=, gpu-model= or a `label` child"),
        );
        return None;
    }
    Some(Selector {
        span: node.name_span(),
        arch: arch.lowered()?,
        domain: domain.lowered()?,
        rack: rack.lowered()?,
        chassis: chassis.lowered()?,
        capacity: capacity.lowered()?,
        gpu_model: gpu_model.lowered()?,
        labels,
    })
}

fn props_empty(present: &[bool]) -> bool {
    present.iter().all(|present| !present)
}

/// Whether node `id` satisfies every condition of `selector`.
pub fn selector_matches(model: &Model, selector: &Selector, id: NodeId) -> bool {
    let node = model.node(id);
    selector.arch.is_none_or(|arch| node.arch == arch)
        && selector.domain.is_none_or(|domain| node.domain == Some(domain))
        && selector.rack.as_ref().is_none_or(|rack| node.rack.is_some_and(|own| model.rack(own).name == rack.value))
        && selector.chassis.as_ref().is_none_or(|chassis| node.chassis.as_ref() == Some(&chassis.value))
        && selector.capacity.is_none_or(|capacity| node.capacity == capacity)
        && selector
            .gpu_model
            .as_ref()
            .is_none_or(|model_name| !node.gpus.is_empty() && node.gpus.iter().all(|gpu| gpu.model == model_name.value))
        && selector.labels.iter().all(|(key, value)| node.labels.get(key) == Some(value))
}

fn lower_cost_center(cx: &mut Cx, node: &NodeReader<'_>, name: Spanned<crate::name::Name>) -> Option<CostCenter> {
    node.props(cx, schema::COST_CENTER.properties);
    let children = node.children(cx, schema::COST_CENTER.children);
    let daily_budget = match NodeReader::single(cx, &children, "budget") {
        Some(budget) => Some(lower_budget(cx, &schema::COST_CENTER_BUDGET, budget)?),
        None => None,
    };
    Some(CostCenter { name: name.value, span: name.span, daily_budget })
}

fn lower_budget(cx: &mut Cx, accepts: &schema::NodeSchema, node: &NodeReader<'_>) -> Option<Spanned<crate::units::Money>> {
    let props = node.props(cx, accepts.properties);
    node.children(cx, &[]);
    props.require(cx, node, "daily")?.money(cx)
}

fn lower_class(cx: &mut Cx, node: &NodeReader<'_>, name: Spanned<crate::name::Name>) -> Option<Class> {
    node.props(cx, schema::CLASS.properties);
    let children = node.children(cx, schema::CLASS.children);
    let mut ok = true;
    let (mut nvlink, mut min_bandwidth, mut lanes, mut min_bisection) = (NvlinkNeed::None, None, None, None);
    if let Some(child) = NodeReader::single(cx, &children, "nvlink") {
        let props = child.props(cx, schema::CLASS_NVLINK.properties);
        child.children(cx, &[]);
        let need = child.expect_args(cx, 1, 1, "required, preferred or none").and_then(|args| {
            args[0].keyword(cx, &[("required", NvlinkNeed::Required), ("preferred", NvlinkNeed::Preferred), ("none", NvlinkNeed::None)])
        });
        let bandwidth = props.get("min-bandwidth").map(|value| value.bandwidth(cx));
        let lane_count = props.get("lanes").map(|value| value.positive(cx).map(|count| Spanned::new(count, value.span)));
        let bisection = props.get("min-bisection").map(|value| value.bandwidth(cx).map(|bandwidth| Spanned::new(bandwidth, value.span)));
        match (need, bandwidth.lowered(), lane_count.lowered(), bisection.lowered()) {
            (Some(need), Some(bandwidth), Some(lane_count), Some(bisection)) => {
                (nvlink, min_bandwidth, lanes, min_bisection) = (need, bandwidth, lane_count, bisection);
            }
            _ => ok = false,
        }
    }
    let locality = match NodeReader::single(cx, &children, "locality") {
        Some(child) => child.leaf_args(cx, 1, 1, "node, chassis, nvlink-domain, rack or any").and_then(|args| {
            args[0].keyword(
                cx,
                &[
                    ("node", Locality::Node),
                    ("chassis", Locality::Chassis),
                    ("nvlink-domain", Locality::NvlinkDomain),
                    ("rack", Locality::Rack),
                    ("any", Locality::Any),
                ],
            )
        }),
        None => Some(if nvlink == NvlinkNeed::Required { Locality::NvlinkDomain } else { Locality::Any }),
    };
    let comm = match NodeReader::single(cx, &children, "comm") {
        Some(child) => child
            .leaf_args(cx, 1, 1, "low, medium or high")
            .and_then(|args| args[0].keyword(cx, &[("low", CommLevel::Low), ("medium", CommLevel::Medium), ("high", CommLevel::High)])),
        None => Some(CommLevel::Low),
    };
    let mig = match NodeReader::single(cx, &children, "mig") {
        Some(child) => Some(child.leaf_args(cx, 1, 1, "a MIG profile such as \"1g.18gb\"").and_then(|args| args[0].name(cx))),
        None => None,
    };
    let image = match NodeReader::single(cx, &children, "image") {
        Some(child) => {
            let reference = child.leaf_args(cx, 1, 1, "an image reference").and_then(|args| args[0].string(cx));
            if let Some(reference) = &reference
                && (reference.value.is_empty() || reference.value.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"'))
            {
                cx.error(
                    Diagnostic::error(
                        Code::InvalidValue,
                        reference.span,
                        "an image reference cannot contain spaces, quotes or control characters",
                    )
                    .label("invalid image")
                    .help("write a reference such as \"ghcr.io/acme/train:1.4\""),
                );
                ok = false;
            }
            Some(reference)
        }
        None => None,
    };
    let mut platforms = Vec::new();
    if let Some(child) = NodeReader::single(cx, &children, "platforms") {
        for arg in child.leaf_args(cx, 1, 8, "OCI platforms such as \"linux/amd64\" \"linux/riscv64\"").unwrap_or_default() {
            let Some(text) = arg.string(cx) else {
                ok = false;
                continue;
            };
            match Arch::parse_oci_platform(&text.value) {
                Some(arch) if !platforms.contains(&arch) => platforms.push(arch),
                Some(_) => {}
                None => {
                    cx.error(
                        Diagnostic::error(
                            Code::InvalidValue,
                            arg.span,
                            format!("`{}` is not a platform placid knows", text.value.escape_debug()),
                        )
                        .label("unknown platform")
                        .maybe_help(crate::suggest::help_for(&text.value, Arch::ALL.iter().map(|arch| arch.oci_platform()))),
                    );
                    ok = false;
                }
            }
        }
        platforms.sort();
    }
    if !ok {
        return None;
    }
    Some(Class {
        name: name.value,
        span: name.span,
        nvlink,
        min_bandwidth,
        lanes,
        min_bisection,
        locality: locality?,
        comm: comm?,
        mig: mig.lowered()?,
        image: image.lowered()?,
        platforms,
    })
}

fn lower_score(cx: &mut Cx, sources: &Sources, node: &NodeReader<'_>, name: Spanned<crate::name::Name>) -> Option<Score> {
    node.props(cx, schema::SCORE.properties);
    let children = node.children(cx, schema::SCORE.children);
    let file_text = sources.get(node.file).map(|file| file.text.as_str()).unwrap_or_default();
    let direction = match NodeReader::single(cx, &children, "prefer") {
        Some(child) => child
            .leaf_args(cx, 1, 1, "min or max")
            .and_then(|args| args[0].keyword(cx, &[("min", Direction::Min), ("max", Direction::Max)])),
        None => {
            cx.error(
                Diagnostic::error(
                    Code::MissingValue,
                    node.name_span(),
                    format!("score `{}` needs `prefer \"min\"` or `prefer \"max\"`", name.value),
                )
                .label("no `prefer`")
                .help("say whether lower or higher scores win"),
            );
            None
        }
    };
    let parse_expr = |cx: &mut Cx, value: crate::lower::reader::Value<'_>, expected: Type| -> Option<expr::Expr> {
        let text = value.string(cx)?;
        match expr::parse(&text.value, value.content_span(file_text), expected) {
            Ok(parsed) => Some(parsed),
            Err(diagnostics) => {
                cx.diagnostics.extend(diagnostics);
                None
            }
        }
    };
    let score_expr = match NodeReader::single(cx, &children, "expr") {
        Some(child) => child.leaf_args(cx, 1, 1, "an expression string").and_then(|args| parse_expr(cx, args[0], Type::Number)),
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("score `{}` needs an `expr`", name.value))
                    .label("no `expr`")
                    .help("add `expr \"node.cost_per_gpu_hour\"` or another numeric expression"),
            );
            None
        }
    };
    let mut ok = true;
    let mut filters = Vec::new();
    let mut filter_names = Declarations::new("filter");
    let mut penalties = Vec::new();
    for child in &children {
        match child.kind() {
            "filter" => {
                let Some(args) = child.leaf_args(cx, 2, 2, "a name and a condition") else {
                    ok = false;
                    continue;
                };
                let filter_name = args[0].name(cx);
                let condition = parse_expr(cx, args[1], Type::Bool);
                match (filter_name, condition) {
                    (Some(filter_name), Some(condition)) if filter_names.declare(cx, &filter_name) => {
                        filters.push(Filter { name: filter_name.value, expr: condition })
                    }
                    _ => ok = false,
                }
            }
            "penalty" => {
                let props = child.props(cx, schema::SCORE_PENALTY.properties);
                child.children(cx, &[]);
                let amount = child.expect_args(cx, 1, 1, "an amount").and_then(|args| args[0].number(cx));
                let when = props.require(cx, child, "when").and_then(|value| parse_expr(cx, value, Type::Bool));
                match (amount, when) {
                    (Some(amount), Some(when)) => penalties.push(Penalty { span: child.name_span(), amount, when }),
                    _ => ok = false,
                }
            }
            _ => {}
        }
    }
    if filters.len() > 32 {
        cx.error(
            Diagnostic::error(
                Code::InvalidValue,
                node.name_span(),
                format!("score `{}` has {} filters; at most 32 fit the failure bitmask", name.value, filters.len()),
            )
            .label("too many filters")
            .help("combine related conditions into one filter with `&&`"),
        );
        ok = false;
    }
    if !ok {
        return None;
    }
    Some(Score { name: name.value, span: name.span, direction: direction?, expr: score_expr?, filters, penalties })
}

fn lower_tier(cx: &mut Cx, tables: &Tables, node: &NodeReader<'_>, name: Spanned<crate::name::Name>) -> Option<Tier> {
    node.props(cx, schema::TIER.properties);
    let children = node.children(cx, schema::TIER.children);
    let priority = match NodeReader::single(cx, &children, "priority") {
        Some(child) => {
            child.leaf_args(cx, 1, 1, "a priority number").and_then(|args| args[0].u32(cx).map(|value| Spanned::new(value, args[0].span)))
        }
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("tier `{}` needs a `priority`", name.value))
                    .label("no `priority`")
                    .help("add `priority 500`; higher priorities run first"),
            );
            None
        }
    };
    let mut ok = true;
    let mut exempt = None;
    let preemption = match NodeReader::single(cx, &children, "preemption") {
        Some(child) => {
            let props = child.props(cx, schema::TIER_PREEMPTION.properties);
            child.children(cx, &[]);
            let args = child.args();
            exempt = match props.get("exempt") {
                Some(value) => match value.duration(cx) {
                    Some(duration) => Some(duration),
                    None => {
                        ok = false;
                        None
                    }
                },
                None => None,
            };
            match (args.as_slice(), props.get("window")) {
                ([never], None) => never.keyword(cx, &[("never", Preemption::Never)]).map(|value| Spanned::new(value, child.name_span())),
                ([], Some(window)) => {
                    let window = window.duration(cx);
                    let mode = match props.get("mode") {
                        Some(value) => value.keyword(cx, &[("requeue", PreemptMode::Requeue), ("cancel", PreemptMode::Cancel)]),
                        None => Some(PreemptMode::Requeue),
                    };
                    Some(Spanned::new(Preemption::Window { window: window?, mode: mode? }, child.name_span()))
                }
                _ => {
                    cx.error(
                        Diagnostic::error(Code::InvalidValue, child.name_span(), "`preemption` is either \"never\" or a `window=`")
                            .label("ambiguous preemption")
                            .help("write `preemption \"never\"` or `preemption window=\"3m\" mode=\"requeue\"`"),
                    );
                    None
                }
            }
        }
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("tier `{}` needs a `preemption`", name.value))
                    .label("no `preemption`")
                    .help("add `preemption \"never\"` or `preemption window=\"3m\" mode=\"requeue\"`"),
            );
            None
        }
    };
    let checkpoint = match NodeReader::single(cx, &children, "checkpoint") {
        Some(child) => {
            let props = child.props(cx, schema::TIER_CHECKPOINT.properties);
            child.children(cx, &[]);
            let every = props.require(cx, child, "every").and_then(|value| value.duration(cx));
            let incremental = props.get("incremental").map_or(Some(false), |value| value.bool(cx));
            match (every, incremental) {
                (Some(every), Some(incremental)) => Some(Checkpoint { every, incremental }),
                _ => {
                    ok = false;
                    None
                }
            }
        }
        None => None,
    };
    let backfill_node = NodeReader::single(cx, &children, "backfill");
    let backfill_span = backfill_node.map(NodeReader::name_span);
    let backfill = match backfill_node {
        Some(child) => child.leaf_args(cx, 1, 1, "#true or #false").and_then(|args| args[0].bool(cx)),
        None => Some(false),
    };
    let mut reservations = Vec::new();
    for child in children.iter().filter(|child| child.kind() == "reserve") {
        let props = child.props(cx, schema::TIER_RESERVE.properties);
        child.children(cx, &[]);
        let pool = props.require(cx, child, "pool").and_then(|value| value.name(cx)).and_then(|name| tables.pools.resolve(cx, &name));
        let gpus = props.require(cx, child, "gpus").and_then(|value| value.positive(cx));
        match (pool, gpus) {
            (Some(pool), Some(gpus)) => reservations.push(Reservation { span: child.name_span(), pool: pool.value, gpus }),
            _ => ok = false,
        }
    }
    let cost_center = match NodeReader::single(cx, &children, "cost-center") {
        Some(child) => {
            let resolved = child
                .leaf_args(cx, 1, 1, "a cost center")
                .and_then(|args| args[0].name(cx))
                .and_then(|name| tables.cost_centers.resolve(cx, &name));
            if resolved.is_none() {
                ok = false;
            }
            resolved
        }
        None => None,
    };
    let daily_budget = match NodeReader::single(cx, &children, "budget") {
        Some(child) => {
            let budget = lower_budget(cx, &schema::TIER_BUDGET, child);
            ok &= budget.is_some();
            budget
        }
        None => None,
    };
    let max_time = match NodeReader::single(cx, &children, "max-time") {
        Some(child) => {
            let limit = child.leaf_args(cx, 1, 1, "a duration such as \"3d\"").and_then(|args| run_time(cx, args[0]));
            ok &= limit.is_some();
            limit
        }
        None => None,
    };
    if !ok {
        return None;
    }
    Some(Tier {
        name: name.value,
        span: name.span,
        priority: priority?,
        preemption: preemption?,
        exempt,
        checkpoint,
        backfill: backfill?,
        backfill_span,
        reservations,
        cost_center,
        daily_budget,
        max_time,
    })
}

/// The longest run time placid accepts: a year, far inside Slurm's 32-bit minutes.
const MAX_RUN_TIME: crate::units::Duration = crate::units::Duration { seconds: 365 * 86_400 };

/// A run time (`max-time`, a stage's `time=`): a duration above zero and at most a year,
/// since schedulers read a zero limit as "no limit" (Slurm's `--time=0`).
pub(super) fn run_time(cx: &mut Cx, value: crate::lower::reader::Value<'_>) -> Option<Spanned<crate::units::Duration>> {
    let duration = value.duration(cx)?;
    if duration.seconds == 0 || duration > MAX_RUN_TIME {
        cx.error(
            Diagnostic::error(Code::InvalidValue, value.span, format!("a run time of {duration} is out of range"))
                .label("not a usable run time")
                .help(format!("give a run time above zero and at most {MAX_RUN_TIME}, such as \"26h\"")),
        );
        return None;
    }
    Some(Spanned::new(duration, value.span))
}

fn lower_team(cx: &mut Cx, tables: &Tables, tiers: &[Tier], node: &NodeReader<'_>, name: Spanned<crate::name::Name>) -> Option<Team> {
    node.props(cx, schema::TEAM.properties);
    let children = node.children(cx, schema::TEAM.children);
    let single_arg = |cx: &mut Cx, kind: &str, what: &str| -> Option<Option<crate::lower::reader::Value<'_>>> {
        let Some(child) = NodeReader::single(cx, &children, kind) else {
            return Some(None);
        };
        child.leaf_args(cx, 1, 1, what).map(|args| Some(args[0]))
    };
    let share = match single_arg(cx, "share", "a fair-share weight") {
        // Shares are relative weights; the bound keeps their sums (a cost center's Slurm
        // `Fairshare`, the total of all teams) far from overflowing.
        Some(Some(value)) => value.in_range(cx, 1..=MAX_SHARE, "shares are relative weights").map(|share| Spanned::new(share, value.span)),
        Some(None) => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("team `{}` needs a `share`", name.value))
                    .label("no `share`")
                    .help("add `share 40`: the team's fair-share weight"),
            );
            None
        }
        None => None,
    };
    let cost_center = match single_arg(cx, "cost-center", "a cost center") {
        Some(Some(value)) => value.name(cx).and_then(|reference| tables.cost_centers.resolve(cx, &reference)),
        Some(None) => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("team `{}` needs a `cost-center`", name.value))
                    .label("no `cost-center`")
                    .help("add `cost-center \"...\"`; every team bills to one"),
            );
            None
        }
        None => None,
    };
    let mut ok = true;
    let mut team_tiers = Vec::new();
    match NodeReader::single(cx, &children, "tiers") {
        Some(child) => {
            for arg in child.leaf_args(cx, 1, usize::MAX, "the tiers the team may use").unwrap_or_default() {
                match arg.name(cx).and_then(|reference| tables.tiers.resolve(cx, &reference)) {
                    Some(tier) if !team_tiers.iter().any(|known: &Spanned<TierId>| known.value == tier.value) => team_tiers.push(tier),
                    Some(_) => {}
                    None => ok = false,
                }
            }
        }
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("team `{}` needs `tiers`", name.value))
                    .label("no `tiers`")
                    .help("add `tiers \"P1\" \"P2\"`: the tiers the team's jobs may use"),
            );
            ok = false;
        }
    }
    team_tiers.sort_by_key(|tier| (std::cmp::Reverse(tiers[tier.value.index()].priority.value), tier.value));
    let daily_budget = match NodeReader::single(cx, &children, "budget") {
        Some(child) => match lower_budget(cx, &schema::TEAM_BUDGET, child) {
            Some(budget) => Some(budget),
            None => {
                ok = false;
                None
            }
        },
        None => None,
    };
    let namespace = match single_arg(cx, "namespace", "a Kubernetes namespace") {
        Some(Some(value)) => value.name(cx).map(|name| name.value),
        Some(None) => Some(name.value.clone()),
        None => None,
    };
    let account = match single_arg(cx, "account", "a Slurm account") {
        Some(Some(value)) => value.name(cx).map(|name| name.value),
        Some(None) => Some(name.value.clone()),
        None => None,
    };
    if !ok {
        return None;
    }
    Some(Team {
        name: name.value,
        span: name.span,
        share: share?,
        cost_center: cost_center?,
        tiers: team_tiers,
        daily_budget,
        namespace: namespace?,
        account: account?,
    })
}

/// `admin-accounts "ops" ...` (any number of nodes): scheduler accounts whose jobs skip
/// placid's submission rules.
pub(super) fn lower_admin_accounts(cx: &mut Cx, nodes: &[NodeReader<'_>]) -> Vec<Spanned<crate::name::Name>> {
    let mut accounts = Vec::new();
    for node in nodes {
        for value in node.leaf_args(cx, 1, usize::MAX, "the administrators' accounts").unwrap_or_default() {
            if let Some(name) = value.name(cx) {
                accounts.push(name);
            }
        }
    }
    accounts
}

/// `route tag= tier= [class=]` (any number): tag-based tier routing. A tag names one route;
/// a repeated tag is refused (E162) rather than resolved by order, since two routes for one
/// tag would mean different tiers in different readers.
pub(super) fn lower_routes(cx: &mut Cx, tables: &Tables, nodes: &[NodeReader<'_>]) -> Vec<Route> {
    let mut routes: Vec<Route> = Vec::new();
    for node in nodes {
        let props = node.props(cx, schema::ROUTE.properties);
        node.children(cx, &[]);
        node.expect_args(cx, 0, 0, "no arguments: `route tag=\"...\" tier=\"...\"`");
        let tag = props.require(cx, node, "tag").and_then(|value| value.name(cx));
        let tier = props.require(cx, node, "tier").and_then(|value| value.name(cx)).and_then(|name| tables.tiers.resolve(cx, &name));
        let class = match props.get("class") {
            Some(value) => value.name(cx).and_then(|name| tables.classes.resolve(cx, &name)).map(Some),
            None => Some(None),
        };
        let (Some(tag), Some(tier), Some(class)) = (tag, tier, class) else {
            continue;
        };
        if let Some(earlier) = routes.iter().find(|route| route.tag.value == tag.value) {
            cx.error(
                Diagnostic::error(Code::RouteTagOverlap, tag.span, format!("tag `{}` is routed twice", tag.value))
                    .label("second route of the tag")
                    .with_secondary(earlier.tag.span, "first route")
                    .help("a tag routes to one tier: remove one route or give it another tag"),
            );
            continue;
        }
        routes.push(Route { span: node.name_span(), tag, tier, class });
    }
    routes
}
