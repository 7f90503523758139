//! Metrics (`metric query=`) and the conditions over them (`metric=` with a threshold and
//! `for=`) that migration gates, rollback triggers and alerts share, read here once.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::names::{Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional, Props};
use crate::lower::schema;
use crate::model::{Bound, Condition, Metric, MetricId, Model, Threshold};

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut metrics = Vec::new();
    lower_kind(cx, "metric", nodes, &mut tables.metrics, &mut metrics, MetricId::from_index, |cx, node, name| {
        let props = node.props(cx, schema::METRIC.properties);
        node.children(cx, &[]);
        let query = props.require(cx, node, "query")?.string(cx)?;
        if query.value.trim().is_empty() {
            cx.error(
                Diagnostic::error(Code::InvalidValue, query.span, "the query is empty")
                    .label("empty query")
                    .help("write the PromQL expression that reads the metric"),
            );
            return None;
        }
        Some(Metric { name: name.value, span: name.span, query })
    });
    model.metrics = metrics;
}

/// Reads `metric=` and one of `above=`/`below=` (triggers, alerts) or `at-least=`/`at-most=`
/// (gates), with optional `of="baseline"` and `for=`.
pub(super) fn lower_condition(cx: &mut Cx, tables: &Tables, node: &NodeReader<'_>, props: &Props<'_>, gate: bool) -> Option<Condition> {
    let metric =
        props.require(cx, node, "metric").and_then(|value| value.name(cx)).and_then(|reference| tables.metrics.resolve(cx, &reference));
    let (low_key, high_key) = if gate { ("at-least", "at-most") } else { ("below", "above") };
    let (bound, value) = match (props.get(low_key), props.get(high_key)) {
        (Some(value), None) => (Bound::AtLeast, value),
        (None, Some(value)) => (Bound::AtMost, value),
        _ => {
            cx.error(
                Diagnostic::error(
                    Code::MissingValue,
                    node.name_span(),
                    format!("`{}` needs exactly one of `{low_key}=` and `{high_key}=`", node.kind()),
                )
                .label("no threshold")
                .help(format!("such as `{high_key}=\"2%\"` or `{low_key}=0.95`")),
            );
            return None;
        }
    };
    let of_baseline = match props.get("of") {
        Some(of) => of.keyword(cx, &[("baseline", true)])?,
        None => false,
    };
    let threshold = match value.entry.value() {
        kdl::KdlValue::String(_) => {
            let percent = value.percent(cx)?;
            if of_baseline { Threshold::OfBaseline(percent) } else { Threshold::Percent(percent) }
        }
        _ if of_baseline => {
            cx.error(
                Diagnostic::error(Code::InvalidUnit, value.span, "a threshold relative to the baseline is a percentage")
                    .label("not a percentage")
                    .help("write it as \"90%\""),
            );
            return None;
        }
        _ => Threshold::Value(value.number(cx)?),
    };
    let duration = props.get("for").map(|value| value.duration(cx));
    Some(Condition { span: node.name_span(), metric: metric?, bound, threshold, duration: duration.lowered()? })
}
