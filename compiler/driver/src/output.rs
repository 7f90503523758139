//! The output tree: where a build may write (never the project, a git repository, `/`, a
//! file, a link or a directory placid did not write: [`check_output`]), and writing it
//! atomically (a temp dir beside the output, swapped into place with one exchange rename,
//! unless the output already holds exactly that tree), with the build's manifest.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use placid_lang::codes::Code;
use placid_lang::diag::Diagnostic;
use placid_lang::source::Sources;
use placid_lang::span::Span;
use placid_targets::Artifact;

use crate::build::MANIFEST;
use crate::unchanged::{self, PreviousTree};
use crate::up_to_date;

/// Writes `artifacts` to `out` for a build of the project at `root` (canonical) that read
/// `sources`, after [`check_output`] said `out` may be replaced.
pub fn write_output(out: &Path, force: bool, root: &Path, sources: &Sources, artifacts: &[Artifact]) -> Result<(), Box<Diagnostic>> {
    let target = check_output(out, force, root, sources)?;
    write_atomically(&target, artifacts).map_err(|error| unwritable(out, &error))
}

/// The real path `placid build -o out` may replace, or why not. Never `/`, the project, a
/// directory holding the project or one of its sources, a git work tree, a git directory or a
/// directory holding either at any depth (`force` or not); an existing directory only when
/// it is empty or holds exactly the tree of an earlier build (every file listed in its
/// manifest with its hash, nothing else), unless `force`; never a file or a symlink.
pub fn check_output(out: &Path, force: bool, root: &Path, sources: &Sources) -> Result<PathBuf, Box<Diagnostic>> {
    let existing = Existing::at(out).map_err(|error| unwritable(out, &error))?;
    let not_directory = |what: &str, help: &str| {
        refusal(Code::OutputNotDirectory, format!("the output {} is {what}, not a directory", out.display()), help)
    };
    match existing {
        Existing::Symlink => {
            return Err(not_directory("a symbolic link", "name the directory the link points to, or remove the link"));
        }
        Existing::File => return Err(not_directory("a file", "the output is a directory tree: choose another path, or remove the file")),
        Existing::Nothing | Existing::Directory => {}
    }
    let real = real_path(out).map_err(|error| unwritable(out, &error))?;
    if let Some(overlap) = overlap(&real, root, sources) {
        return Err(refusal(
            Code::OutputOverlapsProject,
            format!("the output {} {overlap}; replacing it would delete what placid did not write", out.display()),
            "write the output to a directory of its own, such as `generated/` beside the project",
        ));
    }
    if existing == Existing::Directory && !force && !holds_earlier_build(&real).map_err(|error| unwritable(out, &error))? {
        return Err(refusal(
            Code::OutputNotPlacid,
            format!(
                "the output {} exists and holds files placid did not write (it is not exactly a tree an earlier build wrote, as its manifest lists it)",
                out.display()
            ),
            "choose a new or empty directory, or pass --force to replace this one",
        ));
    }
    Ok(real)
}

/// What a path names, without following a symlink at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Existing {
    Nothing,
    Directory,
    Symlink,
    File,
}

impl Existing {
    fn at(path: &Path) -> std::io::Result<Existing> {
        // Rebuilt from its components, `out/` loses the slash that would make lstat follow a link.
        let path: PathBuf = path.components().collect();
        match std::fs::symlink_metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Existing::Nothing),
            Err(error) => Err(error),
            Ok(metadata) if metadata.file_type().is_symlink() => Ok(Existing::Symlink),
            Ok(metadata) if metadata.is_dir() => Ok(Existing::Directory),
            Ok(_) => Ok(Existing::File),
        }
    }
}

