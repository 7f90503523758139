//! `placid test [DIR]`: runs every policy test through the engine (docs/semantics.md) and
//! reports like `cargo test` and `opa test`: a line per test, each failure as a diagnostic at
//! the expectation with expected against actual, a summary line. `--format json` prints one
//! document; `--format junit` JUnit XML for CI. `--coverage` adds which tiers, teams, pools,
//! classes, routes and plan stages the tests exercise (`opa test --coverage`): after the text
//! report, as `coverage` in the JSON document, and on stderr beside JUnit. Exit 0 when every
//! test passes, 1 when one fails or the project has errors, 2 for usage and IO errors.

use std::path::PathBuf;

use placid_driver::build::Selection;
use placid_driver::render::{self, Choice, Format};
use placid_driver::test_admission::Judge;
use placid_engine::coverage::{Coverage, coverage};
use placid_engine::policy_test::{self, Mismatch, TestResult};
use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics, Severity};
use placid_lang::escape::html as escape;
use placid_lang::model::{Model, PolicyTest};
use placid_lang::source::Sources;
use placid_scoring::stage_rank::StageScores;

use crate::pipeline;
use crate::{Exit, Output, ProjectArgs, choice};

/// How `placid test` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// A line per test, failures as diagnostics, a summary line.
    Text,
    /// One JSON document.
    Json,
    /// JUnit XML, for CI systems that show test results.
    Junit,
}

impl Choice for Report {
    const ALL: &'static [Report] = &[Report::Text, Report::Json, Report::Junit];

    fn name(self) -> &'static str {
        match self {
            Report::Text => "text",
            Report::Json => "json",
            Report::Junit => "junit",
        }
    }
}

/// Arguments of `placid test`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The project directory (holding placid.kdl).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Output format.
    #[arg(long, value_parser = choice::<Report>(), default_value = Report::Text.name())]
    format: Report,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Also report which tiers, teams, pools, classes, routes and plan stages the tests
    /// exercise.
    #[arg(long)]
    coverage: bool,
}

/// One test's result, with the diagnostic of each failure.
struct Ran<'m> {
    test: &'m PolicyTest,
    failures: Diagnostics,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    // Project errors are reported as diagnostics: JSON for `--format json`, text otherwise,
    // and for `--format junit` also as a JUnit document whose one test case is the project
    // check, so a CI's JUnit report shows why no test ran rather than an empty file.
    let format = if args.format == Report::Json { Format::Json } else { Format::Text };
    let project = ProjectArgs { dir: args.dir.clone(), format };
    let clean = match pipeline::checked_or_refused(out, &project, &Selection { only: Vec::new() }) {
        Ok(clean) => clean,
        Err((exit, refused)) => {
            if let (Report::Junit, Some(build)) = (args.format, refused) {
                out.out(junit_project_errors(&build.sources, &build.diagnostics));
            }
            return exit;
        }
    };
    let mut ranker = match pipeline::stage_scores(out, format, &clean.sources, &clean.model) {
        Ok(ranker) => ranker,
        Err(exit) => return exit,
    };
    // The build's Kubernetes objects, for the admission expectations: one that cannot be built
    // is the project's error, as `placid build` would report it.
    let model: &Model = &clean.model;
    let selected: Vec<&PolicyTest> =
        model.tests.iter().filter(|test| args.filter.as_deref().is_none_or(|filter| test.name.as_str().contains(filter))).collect();
    let judge = match Judge::new(&clean.model, &selected) {
        Ok(judge) => judge,
        Err(diagnostics) => {
            let exit = pipeline::report(out, format, &clean.sources, &diagnostics, pipeline::Fields::new());
            if args.format == Report::Junit {
                out.out(junit_project_errors(&clean.sources, &diagnostics));
            }
            return exit;
        }
    };
    let filtered_out = model.tests.len() - selected.len();
    let ran: Vec<Ran<'_>> =
        selected.into_iter().map(|test| Ran { test, failures: failures(&clean.model, test, &mut ranker, &judge) }).collect();
    pipeline::warn_ranking_failures(out, &clean.sources, ranker.failures());
    let failed = ran.iter().filter(|each| !each.failures.is_empty()).count();
    let covered = args.coverage.then(|| coverage(model, ran.iter().map(|each| each.test)));
    match args.format {
        Report::Text => {
            text(out, &clean.sources, &ran, filtered_out);
            if let Some(covered) = &covered {
                out.out(coverage_text(covered));
            }
        }
        Report::Json => {
            let mut document = json(&clean.sources, &ran, filtered_out);
            if let (Some(covered), Some(fields)) = (&covered, document.as_object_mut()) {
                fields.insert("coverage".to_owned(), coverage_json(covered));
            }
            out.outln(render::json_text(&document));
        }
        Report::Junit => {
            out.out(junit(&clean.sources, &clean.model.project.name, &ran));
            // JUnit has no place for it: beside the XML, for the CI log.
            if let Some(covered) = &covered {
                out.err(coverage_text(covered));
            }
        }
    }
    if failed > 0 { Exit::Failure } else { Exit::Ok }
}

