//! The `placid.meta` custom section: the JSON a host reads (before compiling the module) to
//! learn the row layout, the job parameters, where each value comes from, the predicate names
//! and the direction of the score.
//!
//! Invariant: written from a [`Program`] with fields in struct order (deterministic bytes);
//! [`Meta::check`] refuses any meta whose layout is not the dense one the emitter produces.
//! Names and sources are typed: a field's name is a catalogue [`Entry`] and its Kubernetes
//! source a [`Source`], each written as the string docs/wasm-abi.md specifies, so a meta that
//! names an unknown feature or source form does not parse.

use placid_lang::checked::Checked;
use placid_lang::expr::{Category, Entry, JobParam, NodeFeature, Type};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::abi;
use super::program::{MAX_PREDICATES, Program};
// `Source` is part of the meta's wire form; it is defined beside the functions that choose it.
pub use super::sources::Source;
use super::sources::{Origin, node_source, param_source};

/// The metadata of one plugin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// ABI version; equals the `placid_abi_version` global.
    pub abi: i32,
    /// The project's name.
    pub project: String,
    /// The score's name.
    pub policy: String,
    /// SHA-256 of the score's definition (name, direction, expressions, filters, penalties).
    pub source_sha256: String,
    /// `placid <version>` that emitted the module.
    pub compiler: String,
    /// `min` (lower wins) or `max`.
    pub direction: String,
    /// Bytes per node row: 8 per field.
    pub row_stride: u32,
    /// Bytes of the parameter block: 8 per parameter.
    pub params_size: u32,
    /// Row fields, in row order.
    pub node_fields: Vec<Field<NodeFeature>>,
    /// Job parameters, in block order.
    pub params: Vec<Field<JobParam>>,
    /// Filter names; bit `i` of a failure mask is `predicates[i]`.
    pub predicates: Vec<String>,
    /// Codes of the enumerated categorical values the fields use (value `i` is code `i`).
    pub categories: Vec<CategoryCodes>,
}

/// One f64 of a row (a [`NodeFeature`]) or of the parameter block (a [`JobParam`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound = "T: Entry")]
pub struct Field<T> {
    /// The feature or parameter, written by its full name (`node.gpus_free`, `job.comm`).
    #[serde(with = "entry_name")]
    pub name: T,
    /// Byte offset in the row or block.
    pub offset: u32,
    /// `number`, `bool` (non-zero = true) or a category name (a code).
    #[serde(rename = "type")]
    pub ty: String,
    /// Where placid's own tools take it from the inventory (node fields only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub inventory: Option<String>,
    /// Where a Kubernetes host takes it from.
    pub kubernetes: Source,
    /// Factor applied to a parsed numeric value.
    pub scale: f64,
}

impl<T: Entry> Field<T> {
    /// The field of `entry` at `slot`, read from `origin` on Kubernetes.
    fn new(slot: usize, entry: T, origin: Origin, inventory: Option<&str>) -> Field<T> {
        Field {
            name: entry,
            offset: 8 * slot as u32,
            ty: entry.ty().as_str().to_owned(),
            inventory: inventory.map(str::to_owned),
            kubernetes: origin.from,
            scale: origin.scale,
        }
    }
}

/// A field's name as its catalogue entry's full name.
mod entry_name {
    use placid_lang::expr::Entry;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Entry, S: Serializer>(entry: &T, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(entry.qualified_name())
    }

    pub fn deserialize<'de, T: Entry, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        let name = String::deserialize(deserializer)?;
        T::from_qualified_name(&name).ok_or_else(|| D::Error::custom(format!("unknown {} `{name}`", T::KIND)))
    }
}

/// The codes of one enumerated category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryCodes {
    /// The category (`comm`).
    pub name: String,
    /// Its values in code order.
    pub values: Vec<String>,
}

