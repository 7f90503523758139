//! Support for the effects test (tests/tests/effects.rs): one exact edit of a bundled example,
//! made on the parsed KDL document, and what a build of the example changes because of it.
//! An outcome is everything a setting can reach: the artifacts of every target, the engine's
//! results (policy tests and the example's traces) and the diagnostics.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use kdl::{KdlDocument, KdlEntry, KdlNode, KdlValue};
use placid_engine::Neutral;
use placid_lang::span::FileId;

/// Where a setting takes effect: what a change of it must change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// An artifact under `slurm/`.
    Slurm,
    /// An artifact under `kubernetes/`.
    Kubernetes,
    /// A scoring plugin under `wasm/`.
    Wasm,
    /// The alerting rules under `prometheus/`.
    Prometheus,
    /// The runbooks under `runbooks/`.
    Runbooks,
    /// A policy test's result or an event of an example trace's replay.
    Engine,
    /// The set of diagnostics with this code (by its name, `slurm-backfill-cluster-wide`).
    Checker(&'static str),
}

impl fmt::Display for Reach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reach::Checker(code) => write!(f, "checker ({code})"),
            other => write!(f, "{}", format!("{other:?}").to_lowercase()),
        }
    }
}

/// One exact edit of a KDL file.
#[derive(Clone, Copy, Debug)]
pub enum Edit {
    /// Remove the node.
    Remove,
    /// Remove the property.
    RemoveProperty(&'static str),
    /// Set the property (added when absent) to a KDL value as written (`"15m"`, `(usd)10`).
    Set(&'static str, &'static str),
    /// Set the argument at this index to a KDL value as written.
    SetArgument(usize, &'static str),
    /// Append these KDL nodes as children of the node (or, at the file's top, as declarations).
    Append(&'static str),
    /// Replace the node with this KDL node (a change of its arguments and properties at once).
    Replace(&'static str),
}

/// An edit of one file: `at` is a path of nodes from the file's top, each a name or
/// `name=first-argument` (`tier=P0/checkpoint`); empty for the file itself (only `Append`).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The file, relative to the project.
    pub file: &'static str,
    /// The node edited.
    pub at: &'static str,
    /// What is done to it.
    pub edit: Edit,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`: {:?}", self.file, self.at, self.edit)
    }
}

/// A setting's change: `step` made on an example after the `given` steps (which set up what
/// the example lacks, such as a MIG GPU), compared with the example after `given` alone.
#[derive(Clone, Copy, Debug)]
pub struct Mutation {
    /// The example (`policy-examples/<example>`).
    pub example: &'static str,
    /// Edits made to both sides of the comparison.
    pub given: &'static [Step],
    /// The edit whose effect is measured.
    pub step: Step,
}

impl Mutation {
    /// The project the comparison starts from, in `dir`.
    pub fn base(&self, dir: &Path) {
        copy_example(self.example, dir);
        for step in self.given {
            apply(step, dir);
        }
    }

    /// The project with the change, in `dir`.
    pub fn changed(&self, dir: &Path) {
        self.base(dir);
        apply(&self.step, dir);
    }
}

/// What a build of a project produces, as far as settings can reach.
pub struct Outcome {
    /// Artifacts by path, without the manifest (it hashes the sources, which every edit changes).
    artifacts: BTreeMap<String, Vec<u8>>,
    /// The engine's results in words: one line per policy test, one per event of each trace.
    engine: Vec<String>,
    /// Every diagnostic: code name, severity and message.
    diagnostics: BTreeSet<(&'static str, String)>,
    /// Whether the build has errors (then there are no artifacts and no engine results).
    pub errors: bool,
}

impl Outcome {
    /// Builds the project in `dir` with every target, then runs its policy tests and replays the
    /// traces of `traces` (an example's `traces/` directory) through the engine.
    pub fn of(dir: &Path, traces: &Path) -> Outcome {
        let build = crate::build(dir);
        let diagnostics = build
            .diagnostics
            .iter()
            .map(|diagnostic| (diagnostic.code.name(), format!("{:?}: {}", diagnostic.severity, diagnostic.message)))
            .collect();
        let errors = build.diagnostics.has_errors();
        let artifacts = build
            .artifacts
            .iter()
            .filter(|artifact| artifact.path != placid_driver::build::MANIFEST)
            .map(|artifact| (artifact.path.clone(), artifact.bytes.clone()))
            .collect();
        let mut engine = Vec::new();
        if let Some(model) = build.model.checked() {
            let judge = placid_driver::test_admission::Judge::new(model, &model.tests.iter().collect::<Vec<_>>());
            for test in &model.tests {
                engine.push(format!("{}: {:?}", test.name, placid_engine::policy_test::run(model, test, Neutral)));
                // Its admission expectations, judged as `placid test` judges them.
                let verdicts = judge.as_ref().map_err(Clone::clone).and_then(|judge| judge.verdicts(model, test));
                let mismatches = verdicts.as_ref().map(|verdicts| placid_engine::policy_test::admission(model, test, verdicts));
                engine.push(format!("{}: admission {mismatches:?}", test.name));
            }
            for trace in trace_files(traces) {
                let text = std::fs::read_to_string(&trace).unwrap_or_else(|error| panic!("cannot read {}: {error}", trace.display()));
                // A trace the edited policy cannot read (a team or pool gone) is an outcome too.
                match placid_simulate::trace::read(model, FileId(u32::MAX - 1), &text) {
                    Ok(jobs) => {
                        let events = placid_engine::simulate(model, Neutral, placid_simulate::replay::jobs(&jobs).collect());
                        engine.extend(events.iter().map(|event| format!("{event:?}")));
                    }
                    Err(errors) => engine.push(format!("{} does not read: {errors:?}", trace.display())),
                }
            }
        }
        Outcome { artifacts, engine, diagnostics, errors }
    }

    /// Where `self` and `other` differ.
    pub fn reaches(&self, other: &Outcome) -> BTreeSet<Reach> {
        let mut reaches = BTreeSet::new();
        let paths: BTreeSet<&String> = self.artifacts.keys().chain(other.artifacts.keys()).collect();
        for path in paths {
            if self.artifacts.get(path) == other.artifacts.get(path) {
                continue;
            }
            let reach = match path.split('/').next().unwrap_or_default() {
                "slurm" => Reach::Slurm,
                "kubernetes" => Reach::Kubernetes,
                "wasm" => Reach::Wasm,
                "prometheus" => Reach::Prometheus,
                "runbooks" => Reach::Runbooks,
                other => panic!("artifact `{path}` is under `{other}/`, which the effects test does not know: add a Reach for it"),
            };
            reaches.insert(reach);
        }
        if self.engine != other.engine {
            reaches.insert(Reach::Engine);
        }
        for (code, _) in self.diagnostics.symmetric_difference(&other.diagnostics) {
            reaches.insert(Reach::Checker(code));
        }
        reaches
    }

    /// Every diagnostic, for failure messages.
    pub fn diagnostics(&self) -> Vec<String> {
        self.diagnostics.iter().map(|(code, message)| format!("{code}: {message}")).collect()
    }

    /// The diagnostics of `self` that `other` does not have, for failure messages.
    pub fn new_diagnostics(&self, other: &Outcome) -> Vec<String> {
        self.diagnostics.difference(&other.diagnostics).map(|(code, message)| format!("{code}: {message}")).collect()
    }
}

fn trace_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "csv"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Copies an example into `dir`, without its `broken/` variants and traces.
fn copy_example(example: &str, dir: &Path) {
    crate::copy_tree(&crate::example(example), dir, &["broken", "traces"]);
}

/// Makes the edit of `step` in the project in `dir`. Panics, naming the step, when the node or
/// property is not found.
fn apply(step: &Step, dir: &Path) {
    let path = dir.join(step.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{step}: cannot read the file: {error}"));
    let mut document: KdlDocument = text.parse().unwrap_or_else(|error| panic!("{step}: the file does not parse: {error:?}"));
    edit(&mut document, step).unwrap_or_else(|problem| panic!("{step}: {problem}"));
    std::fs::write(&path, document.to_string()).unwrap_or_else(|error| panic!("{step}: cannot write the file: {error}"));
}

fn edit(document: &mut KdlDocument, step: &Step) -> Result<(), String> {
    let steps: Vec<&str> = step.at.split('/').filter(|step| !step.is_empty()).collect();
    let Some((last, parents)) = steps.split_last() else {
        let Edit::Append(text) = step.edit else { return Err("only `Append` edits a file's top".to_owned()) };
        append(document, text)?;
        return Ok(());
    };
    let mut scope = document;
    for step in parents {
        let node = find(scope, step)?;
        scope = node.children_mut().as_mut().ok_or_else(|| format!("`{step}` has no children"))?;
    }
    let index = scope.nodes().iter().position(|node| matches(node, last)).ok_or_else(|| format!("no node `{last}`"))?;
    match step.edit {
        Edit::Remove => {
            scope.nodes_mut().remove(index);
            return Ok(());
        }
        Edit::Replace(text) => {
            let mut nodes = parse_nodes(text)?;
            let (Some(mut node), true) = (nodes.pop(), nodes.is_empty()) else { return Err(format!("`{text}` is not one node")) };
            // The replaced node's place: its indentation and line end.
            if let Some(format) = scope.nodes()[index].format() {
                node.set_format(format.clone());
            }
            scope.nodes_mut()[index] = node;
            return Ok(());
        }
        _ => {}
    }
    change(find(scope, last)?, step.edit)
}

/// Makes an edit that keeps the node.
fn change(node: &mut KdlNode, edit: Edit) -> Result<(), String> {
    match edit {
        Edit::Remove | Edit::Replace(_) => return Err("`Remove` and `Replace` take the node away rather than changing it".to_owned()),
        Edit::RemoveProperty(key) => {
            // By the key's text: `KdlNode::remove` compares identifiers with their spans.
            let index = node
                .entries()
                .iter()
                .position(|entry| entry.name().is_some_and(|name| name.value() == key))
                .ok_or_else(|| format!("no property `{key}`"))?;
            node.entries_mut().remove(index);
        }
        Edit::Set(key, value) => {
            let entry = parse_entry(&format!("x {key}={value}"))?;
            match node.entries_mut().iter_mut().find(|entry| entry.name().is_some_and(|name| name.value() == key)) {
                Some(existing) => *existing = entry,
                None => node.push(entry),
            }
        }
        Edit::SetArgument(index, value) => {
            let entry = parse_entry(&format!("x {value}"))?;
            let argument = node
                .entries_mut()
                .iter_mut()
                .filter(|entry| entry.name().is_none())
                .nth(index)
                .ok_or_else(|| format!("no argument {index}"))?;
            *argument = entry;
        }
        Edit::Append(text) => append(node.ensure_children(), text)?,
    }
    Ok(())
}

/// Appends the nodes of `text` to `scope`, each on a line of its own, indented like the last
/// node there.
fn append(scope: &mut KdlDocument, text: &str) -> Result<(), String> {
    let leading = scope.nodes().last().and_then(KdlNode::format).map(|format| format.leading.clone()).unwrap_or_default();
    for mut node in parse_nodes(text)? {
        node.set_format(kdl::KdlNodeFormat {
            leading: format!("\n{}", leading.trim_start_matches('\n')),
            terminator: "\n".to_owned(),
            ..Default::default()
        });
        scope.nodes_mut().push(node);
    }
    Ok(())
}

fn parse_nodes(text: &str) -> Result<Vec<KdlNode>, String> {
    let document: KdlDocument = text.parse().map_err(|error| format!("`{text}` is not KDL: {error:?}"))?;
    Ok(document.nodes().to_vec())
}

/// The one entry of the node `text` (`x key=value`), its formatting cleared so that it
/// prints with the separating space of its new place.
fn parse_entry(text: &str) -> Result<KdlEntry, String> {
    let node: KdlNode = text.parse().map_err(|error| format!("`{text}` is not KDL: {error:?}"))?;
    let mut entry = node.entries().first().cloned().ok_or_else(|| format!("`{text}` has no entry"))?;
    entry.clear_format();
    Ok(entry)
}

fn find<'d>(scope: &'d mut KdlDocument, step: &str) -> Result<&'d mut KdlNode, String> {
    scope.nodes_mut().iter_mut().find(|node| matches(node, step)).ok_or_else(|| format!("no node `{step}`"))
}

/// Whether `node` is the step `name` or `name=first-argument`.
fn matches(node: &KdlNode, step: &str) -> bool {
    let (name, argument) = step.split_once('=').map_or((step, None), |(name, argument)| (name, Some(argument)));
    if node.name().value() != name {
        return false;
    }
    let Some(argument) = argument else { return true };
    node.entries().iter().find(|entry| entry.name().is_none()).is_some_and(|first| match first.value() {
        KdlValue::String(text) => text == argument,
        KdlValue::Integer(number) => number.to_string() == argument,
        _ => false,
    })
}
