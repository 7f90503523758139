//! A cluster's own Slurm history as a trace: the output of
//!
//! ```text
//! sacct --allusers --duplicates --parsable2 --starttime=... --endtime=... \
//!   --format=JobID,JobName,Account,QOS,Partition,State,Submit,Start,End,Timelimit,ReqTRES,AllocTRES,Comment
//! ```
//!
//! read into placid trace jobs (docs/simulate.md, "Slurm history"). Accounts map to teams and
//! QOS to tiers through the Slurm target's own names (`placid_targets::slurm::names`), so a
//! history recorded under this policy maps back exactly; partitions map to pools. What cannot
//! be mapped, or never ran, is counted by reason and left out, never guessed.

use std::collections::HashMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, PoolId, TeamId, TierId};
use placid_lang::span::{FileId, Span};
use placid_targets::slurm::names;

use super::{History, MAX_JOBS, MAX_SECONDS, TraceJob, from_first_submission};

/// The `--format` fields the reader needs; `Comment` (the job's tag) may be left out.
pub const FIELDS: [&str; 12] =
    ["JobID", "JobName", "Account", "QOS", "Partition", "State", "Submit", "Start", "End", "Timelimit", "ReqTRES", "AllocTRES"];

/// One allocation record (a job, an array element; not a step).
struct Record<'t> {
    id: &'t str,
    span: Span,
    fields: HashMap<&'static str, &'t str>,
}

impl Record<'_> {
    fn get(&self, field: &str) -> &str {
        self.fields.get(field).copied().unwrap_or_default()
    }
}

