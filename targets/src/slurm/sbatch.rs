//! Per-stage sbatch scripts and a per-plan submit script, rendered with minijinja from the
//! built-in templates or the admin's overrides (`templates=` in the project; the compiler
//! reads those files and passes their text in, since targets do no IO).
//!
//! Invariant: templates only see names and numbers from the model (no free text), and the
//! stage order in the submit script follows the plan's `after` edges, which the checker
//! guarantees point to earlier stages, so every dependency's job id exists when it is used.

use minijinja::{Environment, Value, context};
use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::model::{Model, Plan, Preemption, Stage};
use placid_lang::span::Span;

use super::{SlurmTemplates, names};
use crate::Artifact;

/// The built-in template of one stage.
pub const STAGE_TEMPLATE: &str = "stage.sbatch.j2";
/// The built-in template of a plan's submit script.
pub const SUBMIT_TEMPLATE: &str = "submit.sh.j2";

const BUILT_IN: &[(&str, &str)] =
    &[(STAGE_TEMPLATE, include_str!("templates/stage.sbatch.j2")), (SUBMIT_TEMPLATE, include_str!("templates/submit.sh.j2"))];

/// Renders every plan's scripts under `slurm/plans/<plan>/`.
pub fn render(model: &Model, templates: &SlurmTemplates, accounting: bool, span: Span) -> Result<Vec<Artifact>, Diagnostics> {
    let mut environment = Environment::new();
    let mut diagnostics = Diagnostics::new();
    for (name, built_in) in BUILT_IN {
        let source = templates.overrides.get(*name).map_or(*built_in, String::as_str);
        if let Err(error) = environment.add_template_owned(name.to_string(), source.to_owned()) {
            diagnostics.push(template_error(span, name, &error));
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let mut artifacts = Vec::new();
    for plan in &model.plans {
        let directory = format!("slurm/plans/{}", plan.name);
        let mut stage_values = Vec::new();
        for (index, stage) in plan.stages.iter().enumerate() {
            let file = format!("{}.sbatch", stage.name);
            match environment
                .get_template(STAGE_TEMPLATE)
                .and_then(|template| template.render(stage_context(model, plan, stage, accounting)))
            {
                Ok(text) => artifacts.push(Artifact::text(format!("{directory}/{file}"), with_final_newline(text))),
                Err(error) => diagnostics.push(template_error(stage.span, STAGE_TEMPLATE, &error)),
            }
            let after: Vec<usize> = stage.after.iter().map(|after| after.value).collect();
            stage_values.push(context! { index, name => stage.name.as_str(), file, after });
        }
        let team = model.team(plan.team.value);
        let submit = context! { plan => plan.name.as_str(), team => team.name.as_str(), stages => stage_values };
        match environment.get_template(SUBMIT_TEMPLATE).and_then(|template| template.render(submit)) {
            Ok(text) => artifacts.push(Artifact::text(format!("{directory}/submit.sh"), with_final_newline(text))),
            Err(error) => diagnostics.push(template_error(plan.span, SUBMIT_TEMPLATE, &error)),
        }
    }
    if diagnostics.is_empty() { Ok(artifacts) } else { Err(diagnostics) }
}

/// minijinja drops a template's final newline; scripts end with one.
fn with_final_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn template_error(span: Span, name: &str, error: &minijinja::Error) -> Diagnostic {
    Diagnostic::error(Code::SlurmTemplate, span, format!("sbatch template `{name}` failed: {error}"))
        .label("while rendering this")
        .help("fix the template in the project's Slurm templates directory, or remove it to use the built-in one")
}

fn stage_context(model: &Model, plan: &Plan, stage: &Stage, accounting: bool) -> Value {
    let tier = model.tier(stage.tier.value);
    let pool = model.pool(stage.pool.value);
    let team = model.team(plan.team.value);
    let mut constraint: Vec<String> = Vec::new();
    let (qos, partition) = if accounting {
        (Some(names::qos(tier)), names::partition(pool))
    } else {
        constraint.push(names::pool_feature(pool));
        (None, names::qos(tier))
    };
    if let Some(capacity) = stage.capacity {
        constraint.push(names::capacity_feature(capacity));
    }
    let class = stage.class.as_ref().map(|class| model.class(class.value));
    if let Some(class) = class {
        constraint.push(names::class_feature(class));
    }
    let gpus = stage.gpus.value;
    let per_node = pool.nodes.iter().map(|id| model.node(*id).gpu_count()).filter(|count| *count > 0).min().unwrap_or(1);
    let nodes = gpus.div_ceil(per_node).max(1);
    let gpus_per_node = if gpus <= per_node {
        Some(gpus)
    } else if gpus.is_multiple_of(per_node) {
        Some(per_node)
    } else {
        None
    };
    let (signal_seconds, requeue) = match tier.preemption.value {
        Preemption::Never => (tier.checkpoint.map(|checkpoint| checkpoint.every.seconds.min(600)), false),
        Preemption::Window { window, mode } => (Some(window.seconds.max(1)), mode == placid_lang::model::PreemptMode::Requeue),
    };
    context! {
        plan => plan.name.as_str(),
        stage => stage.name.as_str(),
        tier => tier.name.as_str(),
        class => class.map(|class| class.name.as_str()),
        account => names::team_account(team),
        qos,
        partition,
        constraint => constraint.join("&"),
        nodes,
        gpus,
        gpus_per_node,
        trials => stage.trials,
        signal_seconds,
        checkpoint_seconds => tier.checkpoint.map(|checkpoint| checkpoint.every.seconds),
        requeue,
    }
}
