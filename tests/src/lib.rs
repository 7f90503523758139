//! Support for placid's end-to-end tests: locating `../shared` (schemas, fixtures), the
//! examples, and compiling a project in memory.

pub mod crd;
pub mod golden;
pub mod synthetic;

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The directory of a bundled example (`policy-examples/<name>`).
pub fn example(name: &str) -> PathBuf {
    workspace_root().join("policy-examples").join(name)
}

/// The names of the bundled examples: every `policy-examples/*/placid.kdl`.
pub fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace_root().join("policy-examples"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().join("placid.kdl").is_file())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The shared data directory (`../shared` beside the workspace, or `$PLACID_SHARED`).
///
/// Under `CI=true` a missing directory fails the test loudly; elsewhere the test says plainly
/// that it did not run and returns `None`.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PLACID_SHARED").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("..").join("shared"));
    if dir.join("DESIGN.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{test}: the shared data directory {} is missing; CI must provide ../shared", dir.display());
    }
    eprintln!("{test}: NOT RUN: the shared data directory {} is missing", dir.display());
    None
}

/// Compiles the project in `dir` with every enabled target.
pub fn build(dir: &Path) -> placid_compiler::build::Build {
    let world = placid_compiler::world::FsWorld::new(dir).unwrap_or_else(|error| panic!("cannot open {}: {error}", dir.display()));
    placid_compiler::build::compile(&world, &placid_compiler::build::Selection { only: Vec::new() })
}

/// Compiles an example and panics with the rendered diagnostics if it has errors.
pub fn build_clean(name: &str) -> placid_compiler::build::Build {
    let build = build(&example(name));
    if build.diagnostics.has_errors() {
        panic!("example {name} does not compile:\n{}", placid_compiler::render::text(&build.sources, &build.diagnostics, false));
    }
    build
}

/// A real one-host Slurm for the live tests.
pub mod slurm;
/// Behaviour checks the live tests of every Slurm release share.
pub mod slurm_checks;