/// Reads `text`, the output of `sacct --parsable2` with at least [`FIELDS`], against `model`.
pub fn read(model: &Model, file: FileId, text: &str) -> Result<History, Diagnostics> {
    let mut diagnostics = Diagnostics::new();
    let mut lines = text.split_inclusive('\n').scan(0usize, |at, line| {
        let start = *at;
        *at += line.len();
        Some((start, line.trim_end_matches(['\n', '\r'])))
    });
    let Some((header_at, header)) = lines.next().filter(|(_, line)| !line.is_empty()) else {
        diagnostics.push(
            Diagnostic::error(Code::TraceEmpty, Span::new(file, 0, text.len().min(1)), "the sacct output is empty")
                .help("run sacct with --parsable2 and without --noheader; see docs/simulate.md"),
        );
        return Err(diagnostics);
    };
    let columns: Vec<&str> = header.split('|').collect();
    let missing: Vec<&str> = FIELDS.iter().copied().filter(|field| !columns.contains(field)).collect();
    if !missing.is_empty() {
        diagnostics.push(
            Diagnostic::error(
                Code::TraceColumns,
                Span::new(file, header_at, header_at + header.len()),
                format!("the sacct output has no {} field", missing.join(", ")),
            )
            .help(format!("run sacct --parsable2 --format={},Comment", FIELDS.join(","))),
        );
        return Err(diagnostics);
    }
    let mut records: Vec<Record<'_>> = Vec::new();
    for (start, line) in lines {
        if line.is_empty() {
            continue;
        }
        let span = Span::new(file, start, start + line.len());
        let values: Vec<&str> = line.split('|').collect();
        if values.len() != columns.len() {
            diagnostics.push(
                Diagnostic::error(Code::TraceRow, span, format!("this line has {} fields, the header {}", values.len(), columns.len()))
                    .help("sacct --parsable2 separates fields with `|`; a job name holding `|` cannot be read"),
            );
            if diagnostics.error_count() >= 50 {
                break;
            }
            continue;
        }
        let fields: HashMap<&'static str, &str> = FIELDS
            .iter()
            .chain(&["Comment"])
            .filter_map(|field| columns.iter().position(|column| column == field).map(|index| (*field, values[index])))
            .collect();
        let id = fields.get("JobID").copied().unwrap_or_default();
        // Steps (`123.batch`, `123.0`, `123.extern`) are parts of their job.
        if id.contains('.') {
            continue;
        }
        if records.len() >= MAX_JOBS {
            diagnostics.push(
                Diagnostic::error(Code::TraceNotText, span, format!("the history has more than {MAX_JOBS} job records"))
                    .help("ask sacct for a shorter time window (--starttime, --endtime)"),
            );
            break;
        }
        records.push(Record { id, span, fields });
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let history = jobs(model, &records, &mut diagnostics);
    if diagnostics.has_errors() { Err(diagnostics) } else { Ok(history) }
}

/// The policy's Slurm names, each to what it names.
struct Names {
    teams: HashMap<String, TeamId>,
    tiers: HashMap<String, TierId>,
    pools: HashMap<String, PoolId>,
}

impl Names {
    fn of(model: &Model) -> Names {
        Names {
            teams: model.teams.iter().enumerate().map(|(index, team)| (names::team_account(team), TeamId::from_index(index))).collect(),
            tiers: model.tiers.iter().enumerate().map(|(index, tier)| (names::qos(tier), TierId::from_index(index))).collect(),
            pools: model.pools.iter().enumerate().map(|(index, pool)| (names::partition(pool), PoolId::from_index(index))).collect(),
        }
    }
}

/// The jobs of `records`: each job's records (a requeued job has one per run with
/// `--duplicates`) folded into one, submitted at its first submission, running as long as
/// its last run did.
fn jobs(model: &Model, records: &[Record<'_>], diagnostics: &mut Diagnostics) -> History {
    let names = Names::of(model);
    let mut history = History::default();
    let mut order: Vec<&str> = Vec::new();
    let mut by_id: HashMap<&str, Vec<&Record<'_>>> = HashMap::new();
    for record in records {
        let runs = by_id.entry(record.id).or_default();
        if runs.is_empty() {
            order.push(record.id);
        }
        runs.push(record);
    }
    let mut left_out = |reason: String| *history.left_out.entry(reason).or_default() += 1;
    let mut jobs: Vec<(i64, TraceJob)> = Vec::new();
    for id in order {
        let runs = &by_id[id];
        let (first, last) = (runs[0], runs[runs.len() - 1]);
        history.requeued += usize::from(runs.len() > 1);
        // A pending array's unexpanded elements (`123_[4-9]`) never ran.
        if id.contains('[') {
            left_out("array elements that never started".to_owned());
            continue;
        }
        let state = last.get("State").split_whitespace().next().unwrap_or_default();
        let (Some(submit), start, end) = (time(first.get("Submit")), time(last.get("Start")), time(last.get("End"))) else {
            diagnostics.push(
                Diagnostic::error(Code::TraceValue, first.span, format!("job {id} has no submission time"))
                    .help("sacct prints times as 2024-05-01T13:45:00; run it with the default time format"),
            );
            continue;
        };
        let (Some(start), Some(end)) = (start, end) else {
            left_out(match state {
                "PENDING" | "REQUEUED" => "still pending".to_owned(),
                "RUNNING" | "SUSPENDED" => "still running".to_owned(),
                _ => format!("{} before it started", state.to_ascii_lowercase()),
            });
            continue;
        };
        let account = last.get("Account").to_ascii_lowercase();
        let Some(team) = names.teams.get(&account).copied() else {
            left_out(format!("account `{account}` is no team's"));
            continue;
        };
        let qos = last.get("QOS").to_ascii_lowercase();
        let Some(tier) = names.tiers.get(&qos).copied() else {
            left_out(format!("QOS `{qos}` is no tier's"));
            continue;
        };
        let tres = if last.get("AllocTRES").is_empty() { last.get("ReqTRES") } else { last.get("AllocTRES") };
        let Some(gpus) = gpus(tres) else {
            diagnostics.push(
                Diagnostic::error(Code::TraceValue, last.span, format!("job {id}'s TRES `{tres}` has no readable GPU count"))
                    .help("the TRES list is `cpu=4,mem=16G,node=1,gres/gpu=2`"),
            );
            continue;
        };
        let partition = last.get("Partition");
        let pool = names.pools.get(partition).copied();
        let run = u64::try_from(end - start).unwrap_or(0).min(MAX_SECONDS);
        let limit = limit(last.get("Timelimit"));
        let tag = last.get("Comment");
        jobs.push((
            submit,
            TraceJob {
                name: id.to_owned(),
                span: first.span,
                submit: 0,
                team,
                tier,
                class: None,
                pool,
                gpus,
                run,
                limit,
                tag: (!tag.is_empty()).then(|| tag.to_owned()),
                stage: None,
                after: Vec::new(),
            },
        ));
    }
    history.jobs = from_first_submission(jobs);
    history
}

/// A sacct time (`2024-05-01T13:45:00`, the cluster's local time) in seconds, read as UTC:
/// only differences are used. `None` for `Unknown`, `None` and empty.
fn time(text: &str) -> Option<i64> {
    let civil: jiff::civil::DateTime = text.parse().ok()?;
    civil.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|zoned| zoned.timestamp().as_second())
}

/// The GPUs of a TRES list: `gres/gpu=N`, or the sum of `gres/gpu:TYPE=N` when no untyped
/// count is given; 0 without any. `None` when a GPU count is not a number.
fn gpus(tres: &str) -> Option<u32> {
    let mut untyped = None;
    let mut typed = 0u32;
    for item in tres.split(',').filter(|item| !item.is_empty()) {
        let Some((name, value)) = item.split_once('=') else { continue };
        if name == "gres/gpu" {
            untyped = Some(value.parse::<u32>().ok()?);
        } else if name.starts_with("gres/gpu:") {
            typed = typed.checked_add(value.parse::<u32>().ok()?)?;
        }
    }
    Some(untyped.unwrap_or(typed))
}

/// A Slurm time limit (`[D-]HH:MM:SS`, `MM:SS`, `UNLIMITED`, `Partition_Limit`) in seconds.
fn limit(text: &str) -> Option<u64> {
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) => (days.parse::<u64>().ok()?, clock),
        None => (0, text),
    };
    let parts: Vec<u64> = clock.split(':').map(|part| part.parse::<u64>().ok()).collect::<Option<_>>()?;
    // Saturating: a history may hold any digits, and whatever passes `MAX_SECONDS` is cut to it.
    let [days, hours, minutes, seconds] = match parts.as_slice() {
        [hours, minutes, seconds] => [days, *hours, *minutes, *seconds],
        [minutes, seconds] => [days, 0, *minutes, *seconds],
        [minutes] => [days, 0, *minutes, 0],
        _ => return None,
    };
    let total = [(days, 86_400), (hours, 3600), (minutes, 60), (seconds, 1)]
        .into_iter()
        .fold(0u64, |total, (count, unit)| total.saturating_add(count.saturating_mul(unit)));
    Some(total.min(MAX_SECONDS))
}

