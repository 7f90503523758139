//! Job parameters from the command line (`--job gpus=4 --job comm=high`) or a JSON file
//! (`{"gpus": 4, "comm": "high"}`), checked against the catalogue: unknown names get a
//! suggestion, values must fit the parameter's type. Every refusal is a [`Code::JobInvalid`]
//! diagnostic.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::expr::{Category, Interner, JobParam, Type};
use placid_lang::span::Span;
use placid_lang::suggest;

use super::Codes;

/// Job parameters by name (without `job.`), as written.
pub type JobValues = BTreeMap<String, String>;

/// A refused job parameter, with how to write it instead.
fn invalid(message: String, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::JobInvalid, Span::DETACHED, message).help(help)
}

/// Parses `key=value` pairs.
pub fn from_pairs(pairs: &[String]) -> Result<JobValues, Diagnostic> {
    let mut values = JobValues::new();
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| invalid(format!("`{pair}` is not `name=value`"), "write each parameter as `--job name=value`"))?;
        let key = key.trim().strip_prefix("job.").unwrap_or(key.trim());
        values.insert(key.to_owned(), value.trim().to_owned());
    }
    check_names(&values)?;
    Ok(values)
}

/// Parses a JSON object of parameters.
pub fn from_json(text: &str) -> Result<JobValues, Diagnostic> {
    let object: BTreeMap<String, serde_json::Value> = serde_json::from_str(text).map_err(|error| {
        invalid(format!("the job file is not a JSON object: {error}"), "write the parameters as `{\"gpus\": 4, \"comm\": \"high\"}`")
    })?;
    let values: JobValues = object
        .into_iter()
        .map(|(key, value)| {
            let text = match value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
            (key, text)
        })
        .collect();
    check_names(&values)?;
    Ok(values)
}

fn check_names(values: &JobValues) -> Result<(), Diagnostic> {
    for key in values.keys() {
        if JobParam::lookup("job", key).is_none() {
            let help = suggest::help_for(key, JobParam::ALL.iter().map(|param| param.name()))
                .unwrap_or_else(|| "the job parameters are listed in docs/language.md".to_owned());
            return Err(invalid(format!("unknown job parameter `{key}`"), help));
        }
    }
    Ok(())
}

/// The value of one parameter from its text: numbers, `true`/`false`, categorical values
/// (enumerated ones by name, racks and domains interned). Missing values are NaN.
pub fn param_value(param: JobParam, text: Option<&str>, codes: &mut Codes) -> Result<f64, Diagnostic> {
    let Some(text) = text else {
        return Ok(f64::NAN);
    };
    let wrong = |expected: String| {
        invalid(format!("`job.{}` is {expected}, got `{text}`", param.name()), format!("give `job.{}` {expected}", param.name()))
    };
    match param.ty() {
        Type::Number => text.parse::<f64>().map_err(|_| wrong("a number".to_owned())),
        Type::Bool => match text {
            "true" => Ok(1.0),
            "false" => Ok(0.0),
            _ => Err(wrong("true or false".to_owned())),
        },
        Type::Category(category) => category_value(category, text, codes)
            .ok_or_else(|| wrong(format!("one of {}", category.levels().unwrap_or_default().join(", ")))),
    }
}

/// The code of a categorical value, accepting the spellings Kubernetes uses (`amd64`,
/// `on-demand`).
pub fn category_value(category: Category, text: &str, codes: &mut Codes) -> Option<f64> {
    if category.levels().is_none() {
        return Some(codes.code(category, text));
    }
    let canonical = match (category, text) {
        (Category::Arch, "amd64") => "x86_64",
        (Category::Arch, "arm64") => "aarch64",
        (Category::Capacity, "on-demand") => "on_demand",
        _ => text,
    };
    category.level_code(canonical).map(f64::from)
}

/// The parameter block for `params` (the plugin's layout).
pub fn params_block(params: &[JobParam], values: &JobValues, codes: &mut Codes) -> Result<Vec<f64>, Diagnostic> {
    params.iter().map(|param| param_value(*param, values.get(param.name()).map(String::as_str), codes)).collect()
}
