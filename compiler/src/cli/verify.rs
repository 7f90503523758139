//! `placid verify`: check that committed generated output is exactly what a fresh build of
//! the policy writes, naming each stale, hand-edited, missing and extra file.

use std::path::PathBuf;

use crate::build::{Selection, compile};
use crate::cli::{Exit, Output, ProjectArgs, open, report};
use crate::diff::verify::verify;

/// Arguments of `placid verify`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The committed output directory.
    out: PathBuf,
    #[command(flatten)]
    project: ProjectArgs,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let world = match open(out, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let build = compile(&world, &Selection { only: Vec::new() });
    report(out, args.project.format, &build.sources, &build.diagnostics);
    if build.diagnostics.has_errors() {
        return Exit::Failure;
    }
    let findings = match verify(&args.out, &build.artifacts) {
        Ok(findings) => findings,
        Err(error) => {
            out.errln(format_args!("error: cannot read {}: {error}", args.out.display()));
            return Exit::Usage;
        }
    };
    match args.project.format {
        crate::render::Format::Json => {
            let document = serde_json::json!({ "out": args.out.display().to_string(), "findings": findings });
            out.outln(serde_json::to_string_pretty(&document).unwrap_or_default());
        }
        crate::render::Format::Text => {
            for finding in &findings {
                out.errln(format_args!("{}: {}", finding.problem.as_str(), finding.path));
            }
            if findings.is_empty() {
                out.errln(format_args!("ok: {} matches a fresh build ({} files)", args.out.display(), build.artifacts.len()));
            } else {
                out.errln(format_args!(
                    "{} file(s) in {} do not match a fresh build; run `placid build -o {}`",
                    findings.len(),
                    args.out.display(),
                    args.out.display()
                ));
            }
        }
    }
    if findings.is_empty() { Exit::Ok } else { Exit::Failure }
}
