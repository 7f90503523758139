//! `placid build -o` never deletes what placid did not write: the project, its git work tree,
//! `/`, other people's directories, files and symlinks are refused; a previous output is
//! replaced whole; stale temp directories of a killed build are cleaned up.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temp directory holding a copy of the `cluster` example at `p/`.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster");
        let status = Command::new("cp").arg("-r").arg(example).arg(dir.path().join("p")).status().expect("cp");
        assert!(status.success());
        std::fs::write(dir.path().join("p/NOTES.md"), "my notes\n").expect("write notes");
        Fixture { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Runs `placid build p -o OUT EXTRA...` in the temp directory.
    fn build(&self, out: &Path, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_placid"))
            .current_dir(self.dir.path())
            .arg("build")
            .arg(self.path("p"))
            .arg("-o")
            .arg(out)
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .expect("run placid")
    }

    /// The project's files are all still there.
    fn assert_project_intact(&self) {
        for file in ["placid.kdl", "NOTES.md", "policy/tiers.kdl", "inventory"] {
            assert!(self.path("p").join(file).exists(), "p/{file} was deleted");
        }
        assert_eq!(std::fs::read_to_string(self.path("p/NOTES.md")).expect("notes"), "my notes\n");
    }

    /// Entries of the temp directory whose names start with `.placid`.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.path())
            .expect("list")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(".placid"))
            .collect()
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_refused(output: &Output, code: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains(code), "expected {code} in:\n{text}");
    assert!(text.contains("help:"), "expected a help line in:\n{text}");
}

#[test]
fn the_project_root_is_never_replaced() {
    let fixture = Fixture::new();
    let refused = fixture.build(&fixture.path("p"), &[]);
    assert_refused(&refused, "placid::E090");
    fixture.assert_project_intact();
    let forced = fixture.build(&fixture.path("p"), &["--force"]);
    assert_refused(&forced, "placid::E090");
    fixture.assert_project_intact();
    // The same directory spelt another way.
    let dotted = fixture.build(&fixture.path("p/policy/.."), &["--force"]);
    assert_refused(&dotted, "placid::E090");
    fixture.assert_project_intact();
}

#[test]
fn a_directory_inside_the_project_holding_sources_is_never_replaced() {
    let fixture = Fixture::new();
    for extra in [&[][..], &["--force"]] {
        let refused = fixture.build(&fixture.path("p/policy"), extra);
        assert_refused(&refused, "placid::E090");
        fixture.assert_project_intact();
    }
    // A fresh directory inside the project is where `placid build` (`.`, `-o out`) writes.
    let fresh = fixture.build(&fixture.path("p/out"), &[]);
    assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));
    assert!(fixture.path("p/out/manifest.json").is_file());
    fixture.assert_project_intact();
}

#[test]
fn a_directory_containing_the_project_is_never_replaced() {
    let fixture = Fixture::new();
    for extra in [&[][..], &["--force"]] {
        let refused = fixture.build(fixture.dir.path(), extra);
        assert_refused(&refused, "placid::E090");
        fixture.assert_project_intact();
        let root = fixture.build(Path::new("/"), extra);
        assert_refused(&root, "placid::E090");
        fixture.assert_project_intact();
    }
}

#[test]
fn git_work_trees_and_git_directories_are_never_replaced() {
    let fixture = Fixture::new();
    std::fs::create_dir(fixture.path(".git")).expect("mark the temp dir as a work tree");
    std::fs::write(fixture.path(".git/HEAD"), "ref: refs/heads/main\n").expect("write");
    let work_tree = fixture.build(fixture.dir.path(), &[]);
    assert_refused(&work_tree, "placid::E090");
    let git_dir = fixture.build(&fixture.path(".git"), &["--force"]);
    assert_refused(&git_dir, "placid::E090");
    let inside_git_dir = fixture.build(&fixture.path(".git/refs"), &["--force"]);
    assert_refused(&inside_git_dir, "placid::E090");
    assert!(fixture.path(".git/HEAD").is_file() && !fixture.path(".git/refs").exists());
    fixture.assert_project_intact();
    // `generated/` beside the project, committed in the same repository, is the GitOps layout.
    let generated = fixture.build(&fixture.path("generated"), &[]);
    assert_eq!(generated.status.code(), Some(0), "{}", stderr(&generated));
    // Another repository's work tree is refused even with --force.
    std::fs::create_dir_all(fixture.path("other/.git")).expect("another work tree");
    let other = fixture.build(&fixture.path("other"), &["--force"]);
    assert_refused(&other, "placid::E090");
    assert!(fixture.path("other/.git").is_dir());
    // A bare repository, and a directory holding a repository below it, likewise.
    for dir in ["bare.git/objects", "bare.git/refs/heads"] {
        std::fs::create_dir_all(fixture.path(dir)).expect("mkdir");
    }
    std::fs::write(fixture.path("bare.git/HEAD"), "ref: refs/heads/main\n").expect("write");
    assert_refused(&fixture.build(&fixture.path("bare.git"), &["--force"]), "placid::E090");
    assert!(fixture.path("bare.git/HEAD").is_file());
    std::fs::create_dir_all(fixture.path("checkouts/app/.git")).expect("a repository below");
    assert_refused(&fixture.build(&fixture.path("checkouts"), &["--force"]), "placid::E090");
    assert!(fixture.path("checkouts/app/.git").is_dir());
}

