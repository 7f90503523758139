//! `placid simulate`: replays a workload on a cluster. One mode so far, `--import openb`: the
//! FGD paper's reference placements on Alibaba's openb node and pod lists (docs/semantics.md,
//! "Reference placements (openb)"), reporting the mean GPU allocation at 100 % and 130 %
//! arrived. Its JSON contract (`allocation` maps "100" and "130" to the mean allocated
//! percent over the seeds) is called by CI recipes and outside checks, so it stays stable.

use std::path::{Path, PathBuf};

use clap::ArgGroup;
use placid_driver::render::{Choice as _, Format};
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::source::Sources;
use placid_lang::span::Span;
use placid_openb::metric::{self, Inflation, Outcome, Seeds};
use placid_openb::place::{BestFit, Placement};
use placid_openb::read::{self, MAX_TRACE_BYTES, TraceFile};
use placid_openb::wasm::WasmScore;
use serde_json::json;

use crate::pipeline::{self, Fields};
use crate::{Exit, Output, ProjectArgs, choice, load_score, replay};

/// Arguments of `placid simulate`. The workload's source is one mode of the `mode` group.
#[derive(clap::Args, Debug)]
#[command(group(ArgGroup::new("mode").required(true).args(["import", "trace"])))]
pub struct Args {
    /// The project directory (holding placid.kdl): the policy a `--trace` replays on, or the
    /// project whose score `--placement score:NAME` runs.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Replay a placid trace (docs/simulate.md) through the engine on the project's policy.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// What the `--trace` file holds: a placid trace, a Slurm history (`sacct --parsable2` with
    /// the fields docs/simulate.md names) or Kueue's Workloads (`kubectl get workloads -A -o
    /// json`), the histories mapped to teams and tiers through the policy.
    #[arg(long, value_enum, default_value = "placid", requires = "trace")]
    from: replay::TraceForm,
    /// Replay a recorded NVLink utilisation series (CSV `at,scope,name,utilization`,
    /// docs/operations.md) with the trace: scores read it as `node.nvlink_utilization` and
    /// `domain.nvlink_utilization`, and the policy's throttling rule holds comm-heavy jobs.
    #[arg(long, requires = "trace")]
    telemetry: Option<PathBuf>,
    /// Write SVG plots of allocation and queue length over time into this directory.
    #[arg(long, requires = "trace")]
    plots: Option<PathBuf>,
    /// Write every job's outcome (submit, start, end, nodes, preemptions, cost, state and
    /// reason) to this file: CSV when it ends in `.csv`, JSON lines when in `.jsonl`.
    #[arg(long, requires = "trace")]
    jobs: Option<PathBuf>,
    /// Write the replay as one self-contained HTML page (charts, waits, cost, jobs) to this file.
    #[arg(long, requires = "trace")]
    html: Option<PathBuf>,
    /// Import a trace of another format: `openb`, Alibaba's node and pod lists (`--nodes`, `--pods`).
    #[arg(long, value_enum, requires_all = ["nodes", "pods"])]
    import: Option<Import>,
    /// The openb node list (`openb_node_list_*.csv`).
    #[arg(long, requires = "import")]
    nodes: Option<PathBuf>,
    /// The openb pod list (`openb_pod_list_*.csv`).
    #[arg(long, requires = "import")]
    pods: Option<PathBuf>,
    /// How an imported trace's pods are placed: `best-fit` or `random` as the FGD artifact
    /// defines them, or `score:NAME`, the project's score NAME run through its Wasm plugin.
    #[arg(long, value_parser = Reference::parse, default_value = "best-fit", requires = "import")]
    placement: Reference,
    /// The seeds, each one repetition: `42-51`, `7` or `1,3-4` (at most 100).
    #[arg(long, value_parser = Seeds::parse, default_value = "42-51", requires = "import")]
    seeds: Seeds,
    /// Inflate the workload to this factor of the cluster's GPUs, from 1 to 4.
    #[arg(long, value_parser = Inflation::parse, default_value = "1.3", requires = "import")]
    inflate: Inflation,
    /// Output format: a short summary, or one JSON object.
    #[arg(long, value_parser = choice::<Format>(), default_value = Format::Text.name())]
    format: Format,
}

