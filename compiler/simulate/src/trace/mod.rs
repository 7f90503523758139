//! The placid trace: a CSV file of jobs to replay (docs/simulate.md). Traces come from
//! outside the project (exported from sacct, Kueue or a notebook), so the reader trusts
//! nothing: every problem is a diagnostic at its line and column, all of them at once, and
//! the number of rows is bounded.

use std::collections::{BTreeMap, HashMap};

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{ClassId, Model, PoolId, TeamId, TierId};
use placid_lang::span::{FileId, Span};
use placid_lang::suggest::help_for;
use placid_lang::units::Duration;

/// The most jobs one trace may hold (or one history: job records of `sacct`, Kueue's
/// Workloads). A replayed job costs about 850 bytes end to end (its row, its engine record,
/// its outcome; the events are measured as they happen, not kept), so this bounds a replay's
/// memory near 900 MB a side of a what-if (docs/limits.md has the figures).
pub const MAX_JOBS: usize = 1_000_000;

/// The most bytes of a placid trace read: [`MAX_JOBS`] jobs of about 64 bytes.
pub const MAX_BYTES: u64 = 64 << 20;

/// The most bytes of a history read (`sacct`, Kueue): their records are longer than a
/// trace's rows, so this binds before [`MAX_JOBS`] does; docs/limits.md measures both
/// readers at it.
pub const MAX_HISTORY_BYTES: u64 = 32 << 20;

/// The most GPUs one job may ask for: far beyond any cluster, so that a typo such as an extra
/// digit is caught as a bad value instead of becoming a job no cluster can hold.
pub const MAX_GPUS: u32 = 1_000_000;

/// The longest time a trace may name (submit, run or limit): ten years, which keeps every sum
/// of trace times far inside `u64` seconds.
pub const MAX_SECONDS: u64 = 10 * 366 * 86_400;

/// One job of a trace, resolved against the policy.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceJob {
    /// The job's name, unique in the trace.
    pub name: String,
    /// Its row, for diagnostics about the job.
    pub span: Span,
    /// Seconds from the start of the trace at which it is submitted.
    pub submit: u64,
    /// The submitting team.
    pub team: TeamId,
    /// The tier it asks for.
    pub tier: TierId,
    /// Its class, if any.
    pub class: Option<ClassId>,
    /// The pool it asks for, if any.
    pub pool: Option<PoolId>,
    /// GPUs.
    pub gpus: u32,
    /// Seconds it runs once started, if nothing stops it.
    pub run: u64,
    /// The time limit it was submitted with, if any.
    pub limit: Option<u64>,
    /// A free-form tag (`prod-sla`, `sweep`).
    pub tag: Option<String>,
    /// The stage the job belongs to, a group other jobs can wait for.
    pub stage: Option<String>,
    /// The stages whose jobs must all have ended (finished, failed or cancelled) before this
    /// job is submitted: the trace's form of a plan's `after`.
    pub after: Vec<String>,
}

/// A column of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Job,
    Submit,
    Team,
    Tier,
    Class,
    Pool,
    Gpus,
    Run,
    Limit,
    Tag,
    Stage,
    After,
}

impl Column {
    const ALL: [Column; 12] = [
        Column::Job,
        Column::Submit,
        Column::Team,
        Column::Tier,
        Column::Class,
        Column::Pool,
        Column::Gpus,
        Column::Run,
        Column::Limit,
        Column::Tag,
        Column::Stage,
        Column::After,
    ];

    fn name(self) -> &'static str {
        match self {
            Column::Job => "job",
            Column::Submit => "submit",
            Column::Team => "team",
            Column::Tier => "tier",
            Column::Class => "class",
            Column::Pool => "pool",
            Column::Gpus => "gpus",
            Column::Run => "run",
            Column::Limit => "limit",
            Column::Tag => "tag",
            Column::Stage => "stage",
            Column::After => "after",
        }
    }

    fn required(self) -> bool {
        matches!(self, Column::Job | Column::Submit | Column::Team | Column::Tier | Column::Gpus | Column::Run)
    }
}

