//! The compile pipeline: load, check, emit every enabled target (as far as a command's
//! [`Stage`] needs), and the manifest of hashes the output tree carries; `output` writes it.
//! Output is deterministic: artifacts are sorted by path and nothing depends on time.

use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::lower::read_error;
use placid_lang::source::{MAX_POLICY_BYTES, Sources, World};
use placid_targets::{Artifact, Inputs, TargetKind};
use sha2::{Digest, Sha256};

use placid_lang::checked::{Checked, Verdict};

/// A compiled project: the model, its sources, diagnostics and (when clean) artifacts. The
/// model `M` is the checks' [`Verdict`] as [`compile`] returns it, or, in a [`Clean`] build,
/// the [`Checked`] model that commands going on from a build (scoring, `--stdout`) hand to
/// targets without checking it again.
pub struct Build<M = Verdict> {
    /// Every source file read.
    pub sources: Sources,
    /// The model, checked or rejected (then possibly partial).
    pub model: M,
    /// Diagnostics of lowering, checking and emitting.
    pub diagnostics: Diagnostics,
    /// Artifacts sorted by path, including the manifest; empty when there are errors.
    pub artifacts: Vec<Artifact>,
}

/// A build without errors: its model checked, every selected artifact emitted.
pub type Clean = Build<Checked>;

impl Build {
    /// The build as a [`Clean`] one, or itself (boxed, as errors are kept small) when it has
    /// errors.
    pub fn clean(self) -> Result<Clean, Box<Build>> {
        let Build { sources, model, diagnostics, artifacts } = self;
        match model {
            Verdict::Checked(model) if !diagnostics.has_errors() => Ok(Build { sources, model, diagnostics, artifacts }),
            model => Err(Box::new(Build { sources, model, diagnostics, artifacts })),
        }
    }
}

/// Which targets to emit.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Only these targets (all enabled ones when empty).
    pub only: Vec<TargetKind>,
}

/// The path of the manifest inside the output tree.
pub const MANIFEST: &str = "manifest.json";

/// How far [`compile_to`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Load and check, with the selected targets' warnings; nothing emitted (`placid build
    /// --stdout`, which emits its one stream itself).
    Checked,
    /// Every diagnostic emitting the selected targets would report, without their artifacts:
    /// nothing is written (`placid check`).
    Validated,
    /// The artifacts and their manifest, ready to be written.
    Tree,
}

/// Loads, checks and emits the project `world` provides.
pub fn compile(world: &dyn World, selection: &Selection) -> Build {
    compile_to(world, selection, Stage::Tree)
}

/// [`compile`], up to `stage`.
pub fn compile_to(world: &dyn World, selection: &Selection, stage: Stage) -> Build {
    let compilation = placid_lang::load(world);
    let (model, diagnostics) = placid_check::check(compilation.model, compilation.diagnostics);
    let mut build = Build { sources: compilation.sources, model, diagnostics, artifacts: Vec::new() };
    let Some(model) = build.model.checked() else { return build };
    let inputs = match target_inputs(world, model, &mut build.sources) {
        Ok(inputs) => inputs,
        Err(diagnostics) => {
            build.diagnostics.extend(diagnostics);
            build.diagnostics.sort();
            return build;
        }
    };
    let mut artifacts = Vec::new();
    for target in TargetKind::ALL.iter().copied().filter(|target| target.enabled(model)) {
        if !selection.only.is_empty() && !selection.only.contains(&target) {
            continue;
        }
        build.diagnostics.extend(target.warnings(model));
        let emitted = match stage {
            Stage::Checked => continue,
            Stage::Validated => target.validate_with(model, &inputs).map(|()| Vec::new()),
            Stage::Tree => target.emit_with(model, &inputs),
        };
        match emitted {
            Ok(emitted) => artifacts.extend(emitted),
            Err(errors) => build.diagnostics.extend(errors),
        }
    }
    // Target warnings arrive after the checker's: one sort puts every diagnostic in source order.
    build.diagnostics.sort();
    if build.diagnostics.has_errors() {
        return build;
    }
    artifacts.sort();
    if stage == Stage::Tree {
        let manifest = manifest(&build.sources, &artifacts);
        // The manifest's path sorts among the others: put it where `sort` would.
        let at = artifacts.partition_point(|artifact| *artifact < manifest);
        artifacts.insert(at, manifest);
    }
    build.artifacts = artifacts;
    build
}

