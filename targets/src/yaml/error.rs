//! The writer's two outcomes besides success: [`Error`], a value that could not be written as
//! YAML at all, which reaches the caller; and [`Unsupported`], content whose layout the block
//! writer leaves to serde_yaml, which never leaves this module.

use std::fmt::{self, Display};

use serde::ser;

/// Why a value could not be written as YAML. placid's own content always serialises, so this
/// is a bug in placid: it is carried up to the caller instead of becoming an empty document.
#[derive(Debug)]
pub enum Error {
    /// serde_yaml refused the value: its `Serialize` implementation failed.
    Serde(serde_yaml::Error),
    /// An object's content is not a mapping, so it has no fields to write after the header.
    NotAMapping,
}

impl Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Serde(error) => write!(formatter, "serde_yaml could not write the value: {error}"),
            Error::NotAMapping => formatter.write_str("the content is not a mapping of fields"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Serde(error) => Some(error),
            Error::NotAMapping => None,
        }
    }
}

impl From<serde_yaml::Error> for Error {
    fn from(error: serde_yaml::Error) -> Error {
        Error::Serde(error)
    }
}

/// Content the block writer does not lay out itself (see the module's invariants): the
/// caller then asks serde_yaml for the whole value, which also reports any real [`Error`].
#[derive(Debug)]
pub(super) struct Unsupported;

impl Display for Unsupported {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("content the YAML writer leaves to serde_yaml")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    /// A `Serialize` implementation's own error: serde_yaml, asked next, reports it.
    fn custom<T: Display>(_: T) -> Unsupported {
        Unsupported
    }
}
