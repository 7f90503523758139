//! The kinds placid emits, each with what the object list needs to place it: API version,
//! scope, Argo CD sync wave, whether its fields are immutable, and its output directory.
//!
//! Invariant: sync waves follow dependency order, so Argo CD creates what an object refers to
//! before the object (namespaces before queues, flavors and cohorts before ClusterQueues,
//! ClusterQueues before LocalQueues, priority classes before anything a job may use). A new
//! kind (an Argo Rollout, an AnalysisTemplate) is added here as one more constant.

/// Whether a kind's objects live in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Cluster-scoped: Argo CD's AppProject must whitelist it.
    Cluster,
    /// Namespaced.
    Namespaced,
}

/// What a sync must do when a field of an existing object changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutability {
    /// A plain apply updates the object.
    Mutable,
    /// Some fields are immutable (PriorityClass value, LocalQueue.clusterQueue,
    /// ResourceFlavor.topologyName, Topology levels on Kueue 0.19): Argo CD must replace the
    /// object (`Replace=true`) instead of patching it.
    Replace,
}

/// Whether Argo CD may delete an object that leaves the policy (prune) or whose Application
/// is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Retention {
    /// Argo CD prunes and deletes it with the rest.
    Prunable,
    /// Deleting it would delete what users run inside it (a Namespace takes its running jobs
    /// with it): `Prune=false,Delete=false`. Removing a team leaves its namespace for an
    /// administrator to delete once it is drained; `placid diff` still flags the removal.
    Kept,
}

/// An Argo CD sync wave (`argocd.argoproj.io/sync-wave`); lower waves sync first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SyncWave(pub i32);

/// A kind of Kubernetes object placid emits.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kind {
    /// `group/version`, or `version` for the core group.
    pub api_version: &'static str,
    /// The kind (`ClusterQueue`).
    pub kind: &'static str,
    /// Cluster-scoped or namespaced.
    pub scope: Scope,
    /// When Argo CD syncs it.
    pub wave: SyncWave,
    /// Whether updates need a replace.
    pub mutability: Mutability,
    /// Whether Argo CD may delete it.
    pub retention: Retention,
    /// The directory under `kubernetes/` its files go to.
    pub directory: &'static str,
}

impl Kind {
    /// The API group (`kueue.x-k8s.io`; empty for the core group).
    pub fn group(&self) -> &'static str {
        match self.api_version.rsplit_once('/') {
            Some((group, _)) => group,
            None => "",
        }
    }
}

/// `v1` Namespace: created first, everything namespaced lives in one.
pub const NAMESPACE: Kind = Kind {
    api_version: "v1",
    kind: "Namespace",
    scope: Scope::Cluster,
    wave: SyncWave(-3),
    mutability: Mutability::Mutable,
    retention: Retention::Kept,
    directory: "namespaces",
};

/// `scheduling.k8s.io/v1` PriorityClass: value and preemptionPolicy are immutable.
pub const PRIORITY_CLASS: Kind = Kind {
    api_version: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    scope: Scope::Cluster,
    wave: SyncWave(-2),
    mutability: Mutability::Replace,
    retention: Retention::Prunable,
    directory: "priority",
};

/// Kueue WorkloadPriorityClass: its value may change (existing workloads keep the old one).
pub const WORKLOAD_PRIORITY_CLASS: Kind = Kind {
    api_version: "kueue.x-k8s.io/v1beta2",
    kind: "WorkloadPriorityClass",
    scope: Scope::Cluster,
    wave: SyncWave(-2),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "priority",
};

/// NFD NodeFeatureRule: labels nodes before flavors and the topology select them.
pub const NODE_FEATURE_RULE: Kind = Kind {
    api_version: "nfd.k8s-sigs.io/v1alpha1",
    kind: "NodeFeatureRule",
    scope: Scope::Cluster,
    wave: SyncWave(-2),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "nodes",
};

/// Kueue Topology: levels are immutable in Kueue 0.19.
pub const TOPOLOGY: Kind = Kind {
    api_version: "kueue.x-k8s.io/v1beta2",
    kind: "Topology",
    scope: Scope::Cluster,
    wave: SyncWave(-1),
    mutability: Mutability::Replace,
    retention: Retention::Prunable,
    directory: "kueue",
};

/// Kueue ResourceFlavor: topologyName is immutable (and nodeLabels/tolerations in 0.19).
pub const RESOURCE_FLAVOR: Kind = Kind {
    api_version: "kueue.x-k8s.io/v1beta2",
    kind: "ResourceFlavor",
    scope: Scope::Cluster,
    wave: SyncWave(-1),
    mutability: Mutability::Replace,
    retention: Retention::Prunable,
    directory: "kueue",
};

