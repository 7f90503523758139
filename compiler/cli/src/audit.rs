//! `placid audit-binaries PATH...`: the binary-audit compatibility gate of a migration, as a
//! CI step. Exit 0 when every ELF binary has a riscv64 build, 1 when some do not or a file
//! could not be audited, 2 when a path does not exist.

use std::path::{Path, PathBuf};

use placid_audit::audit;
use placid_driver::render::{Choice, Format, json_text};
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;

use crate::pipeline;
use crate::{Exit, Output, choice};

/// Arguments of `placid audit-binaries`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directories, files and image tarballs (`docker save`, OCI layout, layer .tar/.tar.gz).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format of the report.
    #[arg(long, value_parser = choice::<Format>(), default_value = Format::Text.name())]
    format: Format,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    if let Some(missing) = args.paths.iter().find(|path| std::fs::symlink_metadata(path).is_err()) {
        let diagnostic = Diagnostic::error(Code::InputUnreadable, Span::DETACHED, format!("{} does not exist", missing.display()))
            .help("pass directories, files or image tarballs that exist");
        return pipeline::fail(out, args.format, diagnostic);
    }
    let paths: Vec<&Path> = args.paths.iter().map(PathBuf::as_path).collect();
    let report = audit(&paths);
    match args.format {
        Format::Json => out.outln(json_text(&report.to_json())),
        Format::Text => {
            for line in report.missing_lines() {
                out.outln(line);
            }
            for line in report.error_lines() {
                out.errln(format_args!("error: {line}"));
            }
            out.errln(report.summary());
        }
    }
    if report.passes() { Exit::Ok } else { Exit::Failure }
}
