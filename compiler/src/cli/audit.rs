//! `placid audit-binaries PATH...`: the binary-audit compatibility gate of a migration, as a
//! CI step. Exit 0 when every ELF binary has a riscv64 build, 1 when some do not or a file
//! could not be audited, 2 when a path does not exist.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::audit::{Binary, Report, audit, escaped};
use crate::cli::{Exit, Output};
use crate::render::Format;

/// Arguments of `placid audit-binaries`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directories, files and image tarballs (`docker save`, OCI layout, layer .tar/.tar.gz).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format of the report.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    if let Some(missing) = args.paths.iter().find(|path| std::fs::symlink_metadata(path).is_err()) {
        out.errln(format_args!("error: {} does not exist", missing.display()));
        return Exit::Usage;
    }
    let paths: Vec<&Path> = args.paths.iter().map(PathBuf::as_path).collect();
    let report = audit(&paths);
    match args.format {
        Format::Json => out.outln(serde_json::to_string_pretty(&to_json(&report)).unwrap_or_default()),
        Format::Text => print_text(out, &report),
    }
    if report.passes() { Exit::Ok } else { Exit::Failure }
}

fn print_text(out: &mut Output, report: &Report) {
    for binary in &report.missing_riscv64 {
        let tag = binary.python_tag.as_deref().map(|tag| format!(" ({tag})")).unwrap_or_default();
        out.outln(format_args!(
            "{}: {} {} {}{tag}, no riscv64 build",
            escaped(&binary.path),
            binary.machine,
            binary.linking.as_str(),
            binary.kind.as_str()
        ));
    }
    for error in &report.errors {
        out.errln(format_args!("error: {}: {}", escaped(&error.path), escaped(&error.message)));
    }
    out.errln(format_args!(
        "{} ELF binaries, {} without a riscv64 build, {} files not audited",
        report.binaries.len(),
        report.missing_riscv64.len(),
        report.errors.len()
    ));
}

fn binary_json(binary: &Binary) -> serde_json::Value {
    json!({
        "path": binary.path,
        "machine": binary.machine,
        "kind": binary.kind.as_str(),
        "linking": binary.linking.as_str(),
        "python_tag": binary.python_tag,
    })
}

fn to_json(report: &Report) -> serde_json::Value {
    json!({
        "passes": report.passes(),
        "binaries": report.binaries.len(),
        "missing_riscv64": report.missing_riscv64.iter().map(binary_json).collect::<Vec<_>>(),
        "errors": report.errors.iter().map(|error| json!({"path": error.path, "message": error.message})).collect::<Vec<_>>(),
    })
}
