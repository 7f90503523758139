//! The probe over every real riscv64 capture in `../shared/fixtures/riscv64/`: harts, ISA
//! extensions, vector extension, NUMA layout and RVA22/RVA23 verdicts, per board. A capture
//! without an expectation here fails the test, so new captures get described.

mod common;

use std::path::Path;

use placid_lang::model::{Arch, VectorExt, Verdict};
use placid_probe::root::Root;
use placid_probe::site::Site;
use placid_probe::{Probe, probe};

use common::RecordedNvml;

struct Expected {
    board: &'static str,
    harts: u32,
    hart_ids: &'static [u32],
    has: &'static [&'static str],
    lacks: &'static [&'static str],
    vector: VectorExt,
    numa: &'static [&'static str],
    rva22_missing: &'static [&'static str],
    rva23_missing_includes: &'static [&'static str],
    model: Option<&'static str>,
    board_label: Option<&'static str>,
}

const EXPECTED: &[Expected] = &[
    Expected {
        board: "bananapi-f3-spacemit-k1",
        harts: 8,
        hart_ids: &[0, 1, 2, 3, 4, 5, 6, 7],
        has: &["v", "zve64d", "zvfh", "zba", "zbb", "zbs", "zicboz", "zkt", "svpbmt", "zfhmin"],
        lacks: &["xtheadvector", "zicbop"],
        vector: VectorExt::Rvv1,
        numa: &[],
        rva22_missing: &["zicbop"],
        rva23_missing_includes: &["supm", "zawrs", "zcb", "zcmop", "zfa", "zicbop", "zihintntl", "zimop", "zvbb"],
        model: None,
        board_label: None,
    },
    Expected {
        board: "beaglev-starlight-jh7100",
        harts: 2,
        hart_ids: &[0, 1],
        has: &["i", "m", "a", "f", "d", "c", "zicsr", "zca"],
        lacks: &["v", "zba"],
        vector: VectorExt::None,
        numa: &[],
        rva22_missing: &["zba", "zbb", "zbs", "zfhmin", "zicbom", "zicbop", "zicboz", "zicntr", "zihintpause", "zihpm", "zkt"],
        rva23_missing_includes: &["v"],
        model: Some("sifive,u74-mc"),
        board_label: None,
    },
    Expected {
        board: "hifive-unmatched-fu740",
        harts: 4,
        hart_ids: &[1, 2, 3, 4],
        has: &["zicntr", "zihpm", "zca", "zcd", "zifencei"],
        lacks: &["v", "zba"],
        vector: VectorExt::None,
        numa: &[],
        rva22_missing: &["zba", "zbb", "zbs", "zfhmin", "zicbom", "zicbop", "zicboz", "zihintpause", "zkt"],
        rva23_missing_includes: &["v", "zcb"],
        model: Some("sifive,bullet0"),
        board_label: Some("SiFive-HiFive-Unmatched-A00"),
    },
    Expected {
        board: "licheepi4a-th1520",
        harts: 4,
        hart_ids: &[0, 1, 2, 3],
        has: &["xtheadvector", "zicntr"],
        lacks: &["v", "zve32x"],
        vector: VectorExt::XTheadVector,
        numa: &[],
        rva22_missing: &["zba", "zbb", "zbs", "zfhmin", "zicbom", "zicbop", "zicboz", "zihintpause", "zkt"],
        rva23_missing_includes: &["v"],
        model: Some("thead,c910"),
        board_label: None,
    },
    Expected {
        board: "milkv-pioneer-sg2042",
        harts: 64,
        hart_ids: &[],
        has: &["i", "m", "a", "f", "d", "c", "xtheadvector"],
        lacks: &["v", "zve64d"],
        vector: VectorExt::XTheadVector,
        numa: &["0-7,16-23", "8-15,24-31", "32-39,48-55", "40-47,56-63"],
        rva22_missing: &["zba", "zbb", "zbs", "zfhmin", "zicbom", "zicbop", "zicboz", "zicntr", "zihintpause", "zihpm", "zkt"],
        rva23_missing_includes: &["v"],
        model: None,
        board_label: None,
    },
    Expected {
        board: "starfive-visionfive2",
        harts: 4,
        hart_ids: &[1, 2, 3, 4],
        has: &["zba", "zbb", "zicntr", "zihpm"],
        lacks: &["zbs", "v"],
        vector: VectorExt::None,
        numa: &["0-3"],
        rva22_missing: &["zbs", "zfhmin", "zicbom", "zicbop", "zicboz", "zihintpause", "zkt"],
        rva23_missing_includes: &["v", "zbs"],
        model: Some("sifive,u74-mc"),
        board_label: None,
    },
];

