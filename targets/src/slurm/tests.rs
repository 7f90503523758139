//! Unit tests of the Slurm target on small in-memory projects: one `emit_project` helper
//! loads KDL through a [`MemoryWorld`] and checks it, as a build does, and each test states
//! its input and the lines or diagnostics it expects.

use placid_lang::checked::Checked;
use placid_lang::codes::Code;
use placid_lang::model::Model;
use placid_lang::source::MemoryWorld;

use super::{SlurmTemplates, emit_with};
use crate::Artifact;

const PROJECT: &str = r#"project "t"
inventory "inventory/*.kdl"
include "policy/*.kdl"
target "slurm" version="22.05" cluster="t"
"#;

const NODES: &str = r#"node "n1" arch="riscv64" rack="r1" chassis="c1" nvlink-domain="d1" capacity="reserved" {
    cpu harts=8 cores=8 sockets=1 numa-nodes=1
    memory "64GiB"
    cost gpu-hour=(usd)2.50
    gpu 0 model="H200" memory="141GiB" numa=0 mig="disabled" {
        nvlink peer=1 links=18 bandwidth="900GB/s"
    }
    gpu 1 model="H200" memory="141GiB" numa=0 mig="disabled" {
        nvlink peer=0 links=18 bandwidth="900GB/s"
    }
}
"#;

const POLICY: &str = r#"pool "all" { select arch="riscv64" }
tier "P0" { priority 1000; preemption "never" }
tier "P1" { priority 500; preemption window="3m" mode="requeue" }
cost-center "cc" { budget daily=(usd)100 }
team "vision" { share 10; cost-center "cc"; tiers "P0" "P1" }
"#;

/// Loads a project from `nodes` and `policy` and emits it with `templates`.
fn emit_project(nodes: &str, policy: &str, templates: &SlurmTemplates) -> Result<Vec<Artifact>, Vec<Code>> {
    emit_release("22.05", nodes, policy, templates)
}

/// [`emit_project`] for Slurm `version`.
fn emit_release(version: &str, nodes: &str, policy: &str, templates: &SlurmTemplates) -> Result<Vec<Artifact>, Vec<Code>> {
    emit_with(&load_release(version, nodes, policy), templates).map_err(|errors| errors.iter().map(|diagnostic| diagnostic.code).collect())
}

/// The checked model of `nodes` and `policy` for Slurm `version`.
fn load_release(version: &str, nodes: &str, policy: &str) -> Checked {
    let project = PROJECT.replace("version=\"22.05\"", &format!("version=\"{version}\""));
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", project);
    world.insert("inventory/nodes.kdl", nodes);
    world.insert("policy/policy.kdl", policy);
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "test input does not load: {:?}", compilation.diagnostics);
    checked(compilation.model)
}

/// `model` through the checks, which every test input must pass.
fn checked(model: Model) -> Checked {
    let (verdict, diagnostics) = placid_check::check(model, placid_lang::diag::Diagnostics::new());
    verdict.into_checked().unwrap_or_else(|| panic!("test input does not check: {diagnostics:?}"))
}

fn file(artifacts: &[Artifact], path: &str) -> String {
    artifacts
        .iter()
        .find(|artifact| artifact.path == path)
        .map(|artifact| String::from_utf8_lossy(&artifact.bytes).into_owned())
        .unwrap_or_default()
}

