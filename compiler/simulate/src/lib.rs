//! Replays a trace of jobs through the engine and measures what the policy does: waits per
//! tier and team, preemptions and lost GPU-hours, NVLink GPU-hours, cost against budget,
//! allocation and fragmentation over time (docs/simulate.md). Pure: the caller reads the
//! trace and writes the report.

pub mod html;
pub mod measure;
pub mod outcome;
pub mod plot;
pub mod replay;
pub mod stats;
pub mod text;
pub mod trace;

#[cfg(test)]
mod fixture;
