//! Plans and their stages. Stage order is declaration order; `after` names earlier stages
//! of the same plan (the checker reports cycles and forward references).

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::launch;
use crate::lower::names::{Declarations, Names};
use crate::lower::names::{Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional};
use crate::lower::schema;
use crate::lower::tier::run_time;
use crate::model::{CapacityKind, Direction, Model, Plan, PlanId, Promote, Stage, TeamId, Tier};
use crate::name::Name;
use crate::span::Spanned;
use crate::units::Duration;

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
    let mut names = Names::new("plan");
    let mut plans = Vec::new();
    let tiers = &model.tiers;
    // A plan whose team does not resolve is kept with the first team standing in (see
    // `Plan::recovered`); without any team, it is left out.
    let stand_in = (!model.teams.is_empty()).then(|| TeamId::from_index(0));
    lower_kind(cx, "plan", nodes, &mut names, &mut plans, PlanId::from_index, |cx, node, name| {
        lower_plan(cx, tables, tiers, stand_in, node, name)
    });
    model.plans = plans;
}

fn lower_plan(
    cx: &mut Cx,
    tables: &Tables,
    tiers: &[Tier],
    stand_in: Option<TeamId>,
    node: &NodeReader<'_>,
    name: Spanned<Name>,
) -> Option<Plan> {
    let props = node.props(cx, schema::PLAN.properties);
    let children = node.children(cx, schema::PLAN.children);
    let team = props.require(cx, node, "team").and_then(|value| value.name(cx)).and_then(|reference| tables.teams.resolve(cx, &reference));
    if children.is_empty() {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), format!("plan `{}` has no stages", name.value))
                .label("no `stage`")
                .help("add `stage \"train\" tier=\"P1\" pool=\"...\" gpus=8`"),
        );
        return None;
    }
    // Names first, so `after` can tell an unknown stage from a later one.
    let stage_names: Vec<Option<Spanned<Name>>> =
        children.iter().map(|child| child.expect_args(cx, 1, 1, "the stage's name").and_then(|args| args[0].name(cx))).collect();
    let mut declarations = Declarations::new("stage");
    let mut ok = true;
    for stage_name in stage_names.iter().flatten() {
        ok &= declarations.declare(cx, stage_name);
    }
    // A stage with an error is left out and the plan keeps the others, so that their checks
    // still run; `after` indices are renumbered to the stages kept, and an `after` naming a
    // stage left out is dropped (that stage's error is reported already).
    let mut stages: Vec<Stage> = Vec::new();
    let mut kept: Vec<Option<usize>> = Vec::new();
    for (child, stage_name) in children.iter().zip(&stage_names) {
        let lowered = stage_name.as_ref().and_then(|stage_name| lower_stage(cx, tables, tiers, child, stage_name.clone(), &stage_names));
        match lowered {
            Some(stage) => {
                kept.push(Some(stages.len()));
                stages.push(stage);
            }
            None => kept.push(None),
        }
    }
    for stage in &mut stages {
        stage.after.retain_mut(|after| match kept.get(after.value).copied().flatten() {
            Some(index) => {
                after.value = index;
                true
            }
            None => false,
        });
    }
    if !ok || stages.is_empty() {
        return None;
    }
    let recovered = team.is_none();
    let team = team.or_else(|| stand_in.map(|id| Spanned::new(id, name.span)))?;
    Some(Plan { name: name.value, span: name.span, team, stages, recovered })
}

