//! The migration example end to end: Argo Rollouts objects valid against the real CRDs
//! (closed), phase scripts that parse as shell, a runbook that names every object and script,
//! and the checker's migration rules and the names Kubernetes refuses on small variants.
//! Golden files of every migration output are part of `tests/golden/migration/` (see
//! `golden.rs`).

use std::collections::BTreeMap;

use placid_lang::diag::Code;
use placid_targets::k8s::kinds;
use placid_tests::{build, build_clean, copy_tree, crd, example, shared_dir};

/// A Rollout or AnalysisTemplate as the Kubernetes tree writes it.
struct KubeObject {
    api_version: &'static str,
    kind: &'static str,
    name: String,
    value: serde_json::Value,
}

fn objects() -> Vec<KubeObject> {
    let model = build_clean("migration").model;
    let list = placid_targets::k8s::objects(&model).unwrap_or_else(|errors| panic!("the migration example emits errors: {errors:?}"));
    let migration_kinds = [&kinds::ROLLOUT, &kinds::ANALYSIS_TEMPLATE];
    list.sorted()
        .into_iter()
        .filter(|object| migration_kinds.contains(&object.meta.kind))
        .map(|object| KubeObject {
            api_version: object.meta.kind.api_version,
            kind: object.meta.kind.kind,
            name: object.meta.name.to_string(),
            value: serde_yaml::from_str(&object.to_yaml(model.project.name.as_str()))
                .unwrap_or_else(|error| panic!("{}: {error}", object.path())),
        })
        .collect()
}

#[test]
fn every_rollout_and_analysis_template_is_valid_against_its_closed_crd() {
    let Some(shared) = shared_dir("every_rollout_and_analysis_template_is_valid_against_its_closed_crd") else { return };
    let schemas = crd::schemas(&shared.join("schemas/crds/argo-rollouts"));
    let validator = |object: &KubeObject| {
        let schema = schemas.get(&(object.api_version.to_owned(), object.kind.to_owned()));
        crd::validator(schema.unwrap_or_else(|| panic!("no CRD schema for {} {}", object.api_version, object.kind)))
    };
    let objects = objects();
    assert_eq!(objects.iter().filter(|object| object.kind == "Rollout").count(), 2, "one Rollout per service");
    assert_eq!(objects.iter().filter(|object| object.kind == "AnalysisTemplate").count(), 7, "one template per gate and trigger");
    for object in &objects {
        let errors = crd::errors(&validator(object), &object.value);
        assert!(errors.is_empty(), "{} {}: {errors:#?}", object.kind, object.name);
        assert_eq!(object.value["metadata"]["name"], object.name.as_str());
        assert_eq!(object.value["apiVersion"], object.api_version);
    }
    // The closed schema must reject what the API server would silently prune.
    let mut misspelt = objects[0].value.clone();
    misspelt["spec"]["metricz"] = serde_json::json!([]);
    assert!(!crd::errors(&validator(&objects[0]), &misspelt).is_empty(), "an unknown field passed the closed schema");
}

/// The Slurm phase scripts and the runbook of the example.
fn generated_files() -> BTreeMap<String, Vec<u8>> {
    let migration_file = |path: &str| path.starts_with("slurm/migrations/") || path.starts_with("runbooks/");
    let artifacts = build_clean("migration").artifacts.into_iter();
    artifacts.filter(|artifact| migration_file(&artifact.path)).map(|artifact| (artifact.path, artifact.bytes)).collect()
}

#[test]
fn phase_scripts_parse_as_posix_shell() {
    for (path, bytes) in generated_files().into_iter().filter(|(path, _)| path.ends_with(".sh")) {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), &bytes).expect("write script");
        // The interpreter the script names: the phase scripts are POSIX sh, the playbooks bash.
        let shell = if bytes.starts_with(b"#!/usr/bin/env bash") { "bash" } else { "sh" };
        let status = std::process::Command::new(shell).arg("-n").arg(file.path()).status().expect("run the shell");
        assert!(status.success(), "{path} does not parse as {shell}");
    }
    assert_eq!(generated_files().keys().filter(|path| path.ends_with("/apply.sh")).count(), 6, "one apply.sh per phase");
}

