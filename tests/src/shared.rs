//! Locating `../shared` (schemas, riscv64 captures), std-only so that the probe's tests can
//! include this file by path: the probe may not depend on this compiler-based test crate.

use std::path::{Path, PathBuf};

/// The shared data directory (`../shared` beside the workspace, or `$PLACID_SHARED`).
///
/// Under `CI=true` a missing directory fails the test loudly; elsewhere the test says plainly
/// that it did not run and returns `None`.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    // Both crates that use this sit one level below the workspace root.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = std::env::var_os("PLACID_SHARED").map(PathBuf::from).unwrap_or_else(|| workspace.join("..").join("shared"));
    if dir.join("DESIGN.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{test}: the shared data directory {} is missing; CI must provide ../shared", dir.display());
    }
    eprintln!("{test}: NOT RUN: the shared data directory {} is missing", dir.display());
    None
}
