//! Admission, executed: the build's admission policies (ValidatingAdmissionPolicies and
//! MutatingAdmissionPolicies with their bindings) evaluated with a CEL runtime (cel-rust) on an
//! object, as the API server would: the policies whose bindings select the object's namespace,
//! mutations first (each merged as server-side apply merges), then every validation whose
//! match constraints and conditions hold. `failurePolicy: Fail`, as every placid policy says:
//! an expression that does not evaluate to a boolean refuses.
//!
//! What cel-rust lacks of Kubernetes' CEL (docs/targets/kubernetes.md, "Admission in tests"):
//! message construction, which [`constructors`] spells as map literals; and Kubernetes' library
//! functions (`quantity`, `url`, `ip`/`cidr`, the regex and list extensions, `authorizer`),
//! which placid's policies do not call.

#![deny(missing_docs)]

pub mod apply;
pub mod constructors;

use std::collections::HashMap;
use std::sync::Arc;

use cel::{Context, Program};
use serde_json::Value;

/// An expression that cannot be evaluated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// It does not parse.
    #[error("policy {policy}: `{expression}` does not parse: {message}")]
    Parse {
        /// The policy's name.
        policy: String,
        /// The expression.
        expression: String,
        /// cel-rust's message.
        message: String,
    },
    /// It fails at run time (a missing field, a type error).
    #[error("policy {policy}: `{expression}` fails: {message}")]
    Evaluate {
        /// The policy's name.
        policy: String,
        /// The expression.
        expression: String,
        /// cel-rust's message.
        message: String,
    },
}

/// What admission made of an object.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Admitted, as the mutations left it.
    Admitted(Value),
    /// Refused with these messages; the object as the validations saw it (mutated).
    Refused {
        /// Each failed validation's message.
        messages: Vec<String>,
        /// The object the validations saw.
        seen: Value,
    },
}

/// A JSON value as Kubernetes' CEL sees it: integers are `int`.
pub fn cel_value(value: &Value) -> cel::Value {
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

/// Evaluates `expression` of policy `policy` with `object` and `variables` bound.
pub fn evaluate(policy: &str, expression: &str, object: &cel::Value, variables: &HashMap<String, cel::Value>) -> Result<cel::Value, Error> {
    let program = Program::compile(expression).map_err(|error| Error::Parse {
        policy: policy.to_owned(),
        expression: expression.to_owned(),
        message: error.to_string(),
    })?;
    let mut context = Context::default();
    context.add_variable_from_value("object", object.clone());
    context.add_variable_from_value("variables", variables.clone());
    program.execute(&context).map_err(|error| Error::Evaluate {
        policy: policy.to_owned(),
        expression: expression.to_owned(),
        message: error.to_string(),
    })
}

/// The text of `value`, `""` when it is not a string.
fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The admission policies of a build and the namespaces their bindings select.
pub struct Policies<'a> {
    objects: Vec<&'a Value>,
}

impl<'a> Policies<'a> {
    /// The policies among `objects` (a build's objects, as JSON), with its Namespaces.
    pub fn new(objects: impl IntoIterator<Item = &'a Value>) -> Policies<'a> {
        Policies { objects: objects.into_iter().collect() }
    }

    /// The labels of namespace `name`, as the build writes it.
    fn namespace_labels(&self, name: &str) -> Option<&'a serde_json::Map<String, Value>> {
        self.objects
            .iter()
            .find(|object| text(&object["kind"]) == "Namespace" && text(&object["metadata"]["name"]) == name)
            .and_then(|object| object["metadata"]["labels"].as_object())
    }

    /// Whether a binding of `kind` (`ValidatingAdmissionPolicyBinding`) of policy `name` selects
    /// `namespace`.
    fn bound(&self, kind: &str, name: &str, namespace: &str) -> bool {
        let labels = self.namespace_labels(namespace);
        self.objects.iter().filter(|object| text(&object["kind"]) == kind && text(&object["spec"]["policyName"]) == name).any(|binding| {
            binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
                .as_object()
                .into_iter()
                .flatten()
                .all(|(key, value)| labels.and_then(|labels| labels.get(key)) == Some(value))
        })
    }

