//! Golden files of the Slurm target for every supported release: each example that enables
//! Slurm is emitted once per version and compared byte for byte with
//! `tests/golden-slurm/<example>/<version>/` (`UPDATE_GOLDEN=1` rewrites them). `tests/golden/`
//! already covers each example's own version; these pin what changes between releases
//! (topology plugin, block syntax, topology.yaml).

use placid_lang::model::SlurmVersion;
use placid_tests::{build_clean, checked, examples, golden, workspace_root};

#[test]
fn every_example_matches_its_golden_files_for_every_slurm_version() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for example in examples() {
        let base = build_clean(&example).model.into_model();
        if base.project.slurm.is_none() {
            continue;
        }
        for version in SlurmVersion::SUPPORTED {
            let mut model = base.clone();
            if let Some(settings) = model.project.slurm.as_mut() {
                settings.version = *version;
            }
            let artifacts = placid_targets::slurm::emit(&checked(model))
                .unwrap_or_else(|errors| panic!("{example}: Slurm {version} does not emit: {errors:?}"));
            let files = artifacts
                .iter()
                .map(|artifact| (artifact.path.strip_prefix("slurm/").unwrap_or(&artifact.path), artifact.bytes.as_slice()));
            let dir = workspace_root().join("tests").join("golden-slurm").join(&example).join(version.to_string());
            failures.extend(golden::compare(&dir, &format!("{example}/{version}"), files));
            compared += 1;
        }
    }
    assert!(compared >= SlurmVersion::SUPPORTED.len(), "no example enables Slurm");
    assert!(failures.is_empty(), "Slurm golden mismatches (rerun with UPDATE_GOLDEN=1 after reviewing):\n{}", failures.join("\n"));
}

#[test]
fn release_specific_names_follow_the_version() {
    let base = build_clean("cluster").model.into_model();
    let emit = |major: u16, minor: u16| {
        let mut model = base.clone();
        if let Some(settings) = model.project.slurm.as_mut() {
            settings.version = SlurmVersion { major, minor };
        }
        placid_targets::slurm::emit(&checked(model)).unwrap_or_else(|errors| panic!("does not emit: {errors:?}"))
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