/// The policy's names, looked up once per trace rather than once per row.
struct Names<'m> {
    teams: HashMap<&'m str, TeamId>,
    tiers: HashMap<&'m str, TierId>,
    classes: HashMap<&'m str, ClassId>,
    pools: HashMap<&'m str, PoolId>,
}

impl<'m> Names<'m> {
    fn of(model: &'m Model) -> Names<'m> {
        Names {
            teams: model.teams.iter().enumerate().map(|(index, team)| (team.name.as_str(), TeamId::from_index(index))).collect(),
            tiers: model.tiers.iter().enumerate().map(|(index, tier)| (tier.name.as_str(), TierId::from_index(index))).collect(),
            classes: model.classes.iter().enumerate().map(|(index, class)| (class.name.as_str(), ClassId::from_index(index))).collect(),
            pools: model.pools.iter().enumerate().map(|(index, pool)| (pool.name.as_str(), PoolId::from_index(index))).collect(),
        }
    }
}

/// Reads a trace from `text` (the contents of the file `file`), resolving its names against
/// `model`. Returns every problem at once.
pub fn read(model: &Model, file: FileId, text: &str) -> Result<Vec<TraceJob>, Diagnostics> {
    let names = Names::of(model);
    let mut diagnostics = Diagnostics::new();
    let mut reader = csv::ReaderBuilder::new().comment(Some(b'#')).trim(csv::Trim::All).from_reader(text.as_bytes());
    let columns = match header(&mut reader, file, text) {
        Ok(columns) => columns,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return Err(diagnostics);
        }
    };
    let mut jobs = Vec::new();
    let mut seen: HashMap<String, Span> = HashMap::new();
    let mut record = csv::StringRecord::new();
    loop {
        let start = reader.position().byte() as usize;
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(error) => {
                diagnostics.push(syntax_error(&error, file, text, start));
                // A field-count or quoting error leaves the reader at the next record; an
                // I/O or UTF-8 error does not recur either, so going on finds the rest.
                if diagnostics.error_count() >= 50 {
                    break;
                }
                continue;
            }
        }
        if jobs.len() == MAX_JOBS {
            diagnostics.push(
                Diagnostic::error(Code::TraceNotText, row_span(file, text, start), format!("the trace has more than {MAX_JOBS} jobs"))
                    .help("split the trace, or sample it: a replay of more jobs is no more telling"),
            );
            break;
        }
        let row = Row { file, text, start, record: &record, columns: &columns };
        // Names are checked for repeats on every row, valid or not, so that fixing one
        // error does not reveal another that could have been reported with it.
        let repeated = row.get(Column::Job).and_then(|name| match seen.get(name) {
            Some(first) => Some((name, *first)),
            None => {
                seen.insert(name.to_owned(), row.field_span(Column::Job));
                None
            }
        });
        if let Some((name, first)) = repeated {
            diagnostics.push(
                Diagnostic::error(Code::TraceValue, row.field_span(Column::Job), format!("job `{name}` appears twice"))
                    .with_secondary(first, "first here")
                    .help("give every job of a trace its own name"),
            );
        } else if let Some(job) = row.job(&names, &mut diagnostics) {
            jobs.push(job);
        }
        if diagnostics.error_count() >= 50 {
            break;
        }
    }
    check_stages(&jobs, &columns, file, text, &mut diagnostics);
    if jobs.is_empty() && !diagnostics.has_errors() {
        diagnostics.push(
            Diagnostic::error(Code::TraceEmpty, Span::new(file, 0, text.len().min(1)), "the trace has no jobs")
                .help("a trace is a header line and one line per job; see docs/simulate.md"),
        );
    }
    if diagnostics.has_errors() { Err(diagnostics) } else { Ok(jobs) }
}

