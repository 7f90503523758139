//! `placid fmt`: canonical formatting of every KDL file a project loads (`--check` for CI).

use placid_lang::diag::Diagnostics;

use crate::build::write_file_atomically;
use crate::cli::{Exit, Output, ProjectArgs, open, report};

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
    let world = match open(out, &args.project.dir) {
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
        report(out, args.project.format, &compilation.sources, &syntax_errors);
        return Exit::Failure;
    }
    if args.check {
        for (path, _) in &unformatted {
            out.outln(format_args!("not formatted: {path}"));
        }
        return if unformatted.is_empty() { Exit::Ok } else { Exit::Failure };
    }
    for (path, formatted) in &unformatted {
        if let Err(error) = write_file_atomically(&args.project.dir.join(path.as_str()), formatted.as_bytes()) {
            out.errln(format_args!("error: cannot write {path}: {error}"));
            return Exit::Usage;
        }
        out.outln(format_args!("formatted: {path}"));
    }
    Exit::Ok
}
