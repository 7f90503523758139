//! `placid score [DIR] --score NAME --job k=v... | --job-file F [--format table|json]`: ranks
//! the inventory's nodes for a job with the score's Wasm plugin, run by the same host as the
//! extender.

use std::path::PathBuf;

use placid_driver::render::Format;
use placid_scoring::job;
use placid_scoring::rank::{Ranked, failed_names, is_feasible, rank};
use placid_scoring::{Codes, inventory_rows};

use crate::pipeline;
use crate::{Exit, ScoreArgs};

/// Arguments of `placid score`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ScoreArgs,
    /// A job parameter, `name=value` (`gpus=4`, `comm=high`, `rack=r1`); repeatable.
    #[arg(long = "job", value_name = "NAME=VALUE", conflicts_with = "job_file")]
    job: Vec<String>,
    /// A JSON object of job parameters.
    #[arg(long)]
    job_file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    format: Output,
}

/// How results are printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    /// An aligned table.
    Table,
    /// A JSON array.
    Json,
}

pub fn run(args: &Args, out: &mut crate::Output) -> Exit {
    let format = if args.format == Output::Json { Format::Json } else { Format::Text };
    let values = match &args.job_file {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => job::from_json(&text),
            Err(error) => return pipeline::unreadable(out, format, "the job file", path, error),
        },
        None => job::from_pairs(&args.job),
    };
    let values = match values {
        Ok(values) => values,
        Err(diagnostic) => return pipeline::fail(out, format, diagnostic),
    };
    let loaded = match args.project.load(out, format) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let meta = loaded.plugin.meta();
    let mut codes = Codes::default();
    let rows = inventory_rows(&loaded.model, &loaded.plugin, &mut codes);
    let params = meta.job_params();
    let params = match job::params_block(&params, &values, &mut codes) {
        Ok(params) => params,
        Err(diagnostic) => return pipeline::fail(out, format, diagnostic),
    };
    let scores = match loaded.plugin.worker().and_then(|mut worker| worker.score(&params, &rows)) {
        Ok(scores) => scores,
        Err(error) => {
            pipeline::fail(out, format, error.into());
            return Exit::Failure;
        }
    };
    let results = loaded
        .model
        .nodes
        .iter()
        .enumerate()
        .map(|(index, node)| {
            let (score, mask) = (scores.scores.get(index).copied().unwrap_or(f64::NAN), scores.failed.get(index).copied().unwrap_or(0));
            Ranked { node: node.name.to_string(), score, feasible: is_feasible(score, mask), failed: failed_names(meta, mask) }
        })
        .collect();
    let ranked = rank(meta, results);
    let text = match args.format {
        Output::Table => table(&meta.policy, &ranked),
        Output::Json => format!("{}\n", placid_driver::render::json_text(&json(&ranked))),
    };
    out.out(text);
    Exit::Ok
}

fn score_text(score: f64) -> String {
    if score.is_nan() {
        "undefined".to_owned()
    } else if score == f64::NEG_INFINITY {
        "-".to_owned()
    } else {
        format!("{score:.4}")
    }
}

fn table(policy: &str, ranked: &[Ranked]) -> String {
    let width = ranked.iter().map(|result| result.node.len()).max().unwrap_or(4).max(4);
    let mut text = format!("score `{policy}`\n{:>4}  {:<width$}  {:>12}  {:<8}  failed\n", "rank", "node", "score", "feasible");
    for (index, result) in ranked.iter().enumerate() {
        let rank = if result.feasible { (index + 1).to_string() } else { "-".to_owned() };
        let failed = if result.failed.is_empty() { "-".to_owned() } else { result.failed.join(", ") };
        let feasible = if result.feasible { "yes" } else { "no" };
        text.push_str(&format!("{rank:>4}  {:<width$}  {:>12}  {feasible:<8}  {failed}\n", result.node, score_text(result.score)));
    }
    text
}

fn json(ranked: &[Ranked]) -> serde_json::Value {
    let rows = ranked.iter().map(|result| {
        serde_json::json!({
            "node": result.node,
            "score": if result.score.is_finite() { serde_json::json!(result.score) } else { serde_json::Value::Null },
            "feasible": result.feasible,
            "failed": result.failed,
        })
    });
    serde_json::Value::Array(rows.collect())
}
