//! Migrations: the target pool can hold what moves, gates and triggers measure the pool
//! under migration, phases can be rolled back one step at a time, and every migrated class
//! has an image for the target pool's architecture.
//!
//! Invariants the migration emitter relies on: phase weights strictly increase (shadow = 0%,
//! blue-green = 100%), so each phase's rollback is "go back one phase"; each metric appears
//! once among the gates and once among the triggers, so one AnalysisTemplate per metric has a
//! unique name; every baseline threshold reads a query with `$pool` in it.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Arch, CompatGate, Condition, Metric, MetricId, Migration, Model, Phase, PhaseKind, Threshold};
use placid_lang::span::Span;

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    for migration in &model.migrations {
        if migration.from.value == migration.to.value {
            diagnostics.push(
                Diagnostic::error(
                    Code::MigrationSamePool,
                    migration.to.span,
                    format!("migration `{}` moves work from pool `{}` to itself", migration.name, model.pool(migration.to.value).name),
                )
                .label("same pool as `from`")
                .with_secondary(migration.from.span, "source pool")
                .help("name the pool the work moves to in `to=`"),
            );
            continue;
        }
        check_capacity(model, migration, diagnostics);
        check_conditions(model, migration, diagnostics);
        check_phases(migration, diagnostics);
        check_platforms(model, migration, diagnostics);
    }
}

fn check_capacity(model: &Model, migration: &Migration, diagnostics: &mut Diagnostics) {
    let target = model.pool(migration.to.value);
    let source = model.pool(migration.from.value);
    let workload = model.migration_workload_gpus(migration);
    // A recovered pool's size is unknown (see `Pool::recovered`).
    if !target.recovered && target.gpus < workload {
        diagnostics.push(
            Diagnostic::error(
                Code::MigrationTargetTooSmall,
                migration.to.span,
                format!(
                    "migration `{}` moves {workload} GPUs of work from pool `{}`, but pool `{}` has {} GPUs",
                    migration.name, source.name, target.name, target.gpus
                ),
            )
            .label(format!("{} GPUs short at full ramp", workload - target.gpus))
            .with_secondary(target.span, "target pool declared here")
            .help("add nodes to the target pool, migrate fewer classes, or lower the stages' GPUs or trials on the source pool"),
        );
    }
}

fn check_conditions(model: &Model, migration: &Migration, diagnostics: &mut Diagnostics) {
    for (conditions, what) in [(&migration.acceptance, "acceptance gate"), (&migration.rollback, "rollback trigger")] {
        let mut first_use: BTreeMap<MetricId, Span> = BTreeMap::new();
        for condition in conditions {
            let metric = model.metric(condition.metric.value);
            if let Some(first) = first_use.insert(condition.metric.value, condition.span) {
                diagnostics.push(
                    Diagnostic::error(
                        Code::DuplicateMigrationCondition,
                        condition.metric.span,
                        format!("migration `{}` has two {what}s on metric `{}`", migration.name, metric.name),
                    )
                    .label("second use")
                    .with_secondary(first, "first use")
                    .help("keep the stricter threshold"),
                );
            }
            check_condition_metric(model, condition, what, diagnostics);
        }
    }
}

fn check_condition_metric(model: &Model, condition: &Condition, what: &str, diagnostics: &mut Diagnostics) {
    let metric = model.metric(condition.metric.value);
    if metric.is_per_pool() {
        return;
    }
    let placeholder = Metric::POOL_PLACEHOLDER;
    let baseline = matches!(condition.threshold, Threshold::OfBaseline(_));
    let message = format!("{what} on metric `{}`, whose query does not select a pool with `{placeholder}`", metric.name);
    let diagnostic = if baseline {
        Diagnostic::error(Code::MetricNotPerPool, condition.metric.span, message)
            .label("the baseline on the source pool cannot be measured")
            .help(format!("write the query with a pool selector such as `{{placid_pool=\"{placeholder}\"}}`"))
    } else {
        Diagnostic::warning(Code::MetricNotPerPool, condition.metric.span, message)
            .label("measures the whole cluster, not the target pool")
            .help(format!("select the pool in the query with `{placeholder}`, such as `{{placid_pool=\"{placeholder}\"}}`"))
    };
    diagnostics.push(diagnostic.with_secondary(metric.query.span, "query"));
}

