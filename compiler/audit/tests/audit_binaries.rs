//! The binary audit over ELF files the tests assemble (x86_64, aarch64, riscv64;
//! static executables, PIEs, shared objects, Python extensions), the test binary itself as a
//! real toolchain-built ELF, image tarballs with plain and gzip layers, and garbage and
//! truncated files, which must give errors and never panics.

use std::io::{Read as _, Write};
use std::path::Path;
use std::process::Command;

use placid_audit::{BinaryKind, Linking, audit};

const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;
const EM_RISCV: u16 = 243;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;

/// A little-endian ELF64 header, plus a `PT_INTERP` program header when `interpreter` is given.
fn elf64(machine: u16, file_type: u16, interpreter: Option<&str>) -> Vec<u8> {
    let mut bytes = b"\x7fELF".to_vec();
    bytes.extend([2, 1, 1, 0]); // 64-bit, little-endian, version 1, System V ABI
    bytes.extend([0; 8]);
    bytes.extend(file_type.to_le_bytes());
    bytes.extend(machine.to_le_bytes());
    bytes.extend(1u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes()); // entry
    bytes.extend((if interpreter.is_some() { 64u64 } else { 0 }).to_le_bytes()); // phoff
    bytes.extend(0u64.to_le_bytes()); // shoff
    bytes.extend(0u32.to_le_bytes()); // flags
    bytes.extend(64u16.to_le_bytes()); // ehsize
    bytes.extend(56u16.to_le_bytes()); // phentsize
    bytes.extend(u16::from(interpreter.is_some()).to_le_bytes()); // phnum
    bytes.extend([64, 0, 0, 0, 0, 0]); // shentsize, shnum, shstrndx
    if let Some(interpreter) = interpreter {
        let path = format!("{interpreter}\0");
        bytes.extend(3u32.to_le_bytes()); // PT_INTERP
        bytes.extend(4u32.to_le_bytes()); // PF_R
        bytes.extend(120u64.to_le_bytes()); // offset of the path, right after this header
        bytes.extend([0; 16]); // vaddr, paddr
        bytes.extend((path.len() as u64).to_le_bytes());
        bytes.extend((path.len() as u64).to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.extend(path.as_bytes());
    }
    bytes
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
    std::fs::write(path, bytes).expect("write file");
}

fn tarball(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o755);
        header.set_cksum();
        builder.append_data(&mut header, path, bytes.as_slice()).expect("append to tar");
    }
    builder.into_inner().expect("finish tar")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("finish gzip")
}

#[test]
fn directories_report_binaries_without_a_riscv64_build_by_path_machine_and_kind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let interp = Some("/lib64/ld-linux-x86-64.so.2");
    write(&root.join("bin/tool"), &elf64(EM_X86_64, ET_DYN, interp));
    write(&root.join("bin/static-tool"), &elf64(EM_AARCH64, ET_EXEC, None));
    write(&root.join("lib/x86_64-linux-gnu/libfast.so.1"), &elf64(EM_X86_64, ET_DYN, None));
    write(&root.join("lib/riscv64-linux-gnu/libfast.so.1"), &elf64(EM_RISCV, ET_DYN, None));
    write(&root.join("site/_core.cpython-311-x86_64-linux-gnu.so"), &elf64(EM_X86_64, ET_DYN, None));
    write(&root.join("site/_ext.abi3.so"), &elf64(EM_X86_64, ET_DYN, None));
    write(&root.join("bin/rv-only"), &elf64(EM_RISCV, ET_EXEC, None));
    write(&root.join("README.md"), b"not a binary");

    let report = audit(&[root]);
    assert_eq!(report.binaries.len(), 7);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let missing: Vec<(String, &str, BinaryKind, Linking, Option<&str>)> = report
        .missing_riscv64
        .iter()
        .map(|binary| {
            let relative = binary.path.strip_prefix(&root.display().to_string()).unwrap_or(&binary.path).to_owned();
            (relative, binary.machine.as_str(), binary.kind, binary.linking, binary.python_tag.as_deref())
        })
        .collect();
    assert_eq!(
        missing,
        vec![
            ("/bin/static-tool".to_owned(), "aarch64", BinaryKind::Executable, Linking::Static, None),
            ("/bin/tool".to_owned(), "x86_64", BinaryKind::Executable, Linking::Dynamic, None),
            (
                "/site/_core.cpython-311-x86_64-linux-gnu.so".to_owned(),
                "x86_64",
                BinaryKind::PythonExtension,
                Linking::Dynamic,
                Some("cpython-311")
            ),
            ("/site/_ext.abi3.so".to_owned(), "x86_64", BinaryKind::PythonExtension, Linking::Dynamic, Some("abi3")),
        ]
    );
    assert!(!report.passes());
}

