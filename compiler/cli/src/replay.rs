//! `placid simulate [DIR] --trace FILE`: replays a placid trace (docs/simulate.md) through the
//! engine on the project's policy and prints what it measured, with SVG plots on request.

use std::path::{Path, PathBuf};

use placid_driver::build::Selection;
use placid_driver::output::write_file_atomically;
use placid_driver::render::Format;
use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::source::{RelPath, Sources};
use placid_lang::span::Span;
use placid_simulate::measure::Report;
use placid_simulate::outcome::{self, JobsFormat};
use placid_simulate::plot::{Series, line_chart};
use placid_simulate::{html, replay, text, trace};

use crate::pipeline::{self, Fields};
use crate::{Exit, Output, ProjectArgs};

/// The most bytes of a placid trace (or of a recorded telemetry series) read.
pub const MAX_TRACE_BYTES: u64 = trace::MAX_BYTES;

/// Jobs above which a progress bar is shown (on a terminal).
pub const PROGRESS_FROM: usize = 50_000;

/// What a `--trace` file holds (`--from`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TraceForm {
    /// A placid trace (docs/simulate.md).
    #[default]
    Placid,
    /// The output of `sacct --parsable2` with the fields docs/simulate.md names: the cluster's
    /// own history.
    Sacct,
    /// Kueue's Workloads, as `kubectl get workloads -A -o json` lists them.
    Kueue,
}

/// What `placid simulate --trace` writes besides its report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Files<'a> {
    /// `--plots DIR`.
    pub plots: Option<&'a Path>,
    /// `--jobs FILE`.
    pub jobs: Option<&'a Path>,
    /// `--html FILE`.
    pub html: Option<&'a Path>,
    /// What the trace file holds.
    pub form: TraceForm,
}

/// Replays `trace_path` on the project; writes the plots and every job's outcome when asked.
pub fn run(project: &ProjectArgs, trace_path: &Path, telemetry: Option<&Path>, files: Files<'_>, out: &mut Output) -> Exit {
    let format = project.format;
    // `--jobs` names its form by its extension, checked before the replay's work.
    let jobs_file = match files.jobs.map(|path| jobs_format(out, format, path).map(|form| (path, form))).transpose() {
        Ok(jobs_file) => jobs_file,
        Err(exit) => return exit,
    };
    let Some(Replayed { sources, model, trace, report }) = (match replay_file(project, trace_path, files.form, telemetry, out) {
        Ok(replayed) => replayed,
        Err(exit) => return exit,
    }) else {
        return Exit::Failure;
    };
    if let Some(dir) = files.plots
        && let Err(exit) = write_plots(out, format, dir, &report)
    {
        return exit;
    }
    if let Some(path) = files.html {
        let title = shown_path(trace_path);
        let written = html::page(title.as_str(), &report, model.project.currency).map_err(|error| {
            pipeline::fail(
                out,
                format,
                Diagnostic::error(Code::EnvironmentUnavailable, Span::DETACHED, error.to_string()).help("report this as a bug"),
            )
        });
        let written = written
            .and_then(|page| write_file_atomically(path, page.as_bytes()).map_err(|error| pipeline::unwritable(out, format, path, error)));
        if let Err(exit) = written {
            return exit;
        }
    }
    if let Some((path, form)) = jobs_file {
        let written = outcome::jobs_file(&model, &trace, &report.outcomes, form).map_err(|error| {
            pipeline::fail(out, format, Diagnostic::error(Code::EnvironmentUnavailable, Span::DETACHED, error).help("report this as a bug"))
        });
        let written = written
            .and_then(|text| write_file_atomically(path, text.as_bytes()).map_err(|error| pipeline::unwritable(out, format, path, error)));
        if let Err(exit) = written {
            return exit;
        }
    }
    match format {
        Format::Json => {
            let mut fields = Fields::new();
            fields.insert("report".into(), serde_json::to_value(&report).unwrap_or_default());
            pipeline::report(out, format, &sources, &Diagnostics::new(), fields)
        }
        Format::Text => {
            out.out(text::summary(&report));
            Exit::Ok
        }
    }
}

