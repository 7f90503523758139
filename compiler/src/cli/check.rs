//! `placid check`: load and check a project, print every diagnostic. With `--probed DIR`,
//! also compare the declared inventory with the probed node files in DIR (drift).

use std::path::PathBuf;

use crate::build::{Selection, compile};
use crate::cli::{Exit, Output, ProjectArgs, open, report};

/// Arguments of `placid check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// A directory of probed node files (placid-probe output) to compare the inventory with.
    #[arg(long)]
    probed: Option<PathBuf>,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let world = match open(out, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let mut build = compile(&world, &Selection { only: Vec::new() });
    let mut drifts = Vec::new();
    if let Some(dir) = &args.probed {
        let paths = match crate::merge::inventory_files_in(dir) {
            Ok(paths) => paths,
            Err(error) => {
                out.errln(format_args!("error: cannot list probed files in {}: {error}", dir.display()));
                return Exit::Usage;
            }
        };
        let (files, read) = crate::merge::read_inventories(&mut build.sources, &paths);
        let (probed, merged) = crate::merge::merge(files);
        drifts = crate::drift::compare(&build.model, &probed);
        build.diagnostics.extend(read);
        build.diagnostics.extend(merged);
        build.diagnostics.extend(crate::drift::diagnostics(&drifts));
        build.diagnostics.sort();
    }
    if args.probed.is_some() && args.project.format == crate::render::Format::Json {
        let mut json = crate::render::json(&build.sources, &build.diagnostics);
        json["drift"] = crate::drift::json(&drifts);
        out.outln(serde_json::to_string_pretty(&json).unwrap_or_default());
    } else {
        report(out, args.project.format, &build.sources, &build.diagnostics);
    }
    if build.diagnostics.has_errors() {
        return Exit::Failure;
    }
    if args.project.format == crate::render::Format::Text {
        let model = &build.model;
        out.errln(format_args!(
            "ok: project `{}`: {} nodes, {} GPUs, {} NVLink domains, {} pools, {} tiers, {} teams, {} plans",
            model.project.name,
            model.nodes.len(),
            model.total_gpus(),
            model.domains.len(),
            model.pools.len(),
            model.tiers.len(),
            model.teams.len(),
            model.plans.len()
        ));
    }
    Exit::Ok
}
