//! `placid verify`: check that committed generated output is exactly what a fresh build of
//! the policy writes, naming each stale, hand-edited, missing and extra file.

use std::path::PathBuf;

use placid_driver::build::Selection;
use placid_driver::render::Format;
use placid_gitops::verify::verify;

use crate::pipeline::{self, Fields};
use crate::{Exit, Output, ProjectArgs};

/// Arguments of `placid verify`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The committed output directory.
    out: PathBuf,
    #[command(flatten)]
    project: ProjectArgs,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let format = args.project.format;
    let build = match pipeline::compile_project(out, &args.project, &Selection::default()) {
        Ok(compiled) => compiled.build,
        Err(exit) => return exit,
    };
    if build.diagnostics.has_errors() {
        return pipeline::report(out, format, &build.sources, &build.diagnostics, Fields::new());
    }
    let findings = match verify(&args.out, &build.artifacts) {
        Ok(findings) => findings,
        Err(error) => return pipeline::unreadable(out, format, "the generated tree", &args.out, error),
    };
    let mut fields = Fields::new();
    fields.insert("out".to_owned(), args.out.display().to_string().into());
    fields.insert("findings".to_owned(), serde_json::json!(findings));
    pipeline::report(out, format, &build.sources, &build.diagnostics, fields);
    if format == Format::Text {
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
    if findings.is_empty() { Exit::Ok } else { Exit::Failure }
}
