//! The writer held to serde_yaml: every layout and every scalar style it writes, as
//! serde_yaml writes them, and what it leaves to serde_yaml.

use std::collections::BTreeMap;

use serde::Serialize;

use super::block::{MAX_SIMPLE_KEY, write_block};
use super::scalars::Scalars;
use super::style::{Styled, libyaml_style, surely_plain};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Inner {
    name: String,
    values: Vec<String>,
    nested: Vec<Vec<u32>>,
    empty_list: Vec<u32>,
    empty_map: BTreeMap<String, String>,
    maybe: Option<bool>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    spec: Vec<Inner>,
    labels: BTreeMap<String, String>,
    weight: f64,
    count: i64,
    lists_of_maps: Vec<Vec<BTreeMap<String, u32>>>,
    map_of_lists: BTreeMap<String, Vec<BTreeMap<String, Vec<String>>>>,
}

fn content() -> Content {
    let strings = ["plain", "0", "1.5", "true", "null", "", "a: b", "- x", "'quoted'", "x #y", "~", "0x1F", "012", "@at", "ünï"];
    let inner = |name: &str| Inner {
        name: name.to_owned(),
        values: strings.iter().map(|text| (*text).to_owned()).collect(),
        nested: vec![vec![1, 2], vec![], vec![3]],
        empty_list: Vec::new(),
        empty_map: BTreeMap::new(),
        maybe: None,
    };
    Content {
        spec: vec![inner("first"), inner("0")],
        labels: strings.iter().map(|text| ((*text).to_owned(), (*text).to_owned())).collect(),
        weight: 0.25,
        count: -3,
        lists_of_maps: vec![vec![BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 2)])], vec![BTreeMap::new()]],
        map_of_lists: BTreeMap::from([("k".to_owned(), vec![BTreeMap::from([("inner".to_owned(), vec!["v".to_owned()])])])]),
    }
}

#[test]
fn writes_what_serde_yaml_writes() {
    let value = content();
    let mut out = String::new();
    assert!(write_block(&value, &[], &mut Scalars::default(), &mut out).is_ok());
    assert_eq!(out, serde_yaml::to_string(&value).unwrap_or_default());
}

#[test]
fn skipped_keys_leave_as_serde_yaml_mapping_remove_leaves_them() {
    let value = content();
    let mut out = String::new();
    assert!(write_block(&value, &["spec", "weight"], &mut Scalars::default(), &mut out).is_ok());
    let mut mapping = match serde_yaml::to_value(&value) {
        Ok(serde_yaml::Value::Mapping(mapping)) => mapping,
        _ => serde_yaml::Mapping::new(),
    };
    mapping.remove("spec");
    mapping.remove("weight");
    assert_eq!(out, serde_yaml::to_string(&mapping).unwrap_or_default());
    assert!(out.starts_with("mapOfLists:"), "the last entry takes the first removed one's place: {out}");
}

#[test]
fn what_is_surely_plain_is_plain_to_serde_yaml() {
    for text in ["cpu", "nvidia.com/gpu", "team-0001", "placid.dev/team", "LowerPriority", "a_b", "Infinite", "nano", "x1.5e3"] {
        assert!(surely_plain(text), "{text}");
        assert_eq!(serde_yaml::to_string(text).unwrap_or_default(), format!("{text}\n"));
    }
    for text in ["True", "NULL", "nan", "Yes", "0", "-a", "a b", "a:b", ""] {
        assert!(!surely_plain(text), "{text}");
    }
}

/// serde_yaml's one-line rendering of `value`, or `None` where it writes a block.
fn serde_yaml_line(value: &str) -> Option<String> {
    let document = serde_yaml::to_string(value).ok()?;
    let line = document.strip_suffix('\n')?;
    (!line.contains('\n')).then(|| line.to_owned())
}

fn rendered(value: &str) -> Option<String> {
    let mut out = String::new();
    Scalars::default().render(value).ok()?.write_to(&mut out);
    Some(out)
}

