//! `placid inventory merge FILES... -o OUT`: many probed node files into one inventory file,
//! written only when the merge is clean (no duplicate nodes, consistent domains and chassis),
//! atomically (a temp file beside OUT, renamed). OUT ending in `.json` gets the JSON form.

use std::path::PathBuf;

use placid_lang::lower::InventoryFormat;
use placid_lang::source::Sources;

use crate::build::write_file_atomically;
use crate::cli::{Exit, Output, report};
use crate::render::Format;

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
    #[arg(long, value_enum, default_value_t = Format::Text)]
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
            match crate::merge::inventory_files_in(path) {
                Ok(found) => paths.extend(found),
                Err(error) => {
                    out.errln(format_args!("error: cannot list {}: {error}", path.display()));
                    return Exit::Usage;
                }
            }
        } else {
            paths.push(path.clone());
        }
    }
    let mut sources = Sources::new();
    let (files, mut diagnostics) = crate::merge::read_inventories(&mut sources, &paths);
    let (model, merged) = crate::merge::merge(files);
    diagnostics.extend(merged);
    diagnostics.sort();
    report(out, args.format, &sources, &diagnostics);
    if diagnostics.has_errors() {
        return Exit::Failure;
    }
    let text = match InventoryFormat::of_path(&args.output.to_string_lossy()) {
        InventoryFormat::Kdl => placid_lang::print::inventory_kdl(&model),
        InventoryFormat::Json => {
            let mut json = serde_json::to_string_pretty(&placid_lang::print::inventory_json(&model)).unwrap_or_default();
            json.push('\n');
            json
        }
    };
    if let Err(error) = write_file_atomically(&args.output, text.as_bytes()) {
        out.errln(format_args!("error: cannot write {}: {error}", args.output.display()));
        return Exit::Usage;
    }
    if args.format == Format::Text {
        out.errln(format_args!(
            "ok: {} nodes, {} GPUs, {} NVLink domains -> {}",
            model.nodes.len(),
            model.total_gpus(),
            model.domains.len(),
            args.output.display()
        ));
    }
    Exit::Ok
}