/// Reads the project files targets need (they do no IO): the Slurm template overrides in
/// the directory named by `target "slurm" templates=`, added to `sources` like every file a
/// build reads (so the source hash and `placid diff` see them). Templates are code run by
/// every submission: a directory with no file, a file that is no template name (a typo
/// would silently keep the built-in) and a template that is a symlink (one file standing in
/// for another) are errors (E048), all reported at once.
fn target_inputs(world: &dyn World, model: &placid_lang::model::Model, sources: &mut Sources) -> Result<Inputs, Diagnostics> {
    let mut inputs = Inputs::default();
    let Some(settings) = &model.project.slurm else { return Ok(inputs) };
    let Some(directory) = &settings.templates else { return Ok(inputs) };
    let span = directory.span;
    let mut diagnostics = Diagnostics::new();
    let known = [placid_targets::slurm::STAGE_TEMPLATE, placid_targets::slurm::SUBMIT_TEMPLATE];
    let paths = world.glob(&format!("{}/*", directory.value)).unwrap_or_else(|error| {
        diagnostics.push(read_error(&error, format!("cannot list the Slurm templates in `{}`", directory.value), span));
        Vec::new()
    });
    if paths.is_empty() && diagnostics.is_empty() {
        diagnostics.push(
            Diagnostic::error(Code::SlurmTemplateOverride, span, format!("`{}` is not a directory of Slurm templates", directory.value))
                .label("no file here")
                .help(format!("create the directory with the templates to override ({}), or remove `templates=`", known.join(", "))),
        );
    }
    for path in paths {
        let name = path.as_str().rsplit('/').next().unwrap_or_default();
        let Some(known_name) = known.iter().find(|known| **known == name) else {
            diagnostics.push(
                Diagnostic::error(Code::SlurmTemplateOverride, span, format!("`{path}` is not a Slurm template"))
                    .label("in this templates directory")
                    .maybe_help(placid_lang::suggest::help_for(name, known)),
            );
            continue;
        };
        if world.is_symlink(&path) {
            diagnostics.push(
                Diagnostic::error(Code::SlurmTemplateOverride, span, format!("Slurm template `{path}` is a symlink"))
                    .label("in this templates directory")
                    .help("templates are reviewed as code: put the template itself here, not a link to another file"),
            );
            continue;
        }
        match world.read(&path, MAX_POLICY_BYTES) {
            Ok(text) => {
                inputs.slurm_templates.overrides.insert((*known_name).to_owned(), text.clone());
                sources.add(path, text);
            }
            Err(error) => diagnostics.push(read_error(&error, format!("cannot read Slurm template `{path}`"), span)),
        }
    }
    if diagnostics.is_empty() { Ok(inputs) } else { Err(diagnostics) }
}

/// The hex sha256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A hash of every source (path and content), identifying the input of a build.
pub fn source_hash(sources: &Sources) -> String {
    let mut hasher = Sha256::new();
    let mut files: Vec<_> = sources.iter().map(|(_, file)| file).collect();
    files.sort_by(|left, right| left.path.cmp(&right.path));
    for file in files {
        hasher.update(file.path.as_str().as_bytes());
        hasher.update([0]);
        hasher.update((file.text.len() as u64).to_le_bytes());
        hasher.update(file.text.as_bytes());
    }
    hex::encode(hasher.finalize())
}

pub(crate) fn manifest(sources: &Sources, artifacts: &[Artifact]) -> Artifact {
    let files: serde_json::Map<String, serde_json::Value> =
        artifacts.iter().zip(hashes(artifacts)).map(|(artifact, hash)| (artifact.path.clone(), serde_json::Value::String(hash))).collect();
    let manifest = serde_json::json!({
        "placid-version": env!("CARGO_PKG_VERSION"),
        "source-hash": source_hash(sources),
        "artifacts": files,
    });
    let mut text = crate::render::json_text(&manifest);
    text.push('\n');
    Artifact::text(MANIFEST, text)
}

/// The [`sha256`] of each artifact, on two threads, each hashing half the bytes: hashing is
/// most of a manifest's cost (3 MB at 100 teams × 64 flavors).
fn hashes(artifacts: &[Artifact]) -> Vec<String> {
    let half = artifacts.iter().map(|artifact| artifact.bytes.len()).sum::<usize>() / 2;
    let mut hashed = 0;
    let split = artifacts
        .iter()
        .position(|artifact| {
            hashed += artifact.bytes.len();
            hashed > half
        })
        .unwrap_or(artifacts.len());
    let (first, second) = artifacts.split_at(split);
    let hash = |part: &[Artifact]| part.iter().map(|artifact| sha256(&artifact.bytes)).collect::<Vec<_>>();
    std::thread::scope(|scope| {
        let second = scope.spawn(|| hash(second));
        let mut hashes = hash(first);
        hashes.extend(second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        hashes
    })
}
