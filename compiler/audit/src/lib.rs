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

/// Archives and gzip streams inside each other are followed this deep (an image tarball
/// holding gzip layer tarballs is depth 3), so a crafted archive (or a gzip quine, which
/// decompresses to itself) cannot recurse without end.
const MAX_NESTING: usize = 6;

/// Bytes read from the start of a file to judge it: the ELF header and, in every real
/// binary, its program headers. Nothing more of a file is held in memory, so a huge entry
/// (or a gzip of gigabytes of zeros) costs time to skip, not memory.
const HEAD_BYTES: u64 = 64 << 10;

/// How far into a file program headers are looked for when they are not in the head; a
/// file whose headers lie further is not audited.
const MAX_HEADER_BYTES: u64 = 1 << 20;

/// Bytes one decompressed or sparse-expanded stream may produce before the scan gives up on
/// it (as not audited): real image layers are a few GiB, a 2 MB gzip can expand to 2 GB.
const MAX_EXPANDED_BYTES: u64 = 16 << 30;

/// Sparse-map entries accepted in one PAX sparse file.
const MAX_SPARSE_REGIONS: usize = 1 << 16;

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

    /// One escaped line per binary without a riscv64 build (the report proper).
    pub fn missing_lines(&self) -> Vec<String> {
        self.missing_riscv64
            .iter()
            .map(|binary| {
                let tag = binary.python_tag.as_deref().map(|tag| format!(" ({tag})")).unwrap_or_default();
                format!(
                    "{}: {} {} {}{tag}, no riscv64 build",
                    escaped(&binary.path),
                    binary.machine,
                    binary.linking.as_str(),
                    binary.kind.as_str()
                )
            })
            .collect()
    }

    /// One escaped line per file not audited.
    pub fn error_lines(&self) -> Vec<String> {
        self.errors.iter().map(|error| format!("{}: {}", escaped(&error.path), escaped(&error.message))).collect()
    }

    /// The counts, in one line.
    pub fn summary(&self) -> String {
        format!(
            "{} ELF binaries, {} without a riscv64 build, {} files not audited",
            self.binaries.len(),
            self.missing_riscv64.len(),
            self.errors.len()
        )
    }

    /// The JSON form: `passes`, the number of binaries, those without a riscv64 build and the
    /// files not audited.
    pub fn to_json(&self) -> serde_json::Value {
        let binary = |binary: &Binary| {
            serde_json::json!({
                "path": binary.path,
                "machine": binary.machine,
                "kind": binary.kind.as_str(),
                "linking": binary.linking.as_str(),
                "python_tag": binary.python_tag,
            })
        };
        serde_json::json!({
            "passes": self.passes(),
            "binaries": self.binaries.len(),
            "missing_riscv64": self.missing_riscv64.iter().map(binary).collect::<Vec<_>>(),
            "errors": self.errors.iter().map(|error| serde_json::json!({"path": error.path, "message": error.message})).collect::<Vec<_>>(),
        })
    }
}

/// A path or message as one line of a text report, through the one terminal escape
/// ([`placid_lang::escape::terminal`]): control characters (a `\n` or an ANSI escape in a
/// crafted entry name) are escaped, so a name cannot forge report lines.
pub fn escaped(text: &str) -> String {
    placid_lang::escape::terminal(text).into_owned()
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
                Ok(mut file) => self.stream(&shown, &mut file, 0),
                Err(error) => self.error(&shown, error),
            }
        }
    }

    /// Sniffs the first bytes of a stream: ELF, gzip or tar; anything else is skipped.
    fn stream(&mut self, path: &str, reader: &mut dyn Read, depth: usize) {
        let mut head = Vec::with_capacity(512);
        if let Err(error) = reader.take(512).read_to_end(&mut head) {
            return self.error(path, error);
        }
        let mut whole = io::Cursor::new(head.clone()).chain(reader);
        if head.starts_with(b"\x7fELF") {
            self.elf(path, &mut whole);
        } else if head.starts_with(&[0x1f, 0x8b]) {
            if depth >= MAX_NESTING {
                return self.error(path, "archives nested too deep");
            }
            let mut decoded = Bounded::new(flate2::read::GzDecoder::new(whole));
            self.stream(path, &mut decoded, depth + 1);
        } else if is_tar_header(&head) {
            if depth >= MAX_NESTING {
                return self.error(path, "archives nested too deep");
            }
            self.tar(path, &mut whole, depth + 1);
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
            let name = entry.path().map(|name| name.display().to_string()).unwrap_or_else(|_| "<non-UTF-8 name>".to_owned());
            let shown = format!("{path}!{name}");
            match extracts_to(entry.header().entry_type()) {
                Extracts::Nothing => {}
                Extracts::Unknowable => self.error(&shown, "a multi-volume continuation cannot be judged on its own"),
                Extracts::File => match sparse_map(&mut entry) {
                    Ok(None) => self.stream(&shown, &mut entry, depth),
                    Ok(Some(sparse)) => {
                        let shown = sparse.name.as_deref().map_or(shown, |name| format!("{path}!{name}"));
                        match sparse.expand(&mut entry) {
                            Ok(expanded) => self.stream(&shown, &mut Bounded::new(expanded), depth),
                            Err(error) => self.error(&shown, format!("bad PAX sparse file: {error}")),
                        }
                    }
                    Err(error) => self.error(&shown, format!("bad PAX sparse file: {error}")),
                },
            }
        }
    }

    /// Judges an ELF file from its first bytes.
    fn elf(&mut self, path: &str, reader: &mut dyn Read) {
        let mut data = Vec::new();
        if let Err(error) = reader.take(HEAD_BYTES).read_to_end(&mut data) {
            return self.error(path, error);
        }
        let mut judged = classify(path, &data);
        // Program headers beyond the head are rare but legal: read on, a bounded distance.
        if judged.is_err() && data.len() as u64 == HEAD_BYTES {
            if let Err(error) = reader.take(MAX_HEADER_BYTES - HEAD_BYTES).read_to_end(&mut data) {
                return self.error(path, error);
            }
            judged = classify(path, &data);
        }
        match judged {
            Ok(binary) => self.binaries.push((build_key(&self.root, path), binary)),
            Err(message) => self.error(path, message),
        }
    }
}