fn lower_stage(
    cx: &mut Cx,
    tables: &Tables,
    tiers: &[Tier],
    node: &NodeReader<'_>,
    name: Spanned<Name>,
    stage_names: &[Option<Spanned<Name>>],
) -> Option<Stage> {
    let props = node.props(cx, schema::PLAN_STAGE.properties);
    let children = node.children(cx, schema::PLAN_STAGE.children);
    let tier = props.require(cx, node, "tier").and_then(|value| value.name(cx)).and_then(|reference| tables.tiers.resolve(cx, &reference));
    let class = props.get("class").map(|value| value.name(cx).and_then(|reference| tables.classes.resolve(cx, &reference)));
    let pool = props.require(cx, node, "pool").and_then(|value| value.name(cx)).and_then(|reference| tables.pools.resolve(cx, &reference));
    let gpus = props.require(cx, node, "gpus").and_then(|value| value.positive(cx).map(|gpus| Spanned::new(gpus, value.span)));
    let trials = props.get("trials").map_or(Some(1), |value| value.positive(cx));
    let capacity = props.get("capacity").map(|value| {
        value.keyword(cx, &[("reserved", CapacityKind::Reserved), ("on-demand", CapacityKind::OnDemand), ("spot", CapacityKind::Spot)])
    });
    let score = props.get("score").map(|value| value.name(cx).and_then(|reference| tables.scores.resolve(cx, &reference)));
    let time = props.get("time").map(|value| run_time(cx, value));
    let max_time = props.get("max-time").map(|value| run_time(cx, value));

    let mut ok = true;
    let mut after_refs = Vec::new();
    if let Some(value) = props.get("after") {
        match value.name(cx) {
            Some(reference) => after_refs.push(reference),
            None => ok = false,
        }
    }
    for child in children.iter().filter(|child| child.kind() == "after") {
        for arg in child.leaf_args(cx, 1, usize::MAX, "the stages that must finish first").unwrap_or_default() {
            match arg.name(cx) {
                Some(reference) => after_refs.push(reference),
                None => ok = false,
            }
        }
    }
    let mut after = Vec::new();
    for reference in after_refs {
        match stage_names.iter().position(|candidate| candidate.as_ref().is_some_and(|candidate| candidate.value == reference.value)) {
            Some(index) => after.push(Spanned::new(index, reference.span)),
            None => {
                let known = stage_names.iter().flatten().map(|candidate| candidate.value.as_str());
                cx.error(
                    Diagnostic::error(
                        Code::UnresolvedReference,
                        reference.span,
                        format!("no stage named `{}` in this plan", reference.value),
                    )
                    .label("unknown stage")
                    .maybe_help(crate::suggest::help_for(reference.value.as_str(), known)),
                );
                ok = false;
            }
        }
    }
    let promote = match NodeReader::single(cx, &children, "promote") {
        Some(child) => {
            let promote_props = child.props(cx, schema::PLAN_STAGE_PROMOTE.properties);
            child.children(cx, &[]);
            let top = promote_props.require(cx, child, "top").and_then(|value| value.positive(cx));
            let by = promote_props.require(cx, child, "by").and_then(|value| value.name(cx));
            let order = promote_props
                .get("order")
                .map_or(Some(Direction::Min), |value| value.keyword(cx, &[("min", Direction::Min), ("max", Direction::Max)]));
            match (top, by, order) {
                (Some(top), Some(by), Some(order)) => Some(Promote { span: child.name_span(), top, by: by.value, order }),
                _ => {
                    ok = false;
                    None
                }
            }
        }
        None => None,
    };
    let launch = launch::lower(cx, &children);
    let (time, max_time) = (time.lowered()?, max_time.lowered()?);
    if let Some(tier) = &tier {
        ok &= run_times_fit(cx, &tiers[tier.value.index()], time.as_ref(), max_time.as_ref());
    }
    if !ok {
        return None;
    }
    Some(Stage {
        name: name.value,
        span: name.span,
        tier: tier?,
        class: class.lowered()?,
        pool: pool?,
        gpus: gpus?,
        trials: trials?,
        capacity: capacity.lowered()?,
        after,
        promote,
        score: score.lowered()?,
        time,
        max_time,
        launch: launch?,
    })
}

/// A stage's expected time fits its own maximum, and both fit its tier's maximum (E130 at
/// the longer value otherwise), so the limit a scheduler enforces is never below what the
/// plan promises.
fn run_times_fit(cx: &mut Cx, tier: &Tier, time: Option<&Spanned<Duration>>, max_time: Option<&Spanned<Duration>>) -> bool {
    let mut ok = true;
    if let (Some(time), Some(max_time)) = (time, max_time)
        && time.value > max_time.value
    {
        cx.error(
            Diagnostic::error(
                Code::RunTimeExceedsLimit,
                time.span,
                format!("the stage's expected time {} is longer than its `max-time` {}", time.value, max_time.value),
            )
            .label("longer than the stage's limit")
            .with_secondary(max_time.span, "the stage's `max-time`")
            .help("raise `max-time`, or lower `time` to what one trial takes"),
        );
        ok = false;
    }
    let tier_max = tier.max_run_time();
    for value in [max_time, time].into_iter().flatten().filter(|value| value.value > tier_max).take(1) {
        let mut diagnostic = Diagnostic::error(
            Code::RunTimeExceedsLimit,
            value.span,
            format!("the stage runs up to {}, longer than tier `{}` allows ({tier_max})", value.value, tier.name),
        )
        .label("longer than the tier's maximum")
        .help(format!("shorten the stage, or raise the tier's limit: `max-time \"{}\"` in tier `{}`", value.value, tier.name));
        if let Some(declared) = &tier.max_time {
            diagnostic = diagnostic.with_secondary(declared.span, "the tier's `max-time`");
        }
        cx.error(diagnostic);
        ok = false;
    }
    ok
}
