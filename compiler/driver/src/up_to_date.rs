//! A rebuild whose tree is already in place writes nothing: when the output directory holds
//! exactly the tree this build would write, it is left as it is (the same inodes, the same
//! directory), with no staging tree, no links, no exchange and no removal.
//!
//! Why: rebuilding an unchanged project is the common case (CI, watch loops, benchmarks), and
//! replacing even an unchanged tree costs a few file-system calls per file and directory
//! twice over (link into the staging tree, unlink from the previous one), where comparing it
//! costs an open, a stat and a read per file.
//!
//! Invariant: the tree is left only where `write_atomically`'s full path (with unchanged.rs's
//! links) would leave the same one, byte for byte and mode for mode:
//! - every directory holds exactly the entries the build writes (anything the user added, of
//!   any kind, means "not up to date") and each is a directory owned by this user and group,
//!   with the mode a new directory gets and no extended attribute but security labels (the
//!   full path creates every directory anew, so no ACL survives it);
//! - every file is a regular file owned by this user and group with one link, the mode a new
//!   file gets and the build's bytes (what unchanged.rs links); the first artifact also has no
//!   extended attribute but security labels, as the full path creates it anew;
//! - new files and directories get those modes only when the output's parent has no default
//!   ACL: with one, the full path runs; and where the full path could not create its staging
//!   tree (the parent is not writable), it runs and fails as before.
//!
//! Nothing is followed below the output: each entry is opened relative to its directory's
//! descriptor with `O_NOFOLLOW`, a file only once `getdents` (or `fstatat`) said it is a
//! regular file, so no device is opened, and with `O_NONBLOCK`, so a pipe swapped in since
//! cannot block. Any doubt or error means "not up to date": this is a shortcut, never a
//! different result.

use std::path::Path;

use placid_targets::Artifact;

