//! Artifacts (generated files) and the helpers every target shares to produce them.

/// One generated file: a `/`-separated path relative to the output root, and its bytes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Artifact {
    /// Path relative to the output root (`slurm/slurm.conf`).
    pub path: String,
    /// File content.
    pub bytes: Vec<u8>,
}

impl Artifact {
    /// A text artifact.
    pub fn text(path: impl Into<String>, text: impl Into<String>) -> Artifact {
        Artifact { path: path.into(), bytes: text.into().into_bytes() }
    }
}
