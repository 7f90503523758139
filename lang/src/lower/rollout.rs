//! Metrics, migrations and alerts: the parts of a policy that watch the running cluster.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::names::Names;
use crate::lower::policy::{Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional, Props};
use crate::lower::schema;
use crate::model::{
    Alert, AlertId, AlertSeverity, Arch, Bound, CompatGate, Condition, Metric, MetricId, Migration, MigrationId, Model, Phase, PhaseKind,
    Threshold,
};
use crate::name::Name;
use crate::span::Spanned;

pub(super) fn lower_metrics(cx: &mut Cx, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
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
fn lower_condition(cx: &mut Cx, tables: &Tables, node: &NodeReader<'_>, props: &Props<'_>, gate: bool) -> Option<Condition> {
    let metric =
        props.require(cx, node, "metric").and_then(|value| value.name(cx)).and_then(|reference| tables.metrics.resolve(cx, &reference));
    let (low_key, high_key) = if gate { ("at-least", "at-most") } else { ("below", "above") };
    let (bound, value) = match (props.get(low_key), props.get(high_key)) {
        (Some(value), None) => (crate::model::Bound::AtLeast, value),
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

pub(super) fn lower_migrations(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
    let mut names = Names::new("migration");
    let mut migrations = Vec::new();
    lower_kind(cx, "migration", nodes, &mut names, &mut migrations, MigrationId::from_index, |cx, node, name| {
        lower_migration(cx, tables, node, name)
    });
    model.migrations = migrations;
}

fn lower_migration(cx: &mut Cx, tables: &Tables, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<Migration> {
    let props = node.props(cx, schema::MIGRATION.properties);
    let children = node.children(cx, schema::MIGRATION.children);
    let from = props.require(cx, node, "from").and_then(|value| value.name(cx)).and_then(|reference| tables.pools.resolve(cx, &reference));
    let to = props.require(cx, node, "to").and_then(|value| value.name(cx)).and_then(|reference| tables.pools.resolve(cx, &reference));
    let mut ok = true;
    let mut classes = Vec::new();
    let mut services = Vec::new();
    let mut service_namespace = None;
    for child in children.iter().filter(|child| matches!(child.kind(), "classes" | "services")) {
        let allowed: &[&str] = if child.kind() == "services" { schema::MIGRATION_SERVICES.properties } else { &[] };
        let child_props = child.props(cx, allowed);
        if let Some(value) = child_props.get("namespace") {
            match value.name(cx) {
                Some(namespace) => service_namespace = Some(namespace),
                None => ok = false,
            }
        }
        child.children(cx, &[]);
        for arg in child.expect_args(cx, 1, usize::MAX, "one or more names").unwrap_or_default() {
            let Some(reference) = arg.name(cx) else {
                ok = false;
                continue;
            };
            if child.kind() == "classes" {
                match tables.classes.resolve(cx, &reference) {
                    Some(class) => classes.push(class),
                    None => ok = false,
                }
            } else {
                services.push(reference);
            }
        }
    }
    let mut compatibility = Vec::new();
    if let Some(child) = NodeReader::single(cx, &children, "compatibility") {
        child.props(cx, schema::MIGRATION_COMPATIBILITY.properties);
        for gate in child.children(cx, schema::MIGRATION_COMPATIBILITY.children) {
            let lowered = match gate.kind() {
                "binary-audit" => gate.leaf_args(cx, 0, 0, "no arguments").map(|_| CompatGate::BinaryAudit(gate.name_span())),
                "image-platform" => gate.leaf_args(cx, 1, 1, "an OCI platform such as \"linux/riscv64\"").and_then(|args| {
                    let text = args[0].string(cx)?;
                    match Arch::parse_oci_platform(&text.value) {
                        Some(arch) => Some(CompatGate::ImagePlatform(Spanned::new(arch, args[0].span))),
                        None => {
                            cx.error(
                                Diagnostic::error(
                                    Code::InvalidValue,
                                    args[0].span,
                                    format!("`{}` is not a platform placid knows", text.value.escape_debug()),
                                )
                                .label("unknown platform")
                                .maybe_help(crate::suggest::help_for(&text.value, Arch::ALL.iter().map(|arch| arch.oci_platform()))),
                            );
                            None
                        }
                    }
                }),
                kind => gate.leaf_args(cx, 1, 1, "a version such as \"560.35\"").and_then(|args| {
                    let version = args[0].string(cx)?;
                    if version.value.is_empty() || !version.value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                    {
                        cx.error(
                            Diagnostic::error(Code::InvalidValue, version.span, "a version is letters, digits, `.`, `-` and `_`")
                                .label("invalid version")
                                .help("such as \"560.35\" or \"6.8\""),
                        );
                        return None;
                    }
                    Some(if kind == "min-driver" { CompatGate::MinDriver(version) } else { CompatGate::MinKernel(version) })
                }),
            };
            match lowered {
                Some(gate) => compatibility.push(gate),
                None => ok = false,
            }
        }
    }
    let mut acceptance = Vec::new();
    let mut rollback = Vec::new();
    let mut phases = Vec::new();
    for child in &children {
        match child.kind() {
            "accept" | "rollback-when" => {
                let gate = child.kind() == "accept";
                let accepts = if gate { &schema::MIGRATION_ACCEPT } else { &schema::MIGRATION_ROLLBACK_WHEN };
                let child_props = child.props(cx, accepts.properties);
                child.children(cx, &[]);
                match lower_condition(cx, tables, child, &child_props, gate) {
                    Some(condition) if gate => acceptance.push(condition),
                    Some(condition) => rollback.push(condition),
                    None => ok = false,
                }
            }
            "phase" => match lower_phase(cx, child) {
                Some(phase) => phases.push(phase),
                None => ok = false,
            },
            _ => {}
        }
    }
    if phases.is_empty() && ok {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), format!("migration `{}` has no phases", name.value))
                .label("no `phase`")
                .help("add phases such as `phase \"canary\" weight=\"1%\" hold=\"6h\"`"),
        );
        ok = false;
    }
    if !ok {
        return None;
    }
    Some(Migration {
        name: name.value,
        span: name.span,
        from: from?,
        to: to?,
        classes,
        services,
        service_namespace,
        compatibility,
        acceptance,
        phases,
        rollback,
    })
}

fn lower_phase(cx: &mut Cx, node: &NodeReader<'_>) -> Option<Phase> {
    let props = node.props(cx, schema::MIGRATION_PHASE.properties);
    node.children(cx, &[]);
    let kind = node.expect_args(cx, 1, 1, "shadow, canary, ramp or blue-green").and_then(|args| {
        args[0].keyword(
            cx,
            &[
                ("shadow", PhaseKind::Shadow),
                ("canary", PhaseKind::Canary),
                ("ramp", PhaseKind::Ramp),
                ("blue-green", PhaseKind::BlueGreen),
            ],
        )
    })?;
    let weight = props.get("weight").map(|value| value.percent(cx)).lowered()?;
    let hold = props.require(cx, node, "hold").and_then(|value| value.duration(cx))?;
    match (kind, weight) {
        (PhaseKind::Canary | PhaseKind::Ramp, None) => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("a {} phase needs `weight=`", kind.as_str()))
                    .label("no weight")
                    .help("the share of work on the new pool, such as `weight=\"10%\"`"),
            );
            return None;
        }
        (PhaseKind::Shadow | PhaseKind::BlueGreen, Some(_)) => {
            cx.error(
                Diagnostic::error(Code::InvalidValue, node.name_span(), format!("a {} phase takes no `weight=`", kind.as_str()))
                    .label("unexpected weight")
                    .help("shadow copies traffic without moving it; blue-green moves all of it"),
            );
            return None;
        }
        (_, Some(weight)) if weight.basis_points == 0 || weight.basis_points > 10_000 => {
            cx.error(
                Diagnostic::error(Code::InvalidValue, node.name_span(), format!("weight {weight} is not between 0% and 100%"))
                    .label("out of range")
                    .help("use a share above 0% and at most 100%"),
            );
            return None;
        }
        _ => {}
    }
    Some(Phase { span: node.name_span(), kind, weight, hold })
}

pub(super) fn lower_alerts(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
    let mut names = Names::new("alert");
    let mut alerts = Vec::new();
    lower_kind(cx, "alert", nodes, &mut names, &mut alerts, AlertId::from_index, |cx, node, name| {
        let props = node.props(cx, schema::ALERT.properties);
        node.children(cx, &[]);
        let condition = lower_condition(cx, tables, node, &props, false);
        let severity = props.get("severity").map_or(Some(AlertSeverity::Warning), |value| {
            value.keyword(cx, &[("info", AlertSeverity::Info), ("warning", AlertSeverity::Warning), ("critical", AlertSeverity::Critical)])
        });
        Some(Alert { name: name.value, span: name.span, condition: condition?, severity: severity? })
    });
    model.alerts = alerts;
}
