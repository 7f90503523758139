//! The Kubernetes target's children beyond Argo CD:
//! - `extender`: which score the scheduler extender serves, from which image, and whether
//!   kube-scheduler may go on without it. The score is named before scores are lowered (the
//!   target lives in the project file), so it is resolved in a second step.
//! - `steps image=`: the image of the steps placid adds to plan workflows (a promotion's
//!   ranking), any image with a POSIX shell, `awk` and `sort`.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::names::Names;
use crate::lower::reader::NodeReader;
use crate::lower::schema;
use crate::model::{ExtenderSettings, Model, ScoreId};
use crate::span::Spanned;

/// The most pods the Deployment may ask for: one extender serves a whole cluster, more is a typo.
const MAX_REPLICAS: u32 = 16;
/// The longest image reference accepted (registry, path, tag and digest together).
const MAX_IMAGE: usize = 512;

pub(super) fn lower_extender(cx: &mut Cx, node: &NodeReader<'_>) -> Option<ExtenderSettings> {
    let props = node.props(cx, schema::TARGET_KUBERNETES_EXTENDER.properties);
    node.children(cx, schema::TARGET_KUBERNETES_EXTENDER.children);
    let image = props.require(cx, node, "image").and_then(|value| value.string(cx)).and_then(|text| image(cx, text));
    let ignorable = props.require(cx, node, "ignorable").and_then(|value| value.bool(cx));
    let score_name = match props.get("score") {
        Some(value) => Some(value.name(cx)?),
        None => None,
    };
    let replicas = match props.get("replicas") {
        Some(value) => value.in_range(cx, 1..=MAX_REPLICAS, "the extender is one stateless service per cluster")?,
        None => 2,
    };
    let prometheus = match props.get("prometheus") {
        Some(value) => {
            let text = value.string(cx)?;
            Some(prometheus_address(cx, text)?)
        }
        None => None,
    };
    Some(ExtenderSettings { span: node.name_span(), image: image?, score: None, score_name, replicas, ignorable: ignorable?, prometheus })
}

/// `HOST:PORT`, the host a DNS name or an IP address (IPv6 in brackets), the port 1-65535:
/// what the extender's `--prometheus` takes, written into the Deployment's arguments.
fn prometheus_address(cx: &mut Cx, text: Spanned<String>) -> Option<Spanned<String>> {
    if crate::address::HostPort::parse(&text.value).is_some() {
        return Some(text);
    }
    cx.error(
        Diagnostic::error(Code::InvalidValue, text.span, format!("`{}` is not a Prometheus address", text.value.escape_debug()))
            .label("not HOST:PORT")
            .help("write the host and port of Prometheus's HTTP API, such as \"prometheus-operated.monitoring.svc:9090\""),
    );
    None
}

pub(super) fn lower_steps(cx: &mut Cx, node: &NodeReader<'_>) -> Option<Spanned<String>> {
    let props = node.props(cx, schema::TARGET_KUBERNETES_STEPS.properties);
    node.children(cx, schema::TARGET_KUBERNETES_STEPS.children);
    let text = props.require(cx, node, "image")?.string(cx)?;
    image(cx, text)
}

/// An OCI image reference in the characters references may hold, so it can be written into
/// a manifest and read back unchanged.
fn image(cx: &mut Cx, text: Spanned<String>) -> Option<Spanned<String>> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._-/:@".contains(c);
    let starts_well = text.value.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if !starts_well || text.value.len() > MAX_IMAGE || !text.value.chars().all(allowed) {
        cx.error(
            Diagnostic::error(Code::InvalidValue, text.span, format!("`{}` is not an image reference", text.value.escape_debug()))
                .label("invalid image")
                .help("write a reference such as \"ghcr.io/acme/placid:0.9\" (letters, digits and `._-/:@`)"),
        );
        return None;
    }
    Some(text)
}

/// Resolves the extender's score once scores are lowered: the named one, or the project's
/// only score.
pub(super) fn resolve(cx: &mut Cx, model: &mut Model, scores: &Names<ScoreId>) {
    let score_count = model.scores.len();
    let Some(kubernetes) = &mut model.project.kubernetes else { return };
    let Some(extender) = &mut kubernetes.extender else {
        if let Some(score) = model.scores.first() {
            cx.error(
                Diagnostic::warning(
                    Code::ScoreWithoutExtender,
                    kubernetes.span,
                    "the project's scores place nothing on Kubernetes: no scheduler extender is deployed",
                )
                .label("no `extender`")
                .with_secondary(score.span, "this score applies to Slurm plans and the engine only")
                .help("add `extender image=\"...\" ignorable=#false` to the target to serve a score to kube-scheduler"),
            );
        }
        return;
    };
    extender.score = match &extender.score_name {
        Some(name) => scores.resolve(cx, name),
        None if score_count == 1 => Some(Spanned::new(ScoreId::from_index(0), extender.span)),
        None => {
            let message = if score_count == 0 { "the extender has no score to serve" } else { "the extender must name its score" };
            cx.error(Diagnostic::error(Code::ExtenderScoreUnnamed, extender.span, message).label("which score?").help(
                if score_count == 0 {
                    "declare a `score` or remove the `extender`"
                } else {
                    "add `score=\"NAME\"`: the project declares several scores"
                },
            ));
            None
        }
    };
}

/// A promoting stage's ranking runs as a workflow step, which needs an image: without `steps`,
/// the WorkflowTemplate could not promote, and the stages after it would not run the winners.
pub(super) fn require_steps_image(cx: &mut Cx, model: &Model) {
    let Some(kubernetes) = &model.project.kubernetes else { return };
    if kubernetes.steps_image.is_some() {
        return;
    }
    let promotes = model.plans.iter().flat_map(|plan| &plan.stages).find_map(|stage| stage.promote.as_ref());
    if let Some(promote) = promotes {
        cx.error(
            Diagnostic::error(Code::StepsImageMissing, promote.span, "this promotion needs a step image on Kubernetes")
                .label("ranked by a workflow step")
                .with_secondary(kubernetes.span, "the target names no `steps image=`")
                .help("add `steps image=\"docker.io/library/busybox:1.36\"` (any image with sh, awk and sort) to the Kubernetes target"),
        );
    }
}
