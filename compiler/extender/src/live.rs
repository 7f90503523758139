//! The policy's `telemetry` in the extender: the figures of `node.nvlink_utilization` and
//! `domain.nvlink_utilization` for every inventory node, refreshed from Prometheus at most
//! once per TTL (two queries, whatever the request rate), and the throttled domains the
//! filter refuses comm-heavy pods on.
//!
//! Invariants: one request per TTL refreshes, waiting at most the client's timeout; any
//! request that comes while it does is answered at once with the previous figures (static
//! ones before the first refresh), so a slow or unreachable Prometheus delays one request per
//! TTL, never all of them; bad or missing
//! telemetry gives the static figure (`STATIC_UTILIZATION`) and never
//! throttles; a fallback is logged when its reason changes for a key, not on every refresh,
//! so a Prometheus that is down logs once per node and domain rather than once per TTL, and
//! one refresh logs at most [`MAX_LOG_LINES`] lines and a count of the rest.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError, TryLockError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use placid_lang::expr::STATIC_UTILIZATION;
use placid_lang::model::ThrottleRule;
use placid_targets::k8s::telemetry_config::DeployedTelemetry;

use crate::telemetry::{Prometheus, Reading, Rule, Telemetry};

/// Where the extender writes its log lines (the CLI's standard error).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// The label of the node series and of the domain series (targets/src/ops/usage.rs).
pub const NODE_LABEL: &str = "node";
/// See [`NODE_LABEL`].
pub const DOMAIN_LABEL: &str = "nvlink_domain";

/// One node's live figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeFigures {
    /// `node.nvlink_utilization`.
    pub node: f64,
    /// `domain.nvlink_utilization` of its domain.
    pub domain: f64,
    /// Whether its domain is throttled.
    pub throttled: bool,
}

impl NodeFigures {
    /// The figures without telemetry.
    pub const STATIC: NodeFigures = NodeFigures { node: STATIC_UTILIZATION, domain: STATIC_UTILIZATION, throttled: false };
}

/// The figures of every inventory node at one refresh.
#[derive(Debug, Default)]
pub struct Figures {
    by_node: HashMap<String, NodeFigures>,
}

impl Figures {
    /// The figures of the node called `name`; static for a node outside the inventory.
    pub fn of(&self, name: &str) -> NodeFigures {
        self.by_node.get(name).copied().unwrap_or(NodeFigures::STATIC)
    }
}

/// What a refresh reads and updates; held only by the request that refreshes.
struct Refresher {
    node: Telemetry,
    domain: Telemetry,
    logged: HashMap<String, String>,
}

/// The figures requests read, and when they were refreshed; held only to copy or replace.
#[derive(Default)]
struct Current {
    figures: Arc<Figures>,
    refreshed: Option<Instant>,
}

/// Live telemetry of one extender.
pub struct Live {
    ttl: Duration,
    throttle: Option<ThrottleRule>,
    /// The pod label the throttling rule reads a pod's communication level from.
    comm_label: String,
    /// Each inventory node with its domain, if any.
    nodes: Vec<(String, Option<String>)>,
    node_keys: BTreeMap<String, f64>,
    domain_keys: BTreeMap<String, f64>,
    log: Log,
    refresher: Mutex<Refresher>,
    current: Mutex<Current>,
}

impl Live {
    /// Telemetry of `config`'s nodes and domains (the policy's settings, from the project or
    /// the deployed file), read from `prometheus`, logging to `log`.
    pub fn new(config: &DeployedTelemetry, prometheus: Prometheus, log: Log) -> Live {
        let throttle = config.throttle_rule();
        let (threshold, hold) =
            throttle.as_ref().map_or((f64::INFINITY, Duration::ZERO), |rule| (rule.threshold, Duration::from_secs(rule.hold_seconds)));
        let rule = |query: &str, key: &str, threshold: f64, hold: Duration| Rule {
            query: query.to_owned(),
            key: key.to_owned(),
            half_life: Duration::from_secs(config.half_life_seconds),
            max_age: Duration::from_secs(config.max_age_seconds),
            threshold,
            hold,
        };
        // Nodes never throttle: the rule is about domains.
        let node = Telemetry::new(prometheus.clone(), rule(&config.node_query, NODE_LABEL, f64::INFINITY, Duration::ZERO));
        let domain = Telemetry::new(prometheus, rule(&config.domain_query, DOMAIN_LABEL, threshold, hold));
        let nodes: Vec<(String, Option<String>)> = config.nodes.iter().map(|(node, domain)| (node.clone(), domain.clone())).collect();
        let node_keys = nodes.iter().map(|(name, _)| (name.clone(), STATIC_UTILIZATION)).collect();
        let domain_keys = nodes.iter().filter_map(|(_, domain)| domain.clone()).map(|domain| (domain, STATIC_UTILIZATION)).collect();
        Live {
            ttl: Duration::from_secs(config.ttl_seconds),
            throttle,
            comm_label: config.comm_label.clone(),
            nodes,
            node_keys,
            domain_keys,
            log,
            refresher: Mutex::new(Refresher { node, domain, logged: HashMap::new() }),
            current: Mutex::default(),
        }
    }

