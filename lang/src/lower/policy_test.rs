//! Lowering of policy `test` blocks (production code, not the crate's unit tests): a
//! starting state, jobs in sequence, a time to look, and what the team expects to happen
//! then, like `opa test`. `placid test` runs them through the engine.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::names::Names;
use crate::lower::names::{Tables, lower_kind};
use crate::lower::reader::{NodeReader, Optional};
use crate::lower::schema;
use crate::model::{Expectation, Model, NodeId, Outcome, PolicyTest, QueueReason, RackId, TestId, TestJob, Where};
use crate::name::Name;
use crate::span::{Span, Spanned};

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
    let mut names = Names::new("test");
    let mut tests = Vec::new();
    lower_kind(cx, "test", nodes, &mut names, &mut tests, TestId::from_index, |cx, node, name| lower_test(cx, model, tables, node, name));
    model.tests = tests;
}

fn lower_test(cx: &mut Cx, model: &Model, tables: &Tables, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<PolicyTest> {
    node.props(cx, schema::TEST.properties);
    let children = node.children(cx, schema::TEST.children);
    let mut jobs = Vec::new();
    // Names of jobs that failed to lower: expectations naming them stay silent.
    let mut broken = Vec::new();
    let mut complete = true;
    for child in children.iter().filter(|child| matches!(child.kind(), "running" | "job")) {
        match lower_job(cx, model, tables, child) {
            Some(job) => jobs.push(job),
            None => {
                complete = false;
                // A scratch context: the name's own problems are reported by `lower_job`.
                if let Some(name) = child.args().first().and_then(|arg| arg.name(&mut Cx::new())) {
                    broken.push(name.value);
                }
            }
        }
    }
    if !children.iter().any(|child| child.kind() == "job") {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), format!("test `{}` needs a `job`", name.value))
                .label("no `job`")
                .help("add `job team=\"...\" tier=\"...\" gpus=8`"),
        );
        return None;
    }
    let at = match NodeReader::single(cx, &children, "at") {
        Some(child) => {
            let at = child.leaf_args(cx, 1, 1, "a time (`at \"30m\"`)").and_then(|args| args[0].duration(cx));
            complete &= at.is_some();
            at
        }
        None => None,
    };
    let mut expects = Vec::new();
    for child in children.iter().filter(|child| child.kind() == "expect") {
        match lower_expect(cx, model, tables, &Jobs { lowered: &jobs, broken: &broken }, child) {
            Some(expect) => expects.push(expect),
            None => complete = false,
        }
    }
    if !children.iter().any(|child| child.kind() == "expect") {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), format!("test `{}` needs an `expect`", name.value))
                .label("no `expect`")
                .help("add `expect \"placed\"` or `expect \"rejected\" reason=\"tier-not-allowed\"`"),
        );
        return None;
    }
    complete.then_some(PolicyTest { name: name.value, span: name.span, jobs, at, expects })
}

fn lower_job(cx: &mut Cx, model: &Model, tables: &Tables, child: &NodeReader<'_>) -> Option<TestJob> {
    let running = child.kind() == "running";
    let accepts = if running { &schema::TEST_RUNNING } else { &schema::TEST_JOB };
    let props = child.props(cx, accepts.properties);
    let job_name = child.expect_args(cx, 0, 1, "the job's name").map(|args| args.first().map(|arg| arg.name(cx)));
    let grandchildren = child.children(cx, accepts.children);
    let nodes = node_list(cx, model, &grandchildren);
    let team = props.require(cx, child, "team").and_then(|value| value.name(cx)).and_then(|reference| tables.teams.resolve(cx, &reference));
    let tier = props.require(cx, child, "tier").and_then(|value| value.name(cx)).and_then(|reference| tables.tiers.resolve(cx, &reference));
    let class = props.get("class").map(|value| value.name(cx).and_then(|reference| tables.classes.resolve(cx, &reference)));
    let gpus = props.require(cx, child, "gpus").and_then(|value| value.positive(cx));
    let pool = props.get("pool").map(|value| value.name(cx).and_then(|reference| tables.pools.resolve(cx, &reference)));
    let at = props.get("at").map(|value| value.duration(cx));
    let run = props.get("run").map(|value| value.duration(cx));
    let tag = props.get("tag").map(|value| value.name(cx));
    Some(TestJob {
        span: child.name_span(),
        name: job_name?.lowered()?,
        running,
        team: team?,
        tier: tier?,
        class: class.lowered()?,
        gpus: gpus?,
        pool: pool.lowered()?,
        nodes: nodes?,
        at: at.lowered()?,
        run: run.lowered()?,
        tag: tag.lowered()?,
    })
}

