//! The language server, `placid lsp`: the Language Server Protocol over a connection the
//! caller gives (the CLI gives stdio; tests give an in-memory pair).
//!
//! What it serves (docs/editor.md): the diagnostics `placid check` reports for the whole
//! project, as you type (open buffers are laid over the project directory through the
//! checker's `World`), each with its code, related spans and help line, and cleared from a
//! file when it becomes clean; hover on keywords, properties and declared names; completion
//! of nodes, properties and declared names by context; go to definition and find references
//! across the project's files, the inventory included; formatting by `placid fmt`'s
//! formatter; and quick fixes for diagnostics that offer one.
//!
//! Built on `lsp-server` and `lsp-types`, the protocol crates rust-analyzer is built on:
//! `lsp-server` is synchronous (a loop over a channel of messages), so the server needs no
//! async runtime, and placid's checker, which is synchronous and takes milliseconds on a
//! project, runs in the loop itself. Edits that arrive while a check would run are taken
//! first, so a burst of keystrokes costs one check.
//!
//! Invariant: never panics on what a client sends (malformed messages and params are
//! protocol errors, positions past the end are clamped), prints nothing, and writes only to
//! the connection it is given.

mod complete;
mod convert;
mod hover;
mod names;
mod outline;
mod overlay;
mod project;
mod server;

use std::fmt;

pub use lsp_server::Connection;

/// Why the server stopped before the client asked it to exit.
#[derive(Debug)]
pub struct Error(pub(crate) String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<lsp_server::ProtocolError> for Error {
    fn from(error: lsp_server::ProtocolError) -> Error {
        Error(format!("protocol error: {error}"))
    }
}

/// Serves one client on `connection` until it sends `exit` (after `shutdown`), or the
/// connection closes.
pub fn run(connection: &Connection) -> Result<(), Error> {
    server::run(connection)
}

/// Serves one client on the process's stdin and stdout, as `placid lsp` does. A malformed
/// message (bad framing, JSON or UTF-8) ends the session with an error.
pub fn run_stdio() -> Result<(), Error> {
    let (connection, threads) = Connection::stdio();
    let served = run(&connection);
    // The writer thread ends once every sender is gone; the reader once stdin closes or the
    // client sent `exit`.
    drop(connection);
    let joined = threads.join().map_err(|error| Error(format!("the connection failed: {error}")));
    served.and(joined)
}
