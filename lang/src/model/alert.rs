//! Alerts (`alert`): a condition on a metric and how urgent it is when it fires.

use crate::model::Condition;
use crate::name::Name;
use crate::span::Span;

/// How urgent an alert is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlertSeverity {
    /// Informational.
    Info,
    /// Needs attention.
    Warning,
    /// Pages someone.
    Critical,
}

impl AlertSeverity {
    /// The keyword in policies and alert labels.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertSeverity::Info => "info",
            AlertSeverity::Warning => "warning",
            AlertSeverity::Critical => "critical",
        }
    }
}

/// An alert on a metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    /// The alert's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// When it fires.
    pub condition: Condition,
    /// How urgent it is.
    pub severity: AlertSeverity,
}
