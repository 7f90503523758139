//! `placid fmt`: canonical formatting of every KDL file a project loads (`--check` for CI).

use placid_lang::diag::Diagnostics;

use crate::pipeline::{self, Fields};
use crate::{Exit, Output, ProjectArgs};
use placid_driver::output::write_file_atomically;

/// Arguments of `placid fmt`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// Report files that are not formatted (exit 1) instead of rewriting them.
    #[arg(long)]
    check: bool,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let format = args.project.format;
    let world = match pipeline::open(out, format, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let compilation = placid_lang::load(&world);
    let mut syntax_errors = Diagnostics::new();
    let mut unformatted = Vec::new();
    for (id, file) in compilation.sources.iter() {
        if !file.path.as_str().ends_with(".kdl") {
            continue;
        }
        match placid_lang::format::format(id, &file.text) {
            Ok(formatted) if formatted == file.text => {}
            Ok(formatted) => unformatted.push((file.path.clone(), formatted)),
            Err(diagnostics) => syntax_errors.extend(diagnostics),
        }
    }
    if !syntax_errors.is_empty() {
        return pipeline::report(out, format, &compilation.sources, &syntax_errors, Fields::new());
    }
    if args.check {
        for (path, _) in &unformatted {
            out.outln(format_args!("not formatted: {path}"));
        }
        return if unformatted.is_empty() { Exit::Ok } else { Exit::Failure };
    }
    for (path, formatted) in &unformatted {
        let file = args.project.dir.join(path.as_str());
        if let Err(error) = write_file_atomically(&file, formatted.as_bytes()) {
            return pipeline::unwritable(out, format, &file, error);
        }
        out.outln(format_args!("formatted: {path}"));
    }
    Exit::Ok
}
