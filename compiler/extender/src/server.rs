//! The HTTP server: connections, routes, limits, the instance pool and the two verbs.
//!
//! A request goes through four gates, each answering at once when it is shut: hyper reads
//! the head (HTTP/1.1 only) on one of at most `max_connections` connections within
//! `header_timeout` (`placid_serve`, which sheds the connections still waiting for a head
//! first, so half-sent requests cannot crowd out whole ones); the declared body size is checked (413); the request takes a place
//! without waiting (503); the body is read within the request's deadline. Parsing, scoring
//! and writing the answer then run on a blocking thread, so the async workers only move bytes
//! and a heavy request cannot delay a light one on the same worker.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use placid_lang::diag::Code;
use placid_lang::expr::NodeFeature;
use placid_lang::model::{CommLevel, Model, ThrottleRule};
use placid_scoring::host::{HostError, Plugin, Scores, Worker};
use placid_targets::wasm::meta::Source;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::live::{Figures, Live, Log};
use crate::wire::{ErrorBody, ExtenderArgs, FilterResult, HostPriority, OutNodeList};
use placid_scoring::kube::{self, KubeNode};
use placid_scoring::rank::{NEUTRAL_PRIORITY, extender_priorities, failed_names, is_feasible, is_unranked};
use placid_scoring::{Codes, inventory_rows};

/// Server limits (docs/targets/kubernetes.md, "Scheduler extender").
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Most nodes one request may list, by name or as objects.
    pub max_nodes: usize,
    /// Time from a request's head to its answer; reading the body and scoring count, and the
    /// plugin is interrupted when it runs out.
    pub timeout: Duration,
    /// Requests worked on at once (each on a blocking thread, with its own wasmtime instance).
    pub concurrency: usize,
    /// Time a connection has to send a complete request head, from when it opens or from the
    /// end of its previous answer; so it also closes idle keep-alive connections.
    pub header_timeout: Duration,
    /// Connections held at once; at the cap, the one that has waited longest for a request
    /// head is closed to make room for a new one (more wait only while every connection is
    /// being answered).
    pub max_connections: usize,
}

impl Settings {
    /// 8 MiB bodies and 15,000 nodes (three times the 5,000 Kubernetes supports in one
    /// cluster): 15,000 names take under 4 MiB, and the 750 Node objects kube-scheduler sends
    /// at most by default (`percentageOfNodesToScore`) about 8 MiB; 5 s (kube-scheduler's
    /// default `httpTimeout`); 8 requests at once; 10 s for a request head; 512 connections,
    /// within a default limit of 1,024 file descriptors.
    pub const DEFAULT: Settings = Settings {
        max_body: 8 << 20,
        max_nodes: 15_000,
        timeout: Duration::from_secs(5),
        concurrency: 8,
        header_timeout: Duration::from_secs(10),
        max_connections: 512,
    };
}

/// Bodies above this size, or of unknown size, are large: they may take only half of the
/// places, so that small requests (a few thousand node names, a few Node objects) are still
/// answered while large ones run.
const LARGE_BODY: u64 = 64 << 10;

/// The state shared by all requests.
pub struct Extender {
    plugin: Plugin,
    pub(crate) settings: Settings,
    /// Inventory rows by node name, for `nodeCacheCapable` requests; racks and domains are
    /// interned in `codes`, which requests clone so parameters use the same codes.
    cached_rows: HashMap<String, Vec<f64>>,
    codes: Codes,
    workers: Mutex<Vec<Worker>>,
    places: Places,
    /// Live telemetry, when the policy declares it and the command line names Prometheus.
    live: Option<Live>,
    /// The row fields filled from telemetry: their index and whether they are the node's own
    /// figure (else its domain's).
    live_fields: Vec<(usize, bool)>,
    /// Where operational lines go (the command's standard error).
    log: Option<Log>,
    /// When the last unranked-nodes line was logged.
    unranked_logged: Mutex<Option<Instant>>,
}

/// The least time between two lines about unranked nodes.
const UNRANKED_LOG_EVERY: Duration = Duration::from_secs(60);

/// Places for requests being worked on: every request takes one of `all`, and a large one
/// also one of `large`, which has half as many.
struct Places {
    all: Arc<Semaphore>,
    large: Arc<Semaphore>,
}

/// A request's place, given back when it is dropped (on the blocking thread, when the work is
/// done, even if the client has gone).
struct Place {
    _all: OwnedSemaphorePermit,
    _large: Option<OwnedSemaphorePermit>,
}

impl Places {
    fn new(concurrency: usize) -> Places {
        let concurrency = concurrency.max(1);
        Places { all: Arc::new(Semaphore::new(concurrency)), large: Arc::new(Semaphore::new(concurrency.div_ceil(2))) }
    }

