//! Describes each named element of a checked [`Model`] as an ordered list of fields with
//! their values as reviewers read them (ids resolved to names, units printed as written).
//!
//! Invariant: this is the only place that knows the shape of model elements for the diff; the
//! differ compares the descriptions generically. Every element is destructured whole (no
//! `..`), so a field added to the model does not compile until it is described here, or named
//! here as not the diff's (a span, a value derived from described ones).

use placid_lang::model::{
    Alert, ArgoSettings, Bound, Checkpoint, Class, CompatGate, Condition, CostCenter, Cpu, Expectation, ExtenderSettings, Filter, Gpu,
    KubernetesSettings, Launch, Locality, Metric, Mig, MigInstances, Migration, Model, Node, NumaNode, NvLink, Penalty, Phase, Plan,
    PolicyTest, Pool, Preemption, ProfileVerdict, Project, Promote, Reservation, Route, Score, Selector, SlurmSettings, Stage, Team,
    Telemetry, TestJob, Threshold, ThrottleRule, Tier, WasmSettings,
};
use placid_lang::units::Duration;

/// The kinds of named elements the semantic diff compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElementKind {
    /// The `project` node and its targets.
    Project,
    /// A priority tier.
    Tier,
    /// A cost center.
    CostCenter,
    /// A team.
    Team,
    /// A pool.
    Pool,
    /// A job class.
    Class,
    /// A scoring rule.
    Score,
    /// A route from a job tag to a tier.
    Route,
    /// A staged plan.
    Plan,
    /// A metric.
    Metric,
    /// A migration.
    Migration,
    /// An alert.
    Alert,
    /// A policy test.
    Test,
    /// A node of the inventory.
    Node,
}

impl ElementKind {
    /// The keyword of the element in policies.
    pub fn as_str(self) -> &'static str {
        match self {
            ElementKind::Project => "project",
            ElementKind::Tier => "tier",
            ElementKind::CostCenter => "cost-center",
            ElementKind::Team => "team",
            ElementKind::Pool => "pool",
            ElementKind::Class => "class",
            ElementKind::Score => "score",
            ElementKind::Route => "route",
            ElementKind::Plan => "plan",
            ElementKind::Metric => "metric",
            ElementKind::Migration => "migration",
            ElementKind::Alert => "alert",
            ElementKind::Test => "test",
            ElementKind::Node => "node",
        }
    }
}

/// One element: its kind, name and fields in a fixed order.
pub struct Described {
    /// What it is.
    pub kind: ElementKind,
    /// Its name.
    pub name: String,
    /// `(field, value)` pairs; a field absent from the model is absent here.
    pub fields: Vec<(FieldKey, String)>,
}

/// The name of a described field, as policies write it (`share`, `preemption`, `stage train`).
/// Rules that single out one field, like the danger of a preemption change, compare keys
/// against the constants here, so a renamed field cannot silently stop a rule from firing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct FieldKey(std::borrow::Cow<'static, str>);

impl FieldKey {
    /// A tier's preemption (`never`, `window 3m, requeue`).
    pub const PREEMPTION: FieldKey = FieldKey::keyword("preemption");
    /// A tier's checkpoint cadence (`every 30m, incremental`).
    pub const CHECKPOINT: FieldKey = FieldKey::keyword("checkpoint");
    /// A tier's reservations (`12 GPUs in nvl-a`).
    pub const RESERVE: FieldKey = FieldKey::keyword("reserve");
    /// A daily budget of a tier, cost center or team (`(usd)4000.00/day`).
    pub const BUDGET: FieldKey = FieldKey::keyword("budget");

    /// A field named by a keyword of the language.
    const fn keyword(name: &'static str) -> FieldKey {
        FieldKey(std::borrow::Cow::Borrowed(name))
    }

    /// A field for one named part of an element (`stage train`, `filter gpus`).
    fn part(keyword: &str, name: &str) -> FieldKey {
        FieldKey(std::borrow::Cow::Owned(format!("{keyword} {name}")))
    }

    /// The name as policies write it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&'static str> for FieldKey {
    fn from(keyword: &'static str) -> FieldKey {
        FieldKey::keyword(keyword)
    }
}