#[test]
fn a_directory_placid_did_not_write_needs_force() {
    let fixture = Fixture::new();
    std::fs::create_dir(fixture.path("home")).expect("mkdir");
    std::fs::write(fixture.path("home/thesis.tex"), "years of work\n").expect("write");
    let refused = fixture.build(&fixture.path("home"), &[]);
    assert_refused(&refused, "placid::E091");
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(std::fs::read_to_string(fixture.path("home/thesis.tex")).expect("untouched"), "years of work\n");

    // A manifest.json that placid did not write does not count as placid's.
    std::fs::write(fixture.path("home/manifest.json"), "{\"name\": \"my-package\"}\n").expect("write");
    let impostor = fixture.build(&fixture.path("home"), &[]);
    assert_refused(&impostor, "placid::E091");
    assert!(fixture.path("home/thesis.tex").is_file());

    // Nor does a manifest of placid's form that lists what is there with forged hashes.
    let forged = format!(
        "{{\"placid-version\": \"0.1.0\", \"source-hash\": \"{0}\", \"artifacts\": {{\"thesis.tex\": \"{0}\"}}}}\n",
        "ab".repeat(32)
    );
    std::fs::write(fixture.path("home/manifest.json"), forged).expect("write");
    assert_refused(&fixture.build(&fixture.path("home"), &[]), "placid::E091");
    assert!(fixture.path("home/thesis.tex").is_file());

    let forced = fixture.build(&fixture.path("home"), &["--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert!(fixture.path("home/manifest.json").is_file() && !fixture.path("home/thesis.tex").exists());
    assert_eq!(fixture.leftovers(), Vec::<String>::new());
}

#[test]
fn an_empty_directory_or_a_previous_output_is_replaced_whole() {
    let fixture = Fixture::new();
    let out = fixture.path("out");
    std::fs::create_dir(&out).expect("mkdir");
    let first = fixture.build(&out, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let second = fixture.build(&out, &[]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    // A file the manifest does not list is not placid's: only --force replaces it.
    std::fs::write(out.join("slurm/left-over.conf"), "from someone else\n").expect("write");
    assert_refused(&fixture.build(&out, &[]), "placid::E091");
    assert!(out.join("slurm/left-over.conf").exists());
    let forced = fixture.build(&out, &["--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert!(out.join("manifest.json").is_file());
    assert!(!out.join("slurm/left-over.conf").exists(), "the old tree was not replaced");
    assert_eq!(fixture.leftovers(), Vec::<String>::new());
}

#[test]
fn a_file_is_refused_and_left_as_it_was() {
    let fixture = Fixture::new();
    let file = fixture.path("out.txt");
    std::fs::write(&file, "not a directory\n").expect("write");
    for extra in [&[][..], &["--force"]] {
        let refused = fixture.build(&file, extra);
        assert_refused(&refused, "placid::E092");
        assert_eq!(std::fs::read_to_string(&file).expect("still a file"), "not a directory\n");
        assert_eq!(fixture.leftovers(), Vec::<String>::new());
    }
}

#[test]
fn a_symlink_is_refused() {
    let fixture = Fixture::new();
    let real = fixture.path("real");
    let first = fixture.build(&real, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let link = fixture.path("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let refused = fixture.build(&link, &[]);
    assert_refused(&refused, "placid::E092");
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink());
    assert!(real.join("manifest.json").is_file());
    assert_eq!(fixture.leftovers(), Vec::<String>::new());
}

#[test]
fn the_next_build_removes_temp_dirs_of_a_killed_build() {
    let fixture = Fixture::new();
    // A PID that is surely not running any more: a child that has exited and been reaped.
    let mut child = Command::new("true").spawn().expect("spawn");
    let dead = child.id();
    child.wait().expect("wait");
    let stale = fixture.path(&format!(".placid-build-{dead}-a1B2c3"));
    std::fs::create_dir_all(stale.join("slurm")).expect("stale staging dir");
    std::fs::write(stale.join("slurm/slurm.conf"), "half written\n").expect("write");
    // A build in progress (this test's own PID is alive) and a name that only looks similar.
    let running = fixture.path(&format!(".placid-build-{}-x9Y8z7", std::process::id()));
    std::fs::create_dir(&running).expect("running build's dir");
    let notes = fixture.path(".placid-notes");
    std::fs::create_dir(&notes).expect("other dir");

    let built = fixture.build(&fixture.path("out"), &[]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    assert!(!stale.exists(), "the stale temp dir of a killed build was left behind");
    assert!(running.is_dir(), "a live build's temp dir was removed");
    assert!(notes.is_dir(), "a directory that is not placid's was removed");
}