/// The formats `--import` reads.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Import {
    /// Alibaba's openb node and pod lists (the FGD paper's trace).
    Openb,
}

/// How an imported trace's pods are placed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reference {
    /// The best node by the artifact's best-fit score, ties at random.
    BestFit,
    /// A uniform feasible node.
    Random,
    /// The best node by a score of the project, through its Wasm plugin.
    Score(String),
}

impl Reference {
    fn parse(text: &str) -> Result<Reference, String> {
        match text {
            "best-fit" => Ok(Reference::BestFit),
            "random" => Ok(Reference::Random),
            _ => match text.strip_prefix("score:") {
                Some(name) if !name.is_empty() => Ok(Reference::Score(name.to_owned())),
                _ => Err(format!("`{text}` is not `best-fit`, `random` or `score:NAME`")),
            },
        }
    }

    fn name(&self) -> String {
        match self {
            Reference::BestFit => "best-fit".to_owned(),
            Reference::Random => "random".to_owned(),
            Reference::Score(name) => format!("score:{name}"),
        }
    }
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    if let Some(trace) = &args.trace {
        let project = ProjectArgs { dir: args.dir.clone(), format: args.format };
        let files = replay::Files { plots: args.plots.as_deref(), jobs: args.jobs.as_deref(), html: args.html.as_deref(), form: args.from };
        return replay::run(&project, trace, args.telemetry.as_deref(), files, out);
    }
    match (args.import, &args.nodes, &args.pods) {
        (Some(Import::Openb), Some(nodes), Some(pods)) => openb(args, nodes, pods, out),
        // clap's `mode` group and `requires` refuse every other combination.
        _ => Exit::Usage,
    }
}

/// The openb mode: read both lists, run every seed, print the figures.
fn openb(args: &Args, nodes: &Path, pods: &Path, out: &mut Output) -> Exit {
    let format = args.format;
    let mut sources = Sources::new();
    let mut diagnostics = Diagnostics::new();
    let node_bytes = match read_trace(out, format, "the node list", nodes) {
        Ok(bytes) => bytes,
        Err(exit) => return exit,
    };
    let pod_bytes = match read_trace(out, format, "the pod list", pods) {
        Ok(bytes) => bytes,
        Err(exit) => return exit,
    };
    let (trace, read_diagnostics) = read::read(
        &mut sources,
        TraceFile { path: replay::shown_path(nodes), bytes: &node_bytes },
        TraceFile { path: replay::shown_path(pods), bytes: &pod_bytes },
    );
    diagnostics.extend(read_diagnostics);
    let Some(trace) = trace else {
        return pipeline::report(out, format, &sources, &diagnostics, Fields::new());
    };
    let visits = metric::seed_visits(&trace);
    if visits > metric::MAX_SEED_VISITS {
        let diagnostic = Diagnostic::error(
            Code::CommandNotApplicable,
            Span::DETACHED,
            format!(
                "{} nodes and {} pods make up to {visits} node visits a seed, more than the {} placid runs (docs/limits.md)",
                trace.nodes.len(),
                trace.pods.len(),
                metric::MAX_SEED_VISITS
            ),
        )
        .help("sample the node or the pod list: every arriving pod is placed by looking at every node");
        return pipeline::fail(out, format, diagnostic);
    }
    let mut best_fit = BestFit;
    let mut wasm;
    let mut placement = match &args.placement {
        Reference::BestFit => Placement::Scored(&mut best_fit),
        Reference::Random => Placement::Random,
        Reference::Score(name) => {
            let project = ProjectArgs { dir: args.dir.clone(), format };
            let loaded = match load_score(out, &project, Some(name)) {
                Ok(loaded) => loaded,
                Err(exit) => return exit,
            };
            wasm = match WasmScore::new(&loaded.plugin) {
                Ok(wasm) => wasm,
                Err(error) => return pipeline::fail(out, format, error.into()),
            };
            Placement::Scored(&mut wasm)
        }
    };
    let outcome = match metric::run(&trace, &mut placement, &args.seeds, args.inflate) {
        Ok(outcome) => outcome,
        Err(failed) => {
            diagnostics.push(score_failed(failed));
            return pipeline::report(out, format, &sources, &diagnostics, Fields::new());
        }
    };
    let summary = Summary { placement: args.placement.name(), nodes: trace.nodes.len(), pods: trace.pods.len(), args, outcome };
    match format {
        Format::Json => pipeline::report(out, format, &sources, &diagnostics, summary.fields()),
        Format::Text => {
            out.out(summary.text());
            pipeline::report(out, format, &sources, &diagnostics, Fields::new())
        }
    }
}

