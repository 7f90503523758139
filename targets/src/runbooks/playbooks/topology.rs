//! A node's probed topology no longer matches the inventory (`placid check --probed DIR`
//! reports the drift): its NVLink cannot be trusted to be what the policy placed jobs for.
//!
//! `topology-mismatch.slurm.sh NODE...` takes the nodes the drift names (refusing a name the
//! inventory does not declare), drains them, checkpoints and requeues the jobs running there
//! that need NVLink (they keep their NVLink partitions and wait for a sound domain), and sends
//! the pending jobs without NVLink needs that could land on them to the PCIe hosts, writing
//! why into each job's `Comment` (shown by `squeue -o %k` and `sacct -o Comment`).
//! `topology-mismatch.kubernetes.sh NODE...` cordons the nodes, records the reason in an
//! annotation, and evicts the pods of classes that need NVLink; the pods of other classes
//! finish where they are, and Kueue places new ones elsewhere. Draining a drained node and
//! cordoning a cordoned one change nothing, and a job moved once no longer matches, so a
//! second run changes nothing.

use std::fmt::Write as _;

use placid_lang::model::Model;

use super::{Playbook, Script, code_list, kubernetes_keys, pod_selector, slurm_accounting, stranded_classes};
use crate::Artifact;
use crate::runbooks::GENERATED;
use crate::slurm::billing;
use crate::text::shell_word;

/// The page and scripts' common path.
pub const DIR: &str = "runbooks/playbooks/topology-mismatch";

pub(super) const PLAYBOOK: Playbook = Playbook {
    page: DIR,
    title: "Topology mismatch",
    when: "`placid check --probed` reports drift: stop trusting the nodes' NVLink, fall back to PCIe hosts",
};

const REASON: &str = "placid playbook: topology mismatch (probed NVLink topology differs from the inventory)";

pub(super) fn applies(model: &Model) -> bool {
    !model.domains.is_empty() && super::has_scheduler(model)
}

pub(super) fn emit(model: &Model) -> Vec<Artifact> {
    if !applies(model) {
        return Vec::new();
    }
    let pcie = pcie_pools(model);
    let mut artifacts = Vec::new();
    if model.project.slurm.is_some() {
        artifacts.push(Artifact::text(format!("{DIR}.slurm.sh"), slurm_script(model, &pcie)));
    }
    if model.project.kubernetes.is_some() {
        artifacts.push(Artifact::text(format!("{DIR}.kubernetes.sh"), kubernetes_script(model)));
    }
    artifacts.push(Artifact::text(format!("{DIR}.md"), page(model, &pcie)));
    artifacts
}

/// Pools with GPUs and no node of an NVLink domain: the PCIe hosts.
fn pcie_pools(model: &Model) -> Vec<String> {
    model
        .pools
        .iter()
        .filter(|pool| pool.gpus > 0 && pool.nodes.iter().all(|id| model.node(*id).domain.is_none()))
        .map(|pool| pool.name.as_str().to_owned())
        .collect()
}

/// The script's first lines: the declared nodes, and a check that every argument is one.
fn checked_arguments(script: &mut Script, model: &Model) {
    let mut declared: Vec<&str> = model.nodes.iter().map(|node| node.name.as_str()).collect();
    declared.sort_unstable();
    script
        .var("declared", &format!(" {} ", declared.join(" ")))
        .var("reason", REASON)
        .line("if [ \"$#\" -eq 0 ]; then echo \"usage: $0 NODE... (the nodes placid check --probed reports)\" >&2; exit 2; fi")
        .line("for node in \"$@\"; do")
        .line("    case \"$declared\" in *\" $node \"*) ;; *) echo \"$node: not a node of the inventory\" >&2; exit 2 ;; esac")
        .line("done");
}

fn slurm_script(model: &Model, pcie: &[String]) -> String {
    let mut script = Script::new(&[
        "Usage: topology-mismatch.slurm.sh NODE...",
        "The nodes' probed topology differs from the inventory: drain them, requeue their NVLink",
        "jobs, send pending jobs without NVLink needs to the PCIe hosts with the reason.",
    ]);
    checked_arguments(&mut script, model);
    script
        .var("pcie", &super::slurm_partitions(model, pcie))
        .line("nodes=$(IFS=,; printf '%s' \"$*\")")
        .line("comment=\"placid: fell back to PCIe hosts: topology mismatch on $nodes\"")
        .line("grace=\"${PLACID_CHECKPOINT_GRACE:-60}\"\n")
        .line("scontrol update NodeName=\"$nodes\" State=DRAIN Reason=\"$reason\"")
        .line("# Running jobs that need NVLink: checkpoint, requeue; they keep their NVLink partitions.")
        .line("jobs=$(squeue -h -w \"$nodes\" -t RUNNING,CONFIGURING,SUSPENDED -o '%A %f' | awk '$2 ~ /nvlink_/ { print $1 }' | sort -u)")
        .line("for job in $jobs; do scancel --batch --signal=USR1 \"$job\" || true; done")
        .line("if [ -n \"$jobs\" ]; then sleep \"$grace\"; fi")
        .line("for job in $jobs; do")
        .line("    scontrol requeue \"$job\" && echo \"job $job: needs NVLink, requeued; waits for a sound NVLink domain\" || true")
        .line("done")
        .line("# Pending jobs without NVLink needs that could start on these nodes: to the PCIe hosts.")
        .line("# The partitions each node is in, as slurm.conf declares them.")
        .line("partitions_of() {")
        .line("    case \"$1\" in");
    for (partitions, nodes) in node_partitions(model) {
        script.line(format_args!(
            "        {}) echo {} ;;",
            nodes.iter().map(|node| shell_word(node)).collect::<Vec<_>>().join("|"),
            shell_word(&partitions)
        ));
    }
    script
        .line("    esac")
        .line("}")
        .line("affected=$(for node in \"$@\"; do partitions_of \"$node\" | tr ',' '\\n'; done | sort -u)")
        .line("echo \"partitions with $nodes: $(paste -sd, - <<<\"$affected\")\"")
        .line("squeue -h -t PENDING -o '%A %P %f' | while read -r job partitions features; do")
        .line("    case \"$features\" in *nvlink_*) continue ;; esac")
        .line("    if [ -z \"$pcie\" ] || [ \"$partitions\" = \"$pcie\" ]; then continue; fi")
        .line("    if [ -n \"$affected\" ] && grep -qxF \"$affected\" <<<\"${partitions//,/$'\\n'}\"; then")
        .line("        scontrol update JobId=\"$job\" Partition=\"$pcie\" Comment=\"$comment\" && echo \"job $job: $comment\"")
        .line("    fi")
        .line("done");
    script.finish()
}

