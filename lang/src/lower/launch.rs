//! What a stage runs, or a class's defaults for it: the `command`, `image`, `env`, `cpus`,
//! `memory` and `workdir` children of `stage` and `class`.
//!
//! Invariant: every text lowered here reaches shell scripts and YAML, so none holds a control
//! character (a newline would start a new line of a script); the targets quote the rest. A
//! command is a list of arguments, never one line for a shell to split.

use std::collections::BTreeMap;

use kdl::KdlValue;

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::reader::NodeReader;
use crate::lower::values;
use crate::model::{EnvVar, Launch, RESERVED_ENV_PREFIX};
use crate::span::Spanned;
use crate::syntax::span_of;
use crate::units::Bytes;

/// The most arguments one command may have: far past any real command line, small enough that
/// a script stays readable.
const MAX_ARGUMENTS: usize = 256;

/// Reads the launch children among `children` (others are the caller's). `None` when one of
/// them has an error, which is reported.
pub(super) fn lower(cx: &mut Cx, children: &[NodeReader<'_>]) -> Option<Launch> {
    let mut ok = true;
    let mut launch = Launch::default();
    if let Some(child) = NodeReader::single(cx, children, "command") {
        launch.command = command(cx, child);
        ok &= launch.command.is_some();
    }
    if let Some(child) = NodeReader::single(cx, children, "image") {
        launch.image = image(cx, child);
        ok &= launch.image.is_some();
    }
    let mut env: BTreeMap<String, EnvVar> = BTreeMap::new();
    for child in children.iter().filter(|child| child.kind() == "env") {
        ok &= variables(cx, child, &mut env);
    }
    launch.env = env.into_values().collect();
    if let Some(child) = NodeReader::single(cx, children, "cpus") {
        launch.cpus = child.leaf_args(cx, 1, 1, "the CPU cores of one node of a trial").and_then(|args| {
            let value = args[0];
            value.positive(cx).map(|cpus| Spanned::new(cpus, value.span))
        });
        ok &= launch.cpus.is_some();
    }
    if let Some(child) = NodeReader::single(cx, children, "memory") {
        launch.memory =
            child.leaf_args(cx, 1, 1, "the memory of one node of a trial, such as \"64GiB\"").and_then(|args| memory(cx, args[0]));
        ok &= launch.memory.is_some();
    }
    if let Some(child) = NodeReader::single(cx, children, "workdir") {
        launch.workdir = child.leaf_args(cx, 1, 1, "an absolute directory").and_then(|args| workdir(cx, args[0]));
        ok &= launch.workdir.is_some();
    }
    ok.then_some(launch)
}

fn command(cx: &mut Cx, node: &NodeReader<'_>) -> Option<Spanned<Vec<String>>> {
    let args = node.leaf_args(cx, 1, MAX_ARGUMENTS, "the program and its arguments, each a string")?;
    let mut words = Vec::with_capacity(args.len());
    let mut ok = true;
    for arg in &args {
        match arg.string(cx) {
            Some(word) if printable(cx, &word, "a command's argument") => words.push(word.value),
            _ => ok = false,
        }
    }
    if !ok {
        return None;
    }
    let span = args[0].span.through(args[args.len() - 1].span);
    if words[0].is_empty() {
        cx.error(
            Diagnostic::error(Code::StageCommandInvalid, args[0].span, "a command cannot start with an empty program name")
                .label("empty program")
                .help("name the program first: `command \"python3\" \"train.py\"`"),
        );
        return None;
    }
    // One string with spaces is a shell line: placid runs commands without a shell, so it
    // would look for a program named after the whole line.
    if let [line] = words.as_slice()
        && line.split_whitespace().nth(1).is_some()
    {
        let split: Vec<String> = line.split_whitespace().map(|word| format!("{word:?}")).collect();
        cx.error(
            Diagnostic::error(Code::StageCommandInvalid, args[0].span, "a command is a list of arguments, not one line for a shell")
                .label("one string with spaces")
                .help(format!("give each argument as its own string: `command {}`", split.join(" "))),
        );
        return None;
    }
    Some(Spanned::new(words, span))
}

fn image(cx: &mut Cx, node: &NodeReader<'_>) -> Option<Spanned<String>> {
    let reference = node.leaf_args(cx, 1, 1, "an image reference").and_then(|args| args[0].string(cx))?;
    if reference.value.is_empty() || reference.value.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"') {
        cx.error(
            Diagnostic::error(Code::InvalidValue, reference.span, "an image reference cannot contain spaces, quotes or control characters")
                .label("invalid image")
                .help("write a reference such as \"ghcr.io/acme/train:1.4\""),
        );
        return None;
    }
    Some(reference)
}

