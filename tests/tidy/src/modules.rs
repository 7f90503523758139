//! The module graph of a crate, read from its files: which module each file is, and which
//! other modules its library code names through `crate::`, `super::` and `self::` paths. The
//! tidy test asks of it that the children of every module refer to each other without a
//! circle, so the files of a folder can be read in one order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path inside its crate (`["k8s", "layout"]`); the crate root is empty.
pub type ModulePath = Vec<String>;

/// The module a source file under `src/` is: `lib.rs` and `main.rs` are the root, `a/mod.rs`
/// and `a.rs` are `a`, `a/b.rs` is `a::b`.
pub fn module_of(relative: &Path) -> ModulePath {
    let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        match last.as_str() {
            "lib.rs" | "main.rs" | "mod.rs" => {}
            file => parts.push(file.trim_end_matches(".rs").to_owned()),
        }
    }
    parts
}

/// Every `crate::`, `super::` and `self::` path in `code`, `use` trees expanded, as segments
/// (`["super", "layout", "Cell"]`). Comments are dropped first.
pub fn paths(code: &str) -> Vec<Vec<String>> {
    let code: String = code.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts_path = ["crate::", "super::", "self::"].iter().any(|head| rest.starts_with(head));
        let boundary = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':');
        if starts_path && boundary {
            let end = path_end(rest);
            expand(&[], &rest[..end], &mut found);
            at += end.max(1);
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// Where the path (with any `{...}` groups) starting `text` ends.
fn path_end(text: &str) -> usize {
    let mut depth = 0usize;
    for (index, ch) in text.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => return index,
            '}' => depth -= 1,
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => return index,
            _ => {}
        }
    }
    text.len()
}

/// Expands a use tree (`a::{b, c::{d, e}}`) under `prefix`.
fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    let (head, group) = match tree.find('{') {
        Some(open) => (&tree[..open], Some(&tree[open + 1..tree.rfind('}').unwrap_or(tree.len())])),
        None => (tree, None),
    };
    let mut path = prefix.to_vec();
    path.extend(
        head.split("::")
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| part.split_whitespace().next().unwrap_or(part).to_owned()),
    );
    match group {
        None => out.push(path),
        Some(group) => {
            let mut depth = 0usize;
            let mut start = 0;
            for (index, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth = depth.saturating_sub(1),
                    ',' if depth == 0 => {
                        expand(&path, &group[start..index], out);
                        start = index + 1;
                    }
                    _ => {}
                }
            }
            if !group[start..].trim().is_empty() {
                expand(&path, &group[start..], out);
            }
            out.push(path);
        }
    }
}

/// The deepest module of `modules` that `path`, written in module `from`, names.
pub fn resolve(from: &ModulePath, path: &[String], modules: &BTreeSet<ModulePath>) -> Option<ModulePath> {
    let mut base: ModulePath = Vec::new();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => rest = &rest[1..],
        Some("self") => {
            base = from.clone();
            rest = &rest[1..];
        }
        Some("super") => {
            base = from.clone();
            while rest.first().is_some_and(|part| part == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    for part in rest {
        let mut next = base.clone();
        next.push(part.clone());
        if !modules.contains(&next) {
            break;
        }
        base = next;
    }
    Some(base)
}

/// For each module with children: the edges between its children (child -> child), drawn
/// when any file under one names a module under the other.
pub fn sibling_edges(files: &BTreeMap<ModulePath, String>) -> BTreeMap<ModulePath, BTreeSet<(String, String)>> {
    let modules: BTreeSet<ModulePath> = files.keys().cloned().collect();
    let mut edges: BTreeMap<ModulePath, BTreeSet<(String, String)>> = BTreeMap::new();
    for (from, code) in files {
        for path in paths(code) {
            let Some(to) = resolve(from, &path, &modules) else { continue };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                edges.entry(from[..common].to_vec()).or_default().insert((from[common].clone(), to[common].clone()));
            }
        }
    }
    edges
}

/// A circle in `edges`, as the names around it, if there is one.
pub fn circle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges {
        next.entry(from).or_default().push(to);
    }
    // Depth-first, with the path so far: a node met again on the path closes a circle.
    fn visit<'a>(
        node: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|seen| *seen == node) {
            return Some(path[at..].iter().map(|name| (*name).to_owned()).chain([node.to_owned()]).collect());
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for to in next.get(node).into_iter().flatten() {
            if let Some(found) = visit(to, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    next.keys().find_map(|start| visit(start, &next, &mut Vec::new(), &mut done))
}
