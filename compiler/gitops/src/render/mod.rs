//! Rendering a [`DiffReport`]: one module per format. Renderers lay out what the report
//! computed and decide nothing; the text of every change comes from the report.

pub mod json;
pub mod markdown;
pub mod terminal;

use crate::model_diff::{FieldChange, Guarantee};

/// The output format of `placid diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffFormat {
    /// Text for a terminal (coloured when stdout is one).
    Text,
    /// A pull-request comment.
    Markdown,
    /// One JSON document.
    Json,
}

impl placid_driver::render::Choice for DiffFormat {
    const ALL: &'static [DiffFormat] = &[DiffFormat::Text, DiffFormat::Markdown, DiffFormat::Json];

    fn name(self) -> &'static str {
        match self {
            DiffFormat::Text => "text",
            DiffFormat::Markdown => "markdown",
            DiffFormat::Json => "json",
        }
    }
}

/// `before -> after` of a field, with `(none)` for an absent side.
fn field_values(field: &FieldChange) -> (String, String) {
    let show = |value: &Option<String>| value.clone().unwrap_or_else(|| "(none)".into());
    (show(&field.before), show(&field.after))
}

/// A team's share: `40 (40%, 19.2 GPUs)`, or `-` where the team does not exist.
fn share_text(side: &Option<crate::model_diff::TeamShare>) -> String {
    side.map_or_else(|| "-".to_owned(), |share| format!("{} ({}%, {} GPUs)", share.weight, share.percent, share.gpus))
}

/// A guaranteed-GPU cell: `4`, `4 -> 6 (+2)`, `- -> 3` for a new team or pool, followed by
/// `, borrow 12 -> 10` when the borrowing limit changes.
fn guarantee_cell(cell: &Guarantee, arrow: &str) -> String {
    let change = |before: Option<u32>, after: Option<u32>| match (before, after) {
        (Some(before), Some(after)) if before == after => before.to_string(),
        (Some(before), Some(after)) => format!("{before} {arrow} {after} ({:+})", i64::from(after) - i64::from(before)),
        (before, after) => {
            let show = |value: Option<u32>| value.map_or_else(|| "-".to_owned(), |gpus| gpus.to_string());
            format!("{} {arrow} {}", show(before), show(after))
        }
    };
    let guaranteed = change(cell.before, cell.after);
    if cell.borrow_before == cell.borrow_after {
        return guaranteed;
    }
    format!("{guaranteed}, borrow {}", change(cell.borrow_before, cell.borrow_after))
}
