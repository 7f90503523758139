//! What `placid score`, `placid explain --wat` and `placid extender` share: finding a score's
//! plugin in a project, flattening nodes into ABI rows (from the inventory or from Kubernetes
//! Node objects) and job parameters into the parameter block, and ranking the results.
//!
//! Invariant: rows and parameters are built from the plugin's own `placid.meta`, never from
//! the policy, so the same code hosts any ABI v1 module; racks and NVLink domains of one batch
//! are interned through one [`Codes`] table shared by rows and parameters.

pub mod job;
pub mod kube;
pub mod rank;

use std::collections::HashMap;

use placid_lang::expr::{Category, Interner};
use placid_lang::model::Model;
use placid_lang::source::Sources;
use placid_lang::suggest;
use placid_targets::wasm::host::{Limits, Plugin};

use crate::build::{Selection, compile};
use crate::cli::{Exit, Output, open, report};
use crate::render::Format;

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
    pub model: Model,
    /// The emitted module.
    pub bytes: Vec<u8>,
    /// The module, loaded by the host.
    pub plugin: Plugin,
}

/// Loads the project at `dir`, checks it and emits and loads the module of score `name`
/// (the only score when `name` is `None`). Prints diagnostics to `out` and returns the exit
/// code on failure.
pub fn load(out: &mut Output, dir: &std::path::Path, name: Option<&str>, format: Format) -> Result<Loaded, Exit> {
    let world = open(out, dir)?;
    let build = compile(&world, &Selection { only: Vec::new() });
    report_errors(out, format, &build.sources, &build.diagnostics)?;
    let model = build.model;
    let names: Vec<&str> = model.scores.iter().map(|score| score.name.as_str()).collect();
    let score = match name {
        Some(name) => model.scores.iter().find(|score| score.name.as_str() == name).ok_or_else(|| {
            let help = suggest::help_for(name, names.iter().copied()).map(|help| format!(" ({help})")).unwrap_or_default();
            out.errln(format_args!("error: the project has no score `{name}`{help}"));
            Exit::Usage
        })?,
        None => match model.scores.as_slice() {
            [only] => only,
            [] => {
                out.errln("error: the project declares no score");
                return Err(Exit::Usage);
            }
            _ => {
                out.errln(format_args!("error: the project has several scores; choose one with --score ({})", names.join(", ")));
                return Err(Exit::Usage);
            }
        },
    };
    let bytes = placid_targets::wasm::module(&model, score).map_err(|diagnostics| {
        report(out, format, &build.sources, &diagnostics);
        Exit::Failure
    })?;
    let plugin = Plugin::load(&bytes, Limits::DEFAULT).map_err(|error| {
        out.errln(format_args!("error[{}]: {error}", error.code.id()));
        Exit::Failure
    })?;
    Ok(Loaded { model, bytes, plugin })
}

fn report_errors(out: &mut Output, format: Format, sources: &Sources, diagnostics: &placid_lang::diag::Diagnostics) -> Result<(), Exit> {
    if diagnostics.has_errors() {
        report(out, format, sources, diagnostics);
        return Err(Exit::Failure);
    }
    Ok(())
}

/// The rows of every inventory node, in model order, for the plugin's layout.
pub fn inventory_rows(model: &Model, plugin: &Plugin, codes: &mut Codes) -> Vec<f64> {
    let features = plugin.meta().node_features().unwrap_or_default();
    let mut rows = Vec::with_capacity(model.nodes.len() * features.len());
    for node in &model.nodes {
        rows.extend(features.iter().map(|feature| feature.inventory_value(model, node, codes)));
    }
    rows
}