#[cfg(test)]
mod tests {
    use placid_lang::span::FileId;

    use super::{MAX_SECONDS, gpus, limit, read, time};
    use crate::fixture::model;

    /// Steps are folded into their job, a requeued job's runs into one, and what cannot be
    /// replayed is counted by reason: never started, no team's account, no tier's QOS, a
    /// pending array.
    #[test]
    fn a_history_reads_as_the_jobs_that_ran() {
        let text = "JobID|JobName|Account|QOS|Partition|State|Submit|Start|End|Timelimit|ReqTRES|AllocTRES|Comment\n\
            4|wrap|vision|p1|all|COMPLETED|2026-12-06T04:10:08|2026-12-06T04:10:10|2026-12-06T04:11:10|00:10:00|cpu=4,gres/gpu=2|cpu=4,gres/gpu=2,node=1|sweep\n\
            4.batch|batch|vision|||COMPLETED|2026-12-06T04:10:10|2026-12-06T04:10:10|2026-12-06T04:11:10|||cpu=1,gres/gpu=2|\n\
            5|wrap|nlp|p1|all|CANCELLED by 0|2026-12-06T04:10:09|None|2026-12-06T04:10:30|00:10:00|cpu=1,gres/gpu=1||\n\
            6|wrap|ghost|p1|all|COMPLETED|2026-12-06T04:10:09|2026-12-06T04:10:09|2026-12-06T04:10:19|00:10:00|gres/gpu=1|gres/gpu=1|\n\
            7|wrap|vision|normal|all|COMPLETED|2026-12-06T04:10:09|2026-12-06T04:10:09|2026-12-06T04:10:19|00:10:00|gres/gpu=1|gres/gpu=1|\n\
            8|wrap|nlp|p1|all|REQUEUED|2026-12-06T04:10:20|2026-12-06T04:10:21|2026-12-06T04:10:30|1-00:00:00|gres/gpu=4|gres/gpu=4|\n\
            8|wrap|nlp|p1|all|COMPLETED|2026-12-06T04:10:31|2026-12-06T04:10:40|2026-12-06T04:11:40|1-00:00:00|gres/gpu=4|gres/gpu=4|\n\
            9_[1-3]|wrap|nlp|p1|all|PENDING|2026-12-06T04:10:20|Unknown|Unknown|00:10:00|gres/gpu=1||\n";
        let history = read(&model(), FileId(0), text).expect("a history");
        let jobs: Vec<String> = history
            .jobs
            .iter()
            .map(|job| {
                format!("{} submit={} run={} gpus={} limit={:?} tag={:?}", job.name, job.submit, job.run, job.gpus, job.limit, job.tag)
            })
            .collect();
        assert_eq!(
            jobs,
            ["4 submit=0 run=60 gpus=2 limit=Some(600) tag=Some(\"sweep\")", "8 submit=12 run=60 gpus=4 limit=Some(86400) tag=None"]
        );
        assert!(history.jobs.iter().all(|job| job.pool.is_some()), "partition `all` is pool `all`'s");
        assert_eq!(history.requeued, 1);
        let left_out: Vec<(&str, usize)> = history.left_out.iter().map(|(reason, count)| (reason.as_str(), *count)).collect();
        assert_eq!(
            left_out,
            [
                ("QOS `normal` is no tier's", 1),
                ("account `ghost` is no team's", 1),
                ("array elements that never started", 1),
                ("cancelled before it started", 1)
            ]
        );
    }

