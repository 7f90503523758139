//! The artifact diff: generated files of two builds compared per file, and inside a file per
//! *entry* where the format has a natural key: Kubernetes objects (YAML documents keyed by
//! apiVersion/kind/namespace/name) and Slurm configuration lines (keyed by `NodeName=`,
//! `PartitionName=` and the other entity keys, or by the parameter name for global lines).
//! Only changed entries carry a unified diff.
//!
//! Invariants: generic over targets (it knows file formats, not emitters), deterministic
//! (entries sorted by key, files by path), and the build manifest is left out because it
//! changes with every source edit and explains nothing to a reviewer.

use std::collections::BTreeMap;

use placid_targets::Artifact;
use serde::Serialize;

use crate::model_diff::Status;
use placid_driver::build::{MANIFEST, sha256};

/// What a changed entry belongs to, for the headline's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Kueue objects (`kueue.x-k8s.io`).
    Kueue,
    /// Argo CD objects (`argoproj.io`).
    ArgoCd,
    /// Node Feature Discovery rules (`nfd.k8s-sigs.io`).
    Nfd,
    /// Other Kubernetes objects.
    Kubernetes,
    /// Slurm configuration.
    Slurm,
    /// Wasm scoring plugins.
    Wasm,
    /// Any other file.
    File,
}

impl Category {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Kueue => "Kueue",
            Category::ArgoCd => "Argo CD",
            Category::Nfd => "NFD",
            Category::Kubernetes => "Kubernetes",
            Category::Slurm => "Slurm",
            Category::Wasm => "Wasm",
            Category::File => "file",
        }
    }

    fn of_path(path: &str) -> Category {
        match path.split('/').next() {
            Some("slurm") => Category::Slurm,
            Some("kubernetes") => Category::Kubernetes,
            Some("wasm") => Category::Wasm,
            _ => Category::File,
        }
    }

    fn of_api_version(api_version: &str) -> Category {
        match api_version.split_once('/').map(|(group, _)| group) {
            Some(group) if group.ends_with("kueue.x-k8s.io") => Category::Kueue,
            Some("argoproj.io") => Category::ArgoCd,
            Some("nfd.k8s-sigs.io") => Category::Nfd,
            _ => Category::Kubernetes,
        }
    }
}

/// One keyed entry of a file (a Kubernetes object, a Slurm line) that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryChange {
    /// The entry's key as reviewers read it (`ClusterQueue vision`, `PartitionName=nvl-a`).
    pub key: String,
    /// The kind of object, for counts.
    pub category: Category,
    /// Added, removed or modified.
    pub status: Status,
    /// A unified diff of the entry's text.
    pub diff: String,
}

/// What changed in one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "content")]
pub enum FileContent {
    /// Keyed entries that differ.
    Entries {
        /// Changed entries, sorted by key.
        entries: Vec<EntryChange>,
    },
    /// A text file without keys: one unified diff.
    Text {
        /// The unified diff.
        diff: String,
    },
    /// A binary file: sizes and hashes.
    Binary {
        /// Size and sha256 in base, if present.
        before: Option<(usize, String)>,
        /// Size and sha256 in head, if present.
        after: Option<(usize, String)>,
    },
}

/// A generated file that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Path relative to the output root.
    pub path: String,
    /// Added, removed or modified.
    pub status: Status,
    /// What changed inside.
    #[serde(flatten)]
    pub content: FileContent,
}

impl FileChange {
    /// Changed objects by category: keyed entries count one each, other files count once.
    pub fn counts(&self) -> Vec<(Category, Status)> {
        match &self.content {
            FileContent::Entries { entries } => entries.iter().map(|entry| (entry.category, entry.status)).collect(),
            _ => vec![(Category::of_path(&self.path), self.status)],
        }
    }
}

/// Compares two artifact lists (both sorted or not; the manifest is skipped).
pub fn diff_artifacts(base: &[Artifact], head: &[Artifact]) -> Vec<FileChange> {
    let index = |artifacts: &[Artifact]| -> BTreeMap<String, Vec<u8>> {
        artifacts
            .iter()
            .filter(|artifact| artifact.path != MANIFEST)
            .map(|artifact| (artifact.path.clone(), artifact.bytes.clone()))
            .collect()
    };
    let (before, after) = (index(base), index(head));
    let paths: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let (old, new) = (before.get(path), after.get(path));
            let status = match (old, new) {
                (Some(old), Some(new)) if old == new => return None,
                (Some(_), Some(_)) => Status::Modified,
                (None, _) => Status::Added,
                (_, None) => Status::Removed,
            };
            Some(FileChange { path: path.clone(), status, content: diff_file(path, old.map(Vec::as_slice), new.map(Vec::as_slice)) })
        })
        .collect()
}

