//! The GitOps workflow end to end: real git repositories made with `git` in temp dirs
//! (commits, branches, renames, deletions, a revision that does not parse, a merge commit),
//! `placid diff` between their revisions, snapshots of the Markdown and JSON reports for
//! realistic changes to the cluster example, and `placid verify` on a built output tree.

use std::path::PathBuf;

use placid_gitops::describe::ElementKind;
use placid_gitops::model_diff::{DangerKind, ModelDiff, Preempts, Status};
use placid_gitops::render::terminal::{self, Colour};
use placid_gitops::render::{json, markdown};
use placid_gitops::report::{DiffReport, Outcome};
use placid_gitops::verify::{Finding, Problem, verify};
use placid_gitops::{DiffRequest, Revision, diff};
use placid_tests::git::Repo;

/// A git repository in a temp dir holding a copy of the cluster example under `cluster/`.
struct Fixture {
    _temp: tempfile::TempDir,
    root: PathBuf,
    repo: Repo,
}

impl Fixture {
    /// A repository whose first commit on `main` is the cluster example.
    fn cluster() -> Fixture {
        let temp = tempfile::tempdir().expect("temp dir");
        let root = temp.path().to_path_buf();
        let repo = Repo::init(&root);
        placid_tests::copy_tree(&placid_tests::example("cluster"), &root.join("cluster"), &[]);
        let fixture = Fixture { _temp: temp, root, repo };
        fixture.commit("cluster example");
        fixture
    }

    fn project(&self) -> PathBuf {
        self.root.join("cluster")
    }

    fn path(&self, file: &str) -> PathBuf {
        self.project().join(file)
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).expect("read fixture file")
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.path(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write fixture file");
    }

    /// Replaces `from` with `to` in `file`, which must contain it.
    fn edit(&self, file: &str, from: &str, to: &str) {
        let text = self.read(file);
        // Exactly one match, so an edit cannot silently land on a look-alike
        // (`priority 100` is also the start of `priority 1000`).
        assert_eq!(text.matches(from).count(), 1, "{file} must contain {from:?} exactly once");
        self.write(file, &text.replacen(from, to, 1));
    }

    /// Stages every change of the work tree (additions, edits, deletions) and commits it.
    fn commit(&self, message: &str) -> String {
        self.repo.commit_all(message)
    }

    fn branch(&self, name: &str) {
        self.repo.branch(name);
    }

    fn diff(&self, base: &str, head: Revision) -> DiffReport {
        diff(&DiffRequest { dir: self.project(), base: Revision::Commit(base.into()), head, trace: None }).expect("diff runs")
    }

    fn diff_commits(&self, base: &str, head: &str) -> DiffReport {
        self.diff(base, Revision::Commit(head.into()))
    }
}

fn model(report: &DiffReport) -> &ModelDiff {
    report.model.as_ref().expect("base compiles, so there is a semantic diff")
}

fn field<'a>(report: &'a DiffReport, kind: ElementKind, name: &str, field: &str) -> (Option<&'a str>, Option<&'a str>) {
    let element = model(report)
        .elements
        .iter()
        .find(|element| element.kind == kind && element.name == name)
        .unwrap_or_else(|| panic!("no change of {} {name}", kind.as_str()));
    let change =
        element.fields.iter().find(|change| change.field.as_str() == field).unwrap_or_else(|| panic!("no change of field {field}"));
    (change.before.as_deref(), change.after.as_deref())
}

fn danger_kinds(report: &DiffReport) -> Vec<DangerKind> {
    report.dangers.iter().map(|danger| danger.kind).collect()
}

/// Commits a share change on a `feature` branch off `main`.
fn share_change() -> Fixture {
    let fixture = Fixture::cluster();
    fixture.branch("base");
    fixture.edit("policy/teams.kdl", "share 40", "share 60");
    fixture.commit("vision gets a larger share");
    fixture
}

