//! The placid policy language: KDL sources to the checked [`model::Model`], with diagnostics.
//!
//! Invariants: parsing and lowering never fail and never panic; they return the model plus
//! every diagnostic. This crate does no IO (sources arrive through [`source::World`]) and
//! knows nothing of Slurm, Kubernetes, Wasm, git or the command line.

#![deny(missing_docs)]

pub mod address;
pub mod checked;
pub mod codes;
pub mod cpulist;
pub mod diag;
pub mod escape;
pub mod expr;
pub mod format;
pub mod inventory_json;
pub mod labels;
pub mod lower;
pub mod model;
pub mod name;
pub mod print;
pub mod source;
pub mod span;
pub mod suggest;
pub mod syntax;
pub mod telemetry;
pub mod units;

pub use lower::{Compilation, load};
