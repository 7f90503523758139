//! Argo Rollouts objects: one `Rollout` per migrated service, stepping through the phases,
//! and one `AnalysisTemplate` per acceptance gate and rollback trigger.
//!
//! The Rollout takes its pod template from the service's Deployment (`workloadRef`), so
//! placid never needs the image or the container spec: the migration starts when the
//! Deployment's template is pointed at the target pool (the runbook gives the command), and
//! each phase is `setWeight` + `pause` for the hold + the acceptance gates as a step
//! analysis. Shadow is an Experiment: the new template runs on the target pool without
//! traffic for the hold. Rollback triggers run as background analysis for the whole rollout;
//! a failed measurement aborts it, which returns all traffic to the stable ReplicaSet.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{KubernetesSettings, Migration, Model, PhaseKind};
use serde::Serialize;

use super::analysis::{Measurement, Role, go_duration, measure};
use super::names::{self, Use};

/// Where the AnalysisTemplates query Prometheus: the Service prometheus-operator creates.
pub const PROMETHEUS_ADDRESS: &str = "http://prometheus-operated.monitoring.svc:9090";

const API_VERSION: &str = "argoproj.io/v1alpha1";

/// A Kubernetes object with the fields the Kubernetes target sorts and files it by.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeObject {
    /// `argoproj.io/v1alpha1`.
    pub api_version: &'static str,
    /// `Rollout` or `AnalysisTemplate`.
    pub kind: &'static str,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// The whole object.
    pub value: serde_json::Value,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Object<Spec> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Serialize)]
