//! The what-if of a pull request (`placid diff --simulate TRACE`): one trace replayed through
//! the base and the head policy, and the measures a reviewer weighs set side by side. The
//! trace is read against each revision on its own, since a pull request may rename the teams
//! or tiers it names; a trace that does not replay on one side says why in the report.

use placid_driver::build::Build;
use placid_driver::render;
use placid_lang::diag::Diagnostics;
use placid_lang::source::RelPath;
use placid_scoring::LoadError;
use placid_scoring::stage_rank::StageScores;
use placid_simulate::measure::Report;
use placid_simulate::text::{Change, compare};
use placid_simulate::{replay, trace};
use serde::Serialize;

/// A trace given to the diff.
#[derive(Clone, Debug)]
pub struct TraceInput {
    /// Where it was read from, as shown in the report.
    pub path: RelPath,
    /// Its text.
    pub text: String,
}

/// The what-if section of a diff report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhatIf {
    /// The trace's path.
    pub trace: String,
    /// Base against head; empty when the trace did not replay on both.
    pub changes: Vec<Change>,
    /// Why it did not replay, for each side that failed (`head: …`).
    pub errors: Vec<String>,
}

/// Replays `input` on both builds; `None` when either does not compile (its errors are the
/// report's news then).
pub fn what_if(base: &Build, head: &Build, input: &TraceInput) -> Option<WhatIf> {
    if base.diagnostics.has_errors() || head.diagnostics.has_errors() {
        return None;
    }
    let (before, after) = std::thread::scope(|scope| {
        let before = scope.spawn(|| replay_on(base, input));
        let after = replay_on(head, input);
        (before.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), after)
    });
    let mut errors = Vec::new();
    for (side, result) in [("base", &before), ("head", &after)] {
        if let Err(lines) = result {
            errors.extend(lines.iter().map(|line| format!("{side}: {line}")));
        }
    }
    let changes = match (before, after) {
        (Ok(before), Ok(after)) => compare(&before, &after),
        _ => Vec::new(),
    };
    Some(WhatIf { trace: input.path.as_str().to_owned(), changes, errors })
}

/// The most trace errors quoted per side.
const QUOTED_ERRORS: usize = 5;

/// Replays the trace on one side, ranking staged jobs with that side's own score plugins.
fn replay_on(build: &Build, input: &TraceInput) -> Result<Report, Vec<String>> {
    let mut sources = build.sources.clone();
    let file = sources.add(input.path.clone(), input.text.clone());
    let quoted = |diagnostics: &Diagnostics| -> Vec<String> {
        diagnostics.iter().take(QUOTED_ERRORS).map(|diagnostic| render::one_line(&sources, diagnostic)).collect()
    };
    // `what_if` replays only builds without errors, whose model is checked.
    let Some(model) = build.model.checked() else { return Err(Vec::new()) };
    let mut ranker = StageScores::new(model).map_err(|error| match error {
        LoadError::NoScore(diagnostic) => vec![render::one_line(&sources, &diagnostic)],
        LoadError::Module(diagnostics) => quoted(&diagnostics),
    })?;
    let jobs = trace::read(model, file, &input.text).map_err(|diagnostics| quoted(&diagnostics))?;
    Ok(replay::replay(model, &mut ranker, &jobs, &mut |_| {}))
}