/// `path` with every symlink resolved, also when it does not exist yet: the real path of its
/// nearest existing ancestor, then the missing components, whose `..` undo the one before
/// (a missing directory is no symlink), as `create_dir_all` and `rename` will see them.
fn real_path(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let components: Vec<Component> = absolute.components().collect();
    for existing in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..existing].iter().collect();
        match prefix.canonicalize() {
            Ok(mut real) => {
                for component in &components[existing..] {
                    match component {
                        Component::ParentDir => {
                            real.pop();
                        }
                        Component::Normal(name) => real.push(name),
                        Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                    }
                }
                return Ok(real);
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no part of the path exists"))
}

/// How the real output path `out` overlaps what must survive a build, if it does.
fn overlap(out: &Path, root: &Path, sources: &Sources) -> Option<String> {
    if out.parent().is_none() {
        return Some("is the file-system root".to_owned());
    }
    if out == root {
        return Some("is the project directory".to_owned());
    }
    if root.starts_with(out) {
        return Some(format!("contains the project directory {}", root.display()));
    }
    // `.git` itself, a work tree's `.git` file, and everything inside them hold history.
    if out.components().any(|component| component.as_os_str() == ".git") {
        return Some("lies inside a git directory".to_owned());
    }
    // Any work tree around the project contains it (caught above); this is someone else's,
    // or a bare repository, or a directory with a repository anywhere below it.
    if let Some(repository) = repository_in(out) {
        return Some(repository);
    }
    sources.iter().map(|(_, file)| &file.path).find_map(|path| {
        let lexical = root.join(path.as_str());
        let real = lexical.canonicalize().unwrap_or_else(|_| lexical.clone());
        (lexical.starts_with(out) || real.starts_with(out)).then(|| format!("holds the project source {path}"))
    })
}

/// The git repository `out` is or holds, if any, found by walking it without following
/// links: a `.git` (a work tree's directory or file) or a bare repository (`HEAD` beside
/// `objects/` and `refs/`), at any depth. `--force` never overrides this: replacing the
/// directory would delete history.
fn repository_in(out: &Path) -> Option<String> {
    let is_dir = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir());
    for entry in walkdir::WalkDir::new(out).follow_links(false).into_iter().filter_map(Result::ok) {
        let name = entry.file_name();
        let place = |what: &str| {
            let inside =
                entry.path().parent().and_then(|parent| parent.strip_prefix(out).ok()).filter(|inside| !inside.as_os_str().is_empty());
            match inside {
                Some(inside) => format!("holds {what} at {}", inside.display()),
                None => format!("is {what}"),
            }
        };
        if name == ".git" {
            return Some(place("a git work tree"));
        }
        if name == "HEAD" && entry.file_type().is_file() {
            let dir = entry.path().parent().unwrap_or(out);
            if is_dir(&dir.join("objects")) && is_dir(&dir.join("refs")) {
                return Some(place("a bare git repository"));
            }
        }
    }
    None
}

/// The most bytes of a manifest read to decide whether placid wrote a tree: far above the
/// 3 MB of the largest benchmark's.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Whether the existing directory `dir` may be replaced without `--force`: it is empty, or an
/// earlier build wrote exactly what it holds. A `manifest.json` alone proves nothing (anyone
/// can write one): every file must be a regular file the manifest lists with its sha256,
/// every directory must hold a listed file, and nothing else may be there.
fn holds_earlier_build(dir: &Path) -> std::io::Result<bool> {
    if std::fs::read_dir(dir)?.next().is_none() {
        return Ok(true);
    }
    let Some(listed) = placid_manifest(&dir.join(MANIFEST)) else { return Ok(false) };
    let directories: BTreeSet<&str> = listed.keys().flat_map(|path| path.match_indices('/').map(move |(end, _)| &path[..end])).collect();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).follow_links(false) {
        let entry = entry.map_err(std::io::Error::other)?;
        let Some(relative) = entry.path().strip_prefix(dir).ok().and_then(Path::to_str).map(str::to_owned) else { return Ok(false) };
        let kind = entry.file_type();
        let placids = if kind.is_dir() {
            directories.contains(relative.as_str())
        } else if relative == MANIFEST {
            kind.is_file()
        } else {
            kind.is_file()
                && listed.get(&relative).is_some_and(|hash| crate::untrusted::sha256(entry.path()).is_ok_and(|real| real == *hash))
        };
        if !placids {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The artifacts (path to sha256 hex) of the manifest at `path`, if [`manifest`] wrote it: a
/// regular file (not a link to someone's JSON) holding exactly its fields.
fn placid_manifest(path: &Path) -> Option<std::collections::BTreeMap<String, String>> {
    let is_hash = |hash: &str| hash.len() == 64 && hash.bytes().all(|byte| byte.is_ascii_hexdigit());
    let metadata = std::fs::symlink_metadata(path).ok()?;
    let text = metadata.is_file().then(|| crate::untrusted::read(path, MAX_MANIFEST_BYTES).ok()).flatten()?;
    let serde_json::Value::Object(fields) = serde_json::from_slice(&text).ok()? else { return None };
    let artifacts = fields.get("artifacts")?.as_object()?;
    let complete = fields.len() == 3
        && fields.get("placid-version").is_some_and(serde_json::Value::is_string)
        && fields.get("source-hash").and_then(serde_json::Value::as_str).is_some_and(is_hash);
    complete.then_some(())?;
    artifacts.iter().map(|(path, hash)| hash.as_str().filter(|hash| is_hash(hash)).map(|hash| (path.clone(), hash.to_owned()))).collect()
}

fn refusal(code: Code, message: String, help: &str) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(code, Span::DETACHED, message).help(help))
}

