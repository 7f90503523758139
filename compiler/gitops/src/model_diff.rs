//! The semantic diff of two checked models: every named element compared field by field, and
//! the consequences a reviewer cares about computed from the models rather than from YAML:
//! team shares of GPUs, each team's fair share of each pool, nodes moving between pools or
//! NVLink domains, reserved capacity and budget totals, who may preempt whom, and plans that
//! no longer compile.
//!
//! Invariant: every list is sorted (by element kind and name, team, node), so the same pair
//! of models always gives the same report.

use std::collections::{BTreeMap, BTreeSet};

use placid_lang::diag::{Diagnostics, Severity};
use placid_lang::model::{Model, PoolId};
use placid_lang::span::Span;
use serde::Serialize;

use crate::describe::{ElementKind, FieldKey, describe};

/// Whether an element or entry was added, removed or modified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
    /// In both, different.
    Modified,
}

impl Status {
    /// The word for the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Modified => "modified",
        }
    }
}

/// One field whose value differs (absent on one side when the field is optional).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// The field, as written in policies (`share`, `preemption`, `stage train`).
    pub field: FieldKey,
    /// The value in base.
    pub before: Option<String>,
    /// The value in head.
    pub after: Option<String>,
}

/// A named element that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElementChange {
    /// What it is.
    pub kind: ElementKind,
    /// Its name.
    pub name: String,
    /// Added, removed or modified.
    pub status: Status,
    /// The fields that differ (every field for an added or removed element).
    pub fields: Vec<FieldChange>,
}

/// A team's fair share, before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShareChange {
    /// The team.
    pub team: String,
    /// Share weight in base, when the team exists there.
    pub before: Option<TeamShare>,
    /// Share weight in head, when the team exists there.
    pub after: Option<TeamShare>,
}

/// A team's weight and what it amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TeamShare {
    /// The `share` weight.
    pub weight: u32,
    /// Percent of all teams' weights.
    pub percent: f64,
    /// The same fraction of all GPUs of the inventory.
    pub gpus: f64,
}

/// The fair share of one pool a team is guaranteed, before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Guarantee {
    /// The pool.
    pub pool: String,
    /// GPUs in base (absent when the team or pool does not exist there).
    pub before: Option<u32>,
    /// GPUs in head.
    pub after: Option<u32>,
    /// GPUs the team may borrow beyond its guarantee in base.
    pub borrow_before: Option<u32>,
    /// GPUs the team may borrow in head.
    pub borrow_after: Option<u32>,
}

impl Guarantee {
    /// Whether the guarantee or the borrowing limit changes.
    pub fn changes(&self) -> bool {
        self.before != self.after || self.borrow_before != self.borrow_after
    }
}

/// One row of the policy table: a team whose guarantees, tiers or budget change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TeamRow {
    /// The team.
    pub team: String,
    /// Guaranteed GPUs per pool, for every pool of either revision, sorted by pool.
    pub pools: Vec<Guarantee>,
    /// Tiers in base and head (`P1, P2`), when they differ.
    pub tiers: Option<(String, String)>,
    /// Daily budget in base and head, when it differs.
    pub budget: Option<(String, String)>,
}

/// A node that moves between NVLink domains or pools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeMove {
    /// The node.
    pub node: String,
    /// NVLink domain in base and head, when it differs.
    pub domain: Option<(String, String)>,
    /// Pools the node leaves.
    pub left_pools: Vec<String>,
    /// Pools the node joins.
    pub joined_pools: Vec<String>,
}

/// A before/after pair of totals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Total {
    /// What is totalled.
    pub what: String,
    /// The total in base.
    pub before: String,
    /// The total in head.
    pub after: String,
}

/// A tier that may preempt another tier's jobs (higher priority, preemptible victim).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Preempts {
    /// The tier whose jobs preempt.
    pub preemptor: String,
    /// The tier whose jobs are preempted.
    pub victim: String,
}