fn diff_file(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> FileContent {
    let (Some(old_text), Some(new_text)) = (as_text(old), as_text(new)) else {
        let describe = |bytes: Option<&[u8]>| bytes.map(|bytes| (bytes.len(), sha256(bytes)));
        return FileContent::Binary { before: describe(old), after: describe(new) };
    };
    let (old_text, new_text) = (old_text.unwrap_or(""), new_text.unwrap_or(""));
    let keyer: Option<fn(&str, &str) -> Vec<Entry>> = if path.ends_with(".yaml") || path.ends_with(".yml") {
        Some(yaml_entries)
    } else if path.ends_with(".conf") {
        Some(conf_entries)
    } else {
        None
    };
    if let Some(keyer) = keyer {
        let entries = diff_entries(keyer(path, old_text), keyer(path, new_text));
        if !entries.is_empty() {
            return FileContent::Entries { entries };
        }
    }
    FileContent::Text { diff: unified(old_text, new_text, path) }
}

/// The text of one side: `Some(None)` when the file is absent, `None` when it is not UTF-8.
fn as_text(bytes: Option<&[u8]>) -> Option<Option<&str>> {
    match bytes {
        None => Some(None),
        Some(bytes) => std::str::from_utf8(bytes).ok().map(Some),
    }
}

/// One keyed entry of a file.
struct Entry {
    key: String,
    category: Category,
    text: String,
}

fn diff_entries(old: Vec<Entry>, new: Vec<Entry>) -> Vec<EntryChange> {
    let mut before: BTreeMap<String, Entry> = old.into_iter().map(|entry| (entry.key.clone(), entry)).collect();
    let mut changes = Vec::new();
    for entry in new {
        let (status, old_text) = match before.remove(&entry.key) {
            Some(old) if old.text == entry.text => continue,
            Some(old) => (Status::Modified, old.text),
            None => (Status::Added, String::new()),
        };
        changes.push(EntryChange { diff: unified(&old_text, &entry.text, &entry.key), key: entry.key, category: entry.category, status });
    }
    changes.extend(before.into_values().map(|old| EntryChange {
        diff: unified(&old.text, "", &old.key),
        key: old.key,
        category: old.category,
        status: Status::Removed,
    }));
    changes.sort_by(|left, right| left.key.cmp(&right.key));
    changes
}

/// Makes keys unique within one file by numbering repeats in order (`NodeName=a#2`), so two
/// gres.conf lines of one node pair with their counterparts instead of colliding.
fn numbered(entries: Vec<(String, Category, String)>) -> Vec<Entry> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    entries
        .into_iter()
        .map(|(key, category, text)| {
            let count = seen.entry(key.clone()).or_insert(0);
            *count += 1;
            let key = if *count == 1 { key } else { format!("{key}#{count}") };
            Entry { key, category, text }
        })
        .collect()
}

