//! Prometheus for the tests: finding Debian's `promtool` and `prometheus` (package
//! `prometheus`, installed by .ci/run), and the metric names a PromQL expression reads.

use std::path::PathBuf;

/// The program on `PATH`, or why a test cannot run: under `CI=true` its absence fails the
/// test; elsewhere the test prints NOT RUN and gets `None`.
pub fn tool(test: &str, program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| candidate.is_file());
    if found.is_none() {
        if std::env::var("CI").is_ok_and(|value| value == "true") {
            panic!("{test}: {program} is missing; .ci/run installs Debian's prometheus package");
        }
        eprintln!("{test}: NOT RUN: {program} is not installed (apt-get install prometheus)");
    }
    found
}

/// PromQL words that are not metric names: operators, modifiers, and the aggregations, which
/// may stand before `by (...)` instead of their parenthesis.
const KEYWORDS: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "and",
    "or",
    "unless",
    "offset",
    "inf",
    "nan",
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
];

/// The metric names `expr` reads: identifiers outside strings, label matchers and ranges
/// that are neither keywords, numbers, function calls nor the label lists of `by`/`on`.
/// Enough for the rules placid writes and the queries of the examples; not a PromQL parser.
pub fn metric_names(expr: &str) -> Vec<String> {
    let characters: Vec<char> = expr.chars().collect();
    let mut names = Vec::new();
    let mut index = 0;
    let mut after_grouping = false;
    while index < characters.len() {
        let character = characters[index];
        match character {
            '"' | '\'' | '`' => {
                index += 1;
                while index < characters.len() && characters[index] != character {
                    index += if characters[index] == '\\' { 2 } else { 1 };
                }
                index += 1;
            }
            '{' | '[' => {
                let close = if character == '{' { '}' } else { ']' };
                while index < characters.len() && characters[index] != close {
                    if characters[index] == '"' {
                        index += 1;
                        while index < characters.len() && characters[index] != '"' {
                            index += if characters[index] == '\\' { 2 } else { 1 };
                        }
                    }
                    index += 1;
                }
                index += 1;
            }
            '(' if after_grouping => {
                // `by (a, b)`: a label list, not metrics.
                while index < characters.len() && characters[index] != ')' {
                    index += 1;
                }
                index += 1;
                after_grouping = false;
            }
            _ if character.is_ascii_alphabetic() || character == '_' || character == ':' => {
                let start = index;
                while index < characters.len()
                    && (characters[index].is_ascii_alphanumeric() || characters[index] == '_' || characters[index] == ':')
                {
                    index += 1;
                }
                let word: String = characters[start..index].iter().collect();
                let mut next = index;
                while next < characters.len() && characters[next].is_whitespace() {
                    next += 1;
                }
                let lower = word.to_ascii_lowercase();
                if ["by", "without", "on", "ignoring", "group_left", "group_right"].contains(&lower.as_str()) {
                    after_grouping = true;
                } else if !KEYWORDS.contains(&lower.as_str()) && characters.get(next) != Some(&'(') {
                    names.push(word);
                }
            }
            _ if character.is_ascii_digit() || character == '.' => {
                // Numbers, durations (5m) and exponents (3.6e12) are not names.
                while index < characters.len() && (characters[index].is_ascii_alphanumeric() || characters[index] == '.') {
                    index += 1;
                }
            }
            _ => index += 1,
        }
        if !character.is_whitespace() && !character.is_ascii_alphabetic() && character != '_' && character != '(' {
            after_grouping = false;
        }
    }
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::metric_names;

    #[test]
    fn names_are_found_and_labels_functions_and_numbers_are_not() {
        let expr = r#"sum by (node, gpu) (rate(placid_a_total{kind="x y",le=~"b.*"}[2m]) + placid:b:ratio) / on (nvlink_domain) group_left (currency) placid_c > bool 3.6e12 and vector(1) offset 5m"#;
        assert_eq!(metric_names(expr), ["placid:b:ratio", "placid_a_total", "placid_c"]);
        assert_eq!(metric_names(r#"label_replace(up, "team", "$1", "label_x", "(.+)")"#), ["up"]);
    }
}
