//! The diff report: both revisions' states, the semantic and artifact diffs, and the summary
//! every format leads with (the headline, like Terraform's plan line).
//!
//! Invariant: renderers only lay this out; every count and verdict is computed here once, so
//! the terminal, Markdown and JSON reports always agree.

use std::collections::{BTreeMap, BTreeSet};

use placid_lang::diag::Severity;
use serde::Serialize;

use crate::artifacts::{Category, FileChange};
use crate::model_diff::{Danger, DangerKind, ModelDiff, Status};
use placid_driver::build::Build;
use placid_driver::render;

/// How many diagnostics of a failing revision the report quotes.
const QUOTED_DIAGNOSTICS: usize = 10;

/// Whether a revision compiled, with its diagnostics summarized.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RevisionReport {
    /// The revision as given (`origin/main`, `working tree`).
    pub label: String,
    /// Number of errors.
    pub errors: usize,
    /// Number of warnings.
    pub warnings: usize,
    /// The first errors, one line each (`policy/teams.kdl:3:5: placid::E010 message`).
    pub diagnostics: Vec<String>,
}

impl RevisionReport {
    /// Summarizes `build`.
    pub fn of(label: &str, build: &Build) -> RevisionReport {
        let errors = build.diagnostics.error_count();
        let diagnostics = build
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == Severity::Error)
            .take(QUOTED_DIAGNOSTICS)
            .map(|diagnostic| render::one_line(&build.sources, diagnostic))
            .collect();
        RevisionReport { label: label.to_owned(), errors, warnings: build.diagnostics.iter().count() - errors, diagnostics }
    }

    /// Whether the revision compiled.
    pub fn compiled(&self) -> bool {
        self.errors == 0
    }
}

/// The verdict of a diff, which `--exit-code` turns into 0, 1 or 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Both revisions compile to the same policy and artifacts.
    NoChanges,
    /// Head compiles and differs from base.
    Changes,
    /// Head does not compile.
    HeadErrors,
}

/// The counts of the headline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Teams touched by a change.
    pub teams_affected: usize,
    /// Changed objects (keyed entries or whole files) across artifacts.
    pub objects_changed: usize,
    /// Changed objects by category, in category order, zero counts left out.
    pub objects_by_category: Vec<(Category, usize)>,
    /// Removed objects and files, plus removed teams, tiers and pools.
    pub deletions: usize,
    /// Dangerous changes.
    pub dangers: usize,
    /// Whether head passes every check (capacity, topology, budgets).
    pub capacity_check_passed: bool,
}

/// Everything `placid diff` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffReport {
    /// The verdict.
    pub outcome: Outcome,
    /// The headline counts.
    pub summary: Summary,
    /// The base revision.
    pub base: RevisionReport,
    /// The head revision.
    pub head: RevisionReport,
    /// Dangerous changes, most severe first.
    pub dangers: Vec<Danger>,
    /// The semantic diff; absent when base does not compile.
    pub model: Option<ModelDiff>,
    /// The artifact diff; absent unless both revisions compile.
    pub artifacts: Option<Vec<FileChange>>,
    /// The what-if of a trace replayed through both revisions (`--simulate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_if: Option<crate::what_if::WhatIf>,
}

impl DiffReport {
    /// Assembles the report and computes its summary; `templates` are the changed Slurm
    /// template overrides, dangers of their own.
    pub fn new(
        base: RevisionReport,
        head: RevisionReport,
        model: Option<ModelDiff>,
        artifacts: Option<Vec<FileChange>>,
        templates: Vec<Danger>,
    ) -> DiffReport {
        let mut dangers: Vec<Danger> = model.as_ref().map(|model| model.dangers.clone()).unwrap_or_default();
        dangers.extend(templates);
        let files = artifacts.as_deref().unwrap_or_default();
        let mut by_category: BTreeMap<Category, usize> = BTreeMap::new();
        let mut deletions = 0;
        let replaced = replaced_files(files);
        for file in files {
            for (category, status) in file.counts() {
                *by_category.entry(category).or_default() += 1;
                if status == Status::Removed && !replaced.contains(file.path.as_str()) {
                    deletions += 1;
                }
            }
        }
        dangers.extend(removed_entry_dangers(files, &replaced));
        dangers.sort();
        dangers.dedup();
        if let Some(model) = &model {
            deletions += model.dangers.iter().filter(|danger| danger.kind == DangerKind::Deletion).count();
        }
        let summary = Summary {
            teams_affected: model.as_ref().map_or(0, |model| model.affected_teams().len()),
            objects_changed: by_category.values().sum(),
            objects_by_category: by_category.into_iter().collect(),
            deletions,
            dangers: dangers.len(),
            capacity_check_passed: head.compiled(),
        };
        // A template override can change without changing today's scripts; it is still a change.
        let changed = !base.compiled() || model.as_ref().is_some_and(|model| !model.is_empty()) || !files.is_empty() || !dangers.is_empty();
        let outcome = if !head.compiled() {
            Outcome::HeadErrors
        } else if changed {
            Outcome::Changes
        } else {
            Outcome::NoChanges
        };
        DiffReport { outcome, summary, base, head, dangers, model, artifacts, what_if: None }
    }