#[test]
fn share_change_reports_shares_guarantees_and_quota_reductions() {
    let fixture = share_change();
    let report = fixture.diff_commits("base", "HEAD");
    assert_eq!(report.outcome, Outcome::Changes);
    assert_eq!(field(&report, ElementKind::Team, "vision", "share"), (Some("40"), Some("60")));
    let vision = model(&report).shares.iter().find(|share| share.team == "vision").expect("vision's share changes");
    assert_eq!(vision.before.map(|share| share.percent), Some(40.0));
    assert_eq!(vision.after.map(|share| share.percent), Some(50.0));
    // Every team's fraction moves when one weight does.
    assert_eq!(report.summary.teams_affected, 3);
    assert!(danger_kinds(&report).contains(&DangerKind::QuotaReduction), "{:?}", report.dangers);
    assert!(report.headline().starts_with("3 teams affected"), "{}", report.headline());
}

#[test]
fn a_changed_template_override_is_flagged_for_review_as_code() {
    let fixture = Fixture::cluster();
    fixture.edit("placid.kdl", "cluster=\"ml\"", "cluster=\"ml\" templates=\"slurm-templates\"");
    fixture.write("slurm-templates/submit.sh.j2", "#!/bin/sh\n# {{ plan }}\n");
    fixture.commit("a submit template override");
    fixture.branch("base");
    // A comment only: the scripts stay the same, the code that renders them does not.
    fixture.write("slurm-templates/submit.sh.j2", "#!/bin/sh\n{# reviewed? #}# {{ plan }}\n");
    fixture.commit("the override changes");
    let report = fixture.diff_commits("base", "HEAD");
    assert_eq!(report.outcome, Outcome::Changes);
    assert_eq!(danger_kinds(&report), [DangerKind::TemplateOverride], "{:?}", report.dangers);
    let comment = markdown::render(&report);
    assert!(comment.contains("**template overrides changed**: slurm-templates/submit.sh.j2 changed: review it as code"), "{comment}");
}

#[test]
fn identical_revisions_report_no_changes() {
    let fixture = Fixture::cluster();
    let report = fixture.diff_commits("HEAD", "main");
    assert_eq!(report.outcome, Outcome::NoChanges);
    assert!(markdown::render(&report).contains("No changes."));
}

#[test]
fn the_working_tree_is_the_default_head_with_uncommitted_changes() {
    let fixture = Fixture::cluster();
    fixture.edit("policy/tiers.kdl", "window=\"3m\"", "window=\"5m\"");
    let report = fixture.diff("HEAD", Revision::WorkingTree);
    assert_eq!(report.head.label, "working tree");
    assert_eq!(field(&report, ElementKind::Tier, "P1", "preemption"), (Some("window 3m, requeue"), Some("window 5m, requeue")));
    assert_eq!(danger_kinds(&report), vec![DangerKind::PreemptionChange]);
    let plain = terminal::render(&report, Colour::Never);
    assert!(plain.contains("! preemption change: tier P1: preemption window 3m, requeue → window 5m, requeue"), "{plain}");
    assert!(!plain.contains('\x1b'));
    assert!(terminal::render(&report, Colour::Always).contains("\x1b["));
}

#[test]
fn a_node_moving_domain_is_reported_with_its_pools() {
    let fixture = Fixture::cluster();
    fixture.edit(
        "inventory/nvl-a.kdl",
        "node \"rv-a-04\" arch=\"riscv64\" rack=\"r1\" chassis=\"c2\" nvlink-domain=\"nvl-a\"",
        "node \"rv-a-04\" arch=\"riscv64\" rack=\"r1\" chassis=\"c4\" nvlink-domain=\"nvl-b\"",
    );
    fixture.commit("move rv-a-04 to nvl-b");
    let report = fixture.diff_commits("HEAD~1", "HEAD");
    let moved = model(&report).node_moves.iter().find(|moved| moved.node == "rv-a-04").expect("rv-a-04 moves");
    assert_eq!(moved.domain, Some(("nvl-a".into(), "nvl-b".into())));
    assert_eq!(moved.left_pools, vec!["nvl-a".to_owned()]);
    assert_eq!(moved.joined_pools, vec!["mixed".to_owned(), "nvl-b".to_owned()]);
}

