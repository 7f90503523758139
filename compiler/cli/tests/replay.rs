//! `placid simulate DIR --trace FILE` on the cluster example: one JSON report, SVG plots, a
//! text summary, and a bad trace refused with exit 1 and its code at the right line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn placid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placid")).args(args).env("NO_COLOR", "1").output().expect("run placid")
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

#[test]
fn the_json_report_and_the_plots() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plots = dir.path().join("plots");
    let trace = example().join("traces/day.csv");
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--format", "json", "--plots", arg(&plots)]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    let report = &json["report"];
    assert_eq!(report["jobs"], report["finished"], "{report}");
    assert!(report["wait_by_tier"]["P1"]["p95"].as_u64().is_some(), "{report}");
    assert!(report["cost"]["vision"]["spent"].as_str().is_some_and(|spent| spent.starts_with("(usd)")), "{report}");
    for plot in ["allocation.svg", "queue.svg"] {
        let svg = std::fs::read_to_string(plots.join(plot)).expect("a plot");
        assert!(svg.starts_with("<svg") && svg.contains("<polyline"), "{plot}");
    }
}

#[test]
fn a_bad_trace_exits_1_with_every_error_at_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("bad.csv");
    std::fs::write(&trace, "job,submit,team,tier,gpus,run\nok,0,vision,P1,1,1h\nx,-1,visoin,P1,1,1h\n").expect("write trace");
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace)]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("placid::E122") && stderr.contains("placid::E127"), "{stderr}");
    assert!(stderr.contains("bad.csv:3:"), "the errors point at line 3: {stderr}");
    assert!(stderr.contains("did you mean `vision`?"), "{stderr}");
}

#[test]
fn openb_options_do_not_apply_to_a_trace() {
    let trace = example().join("traces/day.csv");
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--seeds", "1"]);
    assert_eq!(output.status.code(), Some(2), "an option that would be ignored is a usage error");
}

/// The cluster example in a temp dir with a `telemetry` block that throttles comm-high jobs.
fn example_with_telemetry(dir: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("create dir");
        for entry in std::fs::read_dir(from).expect("read dir").filter_map(Result::ok) {
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                if entry.file_name() != "broken" {
                    copy(&entry.path(), &target);
                }
            } else {
                std::fs::copy(entry.path(), &target).expect("copy");
            }
        }
    }
    let project = dir.join("project");
    copy(&example(), &project);
    let policy = "telemetry half-life=\"1m\" max-age=\"1h\" {\n    throttle domain-nvlink-above=0.85 for=\"5m\" comm=\"high\"\n}\n";
    std::fs::write(project.join("policy/telemetry.kdl"), policy).expect("write the telemetry policy");
    project
}

#[test]
fn a_recorded_telemetry_series_replays_with_the_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = example().join("traces/day.csv");
    let series = dir.path().join("nvlink.csv");
    std::fs::write(
        &series,
        "at,scope,name,utilization\n0,domain,nvl-a,0.95\n0,domain,nvl-b,0.95\n4h,domain,nvl-a,0.2\n4h,domain,nvl-b,0.2\n",
    )
    .expect("write the series");
    let project = example_with_telemetry(dir.path());
    let run = |extra: &[&str]| {
        let mut args = vec!["simulate", arg(&project), "--trace", arg(&trace), "--format", "json"];
        args.extend_from_slice(extra);
        let output = placid(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
        json["report"].clone()
    };
    let plain = run(&[]);
    let throttled = run(&["--telemetry", arg(&series)]);
    assert_eq!(throttled["unfinished"], 0, "nothing waits forever: the throttle lifts at 4h: {throttled}");
    // With both NVLink domains saturated for the first four hours, comm-high jobs wait longer.
    assert_ne!(plain["wait_by_tier"], throttled["wait_by_tier"], "the throttle changed nothing");

    // A bad series: its errors at their line, exit 1.
    std::fs::write(&series, "at,scope,name,utilization\n0,domain,nvl-z,0.5\n").expect("write the series");
    let output = placid(&["simulate", arg(&project), "--trace", arg(&trace), "--telemetry", arg(&series)]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("placid::E127") && stderr.contains("nvlink.csv:2:"), "{stderr}");
}

