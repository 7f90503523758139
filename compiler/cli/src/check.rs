//! `placid check`: load and check a project, print every diagnostic. With `--probed DIR`,
//! also compare the declared inventory with the probed node files in DIR (drift).

use std::path::PathBuf;

use placid_check::drift;
use placid_driver::build::{Selection, Stage, compile_to};
use placid_driver::merge;
use placid_driver::render::Format;

use crate::output::counted;
use crate::pipeline::{self, Fields};
use crate::{Exit, Output, ProjectArgs};

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
    let format = args.project.format;
    let world = match pipeline::open(out, format, &args.project.dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    // Every target is validated for its diagnostics, but nothing is written: no artifacts.
    let mut build = compile_to(&world, &Selection::default(), Stage::Validated);
    let mut fields = Fields::new();
    if let Some(dir) = &args.probed {
        let paths = match merge::inventory_files_in(dir) {
            Ok(paths) => paths,
            Err(error) => return pipeline::unreadable(out, format, "the probed node files in", dir, error),
        };
        let (files, read) = merge::read_inventories(&mut build.sources, &paths);
        let (probed, merged) = merge::merge(files);
        let drifts = drift::compare(&build.model, &probed);
        build.diagnostics.extend(read);
        build.diagnostics.extend(merged);
        build.diagnostics.extend(drift::diagnostics(&drifts));
        build.diagnostics.sort();
        fields.insert("drift".to_owned(), drift::json(&drifts));
    }
    let exit = pipeline::report(out, format, &build.sources, &build.diagnostics, fields);
    if exit == Exit::Ok && format == Format::Text {
        let model = &build.model;
        out.errln(format_args!(
            "ok: project `{}`: {}, {}, {}, {}, {}, {}, {}",
            model.project.name,
            counted(model.nodes.len() as u64, "node", "nodes"),
            counted(model.total_gpus(), "GPU", "GPUs"),
            counted(model.domains.len() as u64, "NVLink domain", "NVLink domains"),
            counted(model.pools.len() as u64, "pool", "pools"),
            counted(model.tiers.len() as u64, "tier", "tiers"),
            counted(model.teams.len() as u64, "team", "teams"),
            counted(model.plans.len() as u64, "plan", "plans")
        ));
    }
    exit
}
