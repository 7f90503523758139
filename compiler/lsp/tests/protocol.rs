//! The language server over the protocol, in process: the handshake, diagnostics of an
//! edited (unsaved) buffer with their code, help and quick fix, and their clearing; hover,
//! completion, definition, references and formatting on a copy of the bundled example; and
//! requests a client should not send, which must be answered, not crash the server.

mod support;

use serde_json::{Value, json};
use support::{Client, example, position_of, uri};

fn text_of(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{error}"))
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics.iter().filter_map(|diagnostic| diagnostic["code"].as_str().map(str::to_owned)).collect()
}

fn labels(result: &Value) -> Vec<String> {
    let items = result.as_array().or_else(|| result["items"].as_array()).cloned().unwrap_or_default();
    items.iter().filter_map(|item| item["label"].as_str().map(str::to_owned)).collect()
}

fn files(locations: &Value) -> Vec<String> {
    let mut files: Vec<String> = locations
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|location| location["uri"].as_str().and_then(|uri| uri.rsplit_once("cluster/")).map(|(_, file)| file.to_owned()))
        .collect();
    files.sort();
    files.dedup();
    files
}

#[test]
fn an_unsaved_mistake_is_reported_fixed_and_cleared() {
    let (_dir, root) = example("cluster");
    let tiers = root.join("policy/tiers.kdl");
    let saved = text_of(&tiers);
    let edited = saved.replace("window=\"3m\"", "windw=\"3m\"");
    let mut client = Client::start();
    client.open(&tiers, &edited);
    let diagnostics = client.diagnostics(&uri(&tiers));
    let unknown =
        diagnostics.iter().find(|diagnostic| diagnostic["code"] == "placid::E003").unwrap_or_else(|| panic!("no E003 in {diagnostics:?}"));
    assert_eq!(unknown["severity"], 1);
    assert_eq!(unknown["source"], "placid");
    let message = unknown["message"].as_str().unwrap_or_default();
    assert!(message.contains("`windw`") && message.contains("help: did you mean `window`?"), "{message}");
    assert_eq!(unknown["range"]["start"], position_of(&edited, "windw", 0));
    // The file on disk is untouched: the diagnostic came from the buffer.
    assert_eq!(text_of(&tiers), saved);

    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri(&tiers) }, "range": unknown["range"], "context": { "diagnostics": [unknown] } }),
    );
    let action = &actions[0];
    assert_eq!(action["kind"], "quickfix");
    let edit = &action["edit"]["changes"][uri(&tiers)][0];
    assert_eq!(edit["newText"], "window");
    assert_eq!(edit["range"]["start"], position_of(&edited, "windw", 0));
    assert_eq!(edit["range"]["end"], position_of(&edited, "windw", 5));

    // The fixed buffer keeps only the example's own warning (a Kubernetes gap).
    client.change(&tiers, 2, &saved);
    assert_eq!(codes(&client.diagnostics(&uri(&tiers))), ["placid::E156"]);
    client.shutdown();
}

#[test]
fn a_kdl1_boolean_offers_its_kdl2_spelling() {
    let (_dir, root) = example("cluster");
    let tiers = root.join("policy/tiers.kdl");
    let edited = text_of(&tiers).replacen("backfill #true", "backfill true", 1);
    let mut client = Client::start();
    client.open(&tiers, &edited);
    let diagnostics = client.diagnostics(&uri(&tiers));
    let syntax = diagnostics.iter().find(|diagnostic| diagnostic["code"] == "placid::E001").unwrap_or_else(|| panic!("{diagnostics:?}"));
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri(&tiers) }, "range": syntax["range"], "context": { "diagnostics": [] } }),
    );
    assert_eq!(actions[0]["edit"]["changes"][uri(&tiers)][0]["newText"], "#true", "{actions}");
    client.shutdown();
}

#[test]
fn a_mistake_in_one_file_is_published_on_the_file_it_concerns() {
    let (_dir, root) = example("cluster");
    let plans = root.join("policy/plans.kdl");
    let edited = text_of(&plans).replacen("tier=\"P1\"", "tier=\"P7\"", 1);
    let mut client = Client::start();
    client.open(&plans, &edited);
    let diagnostics = client.diagnostics(&uri(&plans));
    let unresolved =
        diagnostics.iter().find(|diagnostic| diagnostic["code"] == "placid::E008").unwrap_or_else(|| panic!("{diagnostics:?}"));
    assert!(unresolved["message"].as_str().unwrap_or_default().contains("P7"));
    // A reference from another open file: published there, and cleared once it is fixed.
    let teams = root.join("policy/teams.kdl");
    let saved = text_of(&teams);
    client.open(&teams, &saved.replacen("tiers \"P1\" \"P2\"", "tiers \"P1\" \"P9\"", 1));
    assert!(codes(&client.diagnostics(&uri(&teams))).contains(&"placid::E008".to_owned()));
    client.change(&teams, 2, &saved);
    assert_eq!(client.diagnostics(&uri(&teams)), Vec::<Value>::new(), "the fixed file is cleared");
    client.shutdown();
}

