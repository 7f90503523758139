//! The Markdown report, written as a pull-request comment: the headline first, dangerous
//! changes marked, the policy table (team x pool guarantees), the semantic changes, then one
//! folded `<details>` section per generated file.
//!
//! Invariants: every value from a policy or a trace is shown in a code span that cannot be
//! broken out of or as inert prose ([`placid_lang::escape`]'s Markdown functions), fences are longer than any backtick run they hold,
//! and the comment stays under GitHub's 65,536-character limit by folding away the artifact
//! sections that do not fit, saying how many were left out.

use std::fmt::Write as _;

use placid_lang::escape;

use super::{field_values, guarantee_cell, share_text};
use crate::artifacts::{FileChange, FileContent};
use crate::model_diff::ModelDiff;
use crate::report::{DiffReport, RevisionReport};
use crate::what_if::WhatIf;

/// GitHub's limit on the body of a comment, with room for a CI wrapper's own lines.
const COMMENT_LIMIT: usize = 60_000;

/// Renders the report as Markdown.
pub fn render(report: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## placid diff: {} → {}\n", code(&report.base.label), code(&report.head.label));
    let _ = writeln!(out, "**Policy change: {}**\n", report.headline());
    revision_state(&mut out, "head", &report.head);
    revision_state(&mut out, "base", &report.base);
    if !report.dangers.is_empty() {
        let _ = writeln!(out, "### ⚠️ Dangerous changes\n");
        for danger in &report.dangers {
            let _ = writeln!(out, "- ⚠️ **{}**: {}", danger.kind.as_str(), text(&danger.message));
            if let Some(effect) = &danger.effect {
                let _ = writeln!(out, "  - simulated: {}", text(effect));
            }
        }
        out.push('\n');
    }
    if let Some(model) = &report.model {
        policy_table(&mut out, model);
        changes(&mut out, model);
    }
    if let Some(what_if) = &report.what_if {
        what_if_table(&mut out, what_if);
    }
    if let Some(files) = &report.artifacts {
        artifacts(&mut out, files);
    }
    if report.model.as_ref().is_none_or(ModelDiff::is_empty)
        && report.artifacts.as_ref().is_none_or(Vec::is_empty)
        && report.base.compiled()
    {
        let _ = writeln!(out, "No changes.");
    }
    out
}

/// The before → after table of the replayed trace; changed rows in bold.
fn what_if_table(out: &mut String, what_if: &WhatIf) {
    let _ = writeln!(out, "### What-if: {} replayed on base and head\n", code(&what_if.trace));
    for error in &what_if.errors {
        let _ = writeln!(out, "- ❌ {}", text(error));
    }
    if !what_if.errors.is_empty() {
        out.push('\n');
    }
    if what_if.changes.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Charts of both sides (allocation, queue length, each tier's waits): `placid diff --html` writes them as one page, which the CI recipes keep as this run's `what-if.html` artifact.\n"
    );
    let _ = writeln!(out, "| measure | base | head |\n|---|---|---|");
    for change in &what_if.changes {
        let (before, after) = (code(&change.before), code(&change.after));
        if change.before == change.after {
            let _ = writeln!(out, "| {} | {before} | {after} |", text(&change.measure));
        } else {
            let _ = writeln!(out, "| **{}** | {before} | **{after}** |", text(&change.measure));
        }
    }
    out.push('\n');
    if what_if.jobs_changed > 0 {
        let _ = writeln!(out, "Jobs whose outcome changes ({}):\n\n| job | base | head |\n|---|---|---|", what_if.jobs_changed);
        for job in &what_if.jobs {
            let _ = writeln!(out, "| {} | {} | **{}** |", code(&job.job), code(&job.before), code(&job.after));
        }
        if what_if.jobs_changed > what_if.jobs.len() {
            let _ = writeln!(out, "\n… and {} more.", what_if.jobs_changed - what_if.jobs.len());
        }
        out.push('\n');
    }
}

fn revision_state(out: &mut String, side: &str, revision: &RevisionReport) {
    if revision.compiled() {
        return;
    }
    let _ = writeln!(out, "> ❌ **{side} {} does not compile**: {} error(s).\n", code(&revision.label), revision.errors);
    let fence = fence_for(&revision.diagnostics.join("\n"));
    let _ = writeln!(out, "{fence}\n{}\n{fence}\n", revision.diagnostics.join("\n"));
}