/// Why a change needs a careful review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DangerKind {
    /// A plan that compiled no longer does.
    Unplaceable,
    /// A team is guaranteed fewer GPUs.
    QuotaReduction,
    /// A team, tier or pool (queue, QOS, partition) is deleted.
    Deletion,
    /// A tier's preemption changed.
    PreemptionChange,
    /// Who preempts whom changed.
    PriorityReorder,
    /// A Slurm template override changed: code that runs at every submission.
    TemplateOverride,
    /// A tier reserves fewer GPUs in a pool.
    ReservationCut,
    /// A daily budget (a tier's, cost center's or team's) is lower, or set where there was none.
    BudgetCut,
    /// A tier checkpoints less often, or no longer: a preemption loses more work.
    CheckpointSparser,
}

impl DangerKind {
    /// A short label.
    pub fn as_str(self) -> &'static str {
        match self {
            DangerKind::Unplaceable => "plan no longer fits",
            DangerKind::QuotaReduction => "quota reduction",
            DangerKind::Deletion => "deletion",
            DangerKind::PreemptionChange => "preemption change",
            DangerKind::PriorityReorder => "priority reorder",
            DangerKind::TemplateOverride => "template overrides changed",
            DangerKind::ReservationCut => "reservation cut",
            DangerKind::BudgetCut => "budget cut",
            DangerKind::CheckpointSparser => "checkpoints sparser",
        }
    }
}

/// A change that needs a careful review, in one sentence.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Danger {
    /// Why it is dangerous.
    pub kind: DangerKind,
    /// What happens (`tier P1: preemption window 3m, requeue -> window 5m, requeue`).
    pub message: String,
    /// Whose jobs it puts at risk, when that is one tier or team, or all jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
    /// What the what-if measured for the subject, base → head (`--simulate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
}

impl Danger {
    /// A danger without a subject.
    pub fn new(kind: DangerKind, message: String) -> Danger {
        Danger { kind, message, subject: None, effect: None }
    }

    /// A danger to `subject`'s jobs.
    pub fn of(kind: DangerKind, subject: Subject, message: String) -> Danger {
        Danger { kind, message, subject: Some(subject), effect: None }
    }
}

/// Whose jobs a danger puts at risk: what the what-if reports its effect on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Subject {
    /// The jobs of a tier.
    Tier(String),
    /// The jobs of a team.
    Team(String),
    /// Every job (a cost center's budget).
    All,
}

/// The semantic diff of two models.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelDiff {
    /// Elements that differ, by kind then name.
    pub elements: Vec<ElementChange>,
    /// Teams whose share of the GPUs changes, by team.
    pub shares: Vec<ShareChange>,
    /// The policy table: teams whose guarantees, tiers or budget change, by team.
    pub teams: Vec<TeamRow>,
    /// Nodes moving between domains or pools, by node.
    pub node_moves: Vec<NodeMove>,
    /// Totals that change (GPUs, reserved GPUs, budgets).
    pub totals: Vec<Total>,
    /// Preemption relations that appear in head.
    pub preemptions_gained: Vec<Preempts>,
    /// Preemption relations that disappear in head.
    pub preemptions_lost: Vec<Preempts>,
    /// Plans that compile in base and have errors in head, by plan.
    pub unplaceable_plans: Vec<String>,
    /// Dangerous changes, most severe kind first.
    pub dangers: Vec<Danger>,
}

impl ModelDiff {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty() && self.unplaceable_plans.is_empty()
    }

    /// Teams touched by any change: their element, their share, their row of the policy
    /// table, or a plan of theirs.
    pub fn affected_teams(&self) -> BTreeSet<String> {
        let mut teams: BTreeSet<String> = self.shares.iter().map(|share| share.team.clone()).collect();
        teams.extend(self.teams.iter().map(|row| row.team.clone()));
        teams.extend(self.elements.iter().filter(|element| element.kind == ElementKind::Team).map(|element| element.name.clone()));
        teams
    }
}

