//! A MutatingAdmissionPolicy's ApplyConfiguration: its expression evaluated (constructors as
//! maps, [`crate::constructors`]) and merged into the object as server-side apply merges.

use std::collections::HashMap;

use serde_json::Value;

use crate::{Error, constructors, evaluate};

/// The fields the ApplyConfiguration `expression` of policy `policy` sets on `object`, as JSON.
pub fn configuration(policy: &str, expression: &str, object: &cel::Value, variables: &HashMap<String, cel::Value>) -> Result<Value, Error> {
    let applied = evaluate(policy, &constructors::as_maps(expression), object, variables)?;
    applied.json().map_err(|error| Error::Evaluate {
        policy: policy.to_owned(),
        expression: expression.to_owned(),
        message: format!("gives no JSON: {error}"),
    })
}

/// Merges an applied configuration into `object` as server-side apply does: maps key by key,
/// lists of named items (`replicatedJobs`, a list map keyed by `name`) item by item, anything
/// else replaced.
pub fn merge(object: &mut Value, applied: &Value) {
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::{configuration, merge};
    use crate::cel_value;

    #[test]
    fn a_mutation_sets_labels_and_merges_named_items() {
        let mut object = json!({"kind": "JobSet", "metadata": {"labels": {"a/tag": "x"}},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": 1}]}});
        let applied = configuration(
            "p",
            "object.metadata.labels['a/tag'] == 'x' ? Object{metadata: Object.metadata{labels: {'q': 'p2'}}, spec: Object.spec{replicatedJobs: object.spec.replicatedJobs.map(j, Object.spec.replicatedJobs{name: j.name, template: Object.spec.replicatedJobs.template{}})}} : Object{}",
            &cel_value(&object),
            &HashMap::new(),
        );
        merge(&mut object, &applied.expect("evaluates"));
        assert_eq!(object["metadata"]["labels"], json!({"a/tag": "x", "q": "p2"}));
        assert_eq!(object["spec"]["replicatedJobs"], json!([{"name": "w", "replicas": 1, "template": {}}]));
    }
}
