//! The probe's diagnostics: lang's [`Diagnostic`] with the stable probe codes, detached from
//! any source span (they are about system files), and their plain-text rendering for stderr.
//! The probe never fails on what it reads; it says here what it could not read.

use placid_lang::diag::{Code, Diagnostic, Diagnostics, Severity};
use placid_lang::span::Span;

use crate::root::ReadError;

/// A file that could not be read.
pub fn unreadable(error: &ReadError) -> Diagnostic {
    Diagnostic::warning(Code::ProbeUnreadable, Span::DETACHED, format!("cannot read {}: {}", error.path, error.reason))
        .help("the fields this file feeds are left out; run the probe as a user that can read it")
}

/// A file whose content the probe does not understand.
pub fn garbled(path: &str, what: &str) -> Diagnostic {
    Diagnostic::warning(Code::ProbeUnreadable, Span::DETACHED, format!("{path}: {what}"))
        .help("the fields this file feeds are left out; check the kernel version or the captured tree")
}

/// Inventory fields the probe could not determine.
pub fn fields_missing(subject: &str, fields: &[&str], why: &str) -> Diagnostic {
    Diagnostic::warning(Code::ProbeFieldMissing, Span::DETACHED, format!("{subject}: no {} ({why})", fields.join(", ")))
        .help("install the NVIDIA driver with libnvidia-ml.so.1 for the full GPU inventory, or declare these fields by hand")
}

/// Renders diagnostics as plain lines for stderr (the probe has no source files to show).
pub fn render(diagnostics: &Diagnostics) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics.iter() {
        let severity = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!("{severity}[{}]: {}\n", diagnostic.code.id(), diagnostic.message));
        if let Some(help) = &diagnostic.help {
            out.push_str(&format!("  help: {help}\n"));
        }
    }
    out
}
