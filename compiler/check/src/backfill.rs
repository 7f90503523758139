//! `backfill #false` on Slurm: the engine never backfills such a tier, but Slurm's backfill
//! scheduler is one for the whole cluster, with no partition option or QOS flag to exempt a
//! tier (docs/targets/slurm.md), so a tier that says `backfill #false` is told, at the span,
//! that Slurm may still start its jobs out of order. A tier that writes nothing gets no
//! warning: not backfilling is the default, and the docs say how it maps.
//!
//! `backfill #true` on Kubernetes: Kueue orders per ClusterQueue (`queueingStrategy`), and a
//! team's queue admits all its tiers that have no queue of their own. Where one of them may not
//! backfill the queue is `StrictFIFO`, so order is kept and the backfilling tier's jobs wait in
//! order there too: the warning names the tier that holds them (E144).

use std::collections::BTreeSet;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, TierId};

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    slurm(model, diagnostics);
    kubernetes(model, diagnostics);
}

fn kubernetes(model: &Model, diagnostics: &mut Diagnostics) {
    if model.project.kubernetes.is_none() {
        return;
    }
    let mut warned = BTreeSet::new();
    for team in &model.teams {
        let shared: Vec<TierId> =
            team.tiers.iter().map(|tier| tier.value).filter(|tier| !model.tier(*tier).runs_on_reservations()).collect();
        let Some(ordered) = shared.iter().map(|tier| model.tier(*tier)).find(|tier| !tier.backfill) else { continue };
        for id in shared.iter().filter(|tier| model.tier(**tier).backfill) {
            let tier = model.tier(*id);
            let Some(span) = tier.backfill_span.filter(|_| warned.insert(*id)) else { continue };
            diagnostics.push(
                Diagnostic::warning(
                    Code::BackfillInStrictQueue,
                    span,
                    format!(
                        "on Kubernetes, tier `{}` cannot backfill in team `{}`'s ClusterQueue: tier `{}` shares it and may not",
                        tier.name, team.name, ordered.name
                    ),
                )
                .label("Kueue queues this tier's jobs in order")
                .with_secondary(ordered.span, "keeps the team's queue StrictFIFO")
                .help(format!("give tier `{}` `backfill #true`, or move one of the tiers to another team", ordered.name)),
            );
        }
    }
}

fn slurm(model: &Model, diagnostics: &mut Diagnostics) {
    if model.project.slurm.is_none() {
        return;
    }
    for tier in model.tiers.iter().filter(|tier| !tier.backfill) {
        let Some(span) = tier.backfill_span else {
            continue;
        };
        diagnostics.push(
            Diagnostic::warning(
                Code::BackfillOffOnSlurm,
                span,
                format!("Slurm cannot keep tier `{}`'s jobs out of backfill: its backfill scheduler is cluster-wide", tier.name),
            )
            .label("the engine honours it, Slurm only keeps the full time limit")
            .help(
                "drop `backfill #false`, or accept that Slurm's backfill may start these jobs early without delaying higher-priority ones",
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::check_project;

    /// One node with one GPU.
    const NODE: &str = "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n";

    /// Every code `check` reports for a tier with `backfill` line `backfill` (none when empty),
    /// with the Slurm target enabled or not.
    fn codes(backfill: &str, slurm: bool) -> Vec<Code> {
        let target = if slurm { "target \"slurm\" version=\"22.05\" cluster=\"t\"\n" } else { "" };
        let (_, diagnostics) = check_project(
            target,
            NODE,
            &format!(
                "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"p0\" {{\n    priority 1\n    preemption \"never\"\n    {backfill}\n}}\nteam \"t\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"p0\"\n}}\n"
            ),
        );
        diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
    }

    /// The codes for a team with two preemptible tiers sharing its Kubernetes queue, the first
    /// with backfill line `first`, the second backfilling.
    fn shared_queue_codes(first: &str) -> Vec<Code> {
        let tier = |name: &str, priority: u32, backfill: &str| {
            format!("tier \"{name}\" {{\n    priority {priority}\n    preemption window=\"1m\"\n    {backfill}\n}}\n")
        };
        let (_, diagnostics) = check_project(
            "target \"kubernetes\" version=\"1.34\"\n",
            NODE,
            &format!(
                "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\n{}{}team \"t\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"hi\" \"lo\"\n}}\n",
                tier("hi", 2, first),
                tier("lo", 1, "backfill #true")
            ),
        );
        diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn a_backfilling_tier_in_a_strict_kubernetes_queue_is_warned() {
        assert_eq!(shared_queue_codes(""), [Code::BackfillInStrictQueue]);
        assert_eq!(shared_queue_codes("backfill #true"), []);
    }

    #[test]
    fn backfill_false_warns_only_when_written_and_slurm_is_enabled() {
        assert_eq!(codes("backfill #false", true), [Code::BackfillOffOnSlurm]);
        assert_eq!(codes("backfill #false", false), []);
        assert_eq!(codes("backfill #true", true), []);
        assert_eq!(codes("", true), []);
    }
}