fn run(root: &Path) -> Probe {
    let site = Site { name: placid_lang::name::Name::new("fixture").ok(), ..Site::default() };
    probe(&Root::new(root), site, &RecordedNvml(None))
}

fn names(list: &[placid_lang::name::Name]) -> Vec<&str> {
    list.iter().map(|name| name.as_str()).collect()
}

#[test]
fn every_riscv64_capture_matches_its_board() {
    let Some(shared) = common::shared_dir("every_riscv64_capture_matches_its_board") else {
        return;
    };
    let fixtures = shared.join("fixtures/riscv64");
    let mut boards: Vec<String> = std::fs::read_dir(&fixtures)
        .unwrap_or_else(|error| panic!("{}: {error}", fixtures.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    boards.sort();
    let described: Vec<&str> = EXPECTED.iter().map(|expected| expected.board).collect();
    assert_eq!(boards, described, "every capture needs an expectation here");

    for expected in EXPECTED {
        let board = expected.board;
        let result = run(&fixtures.join(board));
        assert!(!result.diagnostics.has_errors(), "{board}: {:?}", result.diagnostics);
        let entry = result.entry.as_ref().unwrap_or_else(|| panic!("{board}: no node"));
        let cpu = &entry.node.cpu;
        let riscv = result.cpu.riscv.as_ref().unwrap_or_else(|| panic!("{board}: not riscv"));
        assert_eq!(entry.node.arch, Arch::Riscv64, "{board}");
        assert_eq!(cpu.harts, expected.harts, "{board}: harts");
        if !expected.hart_ids.is_empty() {
            let mut hart_ids: Vec<u32> = riscv.harts.iter().filter_map(|hart| hart.hart_id).collect();
            hart_ids.sort_unstable();
            assert_eq!(hart_ids, expected.hart_ids, "{board}: hart ids");
        }
        for extension in expected.has {
            assert!(riscv.extensions.contains(*extension), "{board}: lacks {extension}: {:?}", riscv.extensions);
        }
        for extension in expected.lacks {
            assert!(!riscv.extensions.contains(*extension), "{board}: has {extension}");
        }
        assert_eq!(cpu.vector, Some(expected.vector), "{board}: vector");
        let numa: Vec<String> = cpu.numa.iter().map(|node| node.cpus.to_string()).collect();
        assert_eq!(numa, expected.numa, "{board}: NUMA");
        assert_eq!(cpu.numa_nodes, expected.numa.len().max(1) as u32, "{board}: NUMA count");
        assert_eq!(cpu.model.as_deref(), expected.model, "{board}: uarch");
        assert_eq!(
            entry.node.labels.iter().find(|(key, _)| key.as_str() == "board").map(|(_, value)| value.as_str()),
            expected.board_label
        );

        let [rva22, rva23] = &cpu.profiles[..] else {
            panic!("{board}: expected two profile verdicts, got {:?}", cpu.profiles);
        };
        assert_eq!((rva22.profile.as_str(), rva23.profile.as_str()), ("rva22u64", "rva23u64"));
        assert_eq!(names(&rva22.missing), expected.rva22_missing, "{board}: RVA22U64 missing");
        assert_eq!(rva22.verdict(), Verdict::Missing, "{board}");
        assert_eq!(rva23.verdict(), Verdict::Missing, "{board}: no capture meets RVA23U64");
        for extension in expected.rva23_missing_includes {
            assert!(names(&rva23.missing).contains(extension), "{board}: RVA23U64 should miss {extension}: {:?}", rva23.missing);
        }
        // Properties no kernel of these captures reports are unverifiable, never missing.
        assert!(names(&rva23.unverifiable).contains(&"ziccif"), "{board}");
        assert!(!names(&rva23.missing).contains(&"ziccif"), "{board}");

        // The node prints and reads back as an inventory.
        let text = placid_lang::print::inventory_kdl(&result.model());
        let (entries, diagnostics) =
            placid_lang::lower::read_inventory_file(placid_lang::span::FileId(0), &text, placid_lang::lower::InventoryFormat::Kdl);
        assert!(!diagnostics.has_errors(), "{board}: {diagnostics:?}\n{text}");
        assert_eq!(entries.len(), 1);
    }
}

#[test]
fn banana_pi_f3_misses_rva23_by_exactly_these_extensions() {
    let Some(shared) = common::shared_dir("banana_pi_f3_misses_rva23_by_exactly_these_extensions") else {
        return;
    };
    let result = run(&shared.join("fixtures/riscv64/bananapi-f3-spacemit-k1"));
    let cpu = &result.entry.as_ref().unwrap_or_else(|| panic!("no node")).node.cpu;
    assert_eq!(names(&cpu.profiles[1].missing), ["supm", "zawrs", "zcb", "zcmop", "zfa", "zicbop", "zihintntl", "zimop", "zvbb"]);
    assert_eq!(names(&cpu.profiles[1].unverifiable), ["za64rs", "zic64b", "ziccamoa", "ziccif", "zicclsm", "ziccrse"]);
}

#[test]
fn the_th1520_vendor_kernel_v_is_not_rvv_1_0() {
    let Some(shared) = common::shared_dir("the_th1520_vendor_kernel_v_is_not_rvv_1_0") else {
        return;
    };
    let capture = shared.join("fixtures/riscv64/licheepi4a-th1520/proc/cpuinfo.vendor-5.10");
    let root = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    std::fs::create_dir_all(root.path().join("proc")).unwrap_or_else(|error| panic!("{error}"));
    std::fs::copy(&capture, root.path().join("proc/cpuinfo")).unwrap_or_else(|error| panic!("{}: {error}", capture.display()));
    let result = run(root.path());
    let riscv = result.cpu.riscv.as_ref().unwrap_or_else(|| panic!("not riscv"));
    assert_eq!(riscv.vector, VectorExt::XTheadVector);
    assert!(!riscv.extensions.contains("v") && !riscv.extensions.contains("zve32x"));
    assert_eq!(riscv.isa.as_ref().map(ToString::to_string).as_deref(), Some("rv64imafdcvsu"));
}

#[test]
fn kernel_isa_lines_of_every_capture_round_trip() {
    let Some(shared) = common::shared_dir("kernel_isa_lines_of_every_capture_round_trip") else {
        return;
    };
    for entry in std::fs::read_dir(shared.join("fixtures/riscv64")).into_iter().flatten().filter_map(Result::ok) {
        for file in ["proc/cpuinfo", "proc/cpuinfo.vendor-5.10"] {
            let Ok(text) = std::fs::read_to_string(entry.path().join(file)) else {
                continue;
            };
            for record in placid_probe::cpuinfo::parse(&text) {
                for key in ["isa", "hart isa"] {
                    if let Some(isa) = record.get(key) {
                        let parsed = placid_probe::riscv::isa::Isa::parse(isa).unwrap_or_else(|error| panic!("{isa}: {error}"));
                        assert_eq!(parsed.to_string(), isa, "{}", entry.path().display());
                    }
                }
            }
        }
    }
}
