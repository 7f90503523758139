//! The one list every Kubernetes object passes through before it becomes a file.
//!
//! Emitters build typed content (k8s-openapi types, or the typed CRD structs of this module's
//! siblings) and [`ObjectList::push`] it with its [`Kind`], name and namespace. The list keeps
//! the content typed and writes its YAML only when a file or the stream is asked for: `placid
//! check` builds every object for its diagnostics and never needs their bytes. The list owns
//! what is the same for every object: `apiVersion`, `kind`, `metadata` (placid's labels, the
//! Argo CD sync wave and `Replace=true` for kinds with immutable fields), the file path, the
//! `kustomization.yaml` of each layer and the multi-document stream that the Argo CD plugin
//! prints. A new emitter adds its kinds to [`super::kinds`] and pushes its objects here, as
//! the Argo Rollouts of migrations (`rollouts`) do; it gets waves, paths and kustomization
//! entries for free.
//!
//! Invariants: an object is identified by (kind, namespace, name), and a second object with
//! the same identity is a diagnostic (E051) at the span of the element that produced it, never
//! a silent overwrite; output order is (wave, kind, namespace, name), independent of push
//! order, so output is byte-identical for the same model.

use std::collections::{BTreeMap, HashMap};

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;
use serde::Serialize;

use crate::Artifact;
use crate::k8s::kinds::{Kind, Mutability, Retention, Scope};
use crate::k8s::names::ObjectName;
use crate::yaml::{self, Scalars};

/// Which kustomization an object belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// Synced by Argo CD from `kubernetes/` (and printed by `placid build --stdout`).
    Synced,
    /// Applied once by an administrator from `kubernetes/bootstrap/`: the Argo CD project,
    /// application and plugin, which must exist before anything can be synced.
    Bootstrap,
    /// Written to `kubernetes/workloads/` for teams to submit (a plan stage's Job or JobSet),
    /// never synced: no kustomization lists them.
    Workloads,
}

impl Layer {
    fn directory(self) -> &'static str {
        match self {
            Layer::Synced => "kubernetes",
            Layer::Bootstrap => "kubernetes/bootstrap",
            Layer::Workloads => "kubernetes/workloads",
        }
    }
}

/// The identity and placement of an object being pushed.
#[derive(Clone, Debug)]
pub struct NewObject {
    /// Its kind.
    pub kind: &'static Kind,
    /// Its namespace (only for namespaced kinds).
    pub namespace: Option<ObjectName>,
    /// Its name.
    pub name: ObjectName,
    /// Which kustomization lists it.
    pub layer: Layer,
    /// The model element it comes from (for diagnostics).
    pub span: Span,
    /// Labels beyond the ones every placid object carries.
    pub labels: BTreeMap<String, String>,
}

impl NewObject {
    /// A synced, cluster-scoped object without extra labels.
    pub fn cluster(kind: &'static Kind, name: ObjectName, span: Span) -> NewObject {
        NewObject { kind, namespace: None, name, layer: Layer::Synced, span, labels: BTreeMap::new() }
    }

    /// A synced, namespaced object without extra labels.
    pub fn namespaced(kind: &'static Kind, namespace: ObjectName, name: ObjectName, span: Span) -> NewObject {
        NewObject { kind, namespace: Some(namespace), name, layer: Layer::Synced, span, labels: BTreeMap::new() }
    }
}

/// Typed content, kept until its YAML is written.
trait Content: Send + Sync {
    /// Appends everything but `apiVersion`, `kind` and `metadata` to `out`, in the content
    /// type's field order.
    fn write_body(&self, scalars: &mut Scalars, out: &mut String) -> Result<(), yaml::Error>;
}

impl<T: Serialize + Send + Sync> Content for T {
    fn write_body(&self, scalars: &mut Scalars, out: &mut String) -> Result<(), yaml::Error> {
        yaml::write_mapping(self, OWNED, scalars, out)
    }
}

/// An object in the list.
pub struct Object {
    /// Identity and placement.
    pub meta: NewObject,
    content: Box<dyn Content>,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Content is any serialisable type, not always `Debug`: `to_yaml` shows it.
        formatter.debug_struct("Object").field("meta", &self.meta).finish_non_exhaustive()
    }
}

