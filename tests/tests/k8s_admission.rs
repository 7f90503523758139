//! Admission, executed: every CEL expression of the build's admission policies (the teams'
//! and the routes' ValidatingAdmissionPolicies, the routes' MutatingAdmissionPolicies) is
//! evaluated with a CEL runtime (cel-rust) on the build's own workload templates and on
//! tampered copies, as the API server would: the policies bound to the object's namespace,
//! mutations first, then every validation whose match conditions hold.
//!
//! Over every example and over generated projects: the templates are admitted, a workload
//! without a queue label is refused, a tier its team may not use is refused with the policy's
//! message, and a tagged workload is routed to its tier and its class's placement (or refused
//! where its team may not use that tier).
//!
//! What cel-rust lacks of Kubernetes' CEL (docs/targets/kubernetes.md, "Admission in tests"):
//! message construction (`Object{...}`, which a MutatingAdmissionPolicy's ApplyConfiguration
//! returns) is parsed but not evaluated, so [`apply_configuration`] evaluates the same
//! expression with every constructor spelled as a map literal; and none of
//! Kubernetes' library functions (`quantity`, `url`, `regex` extensions, `authorizer`), which
//! placid's policies do not call. Every other construct they use (`has`, `in`, `map`, `all`,
//! list concatenation, the conditional operator) is standard CEL that cel-rust evaluates.

mod k8s_support;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::{Context, Program};
use k8s_support::{Emitted, Project, example_projects, generated_projects, strings};
use placid_lang::model::{Routing, TeamId};
use serde_json::Value;

/// A JSON value as Kubernetes' CEL sees it: integers are `int`.
fn cel_value(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(flag) => cel::Value::Bool(*flag),
        Value::Number(number) => number.as_i64().map_or_else(|| cel::Value::Float(number.as_f64().unwrap_or_default()), cel::Value::Int),
        Value::String(text) => cel::Value::String(Arc::new(text.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(cel_value).collect())),
        Value::Object(fields) => {
            fields.iter().map(|(key, value)| (key.clone(), cel_value(value))).collect::<HashMap<String, cel::Value>>().into()
        }
    }
}

/// Evaluates `expression` on `object` with `variables`.
fn evaluate(expression: &str, object: &cel::Value, variables: &HashMap<String, cel::Value>) -> Result<cel::Value, String> {
    let program = Program::compile(expression).map_err(|error| format!("`{expression}` does not parse: {error}"))?;
    let mut context = Context::default();
    context.add_variable_from_value("object", object.clone());
    context.add_variable_from_value("variables", variables.clone());
    program.execute(&context).map_err(|error| format!("`{expression}` fails: {error}"))
}

/// A policy's `variables`, evaluated in order (each may read the earlier ones).
fn variables(spec: &Value, object: &cel::Value) -> Result<HashMap<String, cel::Value>, String> {
    let mut values = HashMap::new();
    for variable in spec["variables"].as_array().into_iter().flatten() {
        let value = evaluate(variable["expression"].as_str().unwrap_or_default(), object, &values)?;
        values.insert(variable["name"].as_str().unwrap_or_default().to_owned(), value);
    }
    Ok(values)
}

