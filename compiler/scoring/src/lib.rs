//! The wasmtime host of untrusted scoring plugins, and what `placid score`, `placid explain
//! --wat`, the extender (`placid-extender`) and the openb simulator (`placid-openb`) share:
//! finding a score's plugin in a checked model, flattening nodes into ABI rows (from the
//! inventory or from Kubernetes Node objects) and job parameters into the parameter block, and
//! ranking the results.
//!
//! Invariant: rows and parameters are built from the plugin's own `placid.meta`, never from
//! the policy, so the same code hosts any ABI v1 module; racks and NVLink domains of one batch
//! are interned through one [`Codes`] table shared by rows and parameters. This crate reads no
//! files and prints nothing: it gets a checked model and returns values or diagnostics. It is
//! the only crate that links wasmtime; the HTTP stack is the extender's.

pub mod host;
pub mod job;
pub mod kube;
pub mod rank;
pub mod stage_rank;

use std::collections::HashMap;

use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::expr::{Category, Interner};
use placid_lang::model::Model;
use placid_lang::span::Span;
use placid_lang::suggest;

use crate::host::{HostError, Limits, Plugin};

/// Interned codes of racks and NVLink domains for one batch.
#[derive(Clone, Default)]
pub struct Codes {
    codes: HashMap<(Category, String), f64>,
}

impl Interner for Codes {
    fn code(&mut self, category: Category, name: &str) -> f64 {
        let next = self.codes.len() as f64;
        *self.codes.entry((category, name.to_owned())).or_insert(next)
    }
}

/// A checked project and one of its scores, compiled and loaded.
pub struct Loaded {
    /// The checked model.
    pub model: Checked,
    /// The emitted module.
    pub bytes: Vec<u8>,
    /// The module, loaded by the host.
    pub plugin: Plugin,
}

/// Why a score's plugin could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// No score of that name, none at all, or several and none chosen: the command was asked
    /// for something the project does not have.
    NoScore(Diagnostic),
    /// The score's module could not be emitted or was refused by the host.
    Module(Diagnostics),
}

impl From<HostError> for Diagnostic {
    /// A refused module or a failed call, at no span: it concerns the plugin, not a source line.
    fn from(error: HostError) -> Diagnostic {
        let help = match error.code {
            Code::PluginRefused => "the module is not a placid ABI v1 plugin this host accepts (docs/wasm-abi.md)",
            _ => "the plugin failed on this batch; `placid explain --wat` shows its code",
        };
        Diagnostic::error(error.code, Span::DETACHED, error.message).help(help)
    }
}

/// Emits and loads the module of score `name` of a checked `model` (the only score when
/// `name` is `None`).
pub fn load(model: Checked, name: Option<&str>) -> Result<Loaded, LoadError> {
    let names: Vec<&str> = model.scores.iter().map(|score| score.name.as_str()).collect();
    let no_score =
        |message: String, help: String| LoadError::NoScore(Diagnostic::error(Code::ScoreNotFound, Span::DETACHED, message).help(help));
    let score = match name {
        Some(name) => model.scores.iter().find(|score| score.name.as_str() == name).ok_or_else(|| {
            let help =
                suggest::help_for(name, names.iter().copied()).unwrap_or_else(|| format!("the project's scores: {}", names.join(", ")));
            no_score(format!("the project has no score `{name}`"), help)
        })?,
        None => match model.scores.as_slice() {
            [only] => only,
            [] => return Err(no_score("the project declares no score".to_owned(), "add a `score` block (docs/language.md)".to_owned())),
            _ => {
                return Err(no_score(
                    "the project has several scores".to_owned(),
                    format!("choose one with --score ({})", names.join(", ")),
                ));
            }
        },
    };
    let (bytes, plugin) = compile(&model, score)?;
    Ok(Loaded { model, bytes, plugin })
}

/// Emits the module of `score` and loads it in the host.
pub fn compile(model: &Checked, score: &placid_lang::model::Score) -> Result<(Vec<u8>, Plugin), LoadError> {
    let bytes = placid_targets::wasm::module(model, score).map_err(LoadError::Module)?;
    let plugin = Plugin::load(&bytes, Limits::DEFAULT).map_err(|error| refused_at(score, error))?;
    Ok((bytes, plugin))
}

/// A host refusal of `score`'s module: the module is placid's own, so the refusal points at
/// the score that produced it.
pub fn refused_at(score: &placid_lang::model::Score, error: HostError) -> LoadError {
    let mut diagnostic = Diagnostic::from(error);
    diagnostic.primary.span = score.span;
    let mut diagnostics = Diagnostics::new();
    diagnostics.push(diagnostic);
    LoadError::Module(diagnostics)
}

/// The rows of every inventory node, in model order, for the plugin's layout.
pub fn inventory_rows(model: &Model, plugin: &Plugin, codes: &mut Codes) -> Vec<f64> {
    let features = plugin.meta().node_features();
    let mut rows = Vec::with_capacity(model.nodes.len() * features.len());
    for node in &model.nodes {
        rows.extend(features.iter().map(|feature| feature.inventory_value(model, node, codes)));
    }
    rows
}