/// Each list of partitions (with accounting: the price partitions of every pool holding the
/// node) with the nodes in exactly those, in inventory order.
fn node_partitions(model: &Model) -> Vec<(String, Vec<&str>)> {
    let mut of_node: Vec<Vec<String>> = vec![Vec::new(); model.nodes.len()];
    if slurm_accounting(model) {
        for pool in &model.pools {
            for partition in billing::partitions(model, pool) {
                for node in &partition.nodes {
                    of_node[node.index()].push(partition.name.clone());
                }
            }
        }
    }
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (node, partitions) in model.nodes.iter().zip(of_node) {
        if partitions.is_empty() {
            continue;
        }
        let partitions = partitions.join(",");
        match groups.iter_mut().find(|(list, _)| *list == partitions) {
            Some((_, nodes)) => nodes.push(node.name.as_str()),
            None => groups.push((partitions, vec![node.name.as_str()])),
        }
    }
    groups
}

fn kubernetes_script(model: &Model) -> String {
    let mut script = Script::new(&[
        "Usage: topology-mismatch.kubernetes.sh NODE...",
        "The nodes' probed topology differs from the inventory: cordon them with the reason, evict",
        "the pods of classes that need NVLink; Kueue places new pods elsewhere.",
    ]);
    checked_arguments(&mut script, model);
    let keys = kubernetes_keys(model);
    let annotation = keys.as_ref().and_then(|keys| keys.pod("drain-reason", model.project.span).ok()).unwrap_or_default();
    script.line("for node in \"$@\"; do");
    script.line("    kubectl cordon \"$node\"");
    script.line(format_args!("    kubectl annotate --overwrite node \"$node\" {}=\"$reason\"", shell_word(&annotation)));
    for class in stranded_classes(model) {
        let Some(selector) = keys.as_ref().and_then(|keys| pod_selector(keys, "class", &class.name, class.span)) else { continue };
        script.line(format_args!(
            "    kubectl delete pods --all-namespaces -l {} --field-selector \"spec.nodeName=$node\" --wait=false",
            shell_word(&selector)
        ));
    }
    script.line("done");
    script.finish()
}

fn page(model: &Model, pcie: &[String]) -> String {
    let mut out = format!("# Playbook: a node's topology does not match the inventory\n\n{GENERATED} Scripts are idempotent.\n\n");
    let _ = writeln!(
        out,
        "`placid check --probed DIR` compares the inventory with placid-probe's files and names each node whose NVLink domain, GPUs, MIG layout or links differ. Until the inventory or the node is fixed, placement on that node's NVLink cannot be trusted:\n"
    );
    let stranded: Vec<&str> = stranded_classes(model).map(|class| class.name.as_str()).collect();
    let _ = writeln!(out, "- PCIe hosts (the fallback): {}", code_list(pcie, "no pool (every pool has NVLink nodes)"));
    let _ = writeln!(out, "- Classes that need NVLink (requeued, wait for a sound domain): {}", code_list(&stranded, "none"));
    if model.project.slurm.is_some() {
        let _ = writeln!(
            out,
            "- Slurm: `bash {DIR}.slurm.sh NODE...` drains the nodes, checkpoints (`USR1`, then `PLACID_CHECKPOINT_GRACE` seconds, default 60) and requeues the NVLink jobs running there, and moves pending jobs without NVLink needs that could start there to the PCIe partitions, with the reason in their `Comment` (`squeue -o '%i %k'`)."
        );
        let _ = writeln!(out, "- Back in service, once `placid check --probed` is clean: `scontrol update NodeName=NODE State=RESUME`.");
    }
    if model.project.kubernetes.is_some() {
        let _ = writeln!(
            out,
            "- Kubernetes: `bash {DIR}.kubernetes.sh NODE...` cordons the nodes, writes the reason in an annotation, and evicts the pods of classes that need NVLink. Back in service: `kubectl uncordon NODE`."
        );
    }
    out
}
