//! The terminal forms of a replay: a summary of one report, and the before → after table of
//! two (the what-if of `placid diff --simulate`). Plain strings; the CLI prints them.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use placid_lang::units::Duration;

use crate::measure::Report;
use crate::outcome::tally_lines;

/// A duration for people: `3h25m`, `0s`.
fn duration(seconds: u64) -> String {
    Duration { seconds }.to_string()
}

/// A table with a header row, its columns padded to their widest cell.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| rows.iter().filter_map(|row| row.get(column)).map(|cell| cell.chars().count()).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    for row in rows {
        let line: Vec<String> = row.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        let _ = writeln!(text, "    {}", line.join("  ").trim_end());
    }
    text
}

/// A summary of one replay.
pub fn summary(report: &Report) -> String {
    let mut text = String::new();
    let rejected: usize = report.rejected.values().sum();
    let _ = writeln!(
        text,
        "{} jobs: {} finished, {} rejected, {} cancelled, {} unfinished",
        report.jobs, report.finished, rejected, report.cancelled, report.unfinished
    );
    if let Some(cut) = report.cut_seconds {
        let _ = writeln!(
            text,
            "  the replay stopped at its bound of {} verdicts at {}: the jobs not ended by then are unfinished (docs/limits.md)",
            placid_engine::sim::MAX_VERDICTS,
            duration(cut)
        );
    }
    // Job names come from the trace: escaped, so a name cannot drive the terminal.
    for line in tally_lines(&report.not_finished) {
        let _ = writeln!(text, "  {}", placid_lang::escape::terminal(&line));
    }
    let _ = writeln!(
        text,
        "  makespan {}, GPU allocation {:.1} % of {} GPUs, {:.1} GPUs fragmented on average",
        duration(report.makespan_seconds),
        report.allocation * 100.0,
        report.gpus,
        report.fragmented_gpus
    );
    let nvlink_share = if report.gpu_hours > 0.0 { report.nvlink_gpu_hours / report.gpu_hours * 100.0 } else { 0.0 };
    let _ =
        writeln!(text, "  {:.1} GPU-hours, {:.1} inside NVLink domains ({nvlink_share:.1} %)", report.gpu_hours, report.nvlink_gpu_hours);
    let preemptions: usize = report.preemptions.values().sum();
    let _ = writeln!(text, "  {preemptions} preemptions, {:.1} GPU-hours of work lost", report.lost_gpu_hours);
    let mut waits = vec![vec!["wait".to_owned(), "jobs".to_owned(), "p50".to_owned(), "p95".to_owned(), "p99".to_owned()]];
    for (group, by) in [("tier", &report.wait_by_tier), ("team", &report.wait_by_team)] {
        for (name, wait) in by {
            waits.push(vec![format!("{group} {name}"), wait.count.to_string(), duration(wait.p50), duration(wait.p95), duration(wait.p99)]);
        }
    }
    text.push_str(&table(&waits));
    let mut costs =
        vec![vec!["cost".to_owned(), "spent".to_owned(), "peak day".to_owned(), "budget a day".to_owned(), "days over".to_owned()]];
    for (team, cost) in &report.cost {
        let budget = cost.daily_budget.map_or_else(|| "none".to_owned(), |budget| budget.to_string());
        costs.push(vec![
            format!("team {team}"),
            cost.spent.to_string(),
            cost.peak_day.to_string(),
            budget,
            cost.days_over_budget.to_string(),
        ]);
    }
    text.push_str(&table(&costs));
    text
}

/// One row of the what-if table: a measure, before and after.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// What is measured (`wait p95 tier P1`).
    pub measure: String,
    /// On the base.
    pub before: String,
    /// On the head.
    pub after: String,
}

