//! The HTTP server: routes, limits, the instance pool and the two verbs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use placid_lang::model::Model;
use placid_targets::wasm::host::{HostError, Plugin, Scores, Worker};
use tokio::sync::Semaphore;
use tower_http::timeout::TimeoutLayer;

use super::wire::{ExtenderArgs, FilterResult, HostPriority, OutNodeList};
use crate::scoring::kube::{self, KubeNode};
use crate::scoring::rank::{extender_priorities, failed_names, is_feasible};
use crate::scoring::{Codes, inventory_rows};

/// Server limits.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Time limit of one request.
    pub timeout: Duration,
    /// Requests served at once (and wasmtime instances kept).
    pub concurrency: usize,
}

impl Settings {
    /// 16 MiB bodies (5,000 full Node objects fit), 5 s (kube-scheduler's default
    /// `httpTimeout`), 8 concurrent requests.
    pub const DEFAULT: Settings = Settings { max_body: 16 << 20, timeout: Duration::from_secs(5), concurrency: 8 };
}

/// The state shared by all requests.
pub struct Extender {
    plugin: Plugin,
    /// Inventory rows by node name, for `nodeCacheCapable` requests; racks and domains are
    /// interned in `codes`, which requests clone so parameters use the same codes.
    cached_rows: HashMap<String, Vec<f64>>,
    codes: Codes,
    workers: Mutex<Vec<Worker>>,
    permits: Semaphore,
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
        Extender { plugin, cached_rows, codes, workers: Mutex::new(Vec::new()), permits: Semaphore::new(settings.concurrency.max(1)) }
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
    fn score(&self, args: &ExtenderArgs) -> Result<Batch, HostError> {
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
                let node: KubeNode = serde_json::from_value(item.clone()).unwrap_or_default();
                kube::node_row(&meta.node_fields, &node, &mut codes, &mut rows);
                names.push(node.metadata.name);
            }
        }
        let scores = if width == 0 {
            Scores { scores: vec![0.0; names.len()], failed: vec![0; names.len()], feasible: names.len() }
        } else {
            self.with_worker(|worker| worker.score(&params, &rows))?
        };
        Ok(Batch { names, unknown, scores })
    }
}

struct Batch {
    names: Vec<String>,
    unknown: Vec<String>,
    scores: Scores,
}

/// The extender's routes (`POST /filter`, `POST /prioritize`) with body, time and
/// concurrency limits.
pub fn router(extender: Arc<Extender>, settings: Settings) -> Router {
    Router::new()
        .route("/filter", post(filter))
        .route("/prioritize", post(prioritize))
        .layer(DefaultBodyLimit::max(settings.max_body))
        .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, settings.timeout))
        .with_state(extender)
}

fn bad_request(message: String) -> Response {
    (StatusCode::BAD_REQUEST, message).into_response()
}

fn parse_args(body: &[u8]) -> Result<ExtenderArgs, String> {
    serde_json::from_slice(body).map_err(|error| format!("the body is not ExtenderArgs JSON: {error}"))
}

async fn filter(State(extender): State<Arc<Extender>>, body: axum::body::Bytes) -> Response {
    let args = match parse_args(&body) {
        Ok(args) => args,
        Err(message) => return bad_request(message),
    };
    let Ok(_permit) = extender.permits.acquire().await else {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    };
    let mut result = FilterResult::default();
    let batch = match extender.score(&args) {
        Ok(batch) => batch,
        Err(error) => {
            // Never fail open: an error makes kube-scheduler retry the pod later.
            result.error = format!("placid plugin {}: {error}", extender.plugin.meta().policy);
            return axum::Json(result).into_response();
        }
    };
    let meta = extender.plugin.meta();
    let mut passing = Vec::new();
    for (index, name) in batch.names.iter().enumerate() {
        let (score, mask) = (batch.scores.scores[index], batch.scores.failed[index]);
        if is_feasible(score, mask) {
            passing.push(index);
        } else if mask != 0 {
            result.failed_nodes.insert(name.clone(), format!("placid: failed {}", failed_names(meta, mask).join(", ")));
        } else {
            result.failed_nodes.insert(name.clone(), "placid: score undefined (a feature is missing)".to_owned());
        }
    }
    for name in &batch.unknown {
        result.failed_and_unresolvable.insert(name.clone(), "placid: node not in the inventory".to_owned());
    }
    if args.node_names.is_some() {
        result.node_names = Some(passing.iter().map(|index| batch.names[*index].clone()).collect());
    } else {
        let items = args.nodes.map(|nodes| nodes.items).unwrap_or_default();
        result.nodes = Some(OutNodeList { items: passing.iter().filter_map(|index| items.get(*index).cloned()).collect() });
    }
    axum::Json(result).into_response()
}

async fn prioritize(State(extender): State<Arc<Extender>>, body: axum::body::Bytes) -> Response {
    let args = match parse_args(&body) {
        Ok(args) => args,
        Err(message) => return bad_request(message),
    };
    let Ok(_permit) = extender.permits.acquire().await else {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    };
    let priorities: Vec<HostPriority> = match extender.score(&args) {
        Ok(batch) => {
            let scores = extender_priorities(extender.plugin.meta(), &batch.scores.scores, &batch.scores.failed);
            let known = batch.names.into_iter().zip(scores).map(|(host, score)| HostPriority { host, score });
            known.chain(batch.unknown.into_iter().map(|host| HostPriority { host, score: 0 })).collect()
        }
        // A prioritize error is ignored by kube-scheduler anyway; answer neutral scores.
        Err(_) => names_of(&args).into_iter().map(|host| HostPriority { host, score: 0 }).collect(),
    };
    axum::Json(priorities).into_response()
}

fn names_of(args: &ExtenderArgs) -> Vec<String> {
    if let Some(names) = &args.node_names {
        return names.clone();
    }
    let items = args.nodes.as_ref().map(|nodes| nodes.items.as_slice()).unwrap_or_default();
    items.iter().map(|item| serde_json::from_value::<KubeNode>(item.clone()).unwrap_or_default().metadata.name).collect()
}
