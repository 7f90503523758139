//! Migrations (`migration from= to=` with `classes`, `services`, `compatibility`,
//! `accept`, `phase` and `rollback-when`): moving work between pools under watch.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::metric::lower_condition;
use crate::lower::names::{Names, Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional};
use crate::lower::schema;
use crate::model::{Arch, CompatGate, Migration, MigrationId, Model, Phase, PhaseKind};
use crate::name::Name;
use crate::span::Spanned;

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
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
