//! The HTTP/1.1 connection loop of placid's two servers, the scheduler extender and the
//! probe's exporter: hyper's own HTTP/1.1 server under a header timeout (from a connection's
//! opening, or from its previous answer, so idle keep-alive connections close too) and a
//! cap on connections.
//!
//! At the cap, a new connection does not wait for a slow one to time out: the connection
//! that has waited longest for a request head is shed (closed) to make room. Connections
//! working on a request are never shed, so clients that send their heads (kube-scheduler,
//! Prometheus) are served at once while any number of half-sent or idle connections
//! (slowloris) are held; only when every connection is working on a request does a new one
//! wait.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// Connection limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Time a connection has to send a complete request head, from when it opens or from the
    /// end of its previous answer.
    pub header_timeout: Duration,
    /// Connections held at once.
    pub max_connections: usize,
    /// Longest a graceful shutdown waits for requests in flight.
    pub drain: Duration,
}

/// How long to wait before accepting again after `accept` failed for want of resources (out
/// of file descriptors, for instance), instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` under `limits` until `shutdown` completes, then lets the
/// requests in flight finish (idle connections are closed at once) for at most
/// `limits.drain`.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits, shutdown: impl Future<Output = ()>) {
    // hyper's own HTTP/1.1 server rather than hyper-util's `auto` one: `auto` first sniffs
    // for an HTTP/2 preface without any timer, so a client that sends nothing would be held
    // forever; here the header timer runs from the first byte the server waits for.
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let service = TowerToHyperService::new(router);
    let connections = Connections::new(limits.max_connections);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) if is_connection_error(&error) => continue,
            Err(_) => {
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let admitted = tokio::select! {
            admitted = connections.admit() => admitted,
            () = &mut shutdown => break,
        };
        // Answers are small and written whole; do not let Nagle hold back their last segment.
        let _ = stream.set_nodelay(true);
        let tracked = Tracked { inner: service.clone(), connection: admitted.clone() };
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), tracked));
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                () = admitted.shed.notified() => {}
            }
            admitted.close();
        });
    }
    // Requests in flight end by their deadline and heads by the header timeout; a client that
    // never reads its answer must not keep the process from exiting.
    let _ = tokio::time::timeout(limits.drain, graceful.shutdown()).await;
}

/// Errors of one connection (it was reset before it was accepted), after which accepting
/// again at once is right.
fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionRefused
    )
}

/// The connections held, and those of them waiting for a request head, oldest first.
struct Connections {
    places: Arc<Semaphore>,
    /// Waiting connections by the order they started waiting in.
    waiting: Mutex<BTreeMap<u64, Arc<Notify>>>,
    /// Notified when a connection starts waiting for a head, for a new one held at the cap.
    started_waiting: Notify,
    next: AtomicU64,
}

impl Connections {
    fn new(max: usize) -> Arc<Connections> {
        Arc::new(Connections {
            places: Arc::new(Semaphore::new(max.max(1))),
            waiting: Mutex::default(),
            started_waiting: Notify::new(),
            next: AtomicU64::new(0),
        })
    }

    /// A place for a new connection: at once when one is free; else after shedding the
    /// connection that has waited longest for a request head; only when none is waiting,
    /// after one closes.
    async fn admit(self: &Arc<Connections>) -> Arc<Connection> {
        let permit = loop {
            // Registered before looking, so a connection that starts waiting meanwhile wakes
            // this one.
            let started_waiting = self.started_waiting.notified();
            if let Ok(permit) = self.places.clone().try_acquire_owned() {
                break permit;
            }
            let oldest = self.lock().pop_first();
            if let Some((_, shed)) = oldest {
                shed.notify_one();
            }
            tokio::select! {
                permit = self.places.clone().acquire_owned() => match permit {
                    Ok(permit) => break permit,
                    Err(_) => unreachable!("the connection semaphore is never closed"),
                },
                () = started_waiting => {}
            }
        };
        let connection =
            Arc::new(Connection { connections: self.clone(), shed: Arc::new(Notify::new()), key: Mutex::new(None), _permit: permit });
        connection.idle();
        connection
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Notify>>> {
        // Only whole entries are inserted or removed under the lock.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One held connection.
struct Connection {
    connections: Arc<Connections>,
    /// Notified to close the connection.
    shed: Arc<Notify>,
    /// Its key among the waiting connections, while it waits for a head.
    key: Mutex<Option<u64>>,
    _permit: OwnedSemaphorePermit,
}

impl Connection {
    /// It waits for a request head (it opened, or answered one): it may be shed.
    fn idle(&self) {
        let key = self.connections.next.fetch_add(1, Ordering::Relaxed);
        self.connections.lock().insert(key, self.shed.clone());
        if let Some(previous) = self.key.lock().unwrap_or_else(PoisonError::into_inner).replace(key) {
            self.connections.lock().remove(&previous);
        }
        self.connections.started_waiting.notify_waiters();
    }

    /// It has sent a head and is being answered: it is not shed.
    fn busy(&self) {
        if let Some(key) = self.key.lock().unwrap_or_else(PoisonError::into_inner).take() {
            self.connections.lock().remove(&key);
        }
    }

    /// It closed: its place is given back when the last reference goes.
    fn close(&self) {
        self.busy();
    }
}

/// The service of one connection, which tells the connection when it works on a request.
#[derive(Clone)]
struct Tracked<S> {
    inner: S,
    connection: Arc<Connection>,
}

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<hyper::Request<Incoming>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        self.connection.busy();
        let answer = self.inner.call(request);
        let connection = self.connection.clone();
        Box::pin(async move {
            let answered = answer.await;
            connection.idle();
            answered
        })
    }
}