#[test]
fn a_priority_reorder_changes_who_preempts_whom() {
    let fixture = Fixture::cluster();
    fixture.edit("policy/tiers.kdl", "priority 100\n", "priority 600\n");
    fixture.commit("P2 above P1");
    let report = fixture.diff_commits("HEAD~1", "HEAD");
    let model = model(&report);
    assert_eq!(model.preemptions_gained, vec![Preempts { preemptor: "P2".into(), victim: "P1".into() }]);
    assert_eq!(model.preemptions_lost, vec![Preempts { preemptor: "P1".into(), victim: "P2".into() }]);
    assert_eq!(danger_kinds(&report), [DangerKind::PriorityReorder, DangerKind::PriorityReorder], "{:?}", report.dangers);
    // The PriorityClass is replaced (its value is in its name), which is not a deletion.
    assert_eq!(report.summary.deletions, 0);
    let files = report.artifacts.as_deref().unwrap_or_default();
    let class = |path: &str| files.iter().find(|file| file.path == path).map(|file| file.status);
    assert_eq!(class("kubernetes/priority/priorityclass.p2-100.yaml"), Some(Status::Removed));
    assert_eq!(class("kubernetes/priority/priorityclass.p2-600.yaml"), Some(Status::Added));
}

#[test]
fn a_renamed_namespace_ending_in_a_number_is_still_a_deletion() {
    // Only PriorityClasses carry a value in their name; a namespace `speech-1` becoming
    // `speech-2` deletes every workload in the old one.
    let fixture = Fixture::cluster();
    fixture.edit("policy/teams.kdl", "namespace \"speech-ml\"", "namespace \"speech-1\"");
    fixture.commit("numbered namespace");
    fixture.edit("policy/teams.kdl", "namespace \"speech-1\"", "namespace \"speech-2\"");
    fixture.commit("renumbered namespace");
    let report = fixture.diff_commits("HEAD~1", "HEAD");
    let messages: Vec<&str> = report.dangers.iter().map(|danger| danger.message.as_str()).collect();
    assert!(
        messages.contains(&"generated file kubernetes/namespaces/namespace.speech-1.yaml removed"),
        "the old namespace's removal is not flagged: {messages:?}"
    );
    assert!(report.summary.deletions >= 1);
}

#[test]
fn renamed_and_deleted_files_are_compared_by_meaning() {
    let fixture = Fixture::cluster();
    std::fs::rename(fixture.path("policy/plans.kdl"), fixture.path("policy/training-plans.kdl")).expect("rename");
    fixture.commit("rename plans.kdl");
    let renamed = fixture.diff_commits("HEAD~1", "HEAD");
    assert!(model(&renamed).is_empty(), "a rename changes no policy: {:?}", renamed.model);

    std::fs::remove_file(fixture.path("policy/alerts.kdl")).expect("delete");
    fixture.commit("drop monitoring");
    let deleted = fixture.diff_commits("HEAD~1", "HEAD");
    let removed: Vec<(ElementKind, &str, Status)> =
        model(&deleted).elements.iter().map(|element| (element.kind, element.name.as_str(), element.status)).collect();
    assert_eq!(
        removed,
        vec![
            (ElementKind::Metric, "budget-burn", Status::Removed),
            (ElementKind::Metric, "nvlink-utilization", Status::Removed),
            (ElementKind::Alert, "budget-burn", Status::Removed),
            (ElementKind::Alert, "nvlink-saturation", Status::Removed),
        ]
    );
}

#[test]
fn a_base_that_does_not_parse_is_reported_not_a_crash() {
    let fixture = Fixture::cluster();
    let good = fixture.read("policy/teams.kdl");
    fixture.write("policy/teams.kdl", "team \"vision\" { share 40\n");
    fixture.commit("broken teams");
    fixture.write("policy/teams.kdl", &good);
    fixture.commit("fix teams");
    let report = fixture.diff_commits("HEAD~1", "HEAD");
    assert_eq!(report.outcome, Outcome::Changes);
    assert!(!report.base.compiled());
    assert!(report.base.diagnostics.iter().any(|line| line.starts_with("policy/teams.kdl:")), "{:?}", report.base.diagnostics);
    assert!(report.model.is_none());
    assert!(markdown::render(&report).contains("does not compile"));

    let reversed = fixture.diff_commits("HEAD", "HEAD~1");
    assert_eq!(reversed.outcome, Outcome::HeadErrors);
    assert!(reversed.headline().contains("capacity check FAILED"), "{}", reversed.headline());
}