/// Runs one test; each failed expectation (or an unrunnable starting state, or a workload the
/// admission policies could not judge) is a diagnostic.
fn failures(model: &Checked, test: &PolicyTest, ranker: &mut StageScores<'_>, judge: &Judge) -> Diagnostics {
    const ADMISSION_HELP: &str = "docs/targets/kubernetes.md (\"Admission in tests\") says how the build's admission policies are run; fix the policy or the expectation";
    const ENGINE_HELP: &str = "docs/semantics.md says how the engine decides; fix the policy or the expectation";
    let mut diagnostics = Diagnostics::new();
    // Failed expectations in the order the test states them, whichever side judged them.
    let mut mismatches = Vec::new();
    match judge.verdicts(model, test) {
        Ok(verdicts) => {
            mismatches.extend(policy_test::admission(model, test, &verdicts).into_iter().map(|mismatch| (mismatch, ADMISSION_HELP)))
        }
        Err(unjudged) => diagnostics.extend(unjudged),
    }
    match policy_test::run(model, test, ranker) {
        TestResult::Passed => {}
        TestResult::Failed(failed) => mismatches.extend(failed.into_iter().map(|mismatch| (mismatch, ENGINE_HELP))),
        TestResult::Unrunnable { span, message } => {
            diagnostics.push(
                Diagnostic::error(Code::TestStateInvalid, span, format!("test `{}`: {message}", test.name))
                    .label("does not fit here")
                    .help("put the running job on free nodes of its pool, or give it fewer GPUs"),
            );
        }
    }
    mismatches.sort_by_key(|(mismatch, _)| (mismatch.span.file, mismatch.span.start));
    for (mismatch, help) in mismatches {
        diagnostics.push(failed(test, mismatch, help));
    }
    diagnostics
}

/// The diagnostic of an expectation that did not hold (E105): expected against actual.
fn failed(test: &PolicyTest, Mismatch { span, subject, expected, actual }: Mismatch, help: &str) -> Diagnostic {
    Diagnostic::error(Code::TestFailed, span, format!("test `{}`: expected {expected}, but {subject} is {actual}", test.name))
        .label(format!("expected: {expected}"))
        .with_secondary(test.span, format!("actual: {actual}"))
        .help(help)
}