impl std::fmt::Display for FieldKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// Every named element of `model`, in kind order, then model order. The model is destructured
/// whole, as is every element below: a field added to the model does not compile until it is
/// described here (or said here to be derived from what is).
pub fn describe(model: &Model) -> Vec<Described> {
    let Model {
        project: _,
        nodes,
        // Domains and racks are the nodes' `nvlink-domain` and `rack`, described per node.
        domains: _,
        racks: _,
        pools,
        tiers,
        cost_centers,
        teams,
        classes,
        scores,
        plans,
        metrics,
        migrations,
        alerts,
        tests,
        // The project's fields, with the telemetry block.
        admin_accounts: _,
        routes,
        telemetry: _,
    } = model;
    let mut elements = vec![project(model)];
    elements.extend(tiers.iter().map(|tier| self::tier(model, tier)));
    elements.extend(cost_centers.iter().map(cost_center));
    elements.extend(teams.iter().map(|team| self::team(model, team)));
    elements.extend(pools.iter().map(|pool| self::pool(model, pool)));
    elements.extend(classes.iter().map(class));
    elements.extend(scores.iter().map(score));
    elements.extend(routes.iter().map(|route| self::route(model, route)));
    elements.extend(plans.iter().map(|plan| self::plan(model, plan)));
    elements.extend(metrics.iter().map(metric));
    elements.extend(migrations.iter().map(|migration| self::migration(model, migration)));
    elements.extend(alerts.iter().map(|alert| self::alert(model, alert)));
    elements.extend(tests.iter().map(|test| self::test(model, test)));
    elements.extend(nodes.iter().map(|node| self::node(model, node)));
    elements
}

/// Collects fields, skipping the ones a model element does not have.
struct Fields(Vec<(FieldKey, String)>);

impl Fields {
    fn new() -> Fields {
        Fields(Vec::new())
    }
    fn set(&mut self, field: impl Into<FieldKey>, value: impl ToString) -> &mut Fields {
        self.0.push((field.into(), value.to_string()));
        self
    }
    fn maybe(&mut self, field: impl Into<FieldKey>, value: Option<impl ToString>) -> &mut Fields {
        if let Some(value) = value {
            self.set(field, value);
        }
        self
    }
    fn list(&mut self, field: impl Into<FieldKey>, values: impl IntoIterator<Item = String>) -> &mut Fields {
        let joined: Vec<String> = values.into_iter().collect();
        if !joined.is_empty() {
            self.set(field, joined.join(", "));
        }
        self
    }
    fn done(&mut self, kind: ElementKind, name: impl ToString) -> Described {
        Described { kind, name: name.to_string(), fields: std::mem::take(&mut self.0) }
    }
}

fn project(model: &Model) -> Described {
    let Project { name, span: _, currency, runbooks, slurm, kubernetes, wasm } = &model.project;
    let mut fields = Fields::new();
    fields.set("currency", currency.code()).maybe("runbooks", runbooks.as_ref());
    if let Some(SlurmSettings { span: _, version, cluster, accounting, templates }) = slurm {
        let mut text = format!("version={version} cluster={cluster} accounting={accounting}");
        if let Some(templates) = templates {
            text.push_str(&format!(" templates={}", templates.value));
        }
        fields.set("slurm", text);
    }
    if let Some(KubernetesSettings { span: _, minor_version, label_prefix, namespace, argo, extender, steps_image }) = kubernetes {
        let mut text = format!("version=1.{minor_version} label-prefix={} namespace={namespace}", label_prefix.value);
        if let Some(image) = steps_image {
            text.push_str(&format!(" steps-image={}", image.value));
        }
        fields.set("kubernetes", text);
        if let Some(ArgoSettings { repo, path, revision, namespace }) = argo {
            fields.set("argo", format!("repo={} path={} revision={} namespace={namespace}", repo.value, path.value, revision.value));
        }
        if let Some(ExtenderSettings { span: _, image, score, score_name, replicas, ignorable, prometheus }) = extender {
            let mut text = format!("image={} replicas={replicas} ignorable={ignorable}", image.value);
            // The score resolves to `score`; a name the policy does not declare stays a name.
            match (score, score_name) {
                (Some(score), _) => text.push_str(&format!(" score={}", model.score(score.value).name)),
                (None, Some(name)) => text.push_str(&format!(" score={}", name.value)),
                (None, None) => {}
            }
            if let Some(prometheus) = prometheus {
                text.push_str(&format!(" prometheus={}", prometheus.value));
            }
            fields.set("extender", text);
        }
    }
    if let Some(WasmSettings { span: _ }) = wasm {
        fields.set("wasm", "enabled");
    }
    fields.list("admin-accounts", model.admin_accounts.iter().map(|account| account.value.to_string()));
    if let Some(Telemetry { span: _, node_query, domain_query, half_life_seconds, max_age_seconds, ttl_seconds, throttle }) =
        &model.telemetry
    {
        let seconds = |seconds: &u64| Duration { seconds: *seconds };
        let mut text =
            format!("half-life={} max-age={} ttl={}", seconds(half_life_seconds), seconds(max_age_seconds), seconds(ttl_seconds));
        if let Some(query) = node_query {
            text.push_str(&format!(" node-query={:?}", query.value));
        }
        if let Some(query) = domain_query {
            text.push_str(&format!(" domain-query={:?}", query.value));
        }
        if let Some(ThrottleRule { span: _, threshold, hold_seconds, comm }) = throttle {
            text.push_str(&format!(" throttle domain-nvlink-above={threshold} for={} comm={}", seconds(hold_seconds), comm.as_str()));
        }
        fields.set("telemetry", text);
    }
    fields.done(ElementKind::Project, name)
}