/// `env NAME="value" ...`: one variable per property, into `env` (each name once across the
/// element's `env` nodes).
fn variables(cx: &mut Cx, node: &NodeReader<'_>, env: &mut BTreeMap<String, EnvVar>) -> bool {
    node.children(cx, &[]);
    let mut ok = true;
    let mut any = false;
    for entry in node.node.entries() {
        let span = span_of(node.file, entry.span());
        let Some(name) = entry.name() else {
            cx.error(
                Diagnostic::error(Code::StageEnvInvalid, span, "`env` takes variables as properties")
                    .label("an argument")
                    .help("write `env NAME=\"value\"`"),
            );
            ok = false;
            continue;
        };
        any = true;
        let name = Spanned::new(name.value().to_owned(), span);
        let KdlValue::String(value) = entry.value() else {
            cx.error(
                Diagnostic::error(Code::StageEnvInvalid, span, format!("the value of `{}` must be a string", name.value))
                    .label("not a string")
                    .help(format!("quote it: `{}=\"...\"`", name.value)),
            );
            ok = false;
            continue;
        };
        ok &= printable(cx, &Spanned::new(value.clone(), span), "an environment variable's value") && env_name(cx, &name);
        if let Some(first) = env.get(&name.value) {
            cx.error(
                Diagnostic::error(Code::StageEnvInvalid, span, format!("variable `{}` is given twice", name.value))
                    .label("second value")
                    .with_secondary(first.name.span, "first value")
                    .help("give each variable once"),
            );
            ok = false;
            continue;
        }
        env.insert(name.value.clone(), EnvVar { name, value: value.clone() });
    }
    if !any && ok {
        cx.error(
            Diagnostic::error(Code::MissingValue, node.name_span(), "`env` sets no variable")
                .label("empty")
                .help("write `env NAME=\"value\"`, or remove it"),
        );
        ok = false;
    }
    ok
}

/// A name a POSIX shell and Kubernetes both accept, that is not placid's own.
fn env_name(cx: &mut Cx, name: &Spanned<String>) -> bool {
    let mut chars = name.value.chars();
    let valid = chars.next().is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid {
        cx.error(
            Diagnostic::error(Code::StageEnvInvalid, name.span, format!("`{}` is not a variable name", name.value.escape_debug()))
                .label("invalid name")
                .help("use letters, digits and `_`, not starting with a digit: `NCCL_DEBUG`"),
        );
        return false;
    }
    if name.value.starts_with(RESERVED_ENV_PREFIX) {
        cx.error(
            Diagnostic::error(Code::StageEnvInvalid, name.span, format!("`{}` is one of placid's own variables", name.value))
                .label(format!("`{RESERVED_ENV_PREFIX}` names are set by placid"))
                .help("rename it; placid sets its variables in every stage (docs/stages.md)"),
        );
        return false;
    }
    true
}

fn memory(cx: &mut Cx, value: crate::lower::reader::Value<'_>) -> Option<Spanned<Bytes>> {
    let text = value.string(cx)?;
    let bytes = values::quantity(cx, &text, Bytes::parse)?;
    if bytes.0 == 0 {
        cx.error(Diagnostic::error(Code::InvalidValue, text.span, "memory must be more than 0").label("zero").help("write \"64GiB\""));
        return None;
    }
    Some(Spanned::new(bytes, text.span))
}

fn workdir(cx: &mut Cx, value: crate::lower::reader::Value<'_>) -> Option<Spanned<String>> {
    let text = value.string(cx)?;
    if !printable(cx, &text, "a working directory") {
        return None;
    }
    if !text.value.starts_with('/') {
        cx.error(
            Diagnostic::error(Code::StageCommandInvalid, text.span, "the working directory must be an absolute path")
                .label("relative")
                .help(
                    "write it from the root: \"/workspace\"; without `workdir` a stage starts where its target starts it (docs/stages.md)",
                ),
        );
        return None;
    }
    Some(text)
}

