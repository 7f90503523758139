//! The Argo CD bootstrap (`kubernetes/bootstrap/`): an AppProject that whitelists exactly the
//! cluster-scoped kinds placid emits, an Application that syncs the generated tree, and a
//! ConfigMap holding a Config Management Plugin (`plugin.yaml`) so Argo CD can instead run
//! `placid build --target kubernetes --stdout` itself from the policy repository.
//!
//! These objects live outside the synced kustomization: an Application that syncs itself could
//! prune its own project. They are applied once (`kubectl apply -k kubernetes/bootstrap`).
//! Invariant: the whitelist is computed from the object list, so a kind added later is
//! whitelisted without touching this module. Repository URL, path and revision are free text
//! from the policy (checked for spaces and control characters) and reach YAML only via serde.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use placid_lang::diag::Diagnostics;
use placid_lang::model::{ArgoSettings, Model};
use serde::{Deserialize, Serialize};

use crate::k8s::kinds::{self, Kind, Scope};
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{Layer, NewObject, ObjectList, WithSpec};
use crate::yaml;

/// The in-cluster API server, Argo CD's name for its own cluster.
const IN_CLUSTER: &str = "https://kubernetes.default.svc";

#[derive(Serialize)]
struct GroupKind {
    group: &'static str,
    kind: &'static str,
}

#[derive(Serialize)]
struct Destination {
    server: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppProjectSpec {
    description: String,
    source_repos: Vec<String>,
    destinations: Vec<Destination>,
    cluster_resource_whitelist: Vec<GroupKind>,
    namespace_resource_whitelist: Vec<GroupKind>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Source {
    #[serde(rename = "repoURL")]
    repo_url: String,
    target_revision: String,
    path: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Automated {
    prune: bool,
    self_heal: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Backoff {
    duration: &'static str,
    factor: i64,
    max_duration: &'static str,
}

#[derive(Serialize)]
struct Retry {
    limit: i64,
    backoff: Backoff,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SyncPolicy {
    automated: Automated,
    sync_options: Vec<&'static str>,
    retry: Retry,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApplicationSpec {
    project: ObjectName,
    source: Source,
    destination: Destination,
    sync_policy: SyncPolicy,
}

/// `plugin.yaml` of the Config Management Plugin (a file read by the argocd-cmp-server
/// sidecar, not an API object; argo-cd `docs/operator-manual/config-management-plugins.md`).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigManagementPlugin {
    /// `argoproj.io/v1alpha1`.
    pub api_version: String,
    /// `ConfigManagementPlugin`.
    pub kind: String,
    /// Its name.
    pub metadata: PluginMetadata,
    /// What it runs.
    pub spec: PluginSpec,
}

/// `metadata` of the plugin.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginMetadata {
    /// The plugin name (Applications use `<name>-<version>`).
    pub name: String,
}

/// A command of the plugin.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// The program and its fixed arguments.
    pub command: Vec<String>,
    /// Further arguments.
    pub args: Vec<String>,
}

/// How Argo CD detects repositories the plugin applies to.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Discover {
    /// A glob that must match in the repository.
    pub file_name: String,
}

/// `spec` of the plugin.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginSpec {
    /// Plugin version.
    pub version: String,
    /// Run before generate; a failure fails the sync.
    pub init: Command,
    /// Prints the manifests (YAML only) on stdout.
    pub generate: Command,
    /// Detection.
    pub discover: Discover,
    /// Whether file modes are kept in the sidecar's copy.
    pub preserve_file_mode: bool,
}

/// The plugin: `placid check .` then `placid build --target kubernetes --stdout .`, whose
/// stdout is the synced objects as one YAML stream and whose diagnostics go to stderr.
pub fn plugin() -> ConfigManagementPlugin {
    let command = |args: &[&str]| Command { command: vec!["placid".into()], args: args.iter().map(|arg| (*arg).to_owned()).collect() };
    ConfigManagementPlugin {
        api_version: "argoproj.io/v1alpha1".into(),
        kind: "ConfigManagementPlugin".into(),
        metadata: PluginMetadata { name: "placid".into() },
        spec: PluginSpec {
            version: "v1".into(),
            init: command(&["check", "."]),
            generate: command(&["build", "--target", "kubernetes", "--stdout", "."]),
            discover: Discover { file_name: "./placid.kdl".into() },
            preserve_file_mode: false,
        },
    }
}

fn group_kinds(kinds: Vec<(&'static str, &'static str)>) -> Vec<GroupKind> {
    kinds.into_iter().map(|(group, kind)| GroupKind { group, kind }).collect()
}

/// Pushes the bootstrap objects when the project declares Argo CD settings. Must run after
/// every synced object is in the list, since the whitelist is read from it.
pub fn emit(model: &Model, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let Some(kubernetes) = &model.project.kubernetes else { return };
    let Some(argo) = &kubernetes.argo else { return };
    let span = kubernetes.span;
    let argo_namespace = match ObjectName::map(&argo.namespace, span, "Argo CD namespace") {
        Ok(name) => name,
        Err(diagnostic) => return diagnostics.push(diagnostic),
    };
    let project = AppProjectSpec {
        description: format!("placid policy {}", model.project.name),
        source_repos: vec![argo.repo.value.clone()],
        destinations: vec![Destination { server: IN_CLUSTER, namespace: Some("*") }],
        cluster_resource_whitelist: group_kinds(list.synced_kinds(Scope::Cluster)),
        namespace_resource_whitelist: group_kinds(list.synced_kinds(Scope::Namespaced)),
    };
    let application = application(layout, argo);
    let plugin_text = match yaml::to_string(&plugin()) {
        Ok(text) => text,
        Err(error) => return diagnostics.push(super::yaml_diagnostic(span, "the Argo CD plugin", &error)),
    };
    let plugin_map = ConfigMap { data: Some(BTreeMap::from([("plugin.yaml".to_owned(), plugin_text)])), ..ConfigMap::default() };
    let bootstrap = |kind: &'static Kind, name: ObjectName| NewObject {
        kind,
        namespace: Some(argo_namespace.clone()),
        name,
        layer: Layer::Bootstrap,
        span,
        labels: BTreeMap::new(),
    };
    let results = [
        list.push(bootstrap(&kinds::APP_PROJECT, layout.project.clone()), WithSpec { spec: project }),
        list.push(bootstrap(&kinds::APPLICATION, layout.project.clone()), WithSpec { spec: application }),
        ObjectName::fixed("placid-cmp-plugin", span).and_then(|name| list.push(bootstrap(&kinds::CONFIG_MAP, name), plugin_map)),
    ];
    Extend::extend(diagnostics, results.into_iter().filter_map(Result::err));
}

fn application(layout: &Layout, argo: &ArgoSettings) -> ApplicationSpec {
    ApplicationSpec {
        project: layout.project.clone(),
        source: Source { repo_url: argo.repo.value.clone(), target_revision: argo.revision.value.clone(), path: argo.path.value.clone() },
        destination: Destination { server: IN_CLUSTER, namespace: None },
        sync_policy: SyncPolicy {
            automated: Automated { prune: true, self_heal: true },
            // PruneLast: removed queues go after their replacements exist.
            sync_options: vec!["PruneLast=true"],
            retry: Retry { limit: 5, backoff: Backoff { duration: "10s", factor: 2, max_duration: "3m" } },
        },
    }
}
