//! Completion by context: at the start of a statement, the nodes the enclosing node accepts
//! (the schema table's children, or the declarations of a file's top level); after a node's
//! name, its properties; where a name is expected (`tier=`, `tiers "`), the names of that
//! kind the project declares. The context comes from the outline of the text before the
//! cursor, so it works on the half-typed line.

use lsp_types::{CompletionItem, CompletionItemKind};
use placid_lang::lower::schema;

use crate::hover::schema_of;
use crate::names::{self, NameKind, Occurrence};
use crate::outline::{self, Kind, child_path};

/// The completions at byte `offset` of `text`; `project_file` says whether the text is the
/// project's `placid.kdl`, and `declared` holds every name the project declares.
pub fn complete<'a>(text: &str, offset: usize, project_file: bool, declared: impl Iterator<Item = &'a Occurrence>) -> Vec<CompletionItem> {
    let at = outline::at(text, offset);
    let mut before = at.before;
    // The word being typed is no context; what stands before it is.
    let typing = before.last().filter(|token| token.end >= offset && matches!(token.kind, Kind::Word | Kind::Str)).cloned();
    if typing.is_some() {
        before.pop();
    }
    let in_quotes = typing.as_ref().is_some_and(|token| token.kind == Kind::Str);
    let Some(name) = before.first() else {
        return keywords(&at.parent, project_file);
    };
    let argument = before.get(1).filter(|_| before.get(2).is_none_or(|next| next.kind != Kind::Equals));
    let path = child_path(&at.parent, &name.text, argument.map(|token| token.text.as_str()));
    // The scope of names inside this statement: a stage's own plan.
    let scope = at.scope;
    if before.last().is_some_and(|token| token.kind == Kind::Equals) {
        let key = before.len().checked_sub(2).and_then(|index| before.get(index));
        let kind = key.and_then(|key| names::referenced(&path, Some(&key.text)));
        return kind.map(|kind| declared_names(kind, &scope, declared, in_quotes)).unwrap_or_default();
    }
    let mut items = Vec::new();
    if let Some(kind) = names::referenced(&path, None) {
        items.extend(declared_names(kind, &scope, declared, in_quotes));
    }
    if !in_quotes && let Some(node) = schema_of(&path) {
        items.extend(node.properties.iter().map(|property| CompletionItem {
            label: (*property).to_owned(),
            kind: Some(CompletionItemKind::PROPERTY),
            detail: Some(format!("property of `{path}`")),
            insert_text: Some(format!("{property}=")),
            ..CompletionItem::default()
        }));
    }
    items
}

/// The nodes accepted under `parent`.
fn keywords(parent: &str, project_file: bool) -> Vec<CompletionItem> {
    let words: Vec<&str> = if parent.is_empty() {
        let mut words = schema::POLICY_DECLARATIONS.to_vec();
        if project_file {
            words.extend_from_slice(schema::PROJECT_DECLARATIONS);
        } else {
            words.extend_from_slice(schema::INVENTORY_DECLARATIONS);
        }
        words
    } else {
        schema_of(parent).map(|node| node.children.to_vec()).unwrap_or_default()
    };
    words
        .into_iter()
        .map(|word| CompletionItem {
            label: word.to_owned(),
            kind: Some(CompletionItemKind::KEYWORD),
            detail: Some(if parent.is_empty() { "declaration".to_owned() } else { format!("child of `{parent}`") }),
            ..CompletionItem::default()
        })
        .collect()
}

/// The declared names of `kind` (a stage's only from the plan of `scope`), quoted unless the
/// cursor is inside quotes already.
fn declared_names<'a>(
    kind: NameKind,
    scope: &[String],
    declared: impl Iterator<Item = &'a Occurrence>,
    in_quotes: bool,
) -> Vec<CompletionItem> {
    let prefix = names::key(kind, scope, "");
    let mut seen = std::collections::BTreeSet::new();
    declared
        .filter(|occurrence| occurrence.declares && occurrence.kind == kind && occurrence.key.starts_with(&prefix))
        .filter(|occurrence| seen.insert(occurrence.name.clone()))
        .map(|occurrence| CompletionItem {
            label: occurrence.name.clone(),
            kind: Some(CompletionItemKind::REFERENCE),
            detail: Some(kind.keyword().to_owned()),
            insert_text: Some(if in_quotes { occurrence.name.clone() } else { format!("\"{}\"", occurrence.name) }),
            ..CompletionItem::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str, declared: &[Occurrence]) -> Vec<String> {
        complete(text, text.len(), false, declared.iter()).into_iter().map(|item| item.label).collect()
    }

    #[test]
    fn children_properties_and_names_by_context() {
        let project = "tier \"P1\" { priority 1 }\ntier \"P2\" { priority 2 }\npool \"x\" { select arch=\"x86_64\" }\n";
        let declared = names::occurrences(&outline::scan(project));
        let children = labels("tier \"P3\" {\n    pre", &declared);
        assert!(children.contains(&"preemption".to_owned()), "{children:?}");
        let properties = labels("tier \"P3\" {\n    preemption ", &declared);
        assert_eq!(properties, ["window", "mode", "exempt"]);
        let tiers = labels("plan \"p\" team=\"a\" {\n    stage \"s\" tier=", &declared);
        assert_eq!(tiers, ["P1", "P2"]);
        let quoted = labels("team \"a\" {\n    tiers \"P1\" \"", &declared);
        assert_eq!(quoted, ["P1", "P2"]);
        assert!(labels("", &declared).contains(&"tier".to_owned()));
    }
}
