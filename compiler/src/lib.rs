//! The placid compiler: the checking passes over the model, the build driver, rendering of
//! diagnostics and the command line. This is the only crate that does IO.

pub mod audit;
pub mod build;
pub mod check;
pub mod cli;
pub mod diff;
pub mod drift;
pub mod extender;
pub mod merge;
pub mod render;
pub mod scoring;
pub mod world;
