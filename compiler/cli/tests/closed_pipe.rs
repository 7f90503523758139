//! A reader that goes away (`placid check --format json | head -1`) ends a command quietly:
//! no panic (exit 101), and the exit code is the command's own, as if it had read everything.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples").join(name)
}

/// A pipe whose reading end is already closed, so every write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    writer.into()
}

/// Runs placid with stdout closed, stderr captured.
fn with_closed_stdout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placid")).args(args).env("NO_COLOR", "1").stdout(closed_pipe()).output().expect("run placid")
}

fn assert_clean_exit(output: &Output, expected: i32, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
    assert_eq!(output.status.code(), Some(expected), "{what}:\n{stderr}");
}

#[test]
fn commands_that_print_to_stdout_exit_cleanly_when_the_reader_is_gone() {
    let cluster = example("cluster");
    let cluster = cluster.to_str().expect("utf-8 path");
    assert_clean_exit(&with_closed_stdout(&["check", "--format", "json", cluster]), 0, "check --format json");
    assert_clean_exit(&with_closed_stdout(&["graph", cluster]), 0, "graph");
    assert_clean_exit(&with_closed_stdout(&["graph", "--kind", "plans", cluster]), 0, "graph --kind plans");
    assert_clean_exit(&with_closed_stdout(&["build", "--target", "kubernetes", "--stdout", cluster]), 0, "build --stdout");
    assert_clean_exit(&with_closed_stdout(&["fmt", "--check", cluster]), 0, "fmt --check");
    assert_clean_exit(&with_closed_stdout(&["explain", "--wat", "cost-aware", cluster]), 0, "explain --wat");
}

#[test]
fn policy_errors_keep_exit_one_when_stdout_or_stderr_is_closed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("p");
    let status = Command::new("cp").arg("-r").arg(example("cluster")).arg(&project).status().expect("cp");
    assert!(status.success());
    std::fs::write(project.join("policy/extra.kdl"), "pool \"empty\" { select arch=\"aarch64\" }\n").expect("write");
    let project = project.to_str().expect("utf-8 path");
    assert_clean_exit(&with_closed_stdout(&["check", "--format", "json", project]), 1, "check --format json (errors)");
    // Text diagnostics go to stderr; a closed stderr must not panic either.
    let output = Command::new(env!("CARGO_BIN_EXE_placid"))
        .args(["check", project])
        .env("NO_COLOR", "1")
        .stderr(closed_pipe())
        .output()
        .expect("run placid");
    assert_eq!(output.status.code(), Some(1), "check with stderr closed");
}
