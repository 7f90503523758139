//! The exporter's HTTP server: `GET /metrics` on axum, the stack of the scheduler extender
//! (compiler/scoring), on a current-thread runtime, since one node is scraped by one or two
//! Prometheus servers every few seconds.
//!
//! Connections go through the loop the extender uses (`placid_serve`): a header timeout that
//! also closes idle keep-alive connections, and a cap that sheds the connections still
//! waiting for a head first, so idle or slow-header clients cannot starve the scrapes.
//!
//! NVML calls block, so a scrape runs on a blocking thread. At most [`CONCURRENT_SCRAPES`]
//! run at once and each has [`SCRAPE_TIMEOUT`]: a hung driver answers 503/504 instead of
//! piling up threads, and the server stays up.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::Semaphore;

use super::{CONTENT_TYPE, Identity, scrape};
use crate::nvml::GpuSource;

/// Scrapes answered at once; more get 503 (Prometheus retries at the next interval).
pub const CONCURRENT_SCRAPES: usize = 2;
/// Longest a scrape may take: Prometheus's default scrape timeout.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections held at once, far inside the default 1,024 file descriptors; at the cap, the
/// one that has waited longest for a request head is closed to make room.
pub const MAX_CONNECTIONS: usize = 64;
/// Time a connection has to send a request head, from when it opens or from its previous
/// answer (so idle keep-alive connections close too).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
struct Exporter {
    source: Arc<dyn GpuSource + Send + Sync>,
    identity: Arc<Identity>,
    places: Arc<Semaphore>,
}

/// Serves `/metrics` on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    source: Arc<dyn GpuSource + Send + Sync>,
    identity: Identity,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let state = Exporter { source, identity: Arc::new(identity), places: Arc::new(Semaphore::new(CONCURRENT_SCRAPES)) };
        let router = Router::new().route("/metrics", get(metrics)).with_state(state);
        let limits = placid_serve::Limits { header_timeout: HEADER_TIMEOUT, max_connections: MAX_CONNECTIONS, drain: SCRAPE_TIMEOUT };
        placid_serve::serve(listener, router, limits, shutdown).await;
        Ok(())
    })
}

async fn metrics(State(exporter): State<Exporter>) -> Response {
    let Ok(place) = exporter.places.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "a scrape is already running\n").into_response();
    };
    let work = tokio::task::spawn_blocking(move || {
        let _place = place;
        scrape(exporter.source.as_ref(), &exporter.identity)
    });
    match tokio::time::timeout(SCRAPE_TIMEOUT, work).await {
        Ok(Ok(text)) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        Ok(Err(_)) => (StatusCode::INTERNAL_SERVER_ERROR, "the scrape failed\n").into_response(),
        Err(_) => (StatusCode::GATEWAY_TIMEOUT, "NVML did not answer in time\n").into_response(),
    }
}