#[test]
fn a_node_becomes_one_line_with_features_gres_and_price_weight() {
    let artifacts = emit_project(NODES, POLICY, &SlurmTemplates::default()).unwrap_or_default();
    let conf = file(&artifacts, "slurm/slurm.conf");
    assert!(conf.contains(
        "NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=63488 MemSpecLimit=2048 Gres=gpu:H200:2 \
         Features=riscv64,nvlink_d1,rack_r1,chassis_c1,capacity_reserved Weight=250 State=UNKNOWN"
    ));
    // 64 GiB less 2 x 1/32 for the OS and daemons, over 2 GPUs.
    assert!(conf.contains("PartitionName=all Nodes=n1 AllowQos=p0,p1 TRESBillingWeights=CPU=0,Mem=0,GRES/gpu=250 DefMemPerGPU=30720"));
    assert!(conf.contains("SelectTypeParameters=CR_Core_Memory\n"));
    // One NUMA node of 8 cores: both GPUs sit next to all of them.
    assert!(file(&artifacts, "slurm/gres.conf").contains("NodeName=n1 Name=gpu Type=H200 File=/dev/nvidia1 Cores=0-7 Links=18,-1"));
}

#[test]
fn a_never_preempted_tier_is_in_no_preempt_list() {
    let artifacts = emit_project(NODES, POLICY, &SlurmTemplates::default()).unwrap_or_default();
    let accounts = file(&artifacts, "slurm/accounts.sh");
    assert!(accounts.contains("preempt p0 p1\n"));
    assert!(accounts.contains("preempt p1 ''\n"));
    assert!(accounts.contains("modify account where name=cc cluster=\"$cluster\" set Fairshare=10 GrpTRESMins=billing=600000"));
}

#[test]
fn tiers_that_differ_only_in_case_collide() {
    let policy = format!("{POLICY}tier \"p1\" {{ priority 100; preemption window=\"1m\" mode=\"cancel\" }}\n");
    assert_eq!(emit_project(NODES, &policy, &SlurmTemplates::default()), Err(vec![Code::SlurmNameCollision]));
}

#[test]
fn a_numeric_gpu_model_is_refused() {
    let nodes = NODES.replace("model=\"H200\"", "model=\"100\"");
    assert_eq!(emit_project(&nodes, POLICY, &SlurmTemplates::default()), Err(vec![Code::SlurmGresType]));
}

#[test]
fn a_dotted_rack_is_refused_as_a_feature() {
    let nodes = NODES.replace("rack=\"r1\"", "rack=\"r.1\"");
    assert_eq!(emit_project(&nodes, POLICY, &SlurmTemplates::default()), Err(vec![Code::SlurmFeatureName]));
}

#[test]
fn an_uneven_cpu_layout_is_refused() {
    let nodes = NODES.replace("harts=8 cores=8", "harts=10 cores=4");
    assert_eq!(emit_project(&nodes, POLICY, &SlurmTemplates::default()), Err(vec![Code::SlurmCpuLayout]));
}

#[test]
fn a_broken_override_template_is_reported() {
    let policy = format!("{POLICY}plan \"p\" team=\"vision\" {{ stage \"s\" tier=\"P1\" pool=\"all\" gpus=2 }}\n");
    let mut templates = SlurmTemplates::default();
    templates.overrides.insert(super::STAGE_TEMPLATE.to_owned(), "{% if %}".to_owned());
    assert_eq!(emit_project(NODES, &policy, &templates), Err(vec![Code::SlurmTemplate]));
    templates.overrides.insert(super::STAGE_TEMPLATE.to_owned(), "custom {{ qos }} {{ nodes }}\n".to_owned());
    let artifacts = emit_project(NODES, &policy, &templates).unwrap_or_default();
    assert_eq!(file(&artifacts, "slurm/plans/p/s.sbatch"), "custom p1 1\n");
}

