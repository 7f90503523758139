//! Scoring rules (`score` with `prefer`, `expr`, `filter` and `penalty`): the expression
//! strings are parsed and type-checked here, pointing diagnostics inside the KDL string, so
//! targets only ever see well-typed expressions.

use crate::diag::{Code, Diagnostic};
use crate::expr::{self, Type};
use crate::lower::context::Cx;
use crate::lower::names::{Declarations, Tables, lower_kind};
use crate::lower::reader::{NodeReader, Value};
use crate::lower::schema;
use crate::model::{Direction, Filter, Model, Penalty, Score, ScoreId};
use crate::name::Name;
use crate::source::Sources;
use crate::span::Spanned;

pub(super) fn lower(cx: &mut Cx, sources: &Sources, model: &mut Model, tables: &mut Tables, nodes: &[NodeReader<'_>]) {
    let mut scores = Vec::new();
    lower_kind(cx, "score", nodes, &mut tables.scores, &mut scores, ScoreId::from_index, |cx, node, name| {
        lower_score(cx, sources, node, name)
    });
    model.scores = scores;
}

fn lower_score(cx: &mut Cx, sources: &Sources, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<Score> {
    node.props(cx, schema::SCORE.properties);
    let children = node.children(cx, schema::SCORE.children);
    let file_text = sources.get(node.file).map(|file| file.text.as_str()).unwrap_or_default();
    let direction = match NodeReader::single(cx, &children, "prefer") {
        Some(child) => child
            .leaf_args(cx, 1, 1, "min or max")
            .and_then(|args| args[0].keyword(cx, &[("min", Direction::Min), ("max", Direction::Max)])),
        None => {
            cx.error(
                Diagnostic::error(
                    Code::MissingValue,
                    node.name_span(),
                    format!("score `{}` needs `prefer \"min\"` or `prefer \"max\"`", name.value),
                )
                .label("no `prefer`")
                .help("say whether lower or higher scores win"),
            );
            None
        }
    };
    let parse_expr = |cx: &mut Cx, value: Value<'_>, expected: Type| -> Option<expr::Expr> {
        let text = value.string(cx)?;
        match expr::parse(&text.value, value.content_span(file_text), expected) {
            Ok(parsed) => Some(parsed),
            Err(diagnostics) => {
                cx.diagnostics.extend(diagnostics);
                None
            }
        }
    };
    let score_expr = match NodeReader::single(cx, &children, "expr") {
        Some(child) => child.leaf_args(cx, 1, 1, "an expression string").and_then(|args| parse_expr(cx, args[0], Type::Number)),
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("score `{}` needs an `expr`", name.value))
                    .label("no `expr`")
                    .help("add `expr \"node.cost_per_gpu_hour\"` or another numeric expression"),
            );
            None
        }
    };
    let mut ok = true;
    let mut filters = Vec::new();
    let mut filter_names = Declarations::new("filter");
    let mut penalties = Vec::new();
    for child in &children {
        match child.kind() {
            "filter" => {
                let Some(args) = child.leaf_args(cx, 2, 2, "a name and a condition") else {
                    ok = false;
                    continue;
                };
                let filter_name = args[0].name(cx);
                let condition = parse_expr(cx, args[1], Type::Bool);
                match (filter_name, condition) {
                    (Some(filter_name), Some(condition)) if filter_names.declare(cx, &filter_name) => {
                        filters.push(Filter { name: filter_name.value, expr: condition })
                    }
                    _ => ok = false,
                }
            }
            "penalty" => {
                let props = child.props(cx, schema::SCORE_PENALTY.properties);
                child.children(cx, &[]);
                let amount = child.expect_args(cx, 1, 1, "an amount").and_then(|args| args[0].number(cx));
                let when = props.require(cx, child, "when").and_then(|value| parse_expr(cx, value, Type::Bool));
                match (amount, when) {
                    (Some(amount), Some(when)) => penalties.push(Penalty { span: child.name_span(), amount, when }),
                    _ => ok = false,
                }
            }
            _ => {}
        }
    }
    if filters.len() > 32 {
        cx.error(
            Diagnostic::error(
                Code::InvalidValue,
                node.name_span(),
                format!("score `{}` has {} filters; at most 32 fit the failure bitmask", name.value, filters.len()),
            )
            .label("too many filters")
            .help("combine related conditions into one filter with `&&`"),
        );
        ok = false;
    }
    if !ok {
        return None;
    }
    Some(Score { name: name.value, span: name.span, direction: direction?, expr: score_expr?, filters, penalties })
}
