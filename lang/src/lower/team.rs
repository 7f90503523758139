//! Cost centers and teams (`cost-center`, `team`): who pays and who submits. A team names
//! the cost center it bills to and the tiers it may use, so teams are lowered after both.

use crate::diag::{Code, Diagnostic};
use crate::lower::budget::lower_budget;
use crate::lower::context::Cx;
use crate::lower::names::{Names, Tables, lower_kind};
use crate::lower::reader::{NodeReader, Value};
use crate::lower::schema;
use crate::model::{CostCenter, CostCenterId, Model, Team, TeamId, Tier, TierId};
use crate::name::Name;
use crate::span::Spanned;

/// The largest team share: a million teams at the maximum still sum within `u64`, and a
/// thousand within Slurm's 32-bit `Fairshare`.
const MAX_SHARE: u32 = 1_000_000;

pub(super) fn lower_cost_centers(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut cost_centers = Vec::new();
    lower_kind(cx, "cost-center", nodes, &mut tables.cost_centers, &mut cost_centers, CostCenterId::from_index, lower_cost_center);
    model.cost_centers = cost_centers;
}

/// Teams come after tiers: a team's tiers are resolved against them and sorted by priority.
pub(super) fn lower_teams(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut teams = Vec::new();
    let mut team_names = Names::new("team");
    lower_kind(cx, "team", nodes, &mut team_names, &mut teams, TeamId::from_index, |cx, node, name| {
        lower_team(cx, tables, &model.tiers, node, name)
    });
    tables.teams = team_names;
    model.teams = teams;
}

fn lower_cost_center(cx: &mut Cx, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<CostCenter> {
    node.props(cx, schema::COST_CENTER.properties);
    let children = node.children(cx, schema::COST_CENTER.children);
    let daily_budget = match NodeReader::single(cx, &children, "budget") {
        Some(budget) => Some(lower_budget(cx, &schema::COST_CENTER_BUDGET, budget)?),
        None => None,
    };
    Some(CostCenter { name: name.value, span: name.span, daily_budget })
}

fn lower_team(cx: &mut Cx, tables: &Tables, tiers: &[Tier], node: &NodeReader<'_>, name: Spanned<Name>) -> Option<Team> {
    node.props(cx, schema::TEAM.properties);
    let children = node.children(cx, schema::TEAM.children);
    let single_arg = |cx: &mut Cx, kind: &str, what: &str| -> Option<Option<Value<'_>>> {
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
    // A team without its cost center has nothing to bill to and is left out; any other faulty
    // setting is reported and recovered (see `Team::recovered`), so that its plans and tier
    // permissions are still checked.
    ok &= share.is_some() && namespace.is_some() && account.is_some();
    Some(Team {
        share: share.unwrap_or_else(|| Spanned::new(1, name.span)),
        cost_center: cost_center?,
        tiers: team_tiers,
        daily_budget,
        namespace: namespace.unwrap_or_else(|| name.value.clone()),
        account: account.unwrap_or_else(|| name.value.clone()),
        name: name.value,
        span: name.span,
        recovered: !ok,
    })
}
