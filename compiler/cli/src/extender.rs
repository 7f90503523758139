//! `placid extender [DIR] --score NAME --listen ADDR`: serves a score's Wasm plugin as a
//! Kubernetes scheduler extender until SIGINT or SIGTERM, then drains requests in flight.
//! `placid extender --plugin FILE` serves a module the Kubernetes target built (the
//! extender's Deployment mounts it from a ConfigMap): the pods then need no project, and read
//! every node's features from the Node objects kube-scheduler sends.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use placid_targets::k8s::scheduler::EXTENDER_PORT;

use placid_driver::render::Format;
use placid_lang::diag::Diagnostic;
use placid_lang::model::Model;
use placid_scoring::extender::{self, Extender, Settings};
use placid_scoring::host::{Limits, Plugin};

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
    let extender = Extender::new(plugin, &model, settings);
    let listening = |address| out.errln(format_args!("placid extender: score `{policy}` on http://{address} (POST /filter, /prioritize)"));
    match extender::run(extender, args.listen, listening) {
        Ok(()) => Exit::Ok,
        Err(diagnostic) => pipeline::fail(out, Format::Text, diagnostic),
    }
}

/// Reads and loads a plugin module, refusing one larger than the host accepts before reading
/// the rest of it.
fn read_plugin(out: &mut Output, path: &Path) -> Result<Plugin, Exit> {
    let limit = Limits::DEFAULT.module_bytes as u64;
    let file = std::fs::File::open(path).map_err(|error| pipeline::unreadable(out, Format::Text, "the plugin", path, error))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|error| pipeline::unreadable(out, Format::Text, "the plugin", path, error))?;
    Plugin::load(&bytes, Limits::DEFAULT).map_err(|error| pipeline::fail(out, Format::Text, Diagnostic::from(error)))
}