/// What a run prints.
struct Summary<'a> {
    placement: String,
    nodes: usize,
    pods: usize,
    args: &'a Args,
    outcome: Outcome,
}

impl Summary<'_> {
    /// The JSON report's fields; `allocation` is the stable contract.
    fn fields(&self) -> Fields {
        let marks = |allocation: &[(u32, Option<f64>)]| -> serde_json::Value {
            allocation.iter().map(|(mark, mean)| (mark.to_string(), json!(mean))).collect::<Fields>().into()
        };
        let runs: Vec<serde_json::Value> = self
            .outcome
            .runs
            .iter()
            .map(|run| json!({"seed": run.seed, "pods": run.pods, "failed": run.failed, "allocation": marks(&run.allocation)}))
            .collect();
        let mut fields = Fields::new();
        fields.insert("allocation".into(), marks(&self.outcome.allocation));
        fields.insert("placement".into(), json!(self.placement));
        fields.insert("seeds".into(), json!(self.args.seeds.as_slice()));
        fields.insert("inflate".into(), json!(f64::from(self.args.inflate.permille()) / 1000.0));
        fields.insert("nodes".into(), json!(self.nodes));
        fields.insert("pods".into(), json!(self.pods));
        fields.insert("runs".into(), json!(runs));
        fields
    }

    /// A few lines for people.
    fn text(&self) -> String {
        let seeds = self.args.seeds.as_slice();
        let mut text = format!(
            "openb, {}: {} nodes, {} pods, inflated to {}×, {} seed{}\n",
            self.placement,
            self.nodes,
            self.pods,
            f64::from(self.args.inflate.permille()) / 1000.0,
            seeds.len(),
            if seeds.len() == 1 { "" } else { "s" },
        );
        for (mark, mean) in &self.outcome.allocation {
            match mean {
                Some(mean) => text.push_str(&format!("  GPU allocated at {mark} % arrived: {mean:.2} %\n")),
                None => text.push_str(&format!("  GPU allocated at {mark} % arrived: not reached\n")),
            }
        }
        let failed: usize = self.outcome.runs.iter().map(|run| run.failed).sum();
        let placed: usize = self.outcome.runs.iter().map(|run| run.pods).sum();
        text.push_str(&format!("  pods failed: {failed} of {placed} over all seeds\n"));
        text
    }
}

/// Reads a trace file of at most [`MAX_TRACE_BYTES`]; one that cannot be read stops the
/// command (exit 2).
fn read_trace(out: &mut Output, format: Format, what: &str, path: &Path) -> Result<Vec<u8>, Exit> {
    pipeline::read_at_most(out, format, what, path, MAX_TRACE_BYTES)
}

/// E126: the score plugin failed on the trace (a trap, fuel or memory spent, or a ranking of
/// the wrong length); the simulation has no result to report.
fn score_failed(failed: placid_openb::place::ScoreFailed) -> Diagnostic {
    Diagnostic::error(Code::SimulateScoreFailed, Span::DETACHED, failed.0)
        .help("run the score on one job with `placid score` to see where it fails")
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    #[test]
    fn a_failing_score_is_reported_with_its_reason() {
        let diagnostic = super::score_failed(placid_openb::place::ScoreFailed("the score ranked 2 nodes of 3".to_owned()));
        assert_eq!(diagnostic.code, Code::SimulateScoreFailed);
        assert_eq!(diagnostic.message, "the score ranked 2 nodes of 3");
    }
}