fn text(out: &mut Output, sources: &Sources, ran: &[Ran<'_>], filtered_out: usize) {
    out.outln(format_args!("running {} test{}", ran.len(), if ran.len() == 1 { "" } else { "s" }));
    for each in ran {
        out.outln(format_args!("test {} ... {}", each.test.name, if each.failures.is_empty() { "ok" } else { "FAILED" }));
    }
    let failed: Vec<&Ran<'_>> = ran.iter().filter(|each| !each.failures.is_empty()).collect();
    if !failed.is_empty() {
        out.outln("\nfailures:\n");
        // Rendered as one report, so the error count is said once, under the last failure.
        let mut failures = Diagnostics::new();
        for each in &failed {
            failures.extend(each.failures.clone());
        }
        out.out(render::text(sources, &failures, out.stdout_color()));
    }
    let passed = ran.len() - failed.len();
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    out.outln(format_args!("\ntest result: {verdict}. {passed} passed; {} failed; {filtered_out} filtered out", failed.len()));
}

fn json(sources: &Sources, ran: &[Ran<'_>], filtered_out: usize) -> serde_json::Value {
    let tests: Vec<serde_json::Value> = ran
        .iter()
        .map(|each| {
            let report = render::json(sources, &each.failures);
            serde_json::json!({
                "name": each.test.name.as_str(),
                "passed": each.failures.is_empty(),
                "failures": report.get("diagnostics").cloned().unwrap_or(serde_json::Value::Array(Vec::new())),
            })
        })
        .collect();
    let failed = ran.iter().filter(|each| !each.failures.is_empty()).count();
    serde_json::json!({
        "tests": tests,
        "passed": ran.len() - failed,
        "failed": failed,
        "filtered_out": filtered_out,
    })
}

/// `coverage: tiers 3/3, ...` and a line per kind with what no test exercises.
fn coverage_text(covered: &Coverage) -> String {
    let totals: Vec<String> =
        covered.kinds().iter().map(|(kind, each)| format!("{kind} {}/{}", each.count(), each.elements.len())).collect();
    let mut text = format!("\ncoverage: {}\n", totals.join(", "));
    for (kind, each) in covered.kinds() {
        let missed: Vec<&str> = each.missed().collect();
        if !missed.is_empty() {
            text.push_str(&format!("  {kind} not covered: {}\n", missed.join(", ")));
        }
    }
    text
}

/// `{"tiers": {"covered": [...], "not_covered": [...]}, ...}`, kinds keyed as in the text with
/// `_` for spaces (`plan_stages`).
fn coverage_json(covered: &Coverage) -> serde_json::Value {
    let kinds: serde_json::Map<String, serde_json::Value> = covered
        .kinds()
        .iter()
        .map(|(kind, each)| {
            let names = |want: bool| -> Vec<&str> {
                each.elements.iter().filter(|(_, covered)| *covered == want).map(|(name, _)| name.as_str()).collect()
            };
            (kind.replace(' ', "_"), serde_json::json!({ "covered": names(true), "not_covered": names(false) }))
        })
        .collect();
    serde_json::Value::Object(kinds)
}

/// JUnit XML: one `testsuite` named for the project, a `testcase` per test, a `failure`
/// per failed test with every failed expectation on its own line.
fn junit(sources: &Sources, project: &placid_lang::name::Name, ran: &[Ran<'_>]) -> String {
    let failed = ran.iter().filter(|each| !each.failures.is_empty()).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"placid test\" tests=\"{}\" failures=\"{failed}\">\n  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\">\n",
        ran.len(),
        escape(project.as_str()),
        ran.len()
    ));
    for each in ran {
        let name = escape(each.test.name.as_str());
        let classname = escape(project.as_str());
        if each.failures.is_empty() {
            xml.push_str(&format!("    <testcase name=\"{name}\" classname=\"{classname}\"/>\n"));
            continue;
        }
        let lines: Vec<String> = each.failures.iter().map(|diagnostic| render::one_line(sources, diagnostic)).collect();
        let message = each.failures.iter().next().map_or_else(String::new, |diagnostic| diagnostic.message.clone());
        xml.push_str(&format!(
            "    <testcase name=\"{name}\" classname=\"{classname}\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
            escape(&message),
            Code::TestFailed.id(),
            escape(&lines.join("\n"))
        ));
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// The JUnit document of a project that cannot be tested: one test case, `placid check`, in
/// error, with every error diagnostic on a line of its own.
fn junit_project_errors(sources: &Sources, diagnostics: &Diagnostics) -> String {
    let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|diagnostic| diagnostic.severity == Severity::Error).collect();
    let lines: Vec<String> = errors.iter().map(|diagnostic| render::one_line(sources, diagnostic)).collect();
    let (message, code) = errors.first().map_or_else(Default::default, |first| (first.message.clone(), first.code.id()));
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"placid test\" tests=\"1\" errors=\"1\">\n  <testsuite name=\"placid check\" tests=\"1\" errors=\"1\">\n    <testcase name=\"the project checks\" classname=\"placid check\">\n      <error message=\"{}\" type=\"{}\">{}</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n",
        escape(&message),
        code,
        escape(&lines.join("\n"))
    )
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn xml_escapes_markup_quotes_and_controls() {
        assert_eq!(escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
        assert_eq!(escape("bell\u{7}tab\t"), "bell\u{FFFD}tab\t");
    }
}
