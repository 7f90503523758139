//! `placid build`: check, emit and write the generated tree atomically, never over what
//! placid did not write.

use std::path::PathBuf;

use placid_targets::TargetKind;

use crate::build::{Selection, compile, write_output};
use crate::cli::{Exit, Output, ProjectArgs, open, report};

/// Arguments of `placid build`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output directory (replaced atomically). An existing one must be empty or hold an
    /// earlier build's manifest.json.
    #[arg(short, long, default_value = "out")]
    out: PathBuf,
    /// Replace an existing output directory even if placid did not write it (never the
    /// project, a git repository or `/`).
    #[arg(long, conflicts_with = "stdout")]
    force: bool,
    /// Emit only these targets.
    #[arg(long = "target", value_parser = parse_target)]
    targets: Vec<TargetKind>,
    /// Print the synced Kubernetes objects as one multi-document YAML stream on stdout instead
    /// of writing files (what the Argo CD plugin runs); needs `--target kubernetes` alone.
    /// Diagnostics always go to stderr as text then, so stdout holds YAML only.
    #[arg(long, conflicts_with = "out")]
    stdout: bool,
}

fn parse_target(text: &str) -> Result<TargetKind, String> {
    TargetKind::ALL
        .iter()
        .copied()
        .find(|target| target.as_str() == text)
        .ok_or_else(|| format!("unknown target `{text}` (expected slurm, kubernetes or wasm)"))
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    if args.stdout {
        return print_stream(args, out);
    }
    let world = match open(out, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let mut build = compile(&world, &Selection { only: args.targets.clone() });
    let exit = if build.diagnostics.has_errors() {
        Exit::Failure
    } else {
        match write_output(&args.out, args.force, world.canonical_root(), &build.sources, &build.artifacts) {
            Ok(()) => Exit::Ok,
            // Reported with the build's warnings, so `--format json` prints one document.
            Err(refusal) => {
                build.diagnostics.push(*refusal);
                Exit::Usage
            }
        }
    };
    report(out, args.project.format, &build.sources, &build.diagnostics);
    if exit == Exit::Ok && args.project.format == crate::render::Format::Text {
        out.errln(format_args!("wrote {} files to {}", build.artifacts.len(), args.out.display()));
    }
    exit
}

/// `--stdout`: check and print the Kubernetes stream; nothing but YAML reaches stdout.
fn print_stream(args: &Args, out: &mut Output) -> Exit {
    if args.targets != [TargetKind::Kubernetes] {
        out.errln("error: --stdout prints Kubernetes objects only; use it with `--target kubernetes`");
        return Exit::Usage;
    }
    let world = match open(out, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let build = compile(&world, &Selection { only: args.targets.clone() });
    report(out, crate::render::Format::Text, &build.sources, &build.diagnostics);
    if build.diagnostics.has_errors() {
        return Exit::Failure;
    }
    if !TargetKind::Kubernetes.enabled(&build.model) {
        out.errln("error: the project declares no `target \"kubernetes\"`");
        return Exit::Usage;
    }
    match placid_targets::k8s::stream(&build.model) {
        Ok(stream) => {
            out.out(stream);
            Exit::Ok
        }
        Err(diagnostics) => {
            report(out, crate::render::Format::Text, &build.sources, &diagnostics);
            Exit::Failure
        }
    }
}