fn unwritable(out: &Path, error: &std::io::Error) -> Box<Diagnostic> {
    refusal(
        Code::OutputUnwritable,
        format!("cannot write the output {}: {error}", out.display()),
        "the tree is written beside the output and swapped into place: the parent directory must be writable, with room to spare",
    )
}

/// The start of the names of placid's temp directories beside the output: the tree being
/// staged and, once swapped, the previous tree being removed. Then the PID of the build, `-`
/// and a random suffix, so the next build can tell a killed build's leftovers from a running one's.
const TEMP_PREFIX: &str = ".placid-build-";

/// Writes `artifacts` to `out` atomically: into a fresh temp dir beside `out`, then swapped
/// with it in one step, so `out` is always either the previous tree or the new one. On an
/// error before the swap the previous `out` is left untouched; after it, only removing the
/// previous tree can fail, and the next build removes what is left. An `out` that already
/// holds exactly this tree is left as it is (up_to_date.rs), as the swap would change nothing.
/// `out` must be a directory or not exist (see [`check_output`] for what `placid build` also
/// refuses).
pub fn write_atomically(out: &Path, artifacts: &[Artifact]) -> std::io::Result<()> {
    let parent = directory_of(out);
    std::fs::create_dir_all(parent)?;
    remove_stale_temp_dirs(parent);
    let existing = Existing::at(out)?;
    if existing == Existing::Directory && up_to_date::holds_exactly(out, parent, artifacts) {
        return Ok(());
    }
    let staging = tempfile::Builder::new().prefix(&format!("{TEMP_PREFIX}{}-", std::process::id())).tempdir_in(parent)?;
    // Each directory once: a `create_dir_all` per file fails its `mkdir` for every file but
    // the first of a directory (825 failed calls at 100 teams × 64 flavors).
    let directories: BTreeSet<&Path> = artifacts.iter().filter_map(|artifact| Path::new(&artifact.path).parent()).collect();
    for directory in directories {
        std::fs::create_dir_all(staging.path().join(directory))?;
    }
    let previous = if existing == Existing::Directory { PreviousTree::open(out) } else { None };
    write_files(staging.path(), artifacts, previous.as_ref())?;
    drop(previous);
    match existing {
        Existing::Nothing => {
            std::fs::rename(staging.path(), out)?;
            // Moved into place: nothing left for the temp dir to clean up.
            let _ = staging.keep();
            Ok(())
        }
        Existing::Directory => {
            exchange(staging.path(), out)?;
            // The staging path now holds the previous tree.
            staging.close()
        }
        Existing::Symlink | Existing::File => {
            Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "it is a file or a symbolic link, not a directory"))
        }
    }
}

