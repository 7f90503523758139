//! The `budget daily=` child that cost centers, tiers and teams share: one reading, so a
//! budget is written and checked alike wherever it appears.

use crate::lower::context::Cx;
use crate::lower::reader::NodeReader;
use crate::lower::schema;
use crate::span::Spanned;
use crate::units::Money;

pub(super) fn lower_budget(cx: &mut Cx, accepts: &schema::NodeSchema, node: &NodeReader<'_>) -> Option<Spanned<Money>> {
    let props = node.props(cx, accepts.properties);
    node.children(cx, &[]);
    props.require(cx, node, "daily")?.money(cx)
}
