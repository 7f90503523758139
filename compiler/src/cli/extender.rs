//! `placid extender [DIR] --score NAME --listen ADDR`: serves a score's Wasm plugin as a
//! Kubernetes scheduler extender until SIGINT or SIGTERM, then drains requests in flight.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use placid_targets::k8s::scheduler::EXTENDER_PORT;

use crate::cli::{Exit, Output, ScoreArgs};
use crate::extender::{Extender, Settings, router};
use crate::render::Format;

/// Arguments of `placid extender`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ScoreArgs,
    /// Address to listen on (the port the Kubernetes target's scheduler config calls).
    #[arg(long, default_value_t = SocketAddr::from(([127, 0, 0, 1], EXTENDER_PORT)))]
    listen: SocketAddr,
    /// Largest request body, in MiB.
    #[arg(long, default_value_t = Settings::DEFAULT.max_body >> 20)]
    max_body_mib: usize,
    /// Time limit of one request, in milliseconds.
    #[arg(long, default_value_t = Settings::DEFAULT.timeout.as_millis() as u64)]
    timeout_ms: u64,
    /// Requests served at once.
    #[arg(long, default_value_t = Settings::DEFAULT.concurrency)]
    concurrency: usize,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let loaded = match args.project.load(out, Format::Text) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let settings =
        Settings { max_body: args.max_body_mib << 20, timeout: Duration::from_millis(args.timeout_ms), concurrency: args.concurrency };
    let policy = loaded.plugin.meta().policy.clone();
    let extender = Arc::new(Extender::new(loaded.plugin, &loaded.model, settings));
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(settings.concurrency.max(1)).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            out.errln(format_args!("error: cannot start the runtime: {error}"));
            return Exit::Usage;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(listener) => listener,
            Err(error) => {
                out.errln(format_args!("error: cannot listen on {}: {error}", args.listen));
                return Exit::Usage;
            }
        };
        out.errln(format_args!("placid extender: score `{policy}` on http://{} (POST /filter, /prioritize)", args.listen));
        let served = axum::serve(listener, router(extender, settings)).with_graceful_shutdown(shutdown_signal()).await;
        match served {
            Ok(()) => Exit::Ok,
            Err(error) => {
                out.errln(format_args!("error: the server failed: {error}"));
                Exit::Usage
            }
        }
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