#[test]
fn a_plan_that_no_longer_fits_is_dangerous() {
    let fixture = Fixture::cluster();
    fixture.edit("policy/plans.kdl", "pool=\"nvl-b\" gpus=16", "pool=\"nvl-b\" gpus=64");
    fixture.commit("bigger training");
    let report = fixture.diff_commits("HEAD~1", "HEAD");
    assert_eq!(report.outcome, Outcome::HeadErrors);
    assert_eq!(model(&report).unplaceable_plans, vec!["vit-train".to_owned()]);
    assert_eq!(report.dangers.first().map(|danger| danger.kind), Some(DangerKind::Unplaceable));
}

#[test]
fn a_merge_commit_is_diffed_against_its_first_parent() {
    let fixture = Fixture::cluster();
    fixture.branch("feature");
    fixture.edit("policy/tiers.kdl", "window=\"2m\"", "window=\"4m\"");
    let main_commit = fixture.commit("P2 gets a longer window on main");

    fixture.repo.checkout("feature");
    fixture.edit("policy/teams.kdl", "share 30\n    cost-center \"research\"", "share 20\n    cost-center \"research\"");
    let feature_commit = fixture.commit("research shrinks");

    // Merge feature into main: main's tree plus feature's teams.kdl.
    fixture.repo.checkout("main");
    let feature_teams = fixture.repo.show(&feature_commit, "cluster/policy/teams.kdl");
    fixture.write("policy/teams.kdl", &feature_teams);
    fixture.repo.commit_with_parents("merge feature", &[&main_commit, &feature_commit]);

    let report = fixture.diff_commits("HEAD^1", "HEAD");
    let changed: Vec<&str> = model(&report).elements.iter().map(|element| element.name.as_str()).collect();
    assert_eq!(changed, vec!["research"], "only the feature's change, not main's");
    let both_sides = fixture.diff_commits("HEAD^2", "HEAD");
    assert!(model(&both_sides).elements.iter().any(|element| element.name == "P2"), "main's change, seen from feature");
}

#[test]
fn globbing_a_revision_never_loads_unrelated_blobs() {
    let fixture = Fixture::cluster();
    fixture.write("datasets/huge.bin", "not part of the policy");
    fixture.commit("unrelated data");
    // Remove the unrelated blob from the object database: a diff that loaded it would fail.
    let blob_id = fixture.repo.blob_id("not part of the policy");
    let loose = fixture.root.join(".git/objects").join(&blob_id[..2]).join(&blob_id[2..]);
    std::fs::remove_file(loose).expect("remove loose blob");
    std::fs::remove_dir_all(fixture.path("datasets")).expect("clean work tree");
    fixture.edit("policy/teams.kdl", "share 40", "share 45");
    let report = fixture.diff("HEAD", Revision::WorkingTree);
    assert_eq!(report.outcome, Outcome::Changes, "base: {:?}", report.base.diagnostics);
}

#[test]
fn an_unknown_revision_is_an_error_not_a_panic() {
    let fixture = Fixture::cluster();
    let error = diff(&DiffRequest {
        dir: fixture.project(),
        base: Revision::Commit("no-such-branch".into()),
        head: Revision::WorkingTree,
        trace: None,
    })
    .expect_err("an unknown revision fails");
    assert!(error.to_string().contains("no-such-branch"), "{error}");
}

/// The realistic changes whose PR comments are snapshotted.
fn scenario(name: &str) -> DiffReport {
    let fixture = Fixture::cluster();
    fixture.branch("main-before");
    match name {
        "share-change" => fixture.edit("policy/teams.kdl", "share 40", "share 60"),
        "node-moves-domain" => fixture.edit(
            "inventory/nvl-a.kdl",
            "node \"rv-a-04\" arch=\"riscv64\" rack=\"r1\" chassis=\"c2\" nvlink-domain=\"nvl-a\"",
            // Its rack and chassis move with it: levels that do not nest are refused (E140).
            "node \"rv-a-04\" arch=\"riscv64\" rack=\"r2\" chassis=\"c4\" nvlink-domain=\"nvl-b\"",
        ),
        "preemption-window" => fixture.edit("policy/tiers.kdl", "window=\"3m\"", "window=\"5m\""),
        "new-plan" => {
            let mut plans = fixture.read("policy/plans.kdl");
            plans.push_str(
                "\n// Pattern D: speech distillation on the x86 rack.\nplan \"asr-distill\" team=\"speech\" {\n    stage \"distill\" tier=\"P2\" class=\"data-parallel\" pool=\"x86\" gpus=4 trials=2\n}\n",
            );
            fixture.write("policy/plans.kdl", &plans);
        }
        other => panic!("unknown scenario {other}"),
    }
    fixture.commit(name);
    fixture.branch("pr");
    fixture.diff_commits("main-before", "pr")
}

