//! `placid explain --wat SCORE [DIR]`: prints a score's Wasm module in the text format.

use std::path::PathBuf;

use crate::cli::{Exit, Output};
use crate::render::Format;
use crate::scoring;

/// Arguments of `placid explain`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The score whose module to print.
    #[arg(long = "wat", value_name = "SCORE")]
    wat: String,
    /// The project directory (holding placid.kdl).
    #[arg(default_value = ".")]
    dir: PathBuf,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let loaded = match scoring::load(out, &args.dir, Some(&args.wat), Format::Text) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    match wasmprinter::print_bytes(&loaded.bytes) {
        Ok(text) => {
            out.outln(text);
            Exit::Ok
        }
        Err(error) => {
            out.errln(format_args!("error: cannot print the module: {error}"));
            Exit::Failure
        }
    }
}
