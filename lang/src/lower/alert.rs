//! Alerts (`alert metric= above=|below= [for=] [severity=]`): a metric condition and how
//! urgent it is when it fires.

use crate::lower::context::Cx;
use crate::lower::metric::lower_condition;
use crate::lower::names::{Names, Tables, lower_kind};
use crate::lower::reader::NodeReader;
use crate::lower::schema;
use crate::model::{Alert, AlertId, AlertSeverity, Model};

pub(super) fn lower(cx: &mut Cx, model: &mut Model, tables: &Tables, nodes: &[NodeReader<'_>]) {
    let mut names = Names::new("alert");
    let mut alerts = Vec::new();
    lower_kind(cx, "alert", nodes, &mut names, &mut alerts, AlertId::from_index, |cx, node, name| {
        let props = node.props(cx, schema::ALERT.properties);
        node.children(cx, &[]);
        let condition = lower_condition(cx, tables, node, &props, false);
        let severity = props.get("severity").map_or(Some(AlertSeverity::Warning), |value| {
            value.keyword(cx, &[("info", AlertSeverity::Info), ("warning", AlertSeverity::Warning), ("critical", AlertSeverity::Critical)])
        });
        Some(Alert { name: name.value, span: name.span, condition: condition?, severity: severity? })
    });
    model.alerts = alerts;
}