impl Object {
    fn sort_key(&self) -> (crate::k8s::kinds::SyncWave, &'static str, Option<&ObjectName>, &ObjectName) {
        (self.meta.kind.wave, self.meta.kind.kind, self.meta.namespace.as_ref(), &self.meta.name)
    }

    /// The file path of the object (`kubernetes/kueue/clusterqueue.vision.yaml`). Names and
    /// namespaces are DNS labels without dots, so the dotted form cannot be ambiguous.
    pub fn path(&self) -> String {
        let kind = self.meta.kind.kind.to_ascii_lowercase();
        let file = match &self.meta.namespace {
            Some(namespace) => format!("{kind}.{namespace}.{}.yaml", self.meta.name),
            None => format!("{kind}.{}.yaml", self.meta.name),
        };
        format!("{}/{}/{file}", self.meta.layer.directory(), self.meta.kind.directory)
    }

    /// The full object as YAML: header, metadata, then content. A content that cannot be
    /// written (a bug in placid; [`ObjectList::artifacts`] reports it as an error) gives a
    /// comment saying why, which reads as no object: this text is for tools and tests, which
    /// read it as a `String`.
    pub fn to_yaml(&self, project: &str) -> String {
        let mut out = String::new();
        match self.write_yaml(project, &mut Scalars::default(), &mut out) {
            Ok(()) => out,
            Err(error) => format!("# placid could not write {}: {error}\n", self.path()),
        }
    }

    /// The full object as JSON, as [`Object::to_yaml`] writes it (what a tool reading the
    /// file gets), or why it could not be written.
    pub fn to_json(&self, project: &str) -> Result<serde_json::Value, String> {
        let mut out = String::new();
        self.write_yaml(project, &mut Scalars::default(), &mut out).map_err(|error| error.to_string())?;
        serde_yaml::from_str(&out).map_err(|error| error.to_string())
    }

    /// Appends the full object to `out`.
    fn write_yaml(&self, project: &str, scalars: &mut Scalars, out: &mut String) -> Result<(), yaml::Error> {
        let kind = self.meta.kind;
        let mut labels: BTreeMap<&str, &str> = self.meta.labels.iter().map(|(key, value)| (key.as_str(), value.as_str())).collect();
        labels.insert("app.kubernetes.io/managed-by", "placid");
        labels.insert("app.kubernetes.io/part-of", project);
        let mut annotations = BTreeMap::new();
        // A workload template is submitted by a team, never synced: no wave.
        if self.meta.layer != Layer::Workloads {
            annotations.insert("argocd.argoproj.io/sync-wave", kind.wave.0.to_string());
        }
        let mut sync_options = Vec::new();
        if kind.mutability == Mutability::Replace {
            sync_options.push("Replace=true");
        }
        if kind.retention == Retention::Kept {
            sync_options.extend(["Prune=false", "Delete=false"]);
        }
        if !sync_options.is_empty() {
            annotations.insert("argocd.argoproj.io/sync-options", sync_options.join(","));
        }
        let header = Header {
            api_version: kind.api_version,
            kind: kind.kind,
            metadata: Metadata {
                name: self.meta.name.as_str(),
                namespace: self.meta.namespace.as_ref().map(ObjectName::as_str),
                labels,
                annotations,
            },
        };
        yaml::write_mapping(&header, &[], scalars, out)?;
        self.content.write_body(scalars, out)
    }
}

/// What the list writes before an object's content, in this order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Header<'a> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata<'a>,
}

#[derive(Serialize)]
struct Metadata<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    labels: BTreeMap<&'a str, &'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<&'a str, String>,
}

/// The content of an object that is nothing but its `spec`.
#[derive(Serialize)]
pub struct WithSpec<T: Serialize> {
    /// The object's `spec`.
    pub spec: T,
}

/// The fields of typed content the list writes itself. A k8s-openapi object serialises with
/// its own `apiVersion`, `kind` and `metadata`; they are dropped so metadata is written in
/// one place.
const OWNED: &[&str] = &["apiVersion", "kind", "metadata"];

