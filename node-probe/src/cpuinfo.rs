//! `/proc/cpuinfo` as records: one per logical CPU, each a list of `key: value` fields.
//! The format differs per architecture and kernel (tabs or spaces, vendor-only keys, `hart isa`
//! containing a space), so the only rule applied is the kernel's: split each line at the
//! first `:` and trim both sides; blank lines separate records.

/// One record (one logical CPU on riscv64 and x86_64).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    fields: Vec<(String, String)>,
}

impl Record {
    /// The value of the first field named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(name, _)| name == key).map(|(_, value)| value.as_str())
    }
}

/// Splits the file into records; lines without `:` are ignored.
pub fn parse(text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut current = Record::default();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.fields.is_empty() {
                records.push(std::mem::take(&mut current));
            }
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            current.fields.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    if !current.fields.is_empty() {
        records.push(current);
    }
    records
}

/// The records that describe a logical CPU (they carry `processor`); arm64 and some vendor
/// kernels add a trailing record of machine-wide fields.
pub fn processors(records: &[Record]) -> impl Iterator<Item = &Record> {
    records.iter().filter(|record| record.get("processor").is_some_and(|value| value.parse::<u32>().is_ok()))
}
