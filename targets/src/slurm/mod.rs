//! The Slurm target: slurm.conf (policy part), the topology file, gres.conf, accounts.sh
//! (sacctmgr), job_submit.lua and per-plan sbatch scripts, for the release named in
//! `target "slurm" version=` ([`emit_with`]), and the phase scripts of every migration
//! ([`migrations`]), which are plain `scontrol` commands, the same for every release.
//!
//! Invariants: validation runs first and nothing is emitted when it fails; everything that
//! differs between releases comes from [`version::Profile`]; every artifact lives under
//! `slurm/`. See docs/targets/slurm.md for the mapping of each policy concept.

mod accounts;
pub mod billing;
pub(crate) mod conf;
mod gres;
mod lua;
pub mod migrations;
pub mod names;
mod promote;
mod reserved;
pub(crate) mod sbatch;
pub mod site;
#[cfg(test)]
mod tests;
mod topology;
mod validate;
pub mod version;

use std::collections::BTreeMap;

use placid_lang::checked::Checked;
use placid_lang::diag::Diagnostics;

use crate::Artifact;

pub use sbatch::{STAGE_TEMPLATE, SUBMIT_TEMPLATE, dependency_kind};

/// Admin overrides of the built-in sbatch templates, read by the compiler from the project's
/// `templates=` directory: file name (`stage.sbatch.j2`) -> template source.
#[derive(Clone, Debug, Default)]
pub struct SlurmTemplates {
    /// Override sources by template name; names that are not built-in templates are unused.
    pub overrides: BTreeMap<String, String>,
}

/// Emits the Slurm configuration of `model` with the built-in templates.
pub fn emit(model: &Checked) -> Result<Vec<Artifact>, Diagnostics> {
    emit_with(model, &SlurmTemplates::default())
}

/// What the Slurm output of `model` cannot express exactly, though it is emitted.
pub fn warnings(model: &Checked) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    if let Some(settings) = &model.project.slurm
        && let Some(warning) = topology::uneven_blocks(model, &version::Profile::of(settings.version), settings.span)
    {
        diagnostics.push(warning);
    }
    diagnostics
}

/// Emits the Slurm configuration of `model`, rendering plans with `templates`: everything the
/// release named in `target "slurm" version=` reads (the migration phase scripts come from
/// [`migrations::phase_scripts`]).
pub fn emit_with(model: &Checked, templates: &SlurmTemplates) -> Result<Vec<Artifact>, Diagnostics> {
    let Some(settings) = &model.project.slurm else { return Ok(Vec::new()) };
    let problems = validate::validate(model);
    if problems.has_errors() {
        return Err(problems);
    }
    let profile = version::Profile::of(settings.version);
    let version = settings.version.to_string();
    let mut artifacts = vec![
        Artifact::text("slurm/slurm.conf", conf::render(model, &profile, settings.accounting)),
        Artifact::text("slurm/gres.conf", gres::render(model, &version)),
        Artifact::text("slurm/job_submit.lua", lua::render(model, &version, settings.accounting)),
        Artifact::text("slurm/site-requirements.conf", site::render(&site::requirements(model), &version)),
    ];
    if settings.accounting {
        artifacts.push(Artifact::text("slurm/accounts.sh", accounts::render(model, &version, settings.cluster.as_str())));
    }
    if let Some((file, text)) = topology::render(model, &profile) {
        artifacts.push(Artifact::text(format!("slurm/{file}"), text));
    }
    artifacts.extend(sbatch::render(model, templates, settings.accounting, settings.span)?);
    artifacts.sort();
    Ok(artifacts)
}

/// A duration in Slurm's `[D-]HH:MM:SS` time format.
fn slurm_time(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let clock = format!("{:02}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60);
    if days > 0 { format!("{days}-{clock}") } else { clock }
}
