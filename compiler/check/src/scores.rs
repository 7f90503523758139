//! Scores read what the inventory says: a node feature that no node of the inventory provides
//! (no node declares a price, a rack, memory, ...) makes every node score as missing, so the
//! score cannot rank anything (E034).

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::expr::{Expr, NodeFeature};
use placid_lang::model::{Model, Score};

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    if model.nodes.is_empty() {
        // An empty inventory is reported on its own; every feature would be flagged here.
        return;
    }
    for score in &model.scores {
        for expr in expressions(score) {
            for feature in expr.node_features() {
                if !model.nodes.iter().any(|node| feature.inventory_provides(model, node)) {
                    diagnostics.push(unavailable(score, expr, feature, model.nodes.len()));
                }
            }
        }
    }
}

/// The score's expression, then its filters' and penalties' conditions.
fn expressions(score: &Score) -> impl Iterator<Item = &Expr> {
    std::iter::once(&score.expr)
        .chain(score.filters.iter().map(|filter| &filter.expr))
        .chain(score.penalties.iter().map(|penalty| &penalty.when))
}

fn unavailable(score: &Score, expr: &Expr, feature: NodeFeature, nodes: usize) -> Diagnostic {
    Diagnostic::warning(
        Code::ScoreFeatureUnavailable,
        expr.span,
        format!("score `{}` reads `{}`, which no node of the inventory provides", score.name, feature.qualified_name()),
    )
    .label("missing on every node")
    .help(format!(
        "none of the {nodes} nodes declares it ({}), so every node scores as missing; add it to the inventory or drop it from the score",
        feature.inventory_source()
    ))
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::check_project;

    const PRICED: &str = "node \"a\" arch=\"x86_64\" rack=\"r1\" {\n    cost gpu-hour=(usd)2\n    gpu 0 model=\"H200\"\n}\n";
    const UNPRICED: &str = "node \"b\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n";

    /// How many E034 warnings a score made of `expr`, a filter and a penalty gets.
    fn flagged(nodes: &str, expr: &str, filter: &str, when: &str) -> usize {
        let policy = format!(
            "score \"s\" {{\n    prefer \"min\"\n    expr \"{expr}\"\n    filter \"f\" \"{filter}\"\n    penalty 1 when=\"{when}\"\n}}\n"
        );
        let (_, diagnostics) = check_project("", nodes, &policy);
        diagnostics.iter().filter(|diagnostic| diagnostic.code == Code::ScoreFeatureUnavailable).count()
    }

    #[test]
    fn a_feature_no_node_provides_is_flagged_in_the_expression_filters_and_penalties() {
        assert_eq!(flagged(UNPRICED, "node.cost_per_gpu_hour", "node.gpus > 0", "node.gpus > 1"), 1);
        assert_eq!(flagged(UNPRICED, "node.gpus", "node.cost_per_gpu_hour > 1", "node.rack == job.rack"), 2);
    }

    #[test]
    fn a_feature_one_node_provides_is_not() {
        assert_eq!(flagged(&format!("{PRICED}{UNPRICED}"), "node.cost_per_gpu_hour", "node.gpus > 0", "node.rack == job.rack"), 0);
        assert_eq!(flagged(UNPRICED, "node.gpus + node.nvlink_utilization", "node.gpus_free > 0", "node.cpus > 1"), 0);
    }
}
