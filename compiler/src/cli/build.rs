//! `placid build`: check, emit and write the generated tree atomically.

use std::path::PathBuf;

use placid_targets::TargetKind;

use crate::build::{Selection, compile, write_atomically};
use crate::cli::{Exit, ProjectArgs, open, report};

/// Arguments of `placid build`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output directory (replaced atomically).
    #[arg(short, long, default_value = "out")]
    out: PathBuf,
    /// Emit only these targets.
    #[arg(long = "target", value_parser = parse_target)]
    targets: Vec<TargetKind>,
}

fn parse_target(text: &str) -> Result<TargetKind, String> {
    TargetKind::ALL
        .iter()
        .copied()
        .find(|target| target.as_str() == text)
        .ok_or_else(|| format!("unknown target `{text}` (expected slurm, kubernetes or wasm)"))
}

pub fn run(args: &Args) -> Exit {
    let world = match open(&args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let build = compile(&world, &Selection { only: args.targets.clone() });
    report(args.project.format, &build.sources, &build.diagnostics);
    if build.diagnostics.has_errors() {
        return Exit::Failure;
    }
    if let Err(error) = write_atomically(&args.out, &build.artifacts) {
        eprintln!("error: cannot write {}: {error}", args.out.display());
        return Exit::Usage;
    }
    if args.project.format == crate::render::Format::Text {
        eprintln!("wrote {} files to {}", build.artifacts.len(), args.out.display());
    }
    Exit::Ok
}
