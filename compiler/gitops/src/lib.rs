//! `placid diff`: compile a project at two revisions and report what changes, semantically
//! (the checked models) and per generated artifact.
//!
//! Revisions are read straight from the git object database ([`git_world::GitWorld`]); the
//! default head is the working tree, uncommitted changes included ([`placid_driver::world::FsWorld`]).
//! Invariants: a revision that does not compile is a reported state, never a crash; the
//! report is deterministic; nothing is checked out and no `git` process is started.

pub mod artifacts;
pub mod describe;
pub mod git_world;
pub mod model_diff;
pub mod render;
pub mod report;
pub mod risk;
pub mod verify;
pub mod what_if;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use git2::Repository;
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::source::World;
use placid_lang::span::Span;

use crate::git_world::GitWorld;
use crate::model_diff::{Danger, DangerKind};
use crate::report::{DiffReport, RevisionReport};
use placid_driver::build::{Build, Selection, compile};
use placid_driver::world::FsWorld;

/// Which state of the project a side of the diff reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revision {
    /// The working tree, with uncommitted changes.
    WorkingTree,
    /// A commit, by anything `git rev-parse` accepts.
    Commit(String),
}

impl Revision {
    fn label(&self) -> String {
        match self {
            Revision::WorkingTree => "working tree".into(),
            Revision::Commit(revision) => revision.clone(),
        }
    }
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct DiffRequest {
    /// The project directory (holding placid.kdl), inside a git work tree.
    pub dir: PathBuf,
    /// The base revision.
    pub base: Revision,
    /// The head revision.
    pub head: Revision,
    /// A trace to replay through both revisions (`--simulate`): a path inside the work tree,
    /// read from the head commit's objects when the head is a commit that holds it, else from
    /// the checkout without following a link out of it ([`what_if::read_trace`]).
    pub trace: Option<PathBuf>,
}

/// Why a diff could not be made at all (as opposed to a revision that does not compile).
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The directory is not inside a git work tree.
    #[error("{dir} is not inside a git work tree: {reason}")]
    NotARepository {
        /// The project directory.
        dir: PathBuf,
        /// What git2 said.
        reason: String,
    },
    /// A revision or the project directory in it cannot be read.
    #[error("{0}")]
    Unreadable(String),
    /// The `--simulate` trace cannot be read, or not from where a diff may read it.
    #[error("{0}")]
    Trace(String),
}

impl From<DiffError> for Diagnostic {
    fn from(error: DiffError) -> Diagnostic {
        let help = match &error {
            DiffError::NotARepository { .. } => "run `placid diff` on a project inside a git work tree",
            DiffError::Unreadable(_) => "check that the revision exists (`git rev-parse`) and holds the project",
            DiffError::Trace(_) => "give a regular file inside the work tree: links out of it are not followed",
        };
        Diagnostic::error(Code::InputUnreadable, Span::DETACHED, error.to_string()).help(help)
    }
}

/// Compiles both revisions and compares them.
pub fn diff(request: &DiffRequest) -> Result<DiffReport, DiffError> {
    diff_with_progress(request, &|_, _, _| {})
}

/// [`diff`], telling `progress` how the what-if's replays advance (`--simulate`).
pub fn diff_with_progress(request: &DiffRequest, progress: &what_if::Progress<'_>) -> Result<DiffReport, DiffError> {
    let not_a_repository = |reason: String| DiffError::NotARepository { dir: request.dir.clone(), reason };
    let repo = Repository::discover(&request.dir).map_err(|error| not_a_repository(error.message().to_owned()))?;
    let project_dir = project_dir_in(&repo, &request.dir).map_err(not_a_repository)?;
    // An unknown revision fails before either side spends a whole build.
    for revision in [&request.base, &request.head] {
        open_revision(&repo, &request.dir, &project_dir, revision)?;
    }
    // The two revisions compile independently, so they compile at once; a git2 repository
    // is not shared between threads, so the base opens its own.
    let git_dir = repo.path().to_path_buf();
    let (base, head) = std::thread::scope(|scope| {
        let base = scope.spawn(|| {
            let repo = Repository::open(&git_dir)
                .map_err(|error| DiffError::Unreadable(format!("cannot open {}: {}", git_dir.display(), error.message())))?;
            build_revision(&repo, &request.dir, &project_dir, &request.base)
        });
        let head = build_revision(&repo, &request.dir, &project_dir, &request.head);
        (base.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), head)
    });
    let (base, head) = (base?, head?);
    let trace = match &request.trace {
        Some(path) => Some(what_if::read_trace(&repo, &request.head, path)?),
        None => None,
    };
    let mut report = compare(&request.base.label(), &base, &request.head.label(), &head);
    let subjects: Vec<model_diff::Subject> =
        report.dangers.iter().filter_map(|danger| danger.subject.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    report.what_if = trace.as_ref().and_then(|trace| what_if::what_if(&base, &head, trace, &subjects, progress));
    report.attach_effects();
    Ok(report)
}