fn check_phases(migration: &Migration, diagnostics: &mut Diagnostics) {
    for pair in migration.phases.windows(2) {
        let (previous, phase) = (&pair[0], &pair[1]);
        let problem = if phase.kind == PhaseKind::Shadow {
            Some(("`shadow` must be the first phase", "shadow copies traffic before any moves; put it first"))
        } else if previous.kind == PhaseKind::BlueGreen {
            Some(("`blue-green` must be the last phase", "blue-green moves all work; end the migration with it"))
        } else if previous.kind == PhaseKind::Ramp && phase.kind == PhaseKind::Canary {
            Some(("a `canary` phase comes after a `ramp`", "canaries come first, then ramps"))
        } else if phase.basis_points() <= previous.basis_points() {
            Some(("the share of work does not grow", "give each phase a larger weight than the one before"))
        } else {
            None
        };
        if let Some((label, help)) = problem {
            diagnostics.push(
                Diagnostic::error(
                    Code::MigrationPhasesNotReversible,
                    phase.span,
                    format!(
                        "phase `{}` of migration `{}` cannot follow `{}`: {label}",
                        describe(phase),
                        migration.name,
                        describe(previous)
                    ),
                )
                .label(label)
                .with_secondary(previous.span, "previous phase")
                .help(format!("{help}; rollback returns to the previous phase, so the share on the target pool must grow every phase")),
            );
        }
    }
}

fn describe(phase: &Phase) -> String {
    match phase.weight {
        Some(weight) => format!("{} {weight}", phase.kind.as_str()),
        None => phase.kind.as_str().to_owned(),
    }
}

fn check_platforms(model: &Model, migration: &Migration, diagnostics: &mut Diagnostics) {
    let target = model.pool(migration.to.value);
    let mut target_arches: Vec<Arch> = target.nodes.iter().map(|node| model.node(*node).arch).collect();
    target_arches.sort_by_key(|arch| arch.as_str());
    target_arches.dedup();
    for class_ref in &migration.classes {
        let class = model.class(class_ref.value);
        for arch in target_arches.iter().filter(|arch| !class.platforms.contains(arch)) {
            diagnostics.push(
                Diagnostic::error(
                    Code::MigrationPlatformMissing,
                    class_ref.span,
                    format!(
                        "migration `{}` moves class `{}` to pool `{}` of {} nodes, but the class has no {} image",
                        migration.name,
                        class.name,
                        target.name,
                        arch.as_str(),
                        arch.oci_platform()
                    ),
                )
                .label(format!("no {} image", arch.oci_platform()))
                .with_secondary(class.span, "class declared here")
                .help(format!("build the image for {} and add it to the class's `platforms`", arch.oci_platform())),
            );
        }
    }
    for gate in &migration.compatibility {
        if let CompatGate::ImagePlatform(arch) = gate
            && !target_arches.contains(&arch.value)
        {
            diagnostics.push(
                Diagnostic::error(
                    Code::MigrationPlatformMissing,
                    arch.span,
                    format!(
                        "migration `{}` gates on {} images, but pool `{}` has no {} nodes",
                        migration.name,
                        arch.value.oci_platform(),
                        target.name,
                        arch.value.as_str()
                    ),
                )
                .label("not the target pool's architecture")
                .with_secondary(migration.to.span, "target pool")
                .help(format!(
                    "gate on the target pool's platform: {}",
                    target_arches.iter().map(|arch| arch.oci_platform()).collect::<Vec<_>>().join(", ")
                )),
            );
        }
    }
}