/// How many threads write a tree's files. Creating a file costs far more than writing it
/// (strace: 85 % of a 100 teams × 64 flavors build's system time is its 909 `openat`, about
/// 140 µs each on a nearly full ext4 disk), and two threads overlap those waits.
const WRITERS: usize = 2;

/// Writes every artifact under `root`, whose directories exist, on [`WRITERS`] threads;
/// the first error, if any. Over a `previous` tree, unchanged files are linked instead
/// (unchanged.rs), after the first file, created anew, has told which mode a new file gets.
fn write_files(root: &Path, artifacts: &[Artifact], previous: Option<&PreviousTree>) -> std::io::Result<()> {
    let Some((first, rest)) = artifacts.split_first() else { return Ok(()) };
    let first_path = root.join(&first.path);
    std::fs::write(&first_path, &first.bytes)?;
    let reuse = match previous {
        Some(previous) => Some((previous, unchanged::mode_of(&first_path)?)),
        None => None,
    };
    let write = |artifact: &Artifact| {
        let staged = root.join(&artifact.path);
        match reuse {
            Some((previous, mode)) if previous.link_if_unchanged(&artifact.path, &artifact.bytes, mode, &staged) => Ok(()),
            _ => std::fs::write(staged, &artifact.bytes),
        }
    };
    let chunk = rest.len().div_ceil(WRITERS).max(1);
    std::thread::scope(|scope| {
        let writers: Vec<_> = rest.chunks(chunk).map(|part| scope.spawn(|| part.iter().try_for_each(write))).collect();
        writers.into_iter().try_for_each(|writer| writer.join().unwrap_or_else(|_| Err(std::io::Error::other("a writer thread panicked"))))
    })
}

/// Swaps the directories `a` and `b` in one step, so that neither path is missing at any
/// moment: Linux's `renameat2(RENAME_EXCHANGE)`. Where that is unavailable (other systems,
/// file systems that answer EINVAL or ENOSYS), three renames through `a` with `-old` appended
/// do the same, but leave `b` missing if the process is killed between the first two.
pub fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    if exchange_in_one_step(a, b)? { Ok(()) } else { exchange_by_renames(a, b) }
}

/// The fallback of [`exchange`]: `b` aside, `a` to `b`, the old `b` to `a`.
fn exchange_by_renames(a: &Path, b: &Path) -> std::io::Result<()> {
    let mut aside = a.as_os_str().to_owned();
    aside.push("-old");
    let aside = PathBuf::from(aside);
    std::fs::rename(b, &aside)?;
    if let Err(error) = std::fs::rename(a, b) {
        let _ = std::fs::rename(&aside, b);
        return Err(error);
    }
    std::fs::rename(&aside, a)
}

/// `renameat2(RENAME_EXCHANGE)`; `false` when the kernel or file system cannot exchange.
#[cfg(target_os = "linux")]
fn exchange_in_one_step(a: &Path, b: &Path) -> std::io::Result<bool> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => Ok(false),
        Err(errno) => Err(errno.into()),
    }
}

/// Only Linux exchanges two paths in one step.
#[cfg(not(target_os = "linux"))]
fn exchange_in_one_step(_: &Path, _: &Path) -> std::io::Result<bool> {
    Ok(false)
}