    /// A place now, or none: a busy extender answers 503 at once rather than queueing work
    /// that kube-scheduler may have given up on by the time it starts.
    fn take(&self, large: bool) -> Option<Place> {
        let large = if large { Some(self.large.clone().try_acquire_owned().ok()?) } else { None };
        Some(Place { _all: self.all.clone().try_acquire_owned().ok()?, _large: large })
    }
}

/// Which verb a request is for.
#[derive(Clone, Copy, Debug)]
enum Verb {
    Filter,
    Prioritize,
}

impl Extender {
    /// Serves `plugin`, with rows of the inventory of `model` for cached mode.
    pub fn new(plugin: Plugin, model: &Model, settings: Settings) -> Extender {
        let mut codes = Codes::default();
        let rows = inventory_rows(model, &plugin, &mut codes);
        let width = plugin.meta().node_fields.len();
        let cached_rows = model
            .nodes
            .iter()
            .enumerate()
            .map(|(index, node)| (node.name.to_string(), rows.get(index * width..(index + 1) * width).unwrap_or_default().to_vec()))
            .collect();
        let live_fields = plugin
            .meta()
            .node_fields
            .iter()
            .enumerate()
            .filter_map(|(index, field)| match &field.kubernetes {
                Source::Telemetry(scope) => Some((index, scope == NodeFeature::NvlinkUtilization.scope())),
                _ => None,
            })
            .collect();
        Extender {
            plugin,
            settings,
            cached_rows,
            codes,
            workers: Mutex::new(Vec::new()),
            places: Places::new(settings.concurrency),
            live: None,
            live_fields,
            log: None,
            unranked_logged: Mutex::new(None),
        }
    }

    /// Reads `node.nvlink_utilization` and `domain.nvlink_utilization` from `live`, and
    /// enforces its throttling rule in the filter.
    pub fn with_live(mut self, live: Live) -> Extender {
        self.live = Some(live);
        self
    }

    /// Logs operational lines (unranked nodes) through `log`.
    pub fn with_log(mut self, log: Log) -> Extender {
        self.log = Some(log);
        self
    }

    fn with_worker<T>(&self, run: impl FnOnce(&mut Worker) -> Result<T, HostError>) -> Result<T, HostError> {
        let pooled = self.workers.lock().ok().and_then(|mut workers| workers.pop());
        let mut worker = match pooled {
            Some(worker) => worker,
            None => self.plugin.worker()?,
        };
        let result = run(&mut worker);
        if let Ok(mut workers) = self.workers.lock() {
            workers.push(worker);
        }
        result
    }

    /// The batch of a request: node names in order, whether each is known, and the scores.
    fn score(&self, args: &ExtenderArgs<'_>, deadline: Instant) -> Result<Batch, HostError> {
        let meta = self.plugin.meta();
        let mut codes = self.codes.clone();
        let params = kube::pod_params(&meta.params, &args.pod, &mut codes);
        let width = meta.node_fields.len();
        let mut names = Vec::new();
        let mut rows = Vec::new();
        let mut unknown = Vec::new();
        if let Some(node_names) = &args.node_names {
            for name in node_names {
                match self.cached_rows.get(name) {
                    Some(row) => rows.extend_from_slice(row),
                    None => {
                        unknown.push(name.clone());
                        continue;
                    }
                }
                names.push(name.clone());
            }
        } else if let Some(nodes) = &args.nodes {
            for item in &nodes.items {
                let node = kube_node(item);
                kube::node_row(&meta.node_fields, &node, &mut codes, &mut rows);
                names.push(node.metadata.name);
            }
        }
        let figures = self.live.as_ref().map(Live::figures).unwrap_or_default();
        if width > 0 && !self.live_fields.is_empty() {
            for (row, name) in rows.chunks_exact_mut(width).zip(&names) {
                let live = figures.of(name);
                for &(index, own) in &self.live_fields {
                    row[index] = if own { live.node } else { live.domain };
                }
            }
        }
        let scores = if width == 0 {
            Scores { scores: vec![0.0; names.len()], failed: vec![0; names.len()], feasible: names.len() }
        } else {
            let time_left = deadline.saturating_duration_since(Instant::now());
            self.with_worker(|worker| worker.score_within(&params, &rows, time_left))?
        };
        Ok(Batch { names, unknown, scores, figures })
    }

