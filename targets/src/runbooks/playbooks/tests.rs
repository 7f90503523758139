//! The playbooks of small in-memory projects: what each script changes, checked against the
//! slurm.conf the same build writes, and that every script is valid bash.

use std::process::Command;

use placid_lang::model::Model;
use placid_lang::source::MemoryWorld;

use crate::Artifact;

const NODES: &str = r#"node "rv1" arch="riscv64" nvlink-domain="d1" capacity="reserved" {
    cpu harts=8
    cost gpu-hour=(usd)2.50
    gpu 0 model="H200" memory="141GiB" { nvlink peer=1 links=18 bandwidth="900GB/s"; }
    gpu 1 model="H200" memory="141GiB" { nvlink peer=0 links=18 bandwidth="900GB/s"; }
}
node "x1" arch="x86_64" capacity="on-demand" {
    cpu harts=8
    cost gpu-hour=(usd)1.00
    gpu 0 model="L40S" memory="48GiB"
}
node "x2" arch="x86_64" capacity="spot" {
    cpu harts=8
    cost gpu-hour=(usd)1.00
    gpu 0 model="L40S" memory="48GiB"
}
"#;

const POLICY: &str = r#"pool "nvl" { select nvlink-domain="d1" }
pool "x86" { select arch="x86_64" }
pool "spot" { select capacity="spot" }
tier "P0" { priority 1000; preemption "never" }
tier "P1" { priority 500; preemption window="3m" mode="requeue"; checkpoint every="15m" }
tier "P2" { priority 100; preemption window="2m" mode="cancel" }
cost-center "cc" { budget daily=(usd)100 }
team "vision" { share 10; cost-center "cc"; tiers "P0" "P1" "P2" }
class "model-parallel" { nvlink "required"; comm "high"; }
metric "nvlink-utilization" query="placid:nvlink_domain_utilization:ratio"
alert "nvlink-saturation" metric="nvlink-utilization" above="85%" for="10m" severity="warning"
"#;

fn project(accounting: bool) -> String {
    format!(
        "project \"t\"\ninventory \"inventory/*.kdl\"\ninclude \"policy/*.kdl\"\n\
         target \"slurm\" version=\"22.05\" cluster=\"t\" accounting=#{accounting}\n\
         target \"kubernetes\" version=\"1.34\" label-prefix=\"example.org\" namespace=\"ops\"\n"
    )
}

fn load(accounting: bool, policy: &str) -> Model {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", project(accounting));
    world.insert("inventory/nodes.kdl", NODES);
    world.insert("policy/policy.kdl", policy);
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "test input does not load: {:?}", compilation.diagnostics);
    let (verdict, diagnostics) = placid_check::check(compilation.model, placid_lang::diag::Diagnostics::new());
    verdict.into_checked().unwrap_or_else(|| panic!("test input does not check: {diagnostics:?}")).into_model()
}

fn file(artifacts: &[Artifact], path: &str) -> String {
    let artifact = artifacts.iter().find(|artifact| artifact.path == path).unwrap_or_else(|| panic!("no {path}"));
    String::from_utf8(artifact.bytes.to_vec()).expect("text")
}

/// The partitions of slurm.conf, as the same model emits it: name, nodes, `AllowQos`.
fn partitions(model: &Model) -> Vec<(String, Vec<String>, Vec<String>)> {
    let checked = placid_check::check(model.clone(), placid_lang::diag::Diagnostics::new()).0.into_checked().expect("checks");
    let artifacts = crate::slurm::emit_with(&checked, &crate::slurm::SlurmTemplates::default()).expect("emits");
    let conf = file(&artifacts, "slurm/slurm.conf");
    let field = |line: &str, key: &str| -> Vec<String> {
        line.split(' ')
            .find_map(|field| field.strip_prefix(key))
            .map(|list| list.split(',').map(str::to_owned).collect())
            .unwrap_or_default()
    };
    conf.lines()
        .filter_map(|line| line.strip_prefix("PartitionName=").filter(|rest| !rest.starts_with("DEFAULT")).map(|rest| (rest, line)))
        .map(|(rest, line)| (rest.split(' ').next().unwrap_or_default().to_owned(), field(line, "Nodes="), field(line, "AllowQos=")))
        .collect()
}

