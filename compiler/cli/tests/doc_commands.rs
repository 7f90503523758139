//! The docs' commands are true: every `placid ...` line of a shell block (```` ```sh ````,
//! ```` ```console ````, or a block without a language) in README.md, docs/ and the examples'
//! READMEs runs as written, from the repository root, against the bundled examples, and
//! exits as the docs say: 0, or 1 for a broken example (`/broken/`). Outputs land in a temp
//! directory holding a copy of the examples (and `cluster/`, the project of docs/gitops.md's
//! policy repository). A command that needs what a test cannot have offline (a git remote,
//! hardware, files that are not bundled) is in [`SKIPPED`] with the reason; a skipped entry
//! that no longer matches a command fails, so the list cannot go stale.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Commands not run: (file, the start of the command, why).
const SKIPPED: &[(&str, &str, &str)] = &[
    ("README.md", "placid diff --base origin/main", "needs a git repository with the remote branch origin/main"),
    (
        "README.md",
        "placid simulate --import openb",
        "reads the openb traces of ../shared, which are not bundled; tests/ runs the reproduction",
    ),
    ("docs/gitops.md", "placid diff --base", "needs git revisions of a policy repository"),
    ("docs/migrations.md", "placid audit-binaries", "needs container image tarballs"),
    ("docs/probe.md", "placid inventory merge probed/", "needs probed node files from real nodes"),
    ("docs/probe.md", "placid check . --probed", "needs probed node files from real nodes; `[--format json]` is an option, not a word"),
    ("docs/semantics.md", "placid simulate --import openb", "reads the openb traces, which are not bundled"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files whose commands are held to this.
fn documents() -> Vec<String> {
    let mut found = vec!["README.md".to_owned(), "policy-examples/README.md".to_owned()];
    for dir in ["docs", "docs/targets"] {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.ends_with(".md"))
                    .map(|name| format!("{dir}/{name}"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        found.extend(names);
    }
    for example in ["cluster", "migration", "vit-sweep"] {
        found.push(format!("policy-examples/{example}/README.md"));
    }
    found.retain(|path| root().join(path).is_file());
    found
}

/// One command of a document: the directory it runs in (relative to the root) and its words.
#[derive(Debug)]
struct DocCommand {
    line: usize,
    text: String,
    dir: String,
    words: Vec<String>,
}

/// The `placid` commands of the shell blocks of `markdown`, continuation lines joined and
/// comments dropped.
fn commands(markdown: &str) -> Vec<DocCommand> {
    let mut found = Vec::new();
    let mut shell = None;
    let mut pending: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(language) = trimmed.strip_prefix("```") {
            shell = match shell {
                None => Some(matches!(language, "" | "sh" | "console" | "bash" | "shell")),
                Some(_) => None,
            };
            continue;
        }
        if shell != Some(true) {
            continue;
        }
        let text = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        let text = text.split(" #").next().unwrap_or(text).trim();
        let (start, joined) = match pending.take() {
            Some((start, before)) => (start, format!("{before} {text}")),
            None => (index + 1, text.to_owned()),
        };
        if let Some(continued) = joined.strip_suffix('\\') {
            pending = Some((start, continued.trim().to_owned()));
            continue;
        }
        let (dir, command) = match joined.strip_prefix("(cd ").and_then(|rest| rest.split_once(" && ")) {
            Some((dir, command)) => (dir.to_owned(), command.trim_end_matches(')').to_owned()),
            None => (".".to_owned(), joined.clone()),
        };
        if command.starts_with("placid ") {
            found.push(DocCommand {
                line: start,
                text: command.clone(),
                dir,
                words: command.split_whitespace().skip(1).map(str::to_owned).collect(),
            });
        }
    }
    found
}

/// A temp directory that stands for the repository root: the examples, and `cluster/`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (from, to) in [("policy-examples", "policy-examples"), ("policy-examples/cluster", "cluster")] {
        let status = Command::new("cp").arg("-r").arg(root().join(from)).arg(dir.path().join(to)).status().expect("cp");
        assert!(status.success());
    }
    dir
}

#[test]
fn every_documented_command_runs_as_documented() {
    let workspace = workspace();
    let mut used = vec![false; SKIPPED.len()];
    let (mut ran, mut failures) = (0, Vec::new());
    for document in documents() {
        let markdown = std::fs::read_to_string(root().join(&document)).expect("read the document");
        for command in commands(&markdown) {
            if let Some(index) = SKIPPED.iter().position(|(file, start, _)| *file == document && command.text.starts_with(start)) {
                used[index] = true;
                continue;
            }
            let place = format!("{document}:{}: `{}`", command.line, command.text);
            if command.words.iter().any(|word| word.contains(['>', '|', '*', '[', '$'])) {
                failures.push(format!("{place}: shell syntax; run it here or add it to SKIPPED with the reason"));
                continue;
            }
            let output = Command::new(env!("CARGO_BIN_EXE_placid"))
                .args(&command.words)
                .current_dir(workspace.path().join(&command.dir))
                .env("NO_COLOR", "1")
                .output()
                .expect("run placid");
            let expected = if command.text.contains("/broken/") { 1 } else { 0 };
            if output.status.code() != Some(expected) {
                failures.push(format!(
                    "{place}: exit {:?}, documented {expected}\n{}",
                    output.status.code(),
                    String::from_utf8_lossy(&output.stderr).lines().take(12).collect::<Vec<_>>().join("\n")
                ));
            }
            ran += 1;
        }
    }
    for (index, (file, start, _)) in SKIPPED.iter().enumerate() {
        if !used[index] {
            failures.push(format!("SKIPPED names `{start}` in {file}, which has no such command any more"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 15, "only {ran} documented commands ran");
}
