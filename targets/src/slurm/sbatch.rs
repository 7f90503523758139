//! Per-stage sbatch scripts and a per-plan submit script, rendered with minijinja from the
//! built-in templates or the admin's overrides (`templates=` in the project; the compiler
//! reads those files and passes their text in, since targets do no IO).
//!
//! Invariant: templates see names and numbers from the model, and free text (a stage's
//! command, environment and working directory, [`Model::launch`]) only as shell words quoted
//! by [`shell_word`], which lowering has checked hold no control character; and the stage
//! order in the submit script follows the plan's `after` edges, which the checker guarantees
//! point to earlier stages, so every dependency's job id exists when it is used.
//!
//! Overrides are code placid runs: every render is bounded in work (minijinja's fuel, which
//! also charges for the data a template creates, so `"x" * 1000000000` is refused before it
//! is built) and in output (a writer that refuses bytes past the limit). An overrun is E047
//! at the override's `templates=`.

use std::io::Write;

use minijinja::{Environment, ErrorKind, Value, context};
use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::model::{Dependency, Model, Plan, Preemption, Stage};
use placid_lang::span::Span;

use super::{SlurmTemplates, names, promote};
use crate::Artifact;
use crate::text::shell_word;

/// The directive of placid's stage template that makes `USR1` the job's checkpoint signal:
/// the playbooks signal only jobs whose batch script carries it, since `USR1` kills a shell
/// without a handler.
pub const CHECKPOINT_SIGNAL: &str = "#SBATCH --signal=B:USR1@";

/// The built-in template of one stage.
pub const STAGE_TEMPLATE: &str = "stage.sbatch.j2";
/// The built-in template of a plan's submit script.
pub const SUBMIT_TEMPLATE: &str = "submit.sh.j2";

const BUILT_IN: &[(&str, &str)] =
    &[(STAGE_TEMPLATE, include_str!("templates/stage.sbatch.j2")), (SUBMIT_TEMPLATE, include_str!("templates/submit.sh.j2"))];

/// The fuel one render may burn: minijinja charges about one per instruction executed and
/// one per 64 bytes a template creates, so this bounds a render's time (well under a second)
/// and memory (about 64 MB). The built-in templates burn about 100 per stage script, and
/// about 35 per stage of a plan for its submit script.
const TEMPLATE_FUEL: u64 = 1_000_000;

/// The largest script one render may write; the built-in templates write about 600 bytes
/// per stage script, and about 100 per stage of a plan for its submit script.
const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// Why a render failed.
enum Failure {
    /// The template does not render (an undefined filter, a type error).
    Template(minijinja::Error),
    /// It ran past one of the bounds, said in words.
    Limit(String),
}

