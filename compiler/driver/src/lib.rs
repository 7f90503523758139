//! placid's driver: everything between the files of a project and the pure crates. It reads
//! projects through [`world::FsWorld`], runs load -> check -> emit ([`build::compile`]),
//! writes output trees atomically with their manifest ([`output`]), lays a broken example over its
//! example ([`overlay`]), merges probed inventories, runs policy tests' workloads through the
//! build's admission policies ([`test_admission`]) and renders
//! diagnostics ([`render`]: miette for people, JSON for machines).
//!
//! Invariant: the driver does IO and returns values; it never prints and never picks an
//! exit code (that is the CLI's job).

pub mod build;
pub mod merge;
pub mod output;
pub mod overlay;
pub mod render;
pub mod test_admission;
mod unchanged;
pub mod untrusted;
mod up_to_date;
pub mod world;
