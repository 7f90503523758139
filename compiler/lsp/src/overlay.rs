//! The world the server checks a project through: the project directory on disk
//! (`placid_driver::world::FsWorld`, with its confinement and size limits), with the text of
//! the documents open in the editor laid over it, so diagnostics follow the buffer as it is
//! typed and not the file last saved.

use std::collections::BTreeMap;

use placid_driver::world::FsWorld;
use placid_lang::source::{RelPath, World, WorldError};

/// A project directory with open documents over it.
pub struct Overlay<'a> {
    /// The files on disk.
    pub disk: &'a FsWorld,
    /// Open documents by their path in the project, whose text wins over the disk's.
    pub open: &'a BTreeMap<RelPath, String>,
}

impl World for Overlay<'_> {
    fn read(&self, path: &RelPath, max_bytes: u64) -> Result<String, WorldError> {
        match self.open.get(path) {
            Some(text) if text.len() as u64 > max_bytes => Err(WorldError::too_large(max_bytes)),
            Some(text) => Ok(text.clone()),
            None => self.disk.read(path, max_bytes),
        }
    }

    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError> {
        // A document only open in the editor (a new file, not saved yet) is no file of the
        // project yet; the globs list what is on disk, as `placid check` would.
        self.disk.glob(pattern)
    }

    fn is_symlink(&self, path: &RelPath) -> bool {
        self.disk.is_symlink(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_document_wins_over_the_disk() {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(dir.path().join("a.kdl"), "disk").unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(dir.path().join("b.kdl"), "disk b").unwrap_or_else(|error| panic!("{error}"));
        let disk = FsWorld::new(dir.path()).unwrap_or_else(|error| panic!("{error}"));
        let path = |text: &str| RelPath::new(text).unwrap_or_else(|reason| panic!("{reason}"));
        let open = BTreeMap::from([(path("a.kdl"), "buffer".to_owned())]);
        let world = Overlay { disk: &disk, open: &open };
        assert_eq!(world.read(&path("a.kdl"), 100).as_deref(), Ok("buffer"));
        assert_eq!(world.read(&path("b.kdl"), 100).as_deref(), Ok("disk b"));
        assert_eq!(world.read(&path("a.kdl"), 3).map_err(|error| error.code), Err(placid_lang::codes::Code::FileTooLarge));
    }
}