/// What a tar entry of some type becomes when extracted.
enum Extracts {
    /// A regular file: examined.
    File,
    /// No file content of its own (directories, links, devices).
    Nothing,
    /// File content that cannot be judged from this archive alone.
    Unknowable,
}

/// POSIX says an unknown type flag extracts as a regular file, and so do contiguous (`7`) and
/// GNU sparse (`S`, which `tar` expands) entries; all of them are examined, since skipping an
/// unfamiliar type would let an executable through the gate unseen.
fn extracts_to(entry_type: tar::EntryType) -> Extracts {
    use tar::EntryType;
    match entry_type {
        EntryType::Link | EntryType::Symlink | EntryType::Char | EntryType::Block | EntryType::Directory | EntryType::Fifo => {
            Extracts::Nothing
        }
        // Headers `tar` already applied to the entry that follows.
        EntryType::XHeader | EntryType::XGlobalHeader | EntryType::GNULongName | EntryType::GNULongLink => Extracts::Nothing,
        other => match other.as_byte() {
            // GNU volume label and dump directory: metadata only.
            b'V' | b'D' => Extracts::Nothing,
            // GNU multi-volume continuation: the middle of a file from another volume.
            b'M' => Extracts::Unknowable,
            _ => Extracts::File,
        },
    }
}

/// A PAX sparse file (GNU tar's `--sparse --format=pax`): its real name and size and the data
/// regions that the entry's content holds one after another, holes between them.
struct SparseFile {
    name: Option<String>,
    size: u64,
    /// `(offset, length)` in the real file, in the order the content holds them; `None` for
    /// format 1.0, whose map starts the content.
    regions: Option<Vec<(u64, u64)>>,
}

/// The sparse description in the entry's PAX header, if it has one (formats 0.0, 0.1, 1.0).
fn sparse_map(entry: &mut tar::Entry<'_, &mut dyn Read>) -> Result<Option<SparseFile>, String> {
    let Some(extensions) = entry.pax_extensions().map_err(|error| error.to_string())? else { return Ok(None) };
    let mut keys: Vec<(String, String)> = Vec::new();
    for extension in extensions {
        let extension = extension.map_err(|error| error.to_string())?;
        let (Ok(key), Ok(value)) = (extension.key(), extension.value()) else { continue };
        if key.starts_with("GNU.sparse.") {
            keys.push((key.to_owned(), value.to_owned()));
        }
    }
    if keys.is_empty() {
        return Ok(None);
    }
    let get = |wanted: &str| keys.iter().find(|(key, _)| key == wanted).map(|(_, value)| value.as_str());
    let number = |text: &str| text.trim().parse::<u64>().map_err(|_| format!("`{}` is not a size", escaped(text)));
    let name = get("GNU.sparse.name").map(str::to_owned);
    let version = (get("GNU.sparse.major"), get("GNU.sparse.minor"));
    let (size, regions) = match version {
        (Some("1"), Some("0")) => (get("GNU.sparse.realsize"), None),
        (None, None) if get("GNU.sparse.map").is_some() => {
            let numbers = get("GNU.sparse.map").unwrap_or_default().split(',').map(number).collect::<Result<Vec<_>, _>>()?;
            (get("GNU.sparse.size"), Some(pairs(&numbers)?))
        }
        (None, None) if get("GNU.sparse.offset").is_some() => {
            let numbers = keys
                .iter()
                .filter(|(key, _)| key == "GNU.sparse.offset" || key == "GNU.sparse.numbytes")
                .map(|(_, value)| number(value))
                .collect::<Result<Vec<_>, _>>()?;
            (get("GNU.sparse.size"), Some(pairs(&numbers)?))
        }
        (major, minor) => {
            return Err(format!("unsupported sparse format {}.{}", escaped(major.unwrap_or("?")), escaped(minor.unwrap_or("?"))));
        }
    };
    let size = number(size.ok_or("the real size is missing")?)?;
    Ok(Some(SparseFile { name, size, regions }))
}