#[test]
fn pull_request_comments_for_realistic_changes() {
    for name in ["share-change", "node-moves-domain", "preemption-window", "new-plan"] {
        let report = scenario(name);
        assert_eq!(report.outcome, Outcome::Changes, "{name}: {}", report.headline());
        insta::assert_snapshot!(format!("{name}.md"), markdown::render(&report));
        insta::assert_snapshot!(format!("{name}.json"), json::render(&report));
    }
}

#[test]
fn verify_names_hand_edited_missing_and_extra_files() {
    let out = tempfile::tempdir().expect("temp dir");
    let build = placid_tests::build_clean("cluster");
    placid_driver::output::write_atomically(out.path(), &build.artifacts).expect("write output");
    assert_eq!(verify(out.path(), &build.artifacts).expect("verify"), Vec::<Finding>::new());

    std::fs::write(out.path().join("kubernetes-extra.yaml"), "kind: ConfigMap\n").expect("extra file");
    let manifest = out.path().join(placid_driver::build::MANIFEST);
    let mut edited = std::fs::read_to_string(&manifest).expect("manifest");
    edited.push_str("\n// edited by hand\n");
    std::fs::write(&manifest, edited).expect("hand edit");
    let findings = verify(out.path(), &build.artifacts).expect("verify");
    let problems: Vec<(&str, Problem)> = findings.iter().map(|finding| (finding.path.as_str(), finding.problem)).collect();
    assert_eq!(problems, vec![("kubernetes-extra.yaml", Problem::Extra), ("manifest.json", Problem::HandEdited)]);

    std::fs::remove_file(&manifest).expect("delete");
    let findings = verify(out.path(), &build.artifacts).expect("verify");
    assert!(findings.contains(&Finding { path: "manifest.json".into(), problem: Problem::Missing }), "{findings:?}");
}

/// `--simulate`: a bigger P0 reservation shortens P0's waits on the example's day, the
/// table says so, and a trace naming a team the head removed reports the head's error.
#[test]
fn what_if_replays_one_trace_through_base_and_head() {
    let fixture = Fixture::cluster();
    let trace = || Some(fixture.path("traces/day.csv"));
    fixture.edit("policy/tiers.kdl", "reserve pool=\"nvl-a\" gpus=12", "reserve pool=\"nvl-a\" gpus=16");
    let report =
        diff(&DiffRequest { dir: fixture.project(), base: Revision::Commit("HEAD".into()), head: Revision::WorkingTree, trace: trace() })
            .expect("diff runs");
    let what_if = report.what_if.as_ref().expect("a what-if section");
    assert!(what_if.errors.is_empty(), "{:?}", what_if.errors);
    let p0 = what_if.changes.iter().find(|change| change.measure == "wait p95, tier P0").expect("a P0 row");
    assert_ne!(p0.before, p0.after, "a larger reservation changes P0's waits");
    let overruns = what_if.changes.iter().find(|change| change.measure == "team-days over budget").expect("an overrun row");
    assert_eq!((overruns.before.as_str(), overruns.after.as_str()), ("0", "0"), "no team runs over its budget on that day");
    assert!(markdown::render(&report).contains("| **wait p95, tier P0** |"), "the changed row is bold");

    for file in ["policy/teams.kdl", "policy/plans.kdl", "policy/tests.kdl"] {
        let renamed = fixture.read(file).replace("team \"speech\"", "team \"speech2\"").replace("team=\"speech\"", "team=\"speech2\"");
        fixture.write(file, &renamed);
    }
    let report =
        diff(&DiffRequest { dir: fixture.project(), base: Revision::Commit("HEAD".into()), head: Revision::WorkingTree, trace: trace() })
            .expect("diff runs");
    let what_if = report.what_if.as_ref().expect("a what-if section");
    assert!(what_if.changes.is_empty());
    assert!(
        what_if.errors.iter().all(|error| error.starts_with("head: ")) && what_if.errors.iter().any(|error| error.contains("`speech`")),
        "{:?}",
        what_if.errors
    );
}