/// An output that refuses to grow past [`MAX_SCRIPT_BYTES`].
#[derive(Default)]
struct Bounded {
    bytes: Vec<u8>,
    overrun: bool,
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_SCRIPT_BYTES {
            self.overrun = true;
            return Err(std::io::Error::other("the script is too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Renders template `name` with `context` within the fuel and output bounds.
fn render_bounded(environment: &Environment<'_>, name: &str, context: Value) -> Result<String, Failure> {
    let mut out = Bounded::default();
    let rendered = environment.get_template(name).and_then(|template| template.render_captured_to(context, &mut out).map(drop));
    match rendered {
        Ok(()) => Ok(String::from_utf8_lossy(&out.bytes).into_owned()),
        Err(_) if out.overrun => {
            Err(Failure::Limit(format!("writes more than {} of script", placid_lang::units::Bytes(MAX_SCRIPT_BYTES as u64))))
        }
        Err(error) if error.kind() == ErrorKind::OutOfFuel => Err(Failure::Limit(format!("runs out of its fuel ({TEMPLATE_FUEL})"))),
        Err(error) => Err(Failure::Template(error)),
    }
}

/// Renders every plan's scripts under `slurm/plans/<plan>/`.
pub fn render(model: &Model, templates: &SlurmTemplates, accounting: bool, span: Span) -> Result<Vec<Artifact>, Diagnostics> {
    let mut environment = Environment::new();
    environment.set_fuel(Some(TEMPLATE_FUEL));
    // A limit is the override's to answer for, so it is reported where `templates=` names it.
    let limit_span = model.project.slurm.as_ref().and_then(|settings| settings.templates.as_ref()).map_or(span, |templates| templates.span);
    let failed = |failure: Failure, name: &str, render_span: Span| match failure {
        Failure::Template(error) => template_error(render_span, name, &error),
        Failure::Limit(what) => Diagnostic::error(Code::SlurmTemplateLimit, limit_span, format!("sbatch template `{name}` {what}"))
            .label("templates directory named here")
            .help("overrides get bounded work and output: loop over less, or build smaller strings"),
    };
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
            match render_bounded(&environment, STAGE_TEMPLATE, stage_context(model, plan, stage, accounting)) {
                Ok(text) => artifacts.push(Artifact::text(format!("{directory}/{file}"), with_final_newline(text))),
                Err(failure) => diagnostics.push(failed(failure, STAGE_TEMPLATE, stage.span)),
            }
            let after: Vec<usize> = stage.after.iter().map(|after| after.value).collect();
            let depends: Vec<Value> = after.iter().map(|earlier| dependency(plan, *earlier)).collect();
            let promote = stage.promote.as_ref().map(|promote| {
                let file = promote::file(stage);
                let text = promote::render(model, plan, stage, promote, accounting);
                artifacts.push(Artifact::text(format!("{directory}/{file}"), text));
                file
            });
            stage_values.push(context! { index, name => stage.name.as_str(), file, after, depends, promote });
        }
        let team = model.team(plan.team.value);
        let submit = context! { plan => plan.name.as_str(), team => team.name.as_str(), stages => stage_values };
        match render_bounded(&environment, SUBMIT_TEMPLATE, submit) {
            Ok(text) => artifacts.push(Artifact::text(format!("{directory}/submit.sh"), with_final_newline(text))),
            Err(failure) => diagnostics.push(failed(failure, SUBMIT_TEMPLATE, plan.span)),
        }
    }
    if diagnostics.is_empty() {
        Ok(artifacts)
    } else {
        diagnostics.sort();
        Err(diagnostics)
    }
}

/// How stage `stage` of `plan` waits for its earlier stage `earlier` (the `--dependency`
/// kind submit.sh gives it): for the promotion step of a promoting stage, which must have
/// succeeded, `afterok`; for every trial of a stage of several, however they ended,
/// `afterany` (a preempted or cancelled trial must not stall the plan); for a single-trial
/// stage, its success, `afterok` (a dependency that can never be met is cancelled by
/// `kill_invalid_depend`, so nothing waits forever).
pub fn dependency_kind(plan: &Plan, earlier: usize) -> &'static str {
    let stage = &plan.stages[earlier];
    match stage.waited_for() {
        // The promotion step itself ran after every trial ended.
        Dependency::Ended if stage.promote.is_some() => "afterok",
        Dependency::Ended => "afterany",
        Dependency::Succeeded => "afterok",
    }
}

/// The dependency of a stage on `earlier`: its kind and the submit.sh variable holding the
/// job it waits for (the promotion step of a promoting stage).
fn dependency(plan: &Plan, earlier: usize) -> Value {
    let job = if plan.stages[earlier].promote.is_some() { format!("promote_{earlier}") } else { format!("job_{earlier}") };
    context! { kind => dependency_kind(plan, earlier), job }
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
        (Some(names::qos(tier)), super::billing::partition_list(model, pool, stage.class.as_ref().map(|class| model.class(class.value))))
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
    let gang = model.gang(stage);
    let (nodes, gpus_per_node) = (gang.nodes, gang.exact.then_some(gang.gpus_per_node));
    let (signal_seconds, requeue) = match tier.preemption.value {
        Preemption::Never => (tier.checkpoint.map(|checkpoint| checkpoint.every.seconds.min(600)), false),
        Preemption::Window { window, mode } => (Some(window.seconds.max(1)), mode == placid_lang::model::PreemptMode::Requeue),
    };
    let launch = model.launch(stage);
    let command = launch.command.as_ref().map(|command| command.value.iter().map(|word| shell_word(word)).collect::<Vec<_>>().join(" "));
    let env: Vec<String> = launch.env.iter().map(|variable| format!("{}={}", variable.name.value, shell_word(&variable.value))).collect();
    let workdir = launch.workdir.as_ref().map(|workdir| shell_word(&workdir.value));
    let memory = launch.memory.as_ref().map(|memory| {
        let (count, unit) = memory.value.request();
        format!("{count}{unit}")
    });
    // --time-min lets backfill start the trial in a gap shorter than its limit (Slurm may then
    // lower the limit down to it), so only a tier that backfills gets one.
    let time_min = stage.expected_time_below_limit(tier).filter(|_| tier.backfill).map(|time| super::slurm_time(time.seconds));
    // The first earlier stage that promotes trials: this stage's array tasks are its winners.
    let promoted_from = stage
        .after
        .iter()
        .map(|after| &plan.stages[after.value])
        .find(|earlier| earlier.promote.is_some())
        .map(|earlier| earlier.name.as_str());
    context! {
        promoted_from,
        checkpoint_incremental => tier.checkpoint.map(|checkpoint| checkpoint.incremental),
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
        time => super::slurm_time(stage.run_time_limit(tier).seconds),
        time_min,
        command,
        env,
        workdir,
        cpus => launch.cpus.as_ref().map(|cpus| cpus.value),
        memory,
        stage_command => placid_lang::model::env::STAGE_COMMAND,
    }
}
