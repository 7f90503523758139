//! Describes each named element of a checked [`Model`] as an ordered list of fields with
//! their values as reviewers read them (ids resolved to names, units printed as written).
//!
//! Invariant: this is the only place that knows the shape of model elements for the diff; the
//! differ compares the descriptions generically, so a field added to the model is reported by
//! adding one line here.

use placid_lang::model::{
    Alert, Bound, Class, CompatGate, Condition, CostCenter, Launch, Locality, Metric, Migration, Model, Node, Plan, Pool, Preemption,
    Score, Selector, Stage, Team, Threshold, Tier,
};

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

/// Every named element of `model`, in kind order, then model order.
pub fn describe(model: &Model) -> Vec<Described> {
    let mut elements = vec![project(model)];
    elements.extend(model.tiers.iter().map(|tier| self::tier(model, tier)));
    elements.extend(model.cost_centers.iter().map(cost_center));
    elements.extend(model.teams.iter().map(|team| self::team(model, team)));
    elements.extend(model.pools.iter().map(|pool| self::pool(model, pool)));
    elements.extend(model.classes.iter().map(class));
    elements.extend(model.scores.iter().map(score));
    elements.extend(model.plans.iter().map(|plan| self::plan(model, plan)));
    elements.extend(model.metrics.iter().map(metric));
    elements.extend(model.migrations.iter().map(|migration| self::migration(model, migration)));
    elements.extend(model.alerts.iter().map(|alert| self::alert(model, alert)));
    elements.extend(model.tests.iter().map(|test| self::test(model, test)));
    elements.extend(model.nodes.iter().map(|node| self::node(model, node)));
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
    let project = &model.project;
    Fields::new()
        .set("currency", project.currency.code())
        .maybe("slurm", project.slurm.as_ref().map(|slurm| format!("version={} cluster={}", slurm.version, slurm.cluster)))
        .maybe(
            "kubernetes",
            project.kubernetes.as_ref().map(|kubernetes| {
                format!(
                    "version=1.{} label-prefix={} namespace={}",
                    kubernetes.minor_version, kubernetes.label_prefix.value, kubernetes.namespace
                )
            }),
        )
        .maybe(
            "argo",
            project
                .kubernetes
                .as_ref()
                .and_then(|kubernetes| kubernetes.argo.as_ref())
                .map(|argo| format!("repo={} path={} revision={}", argo.repo.value, argo.path.value, argo.revision.value)),
        )
        .maybe("wasm", project.wasm.as_ref().map(|_| "enabled"))
        .done(ElementKind::Project, &project.name)
}

/// A tier's preemption as one phrase (`never`, `window 3m, requeue`).
pub fn preemption_text(preemption: Preemption) -> String {
    match preemption {
        Preemption::Never => "never".into(),
        Preemption::Window { window, mode } => format!("window {window}, {}", mode.as_str()),
    }
}

fn tier(model: &Model, tier: &Tier) -> Described {
    Fields::new()
        .set("priority", tier.priority.value)
        .set(FieldKey::PREEMPTION, preemption_text(tier.preemption.value))
        .maybe("exempt", tier.exempt)
        .maybe(
            "checkpoint",
            tier.checkpoint.map(|checkpoint| {
                if checkpoint.incremental {
                    format!("every {}, incremental", checkpoint.every)
                } else {
                    format!("every {}", checkpoint.every)
                }
            }),
        )
        .set("backfill", tier.backfill)
        .list(
            "reserve",
            tier.reservations.iter().map(|reservation| format!("{} GPUs in {}", reservation.gpus, model.pool(reservation.pool).name)),
        )
        .maybe("cost-center", tier.cost_center.as_ref().map(|center| &model.cost_center(center.value).name))
        .maybe("budget", tier.daily_budget.as_ref().map(|budget| format!("{}/day", budget.value)))
        .done(ElementKind::Tier, &tier.name)
}

fn cost_center(center: &CostCenter) -> Described {
    Fields::new()
        .maybe("budget", center.daily_budget.as_ref().map(|budget| format!("{}/day", budget.value)))
        .done(ElementKind::CostCenter, &center.name)
}

fn team(model: &Model, team: &Team) -> Described {
    Fields::new()
        .set("share", team.share.value)
        .set("cost-center", &model.cost_center(team.cost_center.value).name)
        .list("tiers", team.tiers.iter().map(|tier| model.tier(tier.value).name.to_string()))
        .maybe("budget", team.daily_budget.as_ref().map(|budget| format!("{}/day", budget.value)))
        .set("namespace", &team.namespace)
        .set("account", &team.account)
        .done(ElementKind::Team, &team.name)
}

fn selector_text(model: &Model, selector: &Selector) -> String {
    let mut parts = Vec::new();
    if let Some(arch) = selector.arch {
        parts.push(format!("arch={}", arch.as_str()));
    }
    if let Some(domain) = selector.domain {
        parts.push(format!("nvlink-domain={}", model.domain(domain).name));
    }
    if let Some(rack) = &selector.rack {
        parts.push(format!("rack={}", rack.value));
    }
    if let Some(chassis) = &selector.chassis {
        parts.push(format!("chassis={}", chassis.value));
    }
    if let Some(capacity) = selector.capacity {
        parts.push(format!("capacity={}", capacity.as_str()));
    }
    if let Some(model_name) = &selector.gpu_model {
        parts.push(format!("gpu-model={}", model_name.value));
    }
    parts.extend(selector.labels.iter().map(|(key, value)| format!("{key}={value}")));
    parts.join(" ")
}

