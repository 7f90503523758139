//! Rendering diagnostics: miette's graphical reports for people (every message, label, help
//! and source line escaped for the terminal by [`placid_lang::escape`], since they quote
//! traces and policies), one line each for summaries
//! (the diff report), and a stable JSON form for machines. This is the only place that turns
//! diagnostics into text, and the one place JSON documents become text.

use std::fmt::Write as _;

use std::collections::HashMap;
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError, MietteSpanContents, NamedSource, Report,
    SourceCode, SourceSpan, SpanContents,
};
use placid_lang::diag::{Diagnostic, Diagnostics, Severity};
use placid_lang::escape;
use placid_lang::source::Sources;
use placid_lang::span::FileId;

/// How to print diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Human-readable reports with source snippets.
    Text,
    /// One JSON document with every diagnostic.
    Json,
}

/// A closed set of named choices, such as an output format. The command line offers them
/// by name, so library types need no knowledge of the argument parser.
pub trait Choice: Copy + Send + Sync + 'static {
    /// Every choice, in the order help lists them.
    const ALL: &'static [Self];
    /// The name users type.
    fn name(self) -> &'static str;
}

impl Choice for Format {
    const ALL: &'static [Format] = &[Format::Text, Format::Json];

    fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
        }
    }
}

impl Choice for placid_targets::TargetKind {
    const ALL: &'static [placid_targets::TargetKind] = placid_targets::TargetKind::ALL;

    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// Renders diagnostics for a terminal (`color` selects ANSI colours).
pub fn text(sources: &Sources, diagnostics: &Diagnostics, color: bool) -> String {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100).with_links(false);
    let mut out = String::new();
    // Each file escaped and indexed once, however many diagnostics show it.
    let mut shown: HashMap<FileId, Indexed> = HashMap::new();
    for diagnostic in diagnostics.iter() {
        let file = diagnostic.primary.span.file;
        let source = sources.get(file).filter(|_| !diagnostic.primary.span.is_detached()).map(|source| {
            let indexed = shown.entry(file).or_insert_with(|| Indexed {
                text: Arc::from(escape::terminal_keeping_offsets(&source.text).as_ref()),
                starts: Arc::from(source.line_starts()),
            });
            NamedSource::new(source.path.as_str(), indexed.clone())
        });
        let report = to_report(sources, diagnostic, source);
        let _ = handler.render_report(&mut out, report.as_ref());
        out.push('\n');
    }
    let errors = diagnostics.error_count();
    let warnings = diagnostics.iter().count() - errors;
    if errors + warnings > 0 {
        let _ = writeln!(out, "{errors} error(s), {warnings} warning(s)");
    }
    out
}

/// One line: `policy/teams.kdl:3:5: placid::E010: message` (no place for a detached span).
pub fn one_line(sources: &Sources, diagnostic: &Diagnostic) -> String {
    let span = diagnostic.primary.span;
    let place = match (sources.get(span.file), sources.line_col(span.file, span.start)) {
        (Some(file), Some((line, column))) if !span.is_detached() => format!("{}:{line}:{column}: ", file.path),
        _ => String::new(),
    };
    format!("{place}{}: {}", diagnostic.code.id(), diagnostic.message)
}

/// Pretty-printed JSON. Serialising placid's documents cannot fail (their map keys are all
/// strings), so a failure is a bug, shown in the document instead of an empty output.
pub fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_else(|error| serde_json::json!({ "error": format!("cannot serialise the document: {error}") }).to_string())
}

fn to_report(sources: &Sources, diagnostic: &Diagnostic, source: Option<NamedSource<Indexed>>) -> Report {
    let severity = match diagnostic.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    };
    let mut report = MietteDiagnostic::new(escape::terminal(&diagnostic.message)).with_code(diagnostic.code.id()).with_severity(severity);
    if let Some(help) = &diagnostic.help {
        report = report.with_help(escape::terminal(help));
    }
    let file = diagnostic.primary.span.file;
    let same_file = |span: placid_lang::span::Span| span.file == file && !span.is_detached();
    let mut labels = Vec::new();
    if same_file(diagnostic.primary.span) {
        labels.push(LabeledSpan::new_primary_with_span(
            diagnostic.primary.message.as_deref().map(terminal_text),
            range(diagnostic.primary.span),
        ));
    }
    for label in diagnostic.secondary.iter().filter(|label| same_file(label.span)) {
        labels.push(LabeledSpan::new_with_span(label.message.as_deref().map(terminal_text), range(label.span)));
    }
    let mut notes = Vec::new();
    for label in diagnostic.secondary.iter().filter(|label| !same_file(label.span) && !label.span.is_detached()) {
        if let (Some(other), Some((line, column))) = (sources.get(label.span.file), sources.line_col(label.span.file, label.span.start)) {
            notes.push(format!("{}: {}:{line}:{column}", escape::terminal(label.message.as_deref().unwrap_or_default()), other.path));
        }
    }
    if !notes.is_empty() {
        let help = diagnostic.help.as_deref().map(|help| format!("{}\n", escape::terminal(help))).unwrap_or_default();
        report = report.with_help(format!("{help}{}", notes.join("\n")));
    }
    report = report.with_labels(labels);
    let report = Report::new(report);
    match source {
        Some(source) => report.with_source_code(source),
        None => report,
    }
}

