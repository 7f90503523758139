//! The `placid-probe` binary's output: a reader that goes away ends it quietly, `-o`
//! replaces a file whole, and the site's prices reach the inventory.

use std::path::Path;
use std::process::{Command, Stdio};

/// A minimal captured tree: one riscv64 hart and its memory.
fn capture(root: &Path) {
    std::fs::create_dir_all(root.join("proc")).expect("mkdir");
    std::fs::write(root.join("proc/cpuinfo"), "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n").expect("write");
    std::fs::write(root.join("proc/meminfo"), "MemTotal:       16318412 kB\n").expect("write");
}

fn probe(root: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_placid-probe"));
    command.arg("--root").arg(root).args(["--name", "n1"]);
    command
}

#[test]
fn a_closed_stdout_ends_the_probe_quietly() {
    let dir = tempfile::tempdir().expect("temp dir");
    capture(dir.path());
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let output = probe(dir.path()).stdout(Stdio::from(writer)).output().expect("run placid-probe");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn the_output_file_is_replaced_whole_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    capture(&root);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    let file = out.join("n1.kdl");
    std::fs::write(&file, "an older inventory").expect("write");
    let output = probe(&root).arg("-o").arg(&file).output().expect("run placid-probe");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(std::fs::read_to_string(&file).expect("read").starts_with("node \"n1\""));
    let names: Vec<_> = std::fs::read_dir(&out).expect("list").map(|entry| entry.expect("entry").file_name()).collect();
    assert_eq!(names, ["n1.kdl"]);
}

#[test]
fn prices_from_the_site_file_and_flags_reach_the_inventory_in_both_forms() {
    use placid_lang::lower::{InventoryFormat, read_inventory_file};
    use placid_lang::span::FileId;
    use placid_lang::units::{Currency, Money};

    let dir = tempfile::tempdir().expect("temp dir");
    capture(dir.path());
    let site = dir.path().join("site.kdl");
    std::fs::write(&site, "cost gpu-hour=(usd)3.10 egress-tb=(usd)120\n").expect("write");
    let usd = |minor| Some(Money { currency: Currency::Usd, minor });
    for (format, form) in [("kdl", InventoryFormat::Kdl), ("json", InventoryFormat::Json)] {
        // The flag wins over the site file's egress price; its GPU-hour price stays.
        let output = probe(dir.path())
            .arg("--site")
            .arg(&site)
            .args(["--cost-egress-tb", "(usd)90", "--format", format])
            .output()
            .expect("run placid-probe");
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8(output.stdout).expect("utf-8");
        let (entries, diagnostics) = read_inventory_file(FileId(0), &text, form);
        assert!(diagnostics.is_empty(), "{diagnostics:?}\n{text}");
        assert_eq!((entries[0].node.cost_per_gpu_hour, entries[0].node.cost_per_egress_tb), (usd(310), usd(9000)), "{text}");
    }
}
