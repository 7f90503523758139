//! Migrations in the Kubernetes tree: one Argo Rollouts `Rollout` per migrated service,
//! stepping through the phases, and one `AnalysisTemplate` per acceptance gate and rollback
//! trigger, pushed through the object list like every other object (placid's metadata, a
//! sync wave after the queues, a place in the kustomization and in Argo CD's whitelist).
//!
//! The Rollout takes its pod template from the service's Deployment (`workloadRef`), so
//! placid never needs the image or the container spec: the migration starts when the
//! Deployment's template is pointed at the target pool (the runbook gives the command), and
//! each phase is `setWeight` + `pause` for the hold + the acceptance gates as a step
//! analysis. Shadow is an Experiment: the new template runs on the target pool without
//! traffic for the hold. Rollback triggers run as background analysis for the whole rollout;
//! a failed measurement aborts it, which returns all traffic to the stable ReplicaSet.
//!
//! Invariants: what a gate or trigger measures comes from [`crate::migration::analysis`], and
//! the names come from [`template_name`] and [`service_namespace`], which the runbook reads
//! too. Every name goes through [`ObjectName`] (E050) at the span of the element it comes
//! from; the migration's, the services' and the namespace's are taken as written, because the
//! Deployments already exist under them and the Slurm scripts use the migration's name as
//! it is. Nothing of a migration whose name or namespace Kubernetes refuses is built, so one
//! bad name is one error.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Condition, KubernetesSettings, MetricId, Migration, Model, PhaseKind};
use placid_lang::name::Name;
use placid_lang::span::{Span, Spanned};
use serde::Serialize;

use crate::k8s::kinds::{self, Kind};
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList, WithSpec};
use crate::migration::analysis::{Measurement, Role, go_duration, measure};

/// Where the AnalysisTemplates query Prometheus: the Service prometheus-operator creates.
pub const PROMETHEUS_ADDRESS: &str = "http://prometheus-operated.monitoring.svc:9090";

// The fields of every struct below are declared in the alphabetical order of their keys: the
// order the generated files have always had, so regenerating them gives no diff.

#[derive(Serialize)]
struct AnalysisTemplateSpec {
    metrics: Vec<AnalysisMetric>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AnalysisMetric {
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure_condition: Option<String>,
    failure_limit: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    interval: Option<String>,
    name: String,
    provider: Provider,
    #[serde(skip_serializing_if = "Option::is_none")]
    success_condition: Option<String>,
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
    strategy: Strategy,
    workload_ref: WorkloadRef,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Selector {
    match_labels: BTreeMap<&'static str, ObjectName>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkloadRef {
    api_version: &'static str,
    kind: &'static str,
    name: ObjectName,
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
    template_name: ObjectName,
}

/// A canary step, a map with one key. Untagged struct variants write exactly that; serde_yaml
/// would write an externally tagged variant as a YAML tag (`!setWeight 1`).
#[derive(Clone, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
enum Step {
    SetWeight { set_weight: u32 },
    Pause { pause: Pause },
    Analysis { analysis: AnalysisRef },
    Experiment { experiment: Experiment },
}

#[derive(Clone, Serialize)]
struct Pause {
    duration: String,
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
    replicas: u32,
    spec_ref: &'static str,
}

/// The name of the AnalysisTemplate of one gate or trigger: `<migration>-accept-<metric>` or
/// `<migration>-rollback-<metric>`.
pub fn template_name(model: &Model, migration: &Migration, metric: MetricId, role: Role) -> String {
    let role = match role {
        Role::Gate => "accept",
        Role::Trigger => "rollback",
    };
    format!("{}-{role}-{}", migration.name, model.metric(metric).name)
}

/// The namespace of a migration's services (`services ... namespace=`, or the Kubernetes
/// target's namespace), with where it is declared.
pub fn service_namespace(settings: &KubernetesSettings, migration: &Migration) -> Spanned<Name> {
    migration.service_namespace.clone().unwrap_or_else(|| Spanned { value: settings.namespace.clone(), span: settings.span })
}

/// Pushes the AnalysisTemplates and Rollouts of every migration with services.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let Some(settings) = &model.project.kubernetes else { return };
    for migration in model.migrations.iter().filter(|migration| !migration.services.is_empty()) {
        let namespace = service_namespace(settings, migration);
        let name = ObjectName::exact(&migration.name, migration.span, "migration");
        match (name, ObjectName::exact(&namespace.value, namespace.span, "namespace")) {
            (Ok(name), Ok(namespace)) => {
                // Selectors and dashboards find a migration's objects by this label.
                let labels = BTreeMap::from([(layout.migration_label.as_str().to_owned(), name.as_str().to_owned())]);
                migration_objects(model, migration, &Placement { namespace, labels }, list, diagnostics);
            }
            (name, namespace) => {
                for diagnostic in [name.err(), namespace.err()].into_iter().flatten() {
                    diagnostics.push(diagnostic);
                }
            }
        }
    }
}

/// Where every object of one migration goes, and the labels they all carry.
struct Placement {
    namespace: ObjectName,
    labels: BTreeMap<String, String>,
}

impl Placement {
    fn meta(&self, kind: &'static Kind, name: ObjectName, span: Span) -> NewObject {
        NewObject { labels: self.labels.clone(), ..NewObject::namespaced(kind, self.namespace.clone(), name, span) }
    }
}

fn migration_objects(model: &Model, migration: &Migration, placement: &Placement, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let mut template = |condition: &Condition, role: Role| {
        let name = ObjectName::fixed(&template_name(model, migration, condition.metric.value, role), condition.metric.span)
            .map_err(|diagnostic| diagnostics.push(diagnostic))
            .ok()?;
        let metric = analysis_metric(model.metric(condition.metric.value).name.to_string(), measure(model, migration, condition, role));
        let spec = AnalysisTemplateSpec { metrics: vec![metric] };
        if let Err(diagnostic) = list.push(placement.meta(&kinds::ANALYSIS_TEMPLATE, name.clone(), condition.span), WithSpec { spec }) {
            diagnostics.push(diagnostic);
        }
        Some(TemplateRef { template_name: name })
    };
    let gates: Vec<TemplateRef> = migration.acceptance.iter().filter_map(|condition| template(condition, Role::Gate)).collect();
    let triggers: Vec<TemplateRef> = migration.rollback.iter().filter_map(|condition| template(condition, Role::Trigger)).collect();
    let steps = steps(migration, &gates, diagnostics);
    for service in &migration.services {
        let name = match ObjectName::exact(&service.value, service.span, "service") {
            Ok(name) => name,
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                continue;
            }
        };
        let spec = RolloutSpec {
            selector: Selector { match_labels: BTreeMap::from([("app.kubernetes.io/name", name.clone())]) },
            strategy: Strategy {
                canary: Canary {
                    analysis: (!triggers.is_empty()).then(|| AnalysisRef { templates: triggers.clone() }),
                    steps: steps.clone(),
                },
            },
            workload_ref: WorkloadRef { api_version: "apps/v1", kind: "Deployment", name: name.clone(), scale_down: "progressively" },
        };
        if let Err(diagnostic) = list.push(placement.meta(&kinds::ROLLOUT, name, service.span), WithSpec { spec }) {
            diagnostics.push(diagnostic);
        }
    }
}