    /// Sets the what-if's measured effect beside each danger to a tier's or team's jobs.
    pub fn attach_effects(&mut self) {
        let Some(what_if) = &self.what_if else { return };
        for danger in &mut self.dangers {
            danger.effect = danger
                .subject
                .as_ref()
                .and_then(|subject| what_if.effects.iter().find(|(measured, _)| measured == subject))
                .map(|(_, effect)| effect.clone());
        }
    }

    /// The headline: `3 teams affected · 12 objects changed (4 Kueue, 3 Slurm) · 0 deletions ·
    /// capacity check passed`.
    pub fn headline(&self) -> String {
        let summary = &self.summary;
        let plural = |count: usize, word: &str| if count == 1 { format!("{count} {word}") } else { format!("{count} {word}s") };
        let mut parts = vec![format!("{} affected", plural(summary.teams_affected, "team"))];
        let mut objects = format!("{} changed", plural(summary.objects_changed, "object"));
        if !summary.objects_by_category.is_empty() {
            let categories: Vec<String> =
                summary.objects_by_category.iter().map(|(category, count)| format!("{count} {}", category.as_str())).collect();
            objects.push_str(&format!(" ({})", categories.join(", ")));
        }
        parts.push(objects);
        parts.push(plural(summary.deletions, "deletion"));
        if summary.dangers > 0 {
            parts.push(format!("{} to review", plural(summary.dangers, "dangerous change")));
        }
        parts.push(match (self.base.compiled(), self.head.compiled()) {
            (_, false) => format!("capacity check FAILED ({})", plural(self.head.errors, "error")),
            (false, true) => format!("capacity check passed (base had {})", plural(self.base.errors, "error")),
            (true, true) => "capacity check passed".into(),
        });
        parts.join(" · ")
    }
}

/// Removed PriorityClass files that an added one replaces: the same tier with another value.
/// A PriorityClass value is immutable, so the Kubernetes target puts it in the name
/// (`priorityclass.p2-100.yaml`) and a priority change swaps the object; pods keep the value
/// they were admitted with, and the model diff already reports the reorder. Only this kind:
/// a namespace or queue whose name ends in a number is deleted for real when it changes.
fn replaced_files(files: &[FileChange]) -> BTreeSet<&str> {
    let added: BTreeSet<String> =
        files.iter().filter(|file| file.status == Status::Added).filter_map(|file| priority_class_tier(&file.path)).collect();
    files
        .iter()
        .filter(|file| file.status == Status::Removed)
        .filter(|file| priority_class_tier(&file.path).is_some_and(|tier| added.contains(&tier)))
        .map(|file| file.path.as_str())
        .collect()
}

/// `kubernetes/priority/priorityclass.p2-100.yaml` -> `p2`; `None` for any other file.
fn priority_class_tier(path: &str) -> Option<String> {
    let name = path.strip_prefix("kubernetes/priority/priorityclass.")?.strip_suffix(".yaml")?;
    let (tier, value) = name.rsplit_once('-')?;
    (!value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit())).then(|| tier.to_owned())
}

/// Removed Kubernetes queues and Slurm partitions or QOS are dangerous even when the policy
/// change that caused them looks small.
fn removed_entry_dangers(files: &[FileChange], replaced: &BTreeSet<&str>) -> Vec<Danger> {
    let mut dangers = Vec::new();
    for file in files.iter().filter(|file| !replaced.contains(file.path.as_str())) {
        if let crate::artifacts::FileContent::Entries { entries } = &file.content {
            for entry in entries.iter().filter(|entry| entry.status == Status::Removed) {
                let queue = entry.key.starts_with("ClusterQueue ") || entry.key.starts_with("LocalQueue ");
                let slurm = entry.key.starts_with("PartitionName=") || entry.key.starts_with("QOS=");
                if queue || slurm {
                    dangers.push(Danger::new(DangerKind::Deletion, format!("{} removed from {}", entry.key, file.path)));
                }
            }
        }
        if file.status == Status::Removed {
            dangers.push(Danger::new(DangerKind::Deletion, format!("generated file {} removed", file.path)));
        }
    }
    dangers
}

#[cfg(test)]
mod tests {
    use super::priority_class_tier;

    #[test]
    fn only_a_priority_class_with_its_value_names_a_tier() {
        assert_eq!(priority_class_tier("kubernetes/priority/priorityclass.p2-100.yaml").as_deref(), Some("p2"));
        assert_eq!(priority_class_tier("kubernetes/priority/priorityclass.tier-a-7.yaml").as_deref(), Some("tier-a"));
        assert_eq!(priority_class_tier("kubernetes/priority/workloadpriorityclass.p2.yaml"), None);
        assert_eq!(priority_class_tier("kubernetes/namespaces/namespace.speech-1.yaml"), None);
        assert_eq!(priority_class_tier("kubernetes/priority/priorityclass.p2.yaml"), None);
    }
}