#[test]
fn a_series_needs_the_policys_telemetry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let series = dir.path().join("nvlink.csv");
    std::fs::write(&series, "at,scope,name,utilization\n0,domain,nvl-a,0.95\n").expect("write the series");
    let trace = example().join("traces/day.csv");
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--telemetry", arg(&series)]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("placid::E098"));
}

/// A FIFO as `--trace` or `--telemetry` is refused at once with E019 (exit 2), as a policy
/// file is, instead of waiting for a writer forever; `--nodes` and `--pods` likewise.
#[test]
fn a_fifo_as_an_input_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("input.csv");
    let path = std::ffi::CString::new(arg(&fifo)).expect("a C path");
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    let project = example_with_telemetry(dir.path());
    let (example, trace) = (example(), example().join("traces/day.csv"));
    let runs: [Vec<&str>; 3] = [
        vec!["simulate", arg(&example), "--trace", arg(&fifo)],
        vec!["simulate", arg(&project), "--trace", arg(&trace), "--telemetry", arg(&fifo)],
        vec!["simulate", "--import", "openb", "--nodes", arg(&fifo), "--pods", arg(&fifo)],
    ];
    for args in runs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_placid"))
            .args(&args)
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run placid");
        let started = std::time::Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if started.elapsed() > std::time::Duration::from_secs(60) {
                child.kill().expect("kill");
                panic!("placid {args:?} blocked on the FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().expect("output");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("placid::E019") && stderr.contains("a FIFO"), "{args:?}: {stderr}");
    }
}

/// `--jobs` writes every job's outcome, the rejected one named with its reason, in CSV or
/// JSON lines by the file's extension; the text summary names it too; files are 0644-ish
/// (readable as a plain write leaves them), and an unknown extension is refused.
#[test]
fn every_jobs_outcome_is_written_and_the_rejected_one_named() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("p0.csv");
    std::fs::write(
        &trace,
        "job,submit,team,tier,class,pool,gpus,run\nprod-40,0,vision,P0,model-parallel,nvl-a,40,1h\nprod-4,60,vision,P0,model-parallel,nvl-a,4,1h\n",
    )
    .expect("write trace");
    let (csv, jsonl) = (dir.path().join("jobs.csv"), dir.path().join("jobs.jsonl"));
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--jobs", arg(&csv)]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = String::from_utf8_lossy(&output.stdout);
    assert!(summary.contains("2 jobs: 1 finished, 1 rejected, 0 cancelled, 0 unfinished"), "{summary}");
    assert!(summary.contains("rejected (domain-too-small), tier P0, team vision: 1: prod-40"), "{summary}");
    let written = std::fs::read_to_string(&csv).expect("the jobs file");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines[0], "job,team,tier,gpus,submit,start,end,state,reason,nodes,preemptions,cost");
    assert_eq!(lines[1], "prod-40,vision,P0,40,0,,0,rejected,domain-too-small,,0,(usd)0.00");
    assert!(lines[2].starts_with("prod-4,vision,P0,4,60,60,3660,finished,,"), "{}", lines[2]);
    assert_eq!(lines.len(), 3);
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "").expect("plain write");
    let mode = |path: &Path| std::fs::metadata(path).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&csv), mode(&plain), "the jobs file is as readable as a plain write");

    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--jobs", arg(&jsonl)]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let written = std::fs::read_to_string(&jsonl).expect("the jobs file");
    let rows: Vec<serde_json::Value> = written.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0]["job"].as_str(), rows[0]["state"].as_str(), rows[0]["reason"].as_str()),
        (Some("prod-40"), Some("rejected"), Some("domain-too-small"))
    );
    assert_eq!(rows[1]["nodes"].as_array().map(Vec::len), Some(1), "{}", rows[1]);
    assert_eq!(rows[1]["end"], 3660);

    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--jobs", arg(&dir.path().join("jobs.txt"))]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains(".jsonl"));
}

