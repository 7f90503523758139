//! The replay as one self-contained HTML page (`placid simulate --html FILE`): the summary,
//! step charts of allocation and queue length, each tier's wait distribution, cost per team
//! against its budget, the jobs that did not finish and a table of jobs. Inline SVG and CSS,
//! no script and nothing fetched, so the page opens from a CI artifact as it is. Every text
//! from the policy or the trace goes through `placid_lang::escape::html`.

use std::fmt::Write as _;

use placid_lang::escape::html;
use placid_lang::units::{Duration, Money};

use crate::measure::Report;
use crate::outcome::{JobChange, tally_lines};
use crate::plot::{PlotError, Series, line_chart};
use crate::text::Change;

/// The most jobs the page's job table lists (`--jobs` writes every one).
pub const TABLE_JOBS: usize = 1_000;

/// The page's style: readable tables and charts that fit the window.
const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1000px}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\
th{background:#f3f3f3}figure{margin:1em 0}figure svg{max-width:100%;height:auto}.over{color:#b00;font-weight:bold}";

/// The start of a page titled `heading`, through its `<h1>`.
fn head(heading: &str) -> String {
    let heading = html(heading);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{heading}</title><style>{STYLE}</style></head><body>\n<h1>{heading}</h1>\n"
    )
}

/// The what-if of `placid diff --simulate` as a page (`placid diff --html FILE`): the
/// before → after table, the jobs whose outcome changed, and base and head overlaid on each
/// chart (allocation, queue length, and each tier's wait distribution).
pub fn what_if_page(trace: &str, before: &Report, after: &Report, changes: &[Change], jobs: &[JobChange]) -> Result<String, PlotError> {
    let mut out = head(&format!("placid what-if: {trace} on base and head"));
    out.push_str("<h2>Base → head</h2>\n<table id=\"changes\"><tr><th>measure</th><th>base</th><th>head</th></tr>\n");
    for change in changes {
        let mark = if change.before == change.after { "" } else { " class=\"over\"" };
        let _ = writeln!(
            out,
            "<tr{mark}><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&change.measure),
            html(&change.before),
            html(&change.after)
        );
    }
    out.push_str("</table>\n");
    if !jobs.is_empty() {
        out.push_str("<h2>Jobs whose outcome changes</h2>\n<table id=\"job-changes\"><tr><th>job</th><th>base</th><th>head</th></tr>\n");
        for job in jobs {
            let _ = writeln!(out, "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", html(&job.job), html(&job.before), html(&job.after));
        }
        out.push_str("</table>\n");
    }
    let sides = [("base", before), ("head", after)];
    let overlay = |points: &dyn Fn(&Report) -> Vec<(f64, f64)>| -> Vec<Series> {
        sides.iter().map(|(side, report)| Series { name: (*side).to_owned(), points: points(report) }).collect()
    };
    let end = before.horizon_seconds.max(after.horizon_seconds);
    let mut charts = vec![
        (
            "allocation".to_owned(),
            line_chart("GPU allocation", "allocated GPUs (%)", &overlay(&|report| report.series.allocation_points(end)))?,
        ),
        ("queue".to_owned(), line_chart("Queue length", "waiting jobs", &overlay(&|report| report.series.queue_points(end)))?),
    ];
    let tiers: std::collections::BTreeSet<&String> =
        before.series.wait_distribution.keys().chain(after.series.wait_distribution.keys()).collect();
    for tier in tiers {
        let waits = overlay(&|report| report.series.wait_distribution.get(tier).cloned().unwrap_or_default());
        charts.push((
            format!("waits-{tier}"),
            line_chart(&format!("Wait, tier {tier} (x: wait in hours)"), "jobs started within (%)", &waits)?,
        ));
    }
    for (id, svg) in charts {
        let _ = writeln!(out, "<figure class=\"chart\" id=\"{}\">{svg}</figure>", html(&id));
    }
    out.push_str("</body></html>\n");
    Ok(out)
}