#[test]
fn template_overrides_are_bounded_in_work_and_output() {
    let policy = format!("{POLICY}plan \"p\" team=\"vision\" {{ stage \"s\" tier=\"P1\" pool=\"all\" gpus=2 }}\n");
    let overridden = |source: &str| {
        let mut templates = SlurmTemplates::default();
        templates.overrides.insert(super::STAGE_TEMPLATE.to_owned(), source.to_owned());
        emit_project(NODES, &policy, &templates)
    };
    // Each rendered before: 4 million loop steps; a 100 MB string (9.6 GB with one more
    // digit of repeats); a 2 MB script.
    for source in [
        "{% for i in range(2000) %}{% for j in range(2000) %}x{% endfor %}{% endfor %}",
        "{{ \"x\" * 100000000 }}",
        "{{ \"x\" * 2000000 }}",
    ] {
        assert_eq!(overridden(source).map(|_| ()), Err(vec![Code::SlurmTemplateLimit]), "{source}");
    }
    // Recursion ends at minijinja's own limit, as a template error, without a crash.
    let recursive = "{% for i in [1] recursive %}{{ loop([1]) }}{% endfor %}";
    assert_eq!(overridden(recursive).map(|_| ()), Err(vec![Code::SlurmTemplate]));
    // Within the bounds, an override is free to do real work.
    let artifacts = overridden("{% for i in range(1000) %}#{{ i }}\n{% endfor %}{{ \"=\" * 100000 }}").unwrap_or_default();
    assert_eq!(
        file(&artifacts, "slurm/plans/p/s.sbatch").len(),
        100_000 + 1 + (0..1000).map(|i: u32| i.to_string().len() + 2).sum::<usize>()
    );
}

#[test]
fn durations_use_slurm_time_format() {
    assert_eq!(super::slurm_time(600), "00:10:00");
    assert_eq!(super::slurm_time(90_061), "1-01:01:01");
}

/// `count` copies of [`NODES`]'s node named `<prefix><n>`, in NVLink domain `domain` or none.
fn nodes(prefix: &str, count: usize, domain: Option<&str>) -> String {
    (1..=count)
        .map(|index| {
            // A chassis of its own: a chassis lies in one NVLink domain (E140).
            let node = NODES
                .replace("node \"n1\"", &format!("node \"{prefix}{index}\""))
                .replace("chassis=\"c1\"", &format!("chassis=\"c-{prefix}{index}\""));
            match domain {
                Some(domain) => node.replace("nvlink-domain=\"d1\"", &format!("nvlink-domain=\"{domain}\"")),
                None => node.replace(" nvlink-domain=\"d1\"", ""),
            }
        })
        .collect()
}

fn topology_24_11(nodes: &str) -> String {
    file(&emit_release("24.11", nodes, POLICY, &SlurmTemplates::default()).unwrap_or_default(), "slurm/topology.conf")
}

#[test]
fn blocks_of_24_11_have_the_smallest_domain_as_base_and_group_the_other_nodes() {
    let topology = topology_24_11(&(nodes("a", 3, Some("d1")) + &nodes("b", 4, Some("d2")) + &nodes("m", 4, None)));
    assert!(topology.contains("BlockName=nvlink_d1 Nodes=a1,a2,a3\nBlockName=nvlink_d2 Nodes=b1,b2,b3,b4\n"), "{topology}");
    // Four nodes without NVLink at base 3: the one left over joins the group, never a block below the base.
    assert!(topology.contains("BlockName=nonvlink_1 Nodes=m1,m2,m3,m4\nBlockSizes=3,6\n"), "{topology}");
}

#[test]
fn blocks_of_24_11_shrink_the_base_when_too_few_nodes_lack_nvlink() {
    let topology = topology_24_11(&(nodes("a", 4, Some("d1")) + &nodes("m", 2, None)));
    assert!(topology.contains("BlockName=nvlink_d1 Nodes=a1,a2,a3,a4\nBlockName=nonvlink_1 Nodes=m1,m2\nBlockSizes=2,4\n"), "{topology}");
    let topology = topology_24_11(&nodes("m", 3, None));
    assert!(
        topology.contains("BlockName=node_m1 Nodes=m1\nBlockName=node_m2 Nodes=m2\nBlockName=node_m3 Nodes=m3\nBlockSizes=1,2\n"),
        "{topology}"
    );
}

/// The codes of [`super::warnings`] for `nodes` under Slurm `version`.
fn warnings(version: &str, nodes: &str) -> Vec<String> {
    super::warnings(&load_release(version, nodes, POLICY))
        .iter()
        .map(|diagnostic| format!("{}: {}", diagnostic.code.id(), diagnostic.message))
        .collect()
}

