//! Tag-based tier routes (`route tag= tier= [class=]`), resolved against tiers and classes.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::names::Tables;
use crate::lower::reader::NodeReader;
use crate::lower::schema;
use crate::model::Route;

/// `route tag= tier= [class=]` (any number): tag-based tier routing. A tag names one route;
/// a repeated tag is refused (E162) rather than resolved by order, since two routes for one
/// tag would mean different tiers in different readers.
pub(super) fn lower(cx: &mut Cx, tables: &Tables, nodes: &[NodeReader<'_>]) -> Vec<Route> {
    let mut routes: Vec<Route> = Vec::new();
    for node in nodes {
        let props = node.props(cx, schema::ROUTE.properties);
        node.children(cx, &[]);
        node.expect_args(cx, 0, 0, "no arguments: `route tag=\"...\" tier=\"...\"`");
        let tag = props.require(cx, node, "tag").and_then(|value| value.name(cx));
        let tier = props.require(cx, node, "tier").and_then(|value| value.name(cx)).and_then(|name| tables.tiers.resolve(cx, &name));
        let class = match props.get("class") {
            Some(value) => value.name(cx).and_then(|name| tables.classes.resolve(cx, &name)).map(Some),
            None => Some(None),
        };
        let (Some(tag), Some(tier), Some(class)) = (tag, tier, class) else {
            continue;
        };
        if let Some(earlier) = routes.iter().find(|route| route.tag.value == tag.value) {
            cx.error(
                Diagnostic::error(Code::RouteTagOverlap, tag.span, format!("tag `{}` is routed twice", tag.value))
                    .label("second route of the tag")
                    .with_secondary(earlier.tag.span, "first route")
                    .help("a tag routes to one tier: remove one route or give it another tag"),
            );
            continue;
        }
        routes.push(Route { span: node.name_span(), tag, tier, class });
    }
    routes
}
