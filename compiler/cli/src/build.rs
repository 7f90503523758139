//! `placid build`: check, emit and write the generated tree atomically, never over what
//! placid did not write.

use std::path::PathBuf;

use placid_targets::TargetKind;

use placid_driver::build::{Selection, Stage, compile_to};
use placid_driver::output::write_output;
use placid_driver::render::Format;
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;

use crate::pipeline::{self, Compiled, Fields};
use crate::{Exit, Output, ProjectArgs, choice};

/// Arguments of `placid build`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output directory (replaced atomically). An existing one must be empty or hold exactly
    /// an earlier build's tree: the files its manifest.json lists, with their hashes, and
    /// nothing else.
    #[arg(short, long, default_value = "out")]
    out: PathBuf,
    /// Replace an existing output directory even if placid did not write it (never the
    /// project, `/`, a git repository, bare or not, or a directory holding one).
    #[arg(long, conflicts_with = "stdout")]
    force: bool,
    /// Emit only these targets.
    #[arg(long = "target", value_parser = choice::<TargetKind>())]
    targets: Vec<TargetKind>,
    /// Print the synced Kubernetes objects as one multi-document YAML stream on stdout instead
    /// of writing files (what the Argo CD plugin runs); needs `--target kubernetes` alone.
    /// Diagnostics always go to stderr as text then, so stdout holds YAML only.
    #[arg(long, conflicts_with = "out")]
    stdout: bool,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    if args.stdout {
        return print_stream(args, out);
    }
    let format = args.project.format;
    let Compiled { world, mut build } = match pipeline::compile_project(out, &args.project, &Selection { only: args.targets.clone() }) {
        Ok(compiled) => compiled,
        Err(exit) => return exit,
    };
    let mut refused = false;
    if !build.diagnostics.has_errors()
        && let Err(refusal) = write_output(&args.out, args.force, world.canonical_root(), &build.sources, &build.artifacts)
    {
        // Reported with the build's warnings, so `--format json` prints one document.
        build.diagnostics.push(*refusal);
        refused = true;
    }
    let exit = pipeline::report(out, format, &build.sources, &build.diagnostics, Fields::new());
    if refused {
        return Exit::Usage;
    }
    if exit == Exit::Ok && format == Format::Text {
        out.errln(format_args!("wrote {} files to {}", build.artifacts.len(), args.out.display()));
    }
    exit
}

fn print_stream(args: &Args, out: &mut Output) -> Exit {
    // Diagnostics go to stderr as text, whatever `--format` says: stdout holds YAML only.
    let format = Format::Text;
    let not_applicable = |message: &str| {
        Diagnostic::error(Code::CommandNotApplicable, Span::DETACHED, message)
            .help("`--stdout` prints the Kubernetes objects of a project with `target \"kubernetes\"`; use `-o DIR` for the whole tree")
    };
    if args.targets != [TargetKind::Kubernetes] {
        return pipeline::fail(out, format, not_applicable("--stdout prints Kubernetes objects only; use it with `--target kubernetes`"));
    }
    let world = match pipeline::open(out, format, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    // Checked only: the stream below is the one emission, not a second one after the tree's.
    let build = compile_to(&world, &Selection { only: args.targets.clone() }, Stage::Checked);
    let exit = pipeline::report(out, format, &build.sources, &build.diagnostics, Fields::new());
    let Ok(build) = build.clean() else { return exit };
    if !TargetKind::Kubernetes.enabled(&build.model) {
        return pipeline::fail(out, format, not_applicable("the project declares no `target \"kubernetes\"`"));
    }
    match placid_targets::k8s::stream(&build.model) {
        Ok(stream) => {
            out.out(stream);
            Exit::Ok
        }
        Err(diagnostics) => pipeline::report(out, format, &build.sources, &diagnostics, Fields::new()),
    }
}