#[test]
fn the_preemption_playbook_pauses_exactly_the_spot_partitions_slurm_conf_lets_the_tier_use() {
    let model = load(true, POLICY);
    let artifacts = super::emit(&model);
    for tier in ["P1", "P2"] {
        let script = file(&artifacts, &format!("runbooks/playbooks/excessive-preemptions/{tier}.slurm.sh"));
        let qos = tier.to_ascii_lowercase();
        // x2 is the one spot node.
        let expected: Vec<String> = partitions(&model)
            .into_iter()
            .filter(|(_, nodes, allowed)| nodes.iter().any(|node| node == "x2") && allowed.contains(&qos))
            .map(|(name, _, _)| name)
            .collect();
        assert!(!expected.is_empty());
        assert!(script.contains(&format!("\ntier={qos}\npaused={}\n", expected.join(","))), "{script}");
        assert!(script.contains(crate::slurm::sbatch::CHECKPOINT_SIGNAL), "{script}");
    }
    // Never-preempted tiers have no playbook.
    assert!(!artifacts.iter().any(|artifact| artifact.path.contains("excessive-preemptions/P0")));
    let page = file(&artifacts, "runbooks/playbooks/excessive-preemptions.md");
    assert!(page.contains("`--undo` lets it back on"), "{page}");
}

#[test]
fn without_accounting_the_tier_partition_drops_its_spot_nodes() {
    let model = load(false, POLICY);
    let script = file(&super::emit(&model), "runbooks/playbooks/excessive-preemptions/P1.slurm.sh");
    assert!(script.contains("scontrol update PartitionName=p1 Nodes=rv1,x1\n"), "{script}");
    assert!(script.contains("    scontrol update PartitionName=p1 Nodes=rv1,x1,x2\n"), "the undo restores slurm.conf's nodes: {script}");
    assert!(script.contains("squeue -h -p \"$tier\""), "{script}");
    assert!(!script.contains("scontrol hold"), "{script}");
}

#[test]
fn the_canary_bar_is_the_alert_threshold_of_one_gpus_nvlink_one_way() {
    let model = load(true, POLICY);
    let artifacts = super::emit(&model);
    let sbatch = file(&artifacts, "runbooks/playbooks/nvlink-canary/d1.sbatch");
    // 900 GB/s both ways per GPU, 450 one way, 85 % of it.
    assert!(sbatch.contains("min_busbw=382.5\n"), "{sbatch}");
    assert!(sbatch.contains("#SBATCH --nodelist=rv1\n#SBATCH --ntasks-per-node=2\n#SBATCH --gpus-per-node=2\n"), "{sbatch}");
    assert!(sbatch.contains("#SBATCH --partition=nvl\n"), "{sbatch}");
    let page = file(&artifacts, "runbooks/playbooks/nvlink-canary.md");
    assert!(page.contains("alert `nvlink-saturation`: 85%"), "{page}");

    let without = load(
        true,
        &POLICY.replace("alert \"nvlink-saturation\"", "alert \"unrelated\"").replace("placid:nvlink_domain_utilization:ratio", "up"),
    );
    let sbatch = file(&super::emit(&without), "runbooks/playbooks/nvlink-canary/d1.sbatch");
    assert!(sbatch.contains("min_busbw=''\n"), "{sbatch}");
}

#[test]
fn the_kubernetes_canary_is_one_job_per_node_with_a_placeholder_image() {
    let model = load(true, POLICY);
    let yaml = file(&super::emit(&model), "runbooks/playbooks/nvlink-canary/d1.kubernetes.yaml");
    let list: serde_yaml::Value = serde_yaml::from_str(&yaml).expect("YAML");
    let items = list["items"].as_sequence().expect("items");
    assert_eq!(items.len(), 1);
    let job = &items[0];
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["metadata"]["namespace"], "ops");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["nodeSelector"]["kubernetes.io/hostname"], "rv1");
    assert_eq!(pod["tolerations"][0]["key"], "example.org/reserved");
    assert_eq!(pod["containers"][0]["name"], super::canary::CONTAINER);
    assert_eq!(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "2");
}

