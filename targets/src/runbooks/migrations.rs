//! The migration runbooks: `runbooks/<migration>.md` per migration, for the people who run
//! it: phases in order, the exact gate for each, what the automation does on each trigger, and
//! the commands that apply and roll back each phase.
//!
//! Invariant: every command, name and query in it is produced by the same functions that
//! write the Slurm phase scripts ([`crate::slurm::migrations`]), the Rollouts and
//! AnalysisTemplates ([`crate::k8s::rollouts`]) and the PromQL they run
//! ([`crate::migration::analysis`]), so the runbook cannot say something the generated config
//! does not do. That is why the runbooks, unlike the other targets, read the Slurm and
//! Kubernetes targets; neither reads them.

use std::fmt::Write as _;

use placid_lang::model::{Arch, CompatGate, Condition, Migration, Model, PhaseKind};

use super::{GENERATED, fenced};
use crate::Artifact;
use crate::facts::NodeFact;
use crate::k8s::names::{ObjectName, PlacidKeys};
use crate::k8s::rollouts::{self, PROMETHEUS_ADDRESS, template_name};
use crate::migration::analysis::{Role, go_duration, measure};
use crate::migration::plan::MigrationPlan;
use crate::slurm::migrations::{Script, accounts, apply_commands, node_list, reservation_name, revert_commands, script_path};
use crate::text::shell_quote;

/// The runbook of every migration.
pub fn emit(model: &Model) -> Vec<Artifact> {
    model.migrations.iter().map(|migration| runbook(model, &MigrationPlan::new(model, migration))).collect()
}

/// The runbook of one migration.
fn runbook(model: &Model, plan: &MigrationPlan<'_>) -> Artifact {
    let mut text = String::new();
    // Writing to a String cannot fail, so the results of `writeln!` carry no information.
    let _ = write_runbook(&mut text, model, plan);
    Artifact::text(format!("runbooks/{}.md", plan.migration.name), text)
}

