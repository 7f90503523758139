//! One checked project: what `placid check` finds in it (through the overlay, so with the
//! editor's unsaved text), turned into the protocol's diagnostics per file, with the quick
//! fixes the diagnostics offer, and the names of every file for navigation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, TextEdit};
use placid_driver::build::{Selection, Stage, compile_to};
use placid_driver::world::FsWorld;
use placid_lang::checked::Verdict;
use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Severity};
use placid_lang::model::Model;
use placid_lang::source::{RelPath, Sources};
use placid_lang::span::Span;

use crate::convert;
use crate::names::{self, Occurrence};
use crate::outline::{self, Statement};
use crate::overlay::Overlay;

/// The file every project has; a diagnostic that points nowhere is shown on it.
pub const PROJECT_FILE: &str = "placid.kdl";

/// A quick fix: replace a range of a file with new text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, for the editor's menu.
    pub title: String,
    /// The range of the diagnostic it fixes (where the editor offers it).
    pub at: Range,
    /// The edit.
    pub edit: TextEdit,
    /// The diagnostic it fixes.
    pub diagnostic: lsp_types::Diagnostic,
}

/// One file of a checked project.
pub struct File {
    /// Its text, as checked.
    pub text: String,
    /// Its statements.
    pub statements: Vec<Statement>,
    /// Its declared names.
    pub names: Vec<Occurrence>,
}

/// A checked project.
pub struct Analysis {
    /// The model, complete when there are no errors, partial otherwise.
    pub model: Model,
    /// The protocol's diagnostics for each file, by absolute path; a file with none is absent.
    pub diagnostics: BTreeMap<PathBuf, Vec<lsp_types::Diagnostic>>,
    /// The quick fixes, by absolute path.
    pub fixes: BTreeMap<PathBuf, Vec<Fix>>,
    /// Every KDL file read, by absolute path.
    pub files: BTreeMap<PathBuf, File>,
}

/// Checks the project at `disk` with the documents `open` over it.
pub fn analyse(disk: &FsWorld, open: &BTreeMap<RelPath, String>) -> Analysis {
    let world = Overlay { disk, open };
    // What `placid check` validates: the checker's passes and every enabled target's own
    // rules, so the editor shows exactly what the command would.
    let build = compile_to(&world, &Selection::default(), Stage::Validated);
    let root = disk.canonical_root().to_path_buf();
    let mut analysis =
        Analysis { model: model_of(build.model), diagnostics: BTreeMap::new(), fixes: BTreeMap::new(), files: BTreeMap::new() };
    for (_, source) in build.sources.iter() {
        if !source.path.as_str().ends_with(".kdl") {
            continue;
        }
        let statements = outline::scan(&source.text);
        let names = names::occurrences(&statements);
        analysis.files.insert(root.join(source.path.as_str()), File { text: source.text.clone(), statements, names });
    }
    for diagnostic in build.diagnostics.iter() {
        let Some((path, lsp)) = convert_diagnostic(&root, &build.sources, diagnostic) else { continue };
        if let Some(fix) = fix_for(&build.sources, diagnostic, &lsp) {
            analysis.fixes.entry(path.clone()).or_default().push(fix);
        }
        analysis.diagnostics.entry(path).or_default().push(lsp);
    }
    analysis
}

/// The model of a verdict, checked or not: navigation and hover read a rejected one too.
fn model_of(verdict: Verdict) -> Model {
    match verdict {
        Verdict::Checked(checked) => checked.into_model(),
        Verdict::Rejected(model) => model,
    }
}

/// The file and range of `span`; a detached span is the start of the project file.
fn locate(root: &Path, sources: &Sources, span: Span) -> Option<(PathBuf, Range)> {
    if span.is_detached() {
        return Some((root.join(PROJECT_FILE), Range::default()));
    }
    let file = sources.get(span.file)?;
    Some((root.join(file.path.as_str()), convert::range(&file.text, span.start as usize, span.end as usize)))
}

/// The protocol's diagnostic for one of placid's: its code, the message with the label and
/// the help line (the protocol has no field for them), and the secondary labels as related
/// information.
fn convert_diagnostic(root: &Path, sources: &Sources, diagnostic: &Diagnostic) -> Option<(PathBuf, lsp_types::Diagnostic)> {
    let (path, range) = locate(root, sources, diagnostic.primary.span)?;
    let mut message = diagnostic.message.clone();
    if let Some(label) = &diagnostic.primary.message {
        message.push_str(&format!(" ({label})"));
    }
    if let Some(help) = &diagnostic.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .secondary
        .iter()
        .filter_map(|label| {
            let (path, range) = locate(root, sources, label.span)?;
            let uri = convert::uri(&path)?;
            Some(DiagnosticRelatedInformation {
                location: Location { uri, range },
                message: label.message.clone().unwrap_or_else(|| "here".to_owned()),
            })
        })
        .collect();
    let lsp = lsp_types::Diagnostic {
        range,
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(diagnostic.code.id())),
        source: Some("placid".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp_types::Diagnostic::default()
    };
    Some((path, lsp))
}

/// The quick fix a diagnostic offers: its help's "did you mean `x`?" (the wrong word, quoted
/// in the message, replaced inside the diagnostic's span), or `#true`/`#false` for a KDL 1
/// boolean that KDL 2 refuses.
fn fix_for(sources: &Sources, diagnostic: &Diagnostic, lsp: &lsp_types::Diagnostic) -> Option<Fix> {
    let span = diagnostic.primary.span;
    let file = sources.get(span.file)?;
    let (start, end) = (span.start as usize, span.end as usize);
    let written = file.text.get(start..end)?;
    if diagnostic.code == Code::KdlSyntax
        && let Some(new) = kdl2_keyword(written)
    {
        let edit = TextEdit { range: convert::range(&file.text, start, end), new_text: new.to_owned() };
        return Some(Fix { title: format!("write `{new}` (KDL 2)"), at: lsp.range, edit, diagnostic: lsp.clone() });
    }
    let help = diagnostic.help.as_deref()?;
    let suggestion = help.strip_prefix("did you mean `")?.strip_suffix("`?")?;
    // The wrong word is one the message quotes; the span may hold more (`windw="3m"`).
    let wrong = quoted_words(&diagnostic.message).into_iter().find(|word| !word.is_empty() && written.contains(word))?;
    let at = start + written.find(wrong)?;
    let edit = TextEdit { range: convert::range(&file.text, at, at + wrong.len()), new_text: suggestion.to_owned() };
    Some(Fix { title: format!("replace `{wrong}` with `{suggestion}`"), at: lsp.range, edit, diagnostic: lsp.clone() })
}

/// KDL 2's spelling of a KDL 1 keyword.
fn kdl2_keyword(written: &str) -> Option<&'static str> {
    match written {
        "true" => Some("#true"),
        "false" => Some("#false"),
        "null" => Some("#null"),
        _ => None,
    }
}

/// The words between backticks in `text`.
fn quoted_words(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_are_every_other_piece() {
        assert_eq!(quoted_words("`preemption` has no property `windw`"), ["preemption", "windw"]);
        assert!(quoted_words("nothing quoted").is_empty());
    }
}
