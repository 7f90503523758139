//! The alerts' runbook page, `runbooks/alerts.md` ([`PAGE`]), which every alert's `runbook_url`
//! links ([`url`]): per alert, when it fires, the PromQL it evaluates, and the playbooks to run.
//!
//! Invariant: the page shows the rule [`crate::ops::alerting::rule`] builds, the same one the
//! PrometheusRule and promtool's files carry, so it cannot describe another condition. Free
//! text from the policy (PromQL) appears only inside fences longer than any backtick run in it.

use std::fmt::Write as _;

use placid_lang::model::{Alert, Model};

use super::playbooks;
use super::{GENERATED, fenced};
use crate::Artifact;
use crate::ops::alerting::{self, PAGE, anchor, url};
use crate::ops::rule::Rule;

/// Whether the build has the page: the alerts reach Prometheus through the Kubernetes target.
pub fn has_page(model: &Model) -> bool {
    !model.alerts.is_empty() && model.project.kubernetes.is_some()
}

/// The page, when [`has_page`]; alerts whose rule cannot be built (E057) are left out, and
/// the build reports them.
pub fn emit(model: &Model) -> Option<Artifact> {
    if !has_page(model) {
        return None;
    }
    let mut page = format!("# Alerts\n\n{GENERATED}\n");
    for alert in &model.alerts {
        if let Ok(rule) = alerting::rule(model, alert, url(model, alert)) {
            let _ = write_section(&mut page, model, alert, &rule);
        }
    }
    Some(Artifact::text(PAGE, page))
}

fn write_section(out: &mut String, model: &Model, alert: &Alert, rule: &Rule) -> std::fmt::Result {
    let metric = model.metric(alert.condition.metric.value);
    writeln!(out, "\n<a id=\"{}\"></a>\n", anchor(alert))?;
    writeln!(out, "## `{}` ({}, {})\n", alert.name, rule.alert.as_deref().unwrap_or_default(), alert.severity.as_str())?;
    if let Some(summary) = rule.annotations.get("summary") {
        writeln!(out, "Fires when {summary}. Prometheus evaluates:\n")?;
    }
    out.push_str(&fenced("promql", &rule.expr));
    writeln!(out, "\n`{}` records the policy's metric `{}`:\n", alerting::metric_series(metric), metric.name)?;
    out.push_str(&fenced("promql", &metric.query.value));
    writeln!(out, "\nWhat to run:\n")?;
    for playbook in playbooks::written(model) {
        // The page is under runbooks/, like the playbooks.
        let page = playbook.page.trim_start_matches("runbooks/");
        writeln!(out, "- {}: [{}]({page}.md)", playbook.when, playbook.title)?;
    }
    writeln!(
        out,
        "- `placid simulate` with the policy and a recent trace shows whether the threshold is reached by design (quotas, shares) or by a fault"
    )?;
    Ok(())
}
