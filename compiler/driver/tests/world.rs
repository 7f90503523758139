//! The file-system world and `placid inventory merge` read only what they should: regular
//! files, up to a size limit, found by globs that cannot loop, with reasons that never name a
//! path outside the project. Each case here hung, grew without bound or was read before.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use placid_driver::merge::read_inventories;
use placid_driver::world::FsWorld;
use placid_lang::diag::{Code, Diagnostics};
use placid_lang::source::{MAX_INVENTORY_BYTES, MAX_POLICY_BYTES, Sources};

const PROJECT: &str = "project \"p\"\ninventory \"inventory/*.kdl\"\ninclude \"policy/**/*.kdl\"\n";
const NODE: &str = "node \"n1\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n";

/// A project of `placid.kdl`, one inventory file and one policy file, in a fresh directory.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    for (path, text) in
        [("placid.kdl", PROJECT), ("inventory/n1.kdl", NODE), ("policy/pools.kdl", "pool \"all\" { select arch=\"x86_64\" }\n")]
    {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(path, text).unwrap_or_else(|error| panic!("{error}"));
    }
    dir
}

/// Runs `work` on a thread and fails the test if it does not finish within a minute: the
/// cases here used to block forever.
fn within_a_minute<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work());
    });
    receive.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("still running after a minute"))
}

/// Loads the project in `dir` and returns its diagnostics as (code, message).
fn load(dir: &Path) -> Vec<(Code, String)> {
    let dir = dir.to_path_buf();
    within_a_minute(move || {
        let world = FsWorld::new(&dir).unwrap_or_else(|error| panic!("{error}"));
        let compilation = placid_lang::load(&world);
        compilation.diagnostics.iter().map(|diagnostic| (diagnostic.code, diagnostic.message.clone())).collect()
    })
}

fn codes(diagnostics: &[(Code, String)]) -> Vec<Code> {
    diagnostics.iter().map(|(code, _)| *code).collect()
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap_or_else(|error| panic!("mkfifo: {error}"));
    assert!(status.success(), "mkfifo failed");
}

#[test]
fn a_fifo_matched_by_an_include_is_refused_without_blocking() {
    let dir = project();
    mkfifo(&dir.path().join("policy/fifo.kdl"));
    let diagnostics = load(dir.path());
    assert_eq!(codes(&diagnostics), [Code::SpecialFile], "{diagnostics:?}");
    assert!(diagnostics[0].1.contains("`policy/fifo.kdl`") && diagnostics[0].1.contains("a FIFO"), "{diagnostics:?}");
}

#[test]
fn a_socket_matched_by_an_include_is_refused() {
    let dir = project();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("policy/socket.kdl")).unwrap_or_else(|error| panic!("{error}"));
    let diagnostics = load(dir.path());
    assert_eq!(codes(&diagnostics), [Code::SpecialFile], "{diagnostics:?}");
}

#[test]
fn a_policy_file_past_the_limit_is_refused_without_reading_it() {
    let dir = project();
    // Sparse: a file that large would take as long to read as to write.
    let file = std::fs::File::create(dir.path().join("policy/huge.kdl")).unwrap_or_else(|error| panic!("{error}"));
    file.set_len(MAX_POLICY_BYTES + 1).unwrap_or_else(|error| panic!("{error}"));
    let diagnostics = load(dir.path());
    assert_eq!(codes(&diagnostics), [Code::FileTooLarge], "{diagnostics:?}");
    assert!(diagnostics[0].1.contains("1MiB"), "the limit is named: {diagnostics:?}");
}

#[test]
fn a_directory_link_back_up_is_not_followed() {
    let dir = project();
    std::os::unix::fs::symlink(".", dir.path().join("policy/l1")).unwrap_or_else(|error| panic!("{error}"));
    std::os::unix::fs::symlink("..", dir.path().join("policy/l2")).unwrap_or_else(|error| panic!("{error}"));
    let diagnostics = load(dir.path());
    assert_eq!(codes(&diagnostics), [], "each file is read once: {diagnostics:?}");
}

#[test]
fn a_file_link_inside_the_root_is_read_and_one_leaving_it_is_refused_without_naming_it() {
    let dir = project();
    std::fs::create_dir(dir.path().join("shared")).unwrap_or_else(|error| panic!("{error}"));
    std::fs::write(dir.path().join("shared/tier.kdl"), "tier \"t\" {\n    priority 1\n    preemption \"never\"\n}\n")
        .unwrap_or_else(|error| panic!("{error}"));
    std::os::unix::fs::symlink("../shared/tier.kdl", dir.path().join("policy/tier.kdl")).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(codes(&load(dir.path())), []);
    let outside = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    std::fs::write(outside.path().join("secret.kdl"), "x\n").unwrap_or_else(|error| panic!("{error}"));
    std::os::unix::fs::symlink(outside.path().join("secret.kdl"), dir.path().join("policy/secret.kdl"))
        .unwrap_or_else(|error| panic!("{error}"));
    let diagnostics = load(dir.path());
    assert_eq!(codes(&diagnostics), [Code::IncludeOutsideRoot], "{diagnostics:?}");
    let host = outside.path().to_string_lossy().into_owned();
    assert!(diagnostics[0].1.contains("`policy/secret.kdl`"), "{diagnostics:?}");
    assert!(diagnostics.iter().all(|(_, message)| !message.contains(&host)), "{diagnostics:?}");
}

fn merged(paths: Vec<PathBuf>) -> Diagnostics {
    within_a_minute(move || read_inventories(&mut Sources::new(), &paths).1)
}

#[test]
fn inventory_merge_refuses_devices_fifos_and_huge_files() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    // `/dev/zero` under a `.kdl` name was read until memory ran out.
    let zero = dir.path().join("zero.kdl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap_or_else(|error| panic!("{error}"));
    let fifo = dir.path().join("fifo.kdl");
    mkfifo(&fifo);
    let huge = dir.path().join("huge.json");
    let file = std::fs::File::create(&huge).unwrap_or_else(|error| panic!("{error}"));
    file.set_len(MAX_INVENTORY_BYTES + 1).unwrap_or_else(|error| panic!("{error}"));
    let listed = placid_driver::merge::inventory_files_in(dir.path()).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(listed.len(), 3, "a directory's special files are listed, to be refused by name");
    let diagnostics = merged(vec![zero, fifo, huge]);
    let codes: Vec<Code> = diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
    assert_eq!(codes, [Code::SpecialFile, Code::SpecialFile, Code::FileTooLarge], "{diagnostics:?}");
}
