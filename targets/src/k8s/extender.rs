//! The scheduler extender as a deployment (`extender image= ignorable=` of the Kubernetes
//! target): the plugin of the score it serves in a ConfigMap, a Deployment running
//! `placid extender --plugin` on it, the Service kube-scheduler calls
//! ([`super::scheduler`] registers its URL), a ServiceAccount and a PodDisruptionBudget.
//!
//! Why these shapes:
//! - The extender receives whole Node objects (`nodeCacheCapable: false`) and reads nothing
//!   from the API server, so its ServiceAccount gets no token and no RBAC.
//! - The plugin's SHA-256 is an annotation of the pod template, so a new plugin (a changed
//!   score) rolls the Deployment instead of leaving pods on the old module.
//! - The pods are as locked down as a scheduler component can be: non-root, read-only root
//!   filesystem, no privilege escalation, every capability dropped, the runtime's seccomp
//!   profile. The plugin is the only file they read.
//! - With `prometheus=`, the policy's telemetry and the inventory's NVLink domains go in a
//!   second ConfigMap ([`super::telemetry_config`]) that the pods read with `--telemetry`, its
//!   SHA-256 an annotation like the plugin's, so a changed policy or inventory rolls them too.
//! - The PodDisruptionBudget keeps all but one replica through a drain; with one replica it
//!   allows the drain, since a budget that can never be met would block node maintenance.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, HTTPGetAction, PodSecurityContext, PodSpec, PodTemplateSpec,
    Probe, ResourceRequirements, SeccompProfile, SecurityContext, ServiceAccount, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::ExtenderSettings;
use sha2::{Digest, Sha256};

use crate::k8s::kinds;
use crate::k8s::layout::Layout;
use crate::k8s::names::ObjectName;
use crate::k8s::objects::{NewObject, ObjectList, WithSpec};
use crate::k8s::scheduler::EXTENDER_PORT;
use crate::k8s::telemetry_config::{DeployedTelemetry, FILE as TELEMETRY_FILE};

/// The name of every extender object, and the value of its `app.kubernetes.io/name` label.
pub const NAME: &str = "placid-extender";
/// Where the plugin's ConfigMap is mounted in the pods.
pub const PLUGIN_DIR: &str = "/etc/placid/plugin";
/// The ConfigMap key (and file name) of the plugin.
pub const PLUGIN_KEY: &str = "plugin.wasm";
/// The ConfigMap of the deployed telemetry.
const TELEMETRY_NAME: &str = "placid-extender-telemetry";
/// Where the telemetry ConfigMap is mounted in the pods.
pub const TELEMETRY_DIR: &str = "/etc/placid/telemetry";
/// ConfigMaps hold at most 1 MiB (etcd's object limit), base64 included.
const MAX_CONFIG_MAP_BYTES: usize = 1 << 20;
/// E143 when a module of `bytes` bytes, base64-encoded, does not fit in a ConfigMap. The Wasm
/// target's own limit (`MAX_MODULE_BYTES`) is what a host compiles, not what etcd stores, so
/// the ConfigMap's bound is checked here, where the module becomes one.
fn too_large_for_a_config_map(bytes: usize, score: placid_lang::span::Span) -> Option<Diagnostic> {
    // base64 grows the module by a third.
    (bytes.div_ceil(3) * 4 > MAX_CONFIG_MAP_BYTES).then(|| {
        Diagnostic::error(Code::PluginTooLarge, score, format!("the plugin is {} KiB, more than a ConfigMap can hold", bytes >> 10))
            .label("this score's module")
            .help("simplify the score: a ConfigMap holds 1 MiB, about 768 KiB of module")
    })
}

/// An unprivileged user id (distroless's `nonroot`), so the pods never run as root even when
/// the image says otherwise.
const RUN_AS_USER: i64 = 65_532;

