//! The project file's own nodes: `project`, `inventory`, `include` and `target`.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::reader::NodeReader;
use crate::lower::schema;
use crate::lower::{PROJECT_FILE, ParsedFile};
use crate::model::{ArgoSettings, KubernetesSettings, Project, SlurmSettings, SlurmVersion, WasmSettings};
use crate::name::{Name, is_dns_subdomain};
use crate::source::{RelPath, Sources};
use crate::span::{Span, Spanned};
use crate::suggest::help_for;
use crate::units::Currency;

/// What the project file says besides declarations.
pub(super) struct Settings {
    pub project: Project,
    /// Include patterns with their spans.
    pub includes: Vec<(String, Span)>,
    /// Inventory patterns with their spans.
    pub inventory: Vec<(String, Span)>,
}

pub(super) fn lower(cx: &mut Cx, sources: &Sources, file: &ParsedFile) -> Settings {
    let _ = sources;
    let mut settings = Settings { project: Project::default(), includes: Vec::new(), inventory: Vec::new() };
    let nodes: Vec<NodeReader<'_>> = file.document.nodes().iter().map(|node| NodeReader::new(node, file.id)).collect();
    let projects: Vec<&NodeReader<'_>> = nodes.iter().filter(|node| node.kind() == "project").collect();
    // A project file that does not parse has no nodes to read: its syntax errors say why, and
    // a missing `project` would only repeat them.
    let unparsed = cx
        .diagnostics
        .iter()
        .any(|diagnostic| matches!(diagnostic.code, Code::KdlSyntax | Code::NestingTooDeep) && diagnostic.primary.span.file == file.id);
    match projects.as_slice() {
        [] if unparsed => {}
        [] => cx.error(
            Diagnostic::error(Code::MissingProject, Span::new(file.id, 0, 0), format!("{PROJECT_FILE} has no `project` node"))
                .help("start the file with `project \"my-cluster\"`"),
        ),
        [first, rest @ ..] => {
            for extra in rest {
                cx.error(
                    Diagnostic::error(Code::DuplicateName, extra.name_span(), "`project` is declared twice")
                        .label("second declaration")
                        .with_secondary(first.name_span(), "first declared here")
                        .help("a project file declares one project"),
                );
            }
            lower_project(cx, first, &mut settings.project);
        }
    }
    for node in &nodes {
        match node.kind() {
            "include" | "inventory" => {
                let Some(args) = node.leaf_args(cx, 1, usize::MAX, "one or more path patterns") else {
                    continue;
                };
                for arg in args {
                    if let Some(pattern) = arg.string(cx) {
                        let list = if node.kind() == "include" { &mut settings.includes } else { &mut settings.inventory };
                        list.push((pattern.value, pattern.span));
                    }
                }
            }
            "target" => lower_target(cx, node, &mut settings.project),
            _ => {}
        }
    }
    settings
}

fn lower_project(cx: &mut Cx, node: &NodeReader<'_>, project: &mut Project) {
    let props = node.props(cx, schema::PROJECT.properties);
    node.children(cx, &[]);
    project.span = node.name_span();
    if let Some(args) = node.expect_args(cx, 1, 1, "the project's name")
        && let Some(name) = args[0].name(cx)
    {
        project.name = name.value;
    }
    if let Some(value) = props.get("currency")
        && let Some(code) = value.string(cx)
    {
        match Currency::parse(&code.value) {
            Some(currency) => {
                project.currency = currency;
                cx.currency = currency;
            }
            None => cx.error(
                Diagnostic::error(Code::InvalidUnit, value.span, format!("unknown currency `{}`", code.value.escape_debug()))
                    .label("unknown currency")
                    .maybe_help(help_for(&code.value, Currency::ALL.iter().map(|currency| currency.code()))),
            ),
        }
    }
    if let Some(value) = props.get("runbooks")
        && let Some(url) = value.string(cx)
    {
        match runbooks_base(&url.value) {
            Ok(base) => project.runbooks = Some(base.to_owned()),
            Err(why) => cx.error(
                Diagnostic::error(Code::InvalidValue, value.span, format!("`runbooks` {why}"))
                    .label("not a base URL")
                    .help("give the http(s) address the build output is published at, such as `https://git.example.com/ops/cluster-out/-/blob/main`"),
            ),
        }
    }
}