/// Every stage an `after` names is the stage of some job, all of whose jobs come earlier in
/// the trace. The engine submits jobs in trace order and a job can only wait for jobs already
/// submitted; requiring the order also rules out stages that wait for themselves.
fn check_stages(jobs: &[TraceJob], columns: &[Column], file: FileId, text: &str, diagnostics: &mut Diagnostics) {
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (index, job) in jobs.iter().enumerate() {
        if let Some(stage) = job.stage.as_deref() {
            last.insert(stage, index);
        }
    }
    let mut stages: Vec<&str> = last.keys().copied().collect();
    stages.sort_unstable();
    for (index, job) in jobs.iter().enumerate() {
        let span = || {
            let start = job.span.start as usize;
            columns.iter().position(|column| *column == Column::After).map_or(job.span, |field| field_span(file, text, start, field))
        };
        for name in &job.after {
            match last.get(name.as_str()) {
                None => diagnostics.push(
                    Diagnostic::error(Code::TraceReference, span(), format!("no job of the trace is in stage `{name}`"))
                        .maybe_help(help_for(name, stages.iter().copied())),
                ),
                Some(last) if *last >= index => diagnostics.push(
                    Diagnostic::error(
                        Code::TraceValue,
                        span(),
                        format!("job `{}` waits for stage `{name}`, which has jobs after it", job.name),
                    )
                    .with_secondary(jobs[*last].span, "the stage's last job")
                    .help("list every job of a stage before the jobs that wait for it; a stage cannot wait for itself"),
                ),
                Some(_) => {}
            }
        }
    }
}

/// The header's columns, in file order, checked for unknown, repeated and missing names.
fn header(reader: &mut csv::Reader<&[u8]>, file: FileId, text: &str) -> Result<Vec<Column>, Diagnostic> {
    let start = reader.position().byte() as usize;
    let headers = reader.headers().map_err(|error| syntax_error(&error, file, text, start))?.clone();
    if headers.iter().all(str::is_empty) {
        return Err(Diagnostic::error(Code::TraceEmpty, Span::new(file, 0, text.len().min(1)), "the trace is empty")
            .help("a trace is a header line and one line per job; see docs/simulate.md"));
    }
    let header_start = start + text[start..].find(|c: char| !c.is_whitespace()).unwrap_or(0);
    let mut columns: Vec<Column> = Vec::new();
    for (index, name) in headers.iter().enumerate() {
        let span = field_span(file, text, header_start, index);
        let Some(column) = Column::ALL.iter().copied().find(|column| column.name() == name) else {
            let known: Vec<&str> = Column::ALL.iter().map(|column| column.name()).collect();
            return Err(Diagnostic::error(Code::TraceColumns, span, format!("unknown column `{name}`"))
                .maybe_help(help_for(name, known.iter().copied())));
        };
        if columns.contains(&column) {
            return Err(Diagnostic::error(Code::TraceColumns, span, format!("column `{name}` appears twice")).help("name each column once"));
        }
        columns.push(column);
    }
    if let Some(missing) = Column::ALL.iter().find(|column| column.required() && !columns.contains(column)) {
        return Err(Diagnostic::error(
            Code::TraceColumns,
            row_span(file, text, header_start),
            format!("the trace has no `{}` column", missing.name()),
        )
        .help("the columns job, submit, team, tier, gpus and run are required"));
    }
    Ok(columns)
}

/// One data row, with what it needs to point at its fields.
struct Row<'a> {
    file: FileId,
    text: &'a str,
    start: usize,
    record: &'a csv::StringRecord,
    columns: &'a [Column],
}

