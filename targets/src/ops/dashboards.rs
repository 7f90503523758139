//! The Grafana dashboard of the policy: NVLink utilisation per domain, queue wait and
//! admitted GPUs per tier, cost against budget per team and per cost center, preemptions and
//! the GPU-hours interruptions lost, and
//! each migration's gates on its target pool. Shipped in a ConfigMap labelled for Grafana's
//! dashboard sidecar (k8s/alerts.rs); every panel's PromQL is also written as a recording rule
//! of a file promtool checks ([`check_rules`]), since Grafana would only say so on screen.
//!
//! Panels read placid's series (the exporter, the static series, the recording rules of
//! [`super::usage`]), kube-state-metrics' pod series and Kueue's preemption counter
//! ([`EXTERNAL`]); a migration's gates are the policy's own queries, as its AnalysisTemplates
//! run them.

use placid_lang::model::Model;
use serde_json::{Value, json};

use super::rule::{Group, Rule};
use super::{series, usage};
use crate::migration::analysis::{Role, measure};

/// Series of other exporters the panels read beside those of [`usage::EXTERNAL`]:
/// kube-state-metrics' pod creation time, and Kueue's preemption counter.
pub const EXTERNAL: &[&str] = &["kube_pod_created", "kueue_preempted_workloads_total"];

/// One query of a panel.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// The series' legend (`{{tier}}`).
    pub legend: String,
    /// PromQL.
    pub expr: String,
    /// Whether the policy wrote it (a migration gate): it may read any exporter's series.
    pub from_policy: bool,
}

/// One panel.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Its title.
    pub title: String,
    /// Grafana's unit (`percentunit`, `s`, `none`).
    pub unit: &'static str,
    /// Its queries.
    pub queries: Vec<Query>,
}

fn query(legend: &str, expr: String) -> Query {
    Query { legend: legend.to_owned(), expr, from_policy: false }
}

fn panel(title: &str, unit: &'static str, queries: Vec<Query>) -> Panel {
    Panel { title: title.to_owned(), unit, queries }
}

/// The panels of `model`, in display order.
pub fn panels(model: &Model) -> Vec<Panel> {
    // One pod's labels as a 1, to carry `tier` onto kube-state-metrics' pod series.
    let pod_tier = usage::pod_join(usage::POD_GPUS);
    let mut panels = vec![
        panel("NVLink utilisation per domain", "percentunit", vec![query("{{nvlink_domain}}", usage::DOMAIN_UTILIZATION.to_owned())]),
        panel(
            "Queue wait per tier (pods started in the window)",
            "s",
            vec![query(
                "{{tier}}",
                format!("avg by (tier) (({} - kube_pod_created) * on (namespace, pod) group_left (tier) {pod_tier})", usage::POD_STARTED),
            )],
        ),
        panel(
            "Admitted GPUs per tier",
            "none",
            vec![query(
                "{{tier}}",
                format!(
                    "sum by (tier) ({} * on (namespace, pod) group_left () ({}{{phase=\"Running\"}} == 1))",
                    usage::POD_GPUS,
                    usage::POD_PHASE
                ),
            )],
        ),
        panel(
            "Cost against daily budget per team",
            "percentunit",
            vec![query("{{team}}", format!("{} / on (team, cost_center, currency) {}", usage::COST_DAILY, series::TEAM_BUDGET))],
        ),
        panel(
            "Cost against daily budget per cost center",
            "percentunit",
            vec![query(
                "{{cost_center}}",
                format!("sum by (cost_center, currency) ({}) / on (cost_center, currency) {}", usage::COST_DAILY, series::BUDGET),
            )],
        ),
        panel(
            "Cost per hour per converged model",
            "none",
            vec![
                query("{{team}} {{stage}} ({{currency}})", usage::MODEL_COST.to_owned()),
                query("NVLink premium {{team}} {{stage}}", usage::MODEL_NVLINK_PREMIUM.to_owned()),
                query("egress {{team}} {{stage}}", usage::MODEL_EGRESS_COST.to_owned()),
            ],
        ),
        panel(
            "GPU-hours lost to interruptions in the last hour, per tier",
            "none",
            vec![query("{{tier}}", usage::TIER_LOST_GPU_HOURS.to_owned())],
        ),
        panel(
            "Preemptions per hour",
            "none",
            vec![query(
                "{{preempting_cluster_queue}} {{reason}}",
                "sum by (preempting_cluster_queue, reason) (increase(kueue_preempted_workloads_total[1h]))".to_owned(),
            )],
        ),
    ];
    for migration in &model.migrations {
        let conditions = migration
            .acceptance
            .iter()
            .map(|condition| (condition, Role::Gate))
            .chain(migration.rollback.iter().map(|condition| (condition, Role::Trigger)));
        let queries: Vec<Query> = conditions
            .map(|(condition, role)| {
                let measurement = measure(model, migration, condition, role);
                Query { legend: measurement.summary, expr: measurement.query, from_policy: true }
            })
            .collect();
        if !queries.is_empty() {
            panels.push(panel(&format!("Migration {} gates and triggers", migration.name), "none", queries));
        }
    }
    panels
}

/// The dashboard JSON (Grafana's schema 39), with a Prometheus data source variable.
pub fn dashboard(project: &str, panels: &[Panel]) -> Value {
    let uid: String = format!("placid-{project}").chars().take(40).collect();
    let panels: Vec<Value> = panels
        .iter()
        .enumerate()
        .map(|(index, panel)| {
            let targets: Vec<Value> = panel
                .queries
                .iter()
                .enumerate()
                .map(|(number, query)| {
                    let ref_id: String = char::from_u32(u32::from(b'A') + u32::try_from(number % 26).unwrap_or(0)).map(String::from).unwrap_or_default();
                    json!({"refId": format!("{ref_id}{}", number / 26), "expr": query.expr, "legendFormat": query.legend, "datasource": {"type": "prometheus", "uid": "${datasource}"}})
                })
                .collect();
            json!({
                "id": index + 1,
                "type": "timeseries",
                "title": panel.title,
                "gridPos": {"h": 8, "w": 12, "x": (index % 2) * 12, "y": (index / 2) * 8},
                "datasource": {"type": "prometheus", "uid": "${datasource}"},
                "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
                "targets": targets,
            })
        })
        .collect();
    json!({
        "uid": uid,
        "title": format!("placid: {project}"),
        "tags": ["placid"],
        "schemaVersion": 39,
        "editable": false,
        "time": {"from": "now-24h", "to": "now"},
        "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"}]},
        "panels": panels,
    })
}

/// Every panel query as a recording rule `placid_dashboard:panel_<n>_<m>`, or
/// `placid_dashboard:policy_<n>_<m>` for the queries the policy wrote, for `promtool check
/// rules` (the rules are never loaded into a Prometheus).
pub fn check_rules(project: &str, panels: &[Panel]) -> Group {
    let rules = panels
        .iter()
        .enumerate()
        .flat_map(|(index, panel)| {
            panel.queries.iter().enumerate().map(move |(number, query)| {
                let kind = if query.from_policy { "policy" } else { "panel" };
                Rule::record(&format!("placid_dashboard:{kind}_{}_{}", index + 1, number + 1), query.expr.clone())
            })
        })
        .collect();
    Group { name: format!("placid.{project}.dashboard"), rules }
}
