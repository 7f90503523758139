//! The binary audit behind `placid audit-binaries`: find every architecture-specific ELF
//! binary in directories, files and OCI image tarballs, and report those without a riscv64
//! build beside them.
//!
//! A binary "has a riscv64 build" when the scan also found a riscv64 ELF with the same name
//! once architecture tokens are blanked out, so `libfoo.so` under `x86_64-linux-gnu/` and
//! under `riscv64-linux-gnu/`, or `_core.cpython-311-x86_64-linux-gnu.so` and
//! `_core.cpython-311-riscv64-linux-gnu.so`, are one binary built twice. ELF headers are
//! read with the `object` crate; tarballs (plain or gzip, nested as in `docker save` and OCI
//! layouts) are streamed with `tar` and `flate2`. Invariant: no input panics; an unreadable
//! or malformed file is an [`AuditError`] with its path, and the walk goes on.

use std::collections::BTreeSet;
use std::io::{self, Read};
use std::path::Path;

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use placid_lang::model::Arch;

/// Tarballs inside tarballs are followed this deep (an image tarball holding layer
/// tarballs is depth 2), so a crafted archive cannot recurse without end.
const MAX_TAR_DEPTH: usize = 4;

/// ELF files larger than this are reported as errors instead of being read into memory.
const MAX_ELF_BYTES: u64 = 2 << 30;

/// What an ELF file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BinaryKind {
    /// A program (`ET_EXEC`, or `ET_DYN` with an interpreter: a PIE).
    Executable,
    /// A shared library.
    SharedObject,
    /// A CPython extension module (`*.cpython-*.so`, or `*.abi3.so`).
    PythonExtension,
    /// An object file or anything else.
    Other,
}

impl BinaryKind {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryKind::Executable => "executable",
            BinaryKind::SharedObject => "shared-object",
            BinaryKind::PythonExtension => "python-extension",
            BinaryKind::Other => "other",
        }
    }
}

/// How a binary is linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Linking {
    /// No program interpreter: runs without the dynamic loader.
    Static,
    /// Loaded by the dynamic loader.
    Dynamic,
}

impl Linking {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Linking::Static => "static",
            Linking::Dynamic => "dynamic",
        }
    }
}

/// One ELF binary found by the scan.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Binary {
    /// Where it is: a file path, with `!` separating a tarball from the entry inside it.
    pub path: String,
    /// The machine it is built for (`x86_64`, `aarch64`, `riscv64`, `em-40`...).
    pub machine: String,
    /// Executable, shared object or Python extension.
    pub kind: BinaryKind,
    /// Static or dynamic.
    pub linking: Linking,
    /// The CPython tag of a Python extension (`cpython-311`, `abi3`).
    pub python_tag: Option<String>,
}

/// A file the scan could not read or parse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AuditError {
    /// Where it is.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// The result of a scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Every ELF binary found, sorted by path.
    pub binaries: Vec<Binary>,
    /// Binaries with no riscv64 build, sorted by path.
    pub missing_riscv64: Vec<Binary>,
    /// Files that could not be audited, sorted by path.
    pub errors: Vec<AuditError>,
}

impl Report {
    /// Whether the images pass the gate: every binary has a riscv64 build and every file
    /// could be read.
    pub fn passes(&self) -> bool {
        self.missing_riscv64.is_empty() && self.errors.is_empty()
    }
}

/// The machine name the gate looks for, as policies and `uname -m` write it.
const RISCV64: &str = Arch::Riscv64.as_str();

/// Scans `paths` (directories, files, tarballs) and reports.
pub fn audit(paths: &[&Path]) -> Report {
    let mut scan = Scan::default();
    for path in paths {
        scan.root = path.display().to_string();
        scan.path(path);
    }
    let built_for_riscv: BTreeSet<&str> =
        scan.binaries.iter().filter(|(_, binary)| binary.machine == RISCV64).map(|(key, _)| key.as_str()).collect();
    let mut missing_riscv64: Vec<Binary> = scan
        .binaries
        .iter()
        .filter(|(key, binary)| binary.machine != RISCV64 && !built_for_riscv.contains(key.as_str()))
        .map(|(_, binary)| binary.clone())
        .collect();
    missing_riscv64.sort();
    let mut binaries: Vec<Binary> = scan.binaries.into_iter().map(|(_, binary)| binary).collect();
    binaries.sort();
    let mut errors = scan.errors;
    errors.sort();
    Report { binaries, missing_riscv64, errors }
}

#[derive(Default)]
struct Scan {
    /// The argument being walked, whose prefix build keys leave out.
    root: String,
    /// Binaries with their build keys.
    binaries: Vec<(String, Binary)>,
    errors: Vec<AuditError>,
}

