//! Slurm phase scripts of migrations: `slurm/migrations/<migration>/<NN>-<phase>/{apply,revert}.sh`,
//! run by hand (the runbook says when), from the nodes [`crate::migration::plan`] assigns to
//! each phase.
//!
//! The source pool's partition (named after the pool, by [`names::partition`]) is where
//! the migrated work is submitted. A phase adds its target nodes to that partition, weights
//! them `100 - share%` against the source nodes' 50 (Slurm allocates the lowest weight first,
//! so early phases only take overflow and later ones take work first), and holds shadow and
//! canary nodes in a reservation for the phase's window. Blue-green leaves only target nodes
//! in the partition; the source nodes stay up, so reverting is immediate.
//!
//! `revert.sh` of phase N restores exactly the state `apply.sh` of phase N-1 leaves, so
//! reverting phase by phase walks back to the original partition. `scontrol update` changes
//! are runtime state: slurmctld forgets node weights on restart, so finish or revert the
//! migration before a restart (the runbook says so). Every word written is a validated
//! `Name`, a number or a fixed keyword, so no policy string can inject shell syntax.

use placid_lang::checked::Checked;
use placid_lang::model::{Model, NodeId};

use crate::Artifact;
use crate::migration::plan::{DEFAULT_WEIGHT, MigrationPlan, PhasePlan, SOURCE_WEIGHT};
use crate::slurm::names;

/// One of the two scripts of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// `apply.sh`: from the previous phase (or the original partition) to this one.
    Apply,
    /// `revert.sh`: from this phase back to the previous one.
    Revert,
}

/// The apply and revert scripts of every phase of every migration. Empty when the Slurm
/// target is not enabled.
pub fn phase_scripts(model: &Checked) -> Vec<Artifact> {
    let mut artifacts = Vec::new();
    if model.project.slurm.is_none() {
        return artifacts;
    }
    for migration in &model.migrations {
        let plan = MigrationPlan::new(model, migration);
        for (index, phase) in plan.phases.iter().enumerate() {
            let previous = index.checked_sub(1).map(|previous| &plan.phases[previous]);
            artifacts.push(Artifact::text(script_path(&plan, phase, Script::Apply), apply(model, &plan, index, previous)));
            artifacts.push(Artifact::text(script_path(&plan, phase, Script::Revert), revert(model, &plan, index, previous)));
        }
    }
    artifacts
}

/// Where a script of `phase` is written, the path the runbook tells operators to run.
pub fn script_path(plan: &MigrationPlan<'_>, phase: &PhasePlan<'_>, script: Script) -> String {
    let file = match script {
        Script::Apply => "apply.sh",
        Script::Revert => "revert.sh",
    };
    format!("slurm/migrations/{}/{}/{file}", plan.migration.name, phase.label)
}

/// The commands of phase `index`'s `apply.sh`, which the runbook quotes too.
pub fn apply_commands(model: &Model, plan: &MigrationPlan<'_>, index: usize) -> Vec<String> {
    let previous = index.checked_sub(1).map(|previous| &plan.phases[previous]);
    let mut commands: Vec<String> = previous.and_then(|previous| delete_reservation(plan, previous)).into_iter().collect();
    commands.extend(state(model, plan, Some(&plan.phases[index])));
    commands
}

/// The commands that undo phase `index` (its `revert.sh`).
pub fn revert_commands(model: &Model, plan: &MigrationPlan<'_>, index: usize) -> Vec<String> {
    let phase = &plan.phases[index];
    let previous = index.checked_sub(1).map(|previous| &plan.phases[previous]);
    let mut commands: Vec<String> = delete_reservation(plan, phase).into_iter().collect();
    let still_joined = previous.map_or(&[][..], |previous| &previous.joined[..]);
    let leaving: Vec<NodeId> = phase.joined.iter().copied().filter(|node| !still_joined.contains(node)).collect();
    commands.extend(state(model, plan, previous));
    if !leaving.is_empty() {
        commands.push(format!("scontrol update NodeName={} Weight={DEFAULT_WEIGHT}", node_list(model, &leaving)));
    }
    commands
}

fn apply(model: &Model, plan: &MigrationPlan<'_>, index: usize, previous: Option<&PhasePlan<'_>>) -> String {
    let phase = &plan.phases[index];
    let from = previous.map_or_else(|| "the original partition".to_owned(), |previous| format!("phase {}", previous.label));
    script(plan, &format!("Applies phase {} (from {from}).", phase.label), &apply_commands(model, plan, index))
}