/// Pushes the extender's objects when the target has an `extender`.
pub fn emit(model: &Checked, layout: &Layout, list: &mut ObjectList, diagnostics: &mut Diagnostics) {
    let Some(extender) = model.project.kubernetes.as_ref().and_then(|settings| settings.extender.as_ref()) else { return };
    // Lowering reports an extender without a score; nothing is emitted for it.
    let Some(score) = &extender.score else { return };
    let module = match crate::wasm::module(model, model.score(score.value)) {
        Ok(module) => module,
        Err(errors) => {
            diagnostics.extend(errors);
            return;
        }
    };
    if let Some(too_large) = too_large_for_a_config_map(module.len(), score.span) {
        diagnostics.push(too_large);
        return;
    }
    let digest = hex::encode(Sha256::digest(&module));
    // The checker refuses `prometheus=` without `telemetry` (E148).
    let telemetry =
        extender.prometheus.as_ref().zip(DeployedTelemetry::of(model)).map(|(prometheus, config)| (prometheus, config.to_json()));
    let result = (|| -> Result<(), Diagnostic> {
        let name = || ObjectName::fixed(NAME, extender.span);
        let at = |kind| Ok::<_, Diagnostic>(NewObject::namespaced(kind, layout.namespace.clone(), name()?, extender.span));
        let plugin = ConfigMap { binary_data: Some(BTreeMap::from([(PLUGIN_KEY.to_owned(), ByteString(module))])), ..ConfigMap::default() };
        list.push(at(&kinds::CONFIG_MAP)?, plugin)?;
        list.push(
            at(&kinds::SERVICE_ACCOUNT)?,
            ServiceAccount { automount_service_account_token: Some(false), ..ServiceAccount::default() },
        )?;
        let mut annotations = BTreeMap::from([(layout.keys.pod("plugin-sha256", extender.span)?, digest)]);
        let mut live = None;
        if let Some((prometheus, json)) = telemetry {
            annotations.insert(layout.keys.pod("telemetry-sha256", extender.span)?, hex::encode(Sha256::digest(&json)));
            let file = String::from_utf8(json).unwrap_or_default();
            let config = ConfigMap { data: Some(BTreeMap::from([(TELEMETRY_FILE.to_owned(), file)])), ..ConfigMap::default() };
            list.push(
                NewObject::namespaced(
                    &kinds::CONFIG_MAP,
                    layout.namespace.clone(),
                    ObjectName::fixed(TELEMETRY_NAME, extender.span)?,
                    extender.span,
                ),
                config,
            )?;
            live = Some(prometheus.value.as_str());
        }
        list.push(at(&kinds::DEPLOYMENT)?, WithSpec { spec: deployment(extender, annotations, live) })?;
        list.push(at(&kinds::SERVICE)?, WithSpec { spec: service() })?;
        list.push(at(&kinds::POD_DISRUPTION_BUDGET)?, WithSpec { spec: disruption_budget(extender) })?;
        Ok(())
    })();
    if let Err(diagnostic) = result {
        diagnostics.push(diagnostic);
    }
}

/// The labels of the extender's pods, which the Deployment, Service and budget select.
fn pod_labels() -> BTreeMap<String, String> {
    BTreeMap::from([("app.kubernetes.io/name".to_owned(), NAME.to_owned())])
}

fn selector() -> LabelSelector {
    LabelSelector { match_labels: Some(pod_labels()), ..LabelSelector::default() }
}

