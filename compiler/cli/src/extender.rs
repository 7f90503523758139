//! `placid extender [DIR] --score NAME --listen ADDR`: serves a score's Wasm plugin as a
//! Kubernetes scheduler extender until SIGINT or SIGTERM, then drains requests in flight.

use std::net::SocketAddr;
use std::time::Duration;

use placid_targets::k8s::scheduler::EXTENDER_PORT;

use placid_driver::render::Format;
use placid_scoring::extender::{self, Extender, Settings};

use crate::pipeline;
use crate::{Exit, Output, ScoreArgs};

/// Arguments of `placid extender`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ScoreArgs,
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
    let loaded = match args.project.load(out, Format::Text) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let settings = Settings {
        max_body: args.max_body_mib << 20,
        max_nodes: args.max_nodes,
        timeout: Duration::from_millis(args.timeout_ms),
        concurrency: args.concurrency,
        header_timeout: Duration::from_millis(args.header_timeout_ms),
        max_connections: args.max_connections,
    };
    let policy = loaded.plugin.meta().policy.clone();
    let extender = Extender::new(loaded.plugin, &loaded.model, settings);
    let listening = |address| out.errln(format_args!("placid extender: score `{policy}` on http://{address} (POST /filter, /prioritize)"));
    match extender::run(extender, args.listen, listening) {
        Ok(()) => Exit::Ok,
        Err(diagnostic) => pipeline::fail(out, Format::Text, diagnostic),
    }
}
