//! A project seen through an overlay: a directory of files that replace or add to the same
//! paths of a project, as a broken example (`policy-examples/<example>/broken/<E0NN-name>/`)
//! holds only the files that differ from its example. `placid check --overlay DIR` reads the
//! project this way, so a broken example runs as it stands in the repository.

use placid_lang::source::{RelPath, World, WorldError};

use crate::world::FsWorld;

/// `base` with the files of `overlay` laid over it.
pub struct OverlayWorld {
    base: FsWorld,
    overlay: FsWorld,
}

impl OverlayWorld {
    /// The project `base` with `overlay`'s files in place of its own.
    pub fn new(base: FsWorld, overlay: FsWorld) -> OverlayWorld {
        OverlayWorld { base, overlay }
    }

    /// Whether `path` is one of the overlay's files, which then stands for the project's.
    fn overlaid(&self, path: &RelPath) -> bool {
        self.overlay.canonical_root().join(path.as_str()).is_file() || self.overlay.is_symlink(path)
    }
}

impl World for OverlayWorld {
    fn read(&self, path: &RelPath, max_bytes: u64) -> Result<String, WorldError> {
        if self.overlaid(path) { self.overlay.read(path, max_bytes) } else { self.base.read(path, max_bytes) }
    }

    /// The project's matches and the overlay's, each path once.
    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError> {
        let mut paths = self.base.glob(pattern)?;
        paths.extend(self.overlay.glob(pattern)?);
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    fn is_symlink(&self, path: &RelPath) -> bool {
        if self.overlaid(path) { self.overlay.is_symlink(path) } else { self.base.is_symlink(path) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlay_replaces_and_adds_files() {
        let (base, overlay) = (tempfile::tempdir().expect("temp dir"), tempfile::tempdir().expect("temp dir"));
        for (root, path, text) in
            [(&base, "a.kdl", "base a"), (&base, "p/b.kdl", "base b"), (&overlay, "p/b.kdl", "over b"), (&overlay, "p/c.kdl", "over c")]
        {
            let file = root.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("dir");
            std::fs::write(file, text).expect("write");
        }
        let world = OverlayWorld::new(FsWorld::new(base.path()).expect("base"), FsWorld::new(overlay.path()).expect("overlay"));
        let read = |path: &str| world.read(&RelPath::new(path).expect("path"), 100).expect("read");
        assert_eq!((read("a.kdl"), read("p/b.kdl"), read("p/c.kdl")), ("base a".to_owned(), "over b".to_owned(), "over c".to_owned()));
        let listed: Vec<String> = world.glob("p/*.kdl").expect("glob").iter().map(ToString::to_string).collect();
        assert_eq!(listed, ["p/b.kdl", "p/c.kdl"]);
    }
}
