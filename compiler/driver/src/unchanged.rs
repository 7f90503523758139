//! Rebuilding over an earlier tree, a file whose bytes did not change keeps its inode: the
//! staging tree gets a hard link to the previous tree's file instead of a new file.
//!
//! Why: creating a file is most of a build written to disk. On ext4 without a journal (the
//! disks placid's benchmarks ran on) the inode allocator also skips every inode freed in the last 30 s, one
//! buffer lookup each, so a rebuild that frees the previous tree's inodes and allocates as
//! many new ones grows quadratically in files. Linking allocates nothing, and removing the
//! previous tree then frees nothing. Unchanged files also keep their mtime, which tools that
//! sync or watch the output read as "unchanged".
//!
//! Invariants: a link is made only to the exact inode whose bytes were compared (linked
//! through `/proc/self/fd`, never by path again), only for a regular file reached without
//! following any symlink below the previous tree, owned by this user, with one link and the
//! mode a new file would get. Anything else, or any error, and the file is created as usual:
//! this is a shortcut, never a different result.

use std::path::Path;

/// The previous tree of a rebuild, opened once.
pub struct PreviousTree {
    #[cfg(target_os = "linux")]
    dir: rustix::fd::OwnedFd,
    /// Who may own a file that is linked: this process's effective user.
    #[cfg(target_os = "linux")]
    uid: u32,
    /// Whether `linkat(AT_EMPTY_PATH)` may still work here: cleared at its first refusal.
    #[cfg(target_os = "linux")]
    empty_path_links: std::sync::atomic::AtomicBool,
}

impl PreviousTree {
    /// The directory `out` of an earlier build; `None` where links cannot be checked (other
    /// systems, or the directory cannot be opened).
    pub fn open(out: &Path) -> Option<PreviousTree> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags, open};
            let dir = open(out, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty()).ok()?;
            Some(PreviousTree { dir, uid: rustix::process::geteuid().as_raw(), empty_path_links: std::sync::atomic::AtomicBool::new(true) })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = out;
            None
        }
    }

    /// Links the previous tree's `path` to `staged` when it holds exactly `bytes` with `mode`
    /// (the permission bits of a newly created file); `false` when it did not link.
    pub fn link_if_unchanged(&self, path: &str, bytes: &[u8], mode: u32, staged: &Path) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.try_link(path, bytes, mode, staged).unwrap_or(false)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (path, bytes, mode, staged);
            false
        }
    }

    #[cfg(target_os = "linux")]
    fn try_link(&self, path: &str, bytes: &[u8], mode: u32, staged: &Path) -> std::io::Result<bool> {
        use std::os::fd::AsRawFd as _;
        use std::sync::atomic::Ordering;

        use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags, fstat, linkat, openat2};

        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        // NONBLOCK: a named pipe the user put in the old tree must not block the open (the
        // fstat below then refuses it); it does nothing to a regular file's reads.
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
        let fd = openat2(&self.dir, path, flags, Mode::empty(), resolve)?;
        let stat = fstat(&fd)?;
        let same_shape = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
            && stat.st_nlink == 1
            && stat.st_uid == self.uid
            && stat.st_mode & 0o7777 == mode
            && u64::try_from(stat.st_size).is_ok_and(|size| size == bytes.len() as u64);
        if !same_shape {
            return Ok(false);
        }
        // One read of one byte more than expected: a regular file answers all it has up to
        // that, so a file that grew since the fstat reads longer and does not compare equal.
        let mut old = vec![0; bytes.len() + 1];
        let read = rustix::io::read(&fd, &mut old)?;
        if old[..read] != *bytes {
            return Ok(false);
        }
        // Linking the open file itself: AT_EMPTY_PATH where the kernel allows it (it asks for
        // CAP_DAC_READ_SEARCH before Linux 6.10), else its /proc/self/fd link, one path walk
        // more. Either way the inode linked is the one compared.
        if self.empty_path_links.load(Ordering::Relaxed) {
            match linkat(&fd, "", CWD, staged, AtFlags::EMPTY_PATH) {
                Ok(()) => return Ok(true),
                Err(rustix::io::Errno::NOENT | rustix::io::Errno::PERM) => self.empty_path_links.store(false, Ordering::Relaxed),
                Err(errno) => return Err(errno.into()),
            }
        }
        linkat(CWD, format!("/proc/self/fd/{}", fd.as_raw_fd()), CWD, staged, AtFlags::SYMLINK_FOLLOW)?;
        Ok(true)
    }
}

/// The permission bits of the file at `path`.
pub fn mode_of(path: &Path) -> std::io::Result<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Ok(std::fs::symlink_metadata(path)?.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(0)
    }
}
