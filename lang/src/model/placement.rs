//! The order placement tries units of one kind (docs/semantics.md §5.4): the one the engine
//! breaks ties between units by, and the one the Slurm target lists a class constraint's
//! features and a pool's price partitions in, so that Slurm, which takes the first feature
//! (and the first partition) that fits, follows it too. The node order is
//! [`Node::placement_price`](super::Node::placement_price), written as Slurm's node `Weight`.

use super::{Class, Model, NodeId, NvlinkNeed};

impl Class {
    /// Whether placement tries NVLink nodes first for this class (§5.3.1): it prefers NVLink
    /// without requiring it.
    pub fn prefers_nvlink(&self) -> bool {
        self.nvlink == NvlinkNeed::Preferred
    }
}

impl Model {
    /// The units of one kind (`unit` gives a node's, by id: its NVLink domain, rack or chassis) in
    /// the order a gang tries them: cheapest first, by the lowest [`Node::placement_price`](super::Node::placement_price) of
    /// a node in the unit, then in inventory order of each unit's first node.
    pub fn units_cheapest_first<K: Eq + std::hash::Hash>(&self, unit: impl Fn(NodeId) -> Option<K>) -> Vec<K> {
        // Keyed, not searched: an inventory at its limit holds thousands of units.
        let mut units: std::collections::HashMap<K, (i64, usize)> = std::collections::HashMap::new();
        for (index, node) in self.nodes.iter().enumerate() {
            let Some(key) = unit(NodeId::from_index(index)) else { continue };
            let price = node.placement_price();
            units.entry(key).and_modify(|(lowest, _)| *lowest = (*lowest).min(price)).or_insert((price, index));
        }
        // Each unit's first node is its own, so the order is total.
        let mut units: Vec<(K, (i64, usize))> = units.into_iter().collect();
        units.sort_by_key(|(_, order)| *order);
        units.into_iter().map(|(key, _)| key).collect()
    }

    /// `units` (in the order placement tries them otherwise) with, for a class that prefers
    /// NVLink, the units holding an NVLink node first: the engine ranks NVLink nodes first for
    /// such a class (§5.3.1), so every list a target orders for Slurm's first-fit (the units of
    /// a class constraint, the price partitions of a stage) puts them first too. The sort is
    /// stable: each group keeps the given order.
    pub fn nvlink_preferred_first<K>(&self, class: Option<&Class>, mut units: Vec<K>, holds: impl Fn(NodeId, &K) -> bool) -> Vec<K> {
        if class.is_some_and(Class::prefers_nvlink) {
            // Each unit is looked at once, against the NVLink nodes only: an inventory at its
            // limit holds thousands of units and tens of thousands of nodes.
            let nvlink: Vec<NodeId> =
                self.nodes.iter().enumerate().filter(|(_, node)| node.has_nvlink()).map(|(index, _)| NodeId::from_index(index)).collect();
            units.sort_by_cached_key(|unit| !nvlink.iter().any(|node| holds(*node, unit)));
        }
        units
    }
}
