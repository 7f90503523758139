//! Real git repositories for the GitOps tests and benchmarks, made with the `git` command
//! line, the program users make their policy repositories with. git2 stays the dependency of
//! `placid-gitops` alone: what placid reads, it reads through its own code, and what the tests
//! write, they write the way a person would.
//!
//! Commits carry one fixed author and date, and git reads no user or system configuration,
//! so a repository is the same on every machine.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository in a directory of the caller's (usually a temp dir).
pub struct Repo {
    root: PathBuf,
}

impl Repo {
    /// `git init` in `root`, on branch `main`.
    pub fn init(root: &Path) -> Repo {
        let repo = Repo { root: root.to_path_buf() };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo
    }

    /// Runs `git args...` in the repository and returns its stdout; panics with git's
    /// stderr when it fails.
    pub fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "placid test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "1700000000 +0000")
            .env("GIT_COMMITTER_NAME", "placid test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_DATE", "1700000000 +0000")
            .output()
            .unwrap_or_else(|error| panic!("cannot run git (is it installed?): {error}"));
        assert!(output.status.success(), "git {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Stages every change of the work tree (additions, edits, deletions), commits it on the
    /// current branch and returns the commit's id.
    pub fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--allow-empty", "--no-verify", "--message", message]);
        self.object_id(&["rev-parse", "HEAD"])
    }

    /// The id git prints for `args` (`rev-parse`, `write-tree`, `commit-tree`...).
    fn object_id(&self, args: &[&str]) -> String {
        self.git(args).trim().to_owned()
    }

    /// A commit of the work tree with exactly `parents` (a merge when there are two), made
    /// the current branch's head.
    pub fn commit_with_parents(&self, message: &str, parents: &[&str]) -> String {
        self.git(&["add", "--all"]);
        let tree = self.object_id(&["write-tree"]);
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        for parent in parents {
            args.extend(["-p", parent]);
        }
        let commit = self.object_id(&args);
        self.git(&["update-ref", "HEAD", &commit]);
        commit
    }

    /// Points branch `name` at the current commit (creating or moving it).
    pub fn branch(&self, name: &str) {
        self.git(&["branch", "--force", name]);
    }

    /// Switches to branch `name`, discarding changes in the work tree.
    pub fn checkout(&self, name: &str) {
        self.git(&["checkout", "--quiet", "--force", name]);
    }

    /// The text of `path` at `revision`.
    pub fn show(&self, revision: &str, path: &str) -> String {
        self.git(&["show", &format!("{revision}:{path}")])
    }

    /// The id `bytes` would have as a blob.
    pub fn blob_id(&self, bytes: &str) -> String {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
        let file = dir.path().join("blob");
        std::fs::write(&file, bytes).unwrap_or_else(|error| panic!("write {}: {error}", file.display()));
        self.object_id(&["hash-object", &file.to_string_lossy()])
    }
}