/// Compares `base` with `head`. `head_diagnostics` are head's diagnostics: errors inside a plan
/// make it unplaceable when base compiled.
pub fn diff_models(base: &Model, head: &Model, head_diagnostics: &Diagnostics) -> ModelDiff {
    // Describing every element of both models is the larger half of the work at 10,000
    // nodes, and independent of the rest: it runs beside it.
    let (elements, (shares, teams, node_moves)) = std::thread::scope(|scope| {
        let elements = scope.spawn(|| diff_elements(base, head));
        let rest = (diff_shares(base, head), team_rows(base, head), node_moves(base, head));
        (elements.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), rest)
    });
    let totals = totals(base, head);
    let (preemptions_gained, preemptions_lost) = diff_preemptions(base, head);
    let unplaceable_plans = unplaceable_plans(base, head, head_diagnostics);
    let mut diff = ModelDiff {
        elements,
        shares,
        teams,
        node_moves,
        totals,
        preemptions_gained,
        preemptions_lost,
        unplaceable_plans,
        dangers: Vec::new(),
    };
    diff.dangers = dangers(&diff);
    diff
}

fn diff_elements(base: &Model, head: &Model) -> Vec<ElementChange> {
    let index = |model: &Model| -> BTreeMap<(ElementKind, String), Vec<(FieldKey, String)>> {
        describe(model).into_iter().map(|element| ((element.kind, element.name), element.fields)).collect()
    };
    let mut before = index(base);
    let after = index(head);
    let mut changes = Vec::new();
    for (key, head_fields) in after {
        match before.remove(&key) {
            None => changes.push(element_change(key, Status::Added, &[], &head_fields)),
            Some(base_fields) if base_fields != head_fields => {
                changes.push(element_change(key, Status::Modified, &base_fields, &head_fields));
            }
            Some(_) => {}
        }
    }
    for (key, base_fields) in before {
        changes.push(element_change(key, Status::Removed, &base_fields, &[]));
    }
    changes.sort_by(|left, right| (left.kind, &left.name).cmp(&(right.kind, &right.name)));
    changes
}

fn element_change(
    key: (ElementKind, String),
    status: Status,
    before: &[(FieldKey, String)],
    after: &[(FieldKey, String)],
) -> ElementChange {
    let lookup =
        |fields: &[(FieldKey, String)], name: &FieldKey| fields.iter().find(|(field, _)| field == name).map(|(_, value)| value.clone());
    let mut names: Vec<&FieldKey> = before.iter().map(|(field, _)| field).collect();
    names.extend(after.iter().map(|(field, _)| field).filter(|field| !before.iter().any(|(known, _)| known == *field)));
    let fields = names
        .into_iter()
        .filter_map(|name| {
            let (old, new) = (lookup(before, name), lookup(after, name));
            (old != new).then(|| FieldChange { field: name.clone(), before: old, after: new })
        })
        .collect();
    ElementChange { kind: key.0, name: key.1, status, fields }
}

fn total_shares(model: &Model) -> u64 {
    model.teams.iter().map(|team| u64::from(team.share.value)).sum()
}

fn shares_of(model: &Model) -> BTreeMap<String, TeamShare> {
    let total = total_shares(model).max(1) as f64;
    let gpus = f64::from(model.total_gpus());
    model
        .teams
        .iter()
        .map(|team| {
            let fraction = f64::from(team.share.value) / total;
            (
                team.name.to_string(),
                TeamShare { weight: team.share.value, percent: round1(fraction * 100.0), gpus: round1(fraction * gpus) },
            )
        })
        .collect()
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn diff_shares(base: &Model, head: &Model) -> Vec<ShareChange> {
    let mut before = shares_of(base);
    let after = shares_of(head);
    let mut changes: Vec<ShareChange> = Vec::new();
    for (team, share) in after {
        let old = before.remove(&team);
        if old != Some(share) {
            changes.push(ShareChange { team, before: old, after: Some(share) });
        }
    }
    changes.extend(before.into_iter().map(|(team, share)| ShareChange { team, before: Some(share), after: None }));
    changes.sort_by(|left, right| left.team.cmp(&right.team));
    changes
}

/// The GPUs of each pool each team's fair share guarantees ([`guaranteed_gpus`]: what no
/// tier reserves, split by share; the Kubernetes queues' nominal quotas) and may borrow
/// ([`borrowable_gpus`]), by pool name, then by team index.
///
/// [`guaranteed_gpus`]: placid_lang::model::shares::Fences::guaranteed_gpus
/// [`borrowable_gpus`]: placid_lang::model::shares::Fences::borrowable_gpus
struct Guarantees<'m> {
    teams: BTreeMap<&'m str, usize>,
    pools: BTreeMap<&'m str, (Vec<u32>, Vec<u32>)>,
}

