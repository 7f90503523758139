//! What a stage runs (`command`, `image`, `env`, `cpus`, `memory`, `workdir`): declared on a
//! stage, with its class's as the defaults, and the environment placid itself gives every
//! stage (docs/stages.md). [`Model::launch`] is the one place the two are combined, so the
//! Slurm scripts and the Kubernetes pods run the same thing.

use crate::model::{Model, Stage};
use crate::span::Spanned;
use crate::units::Bytes;

/// The prefix of the environment variables placid sets for a stage; a policy's own `env` may
/// not use it, so a stage can never override what placid tells it.
pub const RESERVED_ENV_PREFIX: &str = "PLACID_";

/// The variables placid sets in every stage, on both targets. Each is spelled once, here.
pub mod env {
    /// Seconds between checkpoints (tiers with `checkpoint`).
    pub const CHECKPOINT_EVERY: &str = "PLACID_CHECKPOINT_EVERY";
    /// `1` when checkpoints may be incremental, else `0` (tiers with `checkpoint`).
    pub const CHECKPOINT_INCREMENTAL: &str = "PLACID_CHECKPOINT_INCREMENTAL";
    /// The directory a trial keeps its checkpoints in; the same after a requeue.
    pub const CHECKPOINT_DIR: &str = "PLACID_CHECKPOINT_DIR";
    /// The trial's number within its stage, from 0.
    pub const TRIAL: &str = "PLACID_TRIAL";
    /// The trial of the promoting stage this trial continues (stages fed by a promotion).
    pub const PROMOTED_TRIAL: &str = "PLACID_PROMOTED_TRIAL";
    /// The file a trial writes its `<metric> <number>` lines to.
    pub const RESULT_FILE: &str = "PLACID_RESULT_FILE";
    /// The directory of every trial's results.
    pub const RESULTS_DIR: &str = "PLACID_RESULTS_DIR";
    /// On Slurm, the command of a stage that declares none (a warning, E173).
    pub const STAGE_COMMAND: &str = "PLACID_STAGE_COMMAND";
}

/// One environment variable of a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvVar {
    /// Its name, checked: `[A-Za-z_][A-Za-z0-9_]*`, not starting with [`RESERVED_ENV_PREFIX`].
    pub name: Spanned<String>,
    /// Its value, with no control characters.
    pub value: String,
}

/// What a stage runs, or a class's defaults for it. Every field is optional: a stage takes
/// what it does not say from its class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Launch {
    /// The program and its arguments, run without a shell.
    pub command: Option<Spanned<Vec<String>>>,
    /// The container image (Kubernetes).
    pub image: Option<Spanned<String>>,
    /// Environment variables, sorted by name, each name once.
    pub env: Vec<EnvVar>,
    /// CPU cores per node (per pod) of one trial.
    pub cpus: Option<Spanned<u32>>,
    /// Memory per node (per pod) of one trial.
    pub memory: Option<Spanned<Bytes>>,
    /// The working directory the command starts in.
    pub workdir: Option<Spanned<String>>,
}

impl Launch {
    /// `self` where it says something, else `defaults`; variables of both, `self`'s winning
    /// where a name is in both.
    pub fn over(&self, defaults: &Launch) -> Launch {
        let mut env = self.env.clone();
        for default in &defaults.env {
            if !env.iter().any(|variable| variable.name.value == default.name.value) {
                env.push(default.clone());
            }
        }
        env.sort_by(|a, b| a.name.value.cmp(&b.name.value));
        Launch {
            command: self.command.clone().or_else(|| defaults.command.clone()),
            image: self.image.clone().or_else(|| defaults.image.clone()),
            env,
            cpus: self.cpus.clone().or_else(|| defaults.cpus.clone()),
            memory: self.memory.clone().or_else(|| defaults.memory.clone()),
            workdir: self.workdir.clone().or_else(|| defaults.workdir.clone()),
        }
    }
}

/// How one trial of a stage spreads over nodes: the Slurm job's `--nodes` and the
/// Kubernetes gang's pods. `cpus` and `memory` ([`Launch`]) are asked of each of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gang {
    /// Nodes (pods) of one trial.
    pub nodes: u32,
    /// GPUs on each, rounded up where they do not divide evenly.
    pub gpus_per_node: u32,
    /// Whether the GPUs fill the nodes exactly: one node, or whole nodes of the pool's smallest
    /// size. Otherwise Slurm is given the total over the nodes (it may place them unevenly)
    /// and each Kubernetes pod the rounded-up count.
    pub exact: bool,
}

impl Model {
    /// What `stage` runs: its own settings over its class's.
    pub fn launch(&self, stage: &Stage) -> Launch {
        match &stage.class {
            Some(class) => stage.launch.over(&self.class(class.value).launch),
            None => stage.launch.clone(),
        }
    }

    /// The gang of one trial of `stage`: one node when its GPUs fit the smallest GPU node of
    /// its pool, else as many nodes as the GPUs need at that size, the GPUs spread evenly.
    /// The smallest node sets the size so that any of the pool's GPU nodes can be one of them.
    pub fn gang(&self, stage: &Stage) -> Gang {
        let smallest =
            self.pool(stage.pool.value).nodes.iter().map(|node| self.node(*node).gpu_count()).filter(|count| *count > 0).min().unwrap_or(1);
        let gpus = stage.gpus.value.max(1);
        let nodes = gpus.div_ceil(smallest);
        let gpus_per_node = gpus.div_ceil(nodes);
        Gang { nodes, gpus_per_node, exact: nodes == 1 || gpus.is_multiple_of(smallest) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;

    fn variable(name: &str, value: &str) -> EnvVar {
        EnvVar { name: Spanned::new(name.to_owned(), Span::DETACHED), value: value.to_owned() }
    }

    #[test]
    fn a_stage_overrides_its_class_field_by_field_and_variable_by_variable() {
        let class = Launch {
            command: Some(Spanned::new(vec!["train".to_owned()], Span::DETACHED)),
            image: Some(Spanned::new("img:1".to_owned(), Span::DETACHED)),
            env: vec![variable("A", "class"), variable("B", "class")],
            cpus: Some(Spanned::new(4, Span::DETACHED)),
            ..Launch::default()
        };
        let stage = Launch {
            command: Some(Spanned::new(vec!["eval".to_owned(), "--fast".to_owned()], Span::DETACHED)),
            env: vec![variable("B", "stage"), variable("C", "stage")],
            ..Launch::default()
        };
        let launch = stage.over(&class);
        assert_eq!(launch.command.map(|command| command.value), Some(vec!["eval".to_owned(), "--fast".to_owned()]));
        assert_eq!(launch.image.map(|image| image.value).as_deref(), Some("img:1"));
        assert_eq!(launch.cpus.map(|cpus| cpus.value), Some(4));
        let env: Vec<(&str, &str)> = launch.env.iter().map(|v| (v.name.value.as_str(), v.value.as_str())).collect();
        assert_eq!(env, [("A", "class"), ("B", "stage"), ("C", "stage")]);
    }
}