#[test]
fn the_runbook_names_every_analysis_template_and_phase_script() {
    let files = generated_files();
    let runbook = String::from_utf8_lossy(&files["runbooks/x86-to-riscv.md"]).into_owned();
    for object in objects().iter().filter(|object| object.kind == "AnalysisTemplate") {
        assert!(runbook.contains(&format!("`{}`", object.name)), "the runbook does not name {}", object.name);
    }
    // Each operations playbook has its own page (`runbooks/playbooks/<name>.md`), which runs
    // each of its scripts.
    for path in files.keys().filter(|path| path.ends_with(".sh")) {
        let page = match path.strip_prefix("runbooks/playbooks/") {
            Some(rest) => {
                let name = rest.split(['/', '.']).next().unwrap_or_default();
                String::from_utf8_lossy(&files[&format!("runbooks/playbooks/{name}.md")]).into_owned()
            }
            None => runbook.clone(),
        };
        assert!(page.contains(&format!("sh {path}")), "no runbook page runs {path}");
    }
}

/// Compiles the migration example with `policy/migration.kdl` replaced by `migration`.
fn variant(migration: &str) -> placid_driver::build::Build {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&example("migration"), dir.path(), &[]);
    std::fs::write(dir.path().join("policy/migration.kdl"), migration).expect("write migration");
    let mut build = build(dir.path());
    // The example's own warnings (its `train` tier's `exempt`, which Kubernetes cannot carry
    // out: E156) are not the migration's.
    let own = example_warnings();
    let mut kept = placid_lang::diag::Diagnostics::new();
    for diagnostic in std::mem::take(&mut build.diagnostics).into_vec().into_iter().filter(|diagnostic| !own.contains(&diagnostic.code)) {
        kept.push(diagnostic);
    }
    build.diagnostics = kept;
    build
}

/// The codes of the warnings the migration example reports as it is.
fn example_warnings() -> Vec<Code> {
    build(&example("migration"))
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.severity == placid_lang::diag::Severity::Warning)
        .map(|diagnostic| diagnostic.code)
        .collect()
}

/// Checks the migration example with `policy/migration.kdl` replaced by `migration`, and
/// returns the codes of the errors and warnings.
fn check(migration: &str) -> Vec<Code> {
    variant(migration).diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
}

/// Like [`check`], with the source text each diagnostic's primary span covers.
fn check_at(migration: &str) -> Vec<(Code, String)> {
    let build = variant(migration);
    let text = |span: placid_lang::span::Span| {
        build.sources.get(span.file).and_then(|file| file.text.get(span.start as usize..span.end as usize)).unwrap_or_default().to_owned()
    };
    build.diagnostics.iter().map(|diagnostic| (diagnostic.code, text(diagnostic.primary.span))).collect()
}

const PHASES: &str = r#"
    phase "shadow" hold="24h"
    phase "canary" weight="1%" hold="12h"
    phase "ramp" weight="30%" hold="24h"
    phase "blue-green" hold="72h"
"#;

fn migration(body: &str) -> String {
    format!("migration \"m\" from=\"x86-pcie\" to=\"rv-nvlink\" {{\n    classes \"finetune\" \"serving\"\n{body}\n}}\n")
}

#[test]
fn a_clean_migration_has_no_diagnostics() {
    assert_eq!(check(&migration(PHASES)), Vec::<Code>::new());
}

#[test]
fn phases_that_cannot_be_rolled_back_one_step_are_rejected() {
    let not_increasing = "phase \"canary\" weight=\"10%\" hold=\"1h\"\nphase \"ramp\" weight=\"10%\" hold=\"1h\"";
    assert_eq!(check(&migration(not_increasing)), vec![Code::MigrationPhasesNotReversible]);
    let shadow_late = "phase \"canary\" weight=\"1%\" hold=\"1h\"\nphase \"shadow\" hold=\"1h\"";
    assert_eq!(check(&migration(shadow_late)), vec![Code::MigrationPhasesNotReversible]);
    let blue_green_early = "phase \"blue-green\" hold=\"1h\"\nphase \"ramp\" weight=\"50%\" hold=\"1h\"";
    assert_eq!(check(&migration(blue_green_early)), vec![Code::MigrationPhasesNotReversible]);
    let canary_after_ramp = "phase \"ramp\" weight=\"10%\" hold=\"1h\"\nphase \"canary\" weight=\"20%\" hold=\"1h\"";
    assert_eq!(check(&migration(canary_after_ramp)), vec![Code::MigrationPhasesNotReversible]);
}

#[test]
fn a_target_pool_smaller_than_the_workload_is_rejected() {
    // The whole 32-GPU x86 pool moves (no migrated class runs there), into a pool of 32 GPUs:
    // fits. Into a pool of one domain (16 GPUs): does not.
    let pools = "pool \"nvl-r1\" { select nvlink-domain=\"nvl-r1\"; }\n";
    let body = format!("{pools}migration \"m\" from=\"x86-pcie\" to=\"nvl-r1\" {{\n    services \"llm-serve\"\n{PHASES}\n}}\n");
    assert_eq!(check(&body), vec![Code::MigrationTargetTooSmall]);
}

