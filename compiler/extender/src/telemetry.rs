//! Live NVLink utilisation for the extender: Prometheus's HTTP query API read with a small
//! blocking client (connect and read timeouts, a bounded answer), smoothed and throttled by
//! `placid_lang::telemetry`, falling back to the inventory's static figure with a log line
//! whenever the answer is missing, stale, NaN or negative, or Prometheus is down.
//!
//! The client speaks plain HTTP/1.1 to one address: Prometheus runs beside the scheduler, and
//! a full HTTP stack would be more code to trust than these few lines.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::time::{Duration, Instant};

use placid_lang::address::HostPort;
use placid_lang::telemetry::{Ewma, Figure, Rejected, Throttle};
use serde::Deserialize;

/// The longest answer read; a node's or a domain's utilisation vector is a few KiB.
pub const MAX_BODY: u64 = 1 << 20;

/// Why a query gave no figures.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QueryError {
    /// Prometheus could not be reached or did not answer in time.
    #[error("Prometheus at {address} is unreachable: {reason}")]
    Unreachable {
        /// Where.
        address: HostPort,
        /// The I/O error.
        reason: String,
    },
    /// An answer that is not a successful instant vector.
    #[error("Prometheus answered something else than a vector: {0}")]
    Malformed(String),
}

/// One Prometheus server's query API.
#[derive(Clone, Debug)]
pub struct Prometheus {
    /// Its address (`127.0.0.1:9090`, `prometheus-operated.monitoring.svc:9090`), resolved at
    /// each query, so a Service that is not resolvable yet only falls back until it is.
    pub address: HostPort,
    /// Limit for the whole query: resolving aside, connecting, sending and reading the
    /// whole answer.
    pub timeout: Duration,
}

#[derive(Deserialize)]
struct Answer {
    status: String,
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<Series>,
}

#[derive(Deserialize)]
struct Series {
    metric: BTreeMap<String, String>,
    value: (f64, String),
}

/// One sample of an instant vector: its labels, its time (seconds) and value (NaN when
/// Prometheus says `NaN`; unparsable text too, so the caller rejects it like a NaN).
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Labels, `__name__` included when Prometheus sends it.
    pub labels: BTreeMap<String, String>,
    /// Evaluation time, Unix seconds.
    pub at: f64,
    /// The value.
    pub value: f64,
}

fn encode(query: &str) -> String {
    query
        .bytes()
        .map(
            |byte| {
                if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) { char::from(byte).to_string() } else { format!("%{byte:02X}") }
            },
        )
        .collect()
}

impl Prometheus {
    /// The server at `address`, with `timeout` for the whole of each query.
    pub fn at(address: SocketAddr, timeout: Duration) -> Prometheus {
        Prometheus { address: HostPort { host: address.ip().to_string(), port: address.port() }, timeout }
    }

    /// Evaluates `query` now (`/api/v1/query`).
    pub fn query(&self, query: &str) -> Result<Vec<Sample>, QueryError> {
        let unreachable = |error: std::io::Error| QueryError::Unreachable { address: self.address.clone(), reason: error.to_string() };
        // The system resolver's own timeouts (resolv.conf) bound the lookup.
        let socket = (self.address.host.as_str(), self.address.port)
            .to_socket_addrs()
            .map_err(unreachable)?
            .next()
            .ok_or_else(|| unreachable(std::io::Error::other("the name has no address")))?;
        // One deadline for the whole exchange: a server that answers a byte at a time never
        // lets a per-read timeout expire, and would hold the refresh (and freeze the figures)
        // for as long as it likes.
        let deadline = Instant::now() + self.timeout;
        let left = || {
            deadline.checked_duration_since(Instant::now()).filter(|left| !left.is_zero()).ok_or_else(|| {
                unreachable(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no whole answer within {} ms", self.timeout.as_millis()),
                ))
            })
        };
        let mut stream = TcpStream::connect_timeout(&socket, left()?).map_err(unreachable)?;
        stream.set_write_timeout(Some(left()?)).map_err(unreachable)?;
        let request = format!("GET /api/v1/query?query={} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", encode(query), self.address);
        stream.write_all(request.as_bytes()).map_err(unreachable)?;
        let mut response = Vec::new();
        let mut chunk = [0u8; 16 << 10];
        loop {
            stream.set_read_timeout(Some(left()?)).map_err(unreachable)?;
            let read = match stream.read(&mut chunk) {
                Ok(read) => read,
                // The read's timeout is what was left of the deadline, and Linux reports its
                // expiry as EAGAIN: `left()` above then says the deadline passed, as it does.
                Err(error)
                    if matches!(
                        error.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(error) => return Err(unreachable(error)),
            };
            if read == 0 {
                break;
            }
            let room = usize::try_from(MAX_BODY).unwrap_or(usize::MAX).saturating_sub(response.len());
            response.extend_from_slice(&chunk[..read.min(room)]);
            if read >= room {
                break;
            }
        }
        let text = String::from_utf8_lossy(&response);
        let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| QueryError::Malformed("no HTTP head".to_owned()))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(QueryError::Malformed(head.lines().next().unwrap_or_default().to_owned()));
        }
        let answer: Answer = serde_json::from_str(body).map_err(|error| QueryError::Malformed(error.to_string()))?;
        match answer.data {
            Some(data) if answer.status == "success" && data.result_type == "vector" => Ok(data
                .result
                .into_iter()
                .map(|series| Sample { labels: series.metric, at: series.value.0, value: series.value.1.parse().unwrap_or(f64::NAN) })
                .collect()),
            _ => Err(QueryError::Malformed(format!("status {}", answer.status))),
        }
    }
}