/// Kueue Cohort.
pub const COHORT: Kind = Kind {
    api_version: "kueue.x-k8s.io/v1beta2",
    kind: "Cohort",
    scope: Scope::Cluster,
    wave: SyncWave(-1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "kueue",
};

/// Kueue ClusterQueue: refers to flavors and the cohort.
pub const CLUSTER_QUEUE: Kind = Kind {
    api_version: "kueue.x-k8s.io/v1beta2",
    kind: "ClusterQueue",
    scope: Scope::Cluster,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "kueue",
};

/// Kueue LocalQueue: `clusterQueue` is immutable.
pub const LOCAL_QUEUE: Kind = Kind {
    api_version: "kueue.x-k8s.io/v1beta2",
    kind: "LocalQueue",
    scope: Scope::Namespaced,
    wave: SyncWave(1),
    mutability: Mutability::Replace,
    retention: Retention::Prunable,
    directory: "kueue",
};

/// ValidatingAdmissionPolicy.
pub const VALIDATING_ADMISSION_POLICY: Kind = Kind {
    api_version: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    scope: Scope::Cluster,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "admission",
};

/// ValidatingAdmissionPolicyBinding: after its policy.
pub const VALIDATING_ADMISSION_POLICY_BINDING: Kind = Kind {
    api_version: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    scope: Scope::Cluster,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "admission",
};

/// `batch/v1` Job: a plan stage's workload template (not synced: teams submit it).
pub const JOB: Kind = Kind {
    api_version: "batch/v1",
    kind: "Job",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "jobs",
};

/// `jobset.x-k8s.io/v1alpha2` JobSet: the template of a stage whose gang spans nodes.
pub const JOB_SET: Kind = Kind {
    api_version: "jobset.x-k8s.io/v1alpha2",
    kind: "JobSet",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "jobsets",
};

/// `argoproj.io/v1alpha1` WorkflowTemplate: a plan's stages as a DAG, after the LocalQueues
/// its stages submit to.
pub const WORKFLOW_TEMPLATE: Kind = Kind {
    api_version: "argoproj.io/v1alpha1",
    kind: "WorkflowTemplate",
    scope: Scope::Namespaced,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "workflows",
};

/// `v1` ConfigMap (the scheduler configuration, the Argo CD plugin).
pub const CONFIG_MAP: Kind = Kind {
    api_version: "v1",
    kind: "ConfigMap",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "config",
};

/// `v1` ServiceAccount of the scheduler extender, before the Deployment that runs as it.
pub const SERVICE_ACCOUNT: Kind = Kind {
    api_version: "v1",
    kind: "ServiceAccount",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "extender",
};

/// `apps/v1` Deployment of the scheduler extender, after its ConfigMap and ServiceAccount.
pub const DEPLOYMENT: Kind = Kind {
    api_version: "apps/v1",
    kind: "Deployment",
    scope: Scope::Namespaced,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "extender",
};

/// `v1` Service in front of the extender's pods (the URL kube-scheduler calls).
pub const SERVICE: Kind = Kind {
    api_version: "v1",
    kind: "Service",
    scope: Scope::Namespaced,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "extender",
};

/// `policy/v1` PodDisruptionBudget keeping an extender up through node drains.
pub const POD_DISRUPTION_BUDGET: Kind = Kind {
    api_version: "policy/v1",
    kind: "PodDisruptionBudget",
    scope: Scope::Namespaced,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "extender",
};

/// prometheus-operator PrometheusRule.
pub const PROMETHEUS_RULE: Kind = Kind {
    api_version: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    scope: Scope::Namespaced,
    wave: SyncWave(2),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "monitoring",
};

/// Argo Rollouts AnalysisTemplate: a migration's gates and rollback triggers as Prometheus
/// queries; synced before the Rollouts that reference them.
pub const ANALYSIS_TEMPLATE: Kind = Kind {
    api_version: "argoproj.io/v1alpha1",
    kind: "AnalysisTemplate",
    scope: Scope::Namespaced,
    wave: SyncWave(3),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "rollouts",
};

/// Argo Rollouts Rollout: a migrated service's canary steps, one per migration phase.
pub const ROLLOUT: Kind = Kind {
    api_version: "argoproj.io/v1alpha1",
    kind: "Rollout",
    scope: Scope::Namespaced,
    wave: SyncWave(4),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "rollouts",
};

/// Argo CD AppProject (bootstrap).
pub const APP_PROJECT: Kind = Kind {
    api_version: "argoproj.io/v1alpha1",
    kind: "AppProject",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "argocd",
};

/// Argo CD Application (bootstrap), after its project.
pub const APPLICATION: Kind = Kind {
    api_version: "argoproj.io/v1alpha1",
    kind: "Application",
    scope: Scope::Namespaced,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "argocd",
};

/// `rbac.authorization.k8s.io/v1` ClusterRoleBinding: binds placid's scheduler to Kubernetes'
/// own scheduler roles, before the Deployment that runs as it.
pub const CLUSTER_ROLE_BINDING: Kind = Kind {
    api_version: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    scope: Scope::Cluster,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "scheduler",
};

/// `rbac.authorization.k8s.io/v1` Role: the lease placid's scheduler elects its leader with.
pub const ROLE: Kind = Kind {
    api_version: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "scheduler",
};

/// `rbac.authorization.k8s.io/v1` RoleBinding of [`ROLE`].
pub const ROLE_BINDING: Kind = Kind {
    api_version: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    scope: Scope::Namespaced,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "scheduler",
};

/// `admissionregistration.k8s.io/v1beta1` MutatingAdmissionPolicy: a team's routes, setting
/// the routed tier's labels.
pub const MUTATING_ADMISSION_POLICY: Kind = Kind {
    api_version: "admissionregistration.k8s.io/v1beta1",
    kind: "MutatingAdmissionPolicy",
    scope: Scope::Cluster,
    wave: SyncWave(0),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "admission",
};

/// MutatingAdmissionPolicyBinding: after its policy.
pub const MUTATING_ADMISSION_POLICY_BINDING: Kind = Kind {
    api_version: "admissionregistration.k8s.io/v1beta1",
    kind: "MutatingAdmissionPolicyBinding",
    scope: Scope::Cluster,
    wave: SyncWave(1),
    mutability: Mutability::Mutable,
    retention: Retention::Prunable,
    directory: "admission",
};