#[test]
fn hover_completion_and_navigation() {
    let (_dir, root) = example("cluster");
    let plans = root.join("policy/plans.kdl");
    let text = text_of(&plans);
    let mut client = Client::start();
    client.open(&plans, &text);
    assert_eq!(codes(&client.diagnostics(&uri(&plans))), ["placid::E155"], "the example's one warning here");
    let document = json!({ "uri": uri(&plans) });

    // A declared name: the tier's priority and window, from the model.
    let hover = client.request("textDocument/hover", json!({ "textDocument": document, "position": position_of(&text, "tier=\"P1\"", 7) }));
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("tier `P1`") && shown.contains("priority 500") && shown.contains("3m"), "{shown}");
    // A pool: its GPUs and price.
    let hover =
        client.request("textDocument/hover", json!({ "textDocument": document, "position": position_of(&text, "pool=\"nvl-b\"", 7) }));
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("16 GPUs") && shown.contains("per GPU-hour"), "{shown}");
    // A keyword: its properties from the schema table.
    let hover =
        client.request("textDocument/hover", json!({ "textDocument": document, "position": position_of(&text, "stage \"prep\"", 1) }));
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("plan/stage") && shown.contains("`max-time`"), "{shown}");

    // Completion of a reference: the declared tiers.
    let edited = text.replacen("tier=\"P2\" class=\"data-parallel\" pool=\"x86-spot\"", "tier=", 1);
    client.change(&plans, 2, &edited);
    let completion =
        client.request("textDocument/completion", json!({ "textDocument": document, "position": position_of(&edited, "tier= gpus", 5) }));
    assert_eq!(labels(&completion), ["P0", "P1", "P2"]);
    // Of a stage's properties.
    let edited = text.replacen("    stage \"finetune\"", "    stage \"more\" \n    stage \"finetune\"", 1);
    client.change(&plans, 3, &edited);
    let completion = client
        .request("textDocument/completion", json!({ "textDocument": document, "position": position_of(&edited, "stage \"more\" ", 13) }));
    let offered = labels(&completion);
    assert!(offered.contains(&"tier".to_owned()) && offered.contains(&"after".to_owned()), "{offered:?}");
    client.change(&plans, 4, &text);

    // Definition: the pool's declaration in another file.
    let definition =
        client.request("textDocument/definition", json!({ "textDocument": document, "position": position_of(&text, "pool=\"nvl-b\"", 7) }));
    assert_eq!(files(&definition), ["policy/hardware.kdl"]);
    // References: every file that names the tier, the tests included.
    let references = client.request(
        "textDocument/references",
        json!({ "textDocument": document, "position": position_of(&text, "tier=\"P1\"", 7), "context": { "includeDeclaration": true } }),
    );
    assert_eq!(files(&references), ["policy/plans.kdl", "policy/teams.kdl", "policy/tests.kdl", "policy/tiers.kdl"]);
    client.shutdown();
}

#[test]
fn definition_reaches_the_inventory() {
    let (_dir, root) = example("cluster");
    let tests = root.join("policy/tests.kdl");
    let text = text_of(&tests);
    let mut client = Client::start();
    client.open(&tests, &text);
    let position = position_of(&text, "nodes \"rv-b-01\"", 8);
    let definition = client.request("textDocument/definition", json!({ "textDocument": { "uri": uri(&tests) }, "position": position }));
    assert_eq!(files(&definition), ["inventory/nvl-b.kdl"]);
    let hover = client.request("textDocument/hover", json!({ "textDocument": { "uri": uri(&tests) }, "position": position }));
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("H200") && shown.contains("nvl-b"), "{shown}");
    client.shutdown();
}

#[test]
fn formatting_uses_placid_fmt() {
    let (_dir, root) = example("cluster");
    let tiers = root.join("policy/tiers.kdl");
    let text = text_of(&tiers);
    let messy = text.replace("    priority 500", "        priority    500");
    let mut client = Client::start();
    client.open(&tiers, &messy);
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri(&tiers) }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(edits[0]["newText"], text, "{edits}");
    client.change(&tiers, 2, &text);
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri(&tiers) }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(edits, json!([]));
    client.shutdown();
}

#[test]
fn bad_requests_are_answered_and_the_server_goes_on() {
    let (_dir, root) = example("cluster");
    let tiers = root.join("policy/tiers.kdl");
    let mut client = Client::start();
    client.open(&tiers, "tier \"é\u{1F600}\" {\n    priority");
    let malformed = client.request("textDocument/hover", json!({ "nonsense": true }));
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    let unknown = client.request("placid/unknown", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    for (line, character) in [(0, 7), (0, 99), (1, 12), (99, 0), (u32::MAX, u32::MAX)] {
        let position = json!({ "line": line, "character": character });
        let document = json!({ "uri": uri(&tiers) });
        for method in ["textDocument/hover", "textDocument/completion", "textDocument/definition"] {
            let answer = client.request(method, json!({ "textDocument": document, "position": position }));
            assert!(answer.get("error").is_none(), "{method} at {position}: {answer}");
        }
    }
    let closed =
        client.request("textDocument/hover", json!({ "textDocument": { "uri": "untitled:1" }, "position": { "line": 0, "character": 0 } }));
    assert_eq!(closed, Value::Null);
    client.shutdown();
}