#[test]
fn image_tarballs_with_plain_and_gzip_layers_are_matched_across_architectures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let amd64_layer = tarball(&[
        ("usr/bin/serve", elf64(EM_X86_64, ET_EXEC, None)),
        ("usr/lib/x86_64-linux-gnu/libcuda-shim.so", elf64(EM_X86_64, ET_DYN, None)),
    ]);
    let amd64_python = gzip(&tarball(&[("opt/venv/_kernels.cpython-312-x86_64-linux-gnu.so", elf64(EM_X86_64, ET_DYN, None))]));
    let amd64 = tarball(&[("manifest.json", b"[]".to_vec()), ("3f1e/layer.tar", amd64_layer), ("blobs/sha256/9a2b", amd64_python)]);
    let riscv_layer = gzip(&tarball(&[
        ("usr/bin/serve", elf64(EM_RISCV, ET_EXEC, None)),
        ("usr/lib/riscv64-linux-gnu/libcuda-shim.so", elf64(EM_RISCV, ET_DYN, None)),
    ]));
    let riscv64 = tarball(&[("blobs/sha256/77aa", riscv_layer)]);
    let amd64_path = dir.path().join("image-amd64.tar");
    let riscv_path = dir.path().join("image-riscv64.tar");
    write(&amd64_path, &amd64);
    write(&riscv_path, &riscv64);

    let report = audit(&[&amd64_path, &riscv_path]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.binaries.len(), 5);
    let missing: Vec<&str> = report.missing_riscv64.iter().map(|binary| binary.path.as_str()).collect();
    let expected = format!("{}!blobs/sha256/9a2b!opt/venv/_kernels.cpython-312-x86_64-linux-gnu.so", amd64_path.display());
    assert_eq!(missing, vec![expected.as_str()]);
    assert_eq!(report.missing_riscv64[0].kind, BinaryKind::PythonExtension);
}

#[test]
fn a_real_toolchain_built_binary_is_recognised() {
    // The test executable itself: an ELF built by rustc and the system linker.
    let exe = std::env::current_exe().expect("current exe");
    let report = audit(&[exe.as_path()]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.binaries.len(), 1);
    assert_eq!(report.binaries[0].kind, BinaryKind::Executable);
    assert_eq!(report.binaries[0].machine, std::env::consts::ARCH);
}

#[test]
fn garbage_and_truncated_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    // The ELF header (64 bytes) and its one program header (56 bytes) are what the audit
    // reads; every prefix of them is cut somewhere that matters.
    let whole = elf64(EM_X86_64, ET_DYN, Some("/lib/ld.so"));
    let headers = 64 + 56;
    for length in 0..headers {
        write(&root.join(format!("truncated/{length:03}")), &whole[..length]);
    }
    write(&root.join("garbage/elf-magic"), b"\x7fELF\x09\x09garbage that is no header at all");
    write(&root.join("garbage/gzip"), &[0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7]);
    let mut broken_tar = tarball(&[("usr/bin/x", elf64(EM_X86_64, ET_EXEC, None))]);
    broken_tar.truncate(700);
    write(&root.join("garbage/short.tar"), &broken_tar);

    let report = audit(&[root]);
    // Files shorter than the 4-byte magic are not ELF files and are skipped.
    let truncated_errors = report.errors.iter().filter(|error| error.path.contains("truncated")).count();
    assert_eq!(truncated_errors, headers - 4, "{:#?}", report.errors);
    for name in ["elf-magic", "gzip", "short.tar"] {
        assert!(report.errors.iter().any(|error| error.path.contains(name)), "no error for {name}: {:#?}", report.errors);
    }
    assert!(!report.passes());
}