/// The measures a reviewer compares, base against head: jobs finished, rejected, cancelled
/// and unfinished (and per tier, for a tier with any on either side), wait p95 per tier,
/// preemptions, NVLink GPU-hours, cost per team and budget overruns. Rows that did not change
/// are kept, so the table always has the same shape for the same policy and trace.
pub fn compare(before: &Report, after: &Report) -> Vec<Change> {
    let mut rows = Vec::new();
    let mut row = |measure: String, before: String, after: String| rows.push(Change { measure, before, after });
    row("jobs finished".to_owned(), before.finished.to_string(), after.finished.to_string());
    for state in ["rejected", "cancelled", "unfinished"] {
        let in_state =
            |report: &Report| report.not_finished.iter().filter(|tally| tally.state == state).map(|tally| tally.count).sum::<usize>();
        row(format!("jobs {state}"), in_state(before).to_string(), in_state(after).to_string());
        let tiers: BTreeSet<&str> = before
            .not_finished
            .iter()
            .chain(&after.not_finished)
            .filter(|tally| tally.state == state)
            .map(|tally| tally.tier.as_str())
            .collect();
        for tier in tiers {
            let in_tier = |report: &Report| {
                report
                    .not_finished
                    .iter()
                    .filter(|tally| tally.state == state && tally.tier == tier)
                    .map(|tally| tally.count)
                    .sum::<usize>()
            };
            row(format!("jobs {state}, tier {tier}"), in_tier(before).to_string(), in_tier(after).to_string());
        }
    }
    let tiers: BTreeSet<&String> = before.wait_by_tier.keys().chain(after.wait_by_tier.keys()).collect();
    for tier in tiers {
        let p95 = |report: &Report| report.wait_by_tier.get(tier).map_or_else(|| "-".to_owned(), |wait| duration(wait.p95));
        row(format!("wait p95, tier {tier}"), p95(before), p95(after));
    }
    let preemptions = |report: &Report| report.preemptions.values().sum::<usize>().to_string();
    row("preemptions".to_owned(), preemptions(before), preemptions(after));
    row("NVLink GPU-hours".to_owned(), format!("{:.1}", before.nvlink_gpu_hours), format!("{:.1}", after.nvlink_gpu_hours));
    let teams: BTreeSet<&String> = before.cost.keys().chain(after.cost.keys()).collect();
    for team in &teams {
        let spent = |report: &Report| report.cost.get(*team).map_or_else(|| "-".to_owned(), |cost| cost.spent.to_string());
        row(format!("cost, team {team}"), spent(before), spent(after));
    }
    let overruns = |report: &Report| report.cost.values().map(|cost| cost.days_over_budget).sum::<usize>().to_string();
    row("team-days over budget".to_owned(), overruns(before), overruns(after));
    rows
}

/// The what-if table as text, marking the rows that changed.
pub fn compare_text(changes: &[Change]) -> String {
    let mut rows = vec![vec![String::new(), "measure".to_owned(), "base".to_owned(), "head".to_owned()]];
    for change in changes {
        let mark = if change.before == change.after { " " } else { "~" };
        rows.push(vec![mark.to_owned(), change.measure.clone(), change.before.clone(), format!("→ {}", change.after)]);
    }
    table(&rows)
}

/// Whose jobs an [`effect`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The jobs of the tier named so.
    Tier(&'a str),
    /// The jobs of the team named so.
    Team(&'a str),
    /// Every job.
    All,
}

/// What a change did to `scope`'s jobs, base → head, in one line for a risk flag: the wait
/// p95, the jobs rejected and unfinished, and the preemptions (a tier) or the cost (a team).
pub fn effect(before: &Report, after: &Report, scope: Scope<'_>) -> String {
    let wait = |report: &Report| {
        let waits = match scope {
            Scope::Tier(tier) => report.wait_by_tier.get(tier),
            Scope::Team(team) => report.wait_by_team.get(team),
            Scope::All => None,
        };
        waits.map_or_else(|| "-".to_owned(), |wait| duration(wait.p95))
    };
    let count = |report: &Report, state: &str| {
        let matches = |tally: &&crate::outcome::Tally| match scope {
            Scope::Tier(tier) => tally.tier == tier,
            Scope::Team(team) => tally.team == team,
            Scope::All => true,
        };
        report.not_finished.iter().filter(|tally| tally.state == state).filter(matches).map(|tally| tally.count).sum::<usize>()
    };
    let mut parts = Vec::new();
    let (name, scoped) = match scope {
        Scope::Tier(tier) => ("tier", Some(tier)),
        Scope::Team(team) => ("team", Some(team)),
        Scope::All => ("all jobs", None),
    };
    let whose = scoped.map_or_else(|| name.to_owned(), |scoped| format!("{name} {scoped}"));
    if scoped.is_some() {
        parts.push(format!("{whose} wait p95 {} → {}", wait(before), wait(after)));
    }
    for state in ["rejected", "unfinished"] {
        parts.push(format!("{state} {} → {}", count(before, state), count(after, state)));
    }
    match scope {
        Scope::Tier(tier) => {
            let preempted = |report: &Report| report.preemptions.get(tier).copied().unwrap_or(0);
            parts.push(format!("preempted {} → {}", preempted(before), preempted(after)));
        }
        Scope::Team(team) => {
            let spent = |report: &Report| report.cost.get(team).map_or_else(|| "-".to_owned(), |cost| cost.spent.to_string());
            parts.push(format!("cost {} → {}", spent(before), spent(after)));
        }
        Scope::All => parts.insert(0, whose),
    }
    parts.join(", ")
}
