//! `backfill #false` on Slurm: the engine never backfills such a tier, but Slurm's backfill
//! scheduler is one for the whole cluster, with no partition option or QOS flag to exempt a
//! tier (docs/targets/slurm.md), so a tier that says `backfill #false` is told, at the span,
//! that Slurm may still start its jobs out of order. A tier that writes nothing gets no
//! warning: not backfilling is the default, and the docs say how it maps.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::Model;

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
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
    use placid_lang::source::MemoryWorld;

    /// Every code `check` reports for a tier with `backfill` line `backfill` (none when empty),
    /// with the Slurm target enabled or not.
    fn codes(backfill: &str, slurm: bool) -> Vec<Code> {
        let mut world = MemoryWorld::new();
        let target = if slurm { "target \"slurm\" version=\"22.05\" cluster=\"t\"\n" } else { "" };
        world.insert("placid.kdl", format!("project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n{target}"));
        world.insert("nodes.kdl", "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n");
        world.insert(
            "policy.kdl",
            format!(
                "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"p0\" {{\n    priority 1\n    preemption \"never\"\n    {backfill}\n}}\nteam \"t\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"p0\"\n}}\n"
            ),
        );
        let compilation = placid_lang::load(&world);
        let (_, diagnostics) = super::super::check(compilation.model, compilation.diagnostics);
        diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn backfill_false_warns_only_when_written_and_slurm_is_enabled() {
        assert_eq!(codes("backfill #false", true), [Code::BackfillOffOnSlurm]);
        assert_eq!(codes("backfill #false", false), []);
        assert_eq!(codes("backfill #true", true), []);
        assert_eq!(codes("", true), []);
    }
}
