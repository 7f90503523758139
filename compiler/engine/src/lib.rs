//! The executable meaning of a placid policy (docs/semantics.md): what happens to a job,
//! written once, behind `placid test`, `placid simulate` and the what-if diff. Pure: no IO,
//! no printing.
//!
//! The engine reads the lowered [`placid_lang::model::Model`] (not the checker's `Checked`:
//! the checker asks the engine whether stages and tests can ever be admitted). Quotas come
//! from `model/shares.rs`, the numbers the Kueue queues carry. Scores reach it through the
//! [`rank::Ranker`] trait, so the Wasm host stays out of this crate.

#![deny(missing_docs)]

pub mod cluster;
pub mod coverage;
pub mod event;
pub mod job;
pub mod place;
pub mod plan;
pub mod policy_test;
pub mod promotion;
pub mod quota;
pub mod rank;
pub mod routing;
pub mod sim;
pub mod synthetic;
pub mod telemetry;

pub use event::{Event, EventKind, Hold, Reject};
pub use job::{Job, JobId, Seconds};
pub use rank::{Candidate, Neutral, Ranker};
pub use sim::{JobState, Simulation, simulate};