/// Compares two builds already made (the part of [`diff`] after reading the revisions).
pub fn compare(base_label: &str, base: &Build, head_label: &str, head: &Build) -> DiffReport {
    let base_report = RevisionReport::of(base_label, base);
    let head_report = RevisionReport::of(head_label, head);
    // A base with errors has a partial model: comparing with it would report everything the
    // errors hid as "added", so only its diagnostics are reported.
    let both_built = !base.diagnostics.has_errors() && !head.diagnostics.has_errors();
    let templates = if both_built { template_changes(base, head) } else { Vec::new() };
    // The semantic and the artifact comparison share nothing, so they run at once.
    let (model, artifacts) = std::thread::scope(|scope| {
        let artifacts = scope.spawn(|| both_built.then(|| artifacts::diff_artifacts(&base.artifacts, &head.artifacts)));
        let model = (!base.diagnostics.has_errors()).then(|| {
            let mut diff = model_diff::diff_models(&base.model, &head.model, &head.diagnostics);
            // A head with errors has a partial model, whose missing parts would read as cuts.
            if both_built {
                diff.dangers.extend(risk::risks(&base.model, &head.model));
                diff.dangers.sort();
            }
            diff
        });
        (model, artifacts.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    DiffReport::new(base_report, head_report, model, artifacts, templates)
}

/// The Slurm template overrides that differ between two builds, each a danger: they are
/// code every job submission runs, to be reviewed as such, whatever the scripts they render
/// show for the plans of today.
fn template_changes(base: &Build, head: &Build) -> Vec<Danger> {
    let overrides = |build: &'_ Build| -> BTreeMap<String, String> {
        let Some(directory) = build.model.project.slurm.as_ref().and_then(|settings| settings.templates.as_ref()) else {
            return BTreeMap::new();
        };
        let prefix = format!("{}/", directory.value);
        build
            .sources
            .iter()
            .filter(|(_, file)| file.path.as_str().starts_with(&prefix))
            .map(|(_, file)| (file.path.to_string(), file.text.clone()))
            .collect()
    };
    let (before, after) = (overrides(base), overrides(head));
    let paths: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let change = match (before.get(path), after.get(path)) {
                (None, _) => "added",
                (_, None) => "removed",
                (Some(old), Some(new)) if old != new => "changed",
                _ => return None,
            };
            Some(Danger::new(DangerKind::TemplateOverride, format!("{path} {change}: review it as code")))
        })
        .collect()
}

/// The project directory relative to the root of the repository's work tree (`""` at the
/// root), with `/` separators as in git trees.
fn project_dir_in(repo: &Repository, dir: &Path) -> Result<String, String> {
    let workdir = repo.workdir().ok_or_else(|| "the repository is bare".to_owned())?;
    let canonical = |path: &Path| path.canonicalize().map_err(|error| format!("{}: {error}", path.display()));
    let (root, project) = (canonical(workdir)?, canonical(dir)?);
    let relative = project.strip_prefix(&root).map_err(|_| format!("{} is outside the work tree {}", project.display(), root.display()))?;
    let parts: Vec<String> = relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    Ok(parts.join("/"))
}

fn open_revision<'repo>(
    repo: &'repo Repository,
    dir: &Path,
    project_dir: &str,
    revision: &Revision,
) -> Result<Box<dyn World + 'repo>, DiffError> {
    Ok(match revision {
        Revision::WorkingTree => {
            Box::new(FsWorld::new(dir).map_err(|error| DiffError::Unreadable(format!("cannot open {}: {error}", dir.display())))?)
        }
        Revision::Commit(revision) => {
            Box::new(GitWorld::at_revision(repo, revision, project_dir).map_err(|error| DiffError::Unreadable(error.reason))?)
        }
    })
}

fn build_revision(repo: &Repository, dir: &Path, project_dir: &str, revision: &Revision) -> Result<Build, DiffError> {
    let world = open_revision(repo, dir, project_dir, revision)?;
    Ok(compile(world.as_ref(), &Selection { only: Vec::new() }))
}
