//! The Slurm target for every supported release, pinned as differences: each example that
//! enables Slurm is emitted at its own version (the baseline, pinned byte for byte by
//! `tests/golden/<example>/slurm/`) and at every other supported version, and the unified diff
//! from the baseline is an insta snapshot per example and version
//! (`tests/tests/snapshots/slurm_versions__<example>@<version>.snap`). A change to what every
//! release emits then touches one golden file, not one per release; a change to what one
//! release emits touches that release's snapshot. Update with `INSTA_UPDATE=always` (see
//! docs/contributing.md).

use placid_lang::model::{Model, SlurmVersion};
use placid_tests::{build_clean, checked, examples};
use similar::TextDiff;
use std::collections::BTreeMap;

/// The Slurm files `model` emits at `version`, by path under `slurm/`.
fn emit_at(model: &Model, version: SlurmVersion) -> BTreeMap<String, String> {
    let mut model = model.clone();
    if let Some(settings) = model.project.slurm.as_mut() {
        settings.version = version;
    }
    let artifacts =
        placid_targets::slurm::emit(&checked(model)).unwrap_or_else(|errors| panic!("Slurm {version} does not emit: {errors:?}"));
    artifacts
        .into_iter()
        .map(|artifact| {
            let path = artifact.path.strip_prefix("slurm/").unwrap_or(&artifact.path).to_owned();
            (path, String::from_utf8_lossy(&artifact.bytes).into_owned())
        })
        .collect()
}

/// The unified diff from `baseline` to `release`, file by file in path order: a file only one
/// side has is diffed against nothing. Empty when the two emit the same bytes.
fn difference(baseline: &BTreeMap<String, String>, release: &BTreeMap<String, String>, labels: (&str, &str)) -> String {
    let mut paths: Vec<&String> = baseline.keys().chain(release.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut out = String::new();
    for path in paths {
        let old = baseline.get(path).map_or("", String::as_str);
        let new = release.get(path).map_or("", String::as_str);
        if old == new {
            continue;
        }
        let old_name = if baseline.contains_key(path) { format!("{}/{path}", labels.0) } else { "/dev/null".to_owned() };
        let new_name = if release.contains_key(path) { format!("{}/{path}", labels.1) } else { "/dev/null".to_owned() };
        out.push_str(&TextDiff::from_lines(old, new).unified_diff().context_radius(2).header(&old_name, &new_name).to_string());
    }
    out
}

#[test]
fn every_slurm_release_differs_from_the_baseline_only_as_snapshotted() {
    let mut compared = 0;
    for example in examples() {
        let model = build_clean(&example).model.into_model();
        let Some(own) = model.project.slurm.as_ref().map(|settings| settings.version) else { continue };
        let baseline = emit_at(&model, own);
        for version in SlurmVersion::SUPPORTED.iter().copied().filter(|version| *version != own) {
            let diff = difference(&baseline, &emit_at(&model, version), (&own.to_string(), &version.to_string()));
            let shown = if diff.is_empty() { format!("Slurm {version} emits what Slurm {own} emits.\n") } else { diff };
            insta::assert_snapshot!(format!("{example}@{version}"), shown, &format!("{example}: Slurm {own} → {version}"));
            compared += 1;
        }
    }
    assert!(compared >= SlurmVersion::SUPPORTED.len() - 1, "no example enables Slurm");
}

#[test]
fn the_difference_names_every_changed_added_and_removed_file() {
    let files = |entries: &[(&str, &str)]| entries.iter().map(|(path, text)| ((*path).to_owned(), (*text).to_owned())).collect();
    let baseline = files(&[("slurm.conf", "A=1\nB=2\n"), ("topology.conf", "SwitchName=x\n"), ("gres.conf", "same\n")]);
    let release = files(&[("slurm.conf", "A=1\nB=3\n"), ("topology.yaml", "- block: x\n"), ("gres.conf", "same\n")]);
    let diff = difference(&baseline, &release, ("22.05", "25.05"));
    assert!(diff.contains("--- 22.05/slurm.conf\n+++ 25.05/slurm.conf") && diff.contains("-B=2\n+B=3"), "{diff}");
    assert!(diff.contains("--- 22.05/topology.conf\n+++ /dev/null") && diff.contains("-SwitchName=x"), "{diff}");
    assert!(diff.contains("--- /dev/null\n+++ 25.05/topology.yaml") && diff.contains("+- block: x"), "{diff}");
    assert!(!diff.contains("gres.conf"), "an unchanged file is not in the difference: {diff}");
    assert!(difference(&baseline, &baseline, ("a", "b")).is_empty());
}

#[test]
fn release_specific_names_follow_the_version() {
    let base = build_clean("cluster").model.into_model();
    let emit = |major: u16, minor: u16| emit_at(&base, SlurmVersion { major, minor });
    let old = emit(22, 5);
    assert!(old.get("slurm.conf").is_some_and(|conf| conf.contains("TopologyPlugin=topology/tree")));
    assert!(old.get("topology.conf").is_some_and(|topology| topology.contains("SwitchName=nvlink_nvl-a ")));
    let block = emit(24, 5);
    assert!(block.get("slurm.conf").is_some_and(|conf| conf.contains("TopologyPlugin=topology/block")));
    assert!(block.get("topology.conf").is_some_and(|topology| topology.contains("BlockSizes=") && !topology.contains("BlockLevels")));
    let yaml = emit(25, 5);
    assert!(!yaml.contains_key("topology.conf"));
    assert!(yaml.get("slurm.conf").is_some_and(|conf| !conf.contains("TopologyPlugin")));
    let parsed: serde_yaml::Value =
        serde_yaml::from_str(yaml.get("topology.yaml").map_or("", String::as_str)).expect("topology.yaml parses");
    assert_eq!(parsed[0]["block"]["blocks"][0]["block"].as_str(), Some("nvlink_nvl-a"));
}
