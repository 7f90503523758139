//! Reading the openb CSV files. They are untrusted input: every problem is a coded diagnostic
//! at the field it concerns (file, line and column), all of them at once up to a cap, and no
//! input panics. The caller reads the bytes (the engine does no IO) within [`MAX_TRACE_BYTES`].

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::source::{RelPath, Sources};
use placid_lang::span::{FileId, Span};

use crate::{GpuSpec, Milli, Node, Pod, Trace};

/// The largest trace file read: the openb lists are under 1 MiB, and a list of this size
/// (about 200,000 pods) still simulates in seconds a seed.
pub const MAX_TRACE_BYTES: u64 = 16 << 20;
/// The most GPUs one node has or one pod asks for.
pub const MAX_GPUS: u64 = 64;
/// The most distinct GPU models a node list names (a pod's `gpu_spec` is a bit set of them).
pub const MAX_MODELS: usize = 64;
/// The largest CPU figure of a node or pod, in milli-vCPU (100,000 cores).
pub const MAX_CPU_MILLI: u64 = 100_000_000;
/// The largest memory figure of a node or pod, in MiB (1 PiB).
pub const MAX_MEMORY_MIB: u64 = 1 << 30;
/// Diagnostics reported per file before reading stops, so a wrong file gives a readable report.
const MAX_ERRORS_PER_FILE: usize = 50;

/// One of the two files of an openb trace, as the caller read it.
pub struct TraceFile<'a> {
    /// The path shown in diagnostics.
    pub path: RelPath,
    /// The file's bytes (at most [`MAX_TRACE_BYTES`]).
    pub bytes: &'a [u8],
}

/// Reads a node list and a pod list into a trace, adding both files to `sources` so that the
/// diagnostics can show them. Returns the trace only when there is no error.
pub fn read(sources: &mut Sources, nodes: TraceFile<'_>, pods: TraceFile<'_>) -> (Option<Trace>, Diagnostics) {
    let mut diagnostics = Diagnostics::new();
    let node_rows = table(sources, nodes, &NODE_COLUMNS, &mut diagnostics);
    let pod_rows = table(sources, pods, &POD_COLUMNS, &mut diagnostics);
    let (Some(node_rows), Some(pod_rows)) = (node_rows, pod_rows) else {
        return (None, diagnostics);
    };
    let mut models = Models::default();
    let trace_nodes: Vec<Node> = node_rows.rows.iter().filter_map(|row| node(row, &mut models, &mut diagnostics)).collect();
    let trace_pods: Vec<Pod> = pod_rows.rows.iter().filter_map(|row| pod(row, &models, &mut diagnostics)).collect();
    if diagnostics.has_errors() {
        return (None, diagnostics);
    }
    (Some(Trace { nodes: trace_nodes, pods: trace_pods, models: models.names }), diagnostics)
}

/// A column a file may have.
struct Column {
    name: &'static str,
    required: bool,
}

const fn required(name: &'static str) -> Column {
    Column { name, required: true }
}

const fn optional(name: &'static str) -> Column {
    Column { name, required: false }
}

const NODE_COLUMNS: [Column; 5] = [required("sn"), required("cpu_milli"), required("memory_mib"), required("gpu"), required("model")];

/// The pod list's columns; the reproduction ignores times, QoS and phase (pods never finish).
/// Only the five the FGD simulator needs are required: some of its own pod lists have no
/// `gpu_spec` (any GPU model then) and no times.
const POD_COLUMNS: [Column; 11] = [
    required("name"),
    required("cpu_milli"),
    required("memory_mib"),
    required("num_gpu"),
    required("gpu_milli"),
    optional("gpu_spec"),
    optional("qos"),
    optional("pod_phase"),
    optional("creation_time"),
    optional("deletion_time"),
    optional("scheduled_time"),
];

/// The rows of one file, each field with its span, looked up by column name.
struct Table {
    rows: Vec<Row>,
}

struct Row {
    /// Field text and span, by column name (only the columns the header named).
    fields: BTreeMap<&'static str, (String, Span)>,
    span: Span,
}

impl Row {
    fn get(&self, column: &str) -> (&str, Span) {
        // Every required column was checked in the header, and rows have the header's width.
        self.fields.get(column).map(|(text, span)| (text.as_str(), *span)).unwrap_or(("", self.span))
    }
}