/// The base URL of `runbooks=` without its trailing `/`, or why it is not one. Alert
/// annotations and Markdown links carry it, so only characters that need no quoting in
/// either pass, and no query or fragment, which the page path appended to it would break.
fn runbooks_base(url: &str) -> Result<&str, &'static str> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).ok_or("must start with `https://` or `http://`")?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err("needs a host after the scheme");
    }
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || b"-._~/:@!$&*+,;=%".contains(&byte);
    if !rest.bytes().all(allowed) {
        return Err("may hold only letters, digits and `-._~/:@!$&*+,;=%` (no spaces, quotes, brackets, `?` or `#`)");
    }
    Ok(url.trim_end_matches('/'))
}

const TARGETS: &[&str] = &["slurm", "kubernetes", "wasm"];

fn lower_target(cx: &mut Cx, node: &NodeReader<'_>, project: &mut Project) {
    let Some(args) = node.expect_args(cx, 1, 1, "the target's name (slurm, kubernetes or wasm)") else {
        return;
    };
    let Some(kind) = args[0].keyword(cx, &[("slurm", 0), ("kubernetes", 1), ("wasm", 2)]) else {
        return;
    };
    let kind = TARGETS[kind];
    let duplicate = match kind {
        "slurm" => project.slurm.as_ref().map(|settings| settings.span),
        "kubernetes" => project.kubernetes.as_ref().map(|settings| settings.span),
        _ => project.wasm.as_ref().map(|settings| settings.span),
    };
    if let Some(first) = duplicate {
        cx.error(
            Diagnostic::error(Code::DuplicateName, node.name_span(), format!("target `{kind}` is declared twice"))
                .label("second declaration")
                .with_secondary(first, "first declared here")
                .help("declare each target once"),
        );
        return;
    }
    match kind {
        "slurm" => project.slurm = lower_slurm(cx, node),
        "kubernetes" => project.kubernetes = lower_kubernetes(cx, node),
        _ => {
            node.props(cx, schema::TARGET_WASM.properties);
            node.children(cx, schema::TARGET_WASM.children);
            project.wasm = Some(WasmSettings { span: node.name_span() });
        }
    }
}

fn lower_slurm(cx: &mut Cx, node: &NodeReader<'_>) -> Option<SlurmSettings> {
    let props = node.props(cx, schema::TARGET_SLURM.properties);
    node.children(cx, &[]);
    let version_value = props.require(cx, node, "version")?;
    let version_text = version_value.string(cx)?;
    let Some(version) = SlurmVersion::parse(&version_text.value) else {
        let supported: Vec<String> = SlurmVersion::SUPPORTED.iter().map(ToString::to_string).collect();
        cx.error(
            Diagnostic::error(
                Code::InvalidValue,
                version_value.span,
                format!("Slurm `{}` is not a supported version", version_text.value.escape_debug()),
            )
            .label("unsupported version")
            .help(format!("supported: {}", supported.join(", "))),
        );
        return None;
    };
    let cluster = match props.get("cluster") {
        Some(value) => value.name(cx)?.value,
        None => Name::new("cluster").ok()?,
    };
    let accounting = match props.get("accounting") {
        Some(value) => value.bool(cx)?,
        None => true,
    };
    let templates = match props.get("templates") {
        Some(value) => {
            let text = value.string(cx)?;
            match RelPath::new(&text.value) {
                Ok(path) => Some(Spanned::new(path, value.span)),
                Err(reason) => {
                    cx.error(
                        Diagnostic::error(Code::IncludeOutsideRoot, value.span, format!("templates path refused: {reason}"))
                            .label("outside the project root")
                            .help("name a directory inside the project"),
                    );
                    return None;
                }
            }
        }
        None => None,
    };
    Some(SlurmSettings { span: node.name_span(), version, cluster, accounting, templates })
}

