//! `cargo bench -p placid-tests --bench check_scale`: load + check of synthetic projects at
//! 2,500, 5,000 and 10,000 nodes (4 GPUs each, 16-node NVLink domains, 200 teams, 50 plans),
//! reporting load (read + parse + lower), check and total time, the time per node (linear
//! growth shows as a flat figure), and peak memory. The JSON inventory is the measured path;
//! the KDL inventory is measured once at 10,000 nodes as the baseline it replaces.

use std::time::{Duration, Instant};

use placid_lang::lower::InventoryFormat;
use placid_tests::synthetic::{Size, median, write_project};

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|value| value.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn measure(size: Size, format: InventoryFormat, runs: usize) -> (Duration, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    write_project(dir.path(), size, format).expect("write synthetic project");
    let world = placid_driver::world::FsWorld::new(dir.path()).expect("open project");
    let mut loads = Vec::new();
    let mut checks = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let compilation = placid_lang::load(&world);
        let loaded = Instant::now();
        let (model, diagnostics) = placid_check::check(compilation.model, compilation.diagnostics);
        let checked = Instant::now();
        assert!(!diagnostics.has_errors(), "synthetic project has errors");
        assert_eq!(model.nodes.len(), size.nodes);
        loads.push(loaded - start);
        checks.push(checked - loaded);
    }
    (median(loads), median(checks))
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    println!("{:>7} {:>6} {:>10} {:>10} {:>10} {:>12}", "nodes", "format", "load ms", "check ms", "total ms", "us per node");
    for nodes in [2_500, 5_000, 10_000] {
        let size = Size { nodes, teams: 200, plans: 50 };
        let (load, check) = measure(size, InventoryFormat::Json, 5);
        let total = load + check;
        println!(
            "{nodes:>7} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>12.2}",
            "json",
            load.as_secs_f64() * 1e3,
            check.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e6 / nodes as f64
        );
    }
    let size = Size { nodes: 10_000, teams: 200, plans: 50 };
    let (load, check) = measure(size, InventoryFormat::Kdl, 1);
    println!(
        "{:>7} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>12.2}",
        10_000,
        "kdl",
        load.as_secs_f64() * 1e3,
        check.as_secs_f64() * 1e3,
        (load + check).as_secs_f64() * 1e3,
        (load + check).as_secs_f64() * 1e6 / 10_000.0
    );
    println!("peak memory: {:.0} MiB", peak_rss_mib());
}