    /// The policies of `kind` bound to `namespace`, with their names.
    fn policies(&self, kind: &'static str, namespace: &str) -> Vec<(&'a str, &'a Value)> {
        self.objects
            .iter()
            .filter(|policy| text(&policy["kind"]) == kind)
            .map(|policy| (text(&policy["metadata"]["name"]), &policy["spec"]))
            .filter(|(name, _)| self.bound(&format!("{kind}Binding"), name, namespace))
            .collect()
    }

    /// Admits `object` into its namespace: mutations, then validations.
    pub fn admit(&self, object: &Value) -> Result<Verdict, Error> {
        let namespace = text(&object["metadata"]["namespace"]).to_owned();
        let mut object = object.clone();
        for (name, spec) in self.policies("MutatingAdmissionPolicy", &namespace) {
            if !matches(name, spec, &object)? {
                continue;
            }
            for mutation in spec["mutations"].as_array().into_iter().flatten() {
                let cel_object = cel_value(&object);
                let values = variables(name, spec, &cel_object)?;
                let applied = apply::configuration(name, text(&mutation["applyConfiguration"]["expression"]), &cel_object, &values)?;
                apply::merge(&mut object, &applied);
            }
        }
        let mut messages = Vec::new();
        for (name, spec) in self.policies("ValidatingAdmissionPolicy", &namespace) {
            if !matches(name, spec, &object)? {
                continue;
            }
            let cel_object = cel_value(&object);
            let values = variables(name, spec, &cel_object)?;
            for validation in spec["validations"].as_array().into_iter().flatten() {
                match evaluate(name, text(&validation["expression"]), &cel_object, &values) {
                    Ok(cel::Value::Bool(true)) => {}
                    Ok(cel::Value::Bool(false)) => messages.push(text(&validation["message"]).to_owned()),
                    // failurePolicy: Fail.
                    other => messages.push(format!("policy {name}: {} gives {other:?}", text(&validation["expression"]))),
                }
            }
        }
        Ok(if messages.is_empty() { Verdict::Admitted(object) } else { Verdict::Refused { messages, seen: object } })
    }
}

/// A policy's `variables`, evaluated in order (each may read the earlier ones).
fn variables(policy: &str, spec: &Value, object: &cel::Value) -> Result<HashMap<String, cel::Value>, Error> {
    let mut values = HashMap::new();
    for variable in spec["variables"].as_array().into_iter().flatten() {
        let value = evaluate(policy, text(&variable["expression"]), object, &values)?;
        values.insert(text(&variable["name"]).to_owned(), value);
    }
    Ok(values)
}

/// Whether a policy's match constraints (resource rules for CREATE) and conditions select
/// `object`.
fn matches(policy: &str, spec: &Value, object: &Value) -> Result<bool, Error> {
    let group = text(&object["apiVersion"]).rsplit_once('/').map_or("", |(group, _)| group);
    let resource = format!("{}s", text(&object["kind"]).to_ascii_lowercase());
    let listed = spec["matchConstraints"]["resourceRules"].as_array().into_iter().flatten().any(|rule| {
        let has = |field: &str, value: &str| rule[field].as_array().into_iter().flatten().any(|item| item == value || item == "*");
        has("apiGroups", group) && has("resources", &resource) && has("operations", "CREATE")
    });
    if !listed {
        return Ok(false);
    }
    let cel_object = cel_value(object);
    for condition in spec["matchConditions"].as_array().into_iter().flatten() {
        if evaluate(policy, text(&condition["expression"]), &cel_object, &HashMap::new())? != cel::Value::Bool(true) {
            return Ok(false);
        }
    }
    Ok(true)
}