/// The nodes of a `nodes "a" "b"` child, if there is one.
fn node_list(cx: &mut Cx, model: &Model, children: &[NodeReader<'_>]) -> Option<Vec<Spanned<NodeId>>> {
    let Some(child) = NodeReader::single(cx, children, "nodes") else { return Some(Vec::new()) };
    let args = child.leaf_args(cx, 1, usize::MAX, "node names")?;
    let mut nodes = Vec::new();
    let mut complete = true;
    for arg in args {
        let Some(name) = arg.name(cx) else {
            complete = false;
            continue;
        };
        match model.node_by_name(name.value.as_str()) {
            Some(id) => nodes.push(Spanned::new(id, name.span)),
            None => {
                complete = false;
                cx.error(
                    Diagnostic::error(Code::UnresolvedReference, name.span, format!("no node named `{}` in the inventory", name.value))
                        .label("unknown node")
                        .maybe_help(crate::suggest::help_for(name.value.as_str(), model.nodes.iter().map(|node| node.name.as_str()))),
                );
            }
        }
    }
    complete.then_some(nodes)
}

/// The jobs of a test that lowered, and the names of those that did not.
struct Jobs<'j> {
    lowered: &'j [TestJob],
    broken: &'j [Name],
}

/// The index of the job an expectation is about: `job=`, or the last submitted `job`.
fn job_index(cx: &mut Cx, jobs: &Jobs<'_>, reference: Option<Spanned<Name>>) -> Option<usize> {
    match reference {
        None => jobs.lowered.iter().rposition(|job| !job.running),
        Some(reference) => find_job(cx, jobs, &reference),
    }
}

fn find_job(cx: &mut Cx, all: &Jobs<'_>, reference: &Spanned<Name>) -> Option<usize> {
    let jobs = all.lowered;
    let found = jobs.iter().position(|job| job.name.as_ref().is_some_and(|name| name.value == reference.value));
    if found.is_none() && !all.broken.contains(&reference.value) {
        cx.error(
            Diagnostic::error(Code::UnresolvedReference, reference.span, format!("no job named `{}` in this test", reference.value))
                .label("unknown job")
                .maybe_help(crate::suggest::help_for(
                    reference.value.as_str(),
                    jobs.iter().filter_map(|job| job.name.as_ref()).map(|name| name.value.as_str()),
                )),
        );
    }
    found
}

