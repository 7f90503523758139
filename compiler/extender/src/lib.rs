//! `placid extender`: a kube-scheduler extender serving one score plugin over HTTP, with the
//! `filter` and `prioritize` verbs, in both `nodeCacheCapable` modes.
//!
//! Invariants: a request never crashes the server and no client can hold it — connections,
//! request heads, bodies, node lists, requests worked on and time per request are all
//! bounded, and a request over a bound is answered at once (413, 503, or a closed
//! connection) instead of queued; bodies are parsed into typed structs; plugin traps become an `Error` (filter: the
//! pod is retried, we never fail open on hard constraints) or all-zero priorities
//! (prioritize); each request borrows one reusable wasmtime instance from a pool bounded by
//! the concurrency limit.

pub mod client;
pub mod live;
mod process;
pub mod server;
pub mod telemetry;
pub mod wire;

pub use process::run;
pub use server::{Extender, Settings, serve};
