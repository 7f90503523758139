//! `placid extender [DIR] --score NAME --listen ADDR`: serves a score's Wasm plugin as a
//! Kubernetes scheduler extender until SIGINT or SIGTERM, then drains requests in flight.
//! `placid extender --plugin FILE` serves a module the Kubernetes target built (the
//! extender's Deployment mounts it from a ConfigMap): the pods then need no project, and read
//! every node's features from the Node objects kube-scheduler sends.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use placid_driver::render::Format;
use placid_extender::live::{Live, Log};
use placid_extender::telemetry::Prometheus;
use placid_extender::{Extender, Settings};
use placid_lang::address::HostPort;
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::model::Model;
use placid_lang::span::Span;
use placid_scoring::host::{Limits, Plugin};
use placid_targets::k8s::scheduler::EXTENDER_PORT;
use placid_targets::k8s::telemetry_config::{self, DeployedTelemetry};

use crate::pipeline;
use crate::{Exit, Output, ScoreArgs};

/// Arguments of `placid extender`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ScoreArgs,
    /// Serve this plugin module instead of compiling a project's score.
    #[arg(long, conflicts_with = "score")]
    plugin: Option<PathBuf>,
    /// Address to listen on (the port the Kubernetes target's scheduler config calls).
    #[arg(long, default_value_t = SocketAddr::from(([127, 0, 0, 1], EXTENDER_PORT)))]
    listen: SocketAddr,
    /// Largest request body, in MiB (413 above).
    #[arg(long, default_value_t = Settings::DEFAULT.max_body >> 20)]
    max_body_mib: usize,
    /// Most nodes one request may list (413 above).
    #[arg(long, default_value_t = Settings::DEFAULT.max_nodes)]
    max_nodes: usize,
    /// Time limit of one request, from its head to its answer, in milliseconds (503 after).
    #[arg(long, default_value_t = Settings::DEFAULT.timeout.as_millis() as u64)]
    timeout_ms: u64,
    /// Requests worked on at once (503 when all are busy).
    #[arg(long, default_value_t = Settings::DEFAULT.concurrency)]
    concurrency: usize,
    /// Time a connection has to send a request head, after opening or after its previous
    /// answer, in milliseconds (closed after).
    #[arg(long, default_value_t = Settings::DEFAULT.header_timeout.as_millis() as u64)]
    header_timeout_ms: u64,
    /// Connections served at once (more wait until one closes).
    #[arg(long, default_value_t = Settings::DEFAULT.max_connections)]
    max_connections: usize,
    /// Prometheus to read the policy's `telemetry` from (`HOST:PORT`, its HTTP API; the host
    /// may be a DNS name, resolved at each query); without it, `node.nvlink_utilization` and
    /// `domain.nvlink_utilization` are static (0) and nothing is throttled.
    #[arg(long)]
    prometheus: Option<HostPort>,
    /// With `--plugin`: the policy's telemetry, the pod label its throttle reads (under the
    /// project's label prefix) and the inventory's NVLink domains, as the Kubernetes target
    /// writes them (`telemetry.json`); from a project, its own are used.
    #[arg(long, requires = "plugin", requires = "prometheus")]
    telemetry: Option<PathBuf>,
    /// Time limit of one Prometheus query, connecting, sending and reading the whole answer,
    /// in milliseconds.
    #[arg(long, default_value_t = 500)]
    prometheus_timeout_ms: u64,
}

/// The extender's telemetry: the policy's `telemetry` block (from the project, or the
/// deployed `--telemetry` file) read from `--prometheus`.
fn live(out: &mut Output, args: &Args, model: &Model) -> Result<Option<Live>, Exit> {
    let Some(prometheus) = &args.prometheus else { return Ok(None) };
    let config = match &args.telemetry {
        Some(path) => {
            let bytes = pipeline::read_at_most(out, Format::Text, "the telemetry file", path, telemetry_config::MAX_BYTES)?;
            let config = DeployedTelemetry::parse(&bytes).map_err(|problem| {
                let message = format!("the telemetry file {} {problem}", path.display());
                pipeline::fail(
                    out,
                    Format::Text,
                    Diagnostic::error(Code::CommandNotApplicable, Span::DETACHED, message)
                        .help("pass the `telemetry.json` the Kubernetes target writes beside the plugin"),
                )
            })?;
            Some(config)
        }
        None => DeployedTelemetry::of(model),
    };
    let Some(config) = config else {
        let diagnostic = Diagnostic::error(Code::CommandNotApplicable, Span::DETACHED, "--prometheus is given but the policy declares no `telemetry`")
            .help("add a `telemetry` block (docs/language.md, \"Telemetry\"), pass the deployed `--telemetry` file with `--plugin`, or leave --prometheus out");
        return Err(pipeline::fail(out, Format::Text, diagnostic));
    };
    let prometheus = Prometheus { address: prometheus.clone(), timeout: Duration::from_millis(args.prometheus_timeout_ms) };
    Ok(Some(Live::new(&config, prometheus, stderr_log())))
}

/// The extender's log: lines come from the request threads; each is written whole, and one
/// that cannot be written is dropped rather than stopping scheduling.
fn stderr_log() -> Log {
    Arc::new(|line: &str| {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    })
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let (plugin, model) = match &args.plugin {
        Some(path) => match read_plugin(out, path) {
            Ok(plugin) => (plugin, Model::default()),
            Err(exit) => return exit,
        },
        None => match args.project.load(out, Format::Text) {
            Ok(loaded) => (loaded.plugin, loaded.model.into_model()),
            Err(exit) => return exit,
        },
    };
    let settings = Settings {
        max_body: args.max_body_mib << 20,
        max_nodes: args.max_nodes,
        timeout: Duration::from_millis(args.timeout_ms),
        concurrency: args.concurrency,
        header_timeout: Duration::from_millis(args.header_timeout_ms),
        max_connections: args.max_connections,
    };
    let policy = plugin.meta().policy.clone();
    let live = match live(out, args, &model) {
        Ok(live) => live,
        Err(exit) => return exit,
    };
    let telemetry = live.as_ref().map(|_| " with live NVLink telemetry").unwrap_or_default();
    let mut extender = Extender::new(plugin, &model, settings).with_log(stderr_log());
    if let Some(live) = live {
        extender = extender.with_live(live);
    }
    let listening =
        |address| out.errln(format_args!("placid extender: score `{policy}` on http://{address} (POST /filter, /prioritize){telemetry}"));
    match placid_extender::run(extender, args.listen, listening) {
        Ok(()) => Exit::Ok,
        Err(diagnostic) => pipeline::fail(out, Format::Text, diagnostic),
    }
}

/// Reads and loads a plugin module, refusing one larger than the host accepts before reading
/// the rest of it.
fn read_plugin(out: &mut Output, path: &Path) -> Result<Plugin, Exit> {
    let bytes = pipeline::read_at_most(out, Format::Text, "the plugin", path, Limits::DEFAULT.module_bytes as u64)?;
    Plugin::load(&bytes, Limits::DEFAULT).map_err(|error| pipeline::fail(out, Format::Text, Diagnostic::from(error)))
}
