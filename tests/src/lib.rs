//! Support for placid's end-to-end tests: locating `../shared` (schemas, fixtures), the
//! examples, and compiling a project in memory.

pub mod crd;
pub mod effects;
pub mod git;
pub mod golden;
pub mod prometheus;
mod shared;
pub mod synthetic;

use std::path::{Path, PathBuf};

use placid_lang::checked::Checked;
use placid_lang::model::Model;

pub use shared::shared_dir;

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

/// Copies the tree `from` into `to` (created as needed; existing files are overwritten, so a
/// variant can be laid over an example), leaving out the top-level entries named in `skip`.
pub fn copy_tree(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap_or_else(|error| panic!("cannot create {}: {error}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|error| panic!("cannot read {}: {error}", from.display())).filter_map(Result::ok) {
        if skip.iter().any(|name| entry.file_name() == *name) {
            continue;
        }
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        if path.is_dir() {
            copy_tree(&path, &target, &[]);
        } else {
            std::fs::copy(&path, &target).unwrap_or_else(|error| panic!("cannot copy {}: {error}", path.display()));
        }
    }
}

/// Compiles the project in `dir` with every enabled target.
pub fn build(dir: &Path) -> placid_driver::build::Build {
    let world = placid_driver::world::FsWorld::new(dir).unwrap_or_else(|error| panic!("cannot open {}: {error}", dir.display()));
    placid_driver::build::compile(&world, &placid_driver::build::Selection { only: Vec::new() })
}

/// Compiles an example and panics with the rendered diagnostics if it has errors.
pub fn build_clean(name: &str) -> placid_driver::build::Clean {
    build(&example(name)).clean().unwrap_or_else(|build| {
        panic!("example {name} does not compile:\n{}", placid_driver::render::text(&build.sources, &build.diagnostics, false))
    })
}

/// A model a test changed, through the checks again (targets take only checked models);
/// panics if the change made it invalid.
pub fn checked(model: Model) -> Checked {
    let (verdict, diagnostics) = placid_check::check(model, placid_lang::diag::Diagnostics::new());
    verdict.into_checked().unwrap_or_else(|| panic!("the changed model does not check: {diagnostics:?}"))
}

/// A real one-host Slurm for the live tests.
pub mod slurm;
/// Behaviour checks the live tests of every Slurm release share.
pub mod slurm_checks;

pub mod conformance;