#[test]
fn baseline_gates_need_a_per_pool_metric_and_others_are_warned() {
    let metric = "metric \"cluster-throughput\" query=\"sum(rate(placid_samples_processed_total[5m]))\"\n";
    let baseline =
        format!("{metric}{}", migration(&format!("accept metric=\"cluster-throughput\" at-least=\"90%\" of=\"baseline\"\n{PHASES}")));
    assert_eq!(check(&baseline), vec![Code::MetricNotPerPool]);
    let plain = format!("{metric}{}", migration(&format!("rollback-when metric=\"cluster-throughput\" below=100\n{PHASES}")));
    assert_eq!(check(&plain), vec![Code::MetricNotPerPool]);
}

#[test]
fn a_metric_gated_twice_is_rejected() {
    let body =
        format!("accept metric=\"p99-latency\" at-most=\"110%\" of=\"baseline\"\naccept metric=\"p99-latency\" at-most=0.3\n{PHASES}");
    assert_eq!(check(&migration(&body)), vec![Code::DuplicateMigrationCondition]);
}

#[test]
fn a_class_without_an_image_for_the_target_architecture_is_rejected() {
    let class = "class \"x86-only\" {\n    image \"registry.example.com/old:1\"\n    platforms \"linux/amd64\"\n}\n";
    let body = format!(
        "{class}migration \"m\" from=\"x86-pcie\" to=\"rv-nvlink\" {{\n    classes \"x86-only\"\n    compatibility {{\n        image-platform \"linux/arm64\"\n    }}\n{PHASES}\n}}\n"
    );
    assert_eq!(check(&body), vec![Code::MigrationPlatformMissing, Code::MigrationPlatformMissing]);
}

#[test]
fn a_migration_into_its_own_pool_is_rejected() {
    let body = format!("migration \"m\" from=\"x86-pcie\" to=\"x86-pcie\" {{\n{PHASES}\n}}\n");
    assert_eq!(check(&body), vec![Code::MigrationSamePool]);
}

#[test]
fn every_emitted_rollout_object_carries_its_migration_label() {
    // The planned objects carry `<prefix>/migration`; the Kubernetes tree writes placid's
    // metadata in place of theirs, and used to drop that label on the way.
    let build = build_clean("migration");
    let prefix = &build.model.project.kubernetes.as_ref().expect("the example enables Kubernetes").label_prefix.value;
    let label = format!("{prefix}/migration");
    let mut seen = 0;
    for artifact in build.artifacts.iter().filter(|artifact| artifact.path.starts_with("kubernetes/")) {
        let text = String::from_utf8_lossy(&artifact.bytes);
        if !(text.contains("kind: Rollout") || text.contains("kind: AnalysisTemplate")) {
            continue;
        }
        seen += 1;
        let object: serde_yaml::Value = serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", artifact.path));
        let value = &object["metadata"]["labels"][label.as_str()];
        assert!(value.as_str().is_some_and(|name| !name.is_empty()), "{} lacks {label}:\n{text}", artifact.path);
    }
    assert_eq!(seen, 9, "two Rollouts and seven AnalysisTemplates");
}

#[test]
fn a_name_kubernetes_refuses_is_one_error_at_the_element_that_gives_it() {
    let body = |name: &str, service: &str| {
        format!(
            "migration \"{name}\" from=\"x86-pcie\" to=\"rv-nvlink\" {{\n    classes \"finetune\" \"serving\"\n    services \"{service}\"\n    accept metric=\"p99-latency\" at-most=0.3\n{PHASES}\n}}\n"
        )
    };
    // The migration's name starts every AnalysisTemplate's, which are not reported again.
    let errors = check_at(&body("X86_to_riscv", "llm-serve"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, Code::KubernetesInvalidName);
    assert!(errors[0].1.contains("X86_to_riscv"), "{errors:?}");
    // A service names an existing Deployment, so it is not mapped: a dot is refused too.
    for service in ["LLM-serve", "llm.serve"] {
        let errors = check_at(&body("m", service));
        assert_eq!(errors.iter().map(|(code, _)| *code).collect::<Vec<_>>(), [Code::KubernetesInvalidName], "{errors:?}");
        assert!(errors[0].1.contains(service), "{errors:?}");
    }
}