fn write_runbook(out: &mut String, model: &Model, plan: &MigrationPlan<'_>) -> std::fmt::Result {
    let migration = plan.migration;
    let source = model.pool(migration.from.value);
    let target = model.pool(migration.to.value);
    writeln!(out, "# Migration `{}`: `{}` -> `{}`\n", migration.name, source.name, target.name)?;
    writeln!(out, "{GENERATED}\n")?;
    writeln!(out, "## What moves\n")?;
    let classes: Vec<String> = migration.classes.iter().map(|class| format!("`{}`", model.class(class.value).name)).collect();
    let services: Vec<String> = migration.services.iter().map(|service| format!("`{}`", service.value)).collect();
    writeln!(out, "- Job classes: {}", if classes.is_empty() { "none".to_owned() } else { classes.join(", ") })?;
    let namespace = service_namespace(model, plan);
    match &namespace {
        Some(namespace) if !services.is_empty() => {
            writeln!(out, "- Services (Argo Rollouts in namespace `{namespace}`): {}", services.join(", "))?
        }
        _ => writeln!(out, "- Services: {}", if services.is_empty() { "none".to_owned() } else { services.join(", ") })?,
    }
    writeln!(
        out,
        "- Work at full ramp: {} GPUs; `{}` has {} GPUs on {} nodes.",
        plan.workload_gpus,
        target.name,
        target.gpus,
        target.nodes.len()
    )?;
    writeln!(
        out,
        "- Slurm: work is submitted to partition `{}`; reservations are for accounts {}.\n",
        source.name,
        accounts(model, plan).join(", ")
    )?;

    writeln!(out, "## Before the first phase: compatibility gates\n")?;
    let target_nodes = node_list(model, &target.nodes);
    for gate in &migration.compatibility {
        match gate {
            CompatGate::ImagePlatform(arch) => {
                writeln!(out, "- Every migrated class has a `{}` image:", arch.value.oci_platform())?;
                for class in &migration.classes {
                    if let Some(image) = &model.class(class.value).launch.image {
                        writeln!(out, "\n{}", fenced("sh", &format!("docker buildx imagetools inspect {}", shell_quote(&image.value))))?;
                    }
                }
            }
            CompatGate::BinaryAudit(_) => writeln!(
                out,
                "- No architecture-specific binary lacks a riscv64 build: export each image (`docker save IMAGE -o image.tar`) and run\n\n{}",
                fenced("sh", "placid audit-binaries --format json image.tar")
            )?,
            CompatGate::MinDriver(version) => writeln!(
                out,
                "- GPU driver at least `{}` on every target node:\n\n{}",
                version.value,
                fenced(
                    "sh",
                    &format!("srun -w {target_nodes} -N{} nvidia-smi --query-gpu=driver_version --format=csv,noheader", target.nodes.len())
                )
            )?,
            CompatGate::MinKernel(version) => writeln!(
                out,
                "- Kernel at least `{}` on every target node:\n\n{}",
                version.value,
                fenced("sh", &format!("srun -w {target_nodes} -N{} uname -r", target.nodes.len()))
            )?,
        }
    }
    if migration.compatibility.is_empty() {
        writeln!(out, "None declared.")?;
    }

    writeln!(out, "\n## Acceptance gates\n")?;
    writeln!(out, "Measured once at the end of every phase's hold (the window looks back); every gate must pass before the next phase.")?;
    writeln!(out, "A failed gate aborts the Rollouts: treat it as a rollback trigger. Prometheus: `{PROMETHEUS_ADDRESS}`.\n")?;
    write_conditions(out, model, migration, &migration.acceptance, Role::Gate, "passes")?;

    writeln!(out, "## Rollback triggers\n")?;
    writeln!(out, "Measured every minute for the whole rollout. On a trigger, Argo Rollouts aborts every Rollout of the migration and")?;
    writeln!(
        out,
        "traffic returns to the stable ReplicaSets on `{}`; an operator then reverts the Slurm phases (see the end).\n",
        source.name
    )?;
    write_conditions(out, model, migration, &migration.rollback, Role::Trigger, "fires")?;

    writeln!(out, "## Phases\n")?;
    if let (Some(namespace), Some(arch), false) = (&namespace, single_arch(model, plan), migration.services.is_empty()) {
        writeln!(out, "Start the Rollouts by pointing each service's Deployment at the target pool:\n")?;
        let patch = placement_patch(model, plan, arch);
        let commands: Vec<String> = migration
            .services
            .iter()
            .map(|service| format!("kubectl -n {namespace} patch deployment {} --type merge -p {}", service.value, shell_quote(&patch)))
            .collect();
        writeln!(out, "{}", fenced("sh", &commands.join("\n")))?;
    }
    for (index, phase) in plan.phases.iter().enumerate() {
        let share = phase.phase.weight.map_or_else(
            || if phase.phase.kind == PhaseKind::BlueGreen { "100%".to_owned() } else { "0% (copy of the work)".to_owned() },
            |weight| weight.to_string(),
        );
        writeln!(out, "### {}. {} (hold {})\n", index + 1, phase.label, go_duration(phase.phase.hold))?;
        writeln!(out, "- Share on `{}`: {share}, {} GPUs of work.", target.name, phase.gpus)?;
        if !phase.joined.is_empty() {
            writeln!(out, "- Nodes serving partition `{}`: {} (weight {}).", source.name, node_list(model, &phase.joined), phase.weight)?;
        }
        if !phase.reserved.is_empty() {
            writeln!(out, "- Reservation `{}` holds {} for the window.", reservation_name(plan, phase), node_list(model, &phase.reserved))?;
        }
        if phase.replaces_source() {
            writeln!(out, "- `{}` nodes leave the partition but stay up, so rollback is immediate.", source.name)?;
        }
        match phase.phase.kind {
            PhaseKind::Shadow => writeln!(out, "- Kubernetes: an Experiment runs one pod of the new template without traffic.")?,
            _ => writeln!(out, "- Kubernetes: the Rollouts set weight {share}, then pause for the hold.")?,
        }
        if !migration.acceptance.is_empty() {
            writeln!(out, "- Before the next phase: every acceptance gate passes.")?;
        }
        writeln!(out, "\nApply (`sh {}`):\n", script_path(plan, phase, Script::Apply))?;
        writeln!(out, "{}", fenced("sh", &apply_commands(model, plan, index).join("\n")))?;
        writeln!(out, "Roll back (`sh {}`):\n", script_path(plan, phase, Script::Revert))?;
        let mut rollback = abort_commands(plan, namespace.as_deref());
        rollback.extend(revert_commands(model, plan, index));
        writeln!(out, "{}", fenced("sh", &rollback.join("\n")))?;
    }

    writeln!(out, "## Rolling back the whole migration\n")?;
    writeln!(out, "From phase N, abort the Rollouts, then run the revert scripts of phases N down to 1, in that order:\n")?;
    let mut all = abort_commands(plan, namespace.as_deref());
    all.extend(plan.phases.iter().rev().map(|phase| format!("sh {}", script_path(plan, phase, Script::Revert))));
    writeln!(out, "{}", fenced("sh", &all.join("\n")))?;
    writeln!(out, "Node weights set by `scontrol update` are forgotten when slurmctld restarts: finish or revert the migration first.")
}