/// The page for `report`, titled `title` (the trace's path, say).
pub fn page(title: &str, report: &Report, currency: placid_lang::units::Currency) -> Result<String, PlotError> {
    let mut out = head(&format!("placid simulate: {title}"));
    let rejected: usize = report.rejected.values().sum();
    let _ = writeln!(
        out,
        "<p id=\"summary\">{} jobs: {} finished, {rejected} rejected, {} cancelled, {} unfinished. Makespan {}, GPU allocation {:.1} % of {} GPUs, {:.1} GPU-hours ({:.1} inside NVLink domains), {} preemptions.</p>",
        report.jobs,
        report.finished,
        report.cancelled,
        report.unfinished,
        Duration { seconds: report.makespan_seconds },
        report.allocation * 100.0,
        report.gpus,
        report.gpu_hours,
        report.nvlink_gpu_hours,
        report.preemptions.values().sum::<usize>(),
    );
    if !report.not_finished.is_empty() {
        out.push_str("<h2>Jobs that did not finish</h2>\n<ul id=\"not-finished\">\n");
        for line in tally_lines(&report.not_finished) {
            let _ = writeln!(out, "<li>{}</li>", html(&line));
        }
        out.push_str("</ul>\n");
    }
    let end = report.horizon_seconds;
    let series = |name: &str, points: Vec<(f64, f64)>| Series { name: name.to_owned(), points };
    let waits: Vec<Series> =
        report.series.wait_distribution.iter().map(|(tier, points)| series(&format!("tier {tier}"), points.clone())).collect();
    let charts = [
        (
            "allocation",
            "GPU allocation",
            line_chart("GPU allocation", "allocated GPUs (%)", &[series("allocation", report.series.allocation_points(end))])?,
        ),
        ("queue", "Queue length", line_chart("Queue length", "waiting jobs", &[series("waiting", report.series.queue_points(end))])?),
        ("waits", "Wait per tier", line_chart("Wait per tier (x: wait in hours)", "jobs started within (%)", &waits)?),
    ];
    for (id, heading, svg) in charts {
        let _ = writeln!(out, "<h2>{heading}</h2>\n<figure class=\"chart\" id=\"{id}\">{svg}</figure>");
    }
    out.push_str(
        "<h2>Waits</h2>\n<table id=\"waits-table\"><tr><th>wait</th><th>jobs</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n",
    );
    for (group, by) in [("tier", &report.wait_by_tier), ("team", &report.wait_by_team)] {
        for (name, wait) in by {
            let _ = writeln!(
                out,
                "<tr><td>{group} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                html(name),
                wait.count,
                Duration { seconds: wait.p50 },
                Duration { seconds: wait.p95 },
                Duration { seconds: wait.p99 },
                Duration { seconds: wait.max },
            );
        }
    }
    out.push_str("</table>\n<h2>Cost per team against budget</h2>\n<table id=\"cost\"><tr><th>team</th><th>spent</th><th>peak day</th><th>budget a day</th><th>peak of budget</th><th>days over</th></tr>\n");
    for (team, cost) in &report.cost {
        let (budget, share) = match cost.daily_budget {
            Some(budget) if budget.minor > 0 => {
                (budget.to_string(), format!("{:.0} %", cost.peak_day.minor as f64 / budget.minor as f64 * 100.0))
            }
            Some(budget) => (budget.to_string(), "-".to_owned()),
            None => ("none".to_owned(), "-".to_owned()),
        };
        let over = if cost.days_over_budget > 0 { " class=\"over\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{budget}</td><td>{share}</td><td{over}>{}</td></tr>",
            html(team),
            cost.spent,
            cost.peak_day,
            cost.days_over_budget
        );
    }
    out.push_str("</table>\n");
    let listed = report.outcomes.len().min(TABLE_JOBS);
    let _ = writeln!(
        out,
        "<h2>Jobs</h2>\n<p>The first {listed} of {} jobs, in trace order (<code>--jobs FILE</code> writes every one).</p>\n<table id=\"jobs\"><tr><th>job</th><th>state</th><th>reason</th><th>start (s)</th><th>end (s)</th><th>preemptions</th><th>cost</th></tr>",
        report.outcomes.len()
    );
    let optional = |value: Option<u64>| value.map(|value| value.to_string()).unwrap_or_default();
    for outcome in report.outcomes.iter().take(TABLE_JOBS) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&outcome.name),
            outcome.end.state(),
            outcome.end.reason().unwrap_or_default(),
            optional(outcome.start),
            optional(outcome.ended),
            outcome.preemptions,
            Money { currency, minor: outcome.cost_minor },
        );
    }
    out.push_str("</table>\n</body></html>\n");
    Ok(out)
}