fn revert(model: &Model, plan: &MigrationPlan<'_>, index: usize, previous: Option<&PhasePlan<'_>>) -> String {
    let phase = &plan.phases[index];
    let to = previous.map_or_else(|| "the original partition".to_owned(), |previous| format!("phase {}", previous.label));
    script(plan, &format!("Reverts phase {}: back to {to}.", phase.label), &revert_commands(model, plan, index))
}

fn script(plan: &MigrationPlan<'_>, purpose: &str, commands: &[String]) -> String {
    let mut text = format!("#!/bin/sh\n# Generated by placid from migration `{}`. {purpose}\nset -eu\n", plan.migration.name);
    for command in commands {
        text.push_str(command);
        text.push('\n');
    }
    text
}

/// The commands that bring the partition, weights and reservation to the state of `phase`,
/// or to the original state when `phase` is `None`.
fn state(model: &Model, plan: &MigrationPlan<'_>, phase: Option<&PhasePlan<'_>>) -> Vec<String> {
    let partition = names::partition(model.pool(plan.migration.from.value));
    let mut members: Vec<NodeId> = match phase {
        Some(phase) if phase.replaces_source() => Vec::new(),
        _ => plan.source_nodes.clone(),
    };
    members.extend(phase.map_or(&[][..], |phase| &phase.joined[..]));
    members.sort();
    members.dedup();
    let source_weight = if phase.is_some() { SOURCE_WEIGHT } else { DEFAULT_WEIGHT };
    let mut commands = vec![
        format!("scontrol update PartitionName={partition} Nodes={}", node_list(model, &members)),
        format!("scontrol update NodeName={} Weight={source_weight}", node_list(model, &plan.source_nodes)),
    ];
    if let Some(phase) = phase {
        if !phase.joined.is_empty() {
            commands.push(format!("scontrol update NodeName={} Weight={}", node_list(model, &phase.joined), phase.weight));
        }
        if !phase.reserved.is_empty() {
            // MAGNETIC (20.02+, so every supported release): the migrated teams' jobs land in
            // the reservation without asking for it with --reservation, so the canary gets work.
            commands.push(format!(
                "scontrol create reservation ReservationName={} StartTime=now Duration={} Nodes={} {} Flags=IGNORE_JOBS,MAGNETIC",
                reservation_name(plan, phase),
                phase.phase.hold.seconds.div_ceil(60),
                node_list(model, &phase.reserved),
                reservation_owners(model, plan)
            ));
        }
    }
    commands
}

fn delete_reservation(plan: &MigrationPlan<'_>, phase: &PhasePlan<'_>) -> Option<String> {
    // The reservation may already have ended with its window, so a missing one is no error.
    (!phase.reserved.is_empty()).then(|| format!("scontrol delete ReservationName={} || true", reservation_name(plan, phase)))
}

/// The reservation of a phase's window.
pub fn reservation_name(plan: &MigrationPlan<'_>, phase: &PhasePlan<'_>) -> String {
    format!("placid-{}-{}", plan.migration.name, phase.label)
}

/// Slurm accounts whose jobs may use the shadow and canary reservations: the teams running
/// stages of migrated classes, or every team when only services move.
pub fn accounts(model: &Model, plan: &MigrationPlan<'_>) -> Vec<String> {
    let migrated = |stage: &placid_lang::model::Stage| {
        stage.class.as_ref().is_some_and(|class| plan.migration.classes.iter().any(|moved| moved.value == class.value))
    };
    let mut accounts: Vec<String> = model
        .plans
        .iter()
        .filter(|plan| plan.stages.iter().any(migrated))
        .map(|plan| names::team_account(model.team(plan.team.value)))
        .collect();
    if accounts.is_empty() {
        accounts = model.teams.iter().map(names::team_account).collect();
    }
    accounts.sort();
    accounts.dedup();
    accounts
}

/// Who may use a reservation; Slurm needs accounts or users, and root when no team exists.
fn reservation_owners(model: &Model, plan: &MigrationPlan<'_>) -> String {
    let accounts = accounts(model, plan);
    if accounts.is_empty() { "Users=root".to_owned() } else { format!("Accounts={}", accounts.join(",")) }
}

/// A comma-separated list of node names, in name order, as Slurm reads one.
pub fn node_list(model: &Model, nodes: &[NodeId]) -> String {
    let mut names: Vec<&str> = nodes.iter().map(|node| model.node(*node).name.as_str()).collect();
    names.sort_unstable();
    names.join(",")
}
