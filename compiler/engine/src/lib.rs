//! The executable meaning of a placid policy (docs/semantics.md): what happens to a job,
//! written once, behind `placid test`, `placid simulate` and the what-if diff. Pure: no IO,
//! no printing.

pub mod openb;
