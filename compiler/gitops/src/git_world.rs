//! A [`World`] over one commit's tree: the project is read straight from the git object
//! database, with no checkout and no `git` process.
//!
//! Invariants: only trees are walked to expand a glob, and a blob is loaded only when its path
//! is read, so a diff of a large repository never touches files the project does not name.
//! Paths stay inside the project directory of the tree (a [`RelPath`] cannot contain `..`),
//! and symbolic links are refused rather than followed: in a commit they could point anywhere.

use std::cell::RefCell;
use std::collections::HashMap;

use git2::{ObjectType, Repository, Tree, TreeEntry, TreeWalkMode, TreeWalkResult};
use placid_lang::source::{RelPath, World, WorldError, glob_base};

/// The project directory of one commit.
pub struct GitWorld<'repo> {
    repo: &'repo Repository,
    /// The tree of the project directory (the commit's root tree, or a subtree of it).
    project_tree: Tree<'repo>,
    /// The directory trees loaded so far, by path below the project (`""` is the project).
    /// libgit2 caches no tree object over 4 KiB, so without this memo every read of
    /// `policy/x.kdl` inflated, hashed and parsed `policy/`'s whole tree again: a commit of
    /// 20,000 policy files cost 20,000 inflations of a 700 KB tree.
    directories: RefCell<HashMap<String, Tree<'repo>>>,
}

/// `git2`'s mode bits for a symbolic link entry.
pub(crate) const SYMLINK_MODE: i32 = 0o120000;

impl<'repo> GitWorld<'repo> {
    /// The project at `project_dir` (relative to the repository root, empty for the root) in
    /// the tree of `revision` (anything `git rev-parse` accepts: a branch, tag, `HEAD~2`).
    pub fn at_revision(repo: &'repo Repository, revision: &str, project_dir: &str) -> Result<GitWorld<'repo>, WorldError> {
        let commit = repo
            .revparse_single(revision)
            .and_then(|object| object.peel_to_commit())
            .map_err(|error| world_error(format!("cannot resolve revision `{revision}`: {}", error.message())))?;
        let root = commit.tree().map_err(|error| world_error(error.message().to_owned()))?;
        let project_tree = if project_dir.is_empty() {
            root
        } else {
            let entry = root
                .get_path(std::path::Path::new(project_dir))
                .map_err(|_| world_error(format!("`{project_dir}` does not exist at revision `{revision}`")))?;
            entry
                .to_object(repo)
                .and_then(|object| object.peel_to_tree())
                .map_err(|_| world_error(format!("`{project_dir}` is not a directory at revision `{revision}`")))?
        };
        Ok(GitWorld { repo, project_tree, directories: RefCell::default() })
    }

    /// The subtree holding every match of `pattern`: the directory named by its literal
    /// leading components, so `inventory/*.kdl` walks only `inventory/`.
    fn search_root(&self, pattern: &str) -> Option<(String, Tree<'repo>)> {
        let prefix = glob_base(pattern);
        if prefix.is_empty() {
            return Some((String::new(), self.project_tree.clone()));
        }
        Some((format!("{prefix}/"), self.directory(prefix)?))
    }

    /// The tree of the directory at `path` (relative to the project, `""` for the project),
    /// loaded once.
    fn directory(&self, path: &str) -> Option<Tree<'repo>> {
        if path.is_empty() {
            return Some(self.project_tree.clone());
        }
        if let Some(tree) = self.directories.borrow().get(path) {
            return Some(tree.clone());
        }
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        let tree = self.directory(parent)?.get_name(name)?.to_object(self.repo).ok()?.into_tree().ok()?;
        self.directories.borrow_mut().insert(path.to_owned(), tree.clone());
        Some(tree)
    }

    /// The entry at `path` (relative to the project), found in its directory's loaded tree.
    fn entry(&self, path: &RelPath) -> Option<TreeEntry<'static>> {
        let (directory, name) = path.as_str().rsplit_once('/').unwrap_or(("", path.as_str()));
        self.directory(directory)?.get_name(name).map(|entry| entry.to_owned())
    }
}

fn world_error(reason: String) -> WorldError {
    WorldError::unreadable(reason)
}

impl World for GitWorld<'_> {
    fn read(&self, path: &RelPath, max_bytes: u64) -> Result<String, WorldError> {
        let entry = self.entry(path).ok_or_else(|| world_error("no such file".into()))?;
        if entry.filemode() == SYMLINK_MODE {
            return Err(world_error("it is a symbolic link, which placid does not follow in git revisions".into()));
        }
        if entry.kind() != Some(ObjectType::Blob) {
            return Err(world_error("it is not a file".into()));
        }
        // The header says the size without inflating the object.
        let (size, _) =
            self.repo.odb().and_then(|odb| odb.read_header(entry.id())).map_err(|error| world_error(error.message().to_owned()))?;
        if size as u64 > max_bytes {
            return Err(WorldError::too_large(max_bytes));
        }
        let blob = self.repo.find_blob(entry.id()).map_err(|error| world_error(error.message().to_owned()))?;
        String::from_utf8(blob.content().to_vec()).map_err(|_| world_error("the file is not UTF-8 text".into()))
    }

    fn glob(&self, pattern: &str) -> Result<Vec<RelPath>, WorldError> {
        let relative = RelPath::new(pattern).map_err(|reason| world_error(reason.into()))?;
        let matcher = glob::Pattern::new(relative.as_str()).map_err(|error| world_error(format!("invalid pattern: {error}")))?;
        // `*` must not cross `/`, as in the file-system world where globs match per component.
        let options = glob::MatchOptions { case_sensitive: true, require_literal_separator: true, require_literal_leading_dot: false };
        let Some((prefix, tree)) = self.search_root(relative.as_str()) else {
            return Ok(Vec::new());
        };
        let mut paths = Vec::new();
        let mut refused = None;
        let walked = tree.walk(TreeWalkMode::PreOrder, |directory, entry| {
            if entry.kind() != Some(ObjectType::Blob) {
                return TreeWalkResult::Ok;
            }
            let Ok(name) = entry.name() else {
                return TreeWalkResult::Ok;
            };
            let path = format!("{prefix}{directory}{name}");
            if !matcher.matches_with(&path, options) {
                return TreeWalkResult::Ok;
            }
            if entry.filemode() == SYMLINK_MODE {
                refused = Some(format!("`{path}` is a symbolic link, which placid does not follow in git revisions"));
                return TreeWalkResult::Abort;
            }
            match RelPath::new(&path) {
                Ok(relative) => paths.push(relative),
                Err(reason) => refused = Some(format!("`{path}`: {reason}")),
            }
            TreeWalkResult::Ok
        });
        if let Some(reason) = refused {
            return Err(WorldError::outside_root(reason));
        }
        walked.map_err(|error| world_error(error.message().to_owned()))?;
        paths.sort();
        Ok(paths)
    }

    fn is_symlink(&self, path: &RelPath) -> bool {
        self.entry(path).is_some_and(|entry| entry.filemode() == SYMLINK_MODE)
    }
}