/// Splits a file into rows of named fields, or reports why it cannot (bad UTF-8, bad header,
/// malformed rows, no rows).
fn table(sources: &mut Sources, file: TraceFile<'_>, columns: &[Column], diagnostics: &mut Diagnostics) -> Option<Table> {
    let (text, bad_utf8) = match std::str::from_utf8(file.bytes) {
        Ok(text) => (text.to_owned(), None),
        Err(error) => (String::from_utf8_lossy(&file.bytes[..error.valid_up_to()]).into_owned(), Some(error.valid_up_to())),
    };
    let path = file.path.to_string();
    let id = sources.add(file.path, text);
    let text = sources.get(id).map(|source| source.text.as_str()).unwrap_or_default();
    if let Some(at) = bad_utf8 {
        diagnostics.push(
            Diagnostic::error(Code::TraceNotText, Span::new(id, at, at), format!("{path} is not UTF-8 text"))
                .label("the first byte that is not UTF-8")
                .help("export the trace as UTF-8 CSV"),
        );
        return None;
    }
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut records = reader.byte_records();
    let Some(header) = records.next() else {
        diagnostics.push(empty(id, &path));
        return None;
    };
    let header = match header {
        Ok(header) => header,
        Err(error) => {
            diagnostics.push(malformed(id, text, &error));
            return None;
        }
    };
    let header_at = header.position().map_or(0, |position| position.byte() as usize);
    let mut named: Vec<Option<&'static str>> = Vec::new();
    let mut errors = 0;
    for (index, field) in header.iter().enumerate() {
        let name = String::from_utf8_lossy(field);
        let span = field_span(id, text, header_at, &header, index);
        match columns.iter().find(|column| column.name == name) {
            Some(column) if named.contains(&Some(column.name)) => {
                diagnostics.push(
                    Diagnostic::error(Code::TraceColumns, span, format!("column `{name}` appears twice")).help("name each column once"),
                );
                errors += 1;
                named.push(None);
            }
            Some(column) => named.push(Some(column.name)),
            None => {
                let known: Vec<&str> = columns.iter().map(|column| column.name).collect();
                diagnostics.push(
                    Diagnostic::error(Code::TraceColumns, span, format!("unknown column `{name}` in {path}"))
                        .label("not an openb column")
                        .help(format!("the columns are {}", known.join(","))),
                );
                errors += 1;
                named.push(None);
            }
        }
    }
    let header_span = Span::new(id, header_at, header_at + line_len(text, header_at));
    for column in columns.iter().filter(|column| column.required && !named.contains(&Some(column.name))) {
        diagnostics.push(
            Diagnostic::error(Code::TraceColumns, header_span, format!("{path} has no column `{}`", column.name))
                .label("this header")
                .help("add the column; every row needs a value for it"),
        );
        errors += 1;
    }
    if errors > 0 {
        return None;
    }
    let mut rows = Vec::new();
    for record in records {
        if errors >= MAX_ERRORS_PER_FILE {
            diagnostics.push(
                Diagnostic::error(Code::TraceRow, header_span, format!("{path} has too many malformed rows; stopped reading"))
                    .help("fix the rows reported above and read the file again"),
            );
            return None;
        }
        let record = match record {
            Ok(record) => record,
            Err(error) => {
                diagnostics.push(malformed(id, text, &error));
                errors += 1;
                continue;
            }
        };
        let at = record.position().map_or(0, |position| position.byte() as usize);
        let span = Span::new(id, at, at + line_len(text, at));
        if record.len() != named.len() {
            diagnostics.push(
                Diagnostic::error(Code::TraceRow, span, format!("this row has {} fields and the header {}", record.len(), named.len()))
                    .help("every row has one field per header column; quote a field that holds a comma"),
            );
            errors += 1;
            continue;
        }
        let fields = named
            .iter()
            .enumerate()
            .filter_map(|(index, name)| {
                let name = (*name)?;
                let field = record.get(index)?;
                Some((name, (String::from_utf8_lossy(field).into_owned(), field_span(id, text, at, &record, index))))
            })
            .collect();
        rows.push(Row { fields, span });
    }
    if errors > 0 {
        return None;
    }
    if rows.is_empty() {
        diagnostics.push(empty(id, &path));
        return None;
    }
    Some(Table { rows })
}

fn empty(id: FileId, path: &str) -> Diagnostic {
    Diagnostic::error(Code::TraceEmpty, Span::new(id, 0, 0), format!("{path} has no data rows"))
        .help("a trace needs a header line and at least one row below it")
}

fn malformed(id: FileId, text: &str, error: &csv::Error) -> Diagnostic {
    let at = error.position().map_or(0, |position| position.byte() as usize).min(text.len());
    Diagnostic::error(Code::TraceRow, Span::new(id, at, at + line_len(text, at)), format!("malformed CSV row: {error}"))
        .help("every row has one field per header column; quote a field that holds a comma")
}

/// The length of the line starting at `at`, without its line break.
fn line_len(text: &str, at: usize) -> usize {
    let rest = text.get(at..).unwrap_or_default();
    rest.find(['\n', '\r']).unwrap_or(rest.len())
}

/// Where field `index` of the record starting at `at` lies. The csv crate gives field bounds
/// within the unquoted record, which are the file's own offsets for unquoted fields (openb's
/// never are quoted); a quoted field is found by its text on the record's line instead.
fn field_span(id: FileId, text: &str, at: usize, record: &csv::ByteRecord, index: usize) -> Span {
    let line = text.get(at..at + line_len(text, at)).unwrap_or_default();
    let Some(range) = record.range(index) else {
        return Span::new(id, at, at + line.len());
    };
    let offset = range.start + index; // one comma before each earlier field
    let field = record.get(index).unwrap_or_default();
    if line.as_bytes().get(offset..offset + field.len()) == Some(field) {
        return Span::new(id, at + offset, at + offset + field.len());
    }
    Span::new(id, at, at + line.len())
}