/// Whether a policy's match constraints and conditions select `object`.
fn matches(spec: &Value, object: &Value) -> Result<bool, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let resource = format!("{}s", object["kind"].as_str().unwrap_or_default().to_ascii_lowercase());
    let listed = spec["matchConstraints"]["resourceRules"].as_array().into_iter().flatten().any(|rule| {
        let has = |field: &str, value: &str| rule[field].as_array().into_iter().flatten().any(|item| item == value || item == "*");
        has("apiGroups", group) && has("resources", &resource) && has("operations", "CREATE")
    });
    if !listed {
        return Ok(false);
    }
    let cel_object = cel_value(object);
    for condition in spec["matchConditions"].as_array().into_iter().flatten() {
        if evaluate(condition["expression"].as_str().unwrap_or_default(), &cel_object, &HashMap::new())? != cel::Value::Bool(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `expression` with message construction (`Object{...}`, `Object.spec.template{...}`, which
/// cel-rust does not evaluate) spelled as map literals: each constructor's `{` opens a map and
/// its field names, which follow that `{` or a `, ` inside it, become string keys.
fn constructors_as_maps(expression: &str) -> String {
    let mut out = String::new();
    // For each open brace: whether it opened a constructor.
    let mut braces: Vec<bool> = Vec::new();
    let mut rest = expression;
    while let Some(character) = rest.chars().next() {
        if rest.starts_with("Object") && !out.ends_with(|previous: char| previous.is_alphanumeric() || previous == '_' || previous == '.') {
            let end = rest.find(|next: char| !(next.is_alphanumeric() || next == '.' || next == '_')).unwrap_or(rest.len());
            if rest[end..].starts_with('{') {
                out.push('{');
                braces.push(true);
                rest = &rest[end + 1..];
                quote_field(&mut out, &mut rest);
                continue;
            }
        }
        match character {
            '\'' => {
                // A string literal, copied whole (placid escapes `\` and `'` in it).
                let mut escaped = false;
                let end = rest[1..]
                    .char_indices()
                    .find(|(_, next)| {
                        let closes = *next == '\'' && !escaped;
                        escaped = *next == '\\' && !escaped;
                        closes
                    })
                    .map_or(rest.len(), |(index, _)| index + 2);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
                continue;
            }
            '{' => braces.push(false),
            '}' => _ = braces.pop(),
            ',' if braces.last() == Some(&true) => {
                out.push(',');
                rest = &rest[1..];
                quote_field(&mut out, &mut rest);
                continue;
            }
            _ => {}
        }
        out.push(character);
        rest = &rest[character.len_utf8()..];
    }
    out
}

/// Quotes the field name at the start of `rest` (after spaces), if any, into `out`.
fn quote_field(out: &mut String, rest: &mut &str) {
    let trimmed = rest.trim_start();
    out.push_str(&rest[..rest.len() - trimmed.len()]);
    let end = trimmed.find(|next: char| !(next.is_alphanumeric() || next == '_')).unwrap_or(trimmed.len());
    if end > 0 && trimmed[end..].starts_with(':') {
        out.push_str(&format!("'{}'", &trimmed[..end]));
        *rest = &trimmed[end..];
    } else {
        *rest = trimmed;
    }
}

/// An ApplyConfiguration's expression evaluated, constructors as maps: the fields set, as JSON.
fn apply_configuration(expression: &str, object: &cel::Value, variables: &HashMap<String, cel::Value>) -> Result<Value, String> {
    let maps = constructors_as_maps(expression);
    assert!(!maps.contains("Object"), "a constructor this test does not spell: {expression}");
    let applied = evaluate(&maps, object, variables)?;
    applied.json().map_err(|error| format!("`{expression}` gives no JSON: {error}"))
}

/// Merges an applied configuration into `object` as server-side apply does: maps key by key,
/// lists of named items (`replicatedJobs`, a list map keyed by `name`) item by item, anything
/// else replaced.
fn merge(object: &mut Value, applied: &Value) {
    match (object, applied) {
        (Value::Object(into), Value::Object(fields)) => {
            for (key, value) in fields {
                merge(into.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (Value::Array(into), Value::Array(items)) if items.iter().all(|item| item["name"].is_string()) => {
            for item in items {
                match into.iter_mut().find(|existing| existing["name"] == item["name"]) {
                    Some(existing) => merge(existing, item),
                    None => into.push(item.clone()),
                }
            }
        }
        (slot, value) => *slot = value.clone(),
    }
}

/// The admission policies of a build, with the labels of the namespaces their bindings select.
struct Admission<'a> {
    project: &'a Project,
}

/// What admission made of an object: the mutated object, or the refusals' messages and the
/// object as the validations saw it.
type Verdict = Result<Value, (Vec<String>, Value)>;

impl Admission<'_> {
    /// Whether the binding of policy `name` (of `kind`) selects `namespace`.
    fn bound(&self, kind: &str, name: &str, namespace: &str) -> bool {
        let labels = self
            .project
            .objects
            .iter()
            .find(|object| object.kind() == "Namespace" && object.name() == namespace)
            .map(|object| strings(&object.object["metadata"]["labels"]))
            .unwrap_or_default();
        self.project.objects.iter().filter(|object| object.kind() == kind && object.object["spec"]["policyName"] == name).any(|binding| {
            strings(&binding.object["spec"]["matchResources"]["namespaceSelector"]["matchLabels"])
                .iter()
                .all(|(key, value)| labels.get(key) == Some(value))
        })
    }

    fn policies<'p>(&'p self, kind: &'p str, namespace: &'p str) -> impl Iterator<Item = &'p Emitted> + 'p {
        self.project
            .objects
            .iter()
            .filter(move |policy| policy.kind() == kind && self.bound(&format!("{kind}Binding"), policy.name(), namespace))
    }

    /// Admits `object` into its namespace: mutations, then validations.
    fn admit(&self, object: &Value) -> Verdict {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default().to_owned();
        let mut object = object.clone();
        let mut refusals = Vec::new();
        for policy in self.policies("MutatingAdmissionPolicy", &namespace) {
            let spec = &policy.object["spec"];
            if !matches(spec, &object).unwrap_or_else(|error| panic!("{}: {error}", policy.path)) {
                continue;
            }
            for mutation in spec["mutations"].as_array().into_iter().flatten() {
                let cel_object = cel_value(&object);
                let values = variables(spec, &cel_object).unwrap_or_else(|error| panic!("{}: {error}", policy.path));
                let expression = mutation["applyConfiguration"]["expression"].as_str().unwrap_or_default();
                let applied =
                    apply_configuration(expression, &cel_object, &values).unwrap_or_else(|error| panic!("{}: {error}", policy.path));
                merge(&mut object, &applied);
            }
        }
        for policy in self.policies("ValidatingAdmissionPolicy", &namespace) {
            let spec = &policy.object["spec"];
            if !matches(spec, &object).unwrap_or_else(|error| panic!("{}: {error}", policy.path)) {
                continue;
            }
            let cel_object = cel_value(&object);
            let values = variables(spec, &cel_object).unwrap_or_else(|error| panic!("{}: {error}", policy.path));
            for validation in spec["validations"].as_array().into_iter().flatten() {
                let expression = validation["expression"].as_str().unwrap_or_default();
                match evaluate(expression, &cel_object, &values) {
                    Ok(cel::Value::Bool(true)) => {}
                    Ok(cel::Value::Bool(false)) => refusals.push(validation["message"].as_str().unwrap_or_default().to_owned()),
                    // failurePolicy: Fail, as every placid policy says.
                    other => refusals.push(format!("{}: error {other:?}", policy.path)),
                }
            }
        }
        if refusals.is_empty() { Ok(object) } else { Err((refusals, object)) }
    }
}

/// The workloads a team submits: the templates under `workloads/` and the objects the plans'
/// WorkflowTemplates create.
fn workloads(project: &Project) -> Vec<(String, Value)> {
    let mut workloads = Vec::new();
    for object in &project.objects {
        match object.kind() {
            "Job" | "JobSet" => workloads.push((object.path.clone(), object.object.clone())),
            "WorkflowTemplate" => {
                for template in object.object["spec"]["templates"].as_array().into_iter().flatten() {
                    let Some(manifest) = template["resource"]["manifest"].as_str() else { continue };
                    let mut embedded: Value = serde_yaml::from_str(manifest).unwrap_or_else(|error| panic!("{}: {error}", object.path));
                    // Argo names it at run time.
                    embedded["metadata"]["name"] = Value::String("created-by-argo".into());
                    workloads.push((format!("{} template {}", object.path, template["name"]), embedded));
                }
            }
            _ => {}
        }
    }
    workloads
}

/// A policy name as a Kubernetes name, spelled here rather than through placid's function.
fn kube(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

const QUEUE: &str = "kueue.x-k8s.io/queue-name";
const PRIORITY: &str = "kueue.x-k8s.io/priority-class";

fn set_label(object: &mut Value, key: &str, value: Option<&str>) {
    let labels = object["metadata"]["labels"].as_object_mut().expect("a workload has labels");
    match value {
        Some(value) => _ = labels.insert(key.to_owned(), Value::String(value.to_owned())),
        None => _ = labels.remove(key),
    }
}

/// The team whose namespace `object` is in.
fn team_of(project: &Project, object: &Value) -> TeamId {
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let index =
        project.model.teams.iter().position(|team| kube(team.namespace.as_str()) == namespace || team.namespace.as_str() == namespace);
    TeamId::from_index(index.unwrap_or_else(|| panic!("no team has namespace {namespace}")))
}

fn check(project: &Project, compared: &mut usize) -> Vec<String> {
    let admission = Admission { project };
    let mut problems = Vec::new();
    let workloads = workloads(project);
    assert!(!workloads.is_empty(), "{}: no workloads", project.name);
    for (at, workload) in &workloads {
        let team = project.model.team(team_of(project, workload));
        if let Err((refusals, _)) = admission.admit(workload) {
            problems.push(format!("{}: {at}: the build's own template is refused: {refusals:?}", project.name));
        }
        let mut unqueued = workload.clone();
        set_label(&mut unqueued, QUEUE, None);
        match admission.admit(&unqueued) {
            Err((refusals, _)) if refusals.iter().any(|message| message.contains(&format!("must carry the {QUEUE} label"))) => {}
            other => {
                problems.push(format!("{}: {at}: without a queue label: {:?}", project.name, other.err().map(|(refusals, _)| refusals)))
            }
        }
        for (index, tier) in project.model.tiers.iter().enumerate() {
            if team.tiers.iter().any(|allowed| allowed.value.index() == index) {
                continue;
            }
            let mut forbidden = workload.clone();
            set_label(&mut forbidden, QUEUE, Some(&kube(tier.name.as_str())));
            set_label(&mut forbidden, PRIORITY, Some(&kube(tier.name.as_str())));
            let expected = format!("team {} may not use tier {}", team.name, tier.name);
            match admission.admit(&forbidden) {
                Err((refusals, _)) if refusals.iter().any(|message| message.starts_with(&expected)) => {}
                other => {
                    problems.push(format!("{}: {at}: in tier {}: {:?}", project.name, tier.name, other.err().map(|(refusals, _)| refusals)))
                }
            }
        }
        routes(project, &admission, at, workload, &mut problems, compared);
    }
    problems
}

/// Whether the build routes by mutation (a target version of 1.34 or later).
fn mutates(project: &Project) -> bool {
    project.objects.iter().any(|object| object.kind() == "MutatingAdmissionPolicy")
}

/// The pod templates of a workload, each with where it is.
fn pod_templates(workload: &Value) -> Vec<(String, Value)> {
    match workload["kind"].as_str() {
        Some("JobSet") => workload["spec"]["replicatedJobs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|job| (format!(" replicated job {}", job["name"]), job["template"]["spec"]["template"].clone()))
            .collect(),
        Some("Pod") => vec![(String::new(), workload.clone())],
        _ => vec![(String::new(), workload["spec"]["template"].clone())],
    }
}

/// What a class decides on a pod template: its labels but the submitter's own (team, tier,
/// plan, stage), its Kueue topology annotations and its node selector.
fn constraints(pod: &Value, prefix: &str) -> Vec<(&'static str, String, String)> {
    let own = ["team", "tier", "plan", "stage"].map(|name| format!("{prefix}/{name}"));
    let labels =
        strings(&pod["metadata"]["labels"]).into_iter().filter(|(key, _)| !own.contains(key)).map(|(key, value)| ("label", key, value));
    let annotations = strings(&pod["metadata"]["annotations"])
        .into_iter()
        .filter(|(key, _)| key.starts_with("kueue.x-k8s.io/podset-"))
        .map(|(key, value)| ("annotation", key, value));
    let selector = strings(&pod["spec"]["nodeSelector"]).into_iter().map(|(key, value)| ("node selector", key, value));
    labels.chain(annotations).chain(selector).collect()
}

/// The constraints of the build's first template whose pods name `class` directly.
fn directly_classed(project: &Project, prefix: &str, class: &str) -> Option<Vec<(&'static str, String, String)>> {
    project.objects.iter().filter(|object| matches!(object.kind(), "Job" | "JobSet")).find_map(|object| {
        let (_, pod) = pod_templates(&object.object).into_iter().next()?;
        (strings(&pod["metadata"]["labels"]).get(&format!("{prefix}/class")).map(String::as_str) == Some(class))
            .then(|| constraints(&pod, prefix))
    })
}

/// A tagged workload is routed to its tier (the mutating policy sets the labels, whatever the
/// submitter wrote) and, where the route names a class, carries every constraint a template
/// naming that class directly carries (its pod labels, TAS annotation and node selector), or
/// is refused where its team may not use the tier.
/// Counts in `compared` the routed workloads whose pod templates were compared with a template
/// naming the route's class directly.
fn routes(project: &Project, admission: &Admission<'_>, at: &str, workload: &Value, problems: &mut Vec<String>, compared: &mut usize) {
    let prefix = project.model.project.kubernetes.as_ref().map(|settings| settings.label_prefix.value.clone()).unwrap_or_default();
    let team = team_of(project, workload);
    for route in &project.model.routes {
        let mut tagged = workload.clone();
        set_label(&mut tagged, &format!("{prefix}/tag"), Some(route.tag.value.as_str()));
        match project.model.routing(route.tag.value.as_str(), team) {
            Routing::Unrouted => {}
            Routing::Routed { tier: tier_id, .. } => {
                let tier = kube(project.model.tier(tier_id).name.as_str());
                let class = route.class.as_ref().map(|class| kube(project.model.class(class.value).name.as_str()));
                // Routed, the workload meets its new tier's own rules or is refused by them (a
                // template of a never-preempted tier has no grace period), never by the route.
                let (seen, refusals) = match admission.admit(&tagged) {
                    Ok(admitted) => (admitted, Vec::new()),
                    Err((refusals, seen)) => (seen, refusals),
                };
                let labels = strings(&seen["metadata"]["labels"]);
                let routed = labels.get(QUEUE) == Some(&tier)
                    && labels.get(PRIORITY) == Some(&tier)
                    && class.as_ref().is_none_or(|class| labels.get(&format!("{prefix}/class")) == Some(class));
                if !routed {
                    problems.push(format!("{}: {at}: tag {} is not routed to {tier} {class:?}: {labels:?}", project.name, route.tag.value));
                }
                if let Some(class) = &class
                    && mutates(project)
                {
                    let Some(direct) = directly_classed(project, &prefix, class) else {
                        problems.push(format!("{}: no template names class {class} directly", project.name));
                        continue;
                    };
                    for (pod_at, pod) in pod_templates(&seen) {
                        let carried = constraints(&pod, &prefix);
                        if let Some((what, key, value)) =
                            direct.iter().find(|(what, key, value)| !carried.contains(&(*what, key.clone(), value.clone())))
                        {
                            problems.push(format!(
                                "{}: {at}{pod_at}: tag {} routed to class {class} lacks its {what} {key}={value} (has {carried:?})",
                                project.name, route.tag.value
                            ));
                        }
                    }
                    *compared += 1;
                }
                let rules = format!("pods of tier {}", project.model.tier(tier_id).name);
                if let Some(refusal) = refusals.iter().find(|message| !message.starts_with(&rules)) {
                    problems.push(format!("{}: {at}: tag {} is refused: {refusal}", project.name, route.tag.value));
                }
            }
            Routing::Refused { .. } => {
                let expected = format!("(route tag=\"{}\"", route.tag.value);
                match admission.admit(&tagged) {
                    Err((refusals, _)) if refusals.iter().any(|message| message.contains(&expected)) => {}
                    Err((refusals, _)) => {
                        problems.push(format!("{}: {at}: tag {} refused otherwise: {refusals:?}", project.name, route.tag.value))
                    }
                    Ok(_) => problems.push(format!("{}: {at}: tag {} routed where the team may not go", project.name, route.tag.value)),
                }
            }
        }
    }
}

/// Admits every project's workloads; the number of routed workloads compared with a template
/// naming the route's class.
fn assert_admission(projects: &[Project]) -> usize {
    let mut compared = 0;
    let problems: Vec<String> = projects.iter().flat_map(|project| check(project, &mut compared)).collect();
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    compared
}

#[test]
fn every_examples_admission_admits_its_templates_and_refuses_tampered_ones() {
    assert_admission(&example_projects());
}

#[test]
fn generated_projects_admission_admits_their_templates_and_refuses_tampered_ones() {
    // The generated projects route a tag to model-parallel, whose `lanes` is a node selector.
    assert!(assert_admission(&generated_projects()) > 0, "no routed workload was compared with a directly-classed template");
}

#[test]
fn a_policy_refuses_and_a_mutation_sets_what_it_says() {
    let object = serde_json::json!({"kind": "Job", "metadata": {"labels": {"a/tag": "x"}}, "spec": {"template": {"spec": {"terminationGracePeriodSeconds": 120}}}});
    let cel_object = cel_value(&object);
    let none = HashMap::new();
    assert_eq!(evaluate("object.spec.template.spec.terminationGracePeriodSeconds >= 180", &cel_object, &none), Ok(cel::Value::Bool(false)));
    let applied = apply_configuration(
        "object.metadata.labels['a/tag'] == 'x' ? Object{metadata: Object.metadata{labels: {'q': 'p2'}}} : Object{}",
        &cel_object,
        &none,
    );
    let mut merged = object.clone();
    merge(&mut merged, &applied.expect("evaluates"));
    assert_eq!(
        strings(&merged["metadata"]["labels"]),
        BTreeMap::from([("a/tag".to_owned(), "x".to_owned()), ("q".to_owned(), "p2".to_owned())])
    );
}