impl Meta {
    /// The meta of `program` in `model`.
    pub fn new(model: &Checked, program: &Program<'_>) -> Meta {
        let score = program.score;
        let prefix = placid_lang::labels::prefix(&model.project);
        let node_fields = program
            .node_fields
            .iter()
            .enumerate()
            .map(|(slot, feature)| Field::new(slot, *feature, node_source(*feature, prefix), Some(feature.inventory_source())))
            .collect();
        let params =
            program.params.iter().enumerate().map(|(slot, param)| Field::new(slot, *param, param_source(*param, prefix), None)).collect();
        let mut categories: Vec<Category> = program
            .node_fields
            .iter()
            .map(|feature| feature.ty())
            .chain(program.params.iter().map(|param| param.ty()))
            .filter_map(|ty| if let Type::Category(category) = ty { Some(category) } else { None })
            .filter(|category| category.levels().is_some())
            .collect();
        categories.sort();
        categories.dedup();
        Meta {
            abi: abi::ABI_VERSION,
            project: model.project.name.to_string(),
            policy: score.name.to_string(),
            source_sha256: source_hash(program),
            compiler: format!("placid {}", env!("CARGO_PKG_VERSION")),
            direction: score.direction.as_str().to_owned(),
            row_stride: program.row_stride() as u32,
            params_size: program.params_size() as u32,
            node_fields,
            params,
            predicates: score.filters.iter().map(|filter| filter.name.to_string()).collect(),
            categories: categories
                .into_iter()
                .map(|category| CategoryCodes {
                    name: category.as_str().to_owned(),
                    values: category.levels().unwrap_or_default().iter().map(|value| (*value).to_owned()).collect(),
                })
                .collect(),
        }
    }

    /// The JSON bytes of the custom section.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Parses and checks the custom section of an untrusted module.
    pub fn parse(bytes: &[u8]) -> Result<Meta, String> {
        let meta: Meta = serde_json::from_slice(bytes).map_err(|error| format!("`placid.meta` is not valid metadata: {error}"))?;
        meta.check()?;
        Ok(meta)
    }

    /// The node features of the rows, in row order.
    pub fn node_features(&self) -> Vec<NodeFeature> {
        self.node_fields.iter().map(|field| field.name).collect()
    }

    /// The job parameters of the block, in block order.
    pub fn job_params(&self) -> Vec<JobParam> {
        self.params.iter().map(|field| field.name).collect()
    }

    /// Whether lower scores win.
    pub fn prefers_min(&self) -> bool {
        self.direction == "min"
    }

    fn check(&self) -> Result<(), String> {
        if self.abi != abi::ABI_VERSION {
            return Err(format!("`placid.meta` declares ABI {}, this host speaks ABI {}", self.abi, abi::ABI_VERSION));
        }
        if self.direction != "min" && self.direction != "max" {
            return Err(format!("`placid.meta` direction `{}` is neither `min` nor `max`", self.direction));
        }
        if self.predicates.len() > MAX_PREDICATES {
            return Err(format!("`placid.meta` lists {} predicates, at most {MAX_PREDICATES} fit the failure mask", self.predicates.len()));
        }
        if !dense(&self.node_fields) || self.row_stride as usize != 8 * self.node_fields.len() {
            return Err("`placid.meta` row layout is not dense 8-byte fields".to_owned());
        }
        if !dense(&self.params) || self.params_size as usize != 8 * self.params.len() {
            return Err("`placid.meta` parameter layout is not dense 8-byte fields".to_owned());
        }
        Ok(())
    }
}

/// Whether field `i` of `fields` is the f64 at byte `8 * i`.
fn dense<T>(fields: &[Field<T>]) -> bool {
    fields.iter().enumerate().all(|(slot, field)| field.offset as usize == 8 * slot)
}

fn source_hash(program: &Program<'_>) -> String {
    let score = program.score;
    let mut hasher = Sha256::new();
    let mut line = |text: &str| {
        hasher.update(text.as_bytes());
        hasher.update(b"\n");
    };
    line(&format!("score {}", score.name));
    line(&format!("prefer {}", score.direction.as_str()));
    line(&format!("expr {}", score.expr.text));
    for filter in &score.filters {
        line(&format!("filter {} {}", filter.name, filter.expr.text));
    }
    for penalty in &score.penalties {
        line(&format!("penalty {:?} when={}", penalty.amount, penalty.when.text));
    }
    hex::encode(hasher.finalize())
}