/// Names from a trace reach the pull-request comment and the terminal as text: a team named
/// to forge a heading, an image, a link, a mention and terminal escapes does none of it.
#[test]
fn forged_trace_names_are_escaped_in_every_medium() {
    let fixture = Fixture::cluster();
    let forged =
        "x\n## ✅ LGTM\n![t](https://tracker.example/p.gif) [go](https://evil.example) @everyone <img src=x> \u{1b}]0;owned\u{7}\u{1b}[2J";
    fixture.write("traces/forged.csv", &format!("job,submit,team,tier,gpus,run\none,0,\"{forged}\",P1,1,1h\n"));
    let report = diff(&DiffRequest {
        dir: fixture.project(),
        base: Revision::Commit("HEAD".into()),
        head: Revision::WorkingTree,
        trace: Some(fixture.path("traces/forged.csv")),
    })
    .expect("diff runs");
    let what_if = report.what_if.as_ref().expect("a what-if section");
    assert!(what_if.errors.iter().any(|error| error.contains("LGTM")), "the error quotes the name: {:?}", what_if.errors);
    let comment = markdown::render(&report);
    for live in ["\n## ✅", "![", "](https://", "[go]", "@everyone", "<img", "\u{1b}"] {
        assert!(!comment.contains(live), "{live:?} is live in the comment:\n{comment}");
    }
    let text = terminal::render(&report, Colour::Never);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    assert!(!text.contains("\n## ✅"), "{text}");
}

/// Cutting P0's reservation below what a production job asks makes the head reject it: the
/// what-if says so in a rejected row and names the job, instead of showing its vanished cost
/// and NVLink hours as a saving.
#[test]
fn a_job_the_head_rejects_is_named_with_a_rejected_row() {
    let fixture = Fixture::cluster();
    fixture.write("traces/p0.csv", "job,submit,team,tier,class,pool,gpus,run\nprod-12,0,vision,P0,model-parallel,nvl-a,12,1h\nprod-4,0,vision,P0,model-parallel,nvl-a,4,1h\n");
    fixture.edit("policy/tiers.kdl", "reserve pool=\"nvl-a\" gpus=12", "reserve pool=\"nvl-a\" gpus=10");
    let report = diff(&DiffRequest {
        dir: fixture.project(),
        base: Revision::Commit("HEAD".into()),
        head: Revision::WorkingTree,
        trace: Some(fixture.path("traces/p0.csv")),
    })
    .expect("diff runs");
    let what_if = report.what_if.as_ref().expect("a what-if section");
    assert!(what_if.errors.is_empty(), "{:?}", what_if.errors);
    let row = |measure: &str| {
        let change = what_if.changes.iter().find(|change| change.measure == measure).unwrap_or_else(|| panic!("a row {measure}"));
        (change.before.as_str(), change.after.as_str())
    };
    assert_eq!(row("jobs finished"), ("2", "1"));
    assert_eq!(row("jobs rejected"), ("0", "1"));
    assert_eq!(row("jobs rejected, tier P0"), ("0", "1"));
    assert_eq!(row("jobs unfinished"), ("0", "0"));
    let changed: Vec<(&str, &str, &str)> =
        what_if.jobs.iter().map(|job| (job.job.as_str(), job.before.as_str(), job.after.as_str())).collect();
    assert_eq!(changed, [("prod-12", "finished", "rejected (exceeds-quota)")]);
    assert_eq!(what_if.jobs_changed, 1);
    let comment = markdown::render(&report);
    assert!(comment.contains("| **jobs rejected, tier P0** | `0` | **`1`** |"), "{comment}");
    assert!(comment.contains("| `prod-12` | `finished` | **`rejected (exceeds-quota)`** |"), "{comment}");
    let text = terminal::render(&report, Colour::Never);
    assert!(text.contains("prod-12: finished → rejected (exceeds-quota)"), "{text}");
    // The cut is flagged, with what it did to P0's jobs beside it.
    // `--html`: one page with base and head overlaid on each chart, and the rejected job.
    let page = what_if.page.as_ref().expect("a page").as_ref().expect("drawn");
    for id in ["id=\"changes\"", "id=\"job-changes\"", "id=\"allocation\"", "id=\"queue\"", "id=\"waits-P0\""] {
        assert!(page.contains(id), "{id} is on the page");
    }
    assert!(page.contains("\nbase\n") && page.contains("\nhead\n"), "both sides are in each legend");
    assert!(page.contains("<td>prod-12</td><td>finished</td><td>rejected (exceeds-quota)</td>"));
    assert!(!page.contains("src=") && !page.contains("<script"), "self-contained");
    let cut = report.dangers.iter().find(|danger| danger.kind == DangerKind::ReservationCut).expect("a reservation cut");
    assert_eq!(cut.message, "tier P0 reserves fewer GPUs in pool nvl-a: 12 → 10");
    assert_eq!(cut.effect.as_deref(), Some("tier P0 wait p95 1h → 0s, rejected 0 → 1, unfinished 0 → 0, preempted 0 → 0"));
    assert!(
        comment.contains("- ⚠️ **reservation cut**: tier P0 reserves fewer GPUs in pool nvl-a: 12 → 10\n  - simulated: tier P0 wait p95"),
        "{comment}"
    );
}