impl Row<'_> {
    fn get(&self, column: Column) -> Option<&str> {
        let index = self.columns.iter().position(|known| *known == column)?;
        self.record.get(index).filter(|value| !value.is_empty())
    }

    fn field_span(&self, column: Column) -> Span {
        match self.columns.iter().position(|known| *known == column) {
            Some(index) => field_span(self.file, self.text, self.start, index),
            None => row_span(self.file, self.text, self.start),
        }
    }

    fn job(&self, names: &Names<'_>, diagnostics: &mut Diagnostics) -> Option<TraceJob> {
        let before = diagnostics.error_count();
        let name = self.required(Column::Job, diagnostics).map(str::to_owned);
        let submit = self.seconds(Column::Submit, diagnostics);
        let team = self.reference(Column::Team, &names.teams, "team", diagnostics);
        let tier = self.reference(Column::Tier, &names.tiers, "tier", diagnostics);
        let class = self.get(Column::Class).and_then(|_| self.reference(Column::Class, &names.classes, "class", diagnostics));
        let pool = self.get(Column::Pool).and_then(|_| self.reference(Column::Pool, &names.pools, "pool", diagnostics));
        let gpus = self.gpus(diagnostics);
        let run = self.seconds(Column::Run, diagnostics);
        let limit = self.get(Column::Limit).and_then(|_| self.seconds(Column::Limit, diagnostics));
        let tag = self.get(Column::Tag).map(str::to_owned);
        let stage = self.get(Column::Stage).map(str::to_owned);
        let after = self.get(Column::After).map_or_else(Vec::new, |names| names.split_whitespace().map(str::to_owned).collect());
        if diagnostics.error_count() > before {
            return None;
        }
        Some(TraceJob {
            name: name?,
            span: row_span(self.file, self.text, self.start),
            submit: submit?,
            team: team?,
            tier: tier?,
            class,
            pool,
            gpus: gpus?,
            run: run?,
            limit,
            tag,
            stage,
            after,
        })
    }

    fn required(&self, column: Column, diagnostics: &mut Diagnostics) -> Option<&str> {
        let value = self.get(column);
        if value.is_none() {
            diagnostics.push(
                Diagnostic::error(Code::TraceValue, self.field_span(column), format!("`{}` is empty", column.name()))
                    .help(format!("every job needs a `{}`", column.name())),
            );
        }
        value
    }

    fn reference<Id: Copy>(&self, column: Column, names: &HashMap<&str, Id>, what: &str, diagnostics: &mut Diagnostics) -> Option<Id> {
        let value = self.required(column, diagnostics)?;
        let found = names.get(value).copied();
        if found.is_none() {
            diagnostics.push(
                Diagnostic::error(Code::TraceReference, self.field_span(column), format!("the policy declares no {what} `{value}`"))
                    .maybe_help(help_for(value, sorted_keys(names))),
            );
        }
        found
    }

    /// A time: a duration such as `90s` or `1h30m`, or a bare number of seconds.
    fn seconds(&self, column: Column, diagnostics: &mut Diagnostics) -> Option<u64> {
        let value = self.required(column, diagnostics)?;
        let parsed = match value.parse::<u64>() {
            Ok(seconds) => Ok(seconds),
            Err(_) if value.starts_with('-') => Err("a time cannot be negative".to_owned()),
            Err(_) if value.bytes().all(|byte| byte.is_ascii_digit()) => Err(format!("`{value}` is too large")),
            Err(_) => Duration::parse(value).map(|duration| duration.seconds).map_err(|error| error.message),
        };
        match parsed {
            Ok(seconds) if seconds <= MAX_SECONDS => Some(seconds),
            Ok(_) => {
                diagnostics.push(
                    Diagnostic::error(Code::TraceValue, self.field_span(column), format!("`{value}` is longer than ten years"))
                        .help("trace times are durations from the start of the trace, such as `90s`, `3m` or `1h30m`"),
                );
                None
            }
            Err(message) => {
                diagnostics.push(
                    Diagnostic::error(Code::TraceValue, self.field_span(column), message)
                        .help("write a duration such as `90s`, `3m` or `1h30m`, or a whole number of seconds"),
                );
                None
            }
        }
    }

    fn gpus(&self, diagnostics: &mut Diagnostics) -> Option<u32> {
        let value = self.required(Column::Gpus, diagnostics)?;
        match value.parse::<u32>() {
            Ok(gpus) if gpus <= MAX_GPUS => Some(gpus),
            _ => {
                let message = if value.starts_with('-') {
                    "a GPU count cannot be negative".to_owned()
                } else {
                    format!("`{value}` is not a GPU count")
                };
                diagnostics.push(
                    Diagnostic::error(Code::TraceValue, self.field_span(Column::Gpus), message)
                        .help(format!("write a whole number of GPUs from 0 to {MAX_GPUS}")),
                );
                None
            }
        }
    }
}

