//! `placid explain --wat SCORE [DIR]`: prints a score's Wasm module in the text format.

use std::path::PathBuf;

use placid_driver::render::Format;
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;

use crate::pipeline;
use crate::{Exit, Output, ProjectArgs, load_score};

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
    let project = ProjectArgs { dir: args.dir.clone(), format: Format::Text };
    let loaded = match load_score(out, &project, Some(&args.wat)) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    match wasmprinter::print_bytes(&loaded.bytes) {
        Ok(text) => {
            out.outln(text);
            Exit::Ok
        }
        Err(error) => {
            let diagnostic = Diagnostic::error(Code::InvalidEmittedModule, Span::DETACHED, format!("cannot print the module: {error}"))
                .help("this is a bug in placid's Wasm target; please report it with the score");
            pipeline::fail(out, Format::Text, diagnostic);
            Exit::Failure
        }
    }
}