fn pool(model: &Model, pool: &Pool) -> Described {
    Fields::new()
        .list("select", pool.selectors.iter().map(|selector| selector_text(model, selector)))
        .set("nodes", pool.nodes.len())
        .set("gpus", pool.gpus)
        .done(ElementKind::Pool, &pool.name)
}

fn class(class: &Class) -> Described {
    let locality: Locality = class.locality;
    Fields::new()
        .set("nvlink", class.nvlink.as_str())
        .maybe("min-bandwidth", class.min_bandwidth)
        .maybe("lanes", class.lanes.as_ref().map(|lanes| lanes.value))
        .maybe("min-bisection", class.min_bisection.as_ref().map(|bisection| bisection.value))
        .set("locality", locality.as_str())
        .set("comm", class.comm.as_str())
        .maybe("mig", class.mig.as_ref().map(|mig| &mig.value))
        .list("platforms", class.platforms.iter().map(|arch| arch.oci_platform().to_owned()))
        .maybe("runs", Some(launch_text(&class.launch)).filter(|text| !text.is_empty()))
        .done(ElementKind::Class, &class.name)
}

fn score(score: &Score) -> Described {
    let mut fields = Fields::new();
    fields.set("prefer", score.direction.as_str()).set("expr", &score.expr.text);
    for filter in &score.filters {
        fields.set(FieldKey::part("filter", filter.name.as_str()), &filter.expr.text);
    }
    fields.list("penalties", score.penalties.iter().map(|penalty| format!("{} when {}", penalty.amount, penalty.when.text)));
    fields.done(ElementKind::Score, &score.name)
}

fn stage_text(model: &Model, plan: &Plan, stage: &Stage) -> String {
    let mut text =
        format!("tier={} pool={} gpus={}", model.tier(stage.tier.value).name, model.pool(stage.pool.value).name, stage.gpus.value);
    if let Some(class) = &stage.class {
        text.push_str(&format!(" class={}", model.class(class.value).name));
    }
    if stage.trials != 1 {
        text.push_str(&format!(" trials={}", stage.trials));
    }
    if let Some(capacity) = stage.capacity {
        text.push_str(&format!(" capacity={}", capacity.as_str()));
    }
    let after: Vec<String> =
        stage.after.iter().filter_map(|index| plan.stages.get(index.value)).map(|earlier| earlier.name.to_string()).collect();
    if !after.is_empty() {
        text.push_str(&format!(" after={}", after.join(",")));
    }
    if let Some(score) = &stage.score {
        text.push_str(&format!(" score={}", model.score(score.value).name));
    }
    if let Some(promote) = &stage.promote {
        text.push_str(&format!(" promote=top {} by {} ({})", promote.top, promote.by, promote.order.as_str()));
    }
    let launch = launch_text(&stage.launch);
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
    let mut fields = Fields::new();
    fields.set("team", &model.team(plan.team.value).name);
    for stage in &plan.stages {
        fields.set(FieldKey::part("stage", stage.name.as_str()), stage_text(model, plan, stage));
    }
    fields.done(ElementKind::Plan, &plan.name)
}

fn metric(metric: &Metric) -> Described {
    Fields::new().set("query", &metric.query.value).done(ElementKind::Metric, &metric.name)
}

fn condition_text(model: &Model, condition: &Condition) -> String {
    let bound = match condition.bound {
        Bound::AtLeast => ">=",
        Bound::AtMost => "<=",
    };
    let threshold = match condition.threshold {
        Threshold::Value(value) => value.to_string(),
        Threshold::Percent(percent) => percent.to_string(),
        Threshold::OfBaseline(percent) => format!("{percent} of baseline"),
    };
    let mut text = format!("{} {bound} {threshold}", model.metric(condition.metric.value).name);
    if let Some(duration) = condition.duration {
        text.push_str(&format!(" for {duration}"));
    }
    text
}

fn migration(model: &Model, migration: &Migration) -> Described {
    let gate = |gate: &CompatGate| match gate {
        CompatGate::ImagePlatform(arch) => format!("image-platform {}", arch.value.oci_platform()),
        CompatGate::BinaryAudit(_) => "binary-audit".to_owned(),
        CompatGate::MinDriver(version) => format!("min-driver {}", version.value),
        CompatGate::MinKernel(version) => format!("min-kernel {}", version.value),
    };
    Fields::new()
        .set("from", &model.pool(migration.from.value).name)
        .set("to", &model.pool(migration.to.value).name)
        .list("classes", migration.classes.iter().map(|class| model.class(class.value).name.to_string()))
        .list("services", migration.services.iter().map(|service| service.value.to_string()))
        .list("compatibility", migration.compatibility.iter().map(gate))
        .list("acceptance", migration.acceptance.iter().map(|condition| condition_text(model, condition)))
        .list(
            "phases",
            migration.phases.iter().map(|phase| match phase.weight {
                Some(weight) => format!("{} {weight} hold {}", phase.kind.as_str(), phase.hold),
                None => format!("{} hold {}", phase.kind.as_str(), phase.hold),
            }),
        )
        .list("rollback", migration.rollback.iter().map(|condition| condition_text(model, condition)))
        .done(ElementKind::Migration, &migration.name)
}

