//! The k8s target (not yet implemented: emits nothing).

use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;

use crate::Artifact;

/// Emits the k8s artifacts of `model`.
pub fn emit(model: &Model) -> Result<Vec<Artifact>, Diagnostics> {
    let _ = model;
    Ok(Vec::new())
}
