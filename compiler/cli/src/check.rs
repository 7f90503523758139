//! `placid check`: load and check a project, print every diagnostic. With `--probed DIR`,
//! also compare the declared inventory with the probed node files in DIR (drift). With
//! `--overlay DIR`, check the project with DIR's files laid over it; a broken example's
//! directory (`<example>/broken/<E0NN-name>`, whose placid.kdl, if it has one, is only the
//! example's with a mistake) is checked that way over its example when it is given as the
//! project.

use std::path::{Path, PathBuf};

use placid_check::drift;
use placid_driver::build::{Selection, Stage, compile_to};
use placid_driver::merge;
use placid_driver::overlay::OverlayWorld;
use placid_driver::render::Format;
use placid_lang::lower::PROJECT_FILE;
use placid_lang::source::World;

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
    /// A directory of files that replace or add to the same paths of the project (a broken
    /// example's directory, for one).
    #[arg(long)]
    overlay: Option<PathBuf>,
}

/// The project and the overlay to read: as given, or, for a broken example's directory given
/// as the project, its example under it.
fn project_and_overlay(args: &Args) -> (PathBuf, Option<PathBuf>) {
    let dir = &args.project.dir;
    if args.overlay.is_none()
        && let Some(example) = broken_example_of(dir)
    {
        return (example, Some(dir.clone()));
    }
    (dir.clone(), args.overlay.clone())
}

/// The example a broken example's directory `<example>/broken/<name>` lays over.
fn broken_example_of(dir: &Path) -> Option<PathBuf> {
    let broken = dir.parent()?;
    let example = broken.parent()?;
    (broken.file_name()? == "broken" && example.join(PROJECT_FILE).is_file()).then(|| example.to_path_buf())
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let format = args.project.format;
    let (dir, overlay) = project_and_overlay(args);
    let base = match pipeline::open(out, format, &dir) {
        Ok(world) => world,
        Err(exit) => return exit,
    };
    let world: Box<dyn World> = match &overlay {
        Some(overlay) => match pipeline::open(out, format, overlay) {
            Ok(overlay) => Box::new(OverlayWorld::new(base, overlay)),
            Err(exit) => return exit,
        },
        None => Box::new(base),
    };
    // Every target is validated for its diagnostics, but nothing is written: no artifacts.
    let mut build = compile_to(world.as_ref(), &Selection::default(), Stage::Validated);
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
