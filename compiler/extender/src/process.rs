//! The extender as a process: a runtime sized by the settings, the listening socket, and a
//! graceful stop on SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::sync::Arc;

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;

use crate::{Extender, serve};

/// Serves `extender` on `listen` until SIGINT or SIGTERM, then drains the requests in flight.
/// `listening` is called once the socket is bound. A runtime or socket that cannot be had is
/// an [`Code::EnvironmentUnavailable`] diagnostic.
pub fn run(extender: Extender, listen: SocketAddr, listening: impl FnOnce(SocketAddr)) -> Result<(), Diagnostic> {
    let unavailable = |message: String, help: &str| Diagnostic::error(Code::EnvironmentUnavailable, Span::DETACHED, message).help(help);
    // Scoring runs on the blocking pool, one thread per request worked on; the async
    // workers (one per core) only move bytes.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(extender.settings.concurrency.max(1))
        .enable_all()
        .build()
        .map_err(|error| {
            unavailable(
                format!("cannot start the runtime: {error}"),
                "the extender needs threads and an event loop; check the process limits",
            )
        })?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|error| unavailable(format!("cannot listen on {listen}: {error}"), "choose a free address with --listen"))?;
        listening(listener.local_addr().unwrap_or(listen));
        serve(listener, Arc::new(extender), shutdown_signal()).await;
        Ok(())
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
