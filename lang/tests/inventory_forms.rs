//! The KDL and JSON inventory forms are read by their own readers and checked by one set of
//! rules: the same node, written in either form, is accepted by both or refused by both with
//! the same diagnostic codes. The JSON form has no positions inside a node, so its
//! diagnostics point at the node's object.

use placid_lang::diag::{Code, Diagnostics};
use placid_lang::lower::{InventoryFormat, assemble_inventory, read_inventory_file};
use placid_lang::span::FileId;

/// One node in both forms, and the code its mistake must give.
struct Case {
    what: &'static str,
    kdl: &'static str,
    json: &'static str,
    code: Code,
}

const CASES: &[Case] = &[
    Case {
        what: "an NVLink to a GPU the node does not have",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" { nvlink peer=9 bandwidth="300GB/s" } }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "nvlinks": [{"peer": 9, "links": 1, "bandwidth": "300GB/s"}]}]}"#,
        code: Code::UnresolvedReference,
    },
    Case {
        what: "an NVLink from a GPU to itself",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" { nvlink peer=0 bandwidth="300GB/s" }; gpu 1 model="H200" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "nvlinks": [{"peer": 0, "links": 1, "bandwidth": "300GB/s"}]}, {"index": 1, "model": "H200"}]}"#,
        code: Code::UnresolvedReference,
    },
    Case {
        what: "two GPUs with one index",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200"; gpu 0 model="H200" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200"}, {"index": 0, "model": "H200"}]}"#,
        code: Code::DuplicateName,
    },
    Case {
        what: "zero harts",
        kdl: r#"node "a" arch="x86_64" { cpu harts=0 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 0}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "zero cores",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8 cores=0 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "cores": 0}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "zero sockets",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8 sockets=0 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "sockets": 0}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "zero NUMA nodes",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8 numa-nodes=0 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "numa-nodes": 0}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an NVLink of zero links",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" { nvlink peer=1 links=0 bandwidth="300GB/s" }; gpu 1 model="H200" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "nvlinks": [{"peer": 1, "links": 0, "bandwidth": "300GB/s"}]}, {"index": 1, "model": "H200"}]}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "zero MIG instances",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" mig="enabled" { mig-instance profile="1g.18gb" count=0 } }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "mig": "enabled", "mig-instances": [{"profile": "1g.18gb", "count": 0}]}]}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "MIG instances with MIG disabled",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" mig="disabled" { mig-instance profile="1g.18gb" count=7 } }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "mig": "disabled", "mig-instances": [{"profile": "1g.18gb", "count": 7}]}]}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an unknown MIG mode",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" mig="on" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "mig": "on"}]}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an invalid MIG profile",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" mig="enabled" { mig-instance profile="1g 18gb" } }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "mig": "enabled", "mig-instances": [{"profile": "1g 18gb", "count": 1}]}]}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "a negative price",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; cost gpu-hour=(usd)-1 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cost-gpu-hour": "-1", "cpu": {"harts": 8}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "a price that is no number",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; cost gpu-hour=(usd)"3.1.0" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cost-gpu-hour": "3.1.0", "cpu": {"harts": 8}}"#,
        code: Code::InvalidUnit,
    },
    Case {
        what: "a negative egress price",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; cost gpu-hour=(usd)1 egress-tb=(usd)-90 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cost-gpu-hour": "1", "cost-egress-tb": "-90", "cpu": {"harts": 8}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an egress price that is no number",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; cost egress-tb=(usd)"0.0.9" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cost-egress-tb": "0.0.9", "cpu": {"harts": 8}}"#,
        code: Code::InvalidUnit,
    },
    Case {
        what: "an invalid host name",
        kdl: r#"node "a b" arch="x86_64" { cpu harts=8 }"#,
        json: r#"{"name": "a b", "arch": "x86_64", "cpu": {"harts": 8}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "an unknown architecture",
        kdl: r#"node "a" arch="amd64" { cpu harts=8 }"#,
        json: r#"{"name": "a", "arch": "amd64", "cpu": {"harts": 8}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an unknown capacity",
        kdl: r#"node "a" arch="x86_64" capacity="preemptible" { cpu harts=8 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "capacity": "preemptible", "cpu": {"harts": 8}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an invalid rack",
        kdl: r#"node "a" arch="x86_64" rack="r 1" { cpu harts=8 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "rack": "r 1", "cpu": {"harts": 8}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "an invalid chassis",
        kdl: r#"node "a" arch="x86_64" chassis="c:1" { cpu harts=8 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "chassis": "c:1", "cpu": {"harts": 8}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "an invalid NVLink domain",
        kdl: r#"node "a" arch="x86_64" nvlink-domain="-d" { cpu harts=8 }"#,
        json: r#"{"name": "a", "arch": "x86_64", "nvlink-domain": "-d", "cpu": {"harts": 8}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "host memory without a unit",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; memory "512" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "memory": "512"}"#,
        code: Code::InvalidUnit,
    },
    Case {
        what: "GPU memory in an unknown unit",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" memory="141GX" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "memory": "141GX"}]}"#,
        code: Code::InvalidUnit,
    },
    Case {
        what: "an NVLink bandwidth in an unknown unit",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200" { nvlink peer=1 bandwidth="300GB" }; gpu 1 model="H200" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200", "nvlinks": [{"peer": 1, "links": 1, "bandwidth": "300GB"}]}, {"index": 1, "model": "H200"}]}"#,
        code: Code::InvalidUnit,
    },
    Case {
        what: "a GPU model that Slurm cannot name",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; gpu 0 model="H200:sxm" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "gpus": [{"index": 0, "model": "H200:sxm"}]}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "an invalid label key",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; label "Bad_Prefix/zone" "a" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "labels": {"Bad_Prefix/zone": "a"}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "an invalid label value",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8; label "zone" "-a" }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "labels": {"zone": "-a"}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "a CPU list that runs backwards",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8 { numa 0 cpus="7-0" } }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "numa": [{"id": 0, "cpus": "7-0"}]}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "NUMA memory without a unit",
        kdl: r#"node "a" arch="x86_64" { cpu harts=8 { numa 0 cpus="0-7" memory="64" } }"#,
        json: r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8, "numa": [{"id": 0, "cpus": "0-7", "memory": "64"}]}}"#,
        code: Code::InvalidUnit,
    },
    Case {
        what: "an unknown vector extension",
        kdl: r#"node "a" arch="riscv64" { cpu harts=8 vector="rvv0.7" }"#,
        json: r#"{"name": "a", "arch": "riscv64", "cpu": {"harts": 8, "vector": "rvv0.7"}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "a profile verdict its lists contradict",
        kdl: r#"node "a" arch="riscv64" { cpu harts=8 { profile "rva23u64" verdict="meets" missing="zfa" } }"#,
        json: r#"{"name": "a", "arch": "riscv64", "cpu": {"harts": 8, "profiles": [{"profile": "rva23u64", "verdict": "meets", "missing": ["zfa"]}]}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an unknown profile verdict",
        kdl: r#"node "a" arch="riscv64" { cpu harts=8 { profile "rva23u64" verdict="fine" } }"#,
        json: r#"{"name": "a", "arch": "riscv64", "cpu": {"harts": 8, "profiles": [{"profile": "rva23u64", "verdict": "fine"}]}}"#,
        code: Code::InvalidValue,
    },
    Case {
        what: "an invalid profile name",
        kdl: r#"node "a" arch="riscv64" { cpu harts=8 { profile "rva 23" verdict="meets" } }"#,
        json: r#"{"name": "a", "arch": "riscv64", "cpu": {"harts": 8, "profiles": [{"profile": "rva 23", "verdict": "meets"}]}}"#,
        code: Code::InvalidName,
    },
    Case {
        what: "an invalid extension name",
        kdl: r#"node "a" arch="riscv64" { cpu harts=8 { profile "rva23u64" verdict="unverifiable" unverifiable="zic:cif" } }"#,
        json: r#"{"name": "a", "arch": "riscv64", "cpu": {"harts": 8, "profiles": [{"profile": "rva23u64", "verdict": "unverifiable", "unverifiable": ["zic:cif"]}]}}"#,
        code: Code::InvalidName,
    },
];

