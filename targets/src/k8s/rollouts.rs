//! Migrations in the Kubernetes tree: the Argo Rollouts `AnalysisTemplate`s and `Rollout`s that
//! [`crate::migration`] plans from the model are pushed through the same object list as every
//! other object, so they get placid's metadata, a sync wave after the queues, and a place in
//! the kustomization and in Argo CD's whitelist.

use std::collections::BTreeMap;

use placid_check::Checked;
use placid_lang::diag::Diagnostics;

use crate::k8s::kinds;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList};
use crate::migration;

pub(crate) fn emit(model: &Checked, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let objects = match migration::kubernetes_objects(model) {
        Ok(objects) => objects,
        Err(errors) => {
            diagnostics.extend(errors);
            return;
        }
    };
    // A generated object belongs to the migration it was planned from; the migration's span is
    // where a naming problem is reported.
    let span_of = |name: &str| {
        model
            .migrations
            .iter()
            .find(|migration| name.starts_with(migration.name.as_str()) || name.contains(migration.name.as_str()))
            .or(model.migrations.first())
            .map_or(model.project.span, |migration| migration.span)
    };
    for object in objects {
        let kind = if object.kind == kinds::ROLLOUT.kind { &kinds::ROLLOUT } else { &kinds::ANALYSIS_TEMPLATE };
        let span = span_of(&object.name);
        let names =
            ObjectName::fixed(&object.namespace, span).and_then(|namespace| Ok((namespace, ObjectName::fixed(&object.name, span)?)));
        let pushed = names.and_then(|(namespace, name)| {
            let mut meta = NewObject::namespaced(kind, namespace, name, span);
            // The list writes placid's metadata in place of the planned object's; the plan's own
            // labels (`<prefix>/migration`, which selectors and dashboards match) carry over.
            meta.labels = planned_labels(&object.value);
            list.push(meta, &object.value)
        });
        if let Err(diagnostic) = pushed {
            diagnostics.push(diagnostic);
        }
    }
}

/// `metadata.labels` of a planned object.
fn planned_labels(value: &serde_json::Value) -> BTreeMap<String, String> {
    let labels = value.pointer("/metadata/labels").and_then(serde_json::Value::as_object);
    labels.into_iter().flatten().filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned()))).collect()
}