/// The policy's names of one kind in a stable order, so that a help line listing them reads
/// the same on every run.
fn sorted_keys<'a, Id>(names: &HashMap<&'a str, Id>) -> Vec<&'a str> {
    let mut keys: Vec<&str> = names.keys().copied().collect();
    keys.sort_unstable();
    keys
}

/// The diagnostic for a record the CSV reader could not read.
fn syntax_error(error: &csv::Error, file: FileId, text: &str, start: usize) -> Diagnostic {
    let start = error.position().map_or(start, |position| position.byte() as usize);
    let message = match error.kind() {
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => format!("this line has {len} fields, the header {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "this line is not UTF-8".to_owned(),
        _ => format!("this line is not CSV: {error}"),
    };
    Diagnostic::error(Code::TraceRow, row_span(file, text, start), message)
        .help("a trace line has one comma-separated value per header column; quote values that contain commas")
}

/// The span of the line that starts at byte `start`, without its line break.
fn row_span(file: FileId, text: &str, start: usize) -> Span {
    let start = start.min(text.len());
    let end = text[start..].find(['\r', '\n']).map_or(text.len(), |offset| start + offset);
    Span::new(file, start, end.max(start))
}

/// The span of field `index` of the line that starts at byte `start`: the reader reports
/// where a record starts, so the field is found by walking the line the way CSV splits it
/// (commas outside double quotes).
fn field_span(file: FileId, text: &str, start: usize, index: usize) -> Span {
    let line = row_span(file, text, start);
    let bytes = &text.as_bytes()[line.start as usize..line.end as usize];
    let mut field = 0;
    let mut field_start = 0;
    let mut quoted = false;
    for (offset, byte) in bytes.iter().enumerate() {
        match byte {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                if field == index {
                    return line.sub(field_start, offset);
                }
                field += 1;
                field_start = offset + 1;
            }
            _ => {}
        }
    }
    if field == index { line.sub(field_start, bytes.len()) } else { line }
}

/// A scheduler's history read as a trace (`sacct`, Kueue's Workloads): the jobs, and what was
/// left out, counted by reason (`account research-x is no team's`, `cancelled before it
/// started`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// The jobs that ran, as trace jobs, submitted from the first submission on.
    pub jobs: Vec<TraceJob>,
    /// Jobs left out, by reason.
    pub left_out: BTreeMap<String, usize>,
    /// Jobs that ran more than once (preempted or requeued and run again): their runs are
    /// folded into one job, submitted at its first submission.
    pub requeued: usize,
}

/// A history's jobs with their recorded submission times (seconds since the epoch) as a
/// trace: in submission order, submitted from the first submission on.
fn from_first_submission(mut jobs: Vec<(i64, TraceJob)>) -> Vec<TraceJob> {
    let origin = jobs.iter().map(|(submit, _)| *submit).min().unwrap_or(0);
    jobs.sort_by_key(|(submit, _)| *submit);
    jobs.into_iter()
        .map(|(submit, mut job)| {
            job.submit = u64::try_from(submit - origin).unwrap_or(0).min(MAX_SECONDS);
            job
        })
        .collect()
}

pub mod kueue;
pub mod sacct;

#[cfg(test)]
mod tests;
