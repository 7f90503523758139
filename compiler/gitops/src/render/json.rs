//! The JSON report: the [`DiffReport`] serialised as is, for bots and dashboards.

use crate::report::DiffReport;

/// The report as pretty-printed JSON with a trailing newline.
pub fn render(report: &DiffReport) -> String {
    let mut text = placid_driver::render::json_text(&serde_json::json!({
        "headline": report.headline(),
        "report": report,
    }));
    text.push('\n');
    text
}
