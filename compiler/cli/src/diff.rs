//! `placid diff`: compile the project at two revisions and report the semantic and artifact
//! differences as text, a Markdown pull-request comment or JSON.

use std::path::PathBuf;

use placid_driver::render::{Choice, Format};

use crate::pipeline;
use crate::{Exit, Output, choice};
use placid_gitops::render::terminal::Colour;
use placid_gitops::render::{DiffFormat, json, markdown, terminal};
use placid_gitops::report::Outcome;
use placid_gitops::what_if::Side;
use placid_gitops::{DiffRequest, Revision, diff_with_progress};

/// Arguments of `placid diff`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The base revision (`origin/main`, a tag, a commit).
    #[arg(long)]
    base: String,
    /// The head revision; the working tree, uncommitted changes included, when absent.
    #[arg(long)]
    head: Option<String>,
    /// The project directory (holding placid.kdl), inside a git work tree.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Output format.
    #[arg(long, value_parser = choice::<DiffFormat>(), default_value = DiffFormat::Text.name())]
    format: DiffFormat,
    /// Exit with 0 when nothing changes, 1 when something does, 2 when head has errors.
    #[arg(long)]
    exit_code: bool,
    /// Replay this placid trace (docs/simulate.md) through base and head, and add a
    /// before → after table of waits, preemptions, NVLink GPU-hours and cost to the report.
    #[arg(long, value_name = "TRACE")]
    simulate: Option<PathBuf>,
    /// Write the what-if as one self-contained HTML page (base and head overlaid on step
    /// charts of allocation, queue length and each tier's waits) to this file.
    #[arg(long, requires = "simulate")]
    html: Option<PathBuf>,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let format = if args.format == DiffFormat::Json { Format::Json } else { Format::Text };
    let request = DiffRequest {
        dir: args.dir.clone(),
        base: Revision::Commit(args.base.clone()),
        head: args.head.clone().map_or(Revision::WorkingTree, Revision::Commit),
        trace: args.simulate.clone(),
    };
    let bars = WhatIfBars::default();
    let report = diff_with_progress(&request, &|side, ended, jobs| bars.advance(side, ended, jobs));
    bars.finish();
    let report = match report {
        Ok(report) => report,
        Err(error) => return pipeline::fail(out, format, error.into()),
    };
    let text = match args.format {
        DiffFormat::Text => terminal::render(&report, if out.stdout_color() { Colour::Always } else { Colour::Never }),
        DiffFormat::Markdown => markdown::render(&report),
        DiffFormat::Json => json::render(&report),
    };
    out.out(text);
    if let Some(path) = &args.html {
        match report.what_if.as_ref().and_then(|what_if| what_if.page.as_ref()) {
            Some(Ok(page)) => {
                if let Err(error) = placid_driver::output::write_file_atomically(path, page.as_bytes()) {
                    return pipeline::unwritable(out, format, path, error);
                }
            }
            Some(Err(error)) => out.errln(format!("no what-if page: {error}")),
            None => out.errln(format!("no what-if page written to {}: the trace did not replay on both revisions", path.display())),
        }
    }
    match (report.outcome, args.exit_code) {
        (Outcome::HeadErrors, _) => Exit::Usage,
        (Outcome::Changes, true) => Exit::Failure,
        _ => Exit::Ok,
    }
}

/// The what-if's progress bars, one a side, drawn on standard error when it is a terminal
/// and the trace has [`crate::replay::PROGRESS_FROM`] jobs or more, as `placid simulate`'s.
/// Made at the first report, which brings the trace's size; both sides replay at once.
#[derive(Default)]
struct WhatIfBars {
    bars: std::sync::OnceLock<Option<[indicatif::ProgressBar; 2]>>,
    shown: indicatif::MultiProgress,
}

impl WhatIfBars {
    fn advance(&self, side: Side, ended: usize, jobs: usize) {
        let bars = self.bars.get_or_init(|| {
            (jobs >= crate::replay::PROGRESS_FROM).then(|| {
                ["base", "head"].map(|label| {
                    let bar = self.shown.add(indicatif::ProgressBar::new(jobs as u64));
                    bar.set_style(
                        indicatif::ProgressStyle::with_template("{prefix} {wide_bar} {pos}/{len} jobs ended")
                            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                    );
                    bar.set_prefix(label);
                    bar
                })
            })
        });
        if let Some(bars) = bars {
            bars[usize::from(side == Side::Head)].set_position(ended as u64);
        }
    }

    fn finish(&self) {
        for bar in self.bars.get().into_iter().flatten().flatten() {
            bar.finish_and_clear();
        }
    }
}