#[test]
fn blocks_larger_than_the_base_are_a_warning_on_24_x_only() {
    let uneven = nodes("a", 3, Some("d1")) + &nodes("b", 4, Some("d2")) + &nodes("m", 4, None);
    assert_eq!(
        warnings("24.11", &uneven),
        ["placid::E045: Slurm 24.11 treats every block as 3 nodes, but nvlink_d2 (4 nodes), nonvlink_1 (4 nodes) hold more"]
    );
    assert_eq!(warnings("22.05", &uneven), Vec::<String>::new(), "22.05 uses a tree");
    assert_eq!(warnings("25.05", &uneven), Vec::<String>::new(), "25.05 blocks may differ in size");
    let even = nodes("a", 2, Some("d1")) + &nodes("b", 2, Some("d2")) + &nodes("m", 4, None);
    assert_eq!(warnings("24.05", &even), Vec::<String>::new());
}

#[test]
fn a_cost_center_whose_shares_overflow_slurm_fairshare_is_refused() {
    let mut model = load_release("22.05", NODES, POLICY).into_model();
    let mut team = model.teams[0].clone();
    team.share.value = 1_000_000;
    // Copies of one team: their account names collide too, so count only this code.
    let overflows = |model: &Checked| {
        super::validate::validate(model).iter().filter(|diagnostic| diagnostic.code == Code::SlurmFairshareOverflow).count()
    };
    model.teams = vec![team; 4_295];
    let model = checked(model);
    assert_eq!(overflows(&model), 1);
    let mut model = model.into_model();
    model.teams.truncate(4_294);
    let model = checked(model);
    assert_eq!(overflows(&model), 0, "4,294 x 1,000,000 fits 32 bits");
}