/// A tier's preemption as one phrase (`never`, `window 3m, requeue`).
pub fn preemption_text(preemption: Preemption) -> String {
    match preemption {
        Preemption::Never => "never".into(),
        Preemption::Window { window, mode } => format!("window {window}, {}", mode.as_str()),
    }
}

fn tier(model: &Model, tier: &Tier) -> Described {
    let Tier {
        name,
        span: _,
        priority,
        preemption,
        exempt,
        checkpoint,
        backfill,
        backfill_span: _,
        reservations,
        cost_center,
        daily_budget,
        max_time,
        recovered: _,
    } = tier;
    Fields::new()
        .set("priority", priority.value)
        .set(FieldKey::PREEMPTION, preemption_text(preemption.value))
        .maybe("exempt", *exempt)
        .maybe(
            FieldKey::CHECKPOINT,
            checkpoint.map(
                |Checkpoint { every, incremental }| {
                    if incremental { format!("every {every}, incremental") } else { format!("every {every}") }
                },
            ),
        )
        .set("backfill", backfill)
        .list(
            FieldKey::RESERVE,
            reservations.iter().map(|Reservation { span: _, pool, gpus }| format!("{gpus} GPUs in {}", model.pool(*pool).name)),
        )
        .maybe("cost-center", cost_center.as_ref().map(|center| &model.cost_center(center.value).name))
        .maybe(FieldKey::BUDGET, daily_budget.as_ref().map(|budget| format!("{}/day", budget.value)))
        .maybe("max-time", max_time.as_ref().map(|max_time| max_time.value))
        .done(ElementKind::Tier, name)
}

fn cost_center(center: &CostCenter) -> Described {
    let CostCenter { name, span: _, daily_budget } = center;
    Fields::new()
        .maybe(FieldKey::BUDGET, daily_budget.as_ref().map(|budget| format!("{}/day", budget.value)))
        .done(ElementKind::CostCenter, name)
}

fn team(model: &Model, team: &Team) -> Described {
    let Team { name, span: _, share, cost_center, tiers, daily_budget, namespace, account, recovered: _ } = team;
    Fields::new()
        .set("share", share.value)
        .set("cost-center", &model.cost_center(cost_center.value).name)
        .list("tiers", tiers.iter().map(|tier| model.tier(tier.value).name.to_string()))
        .maybe(FieldKey::BUDGET, daily_budget.as_ref().map(|budget| format!("{}/day", budget.value)))
        .set("namespace", namespace)
        .set("account", account)
        .done(ElementKind::Team, name)
}

/// A route: jobs tagged `tag` run at its tier (and class).
fn route(model: &Model, route: &Route) -> Described {
    let Route { span: _, tag, tier, class } = route;
    Fields::new()
        .set("tier", &model.tier(tier.value).name)
        .maybe("class", class.as_ref().map(|class| &model.class(class.value).name))
        .done(ElementKind::Route, &tag.value)
}

fn selector_text(model: &Model, selector: &Selector) -> String {
    let Selector { span: _, arch, domain, rack, chassis, capacity, gpu_model, labels } = selector;
    let mut parts = Vec::new();
    if let Some(arch) = arch {
        parts.push(format!("arch={}", arch.as_str()));
    }
    if let Some(domain) = domain {
        parts.push(format!("nvlink-domain={}", model.domain(*domain).name));
    }
    if let Some(rack) = rack {
        parts.push(format!("rack={}", rack.value));
    }
    if let Some(chassis) = chassis {
        parts.push(format!("chassis={}", chassis.value));
    }
    if let Some(capacity) = capacity {
        parts.push(format!("capacity={}", capacity.as_str()));
    }
    if let Some(model_name) = gpu_model {
        parts.push(format!("gpu-model={}", model_name.value));
    }
    parts.extend(labels.iter().map(|(key, value)| format!("{key}={value}")));
    parts.join(" ")
}

