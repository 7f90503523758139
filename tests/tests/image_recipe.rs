//! The `placid` image recipe (`Containerfile`) against what the emitted objects expect of the
//! image: the extender's Deployment passes `extender ...` as arguments to the entrypoint and
//! runs as uid 65532, and the Argo CD plugin calls `placid` from the PATH.
//!
//! Building the image takes a release build of the workspace (many minutes on two cores), so
//! it runs only with `PLACID_IMAGE_BUILD=1` and a usable Docker daemon (`docker info`), and
//! says plainly when it did not run; the recipe's text is checked always.

mod k8s_support;

use std::process::Command;

use k8s_support::emitted;
use placid_tests::workspace_root;

fn recipe() -> String {
    let path = workspace_root().join("Containerfile");
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The instructions of the recipe's last stage, without comments.
fn final_stage(recipe: &str) -> Vec<&str> {
    let lines: Vec<&str> = recipe.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).collect();
    let start = lines.iter().rposition(|line| line.starts_with("FROM ")).expect("a FROM");
    lines[start..].to_vec()
}

#[test]
fn the_image_runs_placid_as_the_deployment_and_the_plugin_expect() {
    let recipe = recipe();
    let stage = final_stage(&recipe);
    assert!(stage.contains(&r#"ENTRYPOINT ["/usr/local/bin/placid"]"#), "{stage:?}");
    assert!(stage.iter().any(|line| line.starts_with("COPY --from=build") && line.ends_with(" /usr/local/bin/placid")), "{stage:?}");
    assert!(recipe.contains("cargo build --release --locked -p placid-cli --bin placid"));
    let objects = emitted("cluster");
    let deployment =
        objects.iter().find(|object| object.kind() == "Deployment" && object.name() == "placid-extender").expect("the extender");
    let container = &deployment.object["spec"]["template"]["spec"]["containers"][0];
    assert!(container["command"].is_null(), "the Deployment must use the image's entrypoint");
    assert_eq!(container["args"][0], "extender");
    let uid = container["securityContext"]["runAsUser"].as_i64().expect("a uid");
    assert!(stage.contains(&format!("USER {uid}:{uid}").as_str()), "the image's user is the pods' {uid}: {stage:?}");
    let plugin = objects.iter().find(|object| object.name() == "placid-cmp-plugin").expect("the Argo CD plugin");
    assert!(plugin.object["data"]["plugin.yaml"].as_str().is_some_and(|text| text.contains("- placid")), "the plugin calls `placid`");
}

#[test]
fn the_image_builds_and_runs_placid() {
    if std::env::var("PLACID_IMAGE_BUILD").as_deref() != Ok("1") {
        println!("the image build did not run: set PLACID_IMAGE_BUILD=1 (with a usable Docker daemon) to build the Containerfile");
        return;
    }
    let usable = Command::new("docker").arg("info").output().is_ok_and(|output| output.status.success());
    if !usable {
        println!("the image build did not run: `docker info` finds no usable Docker daemon");
        return;
    }
    let root = workspace_root();
    let tag = "placid-image-recipe-test:latest";
    let built =
        Command::new("docker").args(["build", "-f", "Containerfile", "-t", tag, "."]).current_dir(&root).status().expect("docker runs");
    assert!(built.success(), "docker build failed");
    let run = Command::new("docker").args(["run", "--rm", tag, "--version"]).output().expect("docker runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("placid "), "{}", String::from_utf8_lossy(&run.stdout));
}