/// Cuts to budgets and checkpoint cadences are flagged with whose jobs they touch; raising
/// them is not.
#[test]
fn budget_and_checkpoint_cuts_are_risks() {
    let fixture = Fixture::cluster();
    fixture.edit("policy/tiers.kdl", "budget daily=(usd)4000", "budget daily=(usd)3000");
    fixture.edit("policy/tiers.kdl", "checkpoint every=\"15m\"", "checkpoint every=\"1h\"");
    fixture.edit("policy/tiers.kdl", "checkpoint every=\"30m\" incremental=#true", "checkpoint every=\"10m\" incremental=#true");
    let report = fixture.diff("HEAD", Revision::WorkingTree);
    let risks: Vec<(DangerKind, &str)> = report
        .dangers
        .iter()
        .filter(|danger| matches!(danger.kind, DangerKind::BudgetCut | DangerKind::CheckpointSparser | DangerKind::ReservationCut))
        .map(|danger| (danger.kind, danger.message.as_str()))
        .collect();
    assert_eq!(
        risks,
        [
            (DangerKind::BudgetCut, "tier P2 daily budget (usd)4000.00 → (usd)3000.00"),
            (DangerKind::CheckpointSparser, "tier P1 checkpoints every 15m → every 1h"),
        ]
    );
}

/// The changes a reviewer must see that the diff once missed: a route's tier, a tier's
/// `max-time`, a stage's `time=` and `max-time=`, the extender's settings.
#[test]
fn routes_limits_and_extender_settings_are_reported() {
    let fixture = Fixture::cluster();
    fixture.edit("policy/routes.kdl", "route tag=\"sweep\" tier=\"P2\"", "route tag=\"sweep\" tier=\"P1\"");
    fixture.edit("policy/tiers.kdl", "max-time \"2d\"", "max-time \"1d\"");
    fixture.edit(
        "policy/plans.kdl",
        "gpus=1 after=\"train\" time=\"20m\" max-time=\"1h\"",
        "gpus=1 after=\"train\" time=\"30m\" max-time=\"2h\"",
    );
    fixture.edit("placid.kdl", "ignorable=#false", "ignorable=#true");
    let report = fixture.diff("HEAD", Revision::WorkingTree);
    let (before, after) = field(&report, ElementKind::Route, "sweep", "tier");
    assert_eq!((before, after), (Some("P2"), Some("P1")));
    assert_eq!(field(&report, ElementKind::Tier, "P1", "max-time"), (Some("2d"), Some("1d")));
    let (before, after) = field(&report, ElementKind::Plan, "vit-train", "stage eval");
    assert!(before.is_some_and(|text| text.contains("time=20m max-time=1h")), "{before:?}");
    assert!(after.is_some_and(|text| text.contains("time=30m max-time=2h")), "{after:?}");
    let (before, after) = field(&report, ElementKind::Project, "ml-training", "extender");
    assert!(before.is_some_and(|text| text.contains("ignorable=false")) && after.is_some_and(|text| text.contains("ignorable=true")));
}