/// Whether the existing directory `out` already holds exactly the tree of `artifacts`
/// (sorted by path, as a build makes them), so that writing them through a staging tree in
/// `parent` (the directory holding `out`) would change nothing.
pub fn holds_exactly(out: &Path, parent: &Path, artifacts: &[Artifact]) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::holds_exactly(out, parent, artifacts).unwrap_or(false)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (out, parent, artifacts);
        false
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};

    use placid_targets::Artifact;
    use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
    use rustix::fs::{Access, AtFlags, CWD, Dir, FileType, Mode, OFlags, Stat};
    use rustix::io::Errno;

    /// One directory of the tree the build writes: its entries by name.
    type Entries<'a> = BTreeMap<&'a str, Entry<'a>>;

    /// An entry of a directory the build writes.
    #[derive(Clone, Copy)]
    enum Entry<'a> {
        /// The artifact at this index.
        File(usize),
        /// The directory at this path (its key in the tree).
        Directory(&'a str),
    }

    /// Who owns what the build creates and which modes it gets.
    struct Owner {
        uid: u32,
        gid: u32,
        file_mode: u32,
        directory_mode: u32,
    }

    /// A file to compare: its directory (an index into the opened ones), its name, its artifact.
    type Job<'a> = (usize, &'a str, usize);

    /// [`super::holds_exactly`]; `None` where it cannot tell.
    pub fn holds_exactly(out: &Path, parent: &Path, artifacts: &[Artifact]) -> Option<bool> {
        let tree = tree(artifacts)?;
        if !new_entries_get_plain_modes(parent) {
            return Some(false);
        }
        let owner = owner()?;
        // Rebuilt from its components, `out/` loses the slash that would make O_NOFOLLOW follow a link.
        let out: PathBuf = out.components().collect();
        let root = rustix::fs::open(&out, directory_flags(), Mode::empty()).ok()?;
        let mut walk = Walk { tree: &tree, owner: &owner, directories: Vec::new(), jobs: Vec::new() };
        if !walk.directory(root, "")? {
            return Some(false);
        }
        Some(walk.files_hold(artifacts))
    }

    /// The directories and files of `artifacts`, by directory path (`""` for the root); `None`
    /// for a path that is no plain relative one, or one that is both a file and a directory.
    fn tree(artifacts: &[Artifact]) -> Option<BTreeMap<&str, Entries<'_>>> {
        let mut tree: BTreeMap<&str, Entries> = BTreeMap::from([("", Entries::new())]);
        for (index, artifact) in artifacts.iter().enumerate() {
            let path = artifact.path.as_str();
            let (mut parent, mut start) = ("", 0);
            for (slash, _) in path.match_indices('/') {
                let name = plain(&path[start..slash])?;
                let directory = &path[..slash];
                match tree.entry(parent).or_default().insert(name, Entry::Directory(directory)) {
                    None | Some(Entry::Directory(_)) => {}
                    Some(Entry::File(_)) => return None,
                }
                (parent, start) = (directory, slash + 1);
            }
            let name = plain(&path[start..])?;
            if tree.entry(parent).or_default().insert(name, Entry::File(index)).is_some() {
                return None;
            }
        }
        Some(tree)
    }

    /// `name` when it names an entry of its directory: not empty, `.` or `..`.
    fn plain(name: &str) -> Option<&str> {
        (!name.is_empty() && name != "." && name != ".." && !name.contains('\0')).then_some(name)
    }

    /// Whether the full path could create its staging tree in `parent`, and what it creates
    /// there gets its mode from the umask alone (no default ACL).
    fn new_entries_get_plain_modes(parent: &Path) -> bool {
        rustix::fs::accessat(CWD, parent, Access::WRITE_OK | Access::EXEC_OK, AtFlags::EACCESS).is_ok()
            && matches!(rustix::fs::getxattr(parent, "system.posix_acl_default", &mut [0u8; 0][..]), Err(Errno::NODATA | Errno::NOTSUP))
    }

    /// This process's user and group, and the modes its new files and directories get: the
    /// umask (read from /proc, as setting it to read it would race with other threads) applied
    /// to what `std::fs` asks for.
    fn owner() -> Option<Owner> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let umask = status.lines().find_map(|line| line.strip_prefix("Umask:"))?;
        let umask = u32::from_str_radix(umask.trim(), 8).ok()?;
        Some(Owner {
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
            file_mode: 0o666 & !umask,
            directory_mode: 0o777 & !umask,
        })
    }

    fn directory_flags() -> OFlags {
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
    }

    /// The tree under comparison: the directories opened so far and the files left to compare.
    struct Walk<'t, 'a> {
        tree: &'t BTreeMap<&'a str, Entries<'a>>,
        owner: &'t Owner,
        directories: Vec<Dir>,
        jobs: Vec<Job<'a>>,
    }

    impl<'a> Walk<'_, 'a> {
        /// Whether the directory open as `fd`, the tree's `path`, is one the build would create
        /// and holds exactly its entries; its files are queued, its directories walked.
        fn directory(&mut self, fd: OwnedFd, path: &'a str) -> Option<bool> {
            let stat = rustix::fs::fstat(&fd).ok()?;
            if !self.is_new_directory(&stat) || !has_no_attributes(&fd)? {
                return Some(false);
            }
            let expected = self.tree.get(path)?;
            let mut dir = Dir::new(fd).ok()?;
            let index = self.directories.len();
            let mut found = 0;
            let mut subdirectories = Vec::new();
            while let Some(entry) = dir.read() {
                let entry = entry.ok()?;
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                let Some((&name, &kind)) = std::str::from_utf8(name).ok().and_then(|name| expected.get_key_value(name)) else {
                    return Some(false);
                };
                let file_type = match entry.file_type() {
                    FileType::Unknown => rustix::fs::statat(dir.fd().ok()?, name, AtFlags::SYMLINK_NOFOLLOW).ok()?.st_mode,
                    known => known.as_raw_mode(),
                };
                match (kind, FileType::from_raw_mode(file_type)) {
                    (Entry::File(artifact), FileType::RegularFile) => self.jobs.push((index, name, artifact)),
                    (Entry::Directory(subdirectory), FileType::Directory) => subdirectories.push((name, subdirectory)),
                    _ => return Some(false),
                }
                found += 1;
            }
            // Every name found is an expected one, and names are unique: as many means all.
            if found != expected.len() {
                return Some(false);
            }
            self.directories.push(dir);
            for (name, subdirectory) in subdirectories {
                let fd = rustix::fs::openat(self.directories[index].fd().ok()?, name, directory_flags(), Mode::empty()).ok()?;
                if !self.directory(fd, subdirectory)? {
                    return Some(false);
                }
            }
            Some(true)
        }

        fn is_new_directory(&self, stat: &Stat) -> bool {
            FileType::from_raw_mode(stat.st_mode) == FileType::Directory
                && stat.st_uid == self.owner.uid
                && stat.st_gid == self.owner.gid
                && stat.st_mode & 0o7777 == self.owner.directory_mode
        }

        /// Whether every queued file holds its artifact's bytes, compared on two threads: the
        /// opens and reads of a large tree are most of the comparison, and overlap.
        fn files_hold(&self, artifacts: &[Artifact]) -> bool {
            let differs = AtomicBool::new(false);
            let compare = |jobs: &[Job]| {
                let mut buffer = Vec::new();
                for &(directory, name, artifact) in jobs {
                    if differs.load(Ordering::Relaxed) {
                        return;
                    }
                    let holds = self.directories[directory]
                        .fd()
                        .ok()
                        .and_then(|dir| self.file_holds(dir, name, artifact, &artifacts[artifact].bytes, &mut buffer));
                    if holds != Some(true) {
                        differs.store(true, Ordering::Relaxed);
                    }
                }
            };
            let (first, second) = self.jobs.split_at(self.jobs.len() / 2);
            std::thread::scope(|scope| {
                let helper = scope.spawn(|| compare(second));
                compare(first);
                if helper.join().is_err() {
                    differs.store(true, Ordering::Relaxed);
                }
            });
            !differs.load(Ordering::Relaxed)
        }

        /// Whether `name` in `dir` is a file the full path would keep as it is, holding `bytes`.
        fn file_holds(&self, dir: BorrowedFd, name: &str, artifact: usize, bytes: &[u8], buffer: &mut Vec<u8>) -> Option<bool> {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
            let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?;
            let stat = rustix::fs::fstat(&fd).ok()?;
            let same_shape = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
                && stat.st_nlink == 1
                && stat.st_uid == self.owner.uid
                && stat.st_gid == self.owner.gid
                && stat.st_mode & 0o7777 == self.owner.file_mode
                && u64::try_from(stat.st_size).is_ok_and(|size| size == bytes.len() as u64);
            // The full path writes the first artifact anew, with no attributes of the old one.
            if !same_shape || (artifact == 0 && !has_no_attributes(&fd)?) {
                return Some(false);
            }
            // One read of one byte more than expected, as in unchanged.rs: a file that grew
            // since the fstat reads longer and does not compare equal.
            buffer.clear();
            buffer.reserve(bytes.len() + 1);
            rustix::io::read(&fd, rustix::buffer::spare_capacity(buffer)).ok()?;
            Some(buffer[..] == *bytes)
        }
    }

    /// Whether `fd` carries no extended attribute but security labels, which the system, not
    /// the build, gives every new file (an ACL, or a user's attribute, would not survive the
    /// full path, which creates the entry anew).
    fn has_no_attributes(fd: impl AsFd) -> Option<bool> {
        let mut names = [0u8; 256];
        match rustix::fs::flistxattr(fd, &mut names[..]) {
            Ok(length) => Some(names[..length].split(|byte| *byte == 0).all(|name| name.is_empty() || name.starts_with(b"security."))),
            Err(Errno::NOTSUP) => Some(true),
            Err(_) => Some(false),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Paths a tree of entries cannot hold are never "up to date": the full path decides.
        #[test]
        fn only_plain_distinct_paths_make_a_tree() {
            let artifacts = |paths: &[&str]| paths.iter().map(|path| Artifact::text(*path, "")).collect::<Vec<_>>();
            let plain = artifacts(&["a/b/c", "a/d", "e"]);
            let tree = tree(&plain).expect("a tree");
            assert_eq!(tree.keys().copied().collect::<Vec<_>>(), ["", "a", "a/b"]);
            assert_eq!(tree[""].keys().copied().collect::<Vec<_>>(), ["a", "e"]);
            for paths in [&["a", "a/b"][..], &["a/b", "a"], &["a", "a"], &["/a"], &["a//b"], &["a/../b"], &["./a"], &["a/"], &[""]] {
                assert!(super::tree(&artifacts(paths)).is_none(), "{paths:?}");
            }
        }
    }
}
