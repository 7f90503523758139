//! The Kubernetes target: a kustomize-ready tree under `kubernetes/` that Argo CD syncs.
//!
//! Tiers become WorkloadPriorityClasses and PriorityClasses ([`priority`]); the cells of the
//! inventory ([`layout::cells`]: disjoint node groups, of which a pool is a list) become
//! ResourceFlavors, teams ClusterQueues in one Cohort, and a tier with reservations its own
//! ClusterQueue that lends nothing ([`kueue`]); node labels and taints come from one NFD rule
//! ([`nfd`]); tier rules Kueue cannot enforce become ValidatingAdmissionPolicies
//! ([`admission`]); a route's tag
//! sets the routed tier's queue and priority labels ([`route_mutation`]) and must carry them
//! ([`routing`]); Kueue's own configuration is synced where Kueue reads it ([`kueue_config`]);
//! alerts become a PrometheusRule ([`alerts`]); the scheduler extender is registered in the
//! KubeSchedulerConfiguration of placid's own kube-scheduler ([`scheduler`]) and deployed with
//! its plugin ([`extender`]); migrated services become Argo
//! Rollouts stepping through the phases, gated by AnalysisTemplates ([`rollouts`]); Argo CD
//! gets a bootstrap project, application and plugin ([`argo`]).
//!
//! Invariants: validate, then emit: every name, label and quota Kubernetes or Kueue would
//! refuse is a diagnostic (E050-E057) at the span of the model element at fault, and nothing
//! is emitted when there is one. Every object goes through one [`objects::ObjectList`], which
//! owns metadata, sync waves, file paths, kustomizations and output order.

pub mod admission;
pub mod alerts;
pub mod argo;
pub mod extender;
pub mod kinds;
pub mod kueue;
pub mod kueue_config;
pub mod kueue_types;
pub mod layout;
pub mod names;
pub mod nfd;
pub mod objects;
pub mod placement;
pub mod priority;
pub mod rollouts;
pub mod route_mutation;
pub mod routing;
pub mod scheduler;
pub mod telemetry_config;
pub mod webhook;
pub mod workloads;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, PolicyTest};
use placid_lang::span::Span;

use crate::Artifact;
use crate::k8s::layout::Layout;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::yaml;

/// Builds every object of `model`, or all the reasons it cannot. A model without a
/// Kubernetes target yields an empty list.
pub fn objects(model: &Checked) -> Result<ObjectList, Diagnostics> {
    let Some(settings) = &model.project.kubernetes else { return Ok(ObjectList::new()) };
    objects_in(model, &Layout::new(model, settings)?)
}

/// Every object of `model` in `layout`.
fn objects_in(model: &Checked, layout: &Layout) -> Result<ObjectList, Diagnostics> {
    let mut list = ObjectList::new();
    let mut diagnostics = Diagnostics::new();
    namespaces(model, layout, &mut list, &mut diagnostics);
    priority::emit(model, layout, &mut list, &mut diagnostics);
    nfd::emit(model, layout, &mut list, &mut diagnostics);
    kueue::emit(model, layout, &mut list, &mut diagnostics);
    kueue_config::emit(model, layout, &mut list, &mut diagnostics);
    admission::emit(model, layout, &mut list, &mut diagnostics);
    routing::emit(model, layout, &mut list, &mut diagnostics);
    workloads::emit(model, layout, &mut list, &mut diagnostics);
    alerts::emit(model, layout, &mut list, &mut diagnostics);
    alerts::emit_dashboard(model, layout, &mut list, &mut diagnostics);
    scheduler::emit(model, layout, &mut list, &mut diagnostics);
    extender::emit(model, layout, &mut list, &mut diagnostics);
    rollouts::emit(model, layout, &mut list, &mut diagnostics);
    // Last: the Argo CD project whitelists the kinds of everything pushed before it.
    argo::emit(model, layout, &mut list, &mut diagnostics);
    if diagnostics.has_errors() {
        diagnostics.sort();
        return Err(diagnostics);
    }
    Ok(list)
}

/// What `placid test` runs a policy test's admission expectations against: the build's objects
/// (its admission policies, their bindings and the namespaces they select among them) and the
/// workload each test job submits ([`workloads::push_test_job`]), as JSON.
pub struct TestSubmissions {
    layout: Layout,
    objects: Vec<serde_json::Value>,
}

impl TestSubmissions {
    /// The build's objects as JSON, or why they cannot be built; `None` without a Kubernetes
    /// target.
    pub fn new(model: &Checked) -> Result<Option<TestSubmissions>, Diagnostics> {
        let Some(settings) = &model.project.kubernetes else { return Ok(None) };
        let layout = Layout::new(model, settings)?;
        let list = objects_in(model, &layout)?;
        let objects = list
            .sorted()
            .into_iter()
            .map(|object| json(model, object))
            .collect::<Result<Vec<_>, Diagnostic>>()
            .map_err(Diagnostics::from)?;
        Ok(Some(TestSubmissions { layout, objects }))
    }

    /// The build's objects.
    pub fn objects(&self) -> &[serde_json::Value] {
        &self.objects
    }

