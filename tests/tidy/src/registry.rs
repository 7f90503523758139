//! The diagnostic code registry as the tidy test sees it: each code's variant, number and
//! whether it is retired, read from `lang/src/codes.rs` as text (this crate depends on no
//! placid crate, so that a broken registry still leaves the rule able to say so).

/// One entry of the registry.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    /// The `Code` variant (`DomainTooSmall`).
    pub variant: String,
    /// The number after `E` (23).
    pub number: u16,
    /// The kebab-case name (`domain-too-small`).
    pub name: String,
    /// A retired code keeps its number so it is never reused, and is raised nowhere.
    pub retired: bool,
}

impl Entry {
    /// The code as the docs and the broken examples name it: `E023`.
    pub fn id(&self) -> String {
        format!("E{:03}", self.number)
    }
}

/// The entries of the `codes!` table in `text`: lines of the form
/// `    Variant = 23, "name", "summary",`.
pub fn entries(text: &str) -> Vec<Entry> {
    text.lines()
        .filter_map(|line| {
            let (variant, rest) = line.trim_start().split_once(" = ")?;
            if !variant.chars().next().is_some_and(|first| first.is_ascii_uppercase()) || !variant.chars().all(char::is_alphanumeric) {
                return None;
            }
            let (number, rest) = rest.split_once(',')?;
            let number = number.trim().parse().ok()?;
            let mut quoted = rest.split('"').skip(1).step_by(2);
            let name = quoted.next()?.to_owned();
            let summary = quoted.next()?;
            Some(Entry { variant: variant.to_owned(), number, name, retired: summary.starts_with("retired") })
        })
        .collect()
}
