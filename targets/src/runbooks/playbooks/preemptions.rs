//! A tier is preempted too often: for each preemptible tier, checkpoint its running jobs now
//! and keep it off spot capacity, which the provider reclaims whatever the policy says.
//!
//! `<tier>.slurm.sh` sends `USR1` (the checkpoint signal of placid's sbatch templates: "save a
//! checkpoint, keep running") to the tier's running jobs whose batch script asks for it, and
//! only to those: a job without a handler would die of it. It then takes the tier out of the
//! partitions with spot nodes: with accounting, the tier's QOS leaves their `AllowQos` and
//! its pending jobs leave them (held when nothing else is left); without, the tier's own
//! partition keeps only its other nodes. Each change sets a value computed from the policy,
//! so a second run sets the same values. The page says how to undo it (slurm.conf's values,
//! also what `scontrol reconfigure` restores) and the lasting fix: a shorter `checkpoint
//! every=` in the policy, which reaches new jobs through the templates.
//!
//! Kubernetes has no runtime switch per tier: Kueue counts quota per ClusterQueue and flavor,
//! a team's preemptible tiers share its ClusterQueue, and Argo CD would revert a hand edit.
//! `<tier>.kubernetes.sh` lists the tier's pods on spot nodes, and the page gives the fix in
//! the policy.

use std::fmt::Write as _;

use placid_lang::model::{CapacityKind, Model, NodeId, Pool, PoolId, Preemption, Tier};
use placid_lang::units::Duration;

use super::{Playbook, Script, code_list, kubernetes_keys, pod_selector, slurm_accounting};
use crate::Artifact;
use crate::facts::NodeFact;
use crate::runbooks::GENERATED;
use crate::slurm::{billing, conf, names, sbatch};
use crate::text::shell_word;

/// The directory of the excessive-preemption playbooks.
pub const DIR: &str = "runbooks/playbooks/excessive-preemptions";

pub(super) const PLAYBOOK: Playbook = Playbook {
    page: DIR,
    title: "Excessive preemptions",
    when: "a tier is preempted too often: checkpoint now, keep it off spot capacity, shorten its checkpoint interval",
};

/// The tiers a playbook is written for: those that can be preempted.
fn tiers(model: &Model) -> impl Iterator<Item = &Tier> {
    model.tiers.iter().filter(|tier| tier.is_preemptible())
}

pub(super) fn applies(model: &Model) -> bool {
    super::has_scheduler(model) && tiers(model).next().is_some()
}

pub(super) fn emit(model: &Model) -> Vec<Artifact> {
    if !applies(model) {
        return Vec::new();
    }
    let mut artifacts = Vec::new();
    let mut page = format!("# Playbook: a tier is preempted too often\n\n{GENERATED} Scripts are idempotent.\n");
    for tier in tiers(model) {
        let pause = SpotPause::of(model, tier);
        if model.project.slurm.is_some() {
            artifacts.push(Artifact::text(format!("{DIR}/{}.slurm.sh", tier.name), slurm_script(model, tier, &pause)));
        }
        if model.project.kubernetes.is_some() {
            artifacts.push(Artifact::text(format!("{DIR}/{}.kubernetes.sh", tier.name), kubernetes_script(model, tier)));
        }
        let _ = write_page(&mut page, model, tier, &pause);
    }
    artifacts.push(Artifact::text(format!("{DIR}.md"), page));
    artifacts
}

/// What keeping a tier off spot capacity changes on Slurm.
enum SpotPause {
    /// With accounting: the tier's QOS leaves the `AllowQos` of these partitions (those with a
    /// spot node that slurm.conf lets it use). The script edits the list it reads, so the
    /// playbooks of two tiers compose, and `--undo` puts the QOS back.
    Qos { partitions: Vec<String> },
    /// Without accounting: the tier's own partition keeps only its other nodes; `set` and
    /// `restore` are `Nodes=…`, or `State=INACTIVE` / `State=UP` when no node is left.
    TierPartition { partition: String, set: String, restore: String },
    /// The tier runs on no spot capacity.
    Nothing,
}