/// Headless Chromium, or `None` (with a plain note) when it is not installed; CI installs it
/// (`.ci/run`), so there its absence fails the test.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("chromium"))
        .find(|candidate| candidate.is_file());
    if found.is_none() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "chromium is not installed; CI needs it (.ci/run)");
        eprintln!("chromium is not installed: the HTML report's rendering test did not run");
    }
    found
}

/// Runs headless Chromium on `page` with `args`, in a fresh profile, logging to stderr.
fn headless(chromium: &Path, profile: &Path, page: &Path, args: &[&str]) -> Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium")
}

/// `--html` writes one self-contained page: Chromium loads it with no console message, its
/// three charts are in the DOM, and a screenshot of it is taken.
#[test]
fn the_html_report_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("report.html");
    let trace = example().join("traces/day.csv");
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&trace), "--html", arg(&page)]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for outside in ["src=", "href=", "<script", "<link", "@import", "url("] {
        assert!(!html.contains(outside), "the page refers outside itself with {outside}");
    }
    let Some(chromium) = chromium() else { return };
    let dom = headless(&chromium, &dir.path().join("profile-dom"), &page, &["--dump-dom"]);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let stderr = String::from_utf8_lossy(&dom.stderr);
    assert!(!stderr.contains("CONSOLE"), "console messages while loading the page:\n{stderr}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    for chart in ["id=\"allocation\"", "id=\"queue\"", "id=\"waits\""] {
        let at = dom.find(chart).unwrap_or_else(|| panic!("no chart {chart} in the DOM"));
        assert!(dom[at..].find("<svg").is_some_and(|svg| svg < 200), "chart {chart} holds no SVG");
    }
    assert!(dom.contains("vision-001"), "the job table is rendered");
    let shot = dir.path().join("report.png");
    let screenshot = headless(
        &chromium,
        &dir.path().join("profile-shot"),
        &page,
        &["--window-size=1100,2400", &format!("--screenshot={}", shot.display())],
    );
    assert!(screenshot.status.success(), "{}", String::from_utf8_lossy(&screenshot.stderr));
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000, "a screenshot of {} bytes", png.len());
}

/// `--from sacct` replays a Slurm history, and says what it left out and what it folded.
#[test]
fn a_slurm_history_replays_and_says_what_it_left_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history.txt");
    std::fs::write(
        &history,
        "JobID|JobName|Account|QOS|Partition|State|Submit|Start|End|Timelimit|ReqTRES|AllocTRES|Comment\n\
         41|wrap|vision|p1|nvl-b|COMPLETED|2026-12-06T04:10:08|2026-12-06T04:10:10|2026-12-06T05:10:10|02:00:00|gres/gpu=8|gres/gpu=8|\n\
         41.batch|batch|vision|||COMPLETED|2026-12-06T04:10:10|2026-12-06T04:10:10|2026-12-06T05:10:10|||gres/gpu=4|\n\
         42|wrap|root|normal|nvl-b|COMPLETED|2026-12-06T04:10:09|2026-12-06T04:10:10|2026-12-06T04:20:10|02:00:00|gres/gpu=1|gres/gpu=1|\n\
         43|wrap|vision|p1|nvl-b|PREEMPTED|2026-12-06T04:10:09|2026-12-06T04:10:11|2026-12-06T04:15:11|02:00:00|gres/gpu=2|gres/gpu=2|\n\
         43|wrap|vision|p1|nvl-b|COMPLETED|2026-12-06T04:10:09|2026-12-06T04:16:00|2026-12-06T04:30:00|02:00:00|gres/gpu=2|gres/gpu=2|\n",
    )
    .expect("write history");
    let output = placid(&["simulate", arg(&example()), "--trace", arg(&history), "--from", "sacct"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("2 jobs: 2 finished"), "{}", String::from_utf8_lossy(&output.stdout));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("left out of the history: 1 job(s): account `root` is no team's"), "{stderr}");
    assert!(stderr.contains("1 job(s) of the history ran more than once (preempted or requeued)"), "{stderr}");
}