/// The form `--jobs FILE` is written in, by its extension; an unknown one is a usage error.
fn jobs_format(out: &mut Output, format: Format, path: &Path) -> Result<JobsFormat, Exit> {
    let extension = path.extension().and_then(|extension| extension.to_str()).unwrap_or_default();
    JobsFormat::of_extension(extension).ok_or_else(|| {
        let diagnostic =
            Diagnostic::error(Code::CommandNotApplicable, Span::DETACHED, format!("--jobs {} names no known form", path.display()))
                .help("end the file's name in `.csv` for CSV, or `.jsonl` (or `.ndjson`) for JSON lines");
        pipeline::fail(out, format, diagnostic)
    })
}

/// A replayed trace, with what it was replayed on.
pub struct Replayed {
    /// The project's sources and the trace's.
    pub sources: Sources,
    /// The policy it was replayed on.
    pub model: Checked,
    /// The trace's jobs.
    pub trace: Vec<trace::TraceJob>,
    /// What the replay measured.
    pub report: Report,
}

/// Compiles the project, reads the trace (and the recorded telemetry series, when given) and
/// replays it: `Ok(None)` when either had errors (already reported).
pub fn replay_file(
    project: &ProjectArgs,
    trace_path: &Path,
    form: TraceForm,
    telemetry_path: Option<&Path>,
    out: &mut Output,
) -> Result<Option<Replayed>, Exit> {
    let build = pipeline::checked(out, project, &Selection::default())?;
    let mut sources = build.sources;
    let model = build.model;
    let limit = match form {
        TraceForm::Placid => MAX_TRACE_BYTES,
        TraceForm::Sacct | TraceForm::Kueue => trace::MAX_HISTORY_BYTES,
    };
    let text = read_trace(out, project.format, trace_path, limit)?;
    let file = sources.add(shown_path(trace_path), text);
    let text = sources.get(file).map(|source| source.text.as_str()).unwrap_or_default();
    let read = match form {
        TraceForm::Placid => trace::read(&model, file, text),
        TraceForm::Sacct => trace::sacct::read(&model, file, text).map(|history| history_jobs(out, history)),
        TraceForm::Kueue => trace::kueue::read(&model, file, text).map(|history| history_jobs(out, history)),
    };
    let jobs = match read {
        Ok(jobs) => jobs,
        Err(diagnostics) => {
            pipeline::report(out, project.format, &sources, &diagnostics, Fields::new());
            return Ok(None);
        }
    };
    let recorded = match telemetry_path {
        Some(path) => match recorded_telemetry(out, project.format, &mut sources, &model, path)? {
            Some(recorded) => Some(recorded),
            None => return Ok(None),
        },
        None => None,
    };
    let bar = (jobs.len() >= PROGRESS_FROM).then(|| indicatif::ProgressBar::new(jobs.len() as u64));
    let mut ranker = pipeline::stage_scores(out, project.format, &sources, &model)?;
    if let Some(recorded) = &recorded {
        ranker.with_telemetry(recorded);
    }
    let report = replay::replay_with(&model, &mut ranker, &jobs, recorded.as_ref(), &mut |ended| {
        if let Some(bar) = &bar {
            bar.set_position(ended as u64);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    pipeline::warn_ranking_failures(out, &sources, ranker.failures());
    Ok(Some(Replayed { sources, model, trace: jobs, report }))
}

/// A history's jobs; what it held that is not replayed is said, never dropped in silence.
fn history_jobs(out: &mut Output, history: trace::History) -> Vec<trace::TraceJob> {
    for (reason, count) in &history.left_out {
        out.err(format!("left out of the history: {count} job(s): {}\n", placid_lang::escape::terminal(reason)));
    }
    if history.requeued > 0 {
        out.err(format!(
            "{} job(s) of the history ran more than once (preempted or requeued): each is replayed as one job, submitted at its first submission, running as long as its last run\n",
            history.requeued
        ));
    }
    history.jobs
}

/// The path diagnostics show: relative to the working directory when inside it, else the
/// file's name.
pub fn shown_path(path: &Path) -> RelPath {
    let relative = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    [relative, path.file_name().map(PathBuf::from)]
        .into_iter()
        .flatten()
        .find_map(|candidate| RelPath::new(&candidate.to_string_lossy()).ok())
        .unwrap_or_else(|| RelPath::new("trace.csv").unwrap_or_else(|_| unreachable!("a valid literal path")))
}

/// Reads at most `limit` bytes of the trace as UTF-8 text.
pub fn read_trace(out: &mut Output, format: Format, path: &Path, limit: u64) -> Result<String, Exit> {
    let bytes = pipeline::read_at_most(out, format, "the trace", path, limit)?;
    String::from_utf8(bytes).map_err(|error| {
        let diagnostic = Diagnostic::error(
            Code::TraceNotText,
            Span::DETACHED,
            format!("{} is not UTF-8 (byte {})", path.display(), error.utf8_error().valid_up_to()),
        )
        .help("export the trace as UTF-8 CSV");
        pipeline::fail(out, format, diagnostic)
    })
}

/// Writes `allocation.svg` and `queue.svg` into `dir`, each atomically.
fn write_plots(out: &mut Output, format: Format, dir: &Path, report: &Report) -> Result<(), Exit> {
    let end = report.horizon_seconds;
    let charts = [
        ("allocation.svg", "GPU allocation", "allocated GPUs (%)", "allocation", report.series.allocation_points(end)),
        ("queue.svg", "Queue length", "waiting jobs", "waiting", report.series.queue_points(end)),
    ];
    std::fs::create_dir_all(dir).map_err(|error| pipeline::unwritable(out, format, dir, error))?;
    for (file, title, axis, name, points) in charts {
        let svg = line_chart(title, axis, &[Series { name: name.to_owned(), points }]).map_err(|error| {
            pipeline::fail(
                out,
                format,
                Diagnostic::error(Code::EnvironmentUnavailable, Span::DETACHED, error.to_string()).help("report this as a bug"),
            )
        })?;
        let path = dir.join(file);
        write_file_atomically(&path, svg.as_bytes()).map_err(|error| pipeline::unwritable(out, format, &path, error))?;
    }
    Ok(())
}

/// Reads the recorded telemetry series at `path` against `model`'s `telemetry` block:
/// `Ok(None)` when it had errors (already reported); a project without the block cannot
/// replay one (E098), since the smoothing and the rule are the policy's.
pub fn recorded_telemetry(
    out: &mut Output,
    format: Format,
    sources: &mut Sources,
    model: &placid_lang::model::Model,
    path: &Path,
) -> Result<Option<placid_engine::telemetry::Recorded>, Exit> {
    let Some(settings) = &model.telemetry else {
        let diagnostic =
            Diagnostic::error(Code::CommandNotApplicable, Span::DETACHED, "--telemetry is given but the policy declares no `telemetry`")
                .help(
                    "add a `telemetry` block (docs/language.md, \"Telemetry\"): its half-life, maximum age and throttle replay the series",
                );
        return Err(pipeline::fail(out, format, diagnostic));
    };
    let text = read_trace(out, format, path, MAX_TRACE_BYTES)?;
    let file = sources.add(shown_path(path), text);
    let text = sources.get(file).map(|source| source.text.as_str()).unwrap_or_default();
    match placid_engine::telemetry::Recorded::read(model, settings, file, text) {
        Ok(recorded) => Ok(Some(recorded)),
        Err(diagnostics) => {
            pipeline::report(out, format, sources, &diagnostics, Fields::new());
            Ok(None)
        }
    }
}