impl<'m> Guarantees<'m> {
    fn of(model: &'m Model) -> Guarantees<'m> {
        let fences = model.fences();
        Guarantees {
            teams: model.teams.iter().enumerate().map(|(index, team)| (team.name.as_str(), index)).collect(),
            pools: model
                .pools
                .iter()
                .enumerate()
                .map(|(index, pool)| {
                    let guaranteed = fences.guaranteed_gpus(PoolId::from_index(index));
                    let borrowable = fences.borrowable_gpus(&guaranteed);
                    (pool.name.as_str(), (guaranteed, borrowable))
                })
                .collect(),
        }
    }

    /// Guaranteed and borrowable GPUs.
    fn get(&self, team: &str, pool: &str) -> (Option<u32>, Option<u32>) {
        let found = self.pools.get(pool).zip(self.teams.get(team));
        (found.map(|((guaranteed, _), team)| guaranteed[*team]), found.map(|((_, borrowable), team)| borrowable[*team]))
    }
}

fn team_texts(model: &Model) -> BTreeMap<String, (String, String)> {
    model
        .teams
        .iter()
        .map(|team| {
            let tiers: Vec<String> = team.tiers.iter().map(|tier| model.tier(tier.value).name.to_string()).collect();
            let budget = team.daily_budget.as_ref().map(|budget| budget.value.to_string()).unwrap_or_else(|| "none".into());
            (team.name.to_string(), (tiers.join(", "), budget))
        })
        .collect()
}

fn team_rows(base: &Model, head: &Model) -> Vec<TeamRow> {
    let (before, after) = (Guarantees::of(base), Guarantees::of(head));
    let (texts_before, texts_after) = (team_texts(base), team_texts(head));
    let pools: BTreeSet<&str> = before.pools.keys().chain(after.pools.keys()).copied().collect();
    let teams: BTreeSet<&String> = texts_before.keys().chain(texts_after.keys()).collect();
    let mut rows = Vec::new();
    for team in teams {
        let (old, new) = (texts_before.get(team), texts_after.get(team));
        let text_pair = |pick: fn(&(String, String)) -> &String| -> Option<(String, String)> {
            let old_text = old.map(pick).cloned().unwrap_or_else(|| "-".into());
            let new_text = new.map(pick).cloned().unwrap_or_else(|| "-".into());
            (old_text != new_text).then_some((old_text, new_text))
        };
        let tiers = text_pair(|texts| &texts.0);
        let budget = text_pair(|texts| &texts.1);
        // Most teams of a large policy keep every guarantee: compare before building cells.
        let guarantees_change = pools.iter().any(|pool| before.get(team, pool) != after.get(team, pool));
        if guarantees_change || tiers.is_some() || budget.is_some() {
            let cells = pools
                .iter()
                .map(|pool| {
                    let ((guaranteed_before, borrow_before), (guaranteed_after, borrow_after)) =
                        (before.get(team, pool), after.get(team, pool));
                    Guarantee { pool: (*pool).to_owned(), before: guaranteed_before, after: guaranteed_after, borrow_before, borrow_after }
                })
                .collect();
            rows.push(TeamRow { team: team.clone(), pools: cells, tiers, budget });
        }
    }
    rows
}

/// Each node's NVLink domain and pools, by node name.
fn node_placements(model: &Model) -> BTreeMap<&str, (Option<&str>, BTreeSet<&str>)> {
    let mut placements: BTreeMap<&str, (Option<&str>, BTreeSet<&str>)> = model
        .nodes
        .iter()
        .map(|node| (node.name.as_str(), (node.domain.map(|domain| model.domain(domain).name.as_str()), BTreeSet::new())))
        .collect();
    for pool in &model.pools {
        for &node in &pool.nodes {
            if let Some(entry) = placements.get_mut(model.node(node).name.as_str()) {
                entry.1.insert(pool.name.as_str());
            }
        }
    }
    placements
}

fn node_moves(base: &Model, head: &Model) -> Vec<NodeMove> {
    let before = node_placements(base);
    let after = node_placements(head);
    let mut moves = Vec::new();
    for (node, (old_domain, old_pools)) in &before {
        let Some((new_domain, new_pools)) = after.get(node) else {
            continue;
        };
        let domain = (old_domain != new_domain).then(|| {
            let show = |domain: &Option<&str>| domain.unwrap_or("none").to_owned();
            (show(old_domain), show(new_domain))
        });
        let left_pools: Vec<String> = old_pools.difference(new_pools).map(|pool| (*pool).to_owned()).collect();
        let joined_pools: Vec<String> = new_pools.difference(old_pools).map(|pool| (*pool).to_owned()).collect();
        if domain.is_some() || !left_pools.is_empty() || !joined_pools.is_empty() {
            moves.push(NodeMove { node: (*node).to_owned(), domain, left_pools, joined_pools });
        }
    }
    moves
}

fn money_total(model: &Model, mut amounts: impl Iterator<Item = i64>) -> String {
    // Each amount is bounded, a project-wide total of them is not: say so rather than wrap.
    let total = amounts.try_fold(0i64, i64::checked_add);
    total.map_or_else(
        || "too large to add up".to_owned(),
        |minor| placid_lang::units::Money { currency: model.project.currency, minor }.to_string(),
    )
}

/// A policy-wide quantity, printed.
type Measure = fn(&Model) -> String;

fn totals(base: &Model, head: &Model) -> Vec<Total> {
    let measures: [(&str, Measure); 6] = [
        ("GPUs", |model| model.total_gpus().to_string()),
        ("reserved GPUs", |model| {
            model.tiers.iter().flat_map(|tier| &tier.reservations).map(|reservation| u64::from(reservation.gpus)).sum::<u64>().to_string()
        }),
        ("team shares", |model| total_shares(model).to_string()),
        ("cost-center budgets/day", |model| {
            money_total(model, model.cost_centers.iter().filter_map(|center| center.daily_budget.as_ref()).map(|budget| budget.value.minor))
        }),
        ("team budgets/day", |model| {
            money_total(model, model.teams.iter().filter_map(|team| team.daily_budget.as_ref()).map(|budget| budget.value.minor))
        }),
        ("tier budgets/day", |model| {
            money_total(model, model.tiers.iter().filter_map(|tier| tier.daily_budget.as_ref()).map(|budget| budget.value.minor))
        }),
    ];
    measures
        .iter()
        .filter_map(|(what, measure)| {
            let (before, after) = (measure(base), measure(head));
            (before != after).then(|| Total { what: (*what).to_owned(), before, after })
        })
        .collect()
}

fn preemption_pairs(model: &Model) -> BTreeSet<Preempts> {
    let mut pairs = BTreeSet::new();
    for preemptor in &model.tiers {
        for victim in model.tiers.iter().filter(|victim| preemptor.preempts(victim)) {
            pairs.insert(Preempts { preemptor: preemptor.name.to_string(), victim: victim.name.to_string() });
        }
    }
    pairs
}

/// Preemption relations gained and lost between tiers present in both revisions (a new or
/// deleted tier is reported as such, not as a reorder).
fn diff_preemptions(base: &Model, head: &Model) -> (Vec<Preempts>, Vec<Preempts>) {
    let in_both =
        |name: &str| base.tiers.iter().any(|tier| tier.name.as_str() == name) && head.tiers.iter().any(|tier| tier.name.as_str() == name);
    let (before, after) = (preemption_pairs(base), preemption_pairs(head));
    let kept = |pair: &&Preempts| in_both(&pair.preemptor) && in_both(&pair.victim);
    let gained = after.difference(&before).filter(kept).cloned().collect();
    let lost = before.difference(&after).filter(kept).cloned().collect();
    (gained, lost)
}

fn contains(outer: Span, inner: Span) -> bool {
    !outer.is_detached() && outer.file == inner.file && outer.start <= inner.start && inner.end <= outer.end
}

/// Every span a plan's elements were read from. Spans cover names and values rather than
/// whole blocks, so an error belongs to a plan when it points at one of these.
fn plan_spans(plan: &placid_lang::model::Plan) -> Vec<Span> {
    let mut spans = vec![plan.span, plan.team.span];
    for stage in &plan.stages {
        spans.extend([stage.span, stage.tier.span, stage.pool.span, stage.gpus.span]);
        spans.extend(stage.class.iter().map(|class| class.span));
        spans.extend(stage.score.iter().map(|score| score.span));
        spans.extend(stage.promote.iter().map(|promote| promote.span));
        spans.extend(stage.after.iter().map(|after| after.span));
    }
    spans
}

fn unplaceable_plans(base: &Model, head: &Model, head_diagnostics: &Diagnostics) -> Vec<String> {
    let errors: Vec<Span> = head_diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| diagnostic.primary.span)
        .collect();
    let mut plans: Vec<String> = head
        .plans
        .iter()
        .filter(|plan| base.plans.iter().any(|old| old.name == plan.name))
        .filter(|plan| {
            let spans = plan_spans(plan);
            errors.iter().any(|&error| spans.iter().any(|&span| contains(span, error)))
        })
        .map(|plan| plan.name.to_string())
        .collect();
    plans.sort();
    plans
}

