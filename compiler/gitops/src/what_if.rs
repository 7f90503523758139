//! The what-if of a pull request (`placid diff --simulate TRACE`): one trace replayed through
//! the base and the head policy, and the measures a reviewer weighs set side by side. The
//! trace is read against each revision on its own, since a pull request may rename the teams
//! or tiers it names; a trace that does not replay on one side says why in the report.

use std::path::{Component, Path, PathBuf};

use git2::{ObjectType, Repository};
use placid_driver::build::Build;
use placid_driver::render;
use placid_lang::diag::Diagnostics;
use placid_lang::source::RelPath;
use placid_scoring::LoadError;
use placid_scoring::stage_rank::StageScores;
use placid_simulate::measure::Report;
use placid_simulate::outcome::{JobChange, changed_jobs};
use placid_simulate::text::{Change, Scope, compare, effect};
use placid_simulate::{replay, trace};
use serde::Serialize;

use crate::model_diff::Subject;
use crate::{DiffError, Revision};

/// A trace given to the diff.
#[derive(Clone, Debug)]
pub struct TraceInput {
    /// Where it was read from, as shown in the report.
    pub path: RelPath,
    /// Its text.
    pub text: String,
}

/// Reads the trace at `path` (as given on the command line) for the diff: it must lie inside
/// the work tree. With a head commit that holds it, it is that commit's blob (a link there is
/// refused, as every link in a revision); otherwise it is read from the checkout through
/// [`placid_driver::untrusted::read_beneath`], so a committed link to `/proc/self/environ`
/// or out of the checkout cannot put a file from outside into the report.
pub fn read_trace(repo: &Repository, head: &Revision, path: &Path) -> Result<TraceInput, DiffError> {
    let refused = |reason: String| DiffError::Trace(format!("cannot read the trace {}: {reason}", path.display()));
    let workdir = repo.workdir().ok_or_else(|| refused("the repository is bare".into()))?;
    let relative = inside_work_tree(workdir, path).ok_or_else(|| refused("it is not inside the git work tree".into()))?;
    let shown = RelPath::new(&relative.to_string_lossy()).map_err(|reason| refused(reason.to_string()))?;
    let from_commit = match head {
        Revision::Commit(revision) => committed_blob(repo, revision, &relative).map_err(refused)?,
        Revision::WorkingTree => None,
    };
    let bytes = match from_commit {
        Some(bytes) => bytes,
        None => placid_driver::untrusted::read_beneath(workdir, &relative, trace::MAX_BYTES).map_err(|error| refused(error.reason))?,
    };
    let text = String::from_utf8(bytes).map_err(|error| refused(format!("it is not UTF-8 (byte {})", error.utf8_error().valid_up_to())))?;
    Ok(TraceInput { path: shown, text })
}

/// `path` relative to the work tree's root, compared without resolving links (resolving them
/// is what must not happen); `None` when it is outside, or climbs with `..`.
fn inside_work_tree(workdir: &Path, path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().ok()?.join(path) };
    if absolute.components().any(|part| part == Component::ParentDir) {
        return None;
    }
    let absolute: PathBuf = absolute.components().filter(|part| *part != Component::CurDir).collect();
    let roots = [Some(workdir.to_path_buf()), workdir.canonicalize().ok()];
    roots
        .into_iter()
        .flatten()
        .find_map(|root| absolute.strip_prefix(&root).ok().map(Path::to_path_buf))
        .filter(|inside| !inside.as_os_str().is_empty())
}

/// The bytes of `relative` in `revision`'s tree; `None` when the commit does not hold it.
fn committed_blob(repo: &Repository, revision: &str, relative: &Path) -> Result<Option<Vec<u8>>, String> {
    let tree = repo.revparse_single(revision).and_then(|object| object.peel_to_tree()).map_err(|error| error.message().to_owned())?;
    let Ok(entry) = tree.get_path(relative) else { return Ok(None) };
    if entry.filemode() == crate::git_world::SYMLINK_MODE {
        return Err("it is a symbolic link, which placid does not follow in git revisions".into());
    }
    if entry.kind() != Some(ObjectType::Blob) {
        return Err("it is not a file".into());
    }
    let (size, _) = repo.odb().and_then(|odb| odb.read_header(entry.id())).map_err(|error| error.message().to_owned())?;
    if size as u64 > trace::MAX_BYTES {
        return Err(format!("it is larger than {} MiB", trace::MAX_BYTES >> 20));
    }
    let blob = repo.find_blob(entry.id()).map_err(|error| error.message().to_owned())?;
    Ok(Some(blob.content().to_vec()))
}

/// The what-if section of a diff report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhatIf {
    /// The trace's path.
    pub trace: String,
    /// Base against head; empty when the trace did not replay on both.
    pub changes: Vec<Change>,
    /// Jobs whose outcome differs between base and head (finished on one side only, rejected
    /// for another reason), counted.
    pub jobs_changed: usize,
    /// The first [`LISTED_JOBS`] of them, by name, in trace order.
    pub jobs: Vec<JobChange>,
    /// Why it did not replay, for each side that failed (`head: …`).
    pub errors: Vec<String>,
    /// The measured effect on each subject of a risky change, base → head.
    #[serde(skip)]
    pub effects: Vec<(Subject, String)>,
    /// The what-if as a self-contained HTML page (`placid diff --html`), or why it could not
    /// be drawn; none when the trace did not replay on both sides.
    #[serde(skip)]
    pub page: Option<Result<String, String>>,
}