struct Metadata {
    name: String,
    namespace: String,
    labels: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct AnalysisTemplateSpec {
    metrics: Vec<AnalysisMetric>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AnalysisMetric {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    success_condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure_condition: Option<String>,
    failure_limit: u32,
    provider: Provider,
}

#[derive(Serialize)]
struct Provider {
    prometheus: Prometheus,
}

#[derive(Serialize)]
struct Prometheus {
    address: &'static str,
    query: String,
    timeout: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RolloutSpec {
    selector: Selector,
    workload_ref: WorkloadRef,
    strategy: Strategy,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Selector {
    match_labels: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkloadRef {
    api_version: &'static str,
    kind: &'static str,
    name: String,
    scale_down: &'static str,
}

#[derive(Serialize)]
struct Strategy {
    canary: Canary,
}

#[derive(Serialize)]
struct Canary {
    #[serde(skip_serializing_if = "Option::is_none")]
    analysis: Option<AnalysisRef>,
    steps: Vec<Step>,
}

#[derive(Clone, Serialize)]
struct AnalysisRef {
    templates: Vec<TemplateRef>,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateRef {
    template_name: String,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
enum Step {
    SetWeight(u32),
    Pause { duration: String },
    Analysis(AnalysisRef),
    Experiment(Experiment),
}

#[derive(Clone, Serialize)]
struct Experiment {
    duration: String,
    templates: Vec<ExperimentTemplate>,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ExperimentTemplate {
    name: &'static str,
    spec_ref: &'static str,
    replicas: u32,
}

/// The AnalysisTemplates and Rollouts of every migration with services.
pub(super) fn objects(model: &Model) -> Result<Vec<KubeObject>, Diagnostics> {
    let Some(settings) = &model.project.kubernetes else {
        return Ok(Vec::new());
    };
    let mut diagnostics = Diagnostics::new();
    let mut objects = Vec::new();
    for migration in model.migrations.iter().filter(|migration| !migration.services.is_empty()) {
        objects.extend(migration_objects(model, settings, migration, &mut diagnostics));
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    objects.sort_by(|left, right| (&left.namespace, left.kind, &left.name).cmp(&(&right.namespace, right.kind, &right.name)));
    Ok(objects)
}

/// The name of the AnalysisTemplate of one gate or trigger.
pub fn template_name(model: &Model, migration: &Migration, metric: placid_lang::model::MetricId, role: Role) -> String {
    let role = match role {
        Role::Gate => "accept",
        Role::Trigger => "rollback",
    };
    format!("{}-{role}-{}", migration.name, model.metric(metric).name)
}

fn migration_objects(
    model: &Model,
    settings: &KubernetesSettings,
    migration: &Migration,
    diagnostics: &mut Diagnostics,
) -> Vec<KubeObject> {
    let namespace = migration.service_namespace.as_ref().map_or(&settings.namespace, |namespace| &namespace.value).to_string();
    names::check(
        &namespace,
        migration.service_namespace.as_ref().map_or(settings.span, |namespace| namespace.span),
        Use::LabelValue,
        diagnostics,
    );
    let labels = BTreeMap::from([
        ("app.kubernetes.io/managed-by".to_owned(), "placid".to_owned()),
        (format!("{}/migration", settings.label_prefix.value), migration.name.to_string()),
    ]);
    names::check(migration.name.as_str(), migration.span, Use::LabelValue, diagnostics);
    let mut objects = Vec::new();
    let mut template = |condition: &placid_lang::model::Condition, role: Role, diagnostics: &mut Diagnostics| {
        let name = template_name(model, migration, condition.metric.value, role);
        names::check(&name, condition.metric.span, Use::ObjectName, diagnostics);
        let measurement = measure(model, migration, condition, role);
        let spec =
            AnalysisTemplateSpec { metrics: vec![analysis_metric(model.metric(condition.metric.value).name.to_string(), measurement)] };
        objects.push(object("AnalysisTemplate", name.clone(), &namespace, &labels, spec));
        TemplateRef { template_name: name }
    };
    let gates: Vec<TemplateRef> = migration.acceptance.iter().map(|condition| template(condition, Role::Gate, diagnostics)).collect();
    let triggers: Vec<TemplateRef> = migration.rollback.iter().map(|condition| template(condition, Role::Trigger, diagnostics)).collect();
    let steps = steps(migration, &gates, diagnostics);
    for service in &migration.services {
        names::check(service.value.as_str(), service.span, Use::LabelValue, diagnostics);
        let spec = RolloutSpec {
            selector: Selector { match_labels: BTreeMap::from([("app.kubernetes.io/name".to_owned(), service.value.to_string())]) },
            workload_ref: WorkloadRef {
                api_version: "apps/v1",
                kind: "Deployment",
                name: service.value.to_string(),
                scale_down: "progressively",
            },
            strategy: Strategy {
                canary: Canary {
                    analysis: (!triggers.is_empty()).then(|| AnalysisRef { templates: triggers.clone() }),
                    steps: steps.clone(),
                },
            },
        };
        objects.push(object("Rollout", service.value.to_string(), &namespace, &labels, spec));
    }
    objects
}

fn analysis_metric(name: String, measurement: Measurement) -> AnalysisMetric {
    let provider = Provider { prometheus: Prometheus { address: PROMETHEUS_ADDRESS, query: measurement.query, timeout: 30 } };
    match measurement.role {
        // One measurement at the end of the phase's hold; the query's window looks back.
        Role::Gate => AnalysisMetric {
            name,
            interval: None,
            count: Some(1),
            success_condition: Some(measurement.condition),
            failure_condition: None,
            failure_limit: 0,
            provider,
        },
        // Measured every minute until the rollout completes; one failure aborts it.
        Role::Trigger => AnalysisMetric {
            name,
            interval: Some("1m".to_owned()),
            count: None,
            success_condition: None,
            failure_condition: Some(measurement.condition),
            failure_limit: 0,
            provider,
        },
    }
}

fn steps(migration: &Migration, gates: &[TemplateRef], diagnostics: &mut Diagnostics) -> Vec<Step> {
    let mut steps = Vec::new();
    for phase in &migration.phases {
        let hold = go_duration(phase.hold);
        let share = phase.basis_points();
        match phase.kind {
            PhaseKind::Shadow => steps.push(Step::Experiment(Experiment {
                duration: hold,
                templates: vec![ExperimentTemplate { name: "shadow", spec_ref: "canary", replicas: 1 }],
            })),
            PhaseKind::Canary | PhaseKind::Ramp | PhaseKind::BlueGreen => {
                if share % 100 != 0 {
                    diagnostics.push(
                        Diagnostic::error(Code::InvalidValue, phase.span, "Argo Rollouts weights are whole percents")
                            .label("fractional weight")
                            .help("round the weight to a whole percent, such as `weight=\"1%\"`"),
                    );
                }
                steps.push(Step::SetWeight(share / 100));
                steps.push(Step::Pause { duration: hold });
            }
        }
        if !gates.is_empty() {
            steps.push(Step::Analysis(AnalysisRef { templates: gates.to_vec() }));
        }
    }
    steps
}

fn object<Spec: Serialize>(kind: &'static str, name: String, namespace: &str, labels: &BTreeMap<String, String>, spec: Spec) -> KubeObject {
    let metadata = Metadata { name: name.clone(), namespace: namespace.to_owned(), labels: labels.clone() };
    let value = serde_json::to_value(Object { api_version: API_VERSION, kind, metadata, spec }).unwrap_or(serde_json::Value::Null);
    KubeObject { api_version: API_VERSION, kind, name, namespace: namespace.to_owned(), value }
}