fn pool(model: &Model, pool: &Pool) -> Described {
    let Pool { name, span: _, selectors, nodes, gpus, recovered: _ } = pool;
    Fields::new()
        .list("select", selectors.iter().map(|selector| selector_text(model, selector)))
        .set("nodes", nodes.len())
        .set("gpus", gpus)
        .done(ElementKind::Pool, name)
}

fn class(class: &Class) -> Described {
    let Class { name, span: _, nvlink, min_bandwidth, lanes, min_bisection, locality, comm, mig, launch, platforms, recovered: _ } = class;
    let locality: Locality = *locality;
    Fields::new()
        .set("nvlink", nvlink.as_str())
        .maybe("min-bandwidth", *min_bandwidth)
        .maybe("lanes", lanes.as_ref().map(|lanes| lanes.value))
        .maybe("min-bisection", min_bisection.as_ref().map(|bisection| bisection.value))
        .set("locality", locality.as_str())
        .set("comm", comm.as_str())
        .maybe("mig", mig.as_ref().map(|mig| &mig.value))
        .list("platforms", platforms.iter().map(|arch| arch.oci_platform().to_owned()))
        .maybe("runs", Some(launch_text(launch)).filter(|text| !text.is_empty()))
        .done(ElementKind::Class, name)
}

fn score(score: &Score) -> Described {
    let Score { name, span: _, direction, expr, filters, penalties } = score;
    let mut fields = Fields::new();
    fields.set("prefer", direction.as_str()).set("expr", &expr.text);
    for Filter { name, expr } in filters {
        fields.set(FieldKey::part("filter", name.as_str()), &expr.text);
    }
    fields.list("penalties", penalties.iter().map(|Penalty { span: _, amount, when }| format!("{amount} when {}", when.text)));
    fields.done(ElementKind::Score, name)
}

fn stage_text(model: &Model, plan: &Plan, stage: &Stage) -> String {
    let Stage { name: _, span: _, tier, class, pool, gpus, trials, capacity, after, promote, score, time, max_time, launch } = stage;
    let mut text = format!("tier={} pool={} gpus={}", model.tier(tier.value).name, model.pool(pool.value).name, gpus.value);
    if let Some(class) = class {
        text.push_str(&format!(" class={}", model.class(class.value).name));
    }
    if *trials != 1 {
        text.push_str(&format!(" trials={trials}"));
    }
    if let Some(capacity) = capacity {
        text.push_str(&format!(" capacity={}", capacity.as_str()));
    }
    let after: Vec<String> =
        after.iter().filter_map(|index| plan.stages.get(index.value)).map(|earlier| earlier.name.to_string()).collect();
    if !after.is_empty() {
        text.push_str(&format!(" after={}", after.join(",")));
    }
    if let Some(score) = score {
        text.push_str(&format!(" score={}", model.score(score.value).name));
    }
    if let Some(Promote { span: _, top, by, order }) = promote {
        text.push_str(&format!(" promote=top {top} by {by} ({})", order.as_str()));
    }
    if let Some(time) = time {
        text.push_str(&format!(" time={}", time.value));
    }
    if let Some(max_time) = max_time {
        text.push_str(&format!(" max-time={}", max_time.value));
    }
    let launch = launch_text(launch);
    if !launch.is_empty() {
        text.push(' ');
        text.push_str(&launch);
    }
    text
}

/// What a stage or class runs, as `key=value` words; empty when it says nothing. Destructured
/// whole, so a field added to [`Launch`] does not compile until it is described here.
fn launch_text(launch: &Launch) -> String {
    let Launch { command, image, env, cpus, memory, workdir } = launch;
    let mut words = Vec::new();
    if let Some(command) = command {
        words.push(format!("command={:?}", command.value));
    }
    if let Some(image) = image {
        words.push(format!("image={}", image.value));
    }
    for variable in env {
        words.push(format!("env.{}={:?}", variable.name.value, variable.value));
    }
    if let Some(cpus) = cpus {
        words.push(format!("cpus={}", cpus.value));
    }
    if let Some(memory) = memory {
        words.push(format!("memory={}", memory.value));
    }
    if let Some(workdir) = workdir {
        words.push(format!("workdir={:?}", workdir.value));
    }
    words.join(" ")
}