fn lower_kubernetes(cx: &mut Cx, node: &NodeReader<'_>) -> Option<KubernetesSettings> {
    let props = node.props(cx, schema::TARGET_KUBERNETES.properties);
    let children = node.children(cx, schema::TARGET_KUBERNETES.children);
    let version_value = props.require(cx, node, "version")?;
    let version_text = version_value.string(cx)?;
    let minor_version = match version_text.value.split_once('.') {
        Some(("1", minor)) => minor.parse::<u16>().ok().filter(|minor| (30..=40).contains(minor)),
        _ => None,
    };
    let Some(minor_version) = minor_version else {
        cx.error(
            Diagnostic::error(
                Code::InvalidValue,
                version_value.span,
                format!("Kubernetes `{}` is not a supported version", version_text.value.escape_debug()),
            )
            .label("unsupported version")
            .help("write the version as `1.MINOR`, 1.30 or later, such as \"1.34\""),
        );
        return None;
    };
    let label_prefix = match props.get("label-prefix") {
        Some(value) => {
            let prefix = value.string(cx)?;
            if !is_dns_subdomain(&prefix.value) || prefix.value.ends_with("kubernetes.io") || prefix.value.ends_with("k8s.io") {
                cx.error(
                    Diagnostic::error(
                        Code::InvalidValue,
                        value.span,
                        format!("`{}` cannot prefix placid's labels", prefix.value.escape_debug()),
                    )
                    .label("invalid label prefix")
                    .help("use a lower-case DNS subdomain you own, such as \"placid.example.com\"; kubernetes.io and k8s.io are reserved"),
                );
                return None;
            }
            prefix
        }
        None => Spanned::new(KubernetesSettings::DEFAULT_LABEL_PREFIX.to_owned(), Span::DETACHED),
    };
    let namespace = match props.get("namespace") {
        Some(value) => value.name(cx)?.value,
        None => Name::new("placid-system").ok()?,
    };
    let argo = match NodeReader::single(cx, &children, "argo") {
        Some(argo) => Some(lower_argo(cx, argo)?),
        None => None,
    };
    let extender = match NodeReader::single(cx, &children, "extender") {
        Some(extender) => Some(super::kubernetes::lower_extender(cx, extender)?),
        None => None,
    };
    let steps_image = match NodeReader::single(cx, &children, "steps") {
        Some(steps) => Some(super::kubernetes::lower_steps(cx, steps)?),
        None => None,
    };
    Some(KubernetesSettings { span: node.name_span(), minor_version, label_prefix, namespace, argo, extender, steps_image })
}

fn lower_argo(cx: &mut Cx, node: &NodeReader<'_>) -> Option<ArgoSettings> {
    let props = node.props(cx, schema::TARGET_KUBERNETES_ARGO.properties);
    node.children(cx, &[]);
    let mut text = |key: &str, default: Option<&str>| -> Option<Spanned<String>> {
        let value = match (props.get(key), default) {
            (Some(value), _) => value.string(cx)?,
            (None, Some(default)) => return Some(Spanned::new(default.to_owned(), Span::DETACHED)),
            (None, None) => {
                props.require(cx, node, key);
                return None;
            }
        };
        if value.value.is_empty() || value.value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            cx.error(
                Diagnostic::error(
                    Code::InvalidValue,
                    value.span,
                    format!("`{key}` cannot be empty or contain spaces or control characters"),
                )
                .label("invalid")
                .help("write a URL or path without spaces"),
            );
            return None;
        }
        Some(value)
    };
    let repo = text("repo", None);
    let path = text("path", None);
    let revision = text("revision", Some("HEAD"));
    let namespace = match props.get("namespace") {
        Some(value) => value.name(cx)?.value,
        None => Name::new("argocd").ok()?,
    };
    Some(ArgoSettings { repo: repo?, path: path?, revision: revision?, namespace })
}

#[cfg(test)]
mod tests {
    use super::runbooks_base;

    #[test]
    fn a_runbooks_base_is_an_http_address_that_needs_no_quoting() {
        assert_eq!(runbooks_base("https://git.example.com/ops/out/-/blob/main/"), Ok("https://git.example.com/ops/out/-/blob/main"));
        assert_eq!(runbooks_base("http://10.0.0.1:8080/out"), Ok("http://10.0.0.1:8080/out"));
        for bad in [
            "git.example.com/out",
            "ftp://host/out",
            "https://",
            "https:///out",
            "https://host/a b",
            "https://host/\"x",
            "https://host/x#y",
            "https://host/x?y",
            "https://host/(x)",
            "https://host/x\n",
        ] {
            assert!(runbooks_base(bad).is_err(), "{bad:?} is refused");
        }
    }
}
