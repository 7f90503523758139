//! The deployed extender's telemetry: the policy's `telemetry` block, the pod label its
//! throttle reads (under the project's label prefix, which the plugin alone does not know) and
//! the inventory's nodes and NVLink domains, as the JSON file (`telemetry.json`) the Kubernetes target ships
//! in a ConfigMap beside the plugin and `placid extender --plugin --telemetry` reads.
//!
//! The extender from a project builds the same value from its model ([`DeployedTelemetry::of`]),
//! so both extenders run one configuration. The file is untrusted input to the extender:
//! [`DeployedTelemetry::parse`] bounds its size and checks every figure as the policy's
//! lowering does (the same predicates of `placid_lang::model::Telemetry`).

use std::collections::BTreeMap;

use placid_lang::expr::JobParam;
use placid_lang::labels;
use placid_lang::model::{CommLevel, Model, Telemetry, ThrottleRule};
use placid_lang::name::LabelKey;
use placid_lang::span::Span;
use serde::{Deserialize, Serialize};

use crate::ops::usage;
use crate::wasm::meta::Source;
use crate::wasm::sources::param_source;

/// The ConfigMap key and file name.
pub const FILE: &str = "telemetry.json";
/// The largest file the extender reads: a 100,000-node inventory's names with their domains.
pub const MAX_BYTES: u64 = 16 << 20;
/// The most nodes a file may list.
const MAX_NODES: usize = 100_000;
/// The longest node or domain name (a DNS name's limit, which Kubernetes node names keep).
const MAX_NAME: usize = 253;

/// What the deployed extender needs of the policy and the inventory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployedTelemetry {
    /// PromQL of the node series (one sample per `node`).
    pub node_query: String,
    /// PromQL of the domain series (one sample per `nvlink_domain`).
    pub domain_query: String,
    /// The moving average's half-life, seconds.
    pub half_life_seconds: u64,
    /// Samples older than this fall back to the static figure, seconds.
    pub max_age_seconds: u64,
    /// How long one answer is reused, seconds.
    pub ttl_seconds: u64,
    /// The throttling rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<DeployedThrottle>,
    /// The pod label naming a pod's communication level (`<prefix>/comm`, as the workload
    /// templates set it), which the throttling rule reads.
    pub comm_label: String,
    /// Every inventory node, with its NVLink domain.
    pub nodes: BTreeMap<String, Option<String>>,
}

/// `throttle domain-nvlink-above= for= comm=`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployedThrottle {
    /// The fraction of the domain's NVLink capacity.
    pub domain_nvlink_above: f64,
    /// How long the figure must stay above, seconds.
    pub hold_seconds: u64,
    /// The lowest communication level refused (`low`, `medium`, `high`).
    pub comm: String,
}

const COMM_LEVELS: [CommLevel; 3] = [CommLevel::Low, CommLevel::Medium, CommLevel::High];

impl DeployedTelemetry {
    /// The configuration of `model`, when it declares `telemetry`; the queries the policy
    /// leaves out are the generated recording rules.
    pub fn of(model: &Model) -> Option<DeployedTelemetry> {
        let telemetry = model.telemetry.as_ref()?;
        let query = |declared: &Option<placid_lang::span::Spanned<String>>, default: &str| {
            declared.as_ref().map_or_else(|| default.to_owned(), |query| query.value.clone())
        };
        Some(DeployedTelemetry {
            node_query: query(&telemetry.node_query, usage::NODE_UTILIZATION),
            domain_query: query(&telemetry.domain_query, usage::DOMAIN_UTILIZATION),
            half_life_seconds: telemetry.half_life_seconds,
            max_age_seconds: telemetry.max_age_seconds,
            ttl_seconds: telemetry.ttl_seconds,
            throttle: telemetry.throttle.as_ref().map(|rule| DeployedThrottle {
                domain_nvlink_above: rule.threshold,
                hold_seconds: rule.hold_seconds,
                comm: rule.comm.as_str().to_owned(),
            }),
            comm_label: comm_label(model),
            nodes: model
                .nodes
                .iter()
                .map(|node| (node.name.to_string(), node.domain.map(|domain| model.domain(domain).name.to_string())))
                .collect(),
        })
    }