fn lower_expect(cx: &mut Cx, model: &Model, tables: &Tables, jobs: &Jobs<'_>, child: &NodeReader<'_>) -> Option<Expectation> {
    let props = child.props(cx, schema::TEST_EXPECT.properties);
    let grandchildren = child.children(cx, schema::TEST_EXPECT.children);
    let outcome = child.expect_args(cx, 1, 1, "placed, queued, rejected, preempts, refused-by-admission or admitted").and_then(|args| {
        args[0].keyword(
            cx,
            &[
                ("placed", "placed"),
                ("queued", "queued"),
                ("rejected", "rejected"),
                ("preempts", "preempts"),
                ("refused-by-admission", "refused-by-admission"),
                ("admitted", "admitted"),
            ],
        )
    })?;
    let reference = props.get("job").map(|value| value.name(cx)).lowered()?;
    let job = job_index(cx, jobs, reference)?;
    // One help line for a property and a child that does not apply: what each describes.
    const APPLIES_TO: &str = "`pool`, `domain`, `rack`, `chassis`, `same-domain` and `nodes` describe a placed job; `reason` a queued or rejected one; `victims` a preemption; `message` a refusal by admission";
    let unexpected = |cx: &mut Cx, keys: &[&str], children: &[&str]| {
        for key in keys {
            if let Some(value) = props.get(key) {
                cx.error(
                    Diagnostic::error(Code::InvalidValue, value.span, format!("`expect \"{outcome}\"` takes no `{key}=`"))
                        .label("does not apply")
                        .help(APPLIES_TO),
                );
            }
        }
        for kind in children {
            if let Some(extra) = grandchildren.iter().find(|grandchild| grandchild.kind() == *kind) {
                cx.error(
                    Diagnostic::error(Code::InvalidValue, extra.name_span(), format!("`expect \"{outcome}\"` takes no `{kind}`"))
                        .label("does not apply")
                        .help(APPLIES_TO),
                );
            }
        }
    };
    let outcome = match outcome {
        "placed" => {
            unexpected(cx, &["reason", "message"], &["victims"]);
            let pool = props.get("pool").map(|value| value.name(cx).and_then(|reference| tables.pools.resolve(cx, &reference)));
            let same_domain = props.get("same-domain").map_or(Some(false), |value| value.bool(cx));
            let domain = props.get("domain").map(|value| value.name(cx).and_then(|reference| tables.domains.resolve(cx, &reference)));
            let rack = props.get("rack").map(|value| value.name(cx).and_then(|reference| rack(cx, model, &reference)));
            let chassis = props.get("chassis").map(|value| value.name(cx).and_then(|reference| chassis(cx, model, reference)));
            let nodes = node_list(cx, model, &grandchildren);
            Outcome::Placed(Where {
                pool: pool.lowered()?,
                same_domain: same_domain?,
                domain: domain.lowered()?,
                rack: rack.lowered()?,
                chassis: chassis.lowered()?,
                nodes: nodes?,
            })
        }
        "queued" => {
            unexpected(cx, &["pool", "same-domain", "domain", "rack", "chassis", "message"], &["nodes", "victims"]);
            let reason = props.get("reason").map(|value| {
                let text = value.string(cx)?;
                let choices: Vec<(&str, QueueReason)> = QueueReason::ALL.iter().map(|reason| (reason.as_str(), *reason)).collect();
                value.keyword(cx, &choices).map(|reason| Spanned::new(reason, text.span))
            });
            Outcome::Queued(reason.lowered()?)
        }
        "rejected" => {
            unexpected(cx, &["pool", "same-domain", "domain", "rack", "chassis", "message"], &["nodes", "victims"]);
            let reason = props.require(cx, child, "reason").and_then(|value| value.name(cx))?;
            if !Code::ALL.iter().any(|code| code.name() == reason.value.as_str()) {
                cx.error(
                    Diagnostic::error(Code::TestExpectationFails, reason.span, format!("`{}` is not a diagnostic name", reason.value))
                        .label("unknown reason")
                        .maybe_help(crate::suggest::help_for(reason.value.as_str(), Code::ALL.iter().map(|code| code.name()))),
                );
                return None;
            }
            Outcome::Rejected(reason)
        }
        "refused-by-admission" => {
            unexpected(cx, &["pool", "same-domain", "domain", "rack", "chassis", "reason"], &["nodes", "victims"]);
            let message = props.get("message").map(|value| value.string(cx).and_then(|message| non_empty(cx, message)));
            admission_target(cx, model, child, outcome)?;
            Outcome::RefusedByAdmission(message.lowered()?)
        }
        "admitted" => {
            unexpected(cx, &["pool", "same-domain", "domain", "rack", "chassis", "reason", "message"], &["nodes", "victims"]);
            admission_target(cx, model, child, outcome)?;
            Outcome::Admitted
        }
        _ => {
            unexpected(cx, &["pool", "same-domain", "domain", "rack", "chassis", "reason", "message"], &["nodes"]);
            let Some(victims) = NodeReader::single(cx, &grandchildren, "victims") else {
                cx.error(
                    Diagnostic::error(Code::MissingValue, child.name_span(), "`expect \"preempts\"` needs `victims`")
                        .label("no `victims`")
                        .help("name the jobs it preempts: `expect \"preempts\" { victims \"warm\" }`"),
                );
                return None;
            };
            let args = victims.leaf_args(cx, 1, usize::MAX, "the names of the preempted jobs")?;
            let mut found = Vec::new();
            for arg in args {
                let name = arg.name(cx)?;
                found.push(Spanned::new(find_job(cx, jobs, &name)?, name.span));
            }
            Outcome::Preempts(found)
        }
    };
    Some(Expectation { span: child.name_span(), job, outcome })
}

/// Whether the project has the Kubernetes target whose admission policies an admission
/// expectation is judged by: without one there is nothing to run it against, and a test that
/// cannot be run must not pass.
fn admission_target(cx: &mut Cx, model: &Model, child: &NodeReader<'_>, outcome: &str) -> Option<()> {
    if model.project.kubernetes.is_some() {
        return Some(());
    }
    cx.error(
        Diagnostic::error(
            Code::TestExpectationFails,
            child.name_span(),
            format!(
                "`expect \"{outcome}\"` is judged by the Kubernetes target's admission policies, and this project has no Kubernetes target"
            ),
        )
        .label("cannot be checked")
        .help("add `target \"kubernetes\"` to placid.kdl, or expect what the engine decides (`placed`, `queued`, `rejected`, `preempts`)"),
    );
    None
}

/// `message` when it has text: an empty one would match every refusal.
fn non_empty(cx: &mut Cx, message: Spanned<String>) -> Option<Spanned<String>> {
    if !message.value.is_empty() {
        return Some(message);
    }
    cx.error(
        Diagnostic::error(Code::InvalidValue, message.span, "an empty `message=` matches every refusal")
            .label("empty")
            .help("give a part of the policy's message (`message=\"may not use tier\"`), or leave `message=` out"),
    );
    None
}