    /// The workload job `index` of `test` submits, as JSON.
    pub fn workload(&self, model: &Checked, test: &PolicyTest, index: usize) -> Result<serde_json::Value, Diagnostic> {
        let mut list = ObjectList::new();
        workloads::push_test_job(model, &self.layout, test, index, &mut list)?;
        let sorted = list.sorted();
        let object = sorted.first().ok_or_else(|| {
            Diagnostic::error(Code::KubernetesYamlUnwritable, test.jobs[index].span, "no workload was written for this job")
                .help("this is a bug in placid; please report it with the policy that triggers it")
        })?;
        json(model, object)
    }
}

/// `object` as JSON, or the diagnostic of a bug in placid (E149) at its element.
fn json(model: &Model, object: &objects::Object) -> Result<serde_json::Value, Diagnostic> {
    object.to_json(model.project.name.as_str()).map_err(|error| {
        Diagnostic::error(
            Code::KubernetesYamlUnwritable,
            object.meta.span,
            format!("{} could not be read back as JSON: {error}", object.path()),
        )
        .label("while emitting this")
        .help("this is a bug in placid; please report it with the policy that triggers it")
    })
}

/// Emits the Kubernetes artifacts of `model`.
pub fn emit(model: &Checked) -> Result<Vec<Artifact>, Diagnostics> {
    // The promtool files need none of the objects: built on a second thread while the objects
    // are (4 ms each at 100 teams × 64 flavors), they cost a build on two cores only the thread.
    let (objects, promtool) = std::thread::scope(|scope| {
        let promtool = scope.spawn(|| promtool_files(model));
        (objects(model).map(|list| list.artifacts(model.project.name.as_str())), promtool.join())
    });
    let mut artifacts = objects?.map_err(|error| yaml_failed(model, &error))?;
    let promtool = promtool.unwrap_or_else(|panic| std::panic::resume_unwind(panic)).map_err(|error| yaml_failed(model, &error))?;
    if !promtool.is_empty() {
        artifacts.extend(promtool);
        artifacts.sort();
    }
    Ok(artifacts)
}

/// The promtool rule file and its tests; none without Kubernetes settings or a layout (the
/// objects report the layout's errors).
fn promtool_files(model: &Checked) -> Result<Vec<Artifact>, yaml::Error> {
    let Some(settings) = &model.project.kubernetes else { return Ok(Vec::new()) };
    match Layout::new(model, settings) {
        Ok(layout) => alerts::promtool_files(model, &layout),
        Err(_) => Ok(Vec::new()),
    }
}

/// The synced objects of `model` as one multi-document YAML stream (what the Argo CD plugin
/// prints).
pub fn stream(model: &Checked) -> Result<String, Diagnostics> {
    objects(model)?.stream(model.project.name.as_str()).map_err(|error| yaml_failed(model, &error))
}

/// A file of the Kubernetes tree that could not be written as YAML, at the model element
/// whose objects it holds. Every payload is placid's own typed content, which serialises, so
/// this is a bug in placid (E149).
pub(crate) fn yaml_diagnostic(span: Span, what: &str, error: &yaml::Error) -> Diagnostic {
    Diagnostic::error(Code::KubernetesYamlUnwritable, span, format!("{what} could not be written as YAML: {error}"))
        .label("while emitting this")
        .help("this is a bug in placid; please report it with the policy that triggers it")
}

/// [`yaml_diagnostic`] for the whole tree, as one set of diagnostics.
fn yaml_failed(model: &Model, error: &yaml::Error) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    diagnostics.push(yaml_diagnostic(model.project.span, "the Kubernetes tree", error));
    diagnostics
}

/// placid's namespace and one namespace per team, labelled with the team so that
/// ClusterQueues and admission policies can select it.
fn namespaces(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    if let Err(diagnostic) = list.push(
        NewObject::cluster(
            &kinds::NAMESPACE,
            layout.namespace.clone(),
            model.project.kubernetes.as_ref().map_or(model.project.span, |settings| settings.span),
        ),
        Namespace::default(),
    ) {
        diagnostics.push(diagnostic);
    }
    for (team, names) in model.teams.iter().zip(&layout.teams) {
        let mut meta = NewObject::cluster(&kinds::NAMESPACE, names.namespace.clone(), team.span);
        meta.labels = BTreeMap::from([(layout.team_label.as_str().to_owned(), names.object.as_str().to_owned())]);
        if let Err(diagnostic) = list.push(meta, Namespace::default()) {
            diagnostics.push(diagnostic);
        }
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;
    use placid_lang::span::Span;

    #[test]
    fn yaml_that_cannot_be_written_is_reported_as_a_bug_under_its_own_code() {
        let diagnostic = super::yaml_diagnostic(Span::DETACHED, "the Argo CD plugin", &super::yaml::Error::NotAMapping);
        assert_eq!(diagnostic.code, Code::KubernetesYamlUnwritable);
        assert!(diagnostic.message.contains("the Argo CD plugin could not be written as YAML"), "{}", diagnostic.message);
    }
}
