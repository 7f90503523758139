//! Name tables for resolving references. Elements are lowered kind by kind in dependency
//! order; a table holds the elements that lowered cleanly and remembers the names of those
//! that did not, so a reference to a broken declaration does not cascade into a second error.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::suggest::help_for;

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
            let help = help_for(name, self.ids.keys().map(String::as_str))
                .unwrap_or_else(|| format!("declare it with `{} \"{name}\" {{ ... }}`", self.kind));
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
