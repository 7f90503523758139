//! Recorded NVLink utilisation for the simulator (`placid simulate --telemetry FILE`): the
//! series a Prometheus would have answered, per node and per NVLink domain, smoothed and
//! throttled by the same `placid_lang::telemetry` the extender uses, so the simulator sees
//! what the extender would have seen at every moment (docs/operations.md, "Telemetry for
//! scoring").
//!
//! The file is CSV with the header `at,scope,name,utilization`: `at` in whole seconds or a
//! duration (`90s`, `1h30m`), `scope` `node` or `domain`, `name` a node or NVLink domain of
//! the inventory, `utilization` a number (0-1; NaN and negative values are accepted and
//! rejected by the moving average, as bad answers of Prometheus are). Lines starting with `#`
//! are comments. Each key's rows are in time order. At most [`MAX_ROWS`] rows.
//!
//! Invariant: a figure between samples is the average at the last sample, static once that
//! sample is older than `max-age`; a throttle is decided at the moment asked, so it starts
//! exactly a hold after the figure went above the threshold, whenever the simulator looks.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::expr::STATIC_UTILIZATION;
use placid_lang::model::{DomainId, Model, NodeId, Telemetry, ThrottleRule};
use placid_lang::span::{FileId, Span};
use placid_lang::telemetry::{Ewma, Throttle};
use placid_lang::units::Duration;

use crate::job::{Job, Seconds};

/// The most rows a recorded series may hold (docs/limits.md): a week of one sample a minute
/// for about a hundred keys.
pub const MAX_ROWS: usize = 1_000_000;

/// The most diagnostics of one file, after which reading stops (as for openb lists).
pub const MAX_DIAGNOSTICS: usize = 50;

/// The header of the file.
pub const HEADER: &str = "at,scope,name,utilization";

/// One key's states after each of its samples.
#[derive(Clone, Debug, Default)]
struct Track {
    steps: Vec<(Seconds, Ewma, Throttle)>,
}

/// Recorded utilisation of a model's nodes and domains, with the model's telemetry settings.
#[derive(Clone, Debug)]
pub struct Recorded {
    nodes: Vec<Track>,
    domains: Vec<Track>,
    max_age_seconds: f64,
    rule: Option<ThrottleRule>,
}

