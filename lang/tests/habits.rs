//! Habits from other configuration languages get a help line that shows the placid way:
//! numbers and booleans in quotes, quantities without their unit, units without their
//! number, and a property given twice (pointed at in both places).

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::source::MemoryWorld;

/// The diagnostics of a project with one x86 node and `policy`.
fn diagnostics(policy: &str) -> Vec<Diagnostic> {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
    world.insert("nodes.kdl", "node \"a\" arch=\"x86_64\" {\n    gpu 0 model=\"H200\"\n}\n");
    world.insert("policy.kdl", policy);
    placid_lang::load(&world).diagnostics.iter().cloned().collect()
}

/// The code and help of the one diagnostic of a tier whose body is `body`.
fn tier(body: &str) -> (Code, String) {
    let found = diagnostics(&format!("tier \"t\" {{\n    preemption \"never\"\n{body}}}\n"));
    assert_eq!(found.len(), 1, "{found:?}");
    (found[0].code, found[0].help.clone().unwrap_or_default())
}

#[test]
fn a_quoted_number_is_shown_unquoted() {
    assert_eq!(tier("    priority \"8\"\n"), (Code::InvalidValue, "write `8` without quotes: KDL numbers are not strings".to_owned()));
    let found = diagnostics(
        "pool \"p\" { select arch=\"x86_64\" }\ntier \"t\" {\n    priority 8\n    preemption \"never\"\n    reserve pool=\"p\" gpus=\"4\"\n}\n",
    );
    let helps: Vec<Option<String>> = found.iter().map(|diagnostic| diagnostic.help.clone()).collect();
    assert_eq!(helps, [Some("write `4` without quotes: KDL numbers are not strings".to_owned())]);
}

#[test]
fn a_quoted_boolean_is_shown_as_a_kdl_boolean() {
    assert_eq!(
        tier("    priority 8\n    backfill \"true\"\n"),
        (Code::InvalidValue, "write `#true` without quotes: KDL booleans are `#true` and `#false`".to_owned())
    );
}

#[test]
fn a_number_without_its_unit_gets_the_expected_form() {
    assert_eq!(
        tier("    priority 8\n    max-time 4\n"),
        (Code::InvalidUnit, "write the number with its unit, in quotes, such as \"4m\"".to_owned())
    );
    assert_eq!(tier("    priority 8\n    max-time \"4\"\n").1, "give the number a unit: \"4s\", \"4m\", \"4h\" or \"4d\"");
}

#[test]
fn a_unit_without_its_number_gets_the_expected_form() {
    assert_eq!(tier("    priority 8\n    max-time \"h\"\n").1, "write the number before the unit, such as \"1h\"");
}

#[test]
fn a_property_given_twice_points_at_both() {
    for body in ["    priority 8\n    priority 9\n", "    priority 8\n    checkpoint every=\"1m\" every=\"2m\"\n"] {
        let found = diagnostics(&format!("tier \"t\" {{\n    preemption \"never\"\n{body}}}\n"));
        let twice: Vec<&Diagnostic> = found.iter().filter(|diagnostic| diagnostic.code == Code::DuplicateProperty).collect();
        assert_eq!(twice.len(), 1, "{found:?}");
        assert_eq!(twice[0].secondary.len(), 1, "the first one is pointed at too");
        assert!(twice[0].secondary[0].span != twice[0].primary.span);
    }
}

#[test]
fn an_amount_without_its_currency_gets_the_expected_form() {
    let help = |budget: &str| {
        let found = diagnostics(&format!("cost-center \"cc\" {{ budget daily={budget} }}\n"));
        assert_eq!(found.iter().map(|diagnostic| diagnostic.code).collect::<Vec<_>>(), [Code::InvalidUnit], "{found:?}");
        found[0].help.clone().unwrap_or_default()
    };
    assert_eq!(help("4000"), "write `(usd)4000`: amounts carry their currency");
    assert_eq!(help("\"(usd)4000\""), "write `(usd)4000` without quotes: the currency is a KDL type annotation");
}