/// How far in the future (by this host's clock) a sample may be stamped and still be used,
/// as taken now: clocks disagree a little. One stamped later is refused with a log line: the
/// average would otherwise stay live, and every good sample after it be out of order, until
/// that time came.
pub const FUTURE_SKEW_SECONDS: f64 = 30.0;

/// What one refresh decided for one key (a node or a domain).
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The figure scoring sees.
    pub figure: Figure,
    /// Whether comm-heavy jobs are refused.
    pub throttled: bool,
    /// The log line when the answer was not used: the static figure, or the last good one
    /// while it is younger than the maximum age.
    pub fallback: Option<String>,
}

/// Smoothed utilisation per key (the value of the label `key` in the query's answer), with
/// the throttling rule, refreshed from Prometheus.
pub struct Telemetry {
    prometheus: Prometheus,
    query: String,
    key: String,
    half_life_seconds: f64,
    max_age_seconds: f64,
    threshold: f64,
    hold_seconds: f64,
    state: BTreeMap<String, (Ewma, Throttle)>,
}

/// The settings of [`Telemetry`], as the policy gives them.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The PromQL whose vector carries one sample per key.
    pub query: String,
    /// The label naming the key (`node`, `nvlink_domain`).
    pub key: String,
    /// The EWMA's half-life.
    pub half_life: Duration,
    /// Samples older than this fall back to the static figure.
    pub max_age: Duration,
    /// Throttle above this fraction...
    pub threshold: f64,
    /// ...held this long.
    pub hold: Duration,
}

impl Telemetry {
    /// Telemetry from `prometheus` under `rule`.
    pub fn new(prometheus: Prometheus, rule: Rule) -> Telemetry {
        Telemetry {
            prometheus,
            query: rule.query,
            key: rule.key,
            half_life_seconds: rule.half_life.as_secs_f64(),
            max_age_seconds: rule.max_age.as_secs_f64(),
            threshold: rule.threshold,
            hold_seconds: rule.hold.as_secs_f64(),
            state: BTreeMap::new(),
        }
    }

