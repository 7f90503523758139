//! Where each declared name of a project occurs: the declarations (`tier "P1"`, `stage
//! "train"`, an inventory's `node "rv-a-01"`) and the references (`tier="P1"`, `tiers "P0"
//! "P1"`, a test's `nodes "rv-a-01"`), for go to definition, find references, hover and
//! completion. The table of which property or argument names what is [`REFERENCES`]; it is
//! read from the outline of each file, so it works on a buffer that does not parse.
//!
//! Racks, chassis and NVLink domains are declared by the inventory nodes that name them:
//! every `rack="r1"` of a node is a declaration of rack `r1`, so "go to definition" on a
//! pool's `select rack="r1"` lists the nodes of the rack.

use crate::outline::{Statement, Token};

/// The kinds of declared names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NameKind {
    /// `tier`.
    Tier,
    /// `team`.
    Team,
    /// `pool`.
    Pool,
    /// `class`.
    Class,
    /// `score`.
    Score,
    /// `plan`.
    Plan,
    /// A plan's `stage`, scoped by the plan.
    Stage,
    /// `cost-center`.
    CostCenter,
    /// `metric`.
    Metric,
    /// An inventory `node`.
    Node,
    /// A node's `rack=`.
    Rack,
    /// A node's `chassis=`.
    Chassis,
    /// A node's `nvlink-domain=`.
    Domain,
}

impl NameKind {
    /// The word the language uses for it.
    pub fn keyword(self) -> &'static str {
        match self {
            NameKind::Tier => "tier",
            NameKind::Team => "team",
            NameKind::Pool => "pool",
            NameKind::Class => "class",
            NameKind::Score => "score",
            NameKind::Plan => "plan",
            NameKind::Stage => "stage",
            NameKind::CostCenter => "cost-center",
            NameKind::Metric => "metric",
            NameKind::Node => "node",
            NameKind::Rack => "rack",
            NameKind::Chassis => "chassis",
            NameKind::Domain => "nvlink-domain",
        }
    }
}

/// Top-level declarations: the node and the kind its first argument declares.
const DECLARATIONS: &[(&str, NameKind)] = &[
    ("tier", NameKind::Tier),
    ("team", NameKind::Team),
    ("pool", NameKind::Pool),
    ("class", NameKind::Class),
    ("score", NameKind::Score),
    ("plan", NameKind::Plan),
    ("plan/stage", NameKind::Stage),
    ("cost-center", NameKind::CostCenter),
    ("metric", NameKind::Metric),
    ("node", NameKind::Node),
];

/// Where a name is referred to: a node's path and the property (`Some`) or the arguments
/// (`None`) that hold it.
pub const REFERENCES: &[(&str, Option<&str>, NameKind)] = &[
    ("tier/reserve", Some("pool"), NameKind::Pool),
    ("tier/cost-center", None, NameKind::CostCenter),
    ("team/cost-center", None, NameKind::CostCenter),
    ("team/tiers", None, NameKind::Tier),
    ("plan", Some("team"), NameKind::Team),
    ("plan/stage", Some("tier"), NameKind::Tier),
    ("plan/stage", Some("class"), NameKind::Class),
    ("plan/stage", Some("pool"), NameKind::Pool),
    ("plan/stage", Some("score"), NameKind::Score),
    ("plan/stage", Some("after"), NameKind::Stage),
    ("plan/stage/after", None, NameKind::Stage),
    ("route", Some("tier"), NameKind::Tier),
    ("route", Some("class"), NameKind::Class),
    ("alert", Some("metric"), NameKind::Metric),
    ("migration", Some("from"), NameKind::Pool),
    ("migration", Some("to"), NameKind::Pool),
    ("migration/classes", None, NameKind::Class),
    ("migration/accept", Some("metric"), NameKind::Metric),
    ("migration/rollback-when", Some("metric"), NameKind::Metric),
    ("test/running", Some("team"), NameKind::Team),
    ("test/running", Some("tier"), NameKind::Tier),
    ("test/running", Some("class"), NameKind::Class),
    ("test/running", Some("pool"), NameKind::Pool),
    ("test/running/nodes", None, NameKind::Node),
    ("test/job", Some("team"), NameKind::Team),
    ("test/job", Some("tier"), NameKind::Tier),
    ("test/job", Some("class"), NameKind::Class),
    ("test/job", Some("pool"), NameKind::Pool),
    ("test/job/nodes", None, NameKind::Node),
    ("test/expect", Some("pool"), NameKind::Pool),
    ("test/expect", Some("domain"), NameKind::Domain),
    ("test/expect", Some("rack"), NameKind::Rack),
    ("test/expect", Some("chassis"), NameKind::Chassis),
    ("test/expect/nodes", None, NameKind::Node),
    ("pool/select", Some("nvlink-domain"), NameKind::Domain),
    ("pool/select", Some("rack"), NameKind::Rack),
    ("pool/select", Some("chassis"), NameKind::Chassis),
    ("target=kubernetes/extender", Some("score"), NameKind::Score),
    // A node's own rack, chassis and domain declare them (see the module's header).
    ("node", Some("rack"), NameKind::Rack),
    ("node", Some("chassis"), NameKind::Chassis),
    ("node", Some("nvlink-domain"), NameKind::Domain),
];