#[test]
fn the_topology_playbook_refuses_undeclared_nodes_and_falls_back_to_pcie_partitions() {
    let model = load(true, POLICY);
    let artifacts = super::emit(&model);
    let script = file(&artifacts, "runbooks/playbooks/topology-mismatch.slurm.sh");
    assert!(script.contains("declared=' rv1 x1 x2 '\n"), "{script}");
    assert!(script.contains("pcie=x86,spot\n"), "{script}");
    let kubernetes = file(&artifacts, "runbooks/playbooks/topology-mismatch.kubernetes.sh");
    assert!(kubernetes.contains("-l example.org/class=model-parallel"), "{kubernetes}");
    assert!(kubernetes.contains("example.org/drain-reason=\"$reason\""), "{kubernetes}");
    let output = Command::new("bash").arg("-c").arg(&script).arg("topology-mismatch.slurm.sh").arg("nope").output().expect("bash");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("nope: not a node of the inventory"));
}

#[test]
fn every_script_is_valid_bash() {
    for accounting in [true, false] {
        for artifact in super::emit(&load(accounting, POLICY)) {
            if !(artifact.path.ends_with(".sh") || artifact.path.ends_with(".sbatch")) {
                continue;
            }
            let output =
                Command::new("bash").arg("-n").arg("-c").arg(String::from_utf8_lossy(&artifact.bytes).as_ref()).output().expect("bash");
            assert!(output.status.success(), "{}: {}", artifact.path, String::from_utf8_lossy(&output.stderr));
        }
    }
}

#[test]
fn the_alert_page_links_every_playbook_the_build_wrote() {
    let model = load(true, POLICY);
    let artifacts = super::emit(&model);
    let page = crate::runbooks::alerts::emit(&model).expect("an alerts page");
    let page = String::from_utf8(page.bytes.to_vec()).expect("text");
    let written = super::written(&model);
    assert_eq!(written.len(), 4);
    for playbook in written {
        assert!(page.contains(&format!("]({}.md)", playbook.page.trim_start_matches("runbooks/"))), "{page}");
        assert!(artifacts.iter().any(|artifact| artifact.path == format!("{}.md", playbook.page)), "{}", playbook.page);
    }
}

/// Runs one canary of `d1` (the Kubernetes Job's loop, which needs no `srun`) against a
/// stand-in all_reduce_perf printing nccl-tests' summary lines: there is no GPU here.
fn canary_run(busbw: &str, wrong: &str) -> std::process::Output {
    let yaml = file(&super::emit(&load(true, POLICY)), "runbooks/playbooks/nvlink-canary/d1.kubernetes.yaml");
    let list: serde_yaml::Value = serde_yaml::from_str(&yaml).expect("YAML");
    let script = list["items"][0]["spec"]["template"]["spec"]["containers"][0]["command"][2].as_str().expect("the loop").to_owned();
    let fake = std::env::temp_dir().join(format!("placid-fake-all-reduce-{}-{busbw}-{wrong}", std::process::id()));
    std::fs::write(
        &fake,
        "#!/bin/sh\nprintf '# Out of bounds values : %s OK\\n# Avg bus bandwidth    : %s \\n' \"$FAKE_WRONG\" \"$FAKE_BW\"\n",
    )
    .expect("write the stand-in");
    let _ = Command::new("chmod").arg("+x").arg(&fake).status();
    let output = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env("PLACID_ALL_REDUCE_PERF", &fake)
        .env("PLACID_CANARY_HOURS", "0")
        .env("FAKE_BW", busbw)
        .env("FAKE_WRONG", wrong)
        .output()
        .expect("bash");
    let _ = std::fs::remove_file(&fake);
    output
}

#[test]
fn a_canary_run_passes_only_at_the_bar_with_correct_results() {
    for (busbw, wrong, verdict, passes) in
        [("390.20", "0", "ok", true), ("382.50", "0", "ok", true), ("381.90", "0", "slow", false), ("400.00", "3", "wrong", false)]
    {
        let output = canary_run(busbw, wrong);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.success(), passes, "{busbw} {wrong}: {stdout}");
        assert!(stdout.contains(&format!("busbw_gbps={busbw} min_gbps=382.5 result={verdict}\n")), "{stdout}");
        assert!(stdout.contains(&format!("runs=1 failures={}", u8::from(!passes))), "{stdout}");
    }
}
