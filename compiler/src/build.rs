//! The build driver: load, check, emit every enabled target, and write the output tree
//! atomically (a temp dir beside the output, renamed into place) with a manifest of hashes.
//! Output is deterministic: artifacts are sorted by path and nothing depends on time.

use std::path::Path;

use placid_lang::codes::Code;
use placid_lang::diag::{Diagnostic, Diagnostics};
use placid_lang::lower::read_error;
use placid_lang::source::{MAX_POLICY_BYTES, Sources, World};
use placid_targets::{Artifact, Inputs, TargetKind};
use sha2::{Digest, Sha256};

use crate::check;

/// A compiled project: the model, its sources, diagnostics and (when clean) artifacts.
pub struct Build {
    /// Every source file read.
    pub sources: Sources,
    /// The checked model.
    pub model: placid_lang::model::Model,
    /// Diagnostics of lowering, checking and emitting.
    pub diagnostics: Diagnostics,
    /// Artifacts sorted by path, including the manifest; empty when there are errors.
    pub artifacts: Vec<Artifact>,
}

/// Which targets to emit.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Only these targets (all enabled ones when empty).
    pub only: Vec<TargetKind>,
}

/// The path of the manifest inside the output tree.
pub const MANIFEST: &str = "manifest.json";

/// Loads, checks and emits the project `world` provides.
pub fn compile(world: &dyn World, selection: &Selection) -> Build {
    let compilation = placid_lang::load(world);
    let mut diagnostics = compilation.diagnostics;
    diagnostics.extend(check::check(&compilation.model));
    diagnostics.sort();
    let mut build = Build { sources: compilation.sources, model: compilation.model, diagnostics, artifacts: Vec::new() };
    if build.diagnostics.has_errors() {
        return build;
    }
    let inputs = match target_inputs(world, &build.model, &mut build.sources) {
        Ok(inputs) => inputs,
        Err(diagnostics) => {
            build.diagnostics.extend(diagnostics);
            build.diagnostics.sort();
            return build;
        }
    };
    let mut artifacts = Vec::new();
    for target in TargetKind::ALL.iter().copied().filter(|target| target.enabled(&build.model)) {
        if !selection.only.is_empty() && !selection.only.contains(&target) {
            continue;
        }
        build.diagnostics.extend(target.warnings(&build.model));
        match target.emit_with(&build.model, &inputs) {
            Ok(emitted) => artifacts.extend(emitted),
            Err(errors) => build.diagnostics.extend(errors),
        }
    }
    // Migration phase scripts and runbooks come from the same plan as the Rollouts; they are
    // files for people and admins, not for Argo CD, so `--target kubernetes` leaves them out.
    if selection.only.is_empty() || selection.only.contains(&TargetKind::Slurm) {
        match placid_targets::migration::artifacts(&build.model) {
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
    artifacts.push(manifest(&build.sources, &artifacts));
    artifacts.sort();
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

fn manifest(sources: &Sources, artifacts: &[Artifact]) -> Artifact {
    let files: serde_json::Map<String, serde_json::Value> =
        artifacts.iter().map(|artifact| (artifact.path.clone(), serde_json::Value::String(sha256(&artifact.bytes)))).collect();
    let manifest = serde_json::json!({
        "placid-version": env!("CARGO_PKG_VERSION"),
        "source-hash": source_hash(sources),
        "artifacts": files,
    });
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    Artifact::text(MANIFEST, text)
}

/// Writes `artifacts` to `out` atomically: into a fresh temp dir beside `out`, then renamed
/// over it. On any error the previous `out` is left untouched.
pub fn write_atomically(out: &Path, artifacts: &[Artifact]) -> std::io::Result<()> {
    let parent = directory_of(out);
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::Builder::new().prefix(".placid-build-").tempdir_in(parent)?;
    for artifact in artifacts {
        let path = staging.path().join(&artifact.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, &artifact.bytes)?;
    }
    let staged = staging.keep();
    let backup = parent.join(format!(".placid-old-{}", std::process::id()));
    let had_previous = out.exists();
    if had_previous {
        std::fs::rename(out, &backup)?;
    }
    if let Err(error) = std::fs::rename(&staged, out) {
        if had_previous {
            let _ = std::fs::rename(&backup, out);
        }
        let _ = std::fs::remove_dir_all(&staged);
        return Err(error);
    }
    if had_previous {
        std::fs::remove_dir_all(&backup)?;
    }
    Ok(())
}

/// Writes one file through a temp file in its directory renamed over it, so a crash never
/// leaves it half-written (`placid fmt`, `placid inventory merge -o`).
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temp = tempfile::NamedTempFile::new_in(directory_of(path))?;
    std::io::Write::write_all(&mut temp, bytes)?;
    temp.persist(path).map(|_| ()).map_err(|error| error.error)
}

/// The directory `path` lives in: `.` for a bare file name.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}