/// The GPU models of the node list, in order of first appearance.
#[derive(Default)]
struct Models {
    names: Vec<String>,
}

impl Models {
    fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|known| known == name)
    }
}

fn node(row: &Row, models: &mut Models, diagnostics: &mut Diagnostics) -> Option<Node> {
    let cpu = number(row, "cpu_milli", MAX_CPU_MILLI, diagnostics);
    let memory = number(row, "memory_mib", MAX_MEMORY_MIB, diagnostics);
    let gpus = number(row, "gpu", MAX_GPUS, diagnostics);
    let (model, model_span) = row.get("model");
    let model = match models.index(model) {
        Some(index) => Some(index),
        None if models.names.len() < MAX_MODELS => {
            models.names.push(model.to_owned());
            Some(models.names.len() - 1)
        }
        None => {
            diagnostics.push(
                Diagnostic::error(Code::TraceValue, model_span, format!("the node list names more than {MAX_MODELS} GPU models"))
                    .help("placid reads node lists of at most 64 GPU models (docs/limits.md)"),
            );
            None
        }
    };
    let (name, _) = row.get("sn");
    Some(Node { name: name.to_owned(), cpu_milli: cpu?, memory_mib: memory?, gpus: gpus? as u32, model: model? as u8 })
}

fn pod(row: &Row, models: &Models, diagnostics: &mut Diagnostics) -> Option<Pod> {
    let cpu = number(row, "cpu_milli", MAX_CPU_MILLI, diagnostics);
    let memory = number(row, "memory_mib", MAX_MEMORY_MIB, diagnostics);
    let gpus = number(row, "num_gpu", MAX_GPUS, diagnostics);
    let milli = number(row, "gpu_milli", u64::from(Milli::GPU), diagnostics);
    let spec = gpu_spec(row, models, diagnostics);
    let (gpus, milli) = (gpus?, milli?);
    let (_, milli_span) = row.get("gpu_milli");
    let meaningless = match (gpus, milli) {
        (0, 0) => None,
        (0, _) => Some("a pod without GPUs asks for `gpu_milli` 0"),
        (_, 0) => Some("a GPU pod asks for at least 1 `gpu_milli`"),
        (1, _) => None,
        (_, milli) if milli != u64::from(Milli::GPU) => Some("only a one-GPU pod shares a GPU: `gpu_milli` is 1000 here"),
        _ => None,
    };
    if let Some(message) = meaningless {
        diagnostics.push(
            Diagnostic::error(Code::TraceValue, milli_span, format!("`gpu_milli` {milli} with `num_gpu` {gpus}"))
                .label(message)
                .help("`gpu_milli` is the share of each GPU: 0 without GPUs, 1-1000 for one GPU, 1000 for more"),
        );
        return None;
    }
    let (name, _) = row.get("name");
    Some(Pod {
        name: name.to_owned(),
        cpu_milli: cpu?,
        memory_mib: memory?,
        gpus: gpus as u32,
        gpu_milli: Milli(milli as u32),
        spec: spec?,
    })
}

/// The `gpu_spec` field as a set of node-list models; empty means any.
fn gpu_spec(row: &Row, models: &Models, diagnostics: &mut Diagnostics) -> Option<GpuSpec> {
    let (text, span) = row.get("gpu_spec");
    if text.is_empty() {
        return Some(GpuSpec::ANY);
    }
    let mut spec = GpuSpec::NONE;
    let mut ok = true;
    let mut start = 0;
    for name in text.split('|') {
        let name_span = if span.len() == text.len() { span.sub(start, start + name.len()) } else { span };
        start += name.len() + 1;
        match models.index(name) {
            Some(index) => spec = spec.with(index),
            None => {
                diagnostics.push(
                    Diagnostic::error(Code::TraceUnknownGpuModel, name_span, format!("no node has GPU model `{name}`"))
                        .label("not a model of the node list")
                        .help(format!("the node list's models are {}", models.names.join(", "))),
                );
                ok = false;
            }
        }
    }
    ok.then_some(spec)
}

/// A whole non-negative number of at most `max`, or a diagnostic at the field.
fn number(row: &Row, column: &str, max: u64, diagnostics: &mut Diagnostics) -> Option<u64> {
    let (text, span) = row.get(column);
    let problem = match text.parse::<u64>() {
        Ok(value) if value <= max => return Some(value),
        Ok(_) => format!("is larger than {max}"),
        Err(_) if text.starts_with('-') && text[1..].bytes().all(|byte| byte.is_ascii_digit()) && text.len() > 1 => {
            "is negative".to_owned()
        }
        Err(_) if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) => format!("is larger than {max}"),
        Err(_) => "is not a whole number".to_owned(),
    };
    diagnostics.push(
        Diagnostic::error(Code::TraceValue, span, format!("`{column}` {problem}: `{text}`"))
            .label(format!("a whole number from 0 to {max}"))
            .help("openb figures are whole non-negative numbers within the limits of docs/limits.md"),
    );
    None
}
