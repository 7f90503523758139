//! Closed JSON Schemas of CustomResourceDefinitions, for validating generated objects the way
//! `../shared/reference/k8s-targets.md` §9 prescribes.
//!
//! CRD schemas do not forbid unknown fields (the API server prunes them silently), so every
//! object schema with `properties` gets `additionalProperties: false` unless it preserves
//! unknown fields; `x-kubernetes-int-or-string` and `nullable` become plain JSON Schema;
//! `metadata` is left to the emitters' own name checks.

use std::path::Path;

use serde_json::{Value, json};

/// The closed schema of `version` of the CRD in the YAML file at `path`.
pub fn closed_schema(path: &Path, version: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let crd: Value = serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{} is not YAML: {error}", path.display()));
    let versions = crd["spec"]["versions"].as_array().cloned().unwrap_or_default();
    let found = versions
        .into_iter()
        .find(|candidate| candidate["name"] == version)
        .unwrap_or_else(|| panic!("{} has no version {version}", path.display()));
    let mut schema = found["schema"]["openAPIV3Schema"].clone();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("metadata".to_owned(), json!({"type": "object"}));
    }
    close(&mut schema);
    schema
}

/// Closes one schema and, through the schema keywords only, every schema inside it (a
/// property may be named `nullable` or `properties`, so the walk never treats a map of
/// properties as a schema).
fn close(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if object.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        object.remove("type");
        object.insert("anyOf".to_owned(), json!([{"type": "integer"}, {"type": "string"}]));
    }
    if object.get("nullable") == Some(&Value::Bool(true))
        && let Some(Value::String(kind)) = object.get("type").cloned()
    {
        object.insert("type".to_owned(), json!([kind, "null"]));
    }
    let preserves = object.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if object.contains_key("properties") && !object.contains_key("additionalProperties") && !preserves {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(close);
    }
    for keyword in ["items", "additionalProperties", "not"] {
        if let Some(inner) = object.get_mut(keyword) {
            close(inner);
        }
    }
    for keyword in ["anyOf", "allOf", "oneOf"] {
        if let Some(Value::Array(inner)) = object.get_mut(keyword) {
            inner.iter_mut().for_each(close);
        }
    }
}

/// Validates `instance` against `schema`, returning every error as `path: message`.
pub fn validate(schema: &Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::draft7::new(schema).unwrap_or_else(|error| panic!("the schema does not compile: {error}"));
    validator.iter_errors(instance).map(|error| format!("{}: {error}", error.instance_path())).collect()
}
