//! `placid extender [DIR] --score NAME --listen ADDR`: serves a score's Wasm plugin as a
//! Kubernetes scheduler extender until SIGINT or SIGTERM, then drains requests in flight.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use placid_targets::k8s::scheduler::EXTENDER_PORT;

use crate::cli::{Exit, ScoreArgs};
use crate::extender::{Extender, Settings, serve};
use crate::render::Format;

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

pub fn run(args: &Args) -> Exit {
    let loaded = match args.project.load(Format::Text) {
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
    let extender = Arc::new(Extender::new(loaded.plugin, &loaded.model, settings));
    // Scoring runs on the blocking pool, one thread per request worked on; the async
    // workers (one per core) only move bytes.
    let runtime = match tokio::runtime::Builder::new_multi_thread().max_blocking_threads(settings.concurrency.max(1)).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return Exit::Usage;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("error: cannot listen on {}: {error}", args.listen);
                return Exit::Usage;
            }
        };
        eprintln!("placid extender: score `{policy}` on http://{} (POST /filter, /prioritize)", args.listen);
        serve(listener, extender, shutdown_signal()).await;
        Exit::Ok
    })
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
