//! The Wasm target: each `score` block becomes `wasm/<score>.wasm`, a sandboxed module
//! implementing placid ABI v1 (docs/wasm-abi.md); plus the native evaluator that is its oracle.
//! The host that runs modules lives in `placid-scoring`, so that this crate stays pure.
//!
//! Invariants: emission is a pure function of the model (same input, same bytes); every
//! emitted module validates; the native evaluator and the module agree bit for bit.

pub mod abi;
mod codegen;
pub mod meta;
pub mod native;
pub mod program;
pub mod sources;

use placid_lang::checked::Checked;
use placid_lang::diag::Diagnostics;
use placid_lang::model::Score;

use crate::Artifact;

pub use meta::Meta;
pub use program::Program;

/// Emits the wasm artifacts of `model`: one module per score.
pub fn emit(model: &Checked) -> Result<Vec<Artifact>, Diagnostics> {
    let mut artifacts = Vec::new();
    let mut diagnostics = Diagnostics::new();
    for score in &model.scores {
        match module(model, score) {
            Ok(bytes) => artifacts.push(Artifact { path: format!("wasm/{}.wasm", score.name), bytes }),
            Err(errors) => diagnostics.extend(errors),
        }
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    artifacts.sort();
    Ok(artifacts)
}

/// The module of one score.
pub fn module(model: &Checked, score: &Score) -> Result<Vec<u8>, Diagnostics> {
    let program = Program::new(score)?;
    let meta = Meta::new(model, &program);
    codegen::emit(&program, &meta.to_bytes())
}
