//! An NVLink domain fails: for each domain, what to run on each scheduler.
//!
//! `<domain>.slurm.sh` drains the domain's nodes, sends each running job the checkpoint signal
//! of placid's sbatch templates (`USR1` to the batch shell), waits the grace, requeues it, and
//! points the requeued jobs that do not need NVLink (no `nvlink_*` constraint: job_submit.lua
//! adds one for classes that require it) at the pools without the domain's nodes.
//! `<domain>.kubernetes.sh` cordons and drains the nodes; the Job controller recreates the
//! evicted pods, which Kueue places elsewhere if their class allows. Both list what cannot
//! fall back. Draining a drained node is a no-op, and only jobs still running on the domain
//! are requeued, so a second run changes nothing.

use std::fmt::Write as _;

use placid_lang::model::{Domain, Model, NvlinkNeed};

use super::{Playbook, Script, code_list, domain_nodes, kubernetes_keys, pod_selector, stranded_classes};
use crate::Artifact;
use crate::runbooks::GENERATED;
use crate::text::shell_word;

/// The directory of the domain-failure playbooks.
pub const DIR: &str = "runbooks/playbooks/nvlink-domain-failure";

pub(super) const PLAYBOOK: Playbook = Playbook {
    page: DIR,
    title: "NVLink domain failure",
    when: "an NVLink domain is down or degraded: one script per domain and scheduler",
};

pub(super) fn applies(model: &Model) -> bool {
    !model.domains.is_empty()
}

pub(super) fn emit(model: &Model) -> Vec<Artifact> {
    if !applies(model) {
        return Vec::new();
    }
    let mut artifacts = Vec::new();
    let mut page = format!("# Playbook: an NVLink domain fails\n\n{GENERATED} Scripts are idempotent.\n");
    for domain in &model.domains {
        let fallback = fallback_pools(model, domain);
        if model.project.slurm.is_some() {
            artifacts.push(Artifact::text(format!("{DIR}/{}.slurm.sh", domain.name), slurm_script(model, domain, &fallback)));
        }
        if model.project.kubernetes.is_some() {
            artifacts.push(Artifact::text(format!("{DIR}/{}.kubernetes.sh", domain.name), kubernetes_script(model, domain)));
        }
        let _ = write_page(&mut page, model, domain, &fallback);
    }
    artifacts.push(Artifact::text(format!("{DIR}.md"), page));
    artifacts
}

/// Pools with GPUs and none of the domain's nodes: where work that does not need NVLink goes.
fn fallback_pools(model: &Model, domain: &Domain) -> Vec<String> {
    model
        .pools
        .iter()
        .filter(|pool| pool.gpus > 0 && !pool.nodes.iter().any(|node| domain.nodes.contains(node)))
        .map(|pool| pool.name.as_str().to_owned())
        .collect()
}

fn slurm_script(model: &Model, domain: &Domain, fallback: &[String]) -> String {
    let mut script = Script::new(&[
        &format!("NVLink domain {} failed: drain its nodes, checkpoint and requeue its jobs,", domain.name),
        "send the jobs that do not need NVLink to other pools.",
    ]);
    script.var("nodes", &domain_nodes(model, domain).join(","));
    script.var("reason", &format!("placid playbook: NVLink domain {} failed", domain.name));
    script
        .var("fallback", &super::slurm_partitions(model, fallback))
        .line("# Seconds a job has to checkpoint after USR1 before it is requeued.")
        .line("grace=\"${PLACID_CHECKPOINT_GRACE:-60}\"\n")
        .line("scontrol update NodeName=\"$nodes\" State=DRAIN Reason=\"$reason\"")
        .line("jobs=$(squeue -h -w \"$nodes\" -t RUNNING,CONFIGURING,SUSPENDED -o %A | sort -u)")
        .line("for job in $jobs; do scancel --batch --signal=USR1 \"$job\" || true; done")
        .line("if [ -n \"$jobs\" ]; then sleep \"$grace\"; fi")
        .line("for job in $jobs; do")
        .line("    scontrol requeue \"$job\" || echo \"job $job: not requeued (it ended or is not requeueable)\"")
        .line("    features=$(squeue -h -j \"$job\" -o %f 2>/dev/null || true)")
        .line("    case \"$features\" in")
        .line("        *nvlink_*) echo \"job $job: needs NVLink ($features), keeps its partitions\" ;;")
        .line("        *) if [ -n \"$fallback\" ]; then scontrol update JobId=\"$job\" Partition=\"$fallback\" && echo \"job $job: falls back to $fallback\"; fi ;;")
        .line("    esac")
        .line("done");
    script.finish()
}

fn kubernetes_script(model: &Model, domain: &Domain) -> String {
    let mut script = Script::new(&[
        &format!("NVLink domain {} failed: cordon and drain its nodes; the Job controller recreates", domain.name),
        "the evicted pods and Kueue admits them where their class allows.",
    ]);
    for node in domain_nodes(model, domain) {
        let node = shell_word(&node);
        script.line(format_args!("kubectl cordon {node}"));
        script.line(format_args!("kubectl drain {node} --ignore-daemonsets --delete-emptydir-data --timeout=10m"));
    }
    let Some(keys) = kubernetes_keys(model) else { return script.finish() };
    for class in stranded_classes(model) {
        let Some(selector) = pod_selector(&keys, "class", &class.name, class.span) else { continue };
        script
            .line(format_args!("echo {}", shell_word(&format!("class {} needs NVLink; its pods wait for an NVLink domain:", class.name))));
        script.line(format_args!("kubectl get pods --all-namespaces -l {} --field-selector=status.phase=Pending", shell_word(&selector)));
    }
    script.finish()
}

fn write_page(out: &mut String, model: &Model, domain: &Domain, fallback: &[String]) -> std::fmt::Result {
    writeln!(out, "\n## Domain `{}`\n", domain.name)?;
    let nodes = domain_nodes(model, domain);
    writeln!(out, "- Nodes ({} GPUs): {}", domain.gpus, code_list(&nodes, "none"))?;
    writeln!(out, "- Falls back to: {}", code_list(fallback, "no pool (every pool uses this domain)"))?;
    let movable: Vec<&str> =
        model.classes.iter().filter(|class| class.nvlink != NvlinkNeed::Required).map(|class| class.name.as_str()).collect();
    let stranded: Vec<&str> = stranded_classes(model).map(|class| class.name.as_str()).collect();
    writeln!(out, "- Classes that fall back: {}", code_list(&movable, "none"))?;
    writeln!(out, "- Cannot fall back (need NVLink; they wait for an NVLink domain): {}", code_list(&stranded, "none"))?;
    if model.project.slurm.is_some() {
        writeln!(
            out,
            "- Slurm: `bash {DIR}/{}.slurm.sh` (`PLACID_CHECKPOINT_GRACE` seconds between USR1 and requeue, default 60)",
            domain.name
        )?;
        writeln!(out, "- Back in service: `scontrol update NodeName={} State=RESUME`", nodes.join(","))?;
    }
    if model.project.kubernetes.is_some() {
        writeln!(out, "- Kubernetes: `bash {DIR}/{}.kubernetes.sh`; back in service: `kubectl uncordon` each node", domain.name)?;
    }
    Ok(())
}