fn json(node: &str) -> String {
    format!(r#"{{"nodes": [{node}]}}"#)
}

fn codes(diagnostics: &Diagnostics) -> Vec<Code> {
    let mut codes: Vec<Code> = diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
    codes.sort();
    codes
}

#[test]
fn one_invalid_node_gives_the_same_codes_in_both_forms() {
    for case in CASES {
        let (kdl_entries, kdl) = read_inventory_file(FileId(0), case.kdl, InventoryFormat::Kdl);
        let (json_entries, json) = read_inventory_file(FileId(0), &json(case.json), InventoryFormat::Json);
        assert!(kdl_entries.is_empty() && json_entries.is_empty(), "{}: a form kept the node", case.what);
        // One diagnostic, so each case holds one mistake and the table tests what it says.
        assert_eq!(codes(&kdl), [case.code], "{}: {kdl:?}", case.what);
        assert_eq!(codes(&json), [case.code], "{}: the forms disagree: {json:?}", case.what);
    }
}

#[test]
fn a_node_without_a_cpu_is_accepted_in_both_forms() {
    let (kdl, kdl_diagnostics) = read_inventory_file(FileId(0), r#"node "a" arch="x86_64" { gpu 0 model="H200" }"#, InventoryFormat::Kdl);
    let (json, json_diagnostics) = read_inventory_file(
        FileId(0),
        &json(r#"{"name": "a", "arch": "x86_64", "gpus": [{"index": 0, "model": "H200"}]}"#),
        InventoryFormat::Json,
    );
    assert!(kdl_diagnostics.is_empty() && json_diagnostics.is_empty(), "{kdl_diagnostics:?}\n{json_diagnostics:?}");
    assert_eq!(kdl[0].node.cpu, json[0].node.cpu);
}

#[test]
fn either_price_alone_is_read_the_same_in_both_forms() {
    for (kdl, json_node) in [
        (r#"node "a" arch="x86_64" { cost egress-tb=(usd)90 }"#, r#"{"name": "a", "arch": "x86_64", "cost-egress-tb": "90"}"#),
        (r#"node "a" arch="x86_64" { cost gpu-hour=(usd)2 }"#, r#"{"name": "a", "arch": "x86_64", "cost-gpu-hour": "2"}"#),
        (
            r#"node "a" arch="x86_64" { cost gpu-hour=(usd)2 egress-tb=(usd)90 }"#,
            r#"{"name": "a", "arch": "x86_64", "cost-gpu-hour": "2", "cost-egress-tb": "90"}"#,
        ),
    ] {
        let (kdl_entries, kdl_diagnostics) = read_inventory_file(FileId(0), kdl, InventoryFormat::Kdl);
        let (json_entries, json_diagnostics) = read_inventory_file(FileId(0), &json(json_node), InventoryFormat::Json);
        assert!(kdl_diagnostics.is_empty() && json_diagnostics.is_empty(), "{kdl_diagnostics:?}\n{json_diagnostics:?}");
        let prices =
            |entries: &[placid_lang::lower::InventoryEntry]| (entries[0].node.cost_per_gpu_hour, entries[0].node.cost_per_egress_tb);
        assert_eq!(prices(&kdl_entries), prices(&json_entries), "{kdl}");
        assert!(kdl.contains("egress-tb") == prices(&kdl_entries).1.is_some(), "{kdl}");
    }
}

#[test]
fn a_cost_without_a_price_or_with_an_argument_is_refused() {
    for (text, code) in [
        (r#"node "a" arch="x86_64" { cost }"#, Code::MissingValue),
        (r#"node "a" arch="x86_64" { cost (usd)5 gpu-hour=(usd)2 }"#, Code::InvalidValue),
    ] {
        let (entries, diagnostics) = read_inventory_file(FileId(0), text, InventoryFormat::Kdl);
        assert!(entries.is_empty(), "{text}: the node was kept");
        assert_eq!(codes(&diagnostics), [code], "{text}: {diagnostics:?}");
        assert!(diagnostics.iter().all(|diagnostic| diagnostic.help.is_some()), "{text}: {diagnostics:?}");
    }
}

#[test]
fn json_diagnostics_point_at_the_node_they_are_about() {
    let first = r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}}"#;
    let second = r#"{"name": "b", "arch": "x86_64", "cpu": {"harts": 0}}"#;
    let third = r#"{"name": "a", "arch": "x86_64", "cpu": {"harts": 8}, "typo": 1}"#;
    let text = format!("{{\"nodes\": [\n{first},\n{second},\n{third}\n]}}");
    let (entries, diagnostics) = read_inventory_file(FileId(0), &text, InventoryFormat::Json);
    let start_of = |node: &str| text.find(node).unwrap_or_else(|| panic!("{node} is in the text")) as u32;
    let zero_harts = diagnostics.iter().find(|diagnostic| diagnostic.code == Code::InvalidValue).expect("zero harts are reported");
    assert_eq!((zero_harts.primary.span.start, zero_harts.primary.span.end), (start_of(second), start_of(second) + 1));
    let typo = diagnostics.iter().find(|diagnostic| diagnostic.code == Code::KdlSyntax).expect("the unknown key is reported");
    assert!((start_of(third)..start_of(third) + third.len() as u32).contains(&typo.primary.span.start), "{typo:?}");
    assert!(typo.message.contains("unknown field `typo`") && !typo.message.contains("line"), "{}", typo.message);
    // The two nodes named `a`: the third is left out for its typo, so the first stands alone.
    assert_eq!(entries.len(), 1);

    let duplicate = format!("{{\"nodes\": [{first}, {first}]}}");
    let (entries, _) = read_inventory_file(FileId(0), &duplicate, InventoryFormat::Json);
    let (_, diagnostics) = assemble_inventory(entries);
    let clash = diagnostics.iter().find(|diagnostic| diagnostic.code == Code::DuplicateName).expect("the duplicate is reported");
    assert_ne!(clash.primary.span, clash.secondary[0].span, "both nodes are shown, each at its place");
}
