//! The one reader of files placid does not trust: policy sources, inventories, traces,
//! recorded telemetry series, histories and openb lists all come through here, and so do
//! the files of an output directory `placid build -o` hashes before replacing it.
//!
//! Each read opens the file once, without blocking (a FIFO would wait for a writer forever),
//! refuses anything but a regular file by the type of the opened descriptor (the path may
//! name something else by then), refuses a file whose size is over the limit, and reads at
//! most one byte past the limit (a file growing meanwhile). [`read_beneath`] also resolves
//! the path inside a root the kernel holds it to (`openat2` with `RESOLVE_BENEATH`), so a
//! committed link to `/proc/self/environ` or `../../secret` is refused, not followed. Parsing
//! is the caller's; every parser of these files is linear in the bytes it is given.

use std::fs::{File, FileType};
use std::io::Read;
use std::path::{Component, Path};

use placid_lang::source::WorldError;

/// Reads the regular file at `path`, a path the user named (links are followed as the
/// shell would), up to `max_bytes`.
pub fn read(path: &Path, max_bytes: u64) -> Result<Vec<u8>, WorldError> {
    read_open(open(path)?, max_bytes)
}

/// The hex sha256 of the regular file at `path`, hashed as it is read: memory stays flat
/// whatever the file's size, and time is linear in it.
pub fn sha256(path: &Path) -> Result<String, WorldError> {
    use sha2::Digest as _;
    let mut file = open(path)?;
    regular(file.metadata().map_err(unreadable)?.file_type())?;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(unreadable)?;
    Ok(hex::encode(hasher.finalize()))
}

/// Reads the regular file at `relative` below the directory `root`, up to `max_bytes`: the
/// path and every link on it must stay inside `root`, and `..` may not leave it.
pub fn read_beneath(root: &Path, relative: &Path, max_bytes: u64) -> Result<Vec<u8>, WorldError> {
    if relative.is_absolute() || relative.components().any(|part| matches!(part, Component::ParentDir | Component::Prefix(_))) {
        return Err(WorldError::outside_root("the path must be relative and stay inside the root"));
    }
    let file = open_beneath(root, relative)?;
    read_open(file, max_bytes)
}

fn read_open(file: File, max_bytes: u64) -> Result<Vec<u8>, WorldError> {
    let metadata = file.metadata().map_err(unreadable)?;
    regular(metadata.file_type())?;
    // The size a file claims refuses most at once; reading stops at the limit for the rest.
    if metadata.len() > max_bytes {
        return Err(WorldError::too_large(max_bytes));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(WorldError::too_large(max_bytes));
    }
    Ok(bytes)
}

fn unreadable(error: std::io::Error) -> WorldError {
    WorldError::unreadable(error.to_string())
}

/// Opens `path` for reading without blocking (opening a FIFO waits for a writer otherwise);
/// what cannot be opened because it is no regular file is refused for its kind.
fn open(path: &Path) -> Result<File, WorldError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).map_err(|error| {
        // A socket cannot even be opened: its kind is the better reason.
        match std::fs::metadata(path) {
            Ok(metadata) if !metadata.is_file() => WorldError::not_regular(special_kind(metadata.file_type())),
            _ => unreadable(error),
        }
    })
}

/// Opens `relative` below `root` with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`; where
/// the kernel has no `openat2` (before Linux 5.6, or a sandbox that filters it), every
/// component is opened with `O_NOFOLLOW` instead, which refuses links altogether.
fn open_beneath(root: &Path, relative: &Path) -> Result<File, WorldError> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let root_dir = rustix::fs::open(root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|error| unreadable(error.into()))?;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    match rustix::fs::openat2(&root_dir, relative, flags, Mode::empty(), ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS) {
        Ok(fd) => Ok(File::from(fd)),
        Err(rustix::io::Errno::XDEV | rustix::io::Errno::LOOP) => Err(leaves_root()),
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => open_without_links(root_dir, relative, flags),
        Err(error) => Err(unreadable(error.into())),
    }
}