/// Replays `input` on both builds, measuring the effect on each of `subjects` (those of the
/// report's risky changes); `None` when either does not compile (its errors are the report's
/// news then).
pub fn what_if(base: &Build, head: &Build, input: &TraceInput, subjects: &[Subject], progress: &Progress<'_>) -> Option<WhatIf> {
    if base.diagnostics.has_errors() || head.diagnostics.has_errors() {
        return None;
    }
    let (before, after) = std::thread::scope(|scope| {
        let before = scope.spawn(|| replay_on(base, input, &mut |ended, jobs| progress(Side::Base, ended, jobs)));
        let after = replay_on(head, input, &mut |ended, jobs| progress(Side::Head, ended, jobs));
        (before.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), after)
    });
    let mut errors = Vec::new();
    for (side, result) in [("base", &before), ("head", &after)] {
        if let Err(lines) = result {
            errors.extend(lines.iter().map(|line| format!("{side}: {line}")));
        }
    }
    let mut page = None;
    let (changes, (jobs_changed, jobs), effects) = match (before, after) {
        (Ok(before), Ok(after)) => {
            let effects = subjects
                .iter()
                .map(|subject| {
                    let scope = match subject {
                        Subject::Tier(tier) => Scope::Tier(tier),
                        Subject::Team(team) => Scope::Team(team),
                        Subject::All => Scope::All,
                    };
                    (subject.clone(), effect(&before, &after, scope))
                })
                .collect();
            let changes = compare(&before, &after);
            let (jobs_changed, jobs) = changed_jobs(&before.outcomes, &after.outcomes, LISTED_JOBS);
            page = Some(
                placid_simulate::html::what_if_page(input.path.as_str(), &before, &after, &changes, &jobs)
                    .map_err(|error| error.to_string()),
            );
            (changes, (jobs_changed, jobs), effects)
        }
        _ => (Vec::new(), (0, Vec::new()), Vec::new()),
    };
    Some(WhatIf { trace: input.path.as_str().to_owned(), changes, jobs_changed, jobs, errors, effects, page })
}

/// The side of a what-if that a progress report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The base revision.
    Base,
    /// The head revision.
    Head,
}

/// Told, for one side of a what-if's replay, how many jobs have ended and how many the
/// trace has (every [`replay::PROGRESS_EVERY`] ends, and at its end); both sides replay at
/// once, on two threads. Only the CLI draws it: the library prints nothing.
pub type Progress<'a> = dyn Fn(Side, usize, usize) + Sync + 'a;

/// The most jobs whose outcome changed that the report lists by name.
pub const LISTED_JOBS: usize = 20;

/// The most trace errors quoted per side.
const QUOTED_ERRORS: usize = 5;

/// Replays the trace on one side, ranking staged jobs with that side's own score plugins.
fn replay_on(build: &Build, input: &TraceInput, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, Vec<String>> {
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
    let total = jobs.len();
    Ok(replay::replay(model, &mut ranker, &jobs, &mut |ended| progress(ended, total)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose work tree holds `traces/day.csv`, a link to the process's
    /// environment and a link out of the checkout, all committed.
    fn repository() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let work = dir.path();
        std::fs::create_dir(work.join("traces")).expect("mkdir");
        std::fs::write(work.join("traces/day.csv"), "job,submit\n").expect("write");
        std::os::unix::fs::symlink("/proc/self/environ", work.join("traces/environ.csv")).expect("link");
        std::os::unix::fs::symlink("../../outside.csv", work.join("traces/up.csv")).expect("link");
        {
            let mut index = repo.index().expect("index");
            for file in ["traces/day.csv", "traces/environ.csv", "traces/up.csv"] {
                index.add_path(Path::new(file)).expect("add");
            }
            let tree = repo.find_tree(index.write_tree().expect("tree")).expect("tree");
            let signature = git2::Signature::now("t", "t@example.com").expect("signature");
            repo.commit(Some("HEAD"), &signature, &signature, "traces", &tree, &[]).expect("commit");
        }
        (dir, repo)
    }

    #[test]
    fn a_committed_link_out_of_the_checkout_is_never_followed() {
        let (dir, repo) = repository();
        let work = dir.path();
        for head in [Revision::WorkingTree, Revision::Commit("HEAD".into())] {
            for link in ["traces/environ.csv", "traces/up.csv"] {
                let error = read_trace(&repo, &head, &work.join(link)).expect_err(link).to_string();
                assert!(!error.contains("PATH="), "{error}");
                assert!(error.contains("link"), "{head:?} {link}: {error}");
            }
            let trace = read_trace(&repo, &head, &work.join("traces/day.csv")).expect("a committed trace");
            assert_eq!((trace.path.as_str(), trace.text.as_str()), ("traces/day.csv", "job,submit\n"));
            let outside = read_trace(&repo, &head, Path::new("/etc/hostname")).expect_err("outside the work tree").to_string();
            assert!(outside.contains("not inside the git work tree"), "{outside}");
        }
    }

    #[test]
    fn a_head_commit_is_read_from_its_objects_not_the_checkout() {
        let (dir, repo) = repository();
        std::fs::write(dir.path().join("traces/day.csv"), "edited in the checkout\n").expect("write");
        let committed = read_trace(&repo, &Revision::Commit("HEAD".into()), &dir.path().join("traces/day.csv")).expect("trace");
        assert_eq!(committed.text, "job,submit\n");
        let checkout = read_trace(&repo, &Revision::WorkingTree, &dir.path().join("traces/day.csv")).expect("trace");
        assert_eq!(checkout.text, "edited in the checkout\n");
    }
}
