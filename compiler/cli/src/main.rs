//! The `placid` command line. Flags are parsed by clap into [`Cli`]; each subcommand lives in
//! its own module, writes through the [`Output`] it is given and returns an [`Exit`]; only
//! [`main`] prints top-level errors and picks the process exit code (0 ok, 1 policy errors or
//! changes, 2 usage or IO errors).

mod audit;
mod build;
mod check;
mod diff;
mod explain;
mod extender;
mod fmt;
mod graph;
mod inventory;
mod lsp;
mod output;
mod pipeline;
mod replay;
mod score;
mod simulate;
mod test;
mod verify;

pub use output::Output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::TypedValueParser;
use clap::{Parser, Subcommand};
use placid_driver::render::{Choice, Format};

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok,
    /// The policy has errors (or, for `diff --exit-code`, there are changes).
    Failure,
    /// Bad usage or an IO error.
    Usage,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        match exit {
            Exit::Ok => ExitCode::SUCCESS,
            Exit::Failure => ExitCode::from(1),
            Exit::Usage => ExitCode::from(2),
        }
    }
}

/// placid: a declarative GitOps policy compiler for GPU training clusters.
#[derive(Parser, Debug)]
#[command(name = "placid", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options shared by commands that read a project.
#[derive(clap::Args, Debug, Clone)]
pub struct ProjectArgs {
    /// The project directory (holding placid.kdl).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Output format of diagnostics.
    #[arg(long, value_parser = choice::<Format>(), default_value = Format::Text.name())]
    pub format: Format,
}

/// The project and the score of the commands that run a scoring plugin.
#[derive(clap::Args, Debug)]
pub struct ScoreArgs {
    /// The project directory (holding placid.kdl).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// The score to run (may be left out when the project has one).
    #[arg(long)]
    pub score: Option<String>,
}

impl ScoreArgs {
    /// Compiles the project and loads the score's plugin, reporting problems in `format`.
    pub fn load(&self, out: &mut Output, format: Format) -> Result<placid_scoring::Loaded, Exit> {
        load_score(out, &ProjectArgs { dir: self.dir.clone(), format }, self.score.as_deref())
    }
}

/// Compiles the project and loads the plugin of score `name` (the only one when `None`).
pub fn load_score(out: &mut Output, project: &ProjectArgs, name: Option<&str>) -> Result<placid_scoring::Loaded, Exit> {
    let build = pipeline::checked(out, project, &placid_driver::build::Selection::default())?;
    let sources = build.sources;
    placid_scoring::load(build.model, name).map_err(|error| pipeline::load_failed(out, project.format, &sources, error))
}

/// The argument parser of a library's closed set of choices (`--format text|json`).
pub fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    let names: Vec<&'static str> = T::ALL.iter().map(|choice| choice.name()).collect();
    clap::builder::PossibleValuesParser::new(names).map(|name| {
        // The parser has already refused every other name.
        T::ALL.iter().copied().find(|choice| choice.name() == name).unwrap_or(T::ALL[0])
    })
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check the policy against the inventory and report every problem.
    Check(check::Args),
    /// Check, then write the generated tree (atomically) with a manifest of hashes.
    Build(build::Args),
    /// Compile two git revisions and report what changes, semantically and per artifact.
    Diff(diff::Args),
    /// Check that committed generated output matches a fresh build.
    Verify(verify::Args),
    /// Format the project's KDL files canonically (`--check` to only report).
    Fmt(fmt::Args),
    /// Print the topology or plan graphs as DOT (or SVG with Graphviz).
    Graph(graph::Args),
    /// Rank the inventory's nodes for a job with one score's Wasm plugin.
    Score(score::Args),
    /// Serve a score's Wasm plugin as a Kubernetes scheduler extender.
    Extender(extender::Args),
    /// Show generated code (`--wat SCORE`: a score's Wasm module as text).
    Explain(explain::Args),
    /// Report every ELF binary without a riscv64 build in directories, files and image tarballs.
    AuditBinaries(audit::Args),
    /// Work with inventory files: merge probed node files into one inventory.
    Inventory(inventory::Args),
    /// Replay a trace through the engine (`--trace`), or an openb trace through reference placements (`--import openb`).
    Simulate(simulate::Args),
    /// Run the policy's `test` blocks through the placement engine.
    Test(test::Args),
    /// Serve the Language Server Protocol on stdin and stdout, for editors (docs/editor.md).
    Lsp(lsp::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { Exit::Usage.into() } else { Exit::Ok.into() };
        }
    };
    let mut out = Output::stdio();
    let exit = match cli.command {
        Command::Check(args) => check::run(&args, &mut out),
        Command::Test(args) => test::run(&args, &mut out),
        Command::Build(args) => build::run(&args, &mut out),
        Command::Diff(args) => diff::run(&args, &mut out),
        Command::Verify(args) => verify::run(&args, &mut out),
        Command::Fmt(args) => fmt::run(&args, &mut out),
        Command::Graph(args) => graph::run(&args, &mut out),
        Command::Score(args) => score::run(&args, &mut out),
        Command::Extender(args) => extender::run(&args, &mut out),
        Command::Explain(args) => explain::run(&args, &mut out),
        Command::AuditBinaries(args) => audit::run(&args, &mut out),
        Command::Inventory(args) => inventory::run(&args, &mut out),
        Command::Simulate(args) => simulate::run(&args, &mut out),
        Command::Lsp(args) => lsp::run(&args, &mut out),
    };
    out.finish(exit).into()
}
