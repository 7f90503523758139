//! Tests of the expression language through one helper per outcome: `ok` (parses and has the
//! expected tree shape) and `fails` (code, caret range inside the text, message fragment).

use super::*;
use crate::span::FileId;

const FILE: FileId = FileId(0);

fn span_of(text: &str) -> Span {
    Span::new(FILE, 100, 100 + text.len())
}

fn ok(text: &str, expected: Type) -> Expr {
    match parse(text, span_of(text), expected) {
        Ok(expr) => expr,
        Err(diagnostics) => panic!("`{text}` failed: {diagnostics:?}"),
    }
}

/// Asserts that `text` fails with `code`, the primary span covering `caret` (a substring of
/// `text`, first occurrence; empty for the end of the text), and a message containing `message`; returns the help line.
fn fails(text: &str, expected: Type, code: Code, caret: &str, message: &str) -> Option<String> {
    let diagnostics = match parse(text, span_of(text), expected) {
        Ok(expr) => panic!("`{text}` parsed: {expr:?}"),
        Err(diagnostics) => diagnostics.into_vec(),
    };
    let first = &diagnostics[0];
    assert_eq!(first.code, code, "{first:?}");
    let offset = if caret.is_empty() { text.len() } else { text.find(caret).unwrap_or_else(|| panic!("caret `{caret}` not in `{text}`")) };
    assert_eq!(
        (first.primary.span.start as usize - 100, first.primary.span.end as usize - 100),
        (offset, offset + caret.len()),
        "span of {first:?}"
    );
    assert!(first.message.contains(message), "message `{}` lacks `{message}`", first.message);
    first.help.clone()
}

#[test]
fn example_score_parses() {
    let expr = ok("node.cost_per_gpu_hour / (1 + 0.8 * job.comm_gbps / max(node.nvlink_gbps, 1))", Type::Number);
    assert_eq!(expr.node_features(), vec![NodeFeature::CostPerGpuHour, NodeFeature::NvlinkGbps]);
    assert_eq!(expr.job_params(), vec![JobParam::CommGbps]);
    let penalty = ok("job.comm == high && node.rack != job.rack", Type::Bool);
    let Node::Logic(Logic::And, left, right) = penalty.root else { panic!("not an and") };
    assert_eq!(*left, Node::Compare(Compare::Eq, Box::new(Node::Param(JobParam::Comm)), Box::new(Node::Const(2.0))));
    assert!(matches!(*right, Node::Compare(Compare::Ne, _, _)));
}

#[test]
fn precedence_and_associativity() {
    let expr = ok("1 - 2 - 3 * 4", Type::Number);
    let Node::Arith(Arith::Sub, left, right) = expr.root else { panic!() };
    assert!(matches!(*left, Node::Arith(Arith::Sub, _, _)));
    assert!(matches!(*right, Node::Arith(Arith::Mul, _, _)));
    ok("!job.nvlink_required || node.nvlink_gbps > 0 && node.gpus >= 2", Type::Bool);
    ok("-node.gpus + if(node.mig, 1, 0) * clamp(node.gpus_free, 0, 8)", Type::Number);
    ok("high == job.comm", Type::Bool);
    ok("default(node.cost_per_gpu_hour, 10) + round(1.5e1) - sqrt(abs(-4)) + floor(.5) + ceil(0.2)", Type::Number);
    ok("missing(node.rack) || node.arch == riscv64 && node.capacity != on_demand", Type::Bool);
}

#[test]
fn syntax_errors_point_at_the_token() {
    fails("node.gpus +", Type::Number, Code::ExpressionSyntax, "", "ends where");
    fails("node.gpus $ 2", Type::Number, Code::ExpressionSyntax, "$", "unexpected character");
    fails("(node.gpus + 1", Type::Number, Code::ExpressionSyntax, "(", "unclosed");
    fails("node.gpus + 1)", Type::Number, Code::ExpressionSyntax, ")", "unbalanced");
    fails("node.memory_gib > 512GiB", Type::Bool, Code::ExpressionSyntax, "512GiB", "no units");
    fails("1 < 2 > 3", Type::Bool, Code::ExpressionSyntax, ">", "do not chain");
    fails("max(1 2)", Type::Number, Code::ExpressionSyntax, "2", "`,` or `)`");
    fails("node.", Type::Number, Code::ExpressionSyntax, "", "a name after");
}

