//! The order placement tries units of one kind (docs/semantics.md §5.4): the one the engine
//! breaks ties between units by, and the one the Slurm target lists a class constraint's
//! features in, so that Slurm, which takes the first feature that fits, follows it too. The
//! node order is [`Node::placement_price`](super::Node::placement_price), written as Slurm's node `Weight`.

use super::{Model, NodeId};

impl Model {
    /// The units of one kind (`unit` gives a node's, by id: its NVLink domain, rack or chassis) in
    /// the order a gang tries them: cheapest first, by the lowest [`Node::placement_price`](super::Node::placement_price) of
    /// a node in the unit, then in inventory order of each unit's first node.
    pub fn units_cheapest_first<K: PartialEq>(&self, unit: impl Fn(NodeId) -> Option<K>) -> Vec<K> {
        let mut units: Vec<(K, i64, usize)> = Vec::new();
        for (index, node) in self.nodes.iter().enumerate() {
            let Some(key) = unit(NodeId::from_index(index)) else { continue };
            match units.iter_mut().find(|(known, ..)| *known == key) {
                Some((_, price, _)) => *price = (*price).min(node.placement_price()),
                None => units.push((key, node.placement_price(), index)),
            }
        }
        units.sort_by_key(|(_, price, first)| (*price, *first));
        units.into_iter().map(|(key, ..)| key).collect()
    }
}