fn yaml_entries(path: &str, text: &str) -> Vec<Entry> {
    let mut documents = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim_end() == "---" {
            documents.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    documents.push(current);
    let keyed = documents
        .into_iter()
        .filter(|document| document.lines().any(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#')))
        .enumerate()
        .map(|(index, document)| {
            let (key, category) = object_key(&document).unwrap_or_else(|| (format!("document {}", index + 1), Category::of_path(path)));
            (key, category, document)
        })
        .collect();
    numbered(keyed)
}

/// `Kind namespace/name` of a Kubernetes object, with its category.
fn object_key(document: &str) -> Option<(String, Category)> {
    let value: serde_yaml::Value = serde_yaml::from_str(document).ok()?;
    let field = |value: &serde_yaml::Value, name: &str| value.get(name).and_then(serde_yaml::Value::as_str).map(str::to_owned);
    let kind = field(&value, "kind")?;
    let api_version = field(&value, "apiVersion").unwrap_or_default();
    let metadata = value.get("metadata");
    let name = metadata.and_then(|metadata| field(metadata, "name")).unwrap_or_else(|| "(unnamed)".into());
    let qualified = match metadata.and_then(|metadata| field(metadata, "namespace")) {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name,
    };
    Some((format!("{kind} {qualified}"), Category::of_api_version(&api_version)))
}

/// Slurm's entity lines: the first `Key=Value` names the entity. Other lines are global
/// parameters, keyed by the parameter name alone.
const SLURM_ENTITY_KEYS: &[&str] = &["NodeName", "PartitionName", "NodeSet", "SwitchName", "BlockName", "Name", "QOS"];

fn conf_entries(_path: &str, text: &str) -> Vec<Entry> {
    let keyed = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let first = line.split_whitespace().next().unwrap_or(line);
            let key = match first.split_once('=') {
                Some((name, _)) if SLURM_ENTITY_KEYS.contains(&name) => first.to_owned(),
                Some((name, _)) => name.to_owned(),
                None => first.to_owned(),
            };
            (key, Category::Slurm, format!("{line}\n"))
        })
        .collect();
    numbered(keyed)
}

/// A unified diff of `old` and `new` with three lines of context.
pub fn unified(old: &str, new: &str, label: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{label}"), &format!("b/{label}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str, old: Option<&str>, new: Option<&str>, expected: &[(&str, Status)]) -> Vec<FileChange> {
        let side = |text: Option<&str>| text.map(|text| vec![Artifact::text(path, text)]).unwrap_or_default();
        let changes = diff_artifacts(&side(old), &side(new));
        let keys: Vec<(String, Status)> = changes
            .iter()
            .flat_map(|file| match &file.content {
                FileContent::Entries { entries } => entries.iter().map(|entry| (entry.key.clone(), entry.status)).collect(),
                _ => vec![(file.path.clone(), file.status)],
            })
            .collect();
        let expected: Vec<(String, Status)> = expected.iter().map(|(key, status)| ((*key).to_owned(), *status)).collect();
        assert_eq!(keys, expected);
        changes
    }

    const QUEUES: &str = "\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: vision
spec:
  cohort: ml
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: vision
  namespace: vision
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: placid
  namespace: argocd
";

    #[test]
    fn yaml_documents_are_keyed_by_kind_namespace_and_name() {
        let reordered_and_changed = "\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: placid
  namespace: argocd
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: vision
spec:
  cohort: training
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: p0
value: 1000
";
        let changes = check(
            "kubernetes/queues.yaml",
            Some(QUEUES),
            Some(reordered_and_changed),
            &[
                ("ClusterQueue vision", Status::Modified),
                ("LocalQueue vision/vision", Status::Removed),
                ("PriorityClass p0", Status::Added),
            ],
        );
        let categories: Vec<(Category, Status)> = changes[0].counts();
        assert_eq!(
            categories,
            vec![(Category::Kueue, Status::Modified), (Category::Kueue, Status::Removed), (Category::Kubernetes, Status::Added)]
        );
        let FileContent::Entries { entries } = &changes[0].content else { panic!("keyed entries expected") };
        assert!(entries[0].diff.contains("-  cohort: ml\n+  cohort: training\n"), "{}", entries[0].diff);
    }

    #[test]
    fn slurm_lines_are_keyed_by_entity_and_parameter() {
        let old = "# generated\nClusterName=ml\nNodeName=rv-a-01 Gres=gpu:4 Features=nvl-a\nNodeName=rv-a-02 Gres=gpu:4 Features=nvl-a\nPartitionName=nvl-a Nodes=rv-a-[01-02]\n";
        let new = "# generated\nClusterName=ml\nPartitionName=nvl-a Nodes=rv-a-01\nNodeName=rv-a-02 Gres=gpu:4 Features=nvl-b\nNodeName=rv-a-01 Gres=gpu:4 Features=nvl-a\n";
        check(
            "slurm/slurm.conf",
            Some(old),
            Some(new),
            &[("NodeName=rv-a-02", Status::Modified), ("PartitionName=nvl-a", Status::Modified)],
        );
    }

    #[test]
    fn repeated_keys_pair_in_order() {
        let old = "NodeName=a Name=gpu File=/dev/nvidia0\nNodeName=a Name=gpu File=/dev/nvidia1\n";
        let new = "NodeName=a Name=gpu File=/dev/nvidia0\nNodeName=a Name=gpu File=/dev/nvidia1 Links=-1,18\n";
        check("slurm/gres.conf", Some(old), Some(new), &[("NodeName=a#2", Status::Modified)]);
    }

    #[test]
    fn whole_files_added_removed_binary_and_unkeyed() {
        check(
            "kubernetes/queues.yaml",
            None,
            Some(QUEUES),
            &[
                ("Application argocd/placid", Status::Added),
                ("ClusterQueue vision", Status::Added),
                ("LocalQueue vision/vision", Status::Added),
            ],
        );
        let changes = check(
            "slurm/accounts.sh",
            Some("sacctmgr -i add account vision\n"),
            Some("sacctmgr -i add account speech\n"),
            &[("slurm/accounts.sh", Status::Modified)],
        );
        assert!(matches!(&changes[0].content, FileContent::Text { diff } if diff.contains("+sacctmgr -i add account speech")));
        let binary = diff_artifacts(&[Artifact { path: "wasm/cost.wasm".into(), bytes: vec![0, 0x61, 0x73, 0xff] }], &[]);
        assert!(matches!(&binary[0].content, FileContent::Binary { before: Some((4, _)), after: None }));
        assert_eq!(binary[0].counts(), vec![(Category::Wasm, Status::Removed)]);
    }

    #[test]
    fn the_manifest_and_comment_only_changes_are_quiet() {
        let manifest = |hash: &str| vec![Artifact::text(MANIFEST, format!("{{\"source-hash\": \"{hash}\"}}"))];
        assert!(diff_artifacts(&manifest("a"), &manifest("b")).is_empty());
        let changes = check(
            "slurm/slurm.conf",
            Some("# v1\nClusterName=ml\n"),
            Some("# v2\nClusterName=ml\n"),
            &[("slurm/slurm.conf", Status::Modified)],
        );
        assert!(matches!(&changes[0].content, FileContent::Text { .. }));
    }
}
