//! Bad openb traces: each problem is a coded diagnostic at the field it concerns, all of them
//! at once, and no input panics.

use placid_lang::diag::{Code, Diagnostics};
use placid_lang::source::{RelPath, Sources};
use placid_openb::read::{self, TraceFile};
use placid_openb::{Milli, Trace};
use proptest::prelude::*;

const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,393216,8,V100M32\n";
const PODS_HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

fn read_both(nodes: &[u8], pods: &[u8]) -> (Option<Trace>, Diagnostics, Sources) {
    let mut sources = Sources::new();
    let path = |name: &str| RelPath::new(name).expect("a relative name");
    let (trace, diagnostics) =
        read::read(&mut sources, TraceFile { path: path("nodes.csv"), bytes: nodes }, TraceFile { path: path("pods.csv"), bytes: pods });
    (trace, diagnostics, sources)
}

/// The code, message and (line, column) of every diagnostic.
fn found(pods: &str) -> Vec<(Code, String, (usize, usize))> {
    let (trace, diagnostics, sources) = read_both(NODES.as_bytes(), pods.as_bytes());
    assert!(trace.is_none() || diagnostics.is_empty());
    diagnostics
        .iter()
        .map(|diagnostic| {
            let span = diagnostic.primary.span;
            let at = sources.line_col(span.file, span.start).expect("a span in a file");
            (diagnostic.code, diagnostic.message.clone(), at)
        })
        .collect()
}

#[test]
fn a_good_trace_reads_with_its_models() {
    let pods = format!("{PODS_HEADER}p0,8000,1024,1,500,,LS,Running,0,1,0\np1,8000,1024,2,1000,V100M32|P100,LS,Running,0,1,0\n");
    let (trace, diagnostics, _) = read_both(NODES.as_bytes(), pods.as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let trace = trace.expect("a trace");
    assert_eq!(trace.models, vec!["P100", "V100M32"]);
    assert_eq!(trace.pods[0].gpu_milli, Milli(500));
    assert!(trace.pods[0].shares_gpu());
    assert!(trace.pods[1].spec.allows(0) && trace.pods[1].spec.allows(1));
    assert_eq!(trace.total_gpu_milli(), 10_000);
}

#[test]
fn the_optional_columns_may_be_left_out_in_any_order() {
    let pods = "gpu_spec,name,num_gpu,gpu_milli,cpu_milli,memory_mib\nP100,p0,1,1000,1,1\n";
    let (trace, diagnostics, _) = read_both(NODES.as_bytes(), pods.as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(trace.map(|trace| trace.pods[0].cpu_milli), Some(1));
}

/// The FGD repository's smallest pod lists have only the five columns its simulator needs:
/// without `gpu_spec` a pod may run on any GPU model.
#[test]
fn a_pod_list_of_the_five_required_columns_reads() {
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,8000,1024,1,500\np1,8000,1024,2,1000\n";
    let (trace, diagnostics, _) = read_both(NODES.as_bytes(), pods.as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let trace = trace.expect("a trace");
    assert_eq!(trace.pods.len(), 2);
    assert!(trace.pods.iter().all(|pod| pod.spec.allows(0) && pod.spec.allows(1)), "any model");
}

#[test]
fn unknown_and_missing_columns_are_reported_at_the_header() {
    let found = found("name,cpu,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,1,1,0,0,\n");
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, Code::TraceColumns);
    assert!(found[0].1.contains("unknown column `cpu`"), "{found:?}");
    assert_eq!(found[0].2, (1, 6));
    assert!(found[1].1.contains("no column `cpu_milli`"), "{found:?}");
}

#[test]
fn negative_huge_and_malformed_numbers_are_reported_at_their_fields_all_at_once() {
    let pods = format!(
        "{PODS_HEADER}p0,-5,1,0,0,,LS,Running,0,1,0\np1,1,99999999999999999999999,0,0,,LS,Running,0,1,0\np2,1,1,1.5,0,,LS,Running,0,1,0\np3,1,1,65,1000,,LS,Running,0,1,0\n"
    );
    let found = found(&pods);
    let summary: Vec<(Code, (usize, usize))> = found.iter().map(|(code, _, at)| (*code, *at)).collect();
    assert_eq!(
        summary,
        vec![(Code::TraceValue, (2, 4)), (Code::TraceValue, (3, 6)), (Code::TraceValue, (4, 8)), (Code::TraceValue, (5, 8))],
        "{found:?}"
    );
    assert!(found[0].1.contains("negative"));
    assert!(found[1].1.contains("larger than"));
    assert!(found[2].1.contains("not a whole number"));
    assert!(found[3].1.contains("larger than 64"));
}

#[test]
fn a_gpu_request_openb_cannot_mean_is_refused() {
    let pods = format!("{PODS_HEADER}p0,1,1,2,500,,LS,Running,0,1,0\np1,1,1,0,300,,LS,Running,0,1,0\np2,1,1,1,0,,LS,Running,0,1,0\n");
    let codes: Vec<Code> = found(&pods).into_iter().map(|(code, _, _)| code).collect();
    assert_eq!(codes, vec![Code::TraceValue; 3]);
}

#[test]
fn a_model_no_node_has_is_reported_at_its_name() {
    let pods = format!("{PODS_HEADER}p0,1,1,1,1000,P100|A100,LS,Running,0,1,0\n");
    let found = found(&pods);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Code::TraceUnknownGpuModel);
    assert!(found[0].1.contains("`A100`"));
    assert_eq!(found[0].2, (2, 20));
}

#[test]
fn empty_files_and_header_only_files_are_empty() {
    for pods in ["", PODS_HEADER] {
        let found = found(pods);
        assert_eq!(found.iter().map(|(code, _, _)| *code).collect::<Vec<_>>(), vec![Code::TraceEmpty], "{pods:?}");
    }
}

#[test]
fn a_row_of_the_wrong_width_is_reported_at_its_line() {
    let found = found(&format!("{PODS_HEADER}p0,1,1,0,0\n"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].2), (Code::TraceRow, (2, 1)));
}

#[test]
fn bad_utf8_is_reported_at_the_first_bad_byte() {
    let mut pods = PODS_HEADER.as_bytes().to_vec();
    pods.extend_from_slice(b"p\xff0,1,1,0,0,,LS,Running,0,1,0\n");
    let (trace, diagnostics, sources) = read_both(NODES.as_bytes(), &pods);
    assert!(trace.is_none());
    let diagnostic = diagnostics.iter().next().expect("a diagnostic");
    assert_eq!(diagnostic.code, Code::TraceNotText);
    let span = diagnostic.primary.span;
    assert_eq!(sources.line_col(span.file, span.start), Some((2, 2)));
}

#[test]
fn reading_stops_after_a_bounded_number_of_bad_rows() {
    let pods = format!("{PODS_HEADER}{}", "p,1\n".repeat(1000));
    let found = found(&pods);
    assert!(found.len() <= 51, "{} diagnostics", found.len());
}

proptest! {
    #[test]
    fn no_input_panics(nodes in proptest::collection::vec(any::<u8>(), 0..200), pods in "[a-z0-9,|\\-\n.]{0,300}") {
        let mut nodes_text = NODES.as_bytes().to_vec();
        nodes_text.extend_from_slice(&nodes);
        let _ = read_both(&nodes_text, pods.as_bytes());
        let _ = read_both(NODES.as_bytes(), format!("{PODS_HEADER}{pods}").as_bytes());
    }
}
