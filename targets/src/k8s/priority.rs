//! Tiers as priority classes: a Kueue WorkloadPriorityClass (orders queueing and Kueue
//! preemption) and a PriorityClass (pod priority for kube-scheduler preemption and eviction).
//!
//! Invariants: a PriorityClass value is at most 1e9 and its name never starts with `system-`
//! (the API server refuses both; E052, E053). Its value and `preemptionPolicy` are immutable,
//! so the value is part of the name (`p0-1000`) and the kind is synced with `Replace=true`.
//! A tier preempts in kube-scheduler only when a preemptible tier ranks below it.

use k8s_openapi::api::scheduling::v1::PriorityClass;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, Preemption, Tier};
use serde::Serialize;

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::objects::{NewObject, ObjectList};

/// `HighestUserDefinablePriority` (k8s `pkg/apis/scheduling/types.go`).
const MAX_USER_PRIORITY: u32 = 1_000_000_000;

#[derive(Serialize)]
struct WorkloadPriorityClass {
    value: u32,
    description: String,
}

fn description(tier: &Tier) -> String {
    match tier.preemption.value {
        Preemption::Never => format!("placid tier {} (priority {}): never preempted", tier.name, tier.priority.value),
        Preemption::Window { window, mode } => {
            format!("placid tier {} (priority {}): preempted after {window} by {}", tier.name, tier.priority.value, mode.as_str())
        }
    }
}

/// Checks what the API server would refuse, then pushes both classes of every tier.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    for (index, tier) in model.tiers.iter().enumerate() {
        let names = &layout.tiers[index];
        let value = tier.priority.value;
        if value > MAX_USER_PRIORITY {
            diagnostics.push(
                Diagnostic::error(Code::PriorityClassOutOfRange, tier.priority.span, format!("priority {value} is above 1000000000"))
                    .label("too high for a PriorityClass")
                    .help("Kubernetes reserves higher values for system pods; only the order of tiers matters, so scale them down"),
            );
            continue;
        }
        if names.priority_class.as_str().starts_with("system-") {
            diagnostics.push(
                Diagnostic::error(
                    Code::PriorityClassReservedName,
                    tier.span,
                    format!("tier `{}` would become PriorityClass `{}`", tier.name, names.priority_class),
                )
                .label("`system-` is reserved")
                .help("rename the tier; Kubernetes keeps `system-` PriorityClasses for itself"),
            );
            continue;
        }
        let preempts_someone = model.tiers.iter().any(|other| tier.preempts(other));
        let class = PriorityClass {
            value: value as i32,
            preemption_policy: Some(if preempts_someone { "PreemptLowerPriority" } else { "Never" }.to_owned()),
            global_default: Some(false),
            description: Some(description(tier)),
            ..PriorityClass::default()
        };
        if let Err(diagnostic) = list.push(NewObject::cluster(&kinds::PRIORITY_CLASS, names.priority_class.clone(), tier.span), class) {
            diagnostics.push(diagnostic);
        }
        let workload_class = WorkloadPriorityClass { value, description: description(tier) };
        if let Err(diagnostic) =
            list.push(NewObject::cluster(&kinds::WORKLOAD_PRIORITY_CLASS, names.object.clone(), tier.span), workload_class)
        {
            diagnostics.push(diagnostic);
        }
    }
}