/// `[o1, l1, o2, l2, ...]` as `(offset, length)` pairs, bounded in number.
fn pairs(numbers: &[u64]) -> Result<Vec<(u64, u64)>, String> {
    if !numbers.len().is_multiple_of(2) || numbers.len() / 2 > MAX_SPARSE_REGIONS {
        return Err(format!("a sparse map of {} numbers", numbers.len()));
    }
    Ok(numbers.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}

impl SparseFile {
    /// The real file's bytes, holes as zeros, read lazily from the entry's content.
    fn expand<'r>(self, content: &'r mut dyn Read) -> Result<Expanded<'r>, String> {
        let regions = match self.regions {
            Some(regions) => regions,
            None => read_map_block(content)?,
        };
        // The content holds regions in map order; streaming needs them ascending and apart.
        let mut end = 0u64;
        for &(offset, length) in &regions {
            let region_end = offset.checked_add(length).ok_or("a sparse region past 2^64 bytes")?;
            if offset < end || region_end > self.size {
                return Err("sparse regions out of order, overlapping or past the file's size".to_owned());
            }
            end = region_end;
        }
        Ok(Expanded { content, regions: regions.into(), position: 0, size: self.size })
    }
}

/// Format 1.0's map: decimal lines (count, then offset and length of each region), padded
/// to a 512-byte block, before the data.
fn read_map_block(content: &mut dyn Read) -> Result<Vec<(u64, u64)>, String> {
    let mut consumed = 0usize;
    let mut line = || -> Result<u64, String> {
        let mut digits = String::new();
        loop {
            let mut byte = [0u8];
            content.read_exact(&mut byte).map_err(|error| error.to_string())?;
            consumed += 1;
            match byte[0] {
                b'\n' => break,
                digit @ b'0'..=b'9' if digits.len() < 20 => digits.push(char::from(digit)),
                _ => return Err("a sparse map line that is not a number".to_owned()),
            }
        }
        digits.parse().map_err(|_| "a sparse map number past 2^64".to_owned())
    };
    let count = usize::try_from(line()?).unwrap_or(usize::MAX);
    if count > MAX_SPARSE_REGIONS {
        return Err(format!("a sparse map of {count} regions"));
    }
    let mut regions = Vec::with_capacity(count);
    for _ in 0..count {
        regions.push((line()?, line()?));
    }
    let padding = (512 - consumed % 512) % 512;
    io::copy(&mut content.take(padding as u64), &mut io::sink()).map_err(|error| error.to_string())?;
    Ok(regions)
}

/// A sparse file's real bytes: zeros in the holes, the entry's content in the regions.
struct Expanded<'r> {
    content: &'r mut dyn Read,
    regions: std::collections::VecDeque<(u64, u64)>,
    position: u64,
    size: u64,
}

impl Read for Expanded<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while let Some(&(offset, length)) = self.regions.front() {
            if self.position >= offset + length {
                self.regions.pop_front();
                continue;
            }
            if self.position < offset {
                return Ok(self.zeros(buffer, offset));
            }
            let want = usize::try_from(offset + length - self.position).unwrap_or(usize::MAX).min(buffer.len());
            let read = self.content.read(&mut buffer[..want])?;
            if read == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "sparse data ends early"));
            }
            self.position += read as u64;
            return Ok(read);
        }
        Ok(self.zeros(buffer, self.size))
    }
}

impl Expanded<'_> {
    /// Fills `buffer` with the hole's zeros up to `until`.
    fn zeros(&mut self, buffer: &mut [u8], until: u64) -> usize {
        let count = usize::try_from(until - self.position).unwrap_or(usize::MAX).min(buffer.len());
        buffer[..count].fill(0);
        self.position += count as u64;
        count
    }
}

/// A stream that fails once it has produced [`MAX_EXPANDED_BYTES`], so a decompression bomb
/// costs bounded time and is reported as not audited.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R> Bounded<R> {
    fn new(inner: R) -> Bounded<R> {
        Bounded { inner, left: MAX_EXPANDED_BYTES }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::other(format!("expands past {} GiB", MAX_EXPANDED_BYTES >> 30)));
        }
        let want = usize::try_from(self.left).unwrap_or(usize::MAX).min(buffer.len());
        let read = self.inner.read(&mut buffer[..want])?;
        self.left -= read as u64;
        Ok(read)
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
