//! The source table and the provider trait through which sources arrive.
//!
//! `lang` does no IO: the compiler implements [`World`] over the file system for `build`
//! and over git trees for `diff`, so both read a project through the same path.

use crate::codes::Code;
use crate::span::FileId;
use crate::units::Bytes;

/// The largest policy file placid reads (`placid.kdl`, included files, Slurm template
/// overrides): a hundred times any hand-written policy, and small enough that a file that
/// is not one (a log, a disk image named `.kdl`) fails at once instead of filling memory.
/// A file at the limit with an error on every line (about 110,000 diagnostics) is checked in
/// seconds and hundreds of MB (docs/limits.md); at 4 MiB it took 2 GB.
pub const MAX_POLICY_BYTES: u64 = 1 << 20;

/// The largest inventory file: about 20,000 probed nodes of 8 GPUs each in one file (a
/// merged inventory of a large cluster), which the JSON form reads in well under a second.
pub const MAX_INVENTORY_BYTES: u64 = 64 << 20;

/// A path relative to the project root, with `/` separators, that has been checked to stay
/// inside the root (no `..`, not absolute).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

impl RelPath {
    /// Checks and wraps a relative path. Returns why the path is refused otherwise.
    pub fn new(path: &str) -> Result<RelPath, &'static str> {
        if path.is_empty() {
            return Err("the path is empty");
        }
        if path.starts_with('/') || path.starts_with('\\') || path.contains(':') {
            return Err("absolute paths are not allowed");
        }
        if path.contains('\\') {
            return Err("use `/` as the path separator");
        }
        if path.contains('\0') || path.contains('\n') {
            return Err("the path contains a control character");
        }
        let mut parts = Vec::new();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err("`..` would leave the project root"),
                other => parts.push(other),
            }
        }
        if parts.is_empty() {
            return Err("the path names the project root itself");
        }
        Ok(RelPath(parts.join("/")))
    }

    /// The path as a `/`-separated string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The directory every match of a glob `pattern` lies in: its leading components up to the
/// first with glob syntax, the last component left out (`policy/**/*.kdl` -> `policy`,
/// `*.kdl` -> the root, ``). Worlds walk only this directory to expand the pattern.
pub fn glob_base(pattern: &str) -> &str {
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components[..components.len() - 1].iter().take_while(|part| !part.contains(['*', '?', '[', ']'])).count();
    let length: usize = components[..literal].iter().map(|part| part.len() + 1).sum();
    &pattern[..length.saturating_sub(1)]
}

/// Why a [`World`] could not provide a file or a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorldError {
    /// The code the problem is reported with: E010 (it leaves the project root), E011
    /// (unreadable), E018 (too large) or E019 (not a regular file).
    pub code: Code,
    /// A short, user-facing reason ("no such file", "symlink leaves the project root"). It
    /// never names a path outside the project root.
    pub reason: String,
}

impl WorldError {
    /// The file or listing cannot be read.
    pub fn unreadable(reason: impl Into<String>) -> WorldError {
        WorldError { code: Code::UnreadableSource, reason: reason.into() }
    }

    /// The path leads out of the project root (through a symlink, say).
    pub fn outside_root(reason: impl Into<String>) -> WorldError {
        WorldError { code: Code::IncludeOutsideRoot, reason: reason.into() }
    }

    /// The file is larger than `max_bytes`.
    pub fn too_large(max_bytes: u64) -> WorldError {
        WorldError { code: Code::FileTooLarge, reason: format!("it is larger than {}, the most placid reads of it", Bytes(max_bytes)) }
    }

    /// The path names something else than a regular file: `what` is "a FIFO", "a device"...
    pub fn not_regular(what: &str) -> WorldError {
        WorldError { code: Code::SpecialFile, reason: format!("it is {what}, not a regular file") }
    }
}