#[test]
fn strings_with_indicators_and_spaces_are_styled_as_libyaml_styles_them() {
    let plain = [
        "pods of tier P1 must set terminationGracePeriodSeconds >= 300 (the preemption window)",
        "(object.kind == 'Pod' && variables.queue == '') || has(spec.x) && \"q\" != 'p2-100'",
        "placid_team_budget_daily{team=\"team-0001\"}",
        "a:b",
        "a#b",
        "-a b",
        "1 2",
        "it's",
        "ends in a dot.",
    ];
    let quoted = [
        "a: b", "a #b", "a b:", "a b ", " a", "'a b'", "- a", "? a", ": a", "{a}", "#a", "--- a", "... a", "@a", "*a", "%a", "`a", "!a",
        "&a", "|a", ">a", "\"a", "[a", "]a", ",a", ":", "?",
    ];
    for text in plain.iter().chain(&quoted) {
        assert_eq!(rendered(text), serde_yaml_line(text), "{text:?}");
    }
    for text in plain {
        assert_eq!(libyaml_style(text), Some(Styled::Verbatim(text)), "{text:?}");
    }
    for text in quoted {
        assert_eq!(libyaml_style(text), Some(Styled::SingleQuoted(text)), "{text:?}");
    }
    // Look-alikes of numbers, control and non-ASCII characters are asked of serde_yaml.
    for text in ["0", "-1", "-", "1e3", "0x1F", "1+0x10", ".inf", "~", "true", "a\tb", "ü b", "a\u{7f}"] {
        assert_eq!(libyaml_style(text), None, "{text:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// Every one-line string comes out as serde_yaml writes it, as a value and as a key.
    #[test]
    fn scalars_are_written_as_serde_yaml_writes_them(value in "[ a-zA-Z0-9:#'\"\\-.?,\\[\\]{}&*!|>%@`~+_/=()\t\u{e9}]{0,12}") {
        proptest::prop_assert_eq!(rendered(&value), serde_yaml_line(&value), "{:?}", value);
        let mapping = BTreeMap::from([(value.clone(), value.clone())]);
        let mut out = String::new();
        if value.len() <= MAX_SIMPLE_KEY && !value.starts_with('!') {
            proptest::prop_assert!(write_block(&mapping, &[], &mut Scalars::default(), &mut out).is_ok());
            proptest::prop_assert_eq!(out, serde_yaml::to_string(&mapping).unwrap_or_default());
        }
    }
}

#[test]
fn block_scalars_and_tags_are_left_to_serde_yaml() {
    #[derive(Serialize)]
    enum Tagged {
        Variant(u32),
    }
    let mut out = String::new();
    let multi_line = BTreeMap::from([("script", "line one\nline two\n")]);
    assert!(write_block(&multi_line, &[], &mut Scalars::default(), &mut out).is_err());
    assert!(write_block(&BTreeMap::from([("tag", Tagged::Variant(1))]), &[], &mut Scalars::default(), &mut out).is_err());
    assert!(write_block(&BTreeMap::from([("x".repeat(200), 1)]), &[], &mut Scalars::default(), &mut out).is_err());
}

#[test]
fn what_the_writer_leaves_is_written_by_serde_yaml() {
    let multi_line = BTreeMap::from([("script", "line one\nline two\n"), ("name", "x")]);
    assert_eq!(super::to_string(&multi_line).ok(), serde_yaml::to_string(&multi_line).ok());
    let mut out = String::from("header: 1\n");
    assert!(super::write_mapping(&multi_line, &["name"], &mut Scalars::default(), &mut out).is_ok());
    assert_eq!(out, "header: 1\nscript: |\n  line one\n  line two\n");
}

#[test]
fn what_cannot_be_written_is_an_error_not_an_empty_document() {
    struct Refuses;
    impl Serialize for Refuses {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("refused"))
        }
    }
    #[derive(Serialize)]
    enum Tagged {
        Variant(u32),
    }
    assert!(matches!(super::to_string(&BTreeMap::from([("a", Refuses)])), Err(super::Error::Serde(_))));
    let mut out = String::new();
    let not_a_mapping = super::write_mapping(&[Tagged::Variant(1)], &[], &mut Scalars::default(), &mut out);
    assert!(matches!(not_a_mapping, Err(super::Error::NotAMapping)), "{not_a_mapping:?}");
    assert!(out.is_empty());
}