impl SpotPause {
    fn of(model: &Model, tier: &Tier) -> SpotPause {
        let is_spot = |id: &NodeId| model.node(*id).capacity == CapacityKind::Spot;
        if slurm_accounting(model) {
            let qos = names::qos(tier);
            let partitions: Vec<String> = model
                .pools
                .iter()
                .enumerate()
                .filter(|(index, _)| conf::pool_qos(model, PoolId::from_index(*index)).contains(&qos))
                .flat_map(|(_, pool)| spot_partitions(model, pool))
                .collect();
            return if partitions.is_empty() { SpotPause::Nothing } else { SpotPause::Qos { partitions } };
        }
        let node_names = |ids: &[NodeId]| ids.iter().map(|id| model.node(*id).name.as_str()).collect::<Vec<_>>().join(",");
        let nodes = conf::tier_partition_nodes(model, tier);
        let kept: Vec<NodeId> = nodes.iter().copied().filter(|id| !is_spot(id)).collect();
        if kept.len() == nodes.len() {
            return SpotPause::Nothing;
        }
        let (set, restore) = if kept.is_empty() {
            ("State=INACTIVE".to_owned(), "State=UP".to_owned())
        } else {
            (format!("Nodes={}", node_names(&kept)), format!("Nodes={}", node_names(&nodes)))
        };
        SpotPause::TierPartition { partition: names::qos(tier), set, restore }
    }

    fn partitions(&self) -> Vec<&str> {
        match self {
            SpotPause::Qos { partitions } => partitions.iter().map(String::as_str).collect(),
            SpotPause::TierPartition { partition, .. } => vec![partition.as_str()],
            SpotPause::Nothing => Vec::new(),
        }
    }
}

/// The partitions of `pool` with a spot node (Slurm splits a pool by price, and a price group
/// may mix capacity kinds: it is paused as a whole).
fn spot_partitions(model: &Model, pool: &Pool) -> Vec<String> {
    billing::partitions(model, pool)
        .into_iter()
        .filter(|partition| partition.nodes.iter().any(|id| model.node(*id).capacity == CapacityKind::Spot))
        .map(|partition| partition.name)
        .collect()
}

/// The `Comment` of the jobs the playbook holds, by which `--undo` finds them again.
const HELD_COMMENT: &str = "placid: held off spot capacity (excessive-preemptions playbook)";

fn slurm_script(model: &Model, tier: &Tier, pause: &SpotPause) -> String {
    let mut script = Script::new(&[
        &format!("Usage: {}.slurm.sh [--undo]", tier.name),
        &format!("Tier {} is preempted too often: checkpoint its running jobs now and keep it off", tier.name),
        "spot capacity; --undo lets it back on.",
    ]);
    script
        .var("tier", &names::qos(tier))
        .var("paused", &pause.partitions().join(","))
        .var("held", HELD_COMMENT)
        .line("case \"${1:-}\" in \"\") undo=0 ;; --undo) undo=1 ;; *) echo \"usage: $0 [--undo]\" >&2; exit 2 ;; esac\n");
    match pause {
        SpotPause::Qos { .. } => qos_pause(&mut script),
        SpotPause::TierPartition { partition, set, restore } => {
            script
                .line("if [ \"$undo\" = 1 ]; then")
                .line(format_args!("    scontrol update PartitionName={} {}", shell_word(partition), shell_word(restore)))
                .line("    exit 0")
                .line("fi")
                .line(format_args!("scontrol update PartitionName={} {}", shell_word(partition), shell_word(set)));
        }
        SpotPause::Nothing => {
            script.line(format_args!("echo {}", shell_word(&format!("tier {} runs on no spot capacity", tier.name))));
            script.line("if [ \"$undo\" = 1 ]; then exit 0; fi");
        }
    }
    let selector = if slurm_accounting(model) { "-q" } else { "-p" };
    script
        .line("# Checkpoint now, where the job's batch script asks for the checkpoint signal.")
        .line(format_args!("for job in $(squeue -h {selector} \"$tier\" -t RUNNING -o %A | sort -u); do"))
        .line("    batch=$(scontrol write batch_script \"$job\" - 2>/dev/null || true)")
        .line("    case \"$batch\" in")
        .line(format_args!(
            "        *{}*) scancel --batch --signal=USR1 \"$job\" && echo \"job $job: checkpointing now\" ;;",
            shell_word(sbatch::CHECKPOINT_SIGNAL)
        ))
        .line("        *) echo \"job $job: its batch script has no checkpoint signal; left alone\" ;;")
        .line("    esac")
        .line("done");
    script.finish()
}

