//! The file-system root the probe reads `/proc` and `/sys` below: `/` on a live node, a
//! captured tree with `--root DIR`. Every read goes through here, is bounded in size and
//! decodes bytes lossily, so a huge or binary file cannot hang or crash the probe.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Largest file read; real /proc and /sys files are a few KiB.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// Where `/proc` and `/sys` are.
#[derive(Clone, Debug)]
pub struct Root {
    dir: PathBuf,
}

/// Why a file could not be read, worded for a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The path as the kernel names it (`/proc/cpuinfo`), not the captured location.
    pub path: String,
    /// What went wrong.
    pub reason: String,
    /// Whether the file simply does not exist (often normal: DMI on a devicetree board).
    pub not_found: bool,
}

impl Root {
    /// A root at `dir`.
    pub fn new(dir: &Path) -> Root {
        Root { dir: dir.to_path_buf() }
    }

    /// Whether this is the live system (`/`), where the host's own facts may be consulted.
    pub fn is_live(&self) -> bool {
        self.dir == Path::new("/")
    }

    fn full(&self, path: &str) -> PathBuf {
        self.dir.join(path.trim_start_matches('/'))
    }

    /// Reads a text file, at most [`MAX_FILE_BYTES`], invalid UTF-8 replaced.
    pub fn read(&self, path: &str) -> Result<String, ReadError> {
        let error = |reason: String, not_found: bool| ReadError { path: path.to_owned(), reason, not_found };
        let file = std::fs::File::open(self.full(path)).map_err(|io| error(io.to_string(), io.kind() == std::io::ErrorKind::NotFound))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).map_err(|io| error(io.to_string(), false))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Reads a file when it exists; `Ok(None)` when it does not.
    pub fn read_optional(&self, path: &str) -> Result<Option<String>, ReadError> {
        match self.read(path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.not_found => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The names of the entries of a directory, sorted; empty when it does not exist.
    pub fn list(&self, path: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.full(path))
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}
