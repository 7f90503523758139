//! The file-system [`World`]: a project directory, with every path confined to it. Globs are
//! matched by walking the root without following directory symlinks, so a link back up
//! (`ln -s . policy/l1`) cannot loop; a file whose real path (after symlinks) leaves the root
//! is refused, so includes cannot read `/etc/passwd` through a link; and only regular files
//! are read, up to a size limit, so a FIFO cannot block placid and `/dev/zero` cannot fill
//! its memory. Reasons never name a path outside the root.

use std::path::{Path, PathBuf};

use placid_lang::source::{RelPath, World, WorldError, glob_base};

/// A project on disk.
pub struct FsWorld {
    root: PathBuf,
    canonical_root: PathBuf,
}

impl FsWorld {
    /// A world rooted at `root` (the directory holding placid.kdl).
    pub fn new(root: &Path) -> std::io::Result<FsWorld> {
        let canonical_root = root.canonicalize()?;
        Ok(FsWorld { root: root.to_path_buf(), canonical_root })
    }

    /// The project root as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project root with symlinks resolved, as every source path is confined to.
    pub fn canonical_root(&self) -> &Path {
        &self.canonical_root
    }

    fn confined(&self, path: &RelPath) -> Result<PathBuf, WorldError> {
        let full = self.canonical_root.join(path.as_str());
        let real = full.canonicalize().map_err(|error| WorldError::unreadable(error.to_string()))?;
        if !real.starts_with(&self.canonical_root) {
            return Err(WorldError::outside_root("it is a symlink that leaves the project root"));
        }
        Ok(real)
    }

    /// `path` (under the canonical root) as a path relative to the root.
    fn relative(&self, path: &Path) -> Option<String> {
        path.strip_prefix(&self.canonical_root).ok().map(|inside| inside.to_string_lossy().replace('\\', "/"))
    }
}

impl World for FsWorld {
    fn read(&self, path: &RelPath, max_bytes: u64) -> Result<String, WorldError> {
        read_regular(&self.confined(path)?, max_bytes)
    }

    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError> {
        let relative = RelPath::new(pattern).map_err(WorldError::unreadable)?;
        let matcher = glob::Pattern::new(relative.as_str()).map_err(|error| WorldError::unreadable(format!("invalid pattern: {error}")))?;
        // `*` must not cross `/`, as in every world.
        let options = glob::MatchOptions { case_sensitive: true, require_literal_separator: true, require_literal_leading_dot: false };
        // Walk only the directory that holds every match, and only as deep as a match can be.
        let base = glob_base(relative.as_str());
        let below = &relative.as_str()[base.len()..];
        let mut walk = walkdir::WalkDir::new(self.canonical_root.join(base)).min_depth(1).follow_links(false);
        if !below.contains("**") {
            walk = walk.max_depth(below.matches('/').count().max(1));
        }
        let mut paths = Vec::new();
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                // The directory that holds every match does not exist: nothing matches.
                Err(error) if error.depth() == 0 => break,
                Err(error) => {
                    let place = error.path().and_then(|path| self.relative(path)).unwrap_or_default();
                    let reason = error.io_error().map_or_else(|| "cannot be listed".to_owned(), ToString::to_string);
                    return Err(WorldError::unreadable(format!("`{place}`: {reason}")));
                }
            };
            let Some(text) = self.relative(entry.path()) else { continue };
            if entry.file_type().is_dir() || !matcher.matches_with(&text, options) {
                continue;
            }
            // A link to a directory is not a file and is not walked into; a link to a file is
            // read through, if it stays inside the root.
            if entry.path_is_symlink() && std::fs::metadata(entry.path()).is_ok_and(|metadata| metadata.is_dir()) {
                continue;
            }
            let relative = RelPath::new(&text).map_err(WorldError::unreadable)?;
            self.confined(&relative).map_err(|error| WorldError { reason: format!("`{relative}`: {}", error.reason), ..error })?;
            paths.push(relative);
        }
        paths.sort();
        Ok(paths)
    }

    fn is_symlink(&self, path: &RelPath) -> bool {
        std::fs::symlink_metadata(self.canonical_root.join(path.as_str())).is_ok_and(|metadata| metadata.file_type().is_symlink())
    }
}

/// Reads the regular file at `path` as UTF-8 text through [`crate::untrusted::read`]: anything
/// but a regular file is refused before reading from it, and a file larger than `max_bytes`
/// without reading more than one byte past the limit.
pub fn read_regular(path: &Path, max_bytes: u64) -> Result<String, WorldError> {
    let bytes = crate::untrusted::read(path, max_bytes)?;
    String::from_utf8(bytes).map_err(|_| WorldError::unreadable("the file is not UTF-8 text"))
}