    #[test]
    fn a_history_without_the_fields_is_refused_at_its_header() {
        let errors = read(&model(), FileId(0), "JobID|State\n1|COMPLETED\n").expect_err("no fields");
        let message = errors.iter().next().map(|error| error.message.clone()).unwrap_or_default();
        assert!(message.contains("JobName, Account, QOS"), "{message}");
    }

    #[test]
    fn tres_limits_and_times_read_as_slurm_writes_them() {
        assert_eq!(gpus("billing=8,cpu=8,gres/gpu=2,mem=32G,node=1"), Some(2));
        assert_eq!(gpus("cpu=8,gres/gpu:h100=2,gres/gpu:a100=1"), Some(3));
        assert_eq!(gpus("cpu=8,gres/gpu=4,gres/gpu:h100=4"), Some(4));
        assert_eq!(gpus("cpu=1,mem=1G"), Some(0));
        assert_eq!(gpus("gres/gpu=x"), None);
        assert_eq!(limit("1-02:03:04"), Some(93_784));
        assert_eq!(limit("00:10:00"), Some(600));
        assert_eq!(limit("UNLIMITED"), None);
        assert_eq!(limit("Partition_Limit"), None);
        // Found by the `sacct` fuzz target: these overflowed, and placid's overflow checks
        // stopped the replay.
        assert_eq!(limit("99999999999999999:00:00"), Some(MAX_SECONDS));
        assert_eq!(limit("99999999999999999-00:00:00"), Some(MAX_SECONDS));
        assert_eq!(limit("18446744073709551615"), Some(MAX_SECONDS));
        assert_eq!(time("2024-05-01T00:01:00").zip(time("2024-05-01T00:00:00")).map(|(a, b)| a - b), Some(60));
        assert_eq!(time("Unknown"), None);
    }
}
