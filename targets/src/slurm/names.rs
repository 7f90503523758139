//! The names placid gives policy elements inside Slurm. One function per kind of name, so
//! slurm.conf, topology, sacctmgr, Lua and sbatch output always agree on a spelling.
//!
//! Invariants: sacctmgr lowercases QOS and account names, so those are lowercased here (the
//! validator rejects names that collide once lowercased). Features and switch names carry a
//! prefix per kind (`nvlink_`, `rack_`, ...), so a rack can never be mistaken for a domain
//! with the same name. Every input is a validated `Name`, so no character here needs escaping.

use placid_lang::model::{Arch, CapacityKind, Class, CostCenter, Domain, Node, Pool, Rack, Team, Tier};
use placid_lang::name::Name;

/// The QOS of a tier (with accounting) or the partition of a tier (without).
pub fn qos(tier: &Tier) -> String {
    tier.name.as_str().to_ascii_lowercase()
}

/// The account of a team.
pub fn team_account(team: &Team) -> String {
    team.account.as_str().to_ascii_lowercase()
}

/// The account of a cost center (the parent of its teams' accounts).
pub fn cost_center_account(cost_center: &CostCenter) -> String {
    cost_center.name.as_str().to_ascii_lowercase()
}

/// An administrators' account as sacctmgr stores it (lowercased, like team accounts).
pub fn admin_account(account: &Name) -> String {
    account.as_str().to_ascii_lowercase()
}

/// The partition of a pool.
pub fn partition(pool: &Pool) -> String {
    pool.name.as_str().to_owned()
}

/// The node feature and block/switch name of an NVLink domain.
pub fn domain_feature(domain: &Domain) -> String {
    format!("nvlink_{}", domain.name)
}

/// The node feature of an architecture (the `uname -m` name).
pub fn arch_feature(arch: Arch) -> String {
    arch.as_str().to_owned()
}

/// The node feature and switch name of a rack.
pub fn rack_feature(rack: &Rack) -> String {
    format!("rack_{}", rack.name)
}

/// The node feature of a chassis.
pub fn chassis_feature(chassis: &Name) -> String {
    format!("chassis_{chassis}")
}

/// The node feature of a capacity kind.
pub fn capacity_feature(capacity: CapacityKind) -> String {
    format!("capacity_{}", capacity.as_str())
}

/// The node feature of a node whose GPUs have at least `lanes` NVLink links to every peer
/// (`Node::nvlink_lanes`), emitted for each `lanes` some class asks for, so a class's
/// constraint names one feature.
pub fn lanes_feature(lanes: u32) -> String {
    format!("lanes_{lanes}")
}

/// The node feature marking membership of a pool (used when pools are not partitions).
pub fn pool_feature(pool: &Pool) -> String {
    format!("pool_{}", pool.name)
}

/// The pseudo-feature a job names to ask for a class (`--constraint=class_model-parallel`);
/// job_submit.lua replaces it with the class's real constraint.
pub fn class_feature(class: &Class) -> String {
    format!("class_{}", class.name)
}

/// The leaf switch or block of a node outside every NVLink domain.
pub fn node_leaf(node: &Node) -> String {
    format!("node_{}", node.name)
}

/// The `index`th (from 1) block of nodes outside every NVLink domain, where a 24.x block
/// topology must group them to reach the base block size.
pub fn node_group(index: usize) -> String {
    format!("nonvlink_{index}")
}

/// The top switch joining every rack (no `_`, so it cannot clash with a prefixed name).
pub const TOP_SWITCH: &str = "cluster";