fn abort_commands(plan: &MigrationPlan<'_>, namespace: Option<&str>) -> Vec<String> {
    let Some(namespace) = namespace else { return Vec::new() };
    plan.migration.services.iter().map(|service| format!("kubectl argo rollouts abort {} -n {namespace}", service.value)).collect()
}

fn service_namespace(model: &Model, plan: &MigrationPlan<'_>) -> Option<String> {
    let settings = model.project.kubernetes.as_ref()?;
    Some(rollouts::service_namespace(settings, plan.migration).value.to_string())
}

/// The architecture of the target pool when all its nodes share one.
fn single_arch(model: &Model, plan: &MigrationPlan<'_>) -> Option<Arch> {
    let mut arches = model.pool(plan.migration.to.value).nodes.iter().map(|node| model.node(*node).arch);
    let first = arches.next()?;
    arches.all(|arch| arch == first).then_some(first)
}

/// The Deployment patch that moves a service onto the target pool: its architecture, and,
/// when a tier reserves GPUs there, the toleration of the pool's reservation taint, which
/// keeps every pod without it off the pool's nodes (a merge patch replaces the pod's
/// tolerations). Single quotes cannot occur in it: names are letters, digits, `-`, `_`, `.`.
fn placement_patch(model: &Model, plan: &MigrationPlan<'_>, arch: Arch) -> String {
    // The arch label is well known, so its key does not depend on the prefix.
    let arch_key = NodeFact::Arch.key("");
    let mut pod = serde_json::json!({"nodeSelector": {arch_key: kubernetes_arch(arch)}});
    let pool = &plan.migration.to;
    if model.is_fenced(pool.value)
        && let Some(kubernetes) = &model.project.kubernetes
        && let Ok(key) = PlacidKeys::new(&kubernetes.label_prefix.value, kubernetes.label_prefix.span).reserved()
        && let Ok(flavor) = ObjectName::map(&model.pool(pool.value).name, pool.span, "pool")
    {
        pod["tolerations"] =
            serde_json::json!([{"key": key.as_str(), "operator": "Equal", "value": flavor.as_str(), "effect": "NoSchedule"}]);
    }
    serde_json::json!({"spec": {"template": {"spec": pod}}}).to_string()
}

/// The value of the `kubernetes.io/arch` node label (Go's GOARCH).
fn kubernetes_arch(arch: Arch) -> &'static str {
    match arch {
        Arch::Riscv64 => "riscv64",
        Arch::X86_64 => "amd64",
        Arch::Aarch64 => "arm64",
    }
}

/// One section per gate or trigger: what it measures, its AnalysisTemplate, when it `verb`s
/// (passes or fires) and its PromQL, exactly as the AnalysisTemplate runs it.
fn write_conditions(
    out: &mut String,
    model: &Model,
    migration: &Migration,
    conditions: &[Condition],
    role: Role,
    verb: &str,
) -> std::fmt::Result {
    for condition in conditions {
        let measurement = measure(model, migration, condition, role);
        writeln!(out, "### {}\n", measurement.summary)?;
        writeln!(
            out,
            "AnalysisTemplate `{}`, {verb} when `{}`:\n",
            template_name(model, migration, condition.metric.value, role),
            measurement.condition
        )?;
        writeln!(out, "{}", fenced("promql", &measurement.query))?;
    }
    Ok(())
}
