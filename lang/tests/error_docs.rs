//! `docs/errors.md` is generated from the code registry (`lang/src/codes.rs`) and must stay in
//! step with it. Rewrite it with `INSTA_UPDATE=always cargo test -p placid-lang --test error_docs`.

use std::fmt::Write as _;
use std::path::Path;

use placid_lang::codes::Code;

fn render() -> String {
    let mut out = String::from(
        "# placid diagnostic codes\n\n<!-- Generated from lang/src/codes.rs by `INSTA_UPDATE=always cargo test -p placid-lang --test error_docs`; do not edit by hand. -->\n\nEvery diagnostic carries a stable code. Codes are never renumbered or reused. `placid check --format json` reports the code (`code`) and its name (`name`).\n\n| code | name | what is wrong |\n|---|---|---|\n",
    );
    for code in Code::ALL {
        let _ = writeln!(out, "| [`{}`](#{}) | `{}` | {} |", code.id(), code.name(), code.name(), code.summary());
    }
    for code in Code::ALL {
        let _ = write!(out, "\n## {}\n\n`{}`: {}.\n\n{}\n", code.name(), code.id(), code.summary(), code.explanation());
    }
    out
}

#[test]
fn errors_md_matches_the_code_registry() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/errors.md");
    let expected = render();
    if std::env::var("INSTA_UPDATE").is_ok_and(|value| value == "always") {
        std::fs::write(&path, &expected).expect("write docs/errors.md");
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(actual == expected, "docs/errors.md is out of date; run INSTA_UPDATE=always cargo test -p placid-lang --test error_docs");
}

#[test]
fn codes_are_unique_and_sorted() {
    let numbers: Vec<u16> = Code::ALL.iter().map(|code| code.number()).collect();
    assert!(numbers.windows(2).all(|pair| pair[0] < pair[1]), "codes must be declared in increasing order without repeats");
    let mut names: Vec<&str> = Code::ALL.iter().map(|code| code.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Code::ALL.len(), "code names must be unique");
}
