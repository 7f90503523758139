//! The plain-KDL reader builds exactly the document the `kdl` crate parses, spans included,
//! for every inventory placid ships and for generated ones, and declines what it does not
//! cover rather than reading it differently.

use std::path::Path;

use kdl::{KdlDocument, KdlNode};
use placid_lang::syntax::plain;
use proptest::prelude::*;

/// Everything of a document the lowering reads: names and their spans, entries (key, value,
/// type annotation, span, the written form of floats) and children.
fn shape(document: &KdlDocument) -> Vec<String> {
    let mut lines = Vec::new();
    for node in document.nodes() {
        node_shape(node, 0, &mut lines);
    }
    lines
}

fn node_shape(node: &KdlNode, depth: usize, lines: &mut Vec<String>) {
    let name = node.name();
    lines.push(format!("{depth} node {} @{:?}", name.value(), name.span()));
    for entry in node.entries() {
        let repr = match entry.value() {
            kdl::KdlValue::Float(_) => entry.format().map(|format| format.value_repr.clone()),
            _ => None,
        };
        lines.push(format!(
            "{depth}   entry {:?} = {:?} ty {:?} @{:?} repr {repr:?}",
            entry.name().map(|name| name.value()),
            entry.value(),
            entry.ty().map(|ty| ty.value()),
            entry.span()
        ));
    }
    if let Some(children) = node.children() {
        for child in children.nodes() {
            node_shape(child, depth + 1, lines);
        }
    }
}

/// Both readers agree on `text`, or the plain one declines it.
fn agree(text: &str) -> bool {
    let Some(fast) = plain::read(text) else { return false };
    let parsed = KdlDocument::parse_v2(text).unwrap_or_else(|error| panic!("the plain reader accepted invalid KDL: {error:?}\n{text}"));
    assert_eq!(shape(&fast), shape(&parsed), "{text}");
    true
}

#[test]
fn every_shipped_inventory_is_read_as_the_crate_reads_it() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy-examples");
    let mut read = 0;
    for example in std::fs::read_dir(&examples).expect("examples").flatten() {
        let Ok(files) = std::fs::read_dir(example.path().join("inventory")) else { continue };
        for file in files.flatten().filter(|file| file.path().extension().is_some_and(|ext| ext == "kdl")) {
            let text = std::fs::read_to_string(file.path()).expect("read");
            assert!(agree(&text), "{} is not in the plain subset", file.path().display());
            read += 1;
        }
    }
    assert!(read >= 5, "only {read} inventories");
}

#[test]
fn what_placid_prints_is_in_the_plain_subset() {
    // The canonical printer writes what the probe and `placid inventory merge` write.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy-examples/cluster/inventory");
    let mut world = placid_lang::source::MemoryWorld::new();
    world.insert("placid.kdl", "project \"p\" currency=\"usd\"\ninventory \"inventory/*.kdl\"\n");
    for file in std::fs::read_dir(&path).expect("inventory").flatten() {
        let name = format!("inventory/{}", file.file_name().to_string_lossy());
        world.insert(&name, std::fs::read_to_string(file.path()).expect("read"));
    }
    let model = placid_lang::load(&world).model;
    assert_eq!(model.nodes.len(), 12);
    assert!(agree(&placid_lang::print::inventory_kdl(&model)), "the printer left the plain subset");
}

#[test]
fn generated_policy_is_read_as_the_crate_reads_it() {
    // As bench/shape.py writes a large project's policy: a declaration's block on its line.
    let text = concat!(
        "pool \"pool-0000\" { select nvlink-domain=\"nvl-0000\" }\n",
        "tier \"p0\" { priority 1000; preemption window=\"3m\" mode=\"requeue\" }\n",
        "cost-center \"cc\" { budget daily=(usd)100000000 }\n",
        "team \"team-0000\" { share 10; cost-center \"cc\"; tiers \"p0\" \"p1\"; budget daily=(usd)2000.50 }\n",
        "project \"bench\" currency=\"usd\"\n",
    );
    assert!(agree(text), "generated policy is not in the plain subset");
}

#[test]
fn shipped_policy_in_the_plain_subset_is_read_as_the_crate_reads_it() {
    // Hand-written policy is mostly outside the subset (comments after code, multi-line
    // strings); what is inside must read the same, as lowering takes the plain path for it.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy-examples");
    let mut files = 0;
    for example in std::fs::read_dir(&examples).expect("examples").flatten() {
        let project = example.path().join("placid.kdl");
        let policy = std::fs::read_dir(example.path().join("policy")).into_iter().flatten().flatten().map(|file| file.path());
        for path in std::iter::once(project).chain(policy).filter(|path| path.is_file()) {
            agree(&std::fs::read_to_string(&path).expect("read"));
            files += 1;
        }
    }
    assert!(files >= 5, "only {files} policy files");
}

