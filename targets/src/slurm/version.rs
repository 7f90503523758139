//! What differs between Slurm releases, in one table, so no emitter compares version numbers
//! itself. Each difference here is fatal on the wrong release (slurmctld refuses the key or
//! the plugin), which is why it is data rather than scattered `if`s.

use placid_lang::model::SlurmVersion;

/// How NVLink domains reach the topology plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyLayout {
    /// `topology/tree` in topology.conf: one leaf switch per NVLink domain under rack
    /// switches (22.05 to 23.11; `topology/block` before 24.05 used `BlockLevels`, which
    /// 24.05 removed, so placid does not emit it).
    Tree,
    /// `topology/block` in topology.conf with `BlockName` and `BlockSizes` (24.05, 24.11).
    Block,
    /// topology.yaml with a block topology (25.05+: topology.conf is ignored when it exists,
    /// and `TopologyPlugin` is replaced by the file).
    Yaml,
}

/// The release-specific spellings placid needs.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// The release.
    pub version: SlurmVersion,
    /// How the topology is written.
    pub topology: TopologyLayout,
    /// The plugin that means "no topology": renamed twice upstream.
    pub flat_topology_plugin: &'static str,
}

impl Profile {
    /// The profile of `version`.
    pub fn of(version: SlurmVersion) -> Profile {
        let topology = if version.at_least(25, 5) {
            TopologyLayout::Yaml
        } else if version.at_least(24, 5) {
            TopologyLayout::Block
        } else {
            TopologyLayout::Tree
        };
        let flat_topology_plugin = if version.at_least(25, 5) {
            "topology/flat"
        } else if version.at_least(23, 11) {
            "topology/default"
        } else {
            "topology/none"
        };
        Profile { version, topology, flat_topology_plugin }
    }
}