fn leaves_root() -> WorldError {
    WorldError::outside_root("it is a link that leaves the root, or a path through one")
}

fn open_without_links(root_dir: rustix::fd::OwnedFd, relative: &Path, flags: rustix::fs::OFlags) -> Result<File, WorldError> {
    use rustix::fs::{Mode, OFlags};
    let parts: Vec<&std::ffi::OsStr> =
        relative.components().filter_map(|part| if let Component::Normal(name) = part { Some(name) } else { None }).collect();
    let Some((last, directories)) = parts.split_last() else {
        return Err(WorldError::not_regular("a directory"));
    };
    let mut directory = root_dir;
    for name in directories {
        directory =
            rustix::fs::openat(&directory, *name, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
                .map_err(|error| {
                if error == rustix::io::Errno::LOOP || error == rustix::io::Errno::NOTDIR {
                    leaves_root()
                } else {
                    unreadable(error.into())
                }
            })?;
    }
    rustix::fs::openat(&directory, *last, flags | OFlags::NOFOLLOW, Mode::empty())
        .map(File::from)
        .map_err(|error| if error == rustix::io::Errno::LOOP { leaves_root() } else { unreadable(error.into()) })
}

fn regular(kind: FileType) -> Result<(), WorldError> {
    if kind.is_file() {
        return Ok(());
    }
    Err(WorldError::not_regular(special_kind(kind)))
}

fn special_kind(kind: FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use placid_lang::diag::Code;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("trace.csv");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0).expect("mkfifo");
        assert_eq!(read(&fifo, 1024).map_err(|error| error.code), Err(Code::SpecialFile));
        assert_eq!(read_beneath(dir.path(), Path::new("trace.csv"), 1024).map_err(|error| error.code), Err(Code::SpecialFile));
    }

    #[test]
    fn links_out_of_the_root_are_refused_and_links_inside_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("traces")).expect("mkdir");
        std::fs::write(dir.path().join("secret"), "TOKEN=1").expect("write");
        std::fs::write(root.join("traces/day.csv"), "job\n").expect("write");
        std::os::unix::fs::symlink("/proc/self/environ", root.join("environ.csv")).expect("link");
        std::os::unix::fs::symlink("../secret", root.join("up.csv")).expect("link");
        std::os::unix::fs::symlink(dir.path(), root.join("outside")).expect("link");
        std::os::unix::fs::symlink("traces/day.csv", root.join("inside.csv")).expect("link");
        for escaping in ["environ.csv", "up.csv", "outside/secret", "../secret", "/etc/passwd"] {
            let error = read_beneath(&root, Path::new(escaping), 1024).expect_err(escaping);
            assert_eq!(error.code, Code::IncludeOutsideRoot, "{escaping}: {error:?}");
        }
        assert_eq!(read_beneath(&root, Path::new("inside.csv"), 1024).expect("a link inside"), b"job\n");
        assert_eq!(read_beneath(&root, Path::new("traces/day.csv"), 1024).expect("a file"), b"job\n");
    }

    #[test]
    fn files_over_the_limit_and_devices_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("big"), vec![b'x'; 2048]).expect("write");
        assert_eq!(read(&dir.path().join("big"), 1024).map_err(|error| error.code), Err(Code::FileTooLarge));
        assert_eq!(read(Path::new("/dev/zero"), 1024).map_err(|error| error.code), Err(Code::SpecialFile));
        assert_eq!(read(dir.path(), 1024).map_err(|error| error.code), Err(Code::SpecialFile));
    }

    #[test]
    fn without_openat2_no_link_is_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("a")).expect("mkdir");
        std::fs::write(dir.path().join("a/f"), "x").expect("write");
        std::os::unix::fs::symlink("a", dir.path().join("l")).expect("link");
        let open = |path: &str| {
            let root = rustix::fs::open(dir.path(), rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty())
                .expect("root");
            open_without_links(root, Path::new(path), rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK)
        };
        assert!(open("a/f").is_ok());
        assert_eq!(open("l/f").map(|_| ()).map_err(|error| error.code), Err(Code::IncludeOutsideRoot));
    }
}
