//! What the passes' unit tests share: one small project (`placid.kdl` naming `nodes.kdl` and
//! `policy.kdl`, plus any `target` lines) loaded and checked as `placid check` would, so each
//! test states only its inventory and policy.

use placid_lang::Compilation;
use placid_lang::checked::Verdict;
use placid_lang::diag::Diagnostics;
use placid_lang::source::MemoryWorld;

/// Loads and checks a project of `targets` (whole `target ...` lines, or nothing), the
/// inventory `nodes` and the policy `policy`.
pub(crate) fn check_project(targets: &str, nodes: &str, policy: &str) -> (Verdict, Diagnostics) {
    let compilation = load_project(targets, nodes, policy);
    crate::check(compilation.model, compilation.diagnostics)
}

/// The codes of the errors (not the warnings) that checking that project reports, in order.
pub(crate) fn error_codes(targets: &str, nodes: &str, policy: &str) -> Vec<placid_lang::diag::Code> {
    let (_, diagnostics) = check_project(targets, nodes, policy);
    diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.severity == placid_lang::diag::Severity::Error)
        .map(|diagnostic| diagnostic.code)
        .collect()
}

/// The same project loaded but not checked, for a test of one pass alone.
pub(crate) fn load_project(targets: &str, nodes: &str, policy: &str) -> Compilation {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", format!("project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n{targets}"));
    world.insert("nodes.kdl", nodes);
    world.insert("policy.kdl", policy);
    placid_lang::load(&world)
}
