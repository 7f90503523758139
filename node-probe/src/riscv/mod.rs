//! riscv64 CPUs from /proc/cpuinfo: harts, the node's ISA (the `isa` line, which the kernel
//! makes the lowest common denominator of all harts) and per-hart ISAs (`hart isa`, kernel
//! 6.12+), vendor/arch/impl ids, `uarch`, the vector extension and profile verdicts.
//!
//! Invariant: the extension set that profiles are judged on never counts a T-Head `v`
//! (RVV 0.7.1) as RVV 1.0.

pub mod isa;
pub mod profile;

use std::collections::BTreeSet;

use placid_lang::diag::Diagnostics;
use placid_lang::model::{ProfileVerdict, VectorExt};

use crate::cpuinfo::{Record, processors};
use crate::notes;
use isa::Isa;

/// T-Head's JEDEC vendor id; with marchid 0 it marks C906/C910/C920v1, whose `v` is RVV 0.7.1
/// (the C908, marchid 0x8000000009140d00, implements RVV 1.0).
const THEAD_VENDOR_ID: u64 = 0x5b7;

/// One hart as /proc/cpuinfo lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hart {
    /// Logical CPU number (what sysfs `cpuN` uses).
    pub processor: u32,
    /// Hart id from the device tree; not equal to `processor` in general.
    pub hart_id: Option<u32>,
    /// The per-hart ISA (`hart isa`), when the kernel prints it.
    pub isa: Option<Isa>,
}

/// What the probe knows about a riscv64 CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RiscvCpu {
    /// Harts, sorted by processor number.
    pub harts: Vec<Hart>,
    /// The node's ISA (the `isa` line).
    pub isa: Option<Isa>,
    /// `uarch` (device-tree `compatible` of the cpu node), when printed.
    pub uarch: Option<String>,
    /// `mvendorid`, when printed.
    pub vendor_id: Option<u64>,
    /// `marchid`, when printed.
    pub arch_id: Option<u64>,
    /// `mimpid`, when printed.
    pub impl_id: Option<u64>,
    /// `mmu` (`sv39`, `sv48`, ...).
    pub mmu: Option<String>,
    /// The vector extension.
    pub vector: VectorExt,
    /// Extensions every hart has, expanded by implication, with a T-Head `v` taken out.
    pub extensions: BTreeSet<String>,
    /// Profile verdicts.
    pub profiles: Vec<ProfileVerdict>,
}

/// Reads the riscv64 fields of /proc/cpuinfo.
pub fn read(records: &[Record], diagnostics: &mut Diagnostics) -> RiscvCpu {
    let mut parse_isa = |text: &str, what: &str| match Isa::parse(text) {
        Ok(isa) => Some(isa),
        Err(error) => {
            diagnostics.push(notes::garbled("/proc/cpuinfo", &format!("{what}: {error}")));
            None
        }
    };
    let mut harts = Vec::new();
    let mut node_isa = None;
    for record in processors(records) {
        let processor = record.get("processor").and_then(|value| value.parse().ok()).unwrap_or_default();
        if node_isa.is_none()
            && let Some(text) = record.get("isa")
        {
            node_isa = parse_isa(text, "isa");
        }
        let isa = record.get("hart isa").and_then(|text| parse_isa(text, "hart isa"));
        harts.push(Hart { processor, hart_id: record.get("hart").and_then(|value| value.parse().ok()), isa });
    }
    harts.sort_by_key(|hart| hart.processor);
    harts.dedup_by_key(|hart| hart.processor);
    let first = processors(records).next();
    let field = |key: &str| first.and_then(|record| record.get(key)).map(str::to_owned);
    let hex = |key: &str| field(key).and_then(|text| u64::from_str_radix(text.trim_start_matches("0x"), 16).ok());
    let (vendor_id, arch_id, impl_id) = (hex("mvendorid"), hex("marchid"), hex("mimpid"));
    // T-Head's 5.10 vendor kernel prints no ids but says `cpu-vector: 0.7.1` outright.
    let vendor_says_pre_ratification = field("cpu-vector").is_some_and(|version| version.starts_with("0."));
    let thead_legacy_vector = (vendor_id == Some(THEAD_VENDOR_ID) && arch_id == Some(0)) || vendor_says_pre_ratification;

    // Node capability: the extensions every hart reports. `hart isa` may list more than
    // the `isa` line; without it every hart counts as having the `isa` line.
    let hart_sets: Vec<BTreeSet<String>> =
        harts.iter().filter_map(|hart| hart.isa.as_ref().map(|isa| effective(isa, thead_legacy_vector))).collect();
    let mut extensions = match (&node_isa, hart_sets.len() == harts.len() && !harts.is_empty()) {
        (_, true) => hart_sets.iter().skip(1).fold(hart_sets[0].clone(), |common, set| common.intersection(set).cloned().collect()),
        (Some(isa), false) => effective(isa, thead_legacy_vector),
        (None, false) => BTreeSet::new(),
    };
    let names_v = node_isa.as_ref().is_some_and(|isa| isa.has_letter("v")) || extensions.contains("v");
    let names_thead = node_isa.as_ref().is_some_and(|isa| isa.has_multi("xtheadvector")) || extensions.contains("xtheadvector");
    let vector = if names_thead || (thead_legacy_vector && node_isa.as_ref().is_some_and(|isa| isa.has_letter("v"))) {
        VectorExt::XTheadVector
    } else if names_v {
        VectorExt::Rvv1
    } else {
        VectorExt::None
    };
    if vector == VectorExt::XTheadVector {
        extensions.insert("xtheadvector".to_owned());
    }
    let profiles = if node_isa.is_some() || !hart_sets.is_empty() { profile::verdicts(&extensions) } else { Vec::new() };
    RiscvCpu { harts, isa: node_isa, uarch: field("uarch"), vendor_id, arch_id, impl_id, mmu: field("mmu"), vector, extensions, profiles }
}

/// The expanded extensions of one ISA string; a T-Head `v` is dropped before expansion so
/// that neither `v` nor the `zve*` it would imply count.
fn effective(isa: &Isa, thead_legacy_vector: bool) -> BTreeSet<String> {
    if !thead_legacy_vector {
        return isa.expanded();
    }
    let mut without_v = isa.clone();
    without_v.letters.retain(|letter| letter.name != "v");
    without_v.expanded()
}