/// With accounting: edit each paused partition's `AllowQos` as Slurm reports it now, and move
/// the tier's pending jobs; `--undo` reverses both, except that moved jobs keep their new
/// partitions.
fn qos_pause(script: &mut Script) {
    script
        .line("if [ \"$undo\" = 0 ]; then")
        .line("    # Pending jobs of the tier leave the paused partitions; a job with nothing else is held.")
        .line("    squeue -h -q \"$tier\" -t PENDING -o '%A %P' | while read -r job partitions; do")
        .line("        keep=$(tr ',' '\\n' <<<\"$partitions\" | grep -vxF \"${paused//,/$'\\n'}\" | paste -sd, - || true)")
        .line("        if [ \"$keep\" = \"$partitions\" ]; then continue; fi")
        .line("        if [ -n \"$keep\" ]; then")
        .line("            scontrol update JobId=\"$job\" Partition=\"$keep\" && echo \"job $job: off spot, now in $keep\" || echo \"job $job: not moved\"")
        .line("        elif [ \"$(squeue -h -j \"$job\" -o %k)\" != \"$held\" ]; then")
        .line("            scontrol hold \"$job\" && scontrol update JobId=\"$job\" Comment=\"$held\" && echo \"job $job: only spot partitions ($partitions); held\" || echo \"job $job: not held\"")
        .line("        fi")
        .line("    done")
        .line("fi")
        .line("for partition in ${paused//,/ }; do")
        .line("    allowed=$(scontrol show -o partition \"$partition\" | tr ' ' '\\n' | sed -n 's/^AllowQos=//p')")
        .line("    state=$(scontrol show -o partition \"$partition\" | tr ' ' '\\n' | sed -n 's/^State=//p')")
        .line("    others=$(tr ',' '\\n' <<<\"$allowed\" | grep -vxF -e \"$tier\" -e ALL | paste -sd, - || true)")
        .line("    if [ \"$undo\" = 1 ]; then")
        .line("        if [ \"$state\" = INACTIVE ] && [ -z \"$others\" ]; then")
        .line("            scontrol update PartitionName=\"$partition\" AllowQos=\"$tier\" State=UP")
        .line("        elif ! grep -qxF \"$tier\" <<<\"${allowed//,/$'\\n'}\"; then")
        .line("            scontrol update PartitionName=\"$partition\" AllowQos=\"$others,$tier\"")
        .line("        fi")
        .line("    elif [ -z \"$others\" ]; then")
        .line("        # An empty AllowQos would allow every QOS: the partition stops instead.")
        .line("        scontrol update PartitionName=\"$partition\" State=INACTIVE && echo \"partition $partition: inactive ($tier was its only QOS)\"")
        .line("    elif [ \"$others\" != \"$allowed\" ]; then")
        .line("        scontrol update PartitionName=\"$partition\" AllowQos=\"$others\" && echo \"partition $partition: AllowQos $allowed -> $others\"")
        .line("    fi")
        .line("done")
        .line("if [ \"$undo\" = 1 ]; then")
        .line("    squeue -h -q \"$tier\" -t PENDING -o '%A|%k' | while IFS='|' read -r job comment; do")
        .line("        if [ \"$comment\" = \"$held\" ]; then scontrol release \"$job\" && scontrol update JobId=\"$job\" Comment= && echo \"job $job: released\" || echo \"job $job: not released\"; fi")
        .line("    done")
        .line("    exit 0")
        .line("fi");
}

