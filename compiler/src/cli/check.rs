//! `placid check`: load and check a project, print every diagnostic.

use crate::build::{Selection, compile};
use crate::cli::{Exit, ProjectArgs, open, report};

/// Arguments of `placid check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
}

pub fn run(args: &Args) -> Exit {
    let world = match open(&args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let build = compile(&world, &Selection { only: Vec::new() });
    report(args.project.format, &build.sources, &build.diagnostics);
    if build.diagnostics.has_errors() {
        return Exit::Failure;
    }
    if args.project.format == crate::render::Format::Text {
        let model = &build.model;
        eprintln!(
            "ok: project `{}`: {} nodes, {} GPUs, {} NVLink domains, {} pools, {} tiers, {} teams, {} plans",
            model.project.name,
            model.nodes.len(),
            model.total_gpus(),
            model.domains.len(),
            model.pools.len(),
            model.tiers.len(),
            model.teams.len(),
            model.plans.len()
        );
    }
    Exit::Ok
}