    /// Queries Prometheus once at `now` (Unix seconds) and decides each of `keys`, whose
    /// static figures are given. Keys not named here are forgotten, so the state is bounded by
    /// the inventory.
    pub fn refresh(&mut self, now: f64, keys: &BTreeMap<String, f64>) -> BTreeMap<String, Reading> {
        let answer = self.prometheus.query(&self.query);
        // Indexed once: a lookup per key would be quadratic in the cluster's size.
        let by_key: Result<HashMap<&str, &Sample>, &QueryError> = answer
            .as_ref()
            .map(|samples| samples.iter().filter_map(|sample| sample.labels.get(&self.key).map(|key| (key.as_str(), sample))).collect());
        self.state.retain(|key, _| keys.contains_key(key));
        let mut readings = BTreeMap::new();
        for (key, fallback) in keys {
            let (average, throttle) = self
                .state
                .entry(key.clone())
                .or_insert_with(|| (Ewma::new(self.half_life_seconds), Throttle::new(self.threshold, self.hold_seconds)));
            let mut why = None;
            match &by_key {
                Err(error) => why = Some(error.to_string()),
                Ok(by_key) => match by_key.get(key.as_str()) {
                    None => why = Some(format!("no sample for {}={key}", self.key)),
                    Some(sample) if sample.at > now + FUTURE_SKEW_SECONDS => {
                        why = Some(format!(
                            "the sample for {}={key} is stamped more than {FUTURE_SKEW_SECONDS} s in the future, and refused",
                            self.key
                        ));
                    }
                    Some(sample) => {
                        // Within the skew, a sample counts as taken now: a later one must not
                        // read as out of order.
                        if let Err(rejected) = average.update(sample.at.min(now), sample.value) {
                            why = Some(format!("sample {} for {}={key} is {}", sample.value, self.key, rejected.as_str()));
                            // An out-of-order answer repeats one already used: not a fallback.
                            if rejected == Rejected::OutOfOrder {
                                why = None;
                            }
                        }
                    }
                },
            }
            let figure = average.current(now, self.max_age_seconds, *fallback);
            let fallback = match (figure, why) {
                (Figure::Static(value), why) => Some(format!(
                    "placid extender: telemetry for {}={key}: {}; using the static figure {value}",
                    self.key,
                    why.unwrap_or_else(|| "the last sample is too old".to_owned())
                )),
                (Figure::Live(value), Some(why)) => {
                    Some(format!("placid extender: telemetry for {}={key}: {why}; keeping the last good figure {value}", self.key))
                }
                (Figure::Live(_), None) => None,
            };
            readings.insert(key.clone(), Reading { figure, throttled: throttle.observe(now, figure), fallback });
        }
        readings
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    use super::*;

    fn unix_now() -> f64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64())
    }

    /// A stand-in Prometheus answering each connection with the next of `samples` (domain,
    /// time, value), sending the answer `pause` per byte.
    fn prometheus(samples: Arc<Mutex<Vec<(f64, &'static str)>>>, pause: Duration) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let (at, value) = samples.lock().map(|mut samples| samples.remove(0)).unwrap_or((0.0, "0"));
                let body = serde_json::json!({"status": "success", "data": {"resultType": "vector",
                    "result": [{"metric": {"nvlink_domain": "nvl-a"}, "value": [at, value]}]}})
                .to_string();
                let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                std::thread::spawn(move || {
                    for byte in reply.as_bytes() {
                        if stream.write_all(&[*byte]).is_err() {
                            return;
                        }
                        std::thread::sleep(pause);
                    }
                });
            }
        });
        address
    }

    /// A server that sends a byte every 20 ms keeps each read under any per-read timeout:
    /// only a deadline on the whole answer ends the query, at its limit.
    #[test]
    fn a_trickling_answer_is_cut_at_the_deadline() {
        let samples = Arc::new(Mutex::new(vec![(unix_now(), "0.5")]));
        let prometheus = Prometheus::at(prometheus(samples, Duration::from_millis(20)), Duration::from_millis(300));
        let started = Instant::now();
        let error = prometheus.query("domain_q").expect_err("too slow");
        assert!(started.elapsed() < Duration::from_secs(2), "held for {:?}", started.elapsed());
        assert!(error.to_string().contains("no whole answer within 300 ms"), "{error}");
    }

    /// One sample stamped an hour ahead is refused with a log line, and cannot keep the
    /// domain throttled (or its figure live) once good samples come again.
    #[test]
    fn a_sample_from_the_future_is_refused_and_pins_nothing() {
        let now = unix_now();
        let samples = Arc::new(Mutex::new(vec![(now + 3600.0, "0.99"), (now + 1.0, "0.10"), (now + 2.0, "0.10")]));
        let prometheus = Prometheus::at(prometheus(samples, Duration::ZERO), Duration::from_secs(5));
        let rule = Rule {
            query: "domain_q".into(),
            key: "nvlink_domain".into(),
            half_life: Duration::from_secs(1),
            max_age: Duration::from_secs(60),
            threshold: 0.85,
            hold: Duration::ZERO,
        };
        let mut telemetry = Telemetry::new(prometheus, rule);
        let keys = BTreeMap::from([("nvl-a".to_owned(), 0.3)]);
        let first = &telemetry.refresh(now, &keys)["nvl-a"];
        assert_eq!(first.figure, Figure::Static(0.3));
        assert!(!first.throttled);
        assert!(first.fallback.as_deref().is_some_and(|line| line.contains("in the future")), "{first:?}");
        let second = &telemetry.refresh(now + 1.0, &keys)["nvl-a"];
        assert_eq!((second.figure, second.throttled, second.fallback.as_deref()), (Figure::Live(0.1), false, None));
        // A stamp a little ahead of this clock counts as now, and the next sample is used.
        let third = &telemetry.refresh(now + 1.5, &keys)["nvl-a"];
        assert_eq!((third.figure, third.fallback.as_deref()), (Figure::Live(0.1), None));
    }
}