fn rack(cx: &mut Cx, model: &Model, reference: &Spanned<Name>) -> Option<Spanned<RackId>> {
    match model.racks.iter().position(|rack| rack.name == reference.value) {
        Some(index) => Some(Spanned::new(RackId::from_index(index), reference.span)),
        None => {
            unknown(cx, reference.span, "rack", reference.value.as_str(), model.racks.iter().map(|rack| rack.name.as_str()));
            None
        }
    }
}

fn chassis(cx: &mut Cx, model: &Model, reference: Spanned<Name>) -> Option<Spanned<Name>> {
    let names = model.nodes.iter().filter_map(|node| node.chassis.as_ref());
    if names.clone().any(|name| *name == reference.value) {
        return Some(reference);
    }
    unknown(cx, reference.span, "chassis", reference.value.as_str(), names.map(Name::as_str));
    None
}

fn unknown<'n>(cx: &mut Cx, span: Span, kind: &str, name: &str, known: impl Iterator<Item = &'n str> + Clone) {
    cx.error(
        Diagnostic::error(Code::UnresolvedReference, span, format!("no {kind} named `{name}` in the inventory"))
            .label(format!("unknown {kind}"))
            .maybe_help(crate::suggest::help_for(name, known)),
    );
}

#[cfg(test)]
mod tests {
    use crate::diag::Code;
    use crate::model::{Model, Outcome};
    use crate::source::MemoryWorld;

    const POLICY: &str = "pool \"all\" { select arch=\"x86_64\" }\ntier \"t\" {\n    priority 1\n    preemption window=\"1m\"\n}\n\
        cost-center \"cc\"\nteam \"a\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n}\n";

    /// The model and the codes of a project with `target` in placid.kdl and this test block.
    fn load(target: &str, test: &str) -> (Model, Vec<Code>) {
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", format!("project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n{target}\n"));
        world.insert("nodes.kdl", "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n");
        world.insert("policy.kdl", format!("{POLICY}test \"x\" {{\n    job \"j\" team=\"a\" tier=\"t\" gpus=1\n    {test}\n}}\n"));
        let compilation = crate::load(&world);
        let codes = compilation
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == crate::diag::Severity::Error)
            .map(|diagnostic| diagnostic.code)
            .collect();
        (compilation.model, codes)
    }

    const KUBERNETES: &str = "target \"kubernetes\" version=\"1.34\"";

    fn outcome(model: &Model) -> &Outcome {
        &model.tests[0].expects[0].outcome
    }

    #[test]
    fn admission_expectations_lower() {
        let (model, codes) = load(KUBERNETES, "expect \"refused-by-admission\" job=\"j\" message=\"may not use tier\"");
        assert_eq!(codes, []);
        let Outcome::RefusedByAdmission(Some(message)) = outcome(&model) else { panic!("{:?}", outcome(&model)) };
        assert_eq!(message.value, "may not use tier");
        assert!(outcome(&model).is_admission());

        let (model, codes) = load(KUBERNETES, "expect \"refused-by-admission\"");
        assert_eq!(codes, []);
        assert_eq!(outcome(&model), &Outcome::RefusedByAdmission(None));

        let (model, codes) = load(KUBERNETES, "expect \"admitted\" job=\"j\"");
        assert_eq!(codes, []);
        assert_eq!(outcome(&model), &Outcome::Admitted);
    }

    #[test]
    fn an_admission_expectation_without_a_kubernetes_target_cannot_be_checked() {
        for test in ["expect \"admitted\"", "expect \"refused-by-admission\" message=\"tier\""] {
            let (model, codes) = load("target \"slurm\" version=\"22.05\"", test);
            assert_eq!(codes, [Code::TestExpectationFails], "{test}");
            // Left out with its test, so it is never run and never passes.
            assert!(model.tests.is_empty(), "{test}");
        }
    }

    #[test]
    fn admission_expectations_refuse_what_does_not_apply() {
        for test in [
            "expect \"admitted\" message=\"tier\"",
            "expect \"admitted\" reason=\"tier-not-allowed\"",
            "expect \"refused-by-admission\" pool=\"all\"",
            "expect \"refused-by-admission\" message=\"\"",
            "expect \"placed\" message=\"tier\"",
            "expect \"rejected\" reason=\"tier-not-allowed\" message=\"tier\"",
        ] {
            let (_, codes) = load(KUBERNETES, test);
            assert_eq!(codes, [Code::InvalidValue], "{test}");
        }
        let (_, codes) = load(KUBERNETES, "expect \"refused-by-admision\"");
        assert_eq!(codes, [Code::InvalidValue]);
        let (_, codes) = load(KUBERNETES, "expect \"refused-by-admission\" message=3");
        assert_eq!(codes, [Code::InvalidValue]);
    }
}
