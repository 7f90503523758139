//! Diagnostics: one value type for every phase. A diagnostic has a stable code, a severity,
//! one short message, a primary label, secondary labels and a help line. Rules only build
//! these values; rendering (miette for people, JSON for machines) happens in the compiler.

use crate::span::Span;

pub use crate::codes::Code;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; does not fail a check.
    Warning,
    /// The policy is wrong; `check` fails and nothing is built.
    Error,
}

/// A span with an optional label text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there, in a few words.
    pub message: Option<String>,
}

/// One problem found in a policy or inventory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code (`placid::E0xx`).
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// One short sentence, without a trailing period.
    pub message: String,
    /// The narrowest span that explains the problem.
    pub primary: Label,
    /// Other places that take part (the first declaration of a duplicate, the pool of a stage).
    pub secondary: Vec<Label>,
    /// How to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error with `code` at `span`.
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            primary: Label { span, message: None },
            secondary: Vec::new(),
            help: None,
        }
    }

    /// A warning with `code` at `span`.
    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, span, message) }
    }

    /// Sets the primary label's text.
    pub fn label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary.message = Some(message.into());
        self
    }

    /// Adds a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label { span, message: Some(message.into()) });
        self
    }

    /// Sets the help line.
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Sets the help line when there is one.
    pub fn maybe_help(mut self, help: Option<String>) -> Diagnostic {
        if help.is_some() {
            self.help = help;
        }
        self
    }
}

/// A collection of diagnostics; phases push into one and return it with their result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// Adds one diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    /// Adds all of another collection.
    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|diagnostic| diagnostic.severity == Severity::Error)
    }

    /// Number of errors.
    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|diagnostic| diagnostic.severity == Severity::Error).count()
    }

    /// Whether there are none at all.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The diagnostics, in the order they were found.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    /// Sorts by file, then position, then code, so output does not depend on pass order.
    pub fn sort(&mut self) {
        self.items
            .sort_by(|left, right| (left.primary.span, left.code, &left.message).cmp(&(right.primary.span, right.code, &right.message)));
        self.items.dedup();
    }

    /// Consumes the collection.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(diagnostic: Diagnostic) -> Diagnostics {
        Diagnostics { items: vec![diagnostic] }
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        self.items.extend(iter);
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}