fn dangers(diff: &ModelDiff) -> Vec<Danger> {
    let mut dangers = Vec::new();
    for plan in &diff.unplaceable_plans {
        dangers.push(Danger::new(DangerKind::Unplaceable, format!("plan {plan} has errors in head and cannot be placed")));
    }
    for row in &diff.teams {
        for cell in &row.pools {
            if let (Some(before), Some(after)) = (cell.before, cell.after)
                && after < before
            {
                dangers.push(Danger::of(
                    DangerKind::QuotaReduction,
                    Subject::Team(row.team.clone()),
                    format!("team {} guaranteed GPUs in pool {}: {before} → {after}", row.team, cell.pool),
                ));
            }
        }
    }
    for element in diff.elements.iter().filter(|element| element.status == Status::Removed) {
        if matches!(element.kind, ElementKind::Team | ElementKind::Tier | ElementKind::Pool) {
            let consequence = match element.kind {
                ElementKind::Team => "its queues and account are deleted",
                ElementKind::Tier => "its priority classes and QOS are deleted",
                _ => "its flavor and partition are deleted",
            };
            dangers.push(Danger::new(DangerKind::Deletion, format!("{} {} removed: {consequence}", element.kind.as_str(), element.name)));
        }
    }
    for element in diff.elements.iter().filter(|element| element.kind == ElementKind::Tier && element.status == Status::Modified) {
        for field in element.fields.iter().filter(|field| field.field == FieldKey::PREEMPTION) {
            dangers.push(Danger::of(
                DangerKind::PreemptionChange,
                Subject::Tier(element.name.clone()),
                format!(
                    "tier {}: preemption {} → {}",
                    element.name,
                    field.before.as_deref().unwrap_or("-"),
                    field.after.as_deref().unwrap_or("-")
                ),
            ));
        }
    }
    for pair in &diff.preemptions_gained {
        dangers.push(Danger::of(
            DangerKind::PriorityReorder,
            Subject::Tier(pair.victim.clone()),
            format!("{} now preempts {}", pair.preemptor, pair.victim),
        ));
    }
    for pair in &diff.preemptions_lost {
        dangers.push(Danger::new(DangerKind::PriorityReorder, format!("{} no longer preempts {}", pair.preemptor, pair.victim)));
    }
    dangers.sort();
    dangers
}