    /// One request, from its body to its answer.
    async fn handle(self: Arc<Self>, verb: Verb, body: Body) -> Response {
        let deadline = Instant::now() + self.settings.timeout;
        let limit = self.settings.max_body;
        // Clients that send `Content-Length` (kube-scheduler does) are refused before a byte of
        // an oversized body is read.
        let declared = body.size_hint().upper();
        if declared.is_some_and(|length| length > limit as u64) {
            return body_too_large(limit);
        }
        let Some(place) = self.places.take(declared.is_none_or(|length| length > LARGE_BODY)) else {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                Code::ExtenderOverloaded,
                format!("the extender is already working on {} requests", self.settings.concurrency),
                "kube-scheduler retries the pod; raise `--concurrency` if this happens without an attack",
            );
        };
        let read = tokio::time::timeout_at(deadline.into(), Limited::new(body, limit).collect()).await;
        let bytes = match read {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(error)) if error.is::<LengthLimitError>() => return body_too_large(limit),
            Ok(Err(error)) => return bad_request(format!("the body could not be read: {error}")),
            Err(_) => return deadline_passed(self.settings.timeout),
        };
        let answered = tokio::task::spawn_blocking(move || {
            let _place = place;
            self.answer(verb, &bytes, deadline)
        });
        answered.await.unwrap_or_else(|_| {
            let body = ErrorBody { error: "the extender failed on this request".to_owned(), code: None, help: None };
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
        })
    }

    /// Parses, scores and answers a request whose body has been read (on a blocking thread).
    fn answer(&self, verb: Verb, body: &[u8], deadline: Instant) -> Response {
        let args: ExtenderArgs<'_> = match serde_json::from_slice(body) {
            Ok(args) => args,
            Err(error) => return bad_request(format!("the body is not ExtenderArgs JSON: {error}")),
        };
        if args.node_count() > self.settings.max_nodes {
            return refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                Code::ExtenderRequestTooLarge,
                format!("the request lists {} nodes, more than the {} this extender accepts", args.node_count(), self.settings.max_nodes),
                "raise `--max-nodes` for a cluster this large",
            );
        }
        let batch = self.score(&args, deadline);
        // The plugin was stopped at the request's deadline rather than its own.
        if batch.is_err() && Instant::now() >= deadline {
            return deadline_passed(self.settings.timeout);
        }
        match verb {
            Verb::Filter => self.filter(args, batch),
            Verb::Prioritize => self.prioritize(args, batch),
        }
    }

    fn filter(&self, args: ExtenderArgs<'_>, batch: Result<Batch, HostError>) -> Response {
        let mut result = FilterResult::default();
        let batch = match batch {
            Ok(batch) => batch,
            Err(error) => {
                // Never fail open: an error makes kube-scheduler retry the pod later.
                result.error = format!("placid plugin {}: {error}", self.plugin.meta().policy);
                return axum::Json(result).into_response();
            }
        };
        let meta = self.plugin.meta();
        let throttle = self.throttle_for(&args);
        let mut passing = Vec::new();
        let mut unranked = Vec::new();
        for (index, name) in batch.names.iter().enumerate() {
            let (score, mask) = (batch.scores.scores[index], batch.scores.failed[index]);
            if let Some(rule) = throttle
                && batch.figures.of(name).throttled
            {
                let reason = format!(
                    "placid: NVLink domain throttled (above {} for {} s; no new {}-comm jobs)",
                    rule.threshold,
                    rule.hold_seconds,
                    rule.comm.as_str()
                );
                result.failed_nodes.insert(name.clone(), reason);
            } else if is_feasible(score, mask) {
                passing.push(index);
            } else if mask != 0 {
                result.failed_nodes.insert(name.clone(), format!("placid: failed {}", failed_names(meta, mask).join(", ")));
            } else if is_unranked(score, mask) {
                // Unranked (a feature is missing): passed, and scored neutrally.
                passing.push(index);
                unranked.push(name.as_str());
            } else {
                // The score itself refuses the node (`-inf`), as in the engine.
                result.failed_nodes.insert(name.clone(), "placid: the score refuses the node (-inf)".to_owned());
            }
        }
        self.log_unranked(&args, &unranked, batch.names.len());
        for name in &batch.unknown {
            result.failed_and_unresolvable.insert(name.clone(), "placid: node not in the inventory".to_owned());
        }
        if args.node_names.is_some() {
            result.node_names = Some(passing.iter().map(|index| batch.names[*index].clone()).collect());
        } else {
            let items = args.nodes.map(|nodes| nodes.items).unwrap_or_default();
            result.nodes = Some(OutNodeList { items: passing.iter().filter_map(|index| items.get(*index).copied()).collect() });
        }
        axum::Json(result).into_response()
    }

    /// Says, at most once per [`UNRANKED_LOG_EVERY`], that a pod's score was undefined on
    /// some nodes, which passed unranked: enough to find a missing label, never a flood.
    fn log_unranked(&self, args: &ExtenderArgs<'_>, unranked: &[&str], of: usize) {
        let (Some(log), Some(first)) = (&self.log, unranked.first()) else { return };
        let Ok(mut last) = self.unranked_logged.lock() else { return };
        if last.is_some_and(|at| at.elapsed() < UNRANKED_LOG_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        log(&format!(
            "placid extender: score `{}` is undefined for pod `{}` on {} of {of} nodes (first `{first}`): a feature it reads is missing; they pass unranked (neutral score {NEUTRAL_PRIORITY})",
            self.plugin.meta().policy,
            args.pod.metadata.name,
            unranked.len(),
        ));
    }

    /// The throttling rule when it applies to the request's pod: its `comm` label is at the
    /// rule's level or above. A pod without the label is not comm-heavy.
    fn throttle_for(&self, args: &ExtenderArgs<'_>) -> Option<&ThrottleRule> {
        let live = self.live.as_ref()?;
        let rule = live.throttle()?;
        let comm = match args.pod.metadata.labels.get(live.comm_label())?.as_str() {
            "low" => CommLevel::Low,
            "medium" => CommLevel::Medium,
            "high" => CommLevel::High,
            _ => return None,
        };
        rule.refuses(comm).then_some(rule)
    }

    fn prioritize(&self, args: ExtenderArgs<'_>, batch: Result<Batch, HostError>) -> Response {
        let priorities: Vec<HostPriority> = match batch {
            Ok(batch) => {
                let scores = extender_priorities(self.plugin.meta(), &batch.scores.scores, &batch.scores.failed);
                let known = batch.names.into_iter().zip(scores).map(|(host, score)| HostPriority { host, score });
                known.chain(batch.unknown.into_iter().map(|host| HostPriority { host, score: 0 })).collect()
            }
            // A prioritize error is ignored by kube-scheduler anyway; answer neutral scores.
            Err(_) => names_of(&args).into_iter().map(|host| HostPriority { host, score: 0 }).collect(),
        };
        axum::Json(priorities).into_response()
    }
}