/// An object's identity: (group/version, kind, namespace, name).
type Identity = (&'static str, &'static str, Option<String>, String);

/// Every object of a build, in one place.
#[derive(Debug, Default)]
pub struct ObjectList {
    objects: Vec<Object>,
    /// Where each identity is in `objects`, so a duplicate is found without a scan.
    identities: HashMap<Identity, usize>,
}

impl ObjectList {
    /// An empty list.
    pub fn new() -> ObjectList {
        ObjectList::default()
    }

    /// Adds an object with the typed `content` (its own `apiVersion`, `kind` and `metadata`,
    /// if any, are dropped when it is written), or reports that another element already
    /// produced an object of the same kind, namespace and name.
    pub fn push<T: Serialize + Send + Sync + 'static>(&mut self, meta: NewObject, content: T) -> Result<(), Diagnostic> {
        let identity: Identity = (
            meta.kind.api_version,
            meta.kind.kind,
            meta.namespace.as_ref().map(|namespace| namespace.as_str().to_owned()),
            meta.name.as_str().to_owned(),
        );
        if let Some(existing) = self.identities.get(&identity) {
            return Err(Diagnostic::error(
                Code::KubernetesNameCollision,
                meta.span,
                format!("this would be a second {} named `{}`", meta.kind.kind, meta.name),
            )
            .label("same Kubernetes name")
            .with_secondary(self.objects[*existing].meta.span, "the first one comes from here")
            .help("rename one of them: names are lower-cased and `_` and `.` become `-`"));
        }
        self.identities.insert(identity, self.objects.len());
        self.objects.push(Object { meta, content: Box::new(content) });
        Ok(())
    }

    /// The objects in output order.
    pub fn sorted(&self) -> Vec<&Object> {
        let mut objects: Vec<&Object> = self.objects.iter().collect();
        objects.sort_by(|left, right| left.sort_key().cmp(&right.sort_key()));
        objects
    }

    /// The (group, kind) pairs of the kinds of `scope` that Argo CD syncs, sorted.
    pub fn synced_kinds(&self, scope: Scope) -> Vec<(&'static str, &'static str)> {
        let mut kinds: Vec<_> = self
            .objects
            .iter()
            .filter(|object| object.meta.layer == Layer::Synced && object.meta.kind.scope == scope)
            .map(|object| (object.meta.kind.group(), object.meta.kind.kind))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// One file per object plus a `kustomization.yaml` per layer, or why one could not be
    /// written as YAML.
    pub fn artifacts(&self, project: &str) -> Result<Vec<Artifact>, yaml::Error> {
        let sorted = self.sorted();
        let layers: Vec<(Layer, Vec<&Object>)> = [Layer::Synced, Layer::Bootstrap, Layer::Workloads]
            .into_iter()
            .map(|layer| (layer, sorted.iter().copied().filter(|object| object.meta.layer == layer).collect::<Vec<_>>()))
            .filter(|(_, objects)| !objects.is_empty())
            .collect();
        let in_order: Vec<&Object> = layers.iter().flat_map(|(_, objects)| objects.iter().copied()).collect();
        let mut texts = yaml_texts(&in_order, project)?.into_iter();
        let mut artifacts = Vec::with_capacity(sorted.len() + 2);
        for (layer, objects) in layers {
            let prefix = format!("{}/", layer.directory());
            let mut resources = Vec::new();
            for (object, text) in objects.into_iter().zip(texts.by_ref()) {
                let path = object.path();
                resources.push(path.strip_prefix(&prefix).unwrap_or(&path).to_owned());
                artifacts.push(Artifact::text(path, text));
            }
            if layer != Layer::Workloads {
                artifacts.push(Artifact::text(format!("{prefix}kustomization.yaml"), kustomization(resources)?));
            }
        }
        artifacts.sort();
        Ok(artifacts)
    }

    /// The synced objects as one multi-document YAML stream, in output order, or why one
    /// could not be written as YAML.
    pub fn stream(&self, project: &str) -> Result<String, yaml::Error> {
        let mut scalars = Scalars::default();
        let mut out = String::new();
        for (index, object) in self.sorted().into_iter().filter(|object| object.meta.layer == Layer::Synced).enumerate() {
            if index > 0 {
                out.push_str("---\n");
            }
            object.write_yaml(project, &mut scalars, &mut out)?;
        }
        Ok(out)
    }
}

