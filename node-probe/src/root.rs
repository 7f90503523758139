//! The file-system root the probe reads `/proc` and `/sys` below: `/` on a live node, a
//! captured tree with `--root DIR`. Every read goes through here, is bounded in size and
//! decodes bytes lossily, so a huge or binary file cannot hang or crash the probe.
//!
//! A captured tree is untrusted: a symbolic link in it must not make the probe read the host
//! (a `board_name` linked to `/etc/shadow` would end up in the inventory as a board label).
//! So every path is resolved one component at a time below the root, the way
//! `openat2(RESOLVE_IN_ROOT)` does: an absolute link target starts again at the root, and a
//! `..` that would climb above the root is refused. Only regular files are opened, and
//! without blocking, so a FIFO or a device under a captured name cannot hang the probe or
//! feed it without end.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

/// Largest file read; real /proc and /sys files are a few KiB.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// Symbolic links followed while resolving one path, as Linux's own limit (`ELOOP`).
const MAX_LINKS: usize = 40;

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

    /// Where `path` (as the kernel names it) lies on disk, every link resolved inside the root.
    fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        // Resolved components below the root, and what is left to walk.
        let mut resolved: Vec<OsString> = Vec::new();
        let mut pending: VecDeque<OsString> = components(Path::new(path)).collect();
        let mut links = 0;
        while let Some(name) = pending.pop_front() {
            if name == ".." {
                if resolved.pop().is_none() {
                    return Err("the path leaves the probe's root".to_owned());
                }
                continue;
            }
            let candidate = self.dir.join(resolved.iter().collect::<PathBuf>()).join(&name);
            match std::fs::symlink_metadata(&candidate) {
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err("too many levels of symbolic links".to_owned());
                    }
                    let target = std::fs::read_link(&candidate).map_err(|io| io.to_string())?;
                    if target.is_absolute() {
                        resolved.clear();
                    }
                    for (index, part) in components(&target).enumerate() {
                        pending.insert(index, part);
                    }
                }
                // A missing component is left for the open to report as not found.
                _ => resolved.push(name),
            }
        }
        Ok(self.dir.join(resolved.iter().collect::<PathBuf>()))
    }

    /// Reads a text file, at most [`MAX_FILE_BYTES`], invalid UTF-8 replaced.
    pub fn read(&self, path: &str) -> Result<String, ReadError> {
        let error = |reason: String, not_found: bool| ReadError { path: path.to_owned(), reason, not_found };
        let full = self.resolve(path).map_err(|reason| error(reason, false))?;
        let file = open_regular(&full).map_err(|io| error(io.to_string(), io.kind() == std::io::ErrorKind::NotFound))?;
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

    /// The names of the entries of a directory, sorted; empty when it does not exist or
    /// cannot be resolved inside the root.
    pub fn list(&self, path: &str) -> Vec<String> {
        let Ok(full) = self.resolve(path) else { return Vec::new() };
        let mut names: Vec<String> = std::fs::read_dir(full)
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// The named components of `path`: the root and `.` dropped, `..` kept for the walk.
fn components(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|component| match component {
        Component::Normal(name) => Some(name.to_owned()),
        Component::ParentDir => Some(OsString::from("..")),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    })
}

/// Opens `path` if it is a regular file. The open neither follows a link that replaced the
/// resolved file meanwhile nor blocks on a FIFO; the type is checked on the open handle.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn tree() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys/class/dmi/id")).unwrap();
        std::fs::create_dir_all(dir.path().join("sys/devices/virtual/dmi/id")).unwrap();
        std::fs::write(dir.path().join("sys/devices/virtual/dmi/id/board_name"), "inside\n").unwrap();
        let root = Root::new(dir.path());
        (dir, root)
    }

    #[test]
    fn an_absolute_link_resolves_inside_the_root_not_on_the_host() {
        let (dir, root) = tree();
        // On the host this file exists and is readable by root; inside the capture it does not.
        symlink("/etc/hostname", dir.path().join("sys/class/dmi/id/board_name")).unwrap();
        let error = root.read("/sys/class/dmi/id/board_name").unwrap_err();
        assert!(error.not_found, "{error:?}");
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("etc/hostname"), "captured\n").unwrap();
        assert_eq!(root.read("/sys/class/dmi/id/board_name").unwrap(), "captured\n");
    }

    #[test]
    fn a_relative_link_inside_the_root_is_followed() {
        let (dir, root) = tree();
        symlink("../../../devices/virtual/dmi/id/board_name", dir.path().join("sys/class/dmi/id/board_name")).unwrap();
        assert_eq!(root.read("/sys/class/dmi/id/board_name").unwrap(), "inside\n");
    }

    #[test]
    fn a_link_climbing_out_of_the_root_is_refused() {
        let (dir, root) = tree();
        // Four steps up from `sys/class/dmi/id` is the root; the fifth would leave it.
        symlink("../../../../../etc/hostname", dir.path().join("sys/class/dmi/id/board_name")).unwrap();
        let error = root.read("/sys/class/dmi/id/board_name").unwrap_err();
        assert!(error.reason.contains("leaves the probe's root"), "{error:?}");
        assert!(root.read("/../../etc/hostname").is_err());
    }

    #[test]
    fn link_loops_end() {
        let (dir, root) = tree();
        symlink("b", dir.path().join("sys/a")).unwrap();
        symlink("a", dir.path().join("sys/b")).unwrap();
        let error = root.read("/sys/a").unwrap_err();
        assert!(error.reason.contains("symbolic links"), "{error:?}");
    }

    #[test]
    fn special_files_are_not_opened() {
        let (dir, root) = tree();
        let fifo = dir.path().join("sys/class/dmi/id/product_name");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // A FIFO with no writer would block a plain open forever.
        let error = root.read("/sys/class/dmi/id/product_name").unwrap_err();
        assert!(error.reason.contains("not a regular file"), "{error:?}");
        let error = Root::new(Path::new("/")).read("/dev/zero").unwrap_err();
        assert!(error.reason.contains("not a regular file"), "{error:?}");
    }

    #[test]
    fn directories_are_listed_through_links_inside_the_root() {
        let (dir, root) = tree();
        symlink("/sys/devices/virtual/dmi/id", dir.path().join("sys/dmi")).unwrap();
        assert_eq!(root.list("/sys/dmi"), ["board_name"]);
        symlink("/", dir.path().join("sys/host")).unwrap();
        assert_eq!(root.list("/sys/host"), ["sys"], "`/` in a capture is the capture's root");
    }
}