impl Scan {
    fn error(&mut self, path: &str, message: impl std::fmt::Display) {
        self.errors.push(AuditError { path: path.to_owned(), message: message.to_string() });
    }

    fn path(&mut self, path: &Path) {
        let shown = path.display().to_string();
        // symlink_metadata: a link is never followed, so a scan cannot leave the tree or loop.
        let metadata = match std::fs::symlink_metadata(path) {
            Ok(metadata) => metadata,
            Err(error) => return self.error(&shown, error),
        };
        if metadata.is_dir() {
            let mut entries: Vec<_> = match std::fs::read_dir(path) {
                Ok(entries) => entries.filter_map(Result::ok).map(|entry| entry.path()).collect(),
                Err(error) => return self.error(&shown, error),
            };
            entries.sort();
            for entry in entries {
                self.path(&entry);
            }
        } else if metadata.is_file() {
            match std::fs::File::open(path) {
                Ok(mut file) => self.stream(&shown, metadata.len(), &mut file, 0),
                Err(error) => self.error(&shown, error),
            }
        }
    }

    /// Sniffs the first bytes of a stream: ELF, gzip or tar; anything else is skipped.
    fn stream(&mut self, path: &str, size: u64, reader: &mut dyn Read, depth: usize) {
        let mut head = Vec::with_capacity(512);
        if let Err(error) = reader.take(512).read_to_end(&mut head) {
            return self.error(path, error);
        }
        let mut whole = io::Cursor::new(head.clone()).chain(reader);
        if head.starts_with(b"\x7fELF") {
            self.elf(path, size, &mut whole);
        } else if head.starts_with(&[0x1f, 0x8b]) {
            if depth >= MAX_TAR_DEPTH {
                return self.error(path, "archives nested too deep");
            }
            self.gzip(path, &mut flate2::read::GzDecoder::new(whole), depth);
        } else if is_tar_header(&head) {
            if depth >= MAX_TAR_DEPTH {
                return self.error(path, "archives nested too deep");
            }
            self.tar(path, &mut whole, depth + 1);
        }
    }

    /// A gzip stream holds one file; only tarballs and ELF files inside are of interest.
    fn gzip(&mut self, path: &str, reader: &mut dyn Read, depth: usize) {
        let mut head = Vec::with_capacity(512);
        if let Err(error) = reader.take(512).read_to_end(&mut head) {
            return self.error(path, format!("bad gzip stream: {error}"));
        }
        let mut whole = io::Cursor::new(head.clone()).chain(reader);
        if is_tar_header(&head) {
            self.tar(path, &mut whole, depth + 1);
        } else if head.starts_with(b"\x7fELF") {
            self.elf(path, MAX_ELF_BYTES, &mut whole);
        }
    }

    fn tar(&mut self, path: &str, reader: &mut dyn Read, depth: usize) {
        let mut archive = tar::Archive::new(reader);
        let entries = match archive.entries() {
            Ok(entries) => entries,
            Err(error) => return self.error(path, format!("bad tar archive: {error}")),
        };
        for entry in entries {
            let mut entry = match entry {
                Ok(entry) => entry,
                Err(error) => return self.error(path, format!("bad tar archive: {error}")),
            };
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let name = entry.path().map(|name| name.display().to_string()).unwrap_or_else(|_| "<non-UTF-8 name>".to_owned());
            let size = entry.size();
            self.stream(&format!("{path}!{name}"), size, &mut entry, depth);
        }
    }

    fn elf(&mut self, path: &str, size: u64, reader: &mut dyn Read) {
        if size > MAX_ELF_BYTES {
            return self.error(path, format!("ELF file of {size} bytes is too large to audit"));
        }
        let mut data = Vec::new();
        if let Err(error) = reader.take(MAX_ELF_BYTES).read_to_end(&mut data) {
            return self.error(path, error);
        }
        match classify(path, &data) {
            Ok(binary) => self.binaries.push((build_key(&self.root, path), binary)),
            Err(message) => self.error(path, message),
        }
    }
}

/// Whether `head` starts with a POSIX or GNU tar header (`ustar` magic at offset 257).
fn is_tar_header(head: &[u8]) -> bool {
    head.get(257..262) == Some(b"ustar")
}

/// Reads the ELF header and program headers of `data`.
fn classify(path: &str, data: &[u8]) -> Result<Binary, String> {
    // `e_ident[EI_CLASS]`, the byte after the magic.
    match data.get(4) {
        Some(&elf::ELFCLASS32) => classify_class::<elf::FileHeader32<object::Endianness>>(path, data),
        Some(&elf::ELFCLASS64) => classify_class::<elf::FileHeader64<object::Endianness>>(path, data),
        _ => Err("not a 32- or 64-bit ELF file".to_owned()),
    }
}

