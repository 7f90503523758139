//! `placid explain --wat SCORE [DIR]`: prints a score's Wasm module in the text format.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::Exit;
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

pub fn run(args: &Args) -> Exit {
    let loaded = match scoring::load(&args.dir, Some(&args.wat), Format::Text) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    match wasmprinter::print_bytes(&loaded.bytes) {
        // A closed pipe (`placid explain --wat s | head`) is not an error.
        Ok(text) => {
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            Exit::Ok
        }
        Err(error) => {
            eprintln!("error: cannot print the module: {error}");
            Exit::Failure
        }
    }
}