/// Where a project's sources come from.
pub trait World {
    /// Reads one file of the project, refusing one larger than `max_bytes` without reading
    /// more than that.
    fn read(&self, path: &RelPath, max_bytes: u64) -> Result<String, WorldError>;
    /// Lists the files matching a glob pattern (relative to the root), sorted. Implementations
    /// must not return paths that leave the project root, including through symlinks.
    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError>;
    /// Whether the file at `path` is itself a symbolic link (where a world can have them):
    /// template overrides are code, and one file must not stand in for another.
    fn is_symlink(&self, path: &RelPath) -> bool;
}

/// One loaded source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path relative to the project root.
    pub path: RelPath,
    /// The file's text.
    pub text: String,
    /// The byte offset of each line's start, made on first use: each diagnostic's line and
    /// column is then a binary search, not a scan from the file's start (which made a file
    /// full of errors cost quadratic time).
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

impl SourceFile {
    /// The byte offset at which each line (after each `\n`) starts; the first is 0.
    pub fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| std::iter::once(0).chain(self.text.match_indices('\n').map(|(at, _)| at + 1)).collect())
    }
}

/// Every source file read for one compilation, indexed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    /// An empty table.
    pub fn new() -> Sources {
        Sources::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, path: RelPath, text: String) -> FileId {
        self.files.push(SourceFile { path, text, line_starts: std::sync::OnceLock::new() });
        FileId(u32::try_from(self.files.len() - 1).unwrap_or(u32::MAX - 1))
    }

    /// The file with this id, if any.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// All files in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(index, file)| (FileId(index as u32), file))
    }

    /// A line index for rendering: 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, id: FileId, offset: u32) -> Option<(usize, usize)> {
        let file = self.get(id)?;
        let offset = (offset as usize).min(file.text.len());
        let starts = file.line_starts();
        let line = starts.partition_point(|start| *start <= offset);
        let line_start = starts.get(line.checked_sub(1)?).copied()?;
        let column = file.text.get(line_start..offset)?.chars().count() + 1;
        Some((line, column))
    }
}

/// A project held in memory: for tests, fuzzing and tools that assemble projects themselves.
#[derive(Clone, Debug, Default)]
pub struct MemoryWorld {
    files: std::collections::BTreeMap<String, String>,
}

impl MemoryWorld {
    /// An empty project.
    pub fn new() -> MemoryWorld {
        MemoryWorld::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&mut self, path: &str, text: impl Into<String>) {
        self.files.insert(path.to_owned(), text.into());
    }
}

impl World for MemoryWorld {
    fn read(&self, path: &RelPath, max_bytes: u64) -> Result<String, WorldError> {
        let text = self.files.get(path.as_str()).ok_or_else(|| WorldError::unreadable("no such file"))?;
        if text.len() as u64 > max_bytes {
            return Err(WorldError::too_large(max_bytes));
        }
        Ok(text.clone())
    }

    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError> {
        let pattern = glob::Pattern::new(pattern).map_err(|error| WorldError::unreadable(format!("invalid pattern: {error}")))?;
        let options = glob::MatchOptions { require_literal_separator: true, ..glob::MatchOptions::new() };
        Ok(self.files.keys().filter(|path| pattern.matches_with(path, options)).filter_map(|path| RelPath::new(path).ok()).collect())
    }

    fn is_symlink(&self, _path: &RelPath) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_glob_base_is_the_literal_directory() {
        assert_eq!(glob_base("policy/**/*.kdl"), "policy");
        assert_eq!(glob_base("inventory/racks/*.json"), "inventory/racks");
        assert_eq!(glob_base("*.kdl"), "");
        assert_eq!(glob_base("placid.kdl"), "");
        assert_eq!(glob_base("a/b/c.kdl"), "a/b");
        assert_eq!(glob_base("a/[bc]/d.kdl"), "a");
    }

    #[test]
    fn a_memory_file_past_the_limit_is_too_large() {
        let mut world = MemoryWorld::new();
        world.insert("big.kdl", "x".repeat(11));
        let path = RelPath::new("big.kdl").unwrap_or_else(|reason| panic!("{reason}"));
        assert_eq!(world.read(&path, 10).map_err(|error| error.code), Err(Code::FileTooLarge));
        assert_eq!(world.read(&path, 11).map(|text| text.len()), Ok(11));
    }
}
