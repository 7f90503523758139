//! Drift between the example project's declared inventory and probed node files: none for an
//! honest probe, and each kind (domain, arch, GPU count and model, MIG, NVLink, node set)
//! reported at the declaration, as diagnostics and as JSON through `placid check --probed`.

use std::path::{Path, PathBuf};
use std::process::Command;

use placid_check::drift::{DriftKind, compare};
use placid_driver::merge::{merge, read_inventories};
use placid_lang::checked::Verdict;
use placid_lang::diag::Code;
use placid_lang::model::Model;
use placid_lang::source::Sources;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster")
}

fn declared() -> Verdict {
    let world = placid_driver::world::FsWorld::new(&example()).unwrap_or_else(|error| panic!("{error}"));
    let build = placid_driver::build::compile(&world, &placid_driver::build::Selection { only: Vec::new() });
    assert!(!build.diagnostics.has_errors());
    build.model
}

/// The example inventory as one probe file per node, each edited by `edit`.
fn probed_dir(edit: impl Fn(&str, String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let paths = placid_driver::merge::inventory_files_in(&example().join("inventory")).unwrap_or_else(|error| panic!("{error}"));
    let mut sources = Sources::new();
    let (files, diagnostics) = read_inventories(&mut sources, &paths);
    assert!(diagnostics.is_empty());
    let (model, _) = merge(files);
    for node in &model.nodes {
        let single = Model { nodes: vec![node.clone()], domains: model.domains.clone(), racks: model.racks.clone(), ..Model::default() };
        let text = edit(node.name.as_str(), placid_lang::print::inventory_kdl(&single));
        std::fs::write(dir.path().join(format!("{}.kdl", node.name)), text).unwrap_or_else(|error| panic!("{error}"));
    }
    dir
}

/// The node recabled into domain nvl-b, in a chassis of its own (a chassis is one domain).
fn moved_to_nvl_b(text: &str) -> String {
    text.replace("chassis=\"c1\" nvlink-domain=\"nvl-a\"", "chassis=\"c9\" nvlink-domain=\"nvl-b\"")
}

/// The probed files merged; merge errors (a domain mixing models after an edit) do not stop
/// drift, as in `placid check --probed`.
fn probed(dir: &Path) -> Model {
    let paths = placid_driver::merge::inventory_files_in(dir).unwrap_or_else(|error| panic!("{error}"));
    let mut sources = Sources::new();
    let (files, diagnostics) = read_inventories(&mut sources, &paths);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    merge(files).0
}

#[test]
fn an_honest_probe_has_no_drift() {
    let dir = probed_dir(|_, text| text);
    let drifts = compare(&declared(), &probed(dir.path()));
    assert!(drifts.is_empty(), "{drifts:?}");
}

#[test]
fn every_kind_of_drift_is_found_at_its_node() {
    let dir = probed_dir(|name, text| match name {
        "rv-a-01" => moved_to_nvl_b(&text),
        "rv-a-02" => text.replace("arch=\"riscv64\"", "arch=\"x86_64\""),
        "rv-a-03" => text.replace("gpu 0 model=\"H200\"", "gpu 0 model=\"H100\""),
        "rv-a-04" => text.replace("peer=1 links=6 bandwidth=\"300GB/s\"", "peer=1 links=5 bandwidth=\"250GB/s\""),
        "rv-b-01" => {
            let cut = text.find("    gpu 3").unwrap_or(text.len());
            let kept = &text[..cut];
            let kept: String = kept.lines().filter(|line| !line.contains("peer=3")).map(|line| format!("{line}\n")).collect();
            format!("{kept}}}\n")
        }
        "x86-01" => text.replace("mig=\"disabled\"", "mig=\"enabled\""),
        "x86-02" => String::new(),
        _ => text,
    });
    std::fs::write(dir.path().join("stray.kdl"), "node \"stray-01\" arch=\"x86_64\" {\n    cpu harts=2\n}\n")
        .unwrap_or_else(|error| panic!("{error}"));
    let drifts = compare(&declared(), &probed(dir.path()));
    let found: Vec<(&str, DriftKind)> = drifts.iter().map(|drift| (drift.node.as_str(), drift.kind)).collect();
    // Each kind is found at its node and reported under its own code.
    let diagnostics = placid_check::drift::diagnostics(&drifts);
    for (node, kind, code) in [
        ("rv-a-01", DriftKind::Domain, Code::DriftDomain),
        ("rv-a-02", DriftKind::Arch, Code::DriftArch),
        ("rv-a-03", DriftKind::GpuModel, Code::DriftGpus),
        ("rv-a-04", DriftKind::Nvlink, Code::DriftNvlink),
        ("rv-b-01", DriftKind::GpuCount, Code::DriftGpus),
        ("rv-b-01", DriftKind::Nvlink, Code::DriftNvlink),
        ("x86-01", DriftKind::Mig, Code::DriftMig),
        ("x86-02", DriftKind::Unprobed, Code::DriftNodeSet),
        ("stray-01", DriftKind::Undeclared, Code::DriftNodeSet),
    ] {
        let at = found.iter().position(|each| *each == (node, kind));
        let reported = at.and_then(|at| diagnostics.iter().nth(at)).map(|diagnostic| diagnostic.code);
        assert_eq!(reported, Some(code), "{node} {kind:?} in {found:?}");
    }
    let domain = drifts.iter().find(|drift| drift.kind == DriftKind::Domain).unwrap_or_else(|| unreachable!());
    assert_eq!((domain.declared.as_str(), domain.probed.as_str()), ("nvl-a", "nvl-b"));
    assert!(diagnostics.has_errors());
    assert_eq!(diagnostics.error_count(), drifts.len() - 2, "node-set differences are warnings");
}

#[test]
fn check_reports_drift_as_json() {
    let dir = probed_dir(|name, text| if name == "rv-a-01" { moved_to_nvl_b(&text) } else { text });
    let output = Command::new(env!("CARGO_BIN_EXE_placid"))
        .arg("check")
        .arg(example())
        .arg("--probed")
        .arg(dir.path())
        .args(["--format", "json"])
        .output()
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        json["drift"],
        serde_json::json!([{"node": "rv-a-01", "gpu": null, "field": "nvlink-domain", "declared": "nvl-a", "probed": "nvl-b"}])
    );
    // The example's own warnings (settings a target cannot carry out) come along; the drift is the error.
    let errors: Vec<&serde_json::Value> =
        json["diagnostics"].as_array().into_iter().flatten().filter(|item| item["severity"] == "error").collect();
    let codes: Vec<&str> = errors.iter().filter_map(|item| item["code"].as_str()).collect();
    assert_eq!(codes, ["placid::E072"]);
    assert_eq!(errors[0]["location"]["file"], "inventory/nvl-a.kdl");
}
