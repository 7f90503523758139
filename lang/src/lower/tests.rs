//! Policy tests: a job and the placement or rejection the team expects, like `opa test`.

use crate::diag::{Code, Diagnostic};
use crate::lower::names::Names;
use crate::lower::policy::{Tables, lower_kind};
use crate::lower::reader::{Cx, NodeReader, Optional};
use crate::model::{Expectation, Model, PolicyTest, TestId, TestJob};
use crate::name::Name;
use crate::span::Spanned;

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
    let mut names = Names::new("test");
    let mut tests = Vec::new();
    lower_kind(cx, "test", nodes, &mut names, &mut tests, TestId::from_index, |cx, node, name| lower_test(cx, tables, node, name));
    model.tests = tests;
}

fn lower_test(cx: &mut Cx, tables: &Tables, node: &NodeReader<'_>, name: Spanned<Name>) -> Option<PolicyTest> {
    node.props(cx, &[]);
    let children = node.children(cx, &["job", "expect"]);
    let job = match NodeReader::single(cx, &children, "job") {
        Some(child) => {
            let props = child.props(cx, &["team", "tier", "class", "gpus", "pool"]);
            child.children(cx, &[]);
            let team = props
                .require(cx, child, "team")
                .and_then(|value| value.name(cx))
                .and_then(|reference| tables.teams.resolve(cx, &reference));
            let tier = props
                .require(cx, child, "tier")
                .and_then(|value| value.name(cx))
                .and_then(|reference| tables.tiers.resolve(cx, &reference));
            let class = props.get("class").map(|value| value.name(cx).and_then(|reference| tables.classes.resolve(cx, &reference)));
            let gpus = props.require(cx, child, "gpus").and_then(|value| value.positive(cx));
            let pool = props.get("pool").map(|value| value.name(cx).and_then(|reference| tables.pools.resolve(cx, &reference)));
            (|| {
                Some(TestJob {
                    span: child.name_span(),
                    team: team?,
                    tier: tier?,
                    class: class.lowered()?,
                    gpus: gpus?,
                    pool: pool.lowered()?,
                })
            })()
        }
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("test `{}` needs a `job`", name.value))
                    .label("no `job`")
                    .help("add `job team=\"...\" tier=\"...\" gpus=8`"),
            );
            None
        }
    };
    let expect = match NodeReader::single(cx, &children, "expect") {
        Some(child) => {
            let props = child.props(cx, &["pool", "same-domain", "reason"]);
            child.children(cx, &[]);
            let outcome = child
                .expect_args(cx, 1, 1, "placed or rejected")
                .and_then(|args| args[0].keyword(cx, &[("placed", true), ("rejected", false)]));
            match outcome {
                Some(true) => {
                    if let Some(reason) = props.get("reason") {
                        cx.error(
                            Diagnostic::error(Code::InvalidValue, reason.span, "a placed job has no rejection reason")
                                .label("unexpected reason")
                                .help("use `expect \"rejected\" reason=...` for a rejection"),
                        );
                    }
                    let pool = props.get("pool").map(|value| value.name(cx).and_then(|reference| tables.pools.resolve(cx, &reference)));
                    let same_domain = props.get("same-domain").map_or(Some(false), |value| value.bool(cx));
                    (|| Some(Expectation::Placed { span: child.name_span(), pool: pool.lowered()?, same_domain: same_domain? }))()
                }
                Some(false) => {
                    let reason = props.require(cx, child, "reason").and_then(|value| value.name(cx));
                    if let Some(reason) = &reason
                        && !crate::diag::Code::ALL.iter().any(|code| code.name() == reason.value.as_str())
                    {
                        cx.error(
                            Diagnostic::error(
                                Code::TestExpectationFails,
                                reason.span,
                                format!("`{}` is not a diagnostic name", reason.value),
                            )
                            .label("unknown reason")
                            .maybe_help(crate::suggest::help_for(
                                reason.value.as_str(),
                                crate::diag::Code::ALL.iter().map(|code| code.name()),
                            )),
                        );
                        return None;
                    }
                    reason.map(|reason| Expectation::Rejected { span: child.name_span(), reason })
                }
                None => None,
            }
        }
        None => {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("test `{}` needs an `expect`", name.value))
                    .label("no `expect`")
                    .help("add `expect \"placed\"` or `expect \"rejected\" reason=\"tier-not-allowed\"`"),
            );
            None
        }
    };
    Some(PolicyTest { name: name.value, span: name.span, job: job?, expect: expect? })
}