fn alert(model: &Model, alert: &Alert) -> Described {
    Fields::new()
        .set("when", condition_text(model, &alert.condition))
        .set("severity", alert.severity.as_str())
        .done(ElementKind::Alert, &alert.name)
}

fn test(model: &Model, test: &placid_lang::model::PolicyTest) -> Described {
    // One job and one expectation read as they always did; more are joined with "; ".
    let jobs: Vec<String> = test.jobs.iter().map(|job| test_job(model, job)).collect();
    let expects: Vec<String> = test.expects.iter().map(|expect| expectation(model, test, expect)).collect();
    Fields::new().set("job", jobs.join("; ")).set("expect", expects.join("; ")).done(ElementKind::Test, &test.name)
}

fn test_job(model: &Model, job: &placid_lang::model::TestJob) -> String {
    let mut text = String::new();
    if job.running {
        text.push_str("running ");
    }
    if let Some(name) = &job.name {
        text.push_str(&format!("{} ", name.value));
    }
    text.push_str(&format!("team={} tier={} gpus={}", model.team(job.team.value).name, model.tier(job.tier.value).name, job.gpus));
    if let Some(class) = &job.class {
        text.push_str(&format!(" class={}", model.class(class.value).name));
    }
    if let Some(pool) = &job.pool {
        text.push_str(&format!(" pool={}", model.pool(pool.value).name));
    }
    for node in &job.nodes {
        text.push_str(&format!(" node={}", model.node(node.value).name));
    }
    if let Some(at) = job.at {
        text.push_str(&format!(" at={}s", at.seconds));
    }
    if let Some(run) = job.run {
        text.push_str(&format!(" run={}s", run.seconds));
    }
    text
}

fn expectation(model: &Model, test: &placid_lang::model::PolicyTest, expect: &placid_lang::model::Expectation) -> String {
    use placid_lang::model::Outcome;
    let mut text = match &expect.outcome {
        Outcome::Placed(at) => {
            let mut text = "placed".to_owned();
            if let Some(pool) = &at.pool {
                text.push_str(&format!(" in {}", model.pool(pool.value).name));
            }
            if at.same_domain {
                text.push_str(", one NVLink domain");
            }
            if let Some(domain) = &at.domain {
                text.push_str(&format!(", domain {}", model.domain(domain.value).name));
            }
            if let Some(rack) = &at.rack {
                text.push_str(&format!(", rack {}", model.rack(rack.value).name));
            }
            if let Some(chassis) = &at.chassis {
                text.push_str(&format!(", chassis {}", chassis.value));
            }
            if !at.nodes.is_empty() {
                let nodes: Vec<&str> = at.nodes.iter().map(|node| model.node(node.value).name.as_str()).collect();
                text.push_str(&format!(", nodes {}", nodes.join(" ")));
            }
            text
        }
        Outcome::Queued(reason) => match reason {
            Some(reason) => format!("queued ({})", reason.value.as_str()),
            None => "queued".to_owned(),
        },
        Outcome::Rejected(reason) => format!("rejected ({})", reason.value),
        Outcome::Preempts(victims) => {
            let names: Vec<String> = victims
                .iter()
                .map(|victim| {
                    test.jobs[victim.value].name.as_ref().map_or_else(|| format!("#{}", victim.value), |name| name.value.to_string())
                })
                .collect();
            format!("preempts {}", names.join(" "))
        }
    };
    if test.jobs.iter().filter(|job| !job.running).count() > 1
        && let Some(name) = &test.jobs[expect.job].name
    {
        text = format!("{}: {text}", name.value);
    }
    text
}

fn node(model: &Model, node: &Node) -> Described {
    let gpus = match node.gpu_model() {
        Some(gpu_model) => format!("{} x {gpu_model}", node.gpu_count()),
        None => node.gpu_count().to_string(),
    };
    Fields::new()
        .set("arch", node.arch.as_str())
        .maybe("rack", node.rack.map(|rack| &model.rack(rack).name))
        .maybe("chassis", node.chassis.as_ref())
        .maybe("nvlink-domain", node.domain.map(|domain| &model.domain(domain).name))
        .set("capacity", node.capacity.as_str())
        .maybe("cost", node.cost_per_gpu_hour.map(|cost| format!("{cost}/gpu-hour")))
        .maybe("egress", node.cost_per_egress_tb.map(|cost| format!("{cost}/TB")))
        .maybe("memory", node.memory)
        .set("gpus", gpus)
        .list("labels", node.labels.iter().map(|(key, value)| format!("{key}={value}")))
        .done(ElementKind::Node, &node.name)
}
