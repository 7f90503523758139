//! The one path every command takes through a project: open the directory, compile, report
//! every diagnostic (warnings included) in the chosen format, and turn the outcome into an
//! exit code. A command's own findings join the same report, so `--format json` prints one
//! document, and a command's own failures are coded diagnostics like the policy's.

use std::path::Path;

use placid_driver::build::{Build, Clean, Selection, compile};
use placid_driver::render::{self, Format};
use placid_driver::world::FsWorld;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::source::Sources;
use placid_lang::span::Span;

use crate::{Exit, Output, ProjectArgs};

/// Top-level fields a command adds to the JSON report (`drift`, `findings`, ...).
pub type Fields = serde_json::Map<String, serde_json::Value>;

/// An opened and compiled project.
pub struct Compiled {
    /// The project's files, for commands that write beside them.
    pub world: FsWorld,
    /// The model, artifacts and diagnostics.
    pub build: Build,
}

/// Opens the project at `dir`, or reports why not (exit 2).
pub fn open(out: &mut Output, format: Format, dir: &Path) -> Result<FsWorld, Exit> {
    FsWorld::new(dir).map_err(|error| {
        let diagnostic =
            Diagnostic::error(Code::InputUnreadable, Span::DETACHED, format!("cannot open project directory {}: {error}", dir.display()))
                .help("pass the directory that holds placid.kdl");
        fail(out, format, diagnostic)
    })
}

/// Opens and compiles the project; nothing is reported yet, so the command can add its own
/// findings to the one report.
pub fn compile_project(out: &mut Output, project: &ProjectArgs, selection: &Selection) -> Result<Compiled, Exit> {
    let world = open(out, project.format, &project.dir)?;
    let build = compile(&world, selection);
    Ok(Compiled { world, build })
}

/// Opens, compiles and reports the whole project, for commands that go on only with a clean
/// build (whose model is checked). Text reports go to stderr whatever happens; a JSON report
/// is printed when there are errors, and otherwise the command's own document is the output,
/// so the warnings go to stderr as text.
pub fn checked(out: &mut Output, project: &ProjectArgs, selection: &Selection) -> Result<Clean, Exit> {
    checked_or_refused(out, project, selection).map_err(|(exit, _)| exit)
}

/// [`checked`], handing back the build it refused (none when the project could not be read),
/// for a command that reports its errors in a form of its own too.
pub fn checked_or_refused(out: &mut Output, project: &ProjectArgs, selection: &Selection) -> Result<Clean, (Exit, Option<Box<Build>>)> {
    let build = compile_project(out, project, selection).map_err(|exit| (exit, None))?.build;
    let format = if build.diagnostics.has_errors() { project.format } else { Format::Text };
    let exit = report(out, format, &build.sources, &build.diagnostics, Fields::new());
    // A build is clean exactly when it has no errors, which is when the report exits 0.
    build.clean().map_err(|refused| (exit, Some(refused)))
}

/// Reports `diagnostics` in `format` (text on stderr, one JSON document with `fields` on
/// stdout) and returns the exit code they call for: 1 with errors, 0 without.
pub fn report(out: &mut Output, format: Format, sources: &Sources, diagnostics: &Diagnostics, fields: Fields) -> Exit {
    match format {
        Format::Text => {
            if !diagnostics.is_empty() {
                let color = out.stderr_color();
                out.err(render::text(sources, diagnostics, color));
            }
        }
        Format::Json => {
            let mut document = render::json(sources, diagnostics);
            if let serde_json::Value::Object(map) = &mut document {
                map.extend(fields);
            }
            out.outln(render::json_text(&document));
        }
    }
    if diagnostics.has_errors() { Exit::Failure } else { Exit::Ok }
}

/// Reports why a score's plugin could not be loaded: a missing score is the command's own
/// failure (exit 2), a module the host refused is the policy's (exit 1).
pub fn load_failed(out: &mut Output, format: Format, sources: &Sources, error: placid_scoring::LoadError) -> Exit {
    match error {
        placid_scoring::LoadError::NoScore(diagnostic) => fail(out, format, diagnostic),
        placid_scoring::LoadError::Module(diagnostics) => report(out, format, sources, &diagnostics, Fields::new()),
    }
}

/// The plugins of the scores the project's plan stages use, as the engine's ranker.
pub fn stage_scores<'m>(
    out: &mut Output,
    format: Format,
    sources: &Sources,
    model: &'m placid_lang::checked::Checked,
) -> Result<placid_scoring::stage_rank::StageScores<'m>, Exit> {
    placid_scoring::stage_rank::StageScores::new(model).map_err(|error| load_failed(out, format, sources, error))
}

/// Warns that a score's plugin failed some batches of an engine run, which were ranked by the
/// tie-break alone instead: the run's outcome is then not the extender's.
pub fn warn_ranking_failures(out: &mut Output, sources: &Sources, failures: u64) {
    if failures > 0 {
        let diagnostic = Diagnostic::warning(
            Code::PluginFailed,
            Span::DETACHED,
            format!("a stage score's plugin failed {failures} ranking batches, which fell to the engine's tie-break"),
        )
        .help("`placid score` on the stage's nodes shows the plugin's error; `placid explain --wat` its code");
        let mut diagnostics = Diagnostics::new();
        diagnostics.push(diagnostic);
        report(out, Format::Text, sources, &diagnostics, Fields::new());
    }
}

/// Reports a command's own failure (an unreadable input, a missing tool) as one coded
/// diagnostic, and returns exit 2: the policy was not what failed.
pub fn fail(out: &mut Output, format: Format, diagnostic: Diagnostic) -> Exit {
    let mut diagnostics = Diagnostics::new();
    diagnostics.push(diagnostic);
    report(out, format, &Sources::new(), &diagnostics, Fields::new());
    Exit::Usage
}

/// [`fail`] for an input the command cannot read.
pub fn unreadable(out: &mut Output, format: Format, what: &str, path: &Path, error: impl std::fmt::Display) -> Exit {
    let diagnostic = Diagnostic::error(Code::InputUnreadable, Span::DETACHED, format!("cannot read {what} {}: {error}", path.display()))
        .help("check the path and its permissions");
    fail(out, format, diagnostic)
}

/// The bytes of input `path` (`what`, for the message), read through the one reader of
/// untrusted files ([`placid_driver::untrusted::read`]): a regular file of at most `limit`
/// bytes. A FIFO, a device or a directory is refused at once (E019), a larger file before it
/// is read (E018), and a file that cannot be opened is [`unreadable`].
pub fn read_at_most(out: &mut Output, format: Format, what: &str, path: &Path, limit: u64) -> Result<Vec<u8>, Exit> {
    placid_driver::untrusted::read(path, limit).map_err(|error| {
        let help = match error.code {
            Code::SpecialFile => "give a regular file: placid does not wait on a FIFO or read a device",
            Code::FileTooLarge => "split the file, or sample it (docs/limits.md)",
            _ => return unreadable(out, format, what, path, error.reason),
        };
        let message = format!("cannot read {what} {}: {}", path.display(), error.reason);
        fail(out, format, Diagnostic::error(error.code, Span::DETACHED, message).help(help))
    })
}

/// [`fail`] for an output the command cannot write.
pub fn unwritable(out: &mut Output, format: Format, path: &Path, error: impl std::fmt::Display) -> Exit {
    let diagnostic = Diagnostic::error(Code::OutputUnwritable, Span::DETACHED, format!("cannot write {}: {error}", path.display()))
        .help("the file's directory must be writable; the file was left as it was");
    fail(out, format, diagnostic)
}