struct Batch {
    names: Vec<String>,
    unknown: Vec<String>,
    scores: Scores,
    figures: Arc<Figures>,
}

/// Serves `extender` on `listener` until `shutdown` completes, through the connection loop
/// placid's servers share (`placid_serve`: the header timeout, the connection cap that sheds
/// connections still waiting for a head first), then lets the requests in flight finish,
/// waiting at most the longer of the request deadline and the header timeout.
pub async fn serve(listener: TcpListener, extender: Arc<Extender>, shutdown: impl Future<Output = ()>) {
    let settings = extender.settings;
    let limits = placid_serve::Limits {
        header_timeout: settings.header_timeout,
        max_connections: settings.max_connections,
        drain: settings.timeout.max(settings.header_timeout),
    };
    placid_serve::serve(listener, router(extender), limits, shutdown).await;
}

/// The extender's routes: `POST /filter`, `POST /prioritize`, and `GET /healthz` for the
/// Deployment's probes (200 once the plugin is loaded, which `serve` requires).
fn router(extender: Arc<Extender>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/filter",
            post(|State(extender): State<Arc<Extender>>, request: Request| extender.handle(Verb::Filter, request.into_body())),
        )
        .route(
            "/prioritize",
            post(|State(extender): State<Arc<Extender>>, request: Request| extender.handle(Verb::Prioritize, request.into_body())),
        )
        .with_state(extender)
}

fn refusal(status: StatusCode, code: Code, message: String, help: &'static str) -> Response {
    (status, axum::Json(ErrorBody { error: message, code: Some(code.id()), help: Some(help) })).into_response()
}

fn body_too_large(limit: usize) -> Response {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        Code::ExtenderRequestTooLarge,
        format!("the body is larger than the {} KiB this extender accepts", limit >> 10),
        "raise `--max-body-mib`, or set `nodeCacheCapable: true` so that kube-scheduler sends node names only",
    )
}

fn deadline_passed(timeout: Duration) -> Response {
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        Code::ExtenderDeadline,
        format!("the request was not answered within {} ms", timeout.as_millis()),
        "kube-scheduler retries the pod; a slow client or plugin cannot hold the extender longer",
    )
}

fn bad_request(message: String) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(ErrorBody { error: message, code: None, help: None })).into_response()
}

/// The parts of a Node object the plugin reads; an object that does not parse has none
/// (every feature missing), like one whose labels are absent.
fn kube_node(item: &serde_json::value::RawValue) -> KubeNode {
    serde_json::from_str(item.get()).unwrap_or_default()
}

fn names_of(args: &ExtenderArgs<'_>) -> Vec<String> {
    if let Some(names) = &args.node_names {
        return names.clone();
    }
    let items = args.nodes.as_ref().map(|nodes| nodes.items.as_slice()).unwrap_or_default();
    items.iter().map(|item| kube_node(item).metadata.name).collect()
}
