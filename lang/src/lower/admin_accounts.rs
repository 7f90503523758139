//! `admin-accounts`: the scheduler accounts whose jobs skip placid's submission rules.

use crate::lower::context::Cx;
use crate::lower::reader::NodeReader;
use crate::name::Name;
use crate::span::Spanned;

/// `admin-accounts "ops" ...` (any number of nodes): scheduler accounts whose jobs skip
/// placid's submission rules.
pub(super) fn lower(cx: &mut Cx, nodes: &[NodeReader<'_>]) -> Vec<Spanned<Name>> {
    let mut accounts = Vec::new();
    for node in nodes {
        for value in node.leaf_args(cx, 1, usize::MAX, "the administrators' accounts").unwrap_or_default() {
            if let Some(name) = value.name(cx) {
                accounts.push(name);
            }
        }
    }
    accounts
}
