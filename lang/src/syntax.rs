//! KDL sources to syntax trees. Parsing never fails: a file that is not valid KDL yields an
//! empty document plus its diagnostics, so the rest of the project is still checked.

use kdl::KdlDocument;

use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::span::{FileId, Span};

/// Converts a miette span of `file` into a placid span.
pub fn span_of(file: FileId, span: miette::SourceSpan) -> Span {
    Span::new(file, span.offset(), span.offset() + span.len())
}

/// Parses `text` (file `file`) as KDL 2.0.
pub fn parse(file: FileId, text: &str) -> (KdlDocument, Diagnostics) {
    let mut diagnostics = Diagnostics::new();
    match KdlDocument::parse_v2(text) {
        Ok(document) => (document, diagnostics),
        Err(error) => {
            for item in &error.diagnostics {
                let message = item.message.clone().unwrap_or_else(|| "invalid KDL".to_owned());
                let diagnostic = Diagnostic::error(Code::KdlSyntax, span_of(file, item.span), message)
                    .label(item.label.clone().unwrap_or_else(|| "here".to_owned()))
                    .maybe_help(item.help.clone());
                diagnostics.push(diagnostic);
            }
            if error.diagnostics.is_empty() {
                diagnostics.push(Diagnostic::error(Code::KdlSyntax, Span::new(file, 0, 0), "the file is not valid KDL 2.0"));
            }
            (KdlDocument::new(), diagnostics)
        }
    }
}
