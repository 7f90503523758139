//! What the tidy tests share: the workspace root and its Rust sources. The tests themselves
//! (`tests/edges.rs`, `tests/tidy.rs`) read files and `cargo metadata`; this crate depends on
//! no placid crate, so it builds in seconds and a rule breaks the build of nothing else.

pub mod links;
pub mod modules;
pub mod registry;

use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file of the workspace's crates and the fuzz targets, relative to the root,
/// sorted; build output is skipped.
pub fn rust_files() -> Vec<PathBuf> {
    files_with_extension(&["lang", "targets", "compiler", "node-probe", "tests", "fuzz"], "rs")
}

/// Every file ending in `.extension` under the folders `dirs` of the root, relative to the
/// root, sorted; build output is skipped.
pub fn files_with_extension(dirs: &[&str], extension: &str) -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|dir| root.join(dir)).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if entry.file_name() != "target" {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == extension) {
                files.push(path.strip_prefix(&root).map(Path::to_path_buf).unwrap_or(path));
            }
        }
    }
    files.sort();
    files
}

/// The part of a source file that is library code: everything before its first
/// `#[cfg(test)]` (test modules close placid's files), and nothing of a file that is itself
/// a test (`tests.rs`, or under a `tests/`, `benches/` or `examples/` folder).
pub fn library_code<'a>(path: &Path, text: &'a str) -> &'a str {
    let is_test = path.file_name().is_some_and(|name| name == "tests.rs")
        || path.components().any(|part| matches!(part.as_os_str().to_str(), Some("tests" | "benches" | "examples" | "fuzz_targets")));
    if is_test {
        return "";
    }
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// Every Markdown file of the repository (the README, docs/, the examples' and crates'
/// READMEs), relative to the root, sorted; build output and git's files are skipped.
pub fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && !name.to_string_lossy().starts_with('.') {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path.strip_prefix(&root).map(Path::to_path_buf).unwrap_or(path));
            }
        }
    }
    files.sort();
    files
}