/// Text that reaches a script or a workflow as written (`what` names it in the message): no
/// control character, and no `{{`, which Argo Workflows would replace inside a plan's
/// WorkflowTemplate (placid's own variables give a trial what such a template would).
fn printable(cx: &mut Cx, text: &Spanned<String>, what: &str) -> bool {
    if text.value.chars().any(char::is_control) {
        cx.error(
            Diagnostic::error(Code::StageCommandInvalid, text.span, format!("{what} cannot contain control characters such as a newline"))
                .label("control character")
                .help("write it on one line, without escapes such as \\n or \\t"),
        );
        return false;
    }
    if text.value.contains("{{") {
        cx.error(
            Diagnostic::error(Code::StageCommandInvalid, text.span, format!("{what} cannot contain `{{{{`"))
                .label("a template expression")
                .help("Argo Workflows would substitute it; read the trial from `PLACID_TRIAL` instead (docs/stages.md)"),
        );
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::diag::Code;
    use crate::model::{Launch, Model};
    use crate::source::MemoryWorld;

    const NODES: &str = "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n";

    /// The model and diagnostic codes of a policy whose class `c` has `class` and whose one
    /// stage has `stage` as children.
    fn load(class: &str, stage: &str) -> (Model, Vec<Code>) {
        let policy = format!(
            "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"t\" {{\n    priority 1\n    preemption \"never\"\n}}\n\
             team \"a\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n}}\nclass \"c\" {{\n{class}\n}}\n\
             plan \"p\" team=\"a\" {{\n    stage \"s\" tier=\"t\" class=\"c\" pool=\"all\" gpus=1 {{\n{stage}\n    }}\n}}\n"
        );
        let mut world = MemoryWorld::new();
        world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
        world.insert("nodes.kdl", NODES);
        world.insert("policy.kdl", policy);
        let compilation = crate::load(&world);
        (compilation.model, compilation.diagnostics.iter().map(|diagnostic| diagnostic.code).collect())
    }

    fn launch_of_stage(class: &str, stage: &str) -> Launch {
        let (model, codes) = load(class, stage);
        assert_eq!(codes, [], "{class} / {stage}");
        model.launch(&model.plans[0].stages[0])
    }

    #[test]
    fn a_stage_runs_its_own_settings_over_its_class() {
        let launch = launch_of_stage(
            "image \"r.example/train:1\"\ncommand \"train\"\nenv A=\"1\" B=\"class\"\ncpus 8\nworkdir \"/work\"",
            "command \"eval\" \"--data\" \"it's $HOME\"\nenv B=\"stage\"\nenv C=\"3\"\nmemory \"1.5GiB\"",
        );
        assert_eq!(launch.command.map(|command| command.value), Some(vec!["eval".into(), "--data".into(), "it's $HOME".into()]));
        assert_eq!(launch.image.map(|image| image.value).as_deref(), Some("r.example/train:1"));
        let env: Vec<(String, String)> = launch.env.into_iter().map(|variable| (variable.name.value, variable.value)).collect();
        assert_eq!(env, [("A".into(), "1".into()), ("B".into(), "stage".into()), ("C".into(), "3".into())]);
        assert_eq!(launch.cpus.map(|cpus| cpus.value), Some(8));
        assert_eq!(launch.memory.map(|memory| memory.value.0), Some(3 << 29));
        assert_eq!(launch.workdir.map(|workdir| workdir.value).as_deref(), Some("/work"));
    }

    #[test]
    fn texts_that_a_script_would_misread_are_refused() {
        for (stage, code) in [
            ("command \"python3 train.py --lr 0.1\"", Code::StageCommandInvalid),
            ("command \"train\" \"a\\nb\"", Code::StageCommandInvalid),
            ("command \"\" \"x\"", Code::StageCommandInvalid),
            ("command \"train\" 4", Code::InvalidValue),
            ("workdir \"relative/dir\"", Code::StageCommandInvalid),
            ("workdir \"/a\\rb\"", Code::StageCommandInvalid),
            ("env X=\"line\\nbreak\"", Code::StageCommandInvalid),
            ("command \"train\" \"--run={{workflow.name}}\"", Code::StageCommandInvalid),
            ("env PLACID_TRIAL=\"7\"", Code::StageEnvInvalid),
            ("env \"9LIVES\"=\"x\"", Code::StageEnvInvalid),
            ("env \"A-B\"=\"x\"", Code::StageEnvInvalid),
            ("env A=\"1\"\nenv A=\"2\"", Code::StageEnvInvalid),
            ("env A=1", Code::StageEnvInvalid),
            ("env \"A\"", Code::StageEnvInvalid),
            ("memory \"0GiB\"", Code::InvalidValue),
            ("cpus 0", Code::InvalidValue),
        ] {
            let (model, codes) = load("", stage);
            assert_eq!(codes, [code], "{stage}");
            assert!(model.plans.is_empty(), "a plan with an invalid stage is left out: {stage}");
        }
    }
}
