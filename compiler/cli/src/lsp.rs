//! `placid lsp`: the language server (placid-lsp) on stdin and stdout, for editors
//! (docs/editor.md). Stdout carries the protocol, so nothing else may be printed there; a
//! broken connection is reported on stderr as the command's own failure.

use placid_driver::render::Format;
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;

use crate::pipeline;
use crate::{Exit, Output};

/// Arguments of `placid lsp`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Accepted and ignored: stdio is the only transport, and some clients pass the flag.
    #[arg(long)]
    stdio: bool,
}

pub fn run(_args: &Args, out: &mut Output) -> Exit {
    match placid_lsp::run_stdio() {
        Ok(()) => Exit::Ok,
        Err(error) => {
            let diagnostic = Diagnostic::error(Code::InputUnreadable, Span::DETACHED, format!("the language server stopped: {error}"))
                .help("the editor's client sent something that is not the Language Server Protocol, or closed the connection");
            pipeline::fail(out, Format::Text, diagnostic)
        }
    }
}
