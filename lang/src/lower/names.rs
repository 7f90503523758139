//! Name tables for resolving references. Elements are lowered kind by kind in dependency
//! order; a table holds the elements that lowered cleanly and remembers the names of those
//! that did not, so a reference to a broken declaration does not cascade into a second error.
//! [`Tables`] holds one table per kind that others refer to, and [`lower_kind`] is the one
//! loop that declares the elements of a kind, which every element's lowering goes through.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::reader::NodeReader;
use crate::model::{ClassId, CostCenterId, Domain, DomainId, MetricId, PoolId, ScoreId, TeamId, TierId};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::suggest::help_for;

/// Name tables of every kind, for the passes that resolve references.
pub(super) struct Tables {
    pub pools: Names<PoolId>,
    pub cost_centers: Names<CostCenterId>,
    pub classes: Names<ClassId>,
    pub scores: Names<ScoreId>,
    pub tiers: Names<TierId>,
    pub teams: Names<TeamId>,
    pub metrics: Names<MetricId>,
    pub domains: Names<DomainId>,
}

impl Tables {
    /// Empty tables but for the NVLink domains, which the inventory has named already.
    pub fn new(domains: &[Domain]) -> Tables {
        let mut tables = Tables {
            pools: Names::new("pool"),
            cost_centers: Names::new("cost-center"),
            classes: Names::new("class"),
            scores: Names::new("score"),
            tiers: Names::new("tier"),
            teams: Names::new("team"),
            metrics: Names::new("metric"),
            domains: Names::new("nvlink domain"),
        };
        for (index, domain) in domains.iter().enumerate() {
            tables.domains.insert(&domain.name, DomainId::from_index(index), domain.span);
        }
        tables
    }
}

/// Lowers every declaration of one kind: duplicates are reported, elements that fail are
/// remembered as broken, and the rest get ids in declaration order.
pub(super) fn lower_kind<'a, Id: Copy, T>(
    cx: &mut Cx,
    kind: &'static str,
    nodes: &[NodeReader<'a>],
    names: &mut Names<Id>,
    elements: &mut Vec<T>,
    make_id: fn(usize) -> Id,
    mut lower: impl FnMut(&mut Cx, &NodeReader<'a>, Spanned<Name>) -> Option<T>,
) {
    let mut declarations = Declarations::new(kind);
    for node in nodes {
        let Some(args) = node.expect_args(cx, 1, 1, &format!("the {kind}'s name")) else {
            continue;
        };
        let Some(name) = args[0].name(cx) else {
            continue;
        };
        if !declarations.declare(cx, &name) {
            continue;
        }
        let text = name.value.as_str().to_owned();
        match lower(cx, node, name.clone()) {
            Some(element) => {
                names.insert(&name.value, make_id(elements.len()), name.span);
                elements.push(element);
            }
            None => names.insert_broken(&text),
        }
    }
}

/// The declared names of one kind of element, mapped to their ids.
pub(crate) struct Names<Id> {
    /// What the elements are called in messages (`tier`, `pool`).
    kind: &'static str,
    ids: BTreeMap<String, (Id, Span)>,
    broken: BTreeSet<String>,
}

impl<Id: Copy> Names<Id> {
    pub fn new(kind: &'static str) -> Names<Id> {
        Names { kind, ids: BTreeMap::new(), broken: BTreeSet::new() }
    }

    pub fn insert(&mut self, name: &Name, id: Id, span: Span) {
        self.ids.insert(name.as_str().to_owned(), (id, span));
    }

    /// Remembers a declaration that failed to lower: references to it stay silent.
    pub fn insert_broken(&mut self, name: &str) {
        self.broken.insert(name.to_owned());
    }

    /// Resolves a reference, reporting an unknown name with the closest declared one.
    pub fn resolve(&self, cx: &mut Cx, reference: &Spanned<Name>) -> Option<Spanned<Id>> {
        let name = reference.value.as_str();
        if let Some((id, _)) = self.ids.get(name) {
            return Some(Spanned::new(*id, reference.span));
        }
        if !self.broken.contains(name) {
            // Every declared name is a candidate, also one whose declaration has an error of
            // its own: that is the name the reference most likely meant.
            let declared: BTreeSet<&str> = self.ids.keys().chain(&self.broken).map(String::as_str).collect();
            let help =
                help_for(name, declared.iter().copied()).unwrap_or_else(|| format!("declare it with `{} \"{name}\" {{ ... }}`", self.kind));
            cx.error(
                Diagnostic::error(Code::UnresolvedReference, reference.span, format!("no {} named `{name}`", self.kind))
                    .label(format!("unknown {}", self.kind))
                    .help(help),
            );
        }
        None
    }
}

/// Tracks the first declaration of each name of one kind and reports later duplicates.
pub(crate) struct Declarations {
    kind: &'static str,
    seen: BTreeMap<String, Span>,
}

impl Declarations {
    pub fn new(kind: &'static str) -> Declarations {
        Declarations { kind, seen: BTreeMap::new() }
    }

    /// Records a declaration; returns false (after reporting) when the name was taken.
    pub fn declare(&mut self, cx: &mut Cx, name: &Spanned<Name>) -> bool {
        if let Some(first) = self.seen.get(name.value.as_str()) {
            cx.error(
                Diagnostic::error(Code::DuplicateName, name.span, format!("{} `{}` is declared twice", self.kind, name.value))
                    .label("second declaration")
                    .with_secondary(*first, "first declared here")
                    .help(format!("rename one of them or merge the two {} blocks", self.kind)),
            );
            return false;
        }
        self.seen.insert(name.value.as_str().to_owned(), name.span);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::source::MemoryWorld;

    /// The help of every diagnostic of a project with `policy` over one x86 node.
    fn helps(policy: &str) -> Vec<String> {
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
        world.insert("nodes.kdl", "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n");
        world.insert("policy.kdl", policy);
        crate::load(&world).diagnostics.iter().filter_map(|diagnostic| diagnostic.help.clone()).collect()
    }

    #[test]
    fn suggestions_list_names_whose_declaration_has_an_error() {
        let policy = "pool \"beta\" { select arch=\"x86_64\" }\npool \"alpha\" { select arch=\"sparc\" }\n\
                      tier \"t\" {\n    priority 1\n    preemption \"never\"\n    reserve pool=\"gamma\" gpus=1\n}\n";
        let found = helps(policy);
        assert!(found.iter().any(|help| help == "expected one of: `alpha`, `beta`"), "{found:?}");
    }
}