/// The Deployment; `prometheus`, when the pods read the policy's telemetry from it.
fn deployment(extender: &ExtenderSettings, annotations: BTreeMap<String, String>, prometheus: Option<&str>) -> DeploymentSpec {
    let port = i32::from(EXTENDER_PORT);
    let health = |initial_delay| Probe {
        http_get: Some(HTTPGetAction { path: Some("/healthz".into()), port: IntOrString::Int(port), ..HTTPGetAction::default() }),
        initial_delay_seconds: Some(initial_delay),
        period_seconds: Some(10),
        ..Probe::default()
    };
    let quantity = |text: &str| Quantity(text.to_owned());
    let mut args: Vec<String> = vec![
        "extender".into(),
        "--plugin".into(),
        format!("{PLUGIN_DIR}/{PLUGIN_KEY}"),
        "--listen".into(),
        format!("0.0.0.0:{EXTENDER_PORT}"),
    ];
    let mut mounts =
        vec![VolumeMount { name: "plugin".into(), mount_path: PLUGIN_DIR.into(), read_only: Some(true), ..VolumeMount::default() }];
    let mut volumes = vec![Volume {
        name: "plugin".into(),
        config_map: Some(ConfigMapVolumeSource { name: NAME.into(), ..ConfigMapVolumeSource::default() }),
        ..Volume::default()
    }];
    if let Some(prometheus) = prometheus {
        args.extend(["--telemetry".into(), format!("{TELEMETRY_DIR}/{TELEMETRY_FILE}"), "--prometheus".into(), prometheus.to_owned()]);
        mounts.push(VolumeMount {
            name: "telemetry".into(),
            mount_path: TELEMETRY_DIR.into(),
            read_only: Some(true),
            ..VolumeMount::default()
        });
        volumes.push(Volume {
            name: "telemetry".into(),
            config_map: Some(ConfigMapVolumeSource { name: TELEMETRY_NAME.into(), ..ConfigMapVolumeSource::default() }),
            ..Volume::default()
        });
    }
    let container = Container {
        name: "extender".into(),
        image: Some(extender.image.value.clone()),
        args: Some(args),
        ports: Some(vec![ContainerPort { name: Some("http".into()), container_port: port, ..ContainerPort::default() }]),
        readiness_probe: Some(health(1)),
        liveness_probe: Some(health(10)),
        // A batch of 5,000 nodes scores in about a millisecond; the requests leave room for
        // bursts of concurrent calls, the memory limit bounds the Wasm instances' pool.
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([("cpu".into(), quantity("250m")), ("memory".into(), quantity("128Mi"))])),
            limits: Some(BTreeMap::from([("memory".into(), quantity("512Mi"))])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(RUN_AS_USER),
            read_only_root_filesystem: Some(true),
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities { drop: Some(vec!["ALL".into()]), ..Capabilities::default() }),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    let pod = PodSpec {
        service_account_name: Some(NAME.into()),
        automount_service_account_token: Some(false),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            seccomp_profile: Some(SeccompProfile { type_: "RuntimeDefault".into(), ..SeccompProfile::default() }),
            ..PodSecurityContext::default()
        }),
        containers: vec![container],
        volumes: Some(volumes),
        ..PodSpec::default()
    };
    DeploymentSpec {
        replicas: Some(extender.replicas as i32),
        selector: selector(),
        // Never below the wanted count while rolling: kube-scheduler calls whichever pod the
        // Service picks, and a non-ignorable extender that is down stops GPU scheduling.
        strategy: Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_unavailable: Some(IntOrString::Int(0)),
                max_surge: Some(IntOrString::Int(1)),
            }),
        }),
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta { labels: Some(pod_labels()), annotations: Some(annotations), ..ObjectMeta::default() }),
            spec: Some(pod),
        },
        ..DeploymentSpec::default()
    }
}

fn service() -> ServiceSpec {
    let port = i32::from(EXTENDER_PORT);
    ServiceSpec {
        selector: Some(pod_labels()),
        ports: Some(vec![ServicePort {
            name: Some("http".into()),
            port,
            target_port: Some(IntOrString::String("http".into())),
            ..ServicePort::default()
        }]),
        ..ServiceSpec::default()
    }
}

fn disruption_budget(extender: &ExtenderSettings) -> PodDisruptionBudgetSpec {
    let budget = if extender.replicas > 1 {
        PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(extender.replicas as i32 - 1)),
            ..PodDisruptionBudgetSpec::default()
        }
    } else {
        PodDisruptionBudgetSpec { max_unavailable: Some(IntOrString::Int(1)), ..PodDisruptionBudgetSpec::default() }
    };
    PodDisruptionBudgetSpec { selector: Some(selector()), ..budget }
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;
    use placid_lang::span::Span;

    #[test]
    fn a_module_fits_a_config_map_up_to_three_quarters_of_a_mebibyte() {
        assert!(super::too_large_for_a_config_map(786_432, Span::DETACHED).is_none());
        let refused = super::too_large_for_a_config_map(786_433, Span::DETACHED).map(|diagnostic| diagnostic.code);
        assert_eq!(refused, Some(Code::PluginTooLarge));
    }
}
