//! The `project` node and the settings of each target (Slurm, Kubernetes with its Argo CD
//! and extender settings, Wasm): what `placid.kdl` says about the project as a whole rather
//! than about one policy element, so every target reads its switches from one place.

use crate::model::ScoreId;
use crate::name::Name;
use crate::source::RelPath;
use crate::span::{Span, Spanned};
use crate::units::Currency;

/// The `project` node and the target settings of `placid.kdl`.
#[derive(Clone, Debug)]
pub struct Project {
    /// The project's name.
    pub name: Name,
    /// Where the project is declared.
    pub span: Span,
    /// The currency every amount of the project is in.
    pub currency: Currency,
    /// Where the build output is published (`https://…`, no trailing `/`), so each alert's
    /// `runbook_url` is a link; `None`: the path inside the build output.
    pub runbooks: Option<String>,
    /// The Slurm target, when enabled.
    pub slurm: Option<SlurmSettings>,
    /// The Kubernetes target, when enabled.
    pub kubernetes: Option<KubernetesSettings>,
    /// The Wasm scoring target, when enabled.
    pub wasm: Option<WasmSettings>,
}

impl Default for Project {
    fn default() -> Project {
        Project {
            name: Name::new("unnamed").unwrap_or_else(|_| unreachable!("a valid literal name")),
            span: Span::DETACHED,
            currency: Currency::Usd,
            runbooks: None,
            slurm: None,
            kubernetes: None,
            wasm: None,
        }
    }
}

/// A Slurm release, by its `YY.MM` version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlurmVersion {
    /// Year part (`22` of 22.05).
    pub major: u16,
    /// Month part (`5` of 22.05).
    pub minor: u16,
}

impl SlurmVersion {
    /// The releases placid emits for.
    pub const SUPPORTED: &'static [SlurmVersion] = &[
        SlurmVersion { major: 22, minor: 5 },
        SlurmVersion { major: 23, minor: 2 },
        SlurmVersion { major: 23, minor: 11 },
        SlurmVersion { major: 24, minor: 5 },
        SlurmVersion { major: 24, minor: 11 },
        SlurmVersion { major: 25, minor: 5 },
        SlurmVersion { major: 25, minor: 11 },
    ];

    /// Parses `22.05`.
    pub fn parse(text: &str) -> Option<SlurmVersion> {
        let (major, minor) = text.split_once('.')?;
        let version = SlurmVersion { major: major.parse().ok()?, minor: minor.parse().ok()? };
        SlurmVersion::SUPPORTED.contains(&version).then_some(version)
    }

    /// Whether this release is at least `major.minor`.
    pub fn at_least(self, major: u16, minor: u16) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl std::fmt::Display for SlurmVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:02}", self.major, self.minor)
    }
}

/// `target "slurm" ...`.
#[derive(Clone, Debug)]
pub struct SlurmSettings {
    /// Where the target is declared.
    pub span: Span,
    /// The Slurm release the output is for.
    pub version: SlurmVersion,
    /// `ClusterName` for accounting.
    pub cluster: Name,
    /// Whether slurmdbd accounting is in use (QOS and associations); without it tiers become
    /// partitions.
    pub accounting: bool,
    /// A directory of minijinja templates overriding the built-in sbatch templates, and
    /// where `templates=` names it.
    pub templates: Option<Spanned<RelPath>>,
}

/// `target "kubernetes" ...`.
#[derive(Clone, Debug)]
pub struct KubernetesSettings {
    /// Where the target is declared.
    pub span: Span,
    /// Kubernetes minor version (`34` of 1.34).
    pub minor_version: u16,
    /// The DNS prefix of every label and taint placid writes (`placid.dev`).
    pub label_prefix: Spanned<String>,
    /// Namespace for placid's own objects (the extender, the Argo CD application).
    pub namespace: Name,
    /// Argo CD settings, when the output is synced by Argo CD.
    pub argo: Option<ArgoSettings>,
    /// The scheduler extender's deployment, when a score places the cluster's GPU pods.
    pub extender: Option<ExtenderSettings>,
    /// The image of the steps placid adds to plan workflows (`steps image=`): a POSIX shell
    /// with `awk` and `sort`, for ranking a promoting stage's trials.
    pub steps_image: Option<Spanned<String>>,
}

/// `extender image= ignorable= [score=] [replicas=]` of the Kubernetes target: the Deployment
/// that serves a score's plugin to kube-scheduler.
#[derive(Clone, Debug)]
pub struct ExtenderSettings {
    /// Where it is declared.
    pub span: Span,
    /// The container image holding the `placid` binary.
    pub image: Spanned<String>,
    /// The score it serves; `None` until names are resolved, and when the project's only
    /// score is meant.
    pub score: Option<Spanned<ScoreId>>,
    /// The score's name as written, resolved into `score` once scores are lowered.
    pub score_name: Option<Spanned<Name>>,
    /// Pods of the Deployment.
    pub replicas: u32,
    /// Whether kube-scheduler places GPU pods without the extender when it is unreachable:
    /// the policy must choose, since neither answer is safe for every cluster.
    pub ignorable: bool,
    /// The Prometheus the deployed extender reads the policy's `telemetry` from, `HOST:PORT`
    /// (`prometheus-operated.monitoring.svc:9090`); `None`: it reads none (warning E147).
    pub prometheus: Option<Spanned<String>>,
}

impl KubernetesSettings {
    /// The label prefix of a project that names none (and of the Wasm plugins of a project
    /// without a Kubernetes target, which still say which labels a cluster would hold).
    pub const DEFAULT_LABEL_PREFIX: &'static str = "placid.dev";

    /// The score the deployed extender serves to kube-scheduler, if an extender is deployed:
    /// the only score whose stages kube-scheduler places through placid.
    pub fn served_score(&self) -> Option<ScoreId> {
        self.extender.as_ref()?.score.as_ref().map(|score| score.value)
    }
}

/// Argo CD settings of the Kubernetes target.
#[derive(Clone, Debug)]
pub struct ArgoSettings {
    /// Git repository URL of the generated tree.
    pub repo: Spanned<String>,
    /// Path of the generated tree in that repository.
    pub path: Spanned<String>,
    /// Revision Argo CD tracks.
    pub revision: Spanned<String>,
    /// Namespace Argo CD runs in.
    pub namespace: Name,
}

/// `target "wasm"`.
#[derive(Clone, Debug)]
pub struct WasmSettings {
    /// Where the target is declared.
    pub span: Span,
}