/// The YAML of each of `objects`, in order, written on two threads, one taking every other
/// object (objects come sorted by kind, and some kinds are far larger than others): writing
/// is most of a large tree's emission. Each thread has its own [`Scalars`], a memo that
/// changes no text.
fn yaml_texts(objects: &[&Object], project: &str) -> Result<Vec<String>, yaml::Error> {
    let write = |first: usize| {
        let mut scalars = Scalars::default();
        objects
            .iter()
            .skip(first)
            .step_by(2)
            .map(|object| {
                let mut text = String::new();
                object.write_yaml(project, &mut scalars, &mut text).map(|()| text)
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let (even, odd) = std::thread::scope(|scope| {
        let odd = scope.spawn(|| write(1));
        (write(0), odd.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    let (even, mut odd) = (even?, odd?.into_iter());
    let mut texts = Vec::with_capacity(objects.len());
    for text in even {
        texts.push(text);
        texts.extend(odd.next());
    }
    Ok(texts)
}

/// `kustomization.yaml` (kustomize.config.k8s.io/v1beta1). No `namespace:` on purpose:
/// kustomize does not know CRD scopes and would stamp it onto cluster-scoped Kueue objects.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Kustomization {
    api_version: &'static str,
    kind: &'static str,
    resources: Vec<String>,
}

fn kustomization(resources: Vec<String>) -> Result<String, yaml::Error> {
    let kustomization = Kustomization { api_version: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources };
    yaml::to_string(&kustomization)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::kinds;

    fn name(text: &str) -> ObjectName {
        ObjectName::fixed(text, Span::DETACHED).unwrap_or_else(|diagnostic| panic!("{}", diagnostic.message))
    }

    fn empty_spec() -> WithSpec<BTreeMap<String, u32>> {
        WithSpec { spec: BTreeMap::new() }
    }

    #[test]
    fn duplicates_are_reported_not_overwritten() {
        let mut list = ObjectList::new();
        assert!(list.push(NewObject::cluster(&kinds::COHORT, name("a"), Span::DETACHED), empty_spec()).is_ok());
        let second = list.push(NewObject::cluster(&kinds::COHORT, name("a"), Span::DETACHED), empty_spec());
        assert_eq!(second.map_err(|diagnostic| diagnostic.code), Err(Code::KubernetesNameCollision));
        assert!(list.push(NewObject::cluster(&kinds::TOPOLOGY, name("a"), Span::DETACHED), empty_spec()).is_ok());
    }

    #[test]
    fn output_is_ordered_by_wave_and_carries_sync_annotations() {
        let mut list = ObjectList::new();
        for (kind, object) in [(&kinds::LOCAL_QUEUE, "lq"), (&kinds::NAMESPACE, "team")] {
            let meta = match kind.scope {
                Scope::Cluster => NewObject::cluster(kind, name(object), Span::DETACHED),
                Scope::Namespaced => NewObject::namespaced(kind, name("team"), name(object), Span::DETACHED),
            };
            assert!(list.push(meta, empty_spec()).is_ok());
        }
        let stream = list.stream("demo").unwrap_or_default();
        let namespace_at = stream.find("kind: Namespace").unwrap_or(usize::MAX);
        let queue_at = stream.find("kind: LocalQueue").unwrap_or(0);
        assert!(namespace_at < queue_at, "{stream}");
        assert!(stream.contains("argocd.argoproj.io/sync-options: Replace=true"));
        let paths: Vec<String> = list.artifacts("demo").unwrap_or_default().into_iter().map(|artifact| artifact.path).collect();
        assert_eq!(
            paths,
            ["kubernetes/kueue/localqueue.team.lq.yaml", "kubernetes/kustomization.yaml", "kubernetes/namespaces/namespace.team.yaml"]
        );
    }
}
