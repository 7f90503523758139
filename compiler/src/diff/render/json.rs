//! The JSON report: the [`DiffReport`] serialised as is, for bots and dashboards.

use crate::diff::report::DiffReport;

/// The report as pretty-printed JSON with a trailing newline.
pub fn render(report: &DiffReport) -> String {
    let mut text = serde_json::to_string_pretty(&serde_json::json!({
        "headline": report.headline(),
        "report": report,
    }))
    .unwrap_or_else(|error| format!("{{\"error\": \"cannot serialise the report: {error}\"}}"));
    text.push('\n');
    text
}