fn plan(model: &Model, plan: &Plan) -> Described {
    let Plan { name, span: _, team, stages, recovered: _ } = plan;
    let mut fields = Fields::new();
    fields.set("team", &model.team(team.value).name);
    for stage in stages {
        fields.set(FieldKey::part("stage", stage.name.as_str()), stage_text(model, plan, stage));
    }
    fields.done(ElementKind::Plan, name)
}

fn metric(metric: &Metric) -> Described {
    let Metric { name, span: _, query } = metric;
    Fields::new().set("query", &query.value).done(ElementKind::Metric, name)
}

fn condition_text(model: &Model, condition: &Condition) -> String {
    let Condition { span: _, metric, bound, threshold, duration } = condition;
    let bound = match bound {
        Bound::AtLeast => ">=",
        Bound::AtMost => "<=",
    };
    let threshold = match threshold {
        Threshold::Value(value) => value.to_string(),
        Threshold::Percent(percent) => percent.to_string(),
        Threshold::OfBaseline(percent) => format!("{percent} of baseline"),
    };
    let mut text = format!("{} {bound} {threshold}", model.metric(metric.value).name);
    if let Some(duration) = duration {
        text.push_str(&format!(" for {duration}"));
    }
    text
}

fn migration(model: &Model, migration: &Migration) -> Described {
    let Migration { name, span: _, from, to, classes, services, service_namespace, compatibility, acceptance, phases, rollback } =
        migration;
    let gate = |gate: &CompatGate| match gate {
        CompatGate::ImagePlatform(arch) => format!("image-platform {}", arch.value.oci_platform()),
        CompatGate::BinaryAudit(_) => "binary-audit".to_owned(),
        CompatGate::MinDriver(version) => format!("min-driver {}", version.value),
        CompatGate::MinKernel(version) => format!("min-kernel {}", version.value),
    };
    Fields::new()
        .set("from", &model.pool(from.value).name)
        .set("to", &model.pool(to.value).name)
        .list("classes", classes.iter().map(|class| model.class(class.value).name.to_string()))
        .list("services", services.iter().map(|service| service.value.to_string()))
        .maybe("service-namespace", service_namespace.as_ref().map(|namespace| &namespace.value))
        .list("compatibility", compatibility.iter().map(gate))
        .list("acceptance", acceptance.iter().map(|condition| condition_text(model, condition)))
        .list(
            "phases",
            phases.iter().map(|Phase { span: _, kind, weight, hold }| match weight {
                Some(weight) => format!("{} {weight} hold {hold}", kind.as_str()),
                None => format!("{} hold {hold}", kind.as_str()),
            }),
        )
        .list("rollback", rollback.iter().map(|condition| condition_text(model, condition)))
        .done(ElementKind::Migration, name)
}

fn alert(model: &Model, alert: &Alert) -> Described {
    let Alert { name, span: _, condition, severity } = alert;
    Fields::new().set("when", condition_text(model, condition)).set("severity", severity.as_str()).done(ElementKind::Alert, name)
}

fn test(model: &Model, test: &PolicyTest) -> Described {
    let PolicyTest { name, span: _, jobs, at, expects } = test;
    // One job and one expectation read as they always did; more are joined with "; ".
    let jobs: Vec<String> = jobs.iter().map(|job| test_job(model, job)).collect();
    let expects: Vec<String> = expects.iter().map(|expect| expectation(model, test, expect)).collect();
    Fields::new()
        .set("job", jobs.join("; "))
        .set("expect", expects.join("; "))
        .maybe("at", at.map(|at| format!("{}s", at.seconds)))
        .done(ElementKind::Test, name)
}

fn test_job(model: &Model, job: &TestJob) -> String {
    let TestJob { span: _, name, running, team, tier, class, gpus, pool, nodes, at, run, tag } = job;
    let mut text = String::new();
    if *running {
        text.push_str("running ");
    }
    if let Some(name) = name {
        text.push_str(&format!("{} ", name.value));
    }
    text.push_str(&format!("team={} tier={} gpus={gpus}", model.team(team.value).name, model.tier(tier.value).name));
    if let Some(class) = class {
        text.push_str(&format!(" class={}", model.class(class.value).name));
    }
    if let Some(pool) = pool {
        text.push_str(&format!(" pool={}", model.pool(pool.value).name));
    }
    for node in nodes {
        text.push_str(&format!(" node={}", model.node(node.value).name));
    }
    if let Some(at) = at {
        text.push_str(&format!(" at={}s", at.seconds));
    }
    if let Some(run) = run {
        text.push_str(&format!(" run={}s", run.seconds));
    }
    if let Some(tag) = tag {
        text.push_str(&format!(" tag={}", tag.value));
    }
    text
}