#[test]
fn text_outside_the_subset_is_declined() {
    for text in [
        "node \"a\" arch=x86_64\n",                                  // a bare identifier as a value
        "node \"a\"  arch=\"x\"\n",                                  // two spaces
        "node \"a\" arch=\"x\" \n",                                  // a trailing space
        "node \"a\" { gpu 0; }\n",                                   // a `;` before the line's `}`
        "node \"a\" { gpu { link 1 } }\n",                           // a block on the line nested deeper
        "node \"a\" { }\n",                                          // an empty block on the line
        "node \"a\" {gpu 0}\n",                                      // braces without spaces
        "node \"a\" { gpu 0 }}\n",                                   // a stray brace
        "node \"a\" { gpu 0;; nic 1 }\n",                            // an empty node between `;`s
        "node \"a\" { gpu 0 } n=1\n",                                // entries after the block
        "node \"a\" name=\"caf\u{e9}\"\n",                           // not ASCII
        "node \"a\" name=\"a\\\"b\"\n",                              // an escape
        "node \"a\" n=1e3\n",                                        // an exponent
        "node \"a\" n=0x10\n",                                       // hexadecimal
        "node \"a\" {\n",                                            // a block left open
        "}\n",                                                       // a block never opened
        "/* comment */ node \"a\"\n",                                // a block comment
        "node \"a\" n=#null\n",                                      // null
        "// x\rnode \"ghost\"\n",                                    // KDL ends the comment at the carriage return
        "node \"a\"\r\n",                                            // a CRLF line ending
        "node \"a\" n=0.1234567890123456789012345678901234567890\n", // digits the crate cannot hold
        "node \"a\" n=-170141183460469231731687303715884105728\n",   // i128::MIN, which it reads unsigned
    ] {
        assert!(plain::read(text).is_none(), "accepted {text:?}");
    }
    let deep = "a {\n".repeat(placid_lang::syntax::MAX_NESTING + 1) + &"}\n".repeat(placid_lang::syntax::MAX_NESTING + 1);
    assert!(plain::read(&deep).is_none(), "nesting beyond the crate's guard must take the crate's path");
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9-]{0,6}".prop_map(|name| format!("\"{name}\"")),
        "[ a-zA-Z0-9./:_-]{0,8}".prop_map(|text| format!("\"{text}\"")),
        (-1000i64..1000).prop_map(|number| number.to_string()),
        (0u32..1000, 0u32..100).prop_map(|(whole, fraction)| format!("{whole}.{fraction:02}")),
        Just("#true".to_owned()),
        Just("#false".to_owned()),
        (0u32..100, 0u32..100).prop_map(|(whole, fraction)| format!("(usd){whole}.{fraction:02}")),
    ]
}

/// A bare identifier matching `pattern`, never one KDL 2 keeps for its keywords (`inf`,
/// `nan`, `true`, `false`, `null` must be written `#inf` and so on): a generated `inf=` is
/// not KDL, so the plain reader rightly declines it.
fn identifier(pattern: &'static str) -> impl Strategy<Value = String> {
    pattern.prop_filter("a KDL keyword", |name| !matches!(name.as_str(), "inf" | "nan" | "true" | "false" | "null"))
}

fn entry() -> impl Strategy<Value = String> {
    (proptest::option::of(identifier("[a-z][a-z-]{0,8}")), word()).prop_map(|(key, value)| match key {
        Some(key) => format!("{key}={value}"),
        None => value,
    })
}

fn head() -> impl Strategy<Value = String> {
    (identifier("[a-z][a-z0-9-]{0,6}"), proptest::collection::vec(entry(), 0..5))
        .prop_map(|(name, entries)| std::iter::once(name).chain(entries).collect::<Vec<_>>().join(" "))
}

fn line() -> impl Strategy<Value = String> {
    (head(), proptest::collection::vec(head(), 1..4), 0u8..4).prop_map(|(head, children, kind)| match kind {
        0 => format!("{head} {{"),
        1 => "}".to_owned(),
        2 => format!("{head} {{ {} }}", children.join("; ")),
        _ => head,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random plain documents (indented, with comments, blocks balanced) are read, and read
    /// the same both ways.
    #[test]
    fn generated_plain_documents_agree(lines in proptest::collection::vec(line(), 0..24), indent in 0usize..5) {
        let mut depth = 0usize;
        let mut text = String::from("// written by a machine\n");
        let put = |text: &mut String, depth: usize, line: &str| {
            text.push_str(&" ".repeat(depth * indent));
            text.push_str(line);
            text.push('\n');
        };
        for line in &lines {
            if line == "}" {
                let Some(outer) = depth.checked_sub(1) else { continue };
                depth = outer;
            }
            put(&mut text, depth, line);
            if line.ends_with('{') {
                depth += 1;
            }
        }
        for outer in (0..depth).rev() {
            put(&mut text, outer, "}");
        }
        prop_assert!(agree(&text), "declined:\n{}", text);
    }

    /// Arbitrary text of KDL's punctuation: whatever the plain reader accepts, the crate
    /// parses to the same document (`agree` panics otherwise).
    #[test]
    fn accepted_text_is_always_valid_kdl(text in "[a-c0-9 \"{}=().#;/\\\n-]{0,60}") {
        agree(&text);
    }
}
