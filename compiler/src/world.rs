//! The file-system [`World`]: a project directory, with every path confined to it. Globs are
//! matched inside the root, and a file whose real path (after symlinks) leaves the root is
//! refused, so includes cannot read `/etc/passwd` through a link.

use std::path::{Path, PathBuf};

use placid_lang::source::{RelPath, World, WorldError};

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
        let real = full.canonicalize().map_err(|error| WorldError { reason: error.to_string() })?;
        if !real.starts_with(&self.canonical_root) {
            return Err(WorldError { reason: "it is a symlink that leaves the project root".into() });
        }
        Ok(real)
    }
}

impl World for FsWorld {
    fn read(&self, path: &RelPath) -> Result<String, WorldError> {
        let real = self.confined(path)?;
        std::fs::read_to_string(real).map_err(|error| WorldError { reason: error.to_string() })
    }

    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError> {
        let relative = RelPath::new(pattern).map_err(|reason| WorldError { reason: reason.into() })?;
        let escaped_root = glob::Pattern::escape(&self.canonical_root.to_string_lossy());
        let full_pattern = format!("{escaped_root}/{}", relative.as_str());
        let entries = glob::glob(&full_pattern).map_err(|error| WorldError { reason: format!("invalid pattern: {error}") })?;
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(|error| WorldError { reason: error.to_string() })?;
            if path.is_dir() {
                continue;
            }
            let Ok(inside) = path.strip_prefix(&self.canonical_root) else {
                continue;
            };
            let text = inside.to_string_lossy().replace('\\', "/");
            let relative = RelPath::new(&text).map_err(|reason| WorldError { reason: reason.into() })?;
            self.confined(&relative)?;
            paths.push(relative);
        }
        paths.sort();
        Ok(paths)
    }
}