impl Recorded {
    /// Reads the file `text` (file `id`, for spans) against `model` under `settings`.
    pub fn read(model: &Model, settings: &Telemetry, id: FileId, text: &str) -> Result<Recorded, Diagnostics> {
        let mut diagnostics = Diagnostics::new();
        let half_life = settings.half_life_seconds as f64;
        let (threshold, hold) = settings.throttle.as_ref().map_or((f64::INFINITY, 0.0), |rule| (rule.threshold, rule.hold_seconds as f64));
        let max_age = settings.max_age_seconds as f64;
        let fresh = || Track::default();
        let mut recorded = Recorded {
            nodes: vec![fresh(); model.nodes.len()],
            domains: vec![fresh(); model.domains.len()],
            max_age_seconds: settings.max_age_seconds as f64,
            rule: settings.throttle.clone(),
        };
        let mut rows = 0usize;
        let mut header_seen = false;
        let mut offset = 0usize;
        for line in text.split_inclusive('\n') {
            if diagnostics.iter().len() >= MAX_DIAGNOSTICS {
                break;
            }
            let start = offset;
            offset += line.len();
            let line = line.trim_end_matches(['\n', '\r']);
            let span = Span::new(id, start, start + line.len());
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            if !header_seen {
                header_seen = true;
                if line.trim() != HEADER {
                    diagnostics.push(
                        Diagnostic::error(Code::TraceColumns, span, "a recorded telemetry series starts with its header")
                            .label("not the header")
                            .help(format!("the first line is `{HEADER}`")),
                    );
                    return Err(diagnostics);
                }
                continue;
            }
            rows += 1;
            if rows > MAX_ROWS {
                diagnostics.push(
                    Diagnostic::error(Code::TraceNotText, span, format!("the series has more than {MAX_ROWS} rows"))
                        .help("split the series, or sample it less often"),
                );
                return Err(diagnostics);
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [at, scope, name, value] = fields.as_slice() else {
                diagnostics.push(
                    Diagnostic::error(Code::TraceRow, span, format!("{} fields where the header has 4", fields.len()))
                        .help(format!("every row is `{HEADER}`")),
                );
                continue;
            };
            let at = match at.parse::<u64>().ok().or_else(|| Duration::parse(at).ok().map(|duration| duration.seconds)) {
                Some(at) if at <= 10 * 365 * 86_400 => at,
                _ => {
                    diagnostics.push(
                        Diagnostic::error(Code::TraceValue, span, format!("`{at}` is not a time"))
                            .help("write whole seconds or a duration such as `90s`, up to ten years"),
                    );
                    continue;
                }
            };
            let key = match *scope {
                "node" => model.nodes.iter().position(|node| node.name.as_str() == *name).map(|index| (true, index)),
                "domain" => model.domains.iter().position(|domain| domain.name.as_str() == *name).map(|index| (false, index)),
                _ => {
                    diagnostics.push(
                        Diagnostic::error(Code::TraceValue, span, format!("`{scope}` is not a scope"))
                            .help("the scope is `node` or `domain`"),
                    );
                    continue;
                }
            };
            let Some(key) = key else {
                diagnostics.push(
                    Diagnostic::error(Code::TraceReference, span, format!("the inventory has no {scope} `{name}`"))
                        .help("name a node or NVLink domain of the inventory"),
                );
                continue;
            };
            let Ok(value) = value.parse::<f64>() else {
                diagnostics.push(
                    Diagnostic::error(Code::TraceValue, span, format!("`{value}` is not a number"))
                        .help("write the utilisation as a fraction, such as `0.85`"),
                );
                continue;
            };
            let track = recorded.track_mut(key);
            if track.steps.last().is_some_and(|(last, _, _)| *last >= at) {
                diagnostics.push(
                    Diagnostic::error(Code::TraceValue, span, format!("{scope} `{name}` has a sample at {at} s after a later one"))
                        .help("give each node's and domain's samples in time order, one per time"),
                );
                continue;
            }
            // The key's state after its last sample goes on from there.
            let (mut average, mut throttle) = track
                .steps
                .last()
                .map_or_else(|| (Ewma::new(half_life), Throttle::new(threshold, hold)), |(_, average, throttle)| (*average, *throttle));
            // A rejected sample (NaN, negative) changes nothing, as in the extender.
            let _ = average.update(at as f64, value);
            throttle.observe(at as f64, average.current(at as f64, max_age, STATIC_UTILIZATION));
            let step = (at, average, throttle);
            track.steps.push(step);
        }
        if !header_seen {
            diagnostics.push(
                Diagnostic::error(Code::TraceEmpty, Span::new(id, 0, 0), "the recorded telemetry series is empty")
                    .help(format!("start it with the header `{HEADER}`")),
            );
        }
        if diagnostics.error_count() > 0 { Err(diagnostics) } else { Ok(recorded) }
    }

    fn track_mut(&mut self, (node, index): (bool, usize)) -> &mut Track {
        if node { &mut self.nodes[index] } else { &mut self.domains[index] }
    }

    /// The state of `track` at `now`: the figure and whether it throttles.
    fn at(&self, track: &Track, now: Seconds) -> (f64, bool) {
        let after = track.steps.partition_point(|(at, _, _)| *at <= now);
        let Some((_, average, throttle)) = after.checked_sub(1).and_then(|index| track.steps.get(index)) else {
            return (STATIC_UTILIZATION, false);
        };
        let figure = average.current(now as f64, self.max_age_seconds, STATIC_UTILIZATION);
        // Observed on a copy: asking does not change the record.
        let throttled = self.rule.is_some() && { *throttle }.observe(now as f64, figure);
        (figure.value(), throttled)
    }

    /// `node.nvlink_utilization` of `node` at `now`.
    pub fn node(&self, node: NodeId, now: Seconds) -> f64 {
        self.at(&self.nodes[node.index()], now).0
    }

    /// `domain.nvlink_utilization` of `domain` at `now`.
    pub fn domain(&self, domain: DomainId, now: Seconds) -> f64 {
        self.at(&self.domains[domain.index()], now).0
    }

    /// Whether `domain` is throttled at `now`.
    pub fn throttled(&self, domain: DomainId, now: Seconds) -> bool {
        self.at(&self.domains[domain.index()], now).1
    }

    /// Whether the throttling rule keeps `job` off `node` at `now`: the node's domain is
    /// throttled and the job's class communicates at the rule's level or above. A job
    /// without a class is not comm-heavy.
    pub fn refuses(&self, model: &Model, job: &Job, node: NodeId, now: Seconds) -> bool {
        let Some(rule) = &self.rule else { return false };
        let heavy = job.class.is_some_and(|class| rule.refuses(model.class(class).comm));
        heavy && model.node(node).domain.is_some_and(|domain| self.throttled(domain, now))
    }

    /// Every moment a figure or a throttle may change: each sample, each throttle's start, and
    /// each moment a sample turns too old. The simulator runs a pass at each, so a job held
    /// by a throttle is tried again when it lifts. At most three per row.
    pub fn changes(&self) -> Vec<Seconds> {
        let max_age = self.max_age_seconds as u64;
        let mut times: Vec<Seconds> = Vec::new();
        for track in self.nodes.iter().chain(&self.domains) {
            for (at, average, throttle) in &track.steps {
                times.push(*at);
                if let Some(last) = average.last_at() {
                    times.push((last as u64).saturating_add(max_age).saturating_add(1));
                }
                if let Some(from) = throttle.throttles_from() {
                    times.push(from.ceil() as u64);
                }
            }
        }
        times.sort_unstable();
        times.dedup();
        times
    }
}