    /// The file's bytes: deterministic (sorted nodes, fields in struct order).
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// Reads a file, refusing anything the policy could not have said.
    pub fn parse(bytes: &[u8]) -> Result<DeployedTelemetry, String> {
        if bytes.len() as u64 > MAX_BYTES {
            return Err(format!("is larger than {} MiB", MAX_BYTES >> 20));
        }
        let config: DeployedTelemetry = serde_json::from_slice(bytes).map_err(|error| error.to_string())?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        for (name, query) in [("node_query", &self.node_query), ("domain_query", &self.domain_query)] {
            if let Some(problem) = Telemetry::query_problem(query) {
                return Err(format!("`{name}` {problem}"));
            }
        }
        for (name, seconds) in
            [("half_life_seconds", self.half_life_seconds), ("max_age_seconds", self.max_age_seconds), ("ttl_seconds", self.ttl_seconds)]
        {
            if !(1..=Telemetry::MAX_SECONDS).contains(&seconds) {
                return Err(format!("`{name}` is {seconds}, outside 1 to {}", Telemetry::MAX_SECONDS));
            }
        }
        if self.ttl_seconds > self.max_age_seconds {
            return Err("`ttl_seconds` is longer than `max_age_seconds`".to_owned());
        }
        if let Some(throttle) = &self.throttle {
            throttle.rule()?;
        }
        if let Err(reason) = LabelKey::new(&self.comm_label) {
            return Err(format!("`comm_label` `{}` is not a label key: {reason}", self.comm_label.escape_debug()));
        }
        if self.nodes.len() > MAX_NODES {
            return Err(format!("lists more than {MAX_NODES} nodes"));
        }
        let bad = |name: &str| name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control);
        if let Some((node, _)) = self.nodes.iter().find(|(node, domain)| bad(node) || domain.as_deref().is_some_and(bad)) {
            return Err(format!("node `{}` or its domain is not a name", node.escape_debug()));
        }
        Ok(())
    }

    /// The throttling rule, as the policy's model holds it.
    pub fn throttle_rule(&self) -> Option<ThrottleRule> {
        self.throttle.as_ref().and_then(|throttle| throttle.rule().ok())
    }
}

/// The pod label the workload templates name a stage's communication level with: the one
/// spelling of the `comm` parameter's source.
fn comm_label(model: &Model) -> String {
    match param_source(JobParam::Comm, labels::prefix(&model.project)).from {
        Source::PodLabel(key) => key,
        other => other.to_string(),
    }
}

impl DeployedThrottle {
    fn rule(&self) -> Result<ThrottleRule, String> {
        if !ThrottleRule::is_threshold(self.domain_nvlink_above) {
            return Err(format!("`domain_nvlink_above` is {}, not a fraction above 0 and at most 1", self.domain_nvlink_above));
        }
        if self.hold_seconds > Telemetry::MAX_SECONDS {
            return Err(format!("`hold_seconds` is {}, more than a day", self.hold_seconds));
        }
        let comm = COMM_LEVELS
            .into_iter()
            .find(|level| level.as_str() == self.comm)
            .ok_or_else(|| format!("`comm` is `{}`, not low, medium or high", self.comm.escape_debug()))?;
        Ok(ThrottleRule { span: Span::DETACHED, threshold: self.domain_nvlink_above, hold_seconds: self.hold_seconds, comm })
    }
}

#[cfg(test)]
mod tests {
    use super::{DeployedTelemetry, DeployedThrottle, MAX_BYTES};

    fn config() -> DeployedTelemetry {
        DeployedTelemetry {
            node_query: "placid:nvlink_node_utilization:ratio".into(),
            domain_query: "placid:nvlink_domain_utilization:ratio".into(),
            half_life_seconds: 300,
            max_age_seconds: 120,
            ttl_seconds: 15,
            throttle: Some(DeployedThrottle { domain_nvlink_above: 0.85, hold_seconds: 600, comm: "high".into() }),
            comm_label: "acme.io/comm".into(),
            nodes: [("a".to_owned(), Some("d1".to_owned())), ("b".to_owned(), None)].into(),
        }
    }

    #[test]
    fn a_file_reads_back_to_what_was_written() {
        let config = config();
        assert_eq!(DeployedTelemetry::parse(&config.to_json()), Ok(config.clone()));
        assert_eq!(config.throttle_rule().map(|rule| (rule.threshold, rule.hold_seconds)), Some((0.85, 600)));
    }

    #[test]
    fn a_file_the_policy_could_not_have_written_is_refused() {
        type Change = fn(&mut DeployedTelemetry);
        let cases: [(&str, Change); 9] = [
            ("node_query", |config| config.node_query = "up\nx".into()),
            ("half_life_seconds", |config| config.half_life_seconds = 0),
            ("max_age_seconds", |config| config.max_age_seconds = 86_401),
            ("ttl_seconds", |config| config.ttl_seconds = 121),
            ("domain_nvlink_above", |config| config.throttle.as_mut().unwrap().domain_nvlink_above = 1.5),
            ("hold_seconds", |config| config.throttle.as_mut().unwrap().hold_seconds = 90_000),
            ("comm", |config| config.throttle.as_mut().unwrap().comm = "huge".into()),
            ("node", |config| _ = config.nodes.insert(String::new(), None)),
            ("comm_label", |config| config.comm_label = "acme.io/".into()),
        ];
        for (field, change) in cases {
            let mut config = config();
            change(&mut config);
            let error = DeployedTelemetry::parse(&config.to_json()).expect_err(field);
            assert!(error.contains(field), "{field}: {error}");
        }
        assert!(DeployedTelemetry::parse(br#"{"node_query": "up", "extra": 1}"#).is_err());
        assert!(DeployedTelemetry::parse(&vec![b' '; MAX_BYTES as usize + 1]).unwrap_err().contains("larger"));
    }
}