#[test]
fn the_json_report_names_each_binary_without_a_riscv64_build() {
    let dir = tempfile::tempdir().expect("temp dir");
    let riscv_only = dir.path().join("rv");
    write(&riscv_only.join("bin/tool"), &elf64(EM_RISCV, ET_EXEC, None));
    let mixed = dir.path().join("mixed");
    write(&mixed.join("bin/tool"), &elf64(EM_X86_64, ET_EXEC, None));

    let passing = audit(&[&riscv_only]).to_json();
    assert_eq!(passing["passes"], true);
    assert_eq!(passing["binaries"], 1);

    let failing = audit(&[&mixed]).to_json();
    assert_eq!(failing["passes"], false);
    assert_eq!(failing["missing_riscv64"][0]["machine"], "x86_64");
    assert_eq!(failing["missing_riscv64"][0]["kind"], "executable");
    assert_eq!(failing["missing_riscv64"][0]["linking"], "static");
}

/// A tar holding one entry of type `flag` with `bytes`, optionally after a PAX header.
fn tar_entry(flag: u8, name: &str, bytes: &[u8], pax: &[(&str, &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    if !pax.is_empty() {
        builder.append_pax_extensions(pax.iter().map(|(key, value)| (*key, value.as_bytes()))).expect("pax header");
    }
    let mut header = tar::Header::new_ustar();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o755);
    header.set_entry_type(tar::EntryType::new(flag));
    builder.append_data(&mut header, name, bytes).expect("append to tar");
    builder.into_inner().expect("finish tar")
}

fn audit_one(dir: &Path, name: &str, bytes: &[u8]) -> placid_audit::Report {
    let path = dir.join(name);
    write(&path, bytes);
    audit(&[&path])
}

#[test]
fn contiguous_and_unknown_entry_types_are_examined_like_regular_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    // `7` is a contiguous file; POSIX extracts an unknown type flag as a regular file too.
    for flag in [b'7', b'Z', b'0'] {
        let report = audit_one(
            dir.path(),
            &format!("{}.tar", char::from(flag)),
            &tar_entry(flag, "usr/bin/x", &elf64(EM_X86_64, ET_EXEC, None), &[]),
        );
        assert_eq!(report.missing_riscv64.len(), 1, "type {}: {report:#?}", char::from(flag));
        assert!(!report.passes());
    }
    // Directories and links carry no content of their own.
    let report = audit_one(dir.path(), "dir.tar", &tar_entry(b'5', "usr/bin/", &[], &[]));
    assert!(report.binaries.is_empty() && report.errors.is_empty(), "{report:#?}");
}

#[test]
fn a_multi_volume_continuation_is_not_audited_and_fails_the_gate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = audit_one(dir.path(), "m.tar", &tar_entry(b'M', "usr/bin/x", &[0; 600], &[]));
    assert_eq!(report.errors.len(), 1, "{report:#?}");
    assert!(!report.passes());
}

/// An x86_64 executable with a 4 MiB hole, written as a sparse file on disk.
fn sparse_elf(path: &Path) {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::create(path).expect("create");
    file.write_all(&elf64(EM_X86_64, ET_EXEC, None)).expect("write");
    file.seek(SeekFrom::Start(4 << 20)).expect("seek");
    file.write_all(b"tail of the text segment").expect("write");
}

#[test]
fn sparse_entries_from_gnu_tar_are_examined_in_every_sparse_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("src")).expect("mkdir");
    sparse_elf(&dir.path().join("src/serve"));
    for (format, version) in [("gnu", None), ("pax", Some("0.0")), ("pax", Some("0.1")), ("pax", Some("1.0"))] {
        let tarball = dir.path().join(format!("{format}-{}.tar", version.unwrap_or("gnu")));
        let mut command = Command::new("tar");
        command.arg("--sparse").arg(format!("--format={format}")).arg("-C").arg(dir.path().join("src")).arg("-cf").arg(&tarball);
        if let Some(version) = version {
            command.arg(format!("--sparse-version={version}"));
        }
        assert!(command.arg("serve").status().expect("GNU tar").success());
        // The archive really holds a sparse entry, or this test would prove nothing.
        let bytes = std::fs::read(&tarball).expect("read tarball");
        if format == "gnu" {
            assert_eq!(bytes[156], b'S', "GNU tar wrote no sparse entry");
        } else {
            assert!(bytes.windows(11).any(|window| window == b"GNU.sparse."), "GNU tar wrote no PAX sparse header");
        }
        let report = audit(&[&tarball]);
        assert!(report.errors.is_empty(), "{format} {version:?}: {:#?}", report.errors);
        assert_eq!(report.missing_riscv64.len(), 1, "{format} {version:?}: {report:#?}");
        let binary = &report.missing_riscv64[0];
        assert!(binary.path.ends_with("!serve"), "the real name, not GNUSparseFile: {}", binary.path);
        assert_eq!(binary.machine, "x86_64");
    }
}