fn policy_table(out: &mut String, model: &ModelDiff) {
    if model.teams.is_empty() && model.shares.is_empty() {
        return;
    }
    let pools: Vec<&str> = {
        let mut changed: Vec<&str> =
            model.teams.iter().flat_map(|row| row.pools.iter().filter(|cell| cell.changes()).map(|cell| cell.pool.as_str())).collect();
        changed.sort_unstable();
        changed.dedup();
        changed
    };
    let _ = writeln!(out, "### Policy: guaranteed GPUs per team and pool (and borrowing limits that change)\n");
    let mut header = String::from("| team | share |");
    let mut rule = String::from("|---|---|");
    for pool in &pools {
        let _ = write!(header, " {} |", code(pool));
        rule.push_str("---:|");
    }
    header.push_str(" tiers | budget/day |");
    rule.push_str("---|---|");
    let _ = writeln!(out, "{header}\n{rule}");
    let mut teams: Vec<&str> =
        model.teams.iter().map(|row| row.team.as_str()).chain(model.shares.iter().map(|share| share.team.as_str())).collect();
    teams.sort_unstable();
    teams.dedup();
    for team in teams {
        let share = model
            .shares
            .iter()
            .find(|share| share.team == team)
            .map_or_else(String::new, |share| format!("{} → {}", share_text(&share.before), share_text(&share.after)));
        let row = model.teams.iter().find(|row| row.team == team);
        let mut line = format!("| {} | {share} |", code(team));
        for pool in &pools {
            let cell = row
                .and_then(|row| row.pools.iter().find(|cell| cell.pool == *pool))
                .map(|cell| guarantee_cell(cell, "→"))
                .unwrap_or_default();
            let _ = write!(line, " {cell} |");
        }
        let pair = |value: Option<&(String, String)>| {
            value.map_or_else(String::new, |(before, after)| format!("{} → {}", code(before), code(after)))
        };
        let _ = writeln!(line, " {} | {} |", pair(row.and_then(|row| row.tiers.as_ref())), pair(row.and_then(|row| row.budget.as_ref())));
        out.push_str(&line);
    }
    out.push('\n');
}

fn changes(out: &mut String, model: &ModelDiff) {
    if model.elements.is_empty() && model.node_moves.is_empty() && model.totals.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Policy and inventory changes\n");
    for element in &model.elements {
        let _ = writeln!(out, "- **{} {}** {}", element.kind.as_str(), code(&element.name), element.status.as_str());
        for field in &element.fields {
            let (before, after) = field_values(field);
            let _ = writeln!(out, "  - {}: {} → {}", field.field, code(&before), code(&after));
        }
    }
    for moved in &model.node_moves {
        let mut parts = Vec::new();
        if let Some((before, after)) = &moved.domain {
            parts.push(format!("NVLink domain {} → {}", code(before), code(after)));
        }
        if !moved.left_pools.is_empty() {
            parts.push(format!("leaves pools {}", moved.left_pools.iter().map(|pool| code(pool)).collect::<Vec<_>>().join(", ")));
        }
        if !moved.joined_pools.is_empty() {
            parts.push(format!("joins pools {}", moved.joined_pools.iter().map(|pool| code(pool)).collect::<Vec<_>>().join(", ")));
        }
        let _ = writeln!(out, "- node {} moves: {}", code(&moved.node), parts.join("; "));
    }
    for total in &model.totals {
        let _ = writeln!(out, "- total {}: {} → {}", total.what, code(&total.before), code(&total.after));
    }
    out.push('\n');
}

fn artifacts(out: &mut String, files: &[FileChange]) {
    if files.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Generated artifacts\n");
    for (index, file) in files.iter().enumerate() {
        let section = artifact_section(file);
        if out.len() + section.len() > COMMENT_LIMIT {
            let _ = writeln!(
                out,
                "> {} more artifact section(s) left out to fit a pull-request comment; run `placid diff` locally for the full report.\n",
                files.len() - index
            );
            return;
        }
        out.push_str(&section);
    }
}

fn artifact_section(file: &FileChange) -> String {
    let mut section = String::new();
    let (count, body) = match &file.content {
        FileContent::Entries { entries } => {
            let mut body = String::new();
            for entry in entries {
                let _ = writeln!(body, "**{}** {}\n", code(&entry.key), entry.status.as_str());
                body.push_str(&diff_block(&entry.diff));
            }
            (format!("{} object(s)", entries.len()), body)
        }
        FileContent::Text { diff } => ("text".to_owned(), diff_block(diff)),
        FileContent::Binary { before, after } => {
            let show = |side: &Option<(usize, String)>| {
                side.as_ref()
                    .map_or_else(|| "-".to_owned(), |(size, hash)| format!("{size} bytes, sha256 {}", hash.get(..12).unwrap_or(hash)))
            };
            ("binary".to_owned(), format!("{} → {}\n\n", show(before), show(after)))
        }
    };
    let _ = writeln!(section, "<details><summary>{} · {} · {count}</summary>\n", code(&file.path), file.status.as_str());
    section.push_str(&body);
    section.push_str("</details>\n\n");
    section
}

fn diff_block(diff: &str) -> String {
    let fence = fence_for(diff);
    format!("{fence}diff\n{}{}{fence}\n\n", diff, if diff.ends_with('\n') { "" } else { "\n" })
}

/// A code fence longer than any run of backticks in `content`.
fn fence_for(content: &str) -> String {
    let longest = content.split(|character| character != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// An inline code span that a value cannot break out of.
fn code(value: &str) -> String {
    escape::markdown_code(value)
}

/// Plain text that cannot become Markdown or HTML syntax.
fn text(value: &str) -> String {
    escape::markdown(value)
}
