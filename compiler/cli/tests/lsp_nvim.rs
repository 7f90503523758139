//! `placid lsp` with a real editor: Neovim (headless, without user config) runs
//! tests/lsp/client.lua, whose LSP client starts the built `placid lsp`, opens a file of a
//! small project (tests/lsp/project) copied into a temporary directory with a mistake put in,
//! and writes the diagnostics, hover, completion and definition it received as JSON.
//!
//! Without `nvim` on the PATH the test says so and passes, except under CI=true, where .ci/run
//! installs Neovim and a missing one is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp")
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("read the project") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

fn nvim() -> Option<PathBuf> {
    let found = Command::new("nvim").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    found.is_ok_and(|status| status.success()).then(|| PathBuf::from("nvim"))
}

#[test]
fn neovim_gets_diagnostics_hover_completion_and_definition() {
    let Some(nvim) = nvim() else {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "nvim is not installed: .ci/run's packages must include neovim");
        println!("SKIPPED: the Neovim test did not run: `nvim` is not on the PATH (install Debian's neovim to run it)");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    copy(&data().join("project"), &root);
    let policy = root.join("policy.kdl");
    let text = std::fs::read_to_string(&policy).expect("read the policy");
    let mistaken = text.replacen("tier=\"gold\" class", "tier=\"glod\" class", 1);
    assert_ne!(mistaken, text);
    std::fs::write(&policy, mistaken).expect("write the mistake");
    let out = dir.path().join("result.json");

    let mut child = Command::new(nvim)
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", data().join("client.lua").display()))
        .env("PLACID_BIN", env!("CARGO_BIN_EXE_placid"))
        .env("PLACID_FILE", &policy)
        .env("PLACID_ROOT", &root)
        .env("PLACID_LSP_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nvim");
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if child.try_wait().expect("wait for nvim").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("nvim wrote no result")).expect("JSON");
    assert!(result.get("error").is_none(), "the Lua client failed: {result}");

    let diagnostics = result["diagnostics"].as_array().cloned().unwrap_or_default();
    let unresolved = diagnostics.iter().find(|diagnostic| diagnostic["code"] == "placid::E008").unwrap_or_else(|| panic!("{result}"));
    let message = unresolved["message"].as_str().unwrap_or_default();
    assert!(message.contains("glod") && message.contains("did you mean `gold`?"), "{message}");

    let hover = result["hover"]["contents"]["value"].as_str().unwrap_or_default();
    assert!(hover.contains("pool `a100`") && hover.contains("8 GPUs") && hover.contains("(usd)2.50 per GPU-hour"), "{hover}");

    let completion = result["completion"].as_array().or_else(|| result["completion"]["items"].as_array()).cloned().unwrap_or_default();
    let labels: Vec<&str> = completion.iter().filter_map(|item| item["label"].as_str()).collect();
    assert_eq!(labels, ["gold", "silver"], "{result}");

    let definition = &result["definition"][0];
    assert!(definition["uri"].as_str().unwrap_or_default().ends_with("/project/policy.kdl"), "{result}");
    assert_eq!(definition["range"]["start"], serde_json::json!({ "line": 0, "character": 6 }));
}

/// What is not the protocol on stdin (bad JSON, bytes that are not UTF-8, a frame cut short)
/// ends `placid lsp` with exit 2 and a coded message, never a panic.
#[test]
fn garbage_on_stdin_is_an_error_not_a_panic() {
    use std::io::Write as _;
    let inputs: [&[u8]; 4] = [
        b"Content-Length: 5\r\n\r\n{{{{{",
        b"Content-Length: 2\r\n\r\n\xff\xfe",
        b"Content-Length: 99\r\n\r\n{}",
        b"no header at all\r\n\r\n",
    ];
    for input in inputs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_placid"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start placid lsp");
        child.stdin.take().expect("stdin").write_all(input).expect("write");
        let output = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{input:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{input:?}: {stderr}");
        assert!(stderr.contains("the language server stopped"), "{input:?}: {stderr}");
    }
}