    /// The throttling rule.
    pub fn throttle(&self) -> Option<&ThrottleRule> {
        self.throttle.as_ref()
    }

    /// The pod label the throttling rule reads (`<prefix>/comm`), as the deployed file or the
    /// project says: the plugin alone does not know the project's label prefix.
    pub fn comm_label(&self) -> &str {
        &self.comm_label
    }

    /// The figures now: those of the last refresh while it is younger than the TTL, else
    /// fresh ones (two queries); the last ones while another request refreshes.
    pub fn figures(&self) -> Arc<Figures> {
        let last = {
            // A thread that panicked while holding it only ever replaced the whole value.
            let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            if current.refreshed.is_some_and(|at| at.elapsed() < self.ttl) {
                return current.figures.clone();
            }
            current.figures.clone()
        };
        let mut refresher = match self.refresher.try_lock() {
            Ok(refresher) => refresher,
            Err(TryLockError::WouldBlock) => return last,
            // A refresh panicked on another thread, part way through: its smoothing state is
            // still a valid one, so this request refreshes rather than serve stale figures
            // for ever.
            Err(TryLockError::Poisoned(poisoned)) => {
                self.refresher.clear_poison();
                poisoned.into_inner()
            }
        };
        // Another request may have refreshed between the two locks.
        {
            let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            if current.refreshed.is_some_and(|at| at.elapsed() < self.ttl) {
                return current.figures.clone();
            }
        }
        let figures = Arc::new(self.refresh(&mut refresher));
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
            Current { figures: figures.clone(), refreshed: Some(Instant::now()) };
        figures
    }

    /// Two queries, their fallbacks logged, and the figures of every inventory node.
    fn refresh(&self, refresher: &mut Refresher) -> Figures {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64());
        let nodes = refresher.node.refresh(now, &self.node_keys);
        let domains = refresher.domain.refresh(now, &self.domain_keys);
        let labelled = nodes.iter().map(|reading| (NODE_LABEL, reading)).chain(domains.iter().map(|reading| (DOMAIN_LABEL, reading)));
        let mut lines = Vec::new();
        for (label, (key, reading)) in labelled {
            log_change(&mut refresher.logged, &format!("{label}={key}"), reading, &mut lines);
        }
        let more = lines.len().saturating_sub(MAX_LOG_LINES);
        for line in lines.iter().take(MAX_LOG_LINES) {
            (self.log)(line);
        }
        if more > 0 {
            (self.log)(&format!("placid extender: telemetry: {more} more nodes and domains changed to or from a fallback at this refresh"));
        }
        let by_node = self
            .nodes
            .iter()
            .map(|(name, domain)| {
                let domain = domain.as_ref().and_then(|domain| domains.get(domain));
                let figures = NodeFigures {
                    node: nodes.get(name).map_or(STATIC_UTILIZATION, |reading| reading.figure.value()),
                    domain: domain.map_or(STATIC_UTILIZATION, |reading| reading.figure.value()),
                    throttled: domain.is_some_and(|reading| reading.throttled),
                };
                (name.clone(), figures)
            })
            .collect();
        Figures { by_node }
    }
}

/// The most log lines one refresh writes; the rest are counted in one more line, so a
/// Prometheus gone bad for a 10,000-node inventory writes a screen, not 10,000 lines a TTL.
pub const MAX_LOG_LINES: usize = 16;

/// The line to log for `key`'s reading, if its fallback reason changed since the last one
/// logged (or it is live again).
fn log_change(logged: &mut HashMap<String, String>, key: &str, reading: &Reading, lines: &mut Vec<String>) {
    match &reading.fallback {
        Some(line) if logged.get(key) != Some(line) => {
            lines.push(line.clone());
            logged.insert(key.to_owned(), line.clone());
        }
        Some(_) => {}
        None => {
            if logged.remove(key).is_some() {
                lines.push(format!("placid extender: telemetry for {key} is live again"));
            }
        }
    }
}
