//! Priority tiers (`tier` with `priority`, `preemption`, `checkpoint`, `backfill`,
//! `reserve`, `cost-center`, `budget` and `max-time`), and the run-time check that tiers and
//! plan stages share.

use crate::diag::{Code, Diagnostic};
use crate::lower::budget::lower_budget;
use crate::lower::context::Cx;
use crate::lower::names::{Names, Tables, lower_kind};
use crate::lower::reader::{NodeReader, Value};
use crate::lower::schema;
use crate::model::{Checkpoint, Model, PreemptMode, Preemption, Reservation, Tier, TierId};
use crate::name::Name;
use crate::span::Spanned;
use crate::units::Duration;

/// Tiers come after pools and cost centers, whose names their reservations and budgets use.
pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut tiers = Vec::new();
    let mut tier_names = Names::new("tier");
    lower_kind(cx, "tier", nodes, &mut tier_names, &mut tiers, TierId::from_index, |cx, node, name| lower_tier(cx, tables, node, name));
    tables.tiers = tier_names;
    model.tiers = tiers;
}

fn lower_tier(cx: &mut Cx, tables: &Tables, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<Tier> {
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
    // Settings that fail are reported and recovered (see `Tier::recovered`), so that stages,
    // teams and routes naming the tier are still checked.
    let mut ok = priority.is_some();
    let mut exempt = None;
    // What a faulty `preemption` recovers as: "never" when written with an argument (the
    // only keyword there is), preemptible otherwise.
    let mut meant_never = false;
    let preemption = match NodeReader::single(cx, &children, "preemption") {
        Some(child) => {
            let props = child.props(cx, schema::TIER_PREEMPTION.properties);
            child.children(cx, &[]);
            let args = child.args();
            meant_never = !args.is_empty() && props.get("window").is_none();
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
                    match (window, mode) {
                        (Some(window), Some(mode)) => Some(Spanned::new(Preemption::Window { window, mode }, child.name_span())),
                        _ => None,
                    }
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
    ok &= preemption.is_some() && backfill.is_some();
    let preemption = preemption.unwrap_or_else(|| {
        let recovered = if meant_never {
            Preemption::Never
        } else {
            Preemption::Window { window: Duration { seconds: 0 }, mode: PreemptMode::Requeue }
        };
        Spanned::new(recovered, name.span)
    });
    // A faulty priority recovers as the one no priority rule (E025) can fault: the highest
    // for a tier that is never preempted, the lowest for one that is.
    let recovered_priority = if preemption.value == Preemption::Never { u32::MAX } else { 0 };
    Some(Tier {
        priority: priority.unwrap_or_else(|| Spanned::new(recovered_priority, name.span)),
        preemption,
        name: name.value,
        span: name.span,
        exempt,
        checkpoint,
        backfill: backfill.unwrap_or(false),
        backfill_span,
        reservations,
        cost_center,
        daily_budget,
        max_time,
        recovered: !ok,
    })
}

/// The longest run time placid accepts: a year, far inside Slurm's 32-bit minutes.
const MAX_RUN_TIME: Duration = Duration { seconds: 365 * 86_400 };

/// A run time (`max-time`, a stage's `time=`): a duration above zero and at most a year,
/// since schedulers read a zero limit as "no limit" (Slurm's `--time=0`).
pub(super) fn run_time(cx: &mut Cx, value: Value<'_>) -> Option<Spanned<Duration>> {
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

#[cfg(test)]
mod tests {
    use crate::diag::Code;
    use crate::model::{Model, Preemption};
    use crate::source::MemoryWorld;

    fn load(policy: &str) -> (Model, Vec<Code>) {
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
        world.insert("nodes.kdl", "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n");
        world.insert("policy.kdl", policy);
        let compilation = crate::load(&world);
        let codes = compilation.diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
        (compilation.model, codes)
    }

    #[test]
    fn a_tier_with_faulty_settings_is_kept_recovered() {
        let (model, codes) = load(
            "tier \"top\" {\n    preemption \"never\"\n}\ntier \"low\" {\n    priority 1\n    preemption window=\"3 minutes\"\n}\n\
             tier \"ok\" {\n    priority 2\n    preemption window=\"1m\"\n}\n",
        );
        assert_eq!(codes, [Code::MissingValue, Code::InvalidUnit]);
        let recovered: Vec<(&str, bool)> = model.tiers.iter().map(|tier| (tier.name.as_str(), tier.recovered)).collect();
        assert_eq!(recovered, [("top", true), ("low", true), ("ok", false)]);
        // A never-preempted tier without a priority outranks every other (no spurious E025);
        // a faulty window is still a preemptible tier.
        assert_eq!((model.tiers[0].priority.value, model.tiers[0].preemption.value), (u32::MAX, Preemption::Never));
        assert!(model.tiers[1].is_preemptible());
    }

    #[test]
    fn a_team_with_faulty_settings_keeps_its_plans() {
        let (model, codes) = load(
            "pool \"all\" { select arch=\"x86_64\" }\ntier \"t\" {\n    priority 1\n    preemption window=\"1m\"\n}\ncost-center \"cc\"\n\
             team \"a\" {\n    share \"forty\"\n    cost-center \"cc\"\n    tiers \"t\" \"nope\"\n}\n\
             plan \"p\" team=\"a\" {\n    stage \"x\" tier=\"nope\" pool=\"all\" gpus=1\n    stage \"y\" tier=\"t\" pool=\"all\" gpus=1 after=\"x\"\n}\n",
        );
        assert_eq!(codes, [Code::InvalidValue, Code::UnresolvedReference, Code::UnresolvedReference]);
        assert!(model.teams[0].recovered);
        assert_eq!(model.teams[0].tiers.len(), 1);
        // The stage with the unknown tier is left out; the plan keeps the other, without the
        // `after` that named it.
        let stages: Vec<(&str, usize)> = model.plans[0].stages.iter().map(|stage| (stage.name.as_str(), stage.after.len())).collect();
        assert_eq!(stages, [("y", 0)]);
    }
}
