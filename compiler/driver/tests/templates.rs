//! Slurm template overrides are code: the `templates=` directory must exist, hold only
//! template names, and hold no symlinks (E048), and an override is a source of the build.
//! Each refused case was silently ignored before, leaving the built-in template in use.

use std::path::Path;

use placid_driver::build::{Selection, compile, source_hash};
use placid_driver::world::FsWorld;
use placid_lang::diag::Code;

const PROJECT: &str =
    "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\ntarget \"slurm\" version=\"22.05\" templates=\"slurm-templates\"\n";
const NODES: &str = "node \"n1\" arch=\"x86_64\" {\n    cpu harts=8\n    gpu 0 model=\"H200\"\n}\n";
const POLICY: &str = "pool \"all\" { select arch=\"x86_64\" }\ntier \"t\" {\n    priority 1\n    preemption window=\"1m\" mode=\"cancel\"\n}\ncost-center \"cc\"\nteam \"v\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n}\nplan \"p\" team=\"v\" {\n    stage \"s\" tier=\"t\" pool=\"all\" gpus=1 {\n        command \"train\"\n    }\n}\n";

/// A project with `templates` (path, text) in a fresh directory.
fn project(templates: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    for (path, text) in [("placid.kdl", PROJECT), ("nodes.kdl", NODES), ("policy.kdl", POLICY)].iter().chain(templates) {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(path, text).unwrap_or_else(|error| panic!("{error}"));
    }
    dir
}

fn build(dir: &Path) -> placid_driver::build::Build {
    let world = FsWorld::new(dir).unwrap_or_else(|error| panic!("{error}"));
    compile(&world, &Selection { only: Vec::new() })
}

/// The errors of building `dir`, as (code, message, help).
fn errors(dir: &Path) -> Vec<(Code, String, Option<String>)> {
    build(dir).diagnostics.iter().map(|diagnostic| (diagnostic.code, diagnostic.message.clone(), diagnostic.help.clone())).collect()
}

#[test]
fn an_override_is_used_and_is_a_source_of_the_build() {
    let dir = project(&[("slurm-templates/stage.sbatch.j2", "#!/bin/sh\n# custom {{ stage }}\n")]);
    let built = build(dir.path());
    assert!(!built.diagnostics.has_errors(), "{:?}", built.diagnostics);
    let script = built.artifacts.iter().find(|artifact| artifact.path == "slurm/plans/p/s.sbatch").map(|artifact| artifact.bytes.clone());
    assert_eq!(script.as_deref(), Some(&b"#!/bin/sh\n# custom s\n"[..]));
    assert!(built.sources.iter().any(|(_, file)| file.path.as_str() == "slurm-templates/stage.sbatch.j2"));
    std::fs::write(dir.path().join("slurm-templates/stage.sbatch.j2"), "#!/bin/sh\n# other {{ stage }}\n")
        .unwrap_or_else(|error| panic!("{error}"));
    assert_ne!(source_hash(&build(dir.path()).sources), source_hash(&built.sources), "the source hash covers the override");
}

#[test]
fn a_missing_templates_directory_is_an_error() {
    let errors = errors(project(&[]).path());
    assert_eq!(errors.iter().map(|(code, _, _)| *code).collect::<Vec<_>>(), [Code::SlurmTemplateOverride], "{errors:?}");
}

#[test]
fn a_misspelt_template_is_an_error_that_suggests_the_name() {
    let dir = project(&[("slurm-templates/stage.sbach.j2", "x"), ("slurm-templates/README", "notes")]);
    let errors = errors(dir.path());
    assert_eq!(errors.iter().map(|(code, _, _)| *code).collect::<Vec<_>>(), [Code::SlurmTemplateOverride; 2], "{errors:?}");
    let typo = errors.iter().find(|(_, message, _)| message.contains("stage.sbach.j2")).map(|(_, _, help)| help.clone());
    assert_eq!(typo, Some(Some("did you mean `stage.sbatch.j2`?".to_owned())));
}

#[test]
fn a_symlinked_template_is_an_error() {
    let dir = project(&[("other.j2", "#!/bin/sh\n")]);
    std::fs::create_dir(dir.path().join("slurm-templates")).unwrap_or_else(|error| panic!("{error}"));
    std::os::unix::fs::symlink("../other.j2", dir.path().join("slurm-templates/submit.sh.j2")).unwrap_or_else(|error| panic!("{error}"));
    let errors = errors(dir.path());
    assert_eq!(errors.iter().map(|(code, _, _)| *code).collect::<Vec<_>>(), [Code::SlurmTemplateOverride], "{errors:?}");
    assert!(errors[0].1.contains("symlink"), "{errors:?}");
}

#[test]
fn an_override_that_runs_away_is_an_error_at_templates() {
    let dir = project(&[(
        "slurm-templates/stage.sbatch.j2",
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
    )]);
    let built = build(dir.path());
    let codes: Vec<Code> = built.diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
    assert_eq!(codes, [Code::SlurmTemplateLimit]);
    let span = built.diagnostics.iter().next().map_or(placid_lang::span::Span::DETACHED, |diagnostic| diagnostic.primary.span);
    let project_file = built.sources.get(span.file).map(|file| file.text.clone()).unwrap_or_default();
    assert_eq!(&project_file[span.start as usize..span.end as usize], "templates=\"slurm-templates\"");
}
