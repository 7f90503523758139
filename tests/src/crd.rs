//! Closed JSON Schemas of CustomResourceDefinitions, for validating generated objects the way
//! `../shared/reference/k8s-targets.md` §9 prescribes.
//!
//! CRD schemas do not forbid unknown fields (the API server prunes them silently), so every
//! object schema with `properties` gets `additionalProperties: false` unless it preserves
//! unknown fields; `x-kubernetes-int-or-string` and `nullable` become plain JSON Schema;
//! `metadata` is left to the emitters' own name checks.

use std::collections::BTreeMap;
use std::path::Path;

use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

/// Closed schemas by `(apiVersion, kind)` (`("kueue.x-k8s.io/v1beta2", "ClusterQueue")`).
pub type Schemas = BTreeMap<(String, String), Value>;

/// The closed schema of every served, non-deprecated version of every CRD in the YAML files
/// under `dir` (recursively; a file may hold several documents).
pub fn schemas(dir: &Path) -> Schemas {
    let mut index = Schemas::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display())).filter_map(Result::ok)
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|extension| extension == "yaml") {
                index_file(&path, &mut index);
            }
        }
    }
    index
}

fn index_file(path: &Path, index: &mut Schemas) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    for document in serde_yaml::Deserializer::from_str(&text) {
        let crd: Value = serde::Deserialize::deserialize(document).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        if crd["kind"] != "CustomResourceDefinition" {
            continue;
        }
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
        for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
            if version["deprecated"] == true {
                continue;
            }
            let mut schema = version["schema"]["openAPIV3Schema"].clone();
            close(&mut schema);
            // Metadata is checked by the emitters' name rules; the CRD leaves it open on purpose.
            schema["properties"]["metadata"] = json!({"type": "object"});
            let name = version["name"].as_str().unwrap_or_default();
            index.insert((format!("{group}/{name}"), kind.to_owned()), schema);
        }
    }
}

/// Closes one schema and, through the schema keywords only, every schema inside it (a
/// property may be named `nullable` or `properties`, so the walk never treats a map of
/// properties as a schema).
fn close(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if object.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) && !object.contains_key("anyOf") {
        object.remove("type");
        object.insert("anyOf".to_owned(), json!([{"type": "integer"}, {"type": "string"}]));
    }
    if object.remove("nullable") == Some(Value::Bool(true))
        && let Some(Value::String(kind)) = object.get("type").cloned()
    {
        object.insert("type".to_owned(), json!([kind, "null"]));
    }
    if let Some(Value::String(pattern)) = object.get("pattern") {
        match ecma_pattern(pattern) {
            Some(translated) => object.insert("pattern".to_owned(), Value::String(translated)),
            None => object.remove("pattern"),
        };
    }
    let preserves = object.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if object.contains_key("properties") && !object.contains_key("additionalProperties") && !preserves {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    for keyword in ["properties", "patternProperties"] {
        if let Some(Value::Object(children)) = object.get_mut(keyword) {
            children.values_mut().for_each(close);
        }
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

/// The API server matches `pattern` with Go's RE2, JSON Schema with ECMA-262, which has no
/// inline flags. `(?i)` over plain letters (prometheus-operator's `^(?i)(abort|warn)?$`) is
/// spelt out as `[aA]` classes; a pattern we cannot translate safely is dropped (`None`),
/// which only loosens the check.
fn ecma_pattern(pattern: &str) -> Option<String> {
    if !pattern.contains("(?") {
        return Some(pattern.to_owned());
    }
    let rest = pattern.replacen("(?i)", "", 1);
    if rest.contains("(?") || rest.contains('[') || rest.contains('\\') {
        return None;
    }
    Some(
        rest.chars()
            .map(
                |c| if c.is_ascii_alphabetic() { format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase()) } else { c.to_string() },
            )
            .collect(),
    )
}

/// A draft-7 validator for a closed CRD schema.
pub fn validator(schema: &Value) -> Validator {
    jsonschema::options().with_draft(Draft::Draft7).build(schema).unwrap_or_else(|error| panic!("the schema does not compile: {error}"))
}

/// Validates `instance` against `validator`, returning every error as `message at path`.
pub fn errors(validator: &Validator, instance: &Value) -> Vec<String> {
    validator.iter_errors(instance).map(|error| format!("{error} at {}", error.instance_path())).collect()
}

#[cfg(test)]
mod tests {
    use super::ecma_pattern;

    #[test]
    fn go_inline_flags_become_ecma_or_are_dropped() {
        assert_eq!(ecma_pattern("^[a-z]+$").as_deref(), Some("^[a-z]+$"));
        assert_eq!(ecma_pattern("^(?i)(ab|w)?$").as_deref(), Some("^([aA][bB]|[wW])?$"));
        assert_eq!(ecma_pattern("^(?i)[a-z]$"), None);
        assert_eq!(ecma_pattern("(?s).*"), None);
    }
}
