//! `telemetry` (at most one, in any policy file): the live NVLink utilisation scoring reads
//! and the throttling rule (model/telemetry.rs).
//!
//! ```kdl
//! telemetry half-life="5m" max-age="2m" ttl="15s" {
//!     node-query "placid:nvlink_node_utilization:ratio"
//!     domain-query "placid:nvlink_domain_utilization:ratio"
//!     throttle domain-nvlink-above=0.85 for="10m" comm="high"
//! }
//! ```

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::reader::{NodeReader, Value};
use crate::lower::schema;
use crate::model::{CommLevel, Model, Telemetry, ThrottleRule};
use crate::span::Spanned;

pub(super) fn lower(cx: &mut Cx, model: &Model, nodes: &[NodeReader<'_>]) -> Option<Telemetry> {
    let (first, rest) = nodes.split_first()?;
    for extra in rest {
        cx.error(
            Diagnostic::error(Code::DuplicateName, extra.name_span(), "`telemetry` is declared twice")
                .label("second declaration")
                .with_secondary(first.name_span(), "first declared here")
                .help("a project declares its telemetry once"),
        );
    }
    lower_one(cx, model, first)
}

fn lower_one(cx: &mut Cx, model: &Model, node: &NodeReader<'_>) -> Option<Telemetry> {
    let props = node.props(cx, schema::TELEMETRY.properties);
    let children = node.children(cx, schema::TELEMETRY.children);
    node.expect_args(cx, 0, 0, "no arguments (the settings are properties)")?;
    let seconds = |cx: &mut Cx, key: &str, default: u64| match props.get(key) {
        Some(value) => duration(cx, value, 1),
        None => Some(default),
    };
    let half_life_seconds = seconds(cx, "half-life", Telemetry::DEFAULT_HALF_LIFE_SECONDS);
    let max_age_seconds = seconds(cx, "max-age", Telemetry::DEFAULT_MAX_AGE_SECONDS);
    let ttl_seconds = seconds(cx, "ttl", Telemetry::DEFAULT_TTL_SECONDS);
    if let (Some(ttl), Some(max_age)) = (ttl_seconds, max_age_seconds)
        && ttl > max_age
    {
        let span = props.get("ttl").or_else(|| props.get("max-age")).map_or(node.name_span(), |value| value.span);
        cx.error(
            Diagnostic::error(
                Code::TelemetryCacheOutlivesAge,
                span,
                format!("the cache keeps an answer {ttl} s, longer than the {max_age} s after which a sample is too old"),
            )
            .label("longer than `max-age`")
            .help("make `ttl` at most `max-age`, so a cached answer is never staler than a usable sample"),
        );
    }
    let node_query = NodeReader::single(cx, &children, "node-query").and_then(|child| query(cx, child));
    let domain_query = NodeReader::single(cx, &children, "domain-query").and_then(|child| query(cx, child));
    let throttle = NodeReader::single(cx, &children, "throttle").and_then(|child| throttle(cx, model, child));
    Some(Telemetry {
        span: node.name_span(),
        node_query,
        domain_query,
        half_life_seconds: half_life_seconds?,
        max_age_seconds: max_age_seconds?,
        ttl_seconds: ttl_seconds?,
        throttle,
    })
}

/// A duration of at least `min` seconds and at most a day.
fn duration(cx: &mut Cx, value: Value<'_>, min: u64) -> Option<u64> {
    let seconds = value.duration(cx)?.seconds;
    if (min..=Telemetry::MAX_SECONDS).contains(&seconds) {
        return Some(seconds);
    }
    let key = value.key.unwrap_or("duration");
    cx.error(
        Diagnostic::error(Code::TelemetryDurationOutOfRange, value.span, format!("`{key}` is {seconds} s, outside {min} s to one day"))
            .label("out of range")
            .help(format!("give `{key}` between {min}s and 24h")),
    );
    None
}

fn query(cx: &mut Cx, node: &NodeReader<'_>) -> Option<Spanned<String>> {
    let args = node.leaf_args(cx, 1, 1, "the PromQL query")?;
    let text = args[0].string(cx)?;
    if let Some(problem) = Telemetry::query_problem(&text.value) {
        cx.error(
            Diagnostic::error(Code::TelemetryQueryInvalid, text.span, format!("the `{}` query {problem}", node.kind()))
                .label("not a usable query")
                .help("write one PromQL expression on one line, or leave the node out to read the generated recording rule"),
        );
        return None;
    }
    Some(text)
}

fn throttle(cx: &mut Cx, model: &Model, node: &NodeReader<'_>) -> Option<ThrottleRule> {
    let props = node.props(cx, schema::TELEMETRY_THROTTLE.properties);
    node.children(cx, schema::TELEMETRY_THROTTLE.children);
    node.expect_args(cx, 0, 0, "no arguments (the rule is properties)")?;
    let above = props.require(cx, node, "domain-nvlink-above");
    let hold = props.require(cx, node, "for");
    let comm = match props.get("comm") {
        Some(value) => value.keyword(cx, &[("low", CommLevel::Low), ("medium", CommLevel::Medium), ("high", CommLevel::High)]),
        None => Some(CommLevel::High),
    };
    let threshold = above.and_then(|value| {
        let number = value.number(cx)?;
        if ThrottleRule::is_threshold(number) {
            return Some(number);
        }
        cx.error(
            Diagnostic::error(
                Code::ThrottleThresholdOutOfRange,
                value.span,
                format!("`domain-nvlink-above` is {number}, not a fraction of the domain's NVLink capacity"),
            )
            .label("outside 0 (exclusive) to 1")
            .help("write the saturation as a fraction: 0.85 for 85 %"),
        );
        None
    });
    let hold_seconds = hold.and_then(|value| duration(cx, value, 0));
    if model.domains.is_empty() {
        cx.error(
            Diagnostic::warning(Code::ThrottleWithoutDomains, node.name_span(), "`throttle` has no NVLink domain to act on")
                .label("throttles nothing")
                .help("the inventory declares no `nvlink-domain`; drop the rule, or declare the domains"),
        );
    }
    Some(ThrottleRule { span: node.name_span(), threshold: threshold?, hold_seconds: hold_seconds?, comm: comm? })
}

#[cfg(test)]
mod tests {
    use crate::diag::Code;
    use crate::model::{CommLevel, Model, Telemetry};
    use crate::source::MemoryWorld;

    const NODES: &str = "node \"a\" arch=\"x86_64\" nvlink-domain=\"d1\" {\n    gpu 0 model=\"H200\"\n}\n";

    /// The model and the codes of the diagnostics of `policy` on an inventory with (or
    /// without) an NVLink domain.
    fn load(policy: &str, nodes: &str) -> (Model, Vec<(Code, String)>) {
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
        world.insert("nodes.kdl", nodes);
        world.insert("policy.kdl", policy);
        let compilation = crate::load(&world);
        let codes = compilation.diagnostics.iter().map(|diagnostic| (diagnostic.code, diagnostic.message.clone())).collect();
        (compilation.model, codes)
    }

    #[test]
    fn defaults_and_a_full_block() {
        let (model, codes) = load("telemetry\n", NODES);
        assert_eq!(codes, []);
        let telemetry = model.telemetry.expect("declared");
        assert_eq!(
            (telemetry.half_life_seconds, telemetry.max_age_seconds, telemetry.ttl_seconds),
            (Telemetry::DEFAULT_HALF_LIFE_SECONDS, Telemetry::DEFAULT_MAX_AGE_SECONDS, Telemetry::DEFAULT_TTL_SECONDS)
        );
        assert!(telemetry.node_query.is_none() && telemetry.domain_query.is_none() && telemetry.throttle.is_none());

        let (model, codes) = load(
            "telemetry half-life=\"3s\" max-age=\"1m\" ttl=\"1s\" {\n    node-query \"my_node\"\n    domain-query \"my_domain\"\n    throttle domain-nvlink-above=0.85 for=\"10m\" comm=\"medium\"\n}\n",
            NODES,
        );
        assert_eq!(codes, []);
        let telemetry = model.telemetry.expect("declared");
        assert_eq!((telemetry.half_life_seconds, telemetry.max_age_seconds, telemetry.ttl_seconds), (3, 60, 1));
        assert_eq!(telemetry.node_query.map(|query| query.value).as_deref(), Some("my_node"));
        assert_eq!(telemetry.domain_query.map(|query| query.value).as_deref(), Some("my_domain"));
        let rule = telemetry.throttle.expect("a rule");
        assert_eq!((rule.threshold, rule.hold_seconds, rule.comm), (0.85, 600, CommLevel::Medium));
        assert!(rule.refuses(CommLevel::High) && rule.refuses(CommLevel::Medium) && !rule.refuses(CommLevel::Low));
    }

    #[test]
    fn bad_settings_have_their_codes() {
        let code = |policy: &str| load(policy, NODES).1.into_iter().map(|(code, _)| code).collect::<Vec<_>>();
        assert_eq!(code("telemetry half-life=\"2d\"\n"), [Code::TelemetryDurationOutOfRange]);
        assert_eq!(code("telemetry max-age=\"0s\"\n"), [Code::TelemetryDurationOutOfRange]);
        assert_eq!(code("telemetry max-age=\"30s\" ttl=\"1m\"\n"), [Code::TelemetryCacheOutlivesAge]);
        assert_eq!(code("telemetry {\n    throttle domain-nvlink-above=85 for=\"10m\"\n}\n"), [Code::ThrottleThresholdOutOfRange]);
        assert_eq!(code("telemetry {\n    throttle domain-nvlink-above=0 for=\"10m\"\n}\n"), [Code::ThrottleThresholdOutOfRange]);
        assert_eq!(code("telemetry {\n    throttle domain-nvlink-above=0.9 for=\"2d\"\n}\n"), [Code::TelemetryDurationOutOfRange]);
        assert_eq!(code("telemetry {\n    node-query \"\"\n}\n"), [Code::TelemetryQueryInvalid]);
        assert_eq!(code("telemetry {\n    domain-query \"a\\nb\"\n}\n"), [Code::TelemetryQueryInvalid]);
        assert_eq!(code("telemetry\ntelemetry\n"), [Code::DuplicateName]);
        let (_, codes) = load(
            "telemetry {\n    throttle domain-nvlink-above=0.9 for=\"1m\"\n}\n",
            "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n",
        );
        assert_eq!(codes.into_iter().map(|(code, _)| code).collect::<Vec<_>>(), [Code::ThrottleWithoutDomains]);
    }
}