#[test]
fn too_deep_or_too_long_is_refused() {
    let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
    let diagnostics = parse(&deep, span_of(&deep), Type::Number).err().map(Diagnostics::into_vec).unwrap_or_default();
    assert!(diagnostics[0].message.contains("nests deeper"));
    let long = vec!["1"; 400].join("+");
    let diagnostics = parse(&long, span_of(&long), Type::Number).err().map(Diagnostics::into_vec).unwrap_or_default();
    assert!(diagnostics[0].message.contains("longer than"));
}

#[test]
fn unknown_features_suggest_the_closest() {
    let help = fails("node.gpu_free >= job.gpus", Type::Bool, Code::ExpressionType, "node.gpu_free", "unknown node feature");
    assert_eq!(help.as_deref(), Some("did you mean `gpus_free`?"));
    let help = fails("job.com == high", Type::Bool, Code::ExpressionType, "job.com", "unknown job parameter");
    assert_eq!(help.as_deref(), Some("did you mean `comm`?"));
    let help = fails("gpus_free > 1", Type::Bool, Code::ExpressionType, "gpus_free", "unknown name");
    assert_eq!(help.as_deref(), Some("did you mean `node.gpus_free`?"));
    let help = fails("maxx(1, 2)", Type::Number, Code::ExpressionType, "maxx", "unknown function");
    assert_eq!(help.as_deref(), Some("did you mean `max`?"));
    let help = fails("job.comm == hihg", Type::Bool, Code::ExpressionType, "hihg", "not a comm value");
    assert_eq!(help.as_deref(), Some("did you mean `high`?"));
}

#[test]
fn type_errors_point_at_the_operand() {
    fails("node.gpus + node.mig", Type::Number, Code::ExpressionType, "node.mig", "expected a number, found a bool");
    fails("node.rack < job.rack", Type::Bool, Code::ExpressionType, "node.rack", "found a rack");
    fails("node.rack != job.comm", Type::Bool, Code::ExpressionType, "job.comm", "cannot compare a rack with a comm");
    fails("node.rack == r1", Type::Bool, Code::ExpressionType, "r1", "interned by the host");
    fails("node.gpus", Type::Bool, Code::ExpressionType, "node.gpus", "expected a bool, found a number");
    fails("min(1)", Type::Number, Code::ExpressionType, "min(1)", "does not take 1 argument");
    fails("if(node.gpus, 1, 2)", Type::Number, Code::ExpressionType, "node.gpus", "expected a bool");
    fails("if(node.mig, 1, job.nvlink_required)", Type::Number, Code::ExpressionType, "job.nvlink_required", "expected a number");
}

#[test]
fn every_error_of_an_expression_is_reported() {
    let text = "node.gpuz + job.gpux";
    let diagnostics = parse(text, span_of(text), Type::Number).err().map(Diagnostics::into_vec).unwrap_or_default();
    assert_eq!(diagnostics.len(), 2);
}

#[test]
fn telemetry_features_type_check_in_their_scopes() {
    let expr = ok("node.cost_per_gpu_hour * (1 + domain.nvlink_utilization) + node.nvlink_utilization", Type::Number);
    assert_eq!(
        expr.node_features(),
        vec![NodeFeature::CostPerGpuHour, NodeFeature::NvlinkUtilization, NodeFeature::DomainNvlinkUtilization]
    );
    assert_eq!(NodeFeature::DomainNvlinkUtilization.qualified_name(), "domain.nvlink_utilization");
    fails("domain.nvlink_utilization && true", Type::Bool, Code::ExpressionType, "domain.nvlink_utilization", "number");
    let help =
        fails("domain.nvlink_utilisation", Type::Number, Code::ExpressionType, "domain.nvlink_utilisation", "unknown domain feature");
    assert_eq!(help.as_deref(), Some("did you mean `nvlink_utilization`?"));
    // `domain.*` holds only the domain's figures, not the node's.
    fails("domain.gpus", Type::Number, Code::ExpressionType, "domain.gpus", "unknown domain feature");
}