/// One occurrence of a declared name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// What it names.
    pub kind: NameKind,
    /// The name, with its plan for a stage (`vit-train/prep`), so equal keys are one thing.
    pub key: String,
    /// The name as written.
    pub name: String,
    /// Byte range of the name (inside its quotes).
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// Whether it declares the name.
    pub declares: bool,
}

/// Every occurrence of a declared name in the statements of one file.
pub fn occurrences(statements: &[Statement]) -> Vec<Occurrence> {
    let mut out = Vec::new();
    for statement in statements {
        let path = statement.path();
        if let Some((_, kind)) = DECLARATIONS.iter().find(|(declared, _)| *declared == path)
            && let Some(name) = statement.first_argument()
        {
            out.push(occurrence(*kind, statement, name, true));
        }
        for (key, value) in statement.properties() {
            let Some(value) = value else { continue };
            if let Some(kind) = referenced(&path, Some(&key.text)) {
                out.push(occurrence(kind, statement, value, path == "node"));
            }
        }
        if let Some(kind) = referenced(&path, None) {
            for argument in statement.arguments() {
                out.push(occurrence(kind, statement, argument, false));
            }
        }
    }
    out
}

/// The kind a property (`Some(key)`) or the arguments (`None`) of a node at `path` name.
pub fn referenced(path: &str, property: Option<&str>) -> Option<NameKind> {
    REFERENCES.iter().find(|(at, key, _)| *at == path && *key == property).map(|(_, _, kind)| *kind)
}

fn occurrence(kind: NameKind, statement: &Statement, token: &Token, declares: bool) -> Occurrence {
    let (start, end) = token.inner();
    Occurrence { kind, key: key(kind, &statement.scope, &token.text), name: token.text.clone(), start, end, declares }
}

/// The key of a name of `kind` written inside the blocks whose first arguments are `scope`:
/// a stage's is its plan's name and its own.
pub fn key(kind: NameKind, scope: &[String], name: &str) -> String {
    match (kind, scope.first()) {
        (NameKind::Stage, Some(plan)) => format!("{plan}/{name}"),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::scan;

    #[test]
    fn declarations_and_references() {
        let text = "tier \"P1\" { priority 5 }\nteam \"a\" { tiers \"P1\" }\nplan \"p\" team=\"a\" {\n    stage \"s\" tier=\"P1\"\n    stage \"t\" after=\"s\"\n}\n";
        let found: Vec<(NameKind, String, bool)> =
            occurrences(&scan(text)).into_iter().map(|occurrence| (occurrence.kind, occurrence.key, occurrence.declares)).collect();
        assert_eq!(
            found,
            [
                (NameKind::Tier, "P1".to_owned(), true),
                (NameKind::Team, "a".to_owned(), true),
                (NameKind::Tier, "P1".to_owned(), false),
                (NameKind::Plan, "p".to_owned(), true),
                (NameKind::Team, "a".to_owned(), false),
                (NameKind::Stage, "p/s".to_owned(), true),
                (NameKind::Tier, "P1".to_owned(), false),
                (NameKind::Stage, "p/t".to_owned(), true),
                (NameKind::Stage, "p/s".to_owned(), false),
            ]
        );
    }

    #[test]
    fn every_reference_is_a_schema_property_or_child() {
        use placid_lang::lower::schema::NODES;
        for (path, property, _) in REFERENCES {
            match property {
                Some(property) => {
                    let node = NODES.iter().find(|node| node.path == *path);
                    assert!(node.is_some_and(|node| node.properties.contains(property)), "{path} {property}");
                }
                None => {
                    let (parent, child) = path.rsplit_once('/').unwrap_or(("", path));
                    let node = NODES.iter().find(|node| node.path == parent);
                    assert!(node.is_some_and(|node| node.children.contains(&child)), "{path}");
                }
            }
        }
    }
}