fn kubernetes_script(model: &Model, tier: &Tier) -> String {
    let mut script = Script::new(&[
        &format!("Tier {} is preempted too often: list its pods on spot nodes. Kueue has no per-tier switch;", tier.name),
        "the fix is in the policy (see excessive-preemptions.md).",
    ]);
    let Some(keys) = kubernetes_keys(model) else { return script.finish() };
    let (Ok(capacity), Some(selector)) = (keys.fact(NodeFact::Capacity), pod_selector(&keys, "tier", &tier.name, tier.span)) else {
        return script.finish();
    };
    script
        .var("spot", &format!("{capacity}={}", CapacityKind::Spot.as_str()))
        .var("tier", &selector)
        .line("for node in $(kubectl get nodes -l \"$spot\" -o jsonpath='{.items[*].metadata.name}'); do")
        .line("    kubectl get pods --all-namespaces -l \"$tier\" --field-selector \"spec.nodeName=$node,status.phase=Running\" -o wide --no-headers")
        .line("done");
    script.finish()
}

/// Half the tier's checkpoint interval, at least a minute: the change the page proposes.
fn shorter_interval(every: Duration) -> Duration {
    Duration { seconds: (every.seconds / 2).max(60) }
}

fn write_page(out: &mut String, model: &Model, tier: &Tier, pause: &SpotPause) -> std::fmt::Result {
    writeln!(out, "\n## Tier `{}`\n", tier.name)?;
    if let Preemption::Window { window, mode } = tier.preemption.value {
        writeln!(out, "- Preempted after a {window} window ({}).", mode.as_str())?;
    }
    match tier.checkpoint {
        Some(checkpoint) => writeln!(
            out,
            "- Checkpoints every {}; the lasting fix is a shorter interval in the policy, such as `checkpoint every=\"{}\"` in tier `{}`, reviewed with `placid diff`. New jobs get it from the templates (`PLACID_CHECKPOINT_EVERY`).",
            checkpoint.every,
            shorter_interval(checkpoint.every),
            tier.name
        )?,
        None => writeln!(
            out,
            "- No checkpoints: each preemption loses everything since the job started. The lasting fix is a `checkpoint every=` in tier `{}`.",
            tier.name
        )?,
    }
    if model.project.slurm.is_some() {
        writeln!(
            out,
            "- Slurm: `bash {DIR}/{}.slurm.sh` keeps the tier off the partitions with spot nodes ({}) and sends `USR1` to its running jobs whose batch script asks for it (`{}`); `--undo` lets it back on.",
            tier.name,
            code_list(&pause.partitions(), "none: the tier runs on no spot capacity"),
            sbatch::CHECKPOINT_SIGNAL,
        )?;
        if let SpotPause::Qos { .. } = pause {
            writeln!(
                out,
                "  The tier's QOS leaves each partition's `AllowQos` (a partition it was alone in becomes inactive), so the playbooks of several tiers combine. Its pending jobs leave those partitions; one with no other partition is held, and `--undo` releases it (moved jobs keep their new partitions)."
            )?;
        }
    }
    if model.project.kubernetes.is_some() {
        writeln!(
            out,
            "- Kubernetes: `bash {DIR}/{}.kubernetes.sh` lists the tier's pods on spot nodes. Kueue counts quota per ClusterQueue and flavor and a team's preemptible tiers share its ClusterQueue, so there is no per-tier switch Argo CD would not revert: change the policy.",
            tier.name
        )?;
    }
    Ok(())
}