fn analysis_metric(name: String, measurement: Measurement) -> AnalysisMetric {
    let provider = Provider { prometheus: Prometheus { address: PROMETHEUS_ADDRESS, query: measurement.query, timeout: 30 } };
    match measurement.role {
        // One measurement at the end of the phase's hold; the query's window looks back.
        Role::Gate => AnalysisMetric {
            count: Some(1),
            failure_condition: None,
            failure_limit: 0,
            interval: None,
            name,
            provider,
            success_condition: Some(measurement.condition),
        },
        // Measured every minute until the rollout completes; one failure aborts it.
        Role::Trigger => AnalysisMetric {
            count: None,
            failure_condition: Some(measurement.condition),
            failure_limit: 0,
            interval: Some("1m".to_owned()),
            name,
            provider,
            success_condition: None,
        },
    }
}

fn steps(migration: &Migration, gates: &[TemplateRef], diagnostics: &mut Diagnostics) -> Vec<Step> {
    let mut steps = Vec::new();
    for phase in &migration.phases {
        let hold = go_duration(phase.hold);
        let share = phase.basis_points();
        match phase.kind {
            PhaseKind::Shadow => steps.push(Step::Experiment {
                experiment: Experiment {
                    duration: hold,
                    templates: vec![ExperimentTemplate { name: "shadow", replicas: 1, spec_ref: "canary" }],
                },
            }),
            PhaseKind::Canary | PhaseKind::Ramp | PhaseKind::BlueGreen => {
                if share % 100 != 0 {
                    diagnostics.push(
                        Diagnostic::error(Code::InvalidValue, phase.span, "Argo Rollouts weights are whole percents")
                            .label("fractional weight")
                            .help("round the weight to a whole percent, such as `weight=\"1%\"`"),
                    );
                }
                steps.push(Step::SetWeight { set_weight: share / 100 });
                steps.push(Step::Pause { pause: Pause { duration: hold } });
            }
        }
        if !gates.is_empty() {
            steps.push(Step::Analysis { analysis: AnalysisRef { templates: gates.to_vec() } });
        }
    }
    steps
}
