//! Golden files of the Slurm target for every supported release: the cluster example is
//! emitted once per version and compared byte for byte with `tests/golden-slurm/<version>/`
//! (`UPDATE_GOLDEN=1` rewrites them). `tests/golden/` already covers the example's own
//! version; this test pins what changes between releases (topology plugin, block syntax,
//! topology.yaml).

use std::collections::BTreeSet;

use placid_lang::model::SlurmVersion;
use placid_tests::{build_clean, workspace_root};

#[test]
fn cluster_example_matches_its_golden_files_for_every_slurm_version() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let base = build_clean("cluster").model;
    let mut failures = Vec::new();
    for version in SlurmVersion::SUPPORTED {
        let mut model = base.clone();
        let Some(settings) = model.project.slurm.as_mut() else { panic!("the cluster example enables Slurm") };
        settings.version = *version;
        let artifacts = placid_targets::slurm::emit(&model).unwrap_or_else(|errors| panic!("Slurm {version} does not emit: {errors:?}"));
        let golden = workspace_root().join("tests").join("golden-slurm").join(version.to_string());
        if update {
            let _ = std::fs::remove_dir_all(&golden);
        }
        let mut produced = BTreeSet::new();
        for artifact in &artifacts {
            let relative = artifact.path.strip_prefix("slurm/").unwrap_or(&artifact.path);
            produced.insert(relative.to_owned());
            let path = golden.join(relative);
            if update {
                std::fs::create_dir_all(path.parent().unwrap_or(&golden)).expect("create golden dir");
                std::fs::write(&path, &artifact.bytes).expect("write golden file");
                continue;
            }
            match std::fs::read(&path) {
                Ok(expected) if expected == artifact.bytes => {}
                Ok(_) => failures.push(format!("{version}/{relative}: differs from its golden file")),
                Err(_) => failures.push(format!("{version}/{relative}: no golden file")),
            }
        }
        let on_disk = walk(&golden);
        for stale in on_disk.difference(&produced) {
            failures.push(format!("{version}/{stale}: golden file for an artifact that is no longer produced"));
        }
    }
    assert!(failures.is_empty(), "Slurm golden mismatches (rerun with UPDATE_GOLDEN=1 after reviewing):\n{}", failures.join("\n"));
}

fn walk(root: &std::path::Path) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(relative) = path.strip_prefix(root) {
                files.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files
}

#[test]
fn release_specific_names_follow_the_version() {
    let base = build_clean("cluster").model;
    let emit = |major: u16, minor: u16| {
        let mut model = base.clone();
        if let Some(settings) = model.project.slurm.as_mut() {
            settings.version = SlurmVersion { major, minor };
        }
        placid_targets::slurm::emit(&model).unwrap_or_else(|errors| panic!("does not emit: {errors:?}"))
    };
    let text = |artifacts: &[placid_targets::Artifact], path: &str| {
        artifacts.iter().find(|artifact| artifact.path == path).map(|artifact| String::from_utf8_lossy(&artifact.bytes).into_owned())
    };
    let old = emit(22, 5);
    assert!(text(&old, "slurm/slurm.conf").is_some_and(|conf| conf.contains("TopologyPlugin=topology/tree")));
    assert!(text(&old, "slurm/topology.conf").is_some_and(|topology| topology.contains("SwitchName=nvlink_nvl-a ")));
    let block = emit(24, 5);
    assert!(text(&block, "slurm/slurm.conf").is_some_and(|conf| conf.contains("TopologyPlugin=topology/block")));
    assert!(
        text(&block, "slurm/topology.conf").is_some_and(|topology| topology.contains("BlockSizes=") && !topology.contains("BlockLevels"))
    );
    let yaml = emit(25, 5);
    assert!(text(&yaml, "slurm/topology.conf").is_none());
    assert!(text(&yaml, "slurm/slurm.conf").is_some_and(|conf| !conf.contains("TopologyPlugin")));
    let parsed: serde_yaml::Value =
        serde_yaml::from_str(&text(&yaml, "slurm/topology.yaml").unwrap_or_default()).expect("topology.yaml parses");
    assert_eq!(parsed[0]["block"]["blocks"][0]["block"].as_str(), Some("nvlink_nvl-a"));
}
