//! `placid inventory merge FILES... -o OUT`: many probed node files into one inventory file,
//! written only when the merge is clean (no duplicate nodes, consistent domains and chassis),
//! atomically (a temp file beside OUT, renamed). OUT ending in `.json` gets the JSON form.

use std::path::PathBuf;

use placid_lang::lower::InventoryFormat;
use placid_lang::source::Sources;

use placid_driver::output::write_file_atomically;
use placid_driver::render::{Choice, Format};

use crate::output::counted;
use crate::pipeline::{self, Fields};
use crate::{Exit, Output, choice};

/// Arguments of `placid inventory`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Merge node inventory files (placid-probe output) into one inventory.
    Merge(MergeArgs),
}

#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// Inventory files (`.kdl`, or `.json`), or directories of them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The merged inventory to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Output format of diagnostics.
    #[arg(long, value_parser = choice::<Format>(), default_value = Format::Text.name())]
    format: Format,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    match &args.command {
        Command::Merge(merge) => run_merge(merge, out),
    }
}

fn run_merge(args: &MergeArgs, out: &mut Output) -> Exit {
    let mut paths = Vec::new();
    for path in &args.files {
        if path.is_dir() {
            match placid_driver::merge::inventory_files_in(path) {
                Ok(found) => paths.extend(found),
                Err(error) => return pipeline::unreadable(out, args.format, "the directory", path, error),
            }
        } else {
            paths.push(path.clone());
        }
    }
    let mut sources = Sources::new();
    let (files, mut diagnostics) = placid_driver::merge::read_inventories(&mut sources, &paths);
    let (model, merged) = placid_driver::merge::merge(files);
    diagnostics.extend(merged);
    diagnostics.sort();
    if pipeline::report(out, args.format, &sources, &diagnostics, Fields::new()) == Exit::Failure {
        return Exit::Failure;
    }
    let text = match InventoryFormat::of_path(&args.output.to_string_lossy()) {
        InventoryFormat::Kdl => placid_lang::print::inventory_kdl(&model),
        InventoryFormat::Json => {
            let mut json = placid_driver::render::json_text(&placid_lang::print::inventory_json(&model));
            json.push('\n');
            json
        }
    };
    if let Err(error) = write_file_atomically(&args.output, text.as_bytes()) {
        return pipeline::unwritable(out, args.format, &args.output, error);
    }
    if args.format == Format::Text {
        out.errln(format_args!(
            "ok: {}, {}, {} -> {}",
            counted(model.nodes.len() as u64, "node", "nodes"),
            counted(model.total_gpus(), "GPU", "GPUs"),
            counted(model.domains.len() as u64, "NVLink domain", "NVLink domains"),
            args.output.display()
        ));
    }
    Exit::Ok
}