fn classify_class<Header: FileHeader<Endian = object::Endianness>>(path: &str, data: &[u8]) -> Result<Binary, String> {
    let header = Header::parse(data).map_err(|error| format!("bad ELF header: {error}"))?;
    let endian = header.endian().map_err(|error| format!("bad ELF header: {error}"))?;
    let program_headers = header.program_headers(endian, data).map_err(|error| format!("bad ELF program headers: {error}"))?;
    let interpreted = program_headers.iter().any(|program_header| program_header.p_type(endian) == elf::PT_INTERP);
    let file_name = path.rsplit(['/', '!']).next().unwrap_or(path);
    let python_tag = python_tag(file_name);
    let kind = match header.e_type(endian) {
        elf::ET_EXEC => BinaryKind::Executable,
        elf::ET_DYN if interpreted => BinaryKind::Executable,
        elf::ET_DYN if python_tag.is_some() => BinaryKind::PythonExtension,
        elf::ET_DYN => BinaryKind::SharedObject,
        _ => BinaryKind::Other,
    };
    let machine = match (header.e_machine(endian), header.is_class_64()) {
        (elf::EM_X86_64, _) => Arch::X86_64.as_str().to_owned(),
        (elf::EM_386, _) => "i386".to_owned(),
        (elf::EM_AARCH64, _) => Arch::Aarch64.as_str().to_owned(),
        (elf::EM_ARM, _) => "arm".to_owned(),
        (elf::EM_RISCV, true) => RISCV64.to_owned(),
        (elf::EM_RISCV, false) => "riscv32".to_owned(),
        (elf::EM_PPC64, _) => "ppc64".to_owned(),
        (elf::EM_S390, _) => "s390x".to_owned(),
        (other, _) => format!("em-{other}"),
    };
    let linking = if interpreted { Linking::Dynamic } else { Linking::Static };
    // A shared object always goes through the loader, even without an interpreter of its own.
    let linking = if matches!(kind, BinaryKind::SharedObject | BinaryKind::PythonExtension) { Linking::Dynamic } else { linking };
    Ok(Binary { path: path.to_owned(), machine, kind, linking, python_tag })
}

/// The CPython tag of an extension module file name: `cpython-311` of
/// `_core.cpython-311-x86_64-linux-gnu.so`, `abi3` of `_core.abi3.so`.
fn python_tag(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".so")?;
    let tag = stem.rsplit('.').next()?;
    if tag == "abi3" {
        return Some(tag.to_owned());
    }
    let version = tag.strip_prefix("cpython-")?;
    let digits: String = version.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then(|| format!("cpython-{digits}"))
}

/// The name of a binary relative to the scanned argument `root`, with its architecture
/// blanked out, so builds of one binary for two architectures share it.
fn build_key(root: &str, path: &str) -> String {
    const ARCH_TOKENS: &[&str] = &["x86_64", "x86-64", "amd64", "aarch64", "arm64", "riscv64", "i386", "i686", "armhf", "ppc64le", "s390x"];
    // Inside a tarball only the entry path names the binary: the tarball's and the layer's
    // names differ between the per-architecture images. A lone file is known by its name.
    let inner = match path.rsplit_once('!') {
        Some((_, entry)) => entry,
        None if path == root => path.rsplit('/').next().unwrap_or(path),
        None => path.strip_prefix(root).unwrap_or(path),
    };
    let mut key = inner.trim_start_matches("./").trim_start_matches('/').to_owned();
    for token in ARCH_TOKENS {
        key = key.replace(token, "*");
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_tags_come_from_the_file_name() {
        assert_eq!(python_tag("_core.cpython-311-x86_64-linux-gnu.so").as_deref(), Some("cpython-311"));
        assert_eq!(python_tag("_core.abi3.so").as_deref(), Some("abi3"));
        assert_eq!(python_tag("libfoo.so"), None);
        assert_eq!(python_tag("libfoo.so.1"), None);
    }

    #[test]
    fn build_keys_blank_out_architectures() {
        assert_eq!(build_key("img.tar", "img.tar!layer.tar!usr/lib/x86_64-linux-gnu/libz.so.1"), "usr/lib/*-linux-gnu/libz.so.1");
        assert_eq!(build_key("rv", "rv/usr/lib/riscv64-linux-gnu/libz.so.1"), "usr/lib/*-linux-gnu/libz.so.1");
        assert_eq!(
            build_key("x/_core.cpython-311-x86_64-linux-gnu.so", "x/_core.cpython-311-x86_64-linux-gnu.so"),
            "_core.cpython-311-*-linux-gnu.so"
        );
    }
}