#[test]
fn a_pax_sparse_file_whose_map_cannot_be_read_is_not_audited() {
    let dir = tempfile::tempdir().expect("temp dir");
    let elf = elf64(EM_X86_64, ET_EXEC, None);
    let size = elf.len().to_string();
    let cases: &[&[(&str, &str)]] = &[
        &[("GNU.sparse.major", "2"), ("GNU.sparse.minor", "0"), ("GNU.sparse.realsize", &size)],
        // Regions out of order cannot be streamed.
        &[("GNU.sparse.map", "100,10,0,10"), ("GNU.sparse.size", "200")],
        &[("GNU.sparse.map", "0,10,5"), ("GNU.sparse.size", "200")],
    ];
    for (index, pax) in cases.iter().enumerate() {
        let report = audit_one(dir.path(), &format!("{index}.tar"), &tar_entry(b'0', "GNUSparseFile.0/x", &elf, pax));
        assert_eq!(report.errors.len(), 1, "case {index}: {report:#?}");
        assert!(!report.passes());
    }
}

#[test]
fn entry_names_cannot_forge_report_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let name = "usr/bin/x\nall binaries have a riscv64 build\x1b[2K";
    let path = dir.path().join("forged.tar");
    write(&path, &tar_entry(b'0', name, &elf64(EM_X86_64, ET_EXEC, None), &[]));
    let lines = audit(&[&path]).missing_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert!(!line.contains('\n'), "{line}");
    assert!(line.contains("usr/bin/x\\nall binaries") && line.contains("\\u{1b}[2K"), "{line}");
    assert!(!line.contains('\x1b'));
}

/// Set in the child process [`a_gzip_of_a_huge_entry_is_skipped_in_bounded_memory`] starts:
/// the path of the tarball to audit.
const HUGE_TARBALL: &str = "PLACID_AUDIT_HUGE_TARBALL";

#[test]
fn a_gzip_of_a_huge_entry_is_skipped_in_bounded_memory() {
    if let Some(path) = std::env::var_os(HUGE_TARBALL) {
        let report = audit(&[Path::new(&path)]);
        assert!(!report.passes(), "{report:#?}");
        return;
    }
    // 512 MiB of zeros after an ELF header, gzipped to about half a megabyte: the audit reads
    // the head and streams past the rest, where it used to hold the whole entry in memory.
    let mut header = tar::Header::new_ustar();
    let elf = elf64(EM_X86_64, ET_EXEC, None);
    let size = 512u64 << 20;
    header.set_size(size);
    header.set_mode(0o755);
    header.set_path("usr/bin/huge").expect("path");
    header.set_cksum();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(header.as_bytes()).expect("gzip");
    encoder.write_all(&elf).expect("gzip");
    std::io::copy(&mut std::io::repeat(0).take(size - elf.len() as u64), &mut encoder).expect("gzip");
    encoder.write_all(&[0; 1024]).expect("gzip");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("huge.tar.gz");
    write(&path, &encoder.finish().expect("finish gzip"));

    // The audit runs alone in a child (this test binary, running only this test), so its
    // peak resident set is measured apart from the other tests' threads.
    let child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "a_gzip_of_a_huge_entry_is_skipped_in_bounded_memory", "--test-threads=1"])
        .env(HUGE_TARBALL, &path)
        .output()
        .expect("run the audit in a child");
    assert!(child.status.success(), "{}", String::from_utf8_lossy(&child.stdout));
    // The largest resident set of any child this test process has waited for; the other
    // children of this test binary (GNU tar) stay far below the bar.
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given.
    let usage = unsafe {
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()), 0);
        usage.assume_init()
    };
    let peak_kib = usage.ru_maxrss;
    assert!(peak_kib < 64 << 10, "peak RSS {peak_kib} KiB for a 512 MiB entry");
}