/// [`POLICY`] with a plan whose one stage has `stage_times` and tier P1 with `tier_times`.
fn timed_policy(tier_times: &str, stage_times: &str) -> String {
    POLICY.replace(r#"mode="requeue" }"#, &format!(r#"mode="requeue"; backfill #true; {tier_times} }}"#))
        + &format!("plan \"p\" team=\"vision\" {{\n    stage \"train\" tier=\"P1\" pool=\"all\" gpus=2 {stage_times}\n}}\n")
}

#[test]
fn run_times_reach_sbatch_the_qos_and_job_submit_lua() {
    let artifacts = emit_project(NODES, &timed_policy(r#"max-time "4d""#, r#"time="26h" max-time="30h""#), &SlurmTemplates::default())
        .unwrap_or_default();
    let stage = file(&artifacts, "slurm/plans/p/train.sbatch");
    assert!(stage.contains("#SBATCH --time=1-06:00:00\n#SBATCH --time-min=1-02:00:00\n"), "{stage}");
    let accounts = file(&artifacts, "slurm/accounts.sh");
    assert!(accounts.contains("MaxWall=4-00:00:00"), "{accounts}");
    // P0 declares no limit: the default three days, never an hour.
    assert!(
        accounts
            .contains("modify qos where name=p0 set Priority=1000 PreemptMode=cluster GraceTime=0 PreemptExemptTime=-1 MaxWall=3-00:00:00"),
        "{accounts}"
    );
    let lua = file(&artifacts, "slurm/job_submit.lua");
    assert!(lua.contains(r#"["p1"] = { requeue = 1, checkpoint = nil, max_minutes = 5760, partitions = "all" }"#), "{lua}");
    let conf = file(&artifacts, "slurm/slurm.conf");
    assert!(conf.contains("PartitionName=DEFAULT State=UP OverSubscribe=NO MaxTime=4-00:00:00\n"), "{conf}");
    assert!(!conf.contains("DefaultTime"), "{conf}");
}

#[test]
fn a_stage_without_a_run_time_gets_its_tiers_maximum_and_no_time_min() {
    let artifacts = emit_project(NODES, &timed_policy(r#"max-time "2d""#, ""), &SlurmTemplates::default()).unwrap_or_default();
    let stage = file(&artifacts, "slurm/plans/p/train.sbatch");
    assert!(stage.contains("#SBATCH --time=2-00:00:00\n#SBATCH --nodes"), "{stage}");
    // Only the expected time: it is the limit, so there is nothing for --time-min.
    let artifacts = emit_project(NODES, &timed_policy("", r#"time="26h""#), &SlurmTemplates::default()).unwrap_or_default();
    let stage = file(&artifacts, "slurm/plans/p/train.sbatch");
    assert!(stage.contains("#SBATCH --time=1-02:00:00\n#SBATCH --nodes"), "{stage}");
}

#[test]
fn the_site_keys_are_requirements_not_part_of_the_include() {
    let artifacts = emit_project(NODES, POLICY, &SlurmTemplates::default()).unwrap_or_default();
    let conf = file(&artifacts, "slurm/slurm.conf");
    for key in ["SchedulerParameters=", "DependencyParameters=", "SlurmctldParameters=", "JobSubmitPlugins="] {
        assert!(!conf.lines().any(|line| line.starts_with(key)), "the include sets {key}:\n{conf}");
    }
    let required = super::site::parse(&file(&artifacts, "slurm/site-requirements.conf"));
    let keys: Vec<&str> = required.iter().map(|requirement| requirement.key).collect();
    assert_eq!(keys, ["SchedulerParameters", "DependencyParameters", "SlurmctldParameters", "JobSubmitPlugins"]);
    assert!(required[0].items.contains(&"bf_window=4320".to_owned()), "{required:?}");
    // 22.05 and 24.11 read kill_invalid_depend only in DependencyParameters.
    assert_eq!(required[1].items, ["kill_invalid_depend"]);
    assert!(!required[0].items.iter().any(|item| item == "kill_invalid_depend"), "{required:?}");
}

#[test]
fn a_reserving_tier_is_capped_at_its_reservation_and_kept_off_other_and_spot_pools() {
    let nodes = NODES.to_owned()
        + &NODES.replace("\"n1\"", "\"n2\"").replace("d1", "d2").replace("c1", "c2").replace("capacity=\"reserved\"", "capacity=\"spot\"");
    let policy = POLICY.replace(r#"tier "P0" { priority 1000; preemption "never" }"#, r#"tier "P0" { priority 1000; preemption "never"; reserve pool="first" gpus=1 }"#)
        .replace(r#"pool "all" { select arch="riscv64" }"#, "pool \"all\" { select arch=\"riscv64\" }\npool \"first\" { select nvlink-domain=\"d1\" }\npool \"spot\" { select capacity=\"spot\" }\n")
        + "tier \"P00\" { priority 900; preemption \"never\" }\n";
    let policy = policy.replace(r#"tiers "P0" "P1""#, r#"tiers "P0" "P00" "P1""#);
    let artifacts = emit_project(&nodes, &policy, &SlurmTemplates::default()).unwrap_or_else(|codes| panic!("{codes:?}"));
    let conf = file(&artifacts, "slurm/slurm.conf");
    // P0 only where it reserves; the unreserved never-preempted P00 nowhere near spot nodes.
    assert!(conf.contains("PartitionName=all Nodes=n1,n2 AllowQos=p1 "), "{conf}");
    assert!(conf.contains("PartitionName=first Nodes=n1 AllowQos=p0,p1,p00 "), "{conf}");
    assert!(conf.contains("PartitionName=spot Nodes=n2 AllowQos=p1 "), "{conf}");
    // The reserved pool is never the default partition.
    assert!(conf.lines().filter(|line| line.ends_with("Default=YES")).all(|line| !line.starts_with("PartitionName=first ")), "{conf}");
    let accounts = file(&artifacts, "slurm/accounts.sh");
    assert!(
        accounts.contains("name=p0 set Priority=1000")
            && accounts.contains("MaxWall=3-00:00:00 Flags=DenyOnLimit GrpTRES=gres/gpu=1 GrpTRESMins=gres/gpu=-1\n"),
        "{accounts}"
    );
    assert!(
        accounts.contains("name=p1 set Priority=500") && accounts.contains("GrpTRES=gres/gpu=-1 GrpTRESMins=gres/gpu=-1\n"),
        "{accounts}"
    );
}

#[test]
fn a_route_becomes_each_teams_rule_in_job_submit_lua_and_keeps_the_comment() {
    let policy = POLICY.to_owned() + "team \"other\" { share 1; cost-center \"cc\"; tiers \"P1\" }\nroute tag=\"prod-sla\" tier=\"P0\"\n";
    let artifacts = emit_project(NODES, &policy, &SlurmTemplates::default()).unwrap_or_else(|codes| panic!("{codes:?}"));
    let lua = file(&artifacts, "slurm/job_submit.lua");
    assert!(lua.contains("  [\"prod-sla\"] = {\n    [\"vision\"] = { tier = \"p0\", class = nil },\n"), "{lua}");
    assert!(
        lua.contains("    [\"other\"] = { refuse = \"team other may not use tier P0, where tag prod-sla routes its jobs\" },\n"),
        "{lua}"
    );
    assert!(file(&artifacts, "slurm/slurm.conf").contains("AccountingStoreFlags=job_comment\n"));
    // Without routes, the comment is not stored.
    let plain = emit_project(NODES, POLICY, &SlurmTemplates::default()).unwrap_or_else(|codes| panic!("{codes:?}"));
    assert!(!file(&plain, "slurm/slurm.conf").contains("AccountingStoreFlags"));
}

#[test]
fn a_tier_budget_is_its_qos_limit_reset_daily() {
    // The only budget of the project is the tier's: it alone turns the daily reset on.
    let policy = POLICY.replace(r#"cost-center "cc" { budget daily=(usd)100 }"#, r#"cost-center "cc""#).replace(
        r#"tier "P1" { priority 500; preemption window="3m" mode="requeue" }"#,
        r#"tier "P1" { priority 500; preemption window="3m" mode="requeue"; budget daily=(usd)12.34 }"#,
    );
    let artifacts = emit_project(NODES, &policy, &SlurmTemplates::default()).unwrap_or_else(|codes| panic!("{codes:?}"));
    let accounts = file(&artifacts, "slurm/accounts.sh");
    let p1 = accounts.lines().find(|line| line.starts_with("modify qos where name=p1 ")).unwrap_or_default();
    // (usd)12.34 at the nodes' (usd)2.50 a GPU-hour: 1234 x 60 / 250 = 296 GPU-minutes.
    assert!(p1.ends_with(" GrpTRESMins=gres/gpu=296"), "{accounts}");
    let p0 = accounts.lines().find(|line| line.starts_with("modify qos where name=p0 ")).unwrap_or_default();
    assert!(p0.ends_with(" GrpTRESMins=gres/gpu=-1"), "{accounts}");
    let conf = file(&artifacts, "slurm/slurm.conf");
    assert!(conf.contains("PriorityUsageResetPeriod=DAILY\n"), "{conf}");
}

#[test]
fn a_pool_of_two_prices_is_two_partitions_and_their_names_may_not_collide() {
    let nodes =
        NODES.to_owned() + &NODES.replace("\"n1\"", "\"n2\"").replace("d1", "d2").replace("c1", "c2").replace("(usd)2.50", "(usd)1.00");
    let artifacts = emit_project(&nodes, POLICY, &SlurmTemplates::default()).unwrap_or_else(|codes| panic!("{codes:?}"));
    let conf = file(&artifacts, "slurm/slurm.conf");
    assert!(conf.contains("PartitionName=all_100 Nodes=n2 AllowQos=p0,p1 TRESBillingWeights=CPU=0,Mem=0,GRES/gpu=100"), "{conf}");
    assert!(conf.contains("PartitionName=all_250 Nodes=n1 AllowQos=p0,p1 TRESBillingWeights=CPU=0,Mem=0,GRES/gpu=250"), "{conf}");
    let lua = file(&artifacts, "slurm/job_submit.lua");
    assert!(lua.contains(r#"["all"] = "all_100,all_250","#), "{lua}");
    let colliding = POLICY.to_owned() + "pool \"all_250\" { select nvlink-domain=\"d1\" }\n";
    assert_eq!(emit_project(&nodes, &colliding, &SlurmTemplates::default()).err(), Some(vec![Code::SlurmNameCollision]));
}

#[test]
fn a_class_with_lanes_or_bisection_is_constrained_to_the_nodes_and_domains_that_have_them() {
    // n1 (domain d1): 18 links of 900GB/s per GPU pair, a bisection of 900GB/s; n2 (d2): 6
    // links of 300GB/s, a bisection of 300GB/s.
    let slow = NODES
        .replace("\"n1\"", "\"n2\"")
        .replace("\"d1\"", "\"d2\"")
        .replace("\"c1\"", "\"c2\"")
        .replace("links=18 bandwidth=\"900GB/s\"", "links=6 bandwidth=\"300GB/s\"");
    let policy = POLICY.to_owned()
        + "class \"wide\" { nvlink \"required\" lanes=12; locality \"any\" }\n\
           class \"bisected\" { nvlink \"required\" min-bisection=\"900GB/s\" lanes=6 }\n";
    let artifacts = emit_project(&(NODES.to_owned() + &slow), &policy, &SlurmTemplates::default()).unwrap_or_default();
    let conf = file(&artifacts, "slurm/slurm.conf");
    assert!(conf.contains("Features=riscv64,nvlink_d1,rack_r1,chassis_c1,capacity_reserved,lanes_6,lanes_12 "), "{conf}");
    assert!(conf.contains("Features=riscv64,nvlink_d2,rack_r1,chassis_c2,capacity_reserved,lanes_6 "), "{conf}");
    let lua = file(&artifacts, "slurm/job_submit.lua");
    assert!(lua.contains("[\"class_wide\"] = { constraint = \"lanes_12\" },"), "{lua}");
    assert!(lua.contains("[\"class_bisected\"] = { constraint = \"[nvlink_d1]&lanes_6\" },"), "{lua}");
}

/// A stage's script with `launch` set on the stage (the policy's text cannot express every
/// string the property below tries, so the launch is set on the loaded model).
fn stage_script(launch: placid_lang::model::Launch) -> String {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", PROJECT);
    world.insert("inventory/nodes.kdl", NODES);
    world.insert("policy/policy.kdl", timed_policy("", ""));
    let mut model = placid_lang::load(&world).model;
    model.plans[0].stages[0].launch = launch;
    let artifacts = emit_with(&checked(model), &SlurmTemplates::default()).unwrap_or_default();
    file(&artifacts, "slurm/plans/p/train.sbatch")
}

/// The `#SBATCH` lines of a script: what sbatch reads as options.
fn directives(script: &str) -> Vec<&str> {
    script.lines().filter(|line| line.starts_with("#SBATCH")).collect()
}

fn detached<T>(value: T) -> placid_lang::span::Spanned<T> {
    placid_lang::span::Spanned::new(value, placid_lang::span::Span::DETACHED)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever text a stage's command, variables and working directory hold (anything
    /// lowering lets through: no control characters), the script runs exactly that command
    /// with exactly those arguments, variables and directory in a real `sh`, and its `#SBATCH`
    /// options are those of a stage without them.
    #[test]
    fn a_stage_script_runs_its_command_word_for_word(
        args in proptest::collection::vec("[^\\x00-\\x1f\\x7f]{0,10}", 0..5),
        values in proptest::collection::vec("[^\\x00-\\x1f\\x7f]{0,10}", 2),
        directory in "[^\\x00-\\x1f\\x7f/]{1,10}",
    ) {
        let root = tempfile::tempdir().expect("tempdir");
        // `.` and `..` are directories already; the property is about the text, not them.
        let directory = if directory == "." || directory == ".." { format!("d{directory}") } else { directory };
        let workdir = root.path().join(&directory);
        std::fs::create_dir_all(&workdir).expect("the working directory");
        let mut command = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            r#"for arg in "$@"; do printf '[%s]\n' "$arg"; done; printf '<%s>\n' "$V0" "$V1"; pwd"#.to_owned(),
            "sh".to_owned(),
        ];
        command.extend(args.iter().cloned());
        let env = values
            .iter()
            .enumerate()
            .map(|(index, value)| placid_lang::model::EnvVar { name: detached(format!("V{index}")), value: value.clone() })
            .collect();
        let launch = placid_lang::model::Launch {
            command: Some(detached(command)),
            env,
            workdir: Some(detached(workdir.display().to_string())),
            ..placid_lang::model::Launch::default()
        };
        let script = stage_script(launch);
        let bare = stage_script(placid_lang::model::Launch::default());
        proptest::prop_assert_eq!(directives(&script), directives(&bare));
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("SLURM_SUBMIT_DIR", root.path())
            .env_remove("SLURM_ARRAY_TASK_ID")
            .output()
            .expect("sh runs");
        let mut expected: Vec<String> = args.iter().map(|arg| format!("[{arg}]")).collect();
        expected.extend(values.iter().map(|value| format!("<{value}>")));
        expected.push(workdir.display().to_string());
        let printed = String::from_utf8_lossy(&output.stdout).into_owned();
        proptest::prop_assert!(output.status.success(), "{}\n{script}", String::from_utf8_lossy(&output.stderr));
        proptest::prop_assert_eq!(printed.lines().collect::<Vec<_>>(), expected, "{}", script);
    }
}

#[test]
fn a_stage_without_a_command_runs_the_submitters_and_says_so() {
    let script = stage_script(placid_lang::model::Launch::default());
    assert!(script.contains(r#"exec "${PLACID_STAGE_COMMAND:?the stage names no command: set PLACID_STAGE_COMMAND}""#), "{script}");
    let declared = stage_script(placid_lang::model::Launch {
        command: Some(detached(vec!["train".to_owned(), "--lr".to_owned(), "0.1".to_owned()])),
        cpus: Some(detached(4)),
        memory: Some(detached(placid_lang::units::Bytes(3 << 29))),
        ..placid_lang::model::Launch::default()
    });
    assert!(declared.ends_with("exec train --lr 0.1\n"), "{declared}");
    assert!(!declared.contains("PLACID_STAGE_COMMAND"), "{declared}");
    assert!(declared.contains("#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=4\n#SBATCH --mem=1536M\n"), "{declared}");
}

#[test]
fn a_class_constraint_lists_its_domains_in_the_order_placement_tries_them() {
    // Domain d2 is cheaper than d1, though declared after it: Slurm takes the first feature
    // of a matching OR that fits, so d2 comes first, as the engine tries it first.
    let cheaper = NODES.replace("\"n1\"", "\"n2\"").replace("d1", "d2").replace("c1", "c2").replace("(usd)2.50", "(usd)1.50");
    let policy = POLICY.to_owned() + "class \"gang\" { nvlink \"required\" }\n";
    let artifacts = emit_project(&(NODES.to_owned() + &cheaper), &policy, &SlurmTemplates::default()).unwrap_or_default();
    let lua = file(&artifacts, "slurm/job_submit.lua");
    assert!(lua.contains("[\"class_gang\"] = { constraint = \"[nvlink_d2|nvlink_d1]\" },"), "{lua}");
}
