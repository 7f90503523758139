//! The terminal report: the headline, dangers, the semantic changes and the artifact diffs as
//! plain text, coloured when the output is a terminal that wants colour. Every text from a
//! policy, a trace or a revision's name goes through [`placid_lang::escape::terminal`] (`e`),
//! so none can move the cursor, retitle the window or forge a line.

use std::fmt::Write as _;

use owo_colors::OwoColorize;
use placid_lang::escape::terminal as e;

use super::{field_values, guarantee_cell, share_text};
use crate::artifacts::FileContent;
use crate::report::DiffReport;

/// Whether to write ANSI colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    /// Colours on.
    Always,
    /// Plain text.
    Never,
}

struct Paint(Colour);

impl Paint {
    fn apply(&self, text: &str, style: fn(&str) -> String) -> String {
        match self.0 {
            Colour::Always => style(text),
            Colour::Never => text.to_owned(),
        }
    }
    fn bold(&self, text: &str) -> String {
        self.apply(text, |text| text.bold().to_string())
    }
    fn warn(&self, text: &str) -> String {
        self.apply(text, |text| text.yellow().bold().to_string())
    }
    fn error(&self, text: &str) -> String {
        self.apply(text, |text| text.red().bold().to_string())
    }
    fn diff_line(&self, line: &str) -> String {
        if line.starts_with("+++") || line.starts_with("---") {
            self.bold(line)
        } else if line.starts_with('+') {
            self.apply(line, |text| text.green().to_string())
        } else if line.starts_with('-') {
            self.apply(line, |text| text.red().to_string())
        } else if line.starts_with("@@") {
            self.apply(line, |text| text.cyan().to_string())
        } else {
            line.to_owned()
        }
    }
}

/// Renders the report for a terminal.
pub fn render(report: &DiffReport, colour: Colour) -> String {
    let paint = Paint(colour);
    let mut out = String::new();
    let _ = writeln!(out, "placid diff {} -> {}", e(&report.base.label), e(&report.head.label));
    let _ = writeln!(out, "{}\n", paint.bold(&format!("Policy change: {}", report.headline())));
    for (side, revision) in [("head", &report.head), ("base", &report.base)] {
        if !revision.compiled() {
            let _ =
                writeln!(out, "{}", paint.error(&format!("{side} {} does not compile ({} errors):", e(&revision.label), revision.errors)));
            for line in &revision.diagnostics {
                let _ = writeln!(out, "  {}", e(line));
            }
            out.push('\n');
        }
    }
    for danger in &report.dangers {
        let _ = writeln!(out, "{} {}", paint.warn(&format!("! {}:", danger.kind.as_str())), e(&danger.message));
        if let Some(effect) = &danger.effect {
            let _ = writeln!(out, "    simulated: {}", e(effect));
        }
    }
    if !report.dangers.is_empty() {
        out.push('\n');
    }
    if let Some(model) = &report.model {
        for row in &model.teams {
            let cells: Vec<String> = row
                .pools
                .iter()
                .filter(|cell| cell.changes())
                .map(|cell| format!("{} {}", e(&cell.pool), guarantee_cell(cell, "->")))
                .collect();
            if !cells.is_empty() {
                let _ = writeln!(out, "team {}: guaranteed GPUs {}", e(&row.team), cells.join(", "));
            }
        }
        for share in &model.shares {
            let _ = writeln!(out, "team {}: share {} -> {}", e(&share.team), share_text(&share.before), share_text(&share.after));
        }
        for element in &model.elements {
            let _ = writeln!(out, "{} {} {}", element.kind.as_str(), paint.bold(&e(&element.name)), element.status.as_str());
            for field in &element.fields {
                let (before, after) = field_values(field);
                let _ = writeln!(out, "    {}: {} -> {}", field.field, e(&before), e(&after));
            }
        }
        for moved in &model.node_moves {
            if let Some((before, after)) = &moved.domain {
                let _ = writeln!(out, "node {}: nvlink domain {} -> {}", e(&moved.node), e(before), e(after));
            }
            if !moved.left_pools.is_empty() || !moved.joined_pools.is_empty() {
                let _ = writeln!(
                    out,
                    "node {}: pools -[{}] +[{}]",
                    e(&moved.node),
                    e(&moved.left_pools.join(", ")),
                    e(&moved.joined_pools.join(", "))
                );
            }
        }
        for total in &model.totals {
            let _ = writeln!(out, "total {}: {} -> {}", total.what, e(&total.before), e(&total.after));
        }
    }
    if let Some(what_if) = &report.what_if {
        let _ = writeln!(out, "\n{}", paint.bold(&format!("what-if: {} replayed on base and head", e(&what_if.trace))));
        for error in &what_if.errors {
            let _ = writeln!(out, "  {}", paint.error(&e(error)));
        }
        for line in placid_simulate::text::compare_text(&what_if.changes).lines() {
            let _ = writeln!(out, "{}", e(line));
        }
        if what_if.jobs_changed > 0 {
            let _ = writeln!(out, "  jobs whose outcome changes ({}):", what_if.jobs_changed);
            for job in &what_if.jobs {
                let _ = writeln!(out, "    {}: {} → {}", e(&job.job), e(&job.before), e(&job.after));
            }
            if what_if.jobs_changed > what_if.jobs.len() {
                let _ = writeln!(out, "    … and {} more", what_if.jobs_changed - what_if.jobs.len());
            }
        }
    }
    for file in report.artifacts.iter().flatten() {
        let _ = writeln!(out, "\n{} ({})", paint.bold(&e(&file.path)), file.status.as_str());
        let diffs: Vec<&str> = match &file.content {
            FileContent::Entries { entries } => entries.iter().map(|entry| entry.diff.as_str()).collect(),
            FileContent::Text { diff } => vec![diff.as_str()],
            FileContent::Binary { .. } => vec!["binary file differs\n"],
        };
        for line in diffs.iter().flat_map(|diff| diff.lines()) {
            let _ = writeln!(out, "{}", paint.diff_line(&e(line)));
        }
    }
    out
}
