//! Where commands write. Every byte a command prints goes through [`Output`], whose writes
//! come back to it instead of panicking as `println!` does when a write fails. A reader that
//! goes away (`placid check --format json | head -1`: EPIPE) closes that stream quietly and
//! the command keeps its own exit code, as if everything had been read; any other failure
//! (a full disk behind a redirect) is reported at the end and the command exits with 2.

use std::fmt::Display;
use std::io::{self, IsTerminal, Write};

use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::source::Sources;
use placid_lang::span::Span;

use crate::Exit;

/// A command's stdout and stderr.
pub struct Output {
    stdout: Stream,
    stderr: Stream,
}

struct Stream {
    name: &'static str,
    writer: Box<dyn Write>,
    state: State,
    /// Whether the stream is a terminal that wants ANSI colours.
    color: bool,
}

enum State {
    Open,
    /// The reader went away: what is still written is dropped.
    Closed,
    /// A write failed otherwise: what is still written is dropped, and the command fails.
    Failed(io::Error),
}

impl Stream {
    fn write(&mut self, bytes: &[u8]) {
        if let State::Open = self.state
            && let Err(error) = self.writer.write_all(bytes)
        {
            self.fail(error);
        }
    }

    fn flush(&mut self) {
        if let State::Open = self.state
            && let Err(error) = self.writer.flush()
        {
            self.fail(error);
        }
    }

    fn fail(&mut self, error: io::Error) {
        self.state = if error.kind() == io::ErrorKind::BrokenPipe { State::Closed } else { State::Failed(error) };
    }
}

impl Output {
    /// The process's stdout and stderr.
    pub fn stdio() -> Output {
        // NO_COLOR (https://no-color.org) turns colours off whatever the stream is.
        let wants_color = std::env::var_os("NO_COLOR").is_none();
        let mut output = Output::new(Box::new(io::stdout()), Box::new(io::stderr()));
        output.stdout.color = wants_color && io::stdout().is_terminal();
        output.stderr.color = wants_color && io::stderr().is_terminal();
        output
    }

    /// Output to any two writers, without colour (tests).
    pub fn new(stdout: Box<dyn Write>, stderr: Box<dyn Write>) -> Output {
        Output {
            stdout: Stream { name: "stdout", writer: stdout, state: State::Open, color: false },
            stderr: Stream { name: "stderr", writer: stderr, state: State::Open, color: false },
        }
    }

    /// Whether stdout wants ANSI colours.
    pub fn stdout_color(&self) -> bool {
        self.stdout.color
    }

    /// Whether stderr wants ANSI colours.
    pub fn stderr_color(&self) -> bool {
        self.stderr.color
    }

    /// Writes `text` to stdout.
    pub fn out(&mut self, text: impl AsRef<[u8]>) {
        self.stdout.write(text.as_ref());
    }

    /// Writes `line` and a newline to stdout.
    pub fn outln(&mut self, line: impl Display) {
        self.out(format!("{line}\n"));
    }

    /// Writes `text` to stderr.
    pub fn err(&mut self, text: impl AsRef<[u8]>) {
        self.stderr.write(text.as_ref());
    }

    /// Writes `line` and a newline to stderr.
    pub fn errln(&mut self, line: impl Display) {
        self.err(format!("{line}\n"));
    }

    /// Flushes both streams and returns the exit code of a command that ended with `exit`:
    /// the same after a closed pipe, 2 after any other failed write (reported on stderr when
    /// it was stdout that failed).
    pub fn finish(mut self, exit: Exit) -> Exit {
        self.stdout.flush();
        self.stderr.flush();
        let failed = [&self.stdout, &self.stderr].into_iter().find_map(|stream| match &stream.state {
            State::Failed(error) => Some(format!("cannot write to {}: {error}", stream.name)),
            State::Open | State::Closed => None,
        });
        let Some(message) = failed else { return exit };
        let mut diagnostics = Diagnostics::new();
        diagnostics.push(
            Diagnostic::error(Code::StreamUnwritable, Span::DETACHED, message)
                .help("check the file or device the output is redirected to (a full disk?)"),
        );
        let color = self.stderr.color;
        self.err(placid_driver::render::text(&Sources::new(), &diagnostics, color));
        self.stderr.flush();
        Exit::Usage
    }
}

/// `n` and the noun that agrees with it: `1 NVLink domain`, `2 NVLink domains`.
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(counted(1u32, "NVLink domain", "NVLink domains"), "1 NVLink domain");
        assert_eq!(counted(0u32, "pool", "pools"), "0 pools");
        assert_eq!(counted(2u32, "pool", "pools"), "2 pools");
    }

    /// A writer that keeps what it is given, or fails every write with `error`.
    #[derive(Clone, Default)]
    struct Sink {
        written: Rc<RefCell<Vec<u8>>>,
        error: Option<io::ErrorKind>,
    }

    impl Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            match self.error {
                Some(kind) => Err(io::Error::from(kind)),
                None => {
                    self.written.borrow_mut().extend_from_slice(bytes);
                    Ok(bytes.len())
                }
            }
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn failing(kind: io::ErrorKind) -> Sink {
        Sink { error: Some(kind), ..Sink::default() }
    }

    #[test]
    fn a_closed_pipe_keeps_the_exit_code() {
        let stderr = Sink::default();
        let mut output = Output::new(Box::new(failing(io::ErrorKind::BrokenPipe)), Box::new(stderr.clone()));
        output.outln("{ \"diagnostics\": [] }");
        output.errln("ok");
        assert_eq!(output.finish(Exit::Failure), Exit::Failure);
        assert_eq!(String::from_utf8_lossy(&stderr.written.borrow()), "ok\n");
    }

    #[test]
    fn another_write_error_is_reported_and_exits_two() {
        let stderr = Sink::default();
        let mut output = Output::new(Box::new(failing(io::ErrorKind::StorageFull)), Box::new(stderr.clone()));
        output.out("text");
        assert_eq!(output.finish(Exit::Ok), Exit::Usage);
        let reported = String::from_utf8_lossy(&stderr.written.borrow()).into_owned();
        assert!(reported.contains("placid::E094") && reported.contains("cannot write to stdout"), "{reported}");
    }

    #[test]
    fn a_closed_stderr_is_quiet_too() {
        let stdout = Sink::default();
        let mut output = Output::new(Box::new(stdout.clone()), Box::new(failing(io::ErrorKind::BrokenPipe)));
        output.errln("error: something");
        output.outln("result");
        assert_eq!(output.finish(Exit::Ok), Exit::Ok);
        assert_eq!(String::from_utf8_lossy(&stdout.written.borrow()), "result\n");
    }
}
