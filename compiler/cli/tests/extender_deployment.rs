//! The Kubernetes target's extender deployment runs: the plugin in its ConfigMap is the one
//! whose hash the pod template carries, and `placid` started with the Deployment's own
//! arguments (paths and address moved into a temp dir) serves it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use sha2::{Digest, Sha256};

fn read<T: for<'de> k8s_openapi::serde::Deserialize<'de>>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Kills the extender when the test ends, passed or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http(address: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap_or_else(|error| panic!("{address}: {error}"));
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("answer");
    reply
}

#[test]
fn the_deployment_serves_the_plugin_of_its_config_map() {
    let temp = tempfile::tempdir().expect("temp dir");
    let out = temp.path().join("out");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster");
    let built = Command::new(env!("CARGO_BIN_EXE_placid")).arg("build").arg(&example).arg("-o").arg(&out).output().expect("placid");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let kubernetes = out.join("kubernetes");
    let config_map: ConfigMap = read(&kubernetes.join("config/configmap.placid-system.placid-extender.yaml"));
    let deployment: Deployment = read(&kubernetes.join("extender/deployment.placid-system.placid-extender.yaml"));
    let service: Service = read(&kubernetes.join("extender/service.placid-system.placid-extender.yaml"));
    let budget: PodDisruptionBudget = read(&kubernetes.join("extender/poddisruptionbudget.placid-system.placid-extender.yaml"));

    let module = &config_map.binary_data.as_ref().and_then(|data| data.get("plugin.wasm")).expect("the plugin in binaryData").0;
    let spec = deployment.spec.expect("spec");
    let template = spec.template;
    let annotations = template.metadata.as_ref().and_then(|meta| meta.annotations.clone()).unwrap_or_default();
    assert_eq!(annotations.get("placid.dev/plugin-sha256"), Some(&hex::encode(Sha256::digest(module))), "a new plugin must roll the pods");
    let labels = template.metadata.as_ref().and_then(|meta| meta.labels.clone()).unwrap_or_default();
    let selects =
        |selector: &std::collections::BTreeMap<String, String>| selector.iter().all(|(key, value)| labels.get(key) == Some(value));
    assert!(selects(&spec.selector.match_labels.clone().unwrap_or_default()), "the Deployment selects its pods");
    assert!(selects(&service.spec.as_ref().and_then(|spec| spec.selector.clone()).unwrap_or_default()), "the Service selects the pods");
    let budget_selector = budget.spec.as_ref().and_then(|spec| spec.selector.as_ref()).and_then(|selector| selector.match_labels.clone());
    assert!(selects(&budget_selector.unwrap_or_default()), "the budget covers the pods");

    let pod = template.spec.expect("pod spec");
    let container = &pod.containers[0];
    let security = container.security_context.as_ref().expect("security context");
    assert_eq!((security.run_as_non_root, security.read_only_root_filesystem), (Some(true), Some(true)));
    // The mounted volume is the ConfigMap, at the directory the `--plugin` path is in.
    let mount = &container.volume_mounts.as_ref().expect("mounts")[0];
    let volume = pod.volumes.as_ref().expect("volumes").iter().find(|volume| volume.name == mount.name).expect("the mounted volume");
    assert_eq!(volume.config_map.as_ref().map(|source| source.name.as_str()), Some("placid-extender"));
    let mut args = container.args.clone().expect("args");
    let plugin_at = args.iter().position(|arg| arg == "--plugin").expect("--plugin") + 1;
    assert_eq!(Path::new(&args[plugin_at]).parent(), Some(Path::new(&mount.mount_path)));

    // Run those arguments here: the plugin from the ConfigMap, on a free loopback port.
    let plugin_file: PathBuf = temp.path().join("plugin.wasm");
    std::fs::write(&plugin_file, module).expect("write plugin");
    args[plugin_at] = plugin_file.display().to_string();
    let port = TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).expect("free port").port();
    let address = format!("127.0.0.1:{port}");
    let listen_at = args.iter().position(|arg| arg == "--listen").expect("--listen") + 1;
    args[listen_at] = address.clone();
    let mut child = Command::new(env!("CARGO_BIN_EXE_placid")).args(&args).stderr(Stdio::piped()).spawn().expect("start extender");
    let mut started = String::new();
    BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut started).expect("the listening line");
    let _running = Running(child);
    assert!(started.contains(&format!("http://{address}")), "{started}");

    let health = http(&address, "GET /healthz HTTP/1.1\r\nHost: extender\r\nConnection: close\r\n\r\n");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let body = r#"{"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"1"}}}]}},"Nodes":{"items":[{"metadata":{"name":"n1","labels":{}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]}}"#;
    let request = format!(
        "POST /prioritize HTTP/1.1\r\nHost: extender\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let reply = http(&address, &request);
    assert!(reply.starts_with("HTTP/1.1 200") && reply.contains(r#""Host":"n1""#), "{reply}");
}

/// A stand-in Prometheus on loopback: `domain_q` says nvl-a is at 97 % now, `node_q` says
/// nothing. Answers until the test ends.
fn stand_in_prometheus() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = String::new();
            let _ = BufReader::new(&stream).read_line(&mut head);
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64());
            let result = if head.contains("domain_q") {
                format!(r#"[{{"metric":{{"nvlink_domain":"nvl-a"}},"value":[{now},"0.97"]}}]"#)
            } else {
                "[]".to_owned()
            };
            let body = format!(r#"{{"status":"success","data":{{"resultType":"vector","result":{result}}}}}"#);
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
    address
}

#[test]
fn the_deployed_extender_throttles_with_the_policys_telemetry() {
    let temp = tempfile::tempdir().expect("temp dir");
    let project = temp.path().join("project");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster");
    assert!(Command::new("cp").arg("-r").arg(&example).arg(&project).status().expect("cp").success());
    let manifest = std::fs::read_to_string(project.join("placid.kdl")).expect("placid.kdl");
    // Under a prefix of its own: the pods carry `ml.acme-corp.io/comm`, which the deployed
    // extender, holding no project, learns from the telemetry file.
    let manifest = manifest
        .replace("ignorable=#false", "ignorable=#false prometheus=\"prometheus-operated.monitoring.svc:9090\"")
        .replace("label-prefix=\"placid.dev\"", "label-prefix=\"ml.acme-corp.io\"");
    std::fs::write(project.join("placid.kdl"), manifest).expect("write placid.kdl");
    let telemetry = "telemetry half-life=\"1s\" max-age=\"1m\" ttl=\"1s\" {\n    node-query \"node_q\"\n    domain-query \"domain_q\"\n    throttle domain-nvlink-above=0.85 for=\"0s\" comm=\"high\"\n}\n";
    std::fs::write(project.join("policy/telemetry.kdl"), telemetry).expect("write the telemetry");
    let out = temp.path().join("out");
    let built = Command::new(env!("CARGO_BIN_EXE_placid")).arg("build").arg(&project).arg("-o").arg(&out).output().expect("placid");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    assert!(!String::from_utf8_lossy(&built.stderr).contains("E147"), "the deployed extender reads the telemetry now");
    let kubernetes = out.join("kubernetes");
    let plugin: ConfigMap = read(&kubernetes.join("config/configmap.placid-system.placid-extender.yaml"));
    let config: ConfigMap = read(&kubernetes.join("config/configmap.placid-system.placid-extender-telemetry.yaml"));
    let deployment: Deployment = read(&kubernetes.join("extender/deployment.placid-system.placid-extender.yaml"));
    let file = config.data.as_ref().and_then(|data| data.get("telemetry.json")).expect("telemetry.json").clone();
    let template = deployment.spec.expect("spec").template;
    let annotations = template.metadata.as_ref().and_then(|meta| meta.annotations.clone()).unwrap_or_default();
    assert_eq!(
        annotations.get("ml.acme-corp.io/telemetry-sha256"),
        Some(&hex::encode(Sha256::digest(file.as_bytes()))),
        "a new policy must roll the pods"
    );
    let mut args = template.spec.expect("pod").containers[0].args.clone().expect("args");
    let value = |args: &[String], flag: &str| args.iter().position(|arg| arg == flag).unwrap_or_else(|| panic!("no {flag}")) + 1;
    assert_eq!(args[value(&args, "--prometheus")], "prometheus-operated.monitoring.svc:9090");

    // The Deployment's arguments, with the files and addresses moved here.
    let module = &plugin.binary_data.as_ref().and_then(|data| data.get("plugin.wasm")).expect("plugin").0;
    std::fs::write(temp.path().join("plugin.wasm"), module).expect("write plugin");
    std::fs::write(temp.path().join("telemetry.json"), &file).expect("write telemetry");
    let at = value(&args, "--plugin");
    args[at] = temp.path().join("plugin.wasm").display().to_string();
    let at = value(&args, "--telemetry");
    args[at] = temp.path().join("telemetry.json").display().to_string();
    let at = value(&args, "--prometheus");
    args[at] = stand_in_prometheus();
    let port = TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).expect("free port").port();
    let address = format!("127.0.0.1:{port}");
    let at = value(&args, "--listen");
    args[at] = address.clone();
    let mut child = Command::new(env!("CARGO_BIN_EXE_placid")).args(&args).stderr(Stdio::piped()).spawn().expect("start extender");
    let mut started = String::new();
    BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut started).expect("the listening line");
    let _running = Running(child);
    assert!(started.contains("with live NVLink telemetry"), "{started}");

    let filter = |comm: &str| {
        let node =
            |name: &str| format!(r#"{{"metadata":{{"name":"{name}","labels":{{}}}},"status":{{"allocatable":{{"nvidia.com/gpu":"4"}}}}}}"#);
        let body = format!(
            r#"{{"Pod":{{"metadata":{{"name":"p","labels":{{"ml.acme-corp.io/comm":"{comm}"}}}},"spec":{{"containers":[{{"resources":{{"requests":{{"nvidia.com/gpu":"1"}}}}}}]}}}},"Nodes":{{"items":[{},{}]}}}}"#,
            node("rv-a-01"),
            node("x86-01")
        );
        let request = format!(
            "POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        http(&address, &request)
    };
    let high = filter("high");
    assert!(high.starts_with("HTTP/1.1 200") && high.contains("rv-a-01") && high.contains("throttled"), "{high}");
    assert!(!filter("low").contains("throttled"), "a comm-low pod is not throttled");
}