/// Removes the temp directories of builds that were killed before they cleaned up, in the
/// output's `parent`: only directories (not links) named exactly as placid names its own,
/// whose build is no longer running. Best effort: a leftover that cannot be removed must not
/// stop this build, and the next one tries again.
fn remove_stale_temp_dirs(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.filter_map(Result::ok) {
        let Some(pid) = entry.file_name().to_str().and_then(temp_dir_pid) else { continue };
        let is_directory = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_directory && pid != std::process::id() && !process_is_running(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The PID in the name of one of placid's temp directories (`.placid-build-<pid>-<suffix>`);
/// `None` for every other name.
fn temp_dir_pid(name: &str) -> Option<u32> {
    let (pid, suffix) = name.strip_prefix(TEMP_PREFIX)?.split_once('-')?;
    let digits = !pid.is_empty() && pid.bytes().all(|byte| byte.is_ascii_digit());
    let random = !suffix.is_empty() && suffix.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-');
    if digits && random { pid.parse().ok() } else { None }
}

/// Whether process `pid` exists: signal 0 checks without sending anything, and EPERM means
/// it exists under another user. Anything but "no such process" counts as running.
#[cfg(unix)]
fn process_is_running(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { return true };
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

/// Without a way to ask, every build counts as running and nothing is removed.
#[cfg(not(unix))]
fn process_is_running(_: u32) -> bool {
    true
}

/// Writes one file through a temp file in its directory renamed over it, so a crash never
/// leaves it half-written (`placid fmt`, `placid inventory merge -o`, the replay's plots and
/// job lists). Created as `std::fs::write` creates a file (0666 less the umask, so usually
/// 0644), not with a temp file's private 0600, which would hide a report from its readers.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut temp = tempfile::Builder::new().permissions(std::fs::Permissions::from_mode(0o666)).tempfile_in(directory_of(path))?;
    std::io::Write::write_all(&mut temp, bytes)?;
    temp.persist(path).map(|_| ()).map_err(|error| error.error)
}

/// The directory `path` lives in: `.` for a bare file name.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two directories holding one file each, `a/from` = "a" and `b/from` = "b".
    fn two_trees() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for (path, text) in [(&a, "a"), (&b, "b")] {
            std::fs::create_dir(path).expect("mkdir");
            std::fs::write(path.join("from"), text).expect("write");
        }
        (dir, a, b)
    }

    fn assert_swapped(dir: &Path, a: &Path, b: &Path) {
        assert_eq!(std::fs::read_to_string(a.join("from")).expect("a exists"), "b");
        assert_eq!(std::fs::read_to_string(b.join("from")).expect("b exists"), "a");
        assert_eq!(std::fs::read_dir(dir).expect("list").count(), 2, "nothing but the two trees is left");
    }

    #[cfg(target_os = "linux")]
    fn inode(path: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&std::fs::symlink_metadata(path).expect("stat"))
    }

    /// A rebuild links each file whose bytes and mode are unchanged (same inode, one link once
    /// the previous tree is gone) and creates every other one; a file the user changed, made
    /// executable or replaced by a symlink or a named pipe (without blocking on it), or one below
    /// a symlinked directory, is written anew,
    /// and so is the first file, which tells the mode a new file gets.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_rebuild_keeps_the_inodes_of_unchanged_files_only() {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("out");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(elsewhere.join("d")).expect("mkdir");
        std::fs::write(elsewhere.join("d/linked"), "same").expect("write");
        let names = ["0-first", "a/same", "a/edited", "a/chmod", "a/fifo", "a/symlink", "d/linked", "grown", "manifest.json"];
        let artifacts: Vec<Artifact> = names.iter().map(|name| Artifact::text(*name, "same")).collect();
        write_atomically(&out, &artifacts).expect("first build");
        std::fs::write(out.join("a/edited"), "user's").expect("edit");
        std::fs::set_permissions(out.join("a/chmod"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::remove_file(out.join("a/fifo")).expect("rm");
        rustix::fs::mknodat(rustix::fs::CWD, out.join("a/fifo"), rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o644), 0)
            .expect("mkfifo");
        std::fs::remove_file(out.join("a/symlink")).expect("rm");
        std::os::unix::fs::symlink(elsewhere.join("d/linked"), out.join("a/symlink")).expect("symlink");
        std::fs::remove_dir_all(out.join("d")).expect("rm -r");
        std::os::unix::fs::symlink(elsewhere.join("d"), out.join("d")).expect("symlink");
        std::fs::write(out.join("grown"), "same and more").expect("grow");
        let before: Vec<u64> = names.iter().map(|name| inode(&out.join(name))).collect();

        write_atomically(&out, &artifacts).expect("rebuild");
        for (name, before) in names.iter().zip(before) {
            let path = out.join(name);
            let stat = std::fs::symlink_metadata(&path).expect("stat");
            assert!(stat.file_type().is_file(), "{name} is a regular file again");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), "same", "{name} holds the build's bytes");
            assert_eq!(stat.nlink(), 1, "{name} has one link once the previous tree is removed");
            let kept = stat.ino() == before;
            assert_eq!(kept, ["a/same", "manifest.json"].contains(name), "{name}: inode kept = {kept}");
        }
        assert_eq!(std::fs::read_to_string(elsewhere.join("d/linked")).expect("read"), "same", "nothing outside is touched");
        assert_eq!(std::fs::symlink_metadata(elsewhere.join("d/linked")).expect("stat").nlink(), 1, "nor linked");
        assert_ne!(std::fs::metadata(out.join("a/chmod")).expect("stat").permissions().mode() & 0o111, 0o111, "a new file's mode");
    }

    /// Every entry below `dir` (not following links): its path, kind, permission bits, link
    /// count and, for a file, its bytes.
    #[cfg(target_os = "linux")]
    fn snapshot(dir: &Path) -> Vec<(PathBuf, String, u32, u64, Vec<u8>)> {
        use std::os::unix::fs::MetadataExt as _;
        walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .map(|entry| {
                let entry = entry.expect("walk");
                let stat = std::fs::symlink_metadata(entry.path()).expect("stat");
                let bytes = if stat.is_file() { std::fs::read(entry.path()).expect("read") } else { Vec::new() };
                let path = entry.path().strip_prefix(dir).expect("below").to_owned();
                (path, format!("{:?}", stat.file_type()), stat.mode() & 0o7777, stat.nlink(), bytes)
            })
            .collect()
    }

    #[cfg(target_os = "linux")]
    fn small_tree() -> Vec<Artifact> {
        ["a/one", "a/two", "b/c/three", "manifest.json"].iter().map(|path| Artifact::text(*path, format!("{path}\n"))).collect()
    }

    /// A rebuild over the very tree it would write leaves every entry as it is: the output
    /// directory, its directories and its files keep their inodes.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_up_to_date_tree_is_left_as_it_is() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("out");
        write_atomically(&out, &small_tree()).expect("first build");
        let inodes = |out: &Path| -> Vec<(PathBuf, u64)> {
            walkdir::WalkDir::new(out)
                .sort_by_file_name()
                .into_iter()
                .map(|entry| {
                    let entry = entry.expect("walk");
                    (entry.path().to_owned(), entry.metadata().expect("stat").ino())
                })
                .collect()
        };
        let (before, tree) = (inodes(&out), snapshot(&out));
        write_atomically(&out, &small_tree()).expect("rebuild");
        assert_eq!(inodes(&out), before, "every inode kept, the output directory's too");
        assert_eq!(snapshot(&out), tree);
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1, "no staging tree was left beside it");
    }

    /// A single file written atomically is readable as one written plainly: the temp file's
    /// private mode does not survive the rename (plots and job lists are for other readers).
    #[test]
    fn a_file_written_atomically_has_the_mode_a_plain_write_gives() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let (atomic, plain) = (dir.path().join("atomic.svg"), dir.path().join("plain.svg"));
        write_file_atomically(&atomic, b"<svg/>").expect("atomic write");
        std::fs::write(&plain, b"<svg/>").expect("plain write");
        let mode = |path: &Path| std::fs::metadata(path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&plain));
        assert_ne!(mode(&atomic) & 0o044, 0, "readable beyond its owner under a usual umask");
    }

    /// A tree that differs from the build's in anything (an entry added, changed, replaced or
    /// missing, a mode, a link count) is written anew, and ends exactly as a fresh build's.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tree_that_differs_is_written_anew_as_a_fresh_build_writes_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let fresh = dir.path().join("fresh");
        write_atomically(&fresh, &small_tree()).expect("fresh build");
        let expected = snapshot(&fresh);
        let fifo = |path: &Path| {
            rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o644), 0)
                .expect("mkfifo")
        };
        type Change<'a> = (&'a str, &'a dyn Fn(&Path));
        let changes: [Change; 12] = [
            ("an extra file", &|out| std::fs::write(out.join("a/extra"), "user's").expect("write")),
            ("an extra file at the root", &|out| std::fs::write(out.join("notes"), "").expect("write")),
            ("a changed byte", &|out| std::fs::write(out.join("a/two"), "a/twO\n").expect("write")),
            ("a changed manifest", &|out| std::fs::write(out.join(MANIFEST), "manifest.jsoN\n").expect("write")),
            ("a changed mode", &|out| std::fs::set_permissions(out.join("a/two"), std::fs::Permissions::from_mode(0o600)).expect("chmod")),
            ("a changed directory mode", &|out| {
                std::fs::set_permissions(out.join("b/c"), std::fs::Permissions::from_mode(0o700)).expect("chmod")
            }),
            ("a symlink in place of a file", &|out| {
                std::fs::remove_file(out.join("a/two")).expect("rm");
                std::os::unix::fs::symlink(out.join("a/one"), out.join("a/two")).expect("symlink");
            }),
            ("a fifo in place of a file", &|out| {
                std::fs::remove_file(out.join("a/two")).expect("rm");
                fifo(&out.join("a/two"));
            }),
            ("an extra fifo", &|out| fifo(&out.join("b/fifo"))),
            ("a missing file", &|out| std::fs::remove_file(out.join("b/c/three")).expect("rm")),
            ("an extra empty directory", &|out| std::fs::create_dir(out.join("b/c/empty")).expect("mkdir")),
            ("a second link to a file", &|out| std::fs::hard_link(out.join("a/one"), out.join("../elsewhere")).expect("link")),
        ];
        for (what, change) in changes {
            let out = dir.path().join("out");
            write_atomically(&out, &small_tree()).expect("first build");
            change(&out);
            let before = inode(&out);
            write_atomically(&out, &small_tree()).expect("rebuild");
            assert_ne!(inode(&out), before, "{what}: the tree is written anew");
            assert_eq!(snapshot(&out), expected, "{what}: the tree ends as a fresh build's");
            std::fs::remove_dir_all(&out).expect("rm -r");
            let _ = std::fs::remove_file(dir.path().join("elsewhere"));
        }
    }

    #[test]
    fn exchange_swaps_two_directories() {
        let (dir, a, b) = two_trees();
        exchange(&a, &b).expect("exchange");
        assert_swapped(dir.path(), &a, &b);
    }

    #[test]
    fn the_fallback_swaps_two_directories_too() {
        let (dir, a, b) = two_trees();
        exchange_by_renames(&a, &b).expect("exchange");
        assert_swapped(dir.path(), &a, &b);
    }

    #[test]
    fn only_placid_temp_dir_names_carry_a_pid() {
        assert_eq!(temp_dir_pid(".placid-build-4242-a1B2c3"), Some(4242));
        assert_eq!(temp_dir_pid(".placid-build-4242-a1B2c3-old"), Some(4242));
        for other in [
            ".placid-build-a1B2c3",
            ".placid-build-4242-",
            ".placid-build--a1",
            ".placid-old-4242",
            "placid-build-1-a",
            ".placid-build-1-a/b",
        ] {
            assert_eq!(temp_dir_pid(other), None, "{other}");
        }
    }

    #[test]
    fn a_manifest_placid_wrote_is_recognised_and_others_are_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(MANIFEST);
        let written = crate::build::manifest(&Sources::new(), &[Artifact::text("slurm/slurm.conf", "ClusterName=ml\n")]);
        std::fs::write(&path, &written.bytes).expect("write");
        assert!(placid_manifest(&path).is_some());
        for other in [
            "{\"name\": \"my-package\", \"version\": \"1.0.0\"}",
            "[]",
            "not json",
            "{\"placid-version\": \"0.1.0\", \"source-hash\": \"x\", \"artifacts\": {}}",
        ] {
            std::fs::write(&path, other).expect("write");
            assert!(placid_manifest(&path).is_none(), "{other}");
        }
        let link = dir.path().join("link.json");
        std::fs::write(&path, &written.bytes).expect("write");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        assert!(placid_manifest(&link).is_none(), "a link to a manifest is not one");
    }

    /// A tree an earlier build wrote: its files and the manifest that lists them.
    fn earlier_build(dir: &Path) {
        let artifacts = [Artifact::text("slurm/slurm.conf", "ClusterName=ml\n"), Artifact::text("kubernetes/a.yaml", "a: 1\n")];
        let manifest = crate::build::manifest(&Sources::new(), &artifacts);
        for artifact in artifacts.iter().chain([&manifest]) {
            let path = dir.join(&artifact.path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, &artifact.bytes).expect("write");
        }
    }

    #[test]
    fn only_exactly_an_earlier_builds_tree_is_replaced_without_force() {
        let dir = tempfile::tempdir().expect("temp dir");
        earlier_build(dir.path());
        assert!(holds_earlier_build(dir.path()).expect("walk"), "the tree a build wrote");
        type Forge<'a> = &'a dyn Fn(&Path);
        let forgeries: [(&str, Forge); 5] = [
            ("a file the manifest does not list", &|dir| std::fs::write(dir.join("thesis.tex"), "x").expect("write")),
            ("an edited file", &|dir| std::fs::write(dir.join("slurm/slurm.conf"), "ClusterName=other\n").expect("write")),
            ("an empty directory of its own", &|dir| std::fs::create_dir(dir.join("photos")).expect("mkdir")),
            ("a link for a listed file", &|dir| {
                std::fs::remove_file(dir.join("kubernetes/a.yaml")).expect("rm");
                std::os::unix::fs::symlink("/etc/hostname", dir.join("kubernetes/a.yaml")).expect("link");
            }),
            ("only a forged manifest", &|dir| {
                std::fs::remove_dir_all(dir.join("slurm")).expect("rm");
                std::fs::write(dir.join("data.bin"), "mine").expect("write");
            }),
        ];
        for (what, forge) in forgeries {
            let dir = tempfile::tempdir().expect("temp dir");
            earlier_build(dir.path());
            forge(dir.path());
            assert!(!holds_earlier_build(dir.path()).expect("walk"), "{what}");
        }
    }

    #[test]
    fn a_repository_anywhere_in_the_output_is_refused_even_with_force() {
        let parent = tempfile::tempdir().expect("temp dir");
        let root = parent.path().join("project");
        std::fs::create_dir(&root).expect("mkdir");
        let bare = parent.path().join("bare.git");
        for dir in ["objects/pack", "refs/heads"] {
            std::fs::create_dir_all(bare.join(dir)).expect("mkdir");
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        let holder = parent.path().join("holder");
        std::fs::create_dir_all(holder.join("src/app/.git")).expect("mkdir");
        let nested_bare = parent.path().join("nested");
        std::fs::create_dir_all(&nested_bare).expect("mkdir");
        std::os::unix::fs::symlink(&bare, nested_bare.join("link")).expect("a link is not walked into");
        for (out, expected) in [(&bare, "is a bare git repository"), (&holder, "holds a git work tree at src/app")] {
            let refused = check_output(out, true, &root, &Sources::new()).expect_err("refused with --force");
            assert_eq!(refused.code, Code::OutputOverlapsProject);
            assert!(refused.message.contains(expected), "{}", refused.message);
        }
        assert!(check_output(&nested_bare, true, &root, &Sources::new()).is_ok(), "a link to a repository is not a repository");
    }

    #[test]
    fn a_missing_output_resolves_through_its_existing_ancestor() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(dir.path().join("project")).expect("mkdir");
        std::os::unix::fs::symlink(dir.path().join("project"), dir.path().join("link")).expect("symlink");
        assert_eq!(real_path(&dir.path().join("link/out")).expect("resolve"), real.join("project/out"));
        assert_eq!(real_path(&dir.path().join("new/../project")).expect("resolve"), real.join("project"));
        assert_eq!(real_path(&dir.path().join("new/./deeper/")).expect("resolve"), real.join("new/deeper"));
    }
}