/// A source file as miette reads it for one snippet: only the lines around the span, found
/// through the line index, so a diagnostic costs its snippet, not the file (miette's own
/// `String` source scans from the file's start for every one).
#[derive(Clone)]
struct Indexed {
    text: Arc<str>,
    starts: Arc<[usize]>,
}

impl SourceCode for Indexed {
    fn read_span<'a>(&'a self, span: &SourceSpan, before: usize, after: usize) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let line_of = |offset: usize| self.starts.partition_point(|start| *start <= offset).saturating_sub(1);
        // A line more on each side than asked: miette also counts a lone `\r` as a line end.
        let first = line_of(span.offset()).saturating_sub(before + 1);
        let last = line_of(span.offset() + span.len()).saturating_add(after + 2);
        let start = self.starts.get(first).copied().unwrap_or(0);
        let end = self.starts.get(last).copied().unwrap_or(self.text.len());
        let window = self.text.as_bytes().get(start..end).ok_or(MietteError::OutOfBounds)?;
        let inner = window.read_span(&SourceSpan::new((span.offset().saturating_sub(start)).into(), span.len()), before, after)?;
        Ok(Box::new(MietteSpanContents::new(
            inner.data(),
            SourceSpan::new((inner.span().offset() + start).into(), inner.span().len()),
            inner.line() + first,
            inner.column(),
            inner.line_count() + first,
        )))
    }
}

/// A label's text for the terminal ([`escape::terminal`]).
fn terminal_text(text: &str) -> String {
    escape::terminal(text).into_owned()
}

fn range(span: placid_lang::span::Span) -> (usize, usize) {
    (span.start as usize, span.len())
}

/// The JSON form: `{"diagnostics": [{code, name, severity, message, file, line, column, ...}]}`.
pub fn json(sources: &Sources, diagnostics: &Diagnostics) -> serde_json::Value {
    let location = |span: placid_lang::span::Span| -> serde_json::Value {
        if span.is_detached() {
            return serde_json::Value::Null;
        }
        let path = sources.get(span.file).map(|file| file.path.to_string());
        let (line, column) = sources.line_col(span.file, span.start).unwrap_or((0, 0));
        let (end_line, end_column) = sources.line_col(span.file, span.end).unwrap_or((0, 0));
        serde_json::json!({
            "file": path, "line": line, "column": column, "end-line": end_line, "end-column": end_column,
            "offset": span.start, "length": span.len(),
        })
    };
    let items: Vec<serde_json::Value> = diagnostics
        .iter()
        .map(|diagnostic| {
            serde_json::json!({
                "code": diagnostic.code.id(),
                "name": diagnostic.code.name(),
                "severity": match diagnostic.severity { Severity::Error => "error", Severity::Warning => "warning" },
                "message": diagnostic.message,
                "location": location(diagnostic.primary.span),
                "label": diagnostic.primary.message,
                "help": diagnostic.help,
                "related": diagnostic.secondary.iter().map(|label| serde_json::json!({
                    "location": location(label.span), "label": label.message,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "errors": diagnostics.error_count(), "diagnostics": items })
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::{Code, Diagnostic, Diagnostics};
    use placid_lang::source::{RelPath, Sources};
    use placid_lang::span::Span;

    /// A trace line naming a team with terminal escapes: neither the message quoting it nor
    /// the source line under it reaches the terminal raw.
    #[test]
    fn terminal_escapes_in_quoted_input_are_shown_not_run() {
        let mut sources = Sources::new();
        let line = "job,0,\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}1m,P1,1,1h\n";
        let file = sources.add(RelPath::new("trace.csv").expect("a path"), format!("job,submit,team,tier,gpus,run\n{line}"));
        let name = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}1m";
        let mut diagnostics = Diagnostics::new();
        diagnostics.push(
            Diagnostic::error(Code::TraceReference, Span::new(file, 35, 35 + name.len()), format!("the policy declares no team `{name}`"))
                .help(format!("did you mean `{name}`?")),
        );
        let text = super::text(&sources, &diagnostics, false);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{9b}'), "{text:?}");
        assert!(text.contains("\\u{1b}]0;owned"), "the message shows the escape: {text}");
    }

    /// Rendering a diagnostic costs its snippet, not its file: 20,000 diagnostics over a
    /// 2 MB file take well under a second, where a scan from the file's start for each (the
    /// line and column, miette's snippet) took minutes.
    #[test]
    fn many_diagnostics_in_a_large_file_cost_linear_time() {
        let mut sources = Sources::new();
        let line = format!("tier \"{}\" {{ bogus 1 }}\n", "x".repeat(80));
        let file = sources.add(RelPath::new("big.kdl").expect("a path"), line.repeat(20_000));
        let mut diagnostics = Diagnostics::new();
        for index in 0..20_000 {
            let start = index * line.len() + 6;
            diagnostics.push(Diagnostic::error(Code::TraceReference, Span::new(file, start, start + 80), "an error"));
        }
        let started = std::time::Instant::now();
        let text = super::text(&sources, &diagnostics, false);
        let json = super::json(&sources, &diagnostics);
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
        assert!(text.contains("big.kdl:20000:7"), "the last snippet has its own line number");
        assert_eq!(json["diagnostics"][19_999]["location"]["line"], 20_000);
    }
}