/// An expectation as `placid test` words it, after its job's name when the test submits several.
fn expectation(model: &Model, test: &PolicyTest, expect: &Expectation) -> String {
    let text = test.expected(model, expect);
    if test.jobs.iter().filter(|job| !job.running).count() > 1 { format!("{}: {text}", test.job_name(expect.job)) } else { text }
}

fn node(model: &Model, node: &Node) -> Described {
    let Node { name, span: _, arch, rack, chassis, domain, capacity, cost_per_gpu_hour, cost_per_egress_tb, cpu, memory, gpus, labels } =
        node;
    let gpu_count = match node.gpu_model() {
        Some(gpu_model) => format!("{} x {gpu_model}", node.gpu_count()),
        None => node.gpu_count().to_string(),
    };
    Fields::new()
        .set("arch", arch.as_str())
        .maybe("rack", rack.map(|rack| &model.rack(rack).name))
        .maybe("chassis", chassis.as_ref())
        .maybe("nvlink-domain", domain.map(|domain| &model.domain(domain).name))
        .set("capacity", capacity.as_str())
        .maybe("cost", cost_per_gpu_hour.map(|cost| format!("{cost}/gpu-hour")))
        .maybe("egress", cost_per_egress_tb.map(|cost| format!("{cost}/TB")))
        .set("cpu", cpu_text(cpu))
        .maybe("memory", *memory)
        .set("gpus", gpu_count)
        .list("gpu", gpus.iter().map(gpu_text))
        .list("labels", labels.iter().map(|(key, value)| format!("{key}={value}")))
        .done(ElementKind::Node, name)
}

/// A node's CPU as the inventory states it (probed figures included, so a re-probe that
/// finds another CPU shows).
fn cpu_text(cpu: &Cpu) -> String {
    let Cpu { harts, cores, sockets, isa, numa_nodes, model, vector, profiles, numa } = cpu;
    let mut text = format!("harts={harts} numa-nodes={numa_nodes}");
    if let Some(cores) = cores {
        text.push_str(&format!(" cores={cores}"));
    }
    if let Some(sockets) = sockets {
        text.push_str(&format!(" sockets={sockets}"));
    }
    if let Some(isa) = isa {
        text.push_str(&format!(" isa={isa}"));
    }
    if let Some(model) = model {
        text.push_str(&format!(" model={model:?}"));
    }
    if let Some(vector) = vector {
        text.push_str(&format!(" vector={}", vector.as_str()));
    }
    for profile in profiles {
        let ProfileVerdict { profile: name, missing: _, unverifiable: _ } = profile;
        text.push_str(&format!(" {name}={}", profile.verdict().as_str()));
    }
    for NumaNode { id, cpus, memory } in numa {
        text.push_str(&format!(" numa{id}=[{cpus}]"));
        if let Some(memory) = memory {
            text.push_str(&format!("/{memory}"));
        }
    }
    text
}

/// One GPU of a node: its index, model, memory, MIG and NVLink peers.
fn gpu_text(gpu: &Gpu) -> String {
    let Gpu { index, span: _, model, memory, uuid, pci_bus_id, numa, mig, links } = gpu;
    let mut text = format!("{index} {model}");
    if let Some(memory) = memory {
        text.push_str(&format!(" memory={memory}"));
    }
    if let Some(uuid) = uuid {
        text.push_str(&format!(" uuid={uuid}"));
    }
    if let Some(bus) = pci_bus_id {
        text.push_str(&format!(" pci={bus}"));
    }
    if let Some(numa) = numa {
        text.push_str(&format!(" numa={numa}"));
    }
    if let Mig::Enabled { instances } = mig {
        let instances: Vec<String> = instances.iter().map(|MigInstances { profile, count }| format!("{count} x {profile}")).collect();
        text.push_str(&format!(" mig={}", instances.join("+")));
    }
    for NvLink { peer, links, bandwidth, span: _ } in links {
        text.push_str(&format!(" nvlink->{peer}={links}x{bandwidth}"));
    }
    text
}
