//! The checked model's token: a [`Model`] that lowered and passed every checker pass. It
//! lives here, below the checker, so that the targets can demand a checked model without
//! depending on the checker's passes (or, through them, on the engine); only
//! `placid_check::check` makes one (see [`Checked::from_checker`]).

use std::ops::Deref;

use crate::model::Model;

/// A model that lowered and passed every check without an error. Only `placid_check::check`
/// makes one, so a function that takes a `Checked` cannot be handed a model nobody checked.
#[derive(Clone, Debug)]
pub struct Checked(Model);

impl Checked {
    /// Wraps a model that `placid_check::check` found free of errors. Nothing else calls
    /// this (the tidy test greps for it): it is public only because the checker's passes
    /// live in a crate above this one, so that targets can take a `Checked` without
    /// depending on them.
    #[doc(hidden)]
    pub fn from_checker(model: Model) -> Checked {
        Checked(model)
    }

    /// The model, to change it (tests do, to vary one setting). A changed model proves
    /// nothing: it goes through `placid_check::check` again before a target sees it.
    pub fn into_model(self) -> Model {
        self.0
    }
}

impl Deref for Checked {
    type Target = Model;

    fn deref(&self) -> &Model {
        &self.0
    }
}

/// A model and what the checks made of it. Either way it dereferences to the model, which
/// commands read even when it has errors (drift, the semantic diff); only
/// [`Verdict::Checked`] reaches a target.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// No error in lowering or in any pass.
    Checked(Checked),
    /// Errors were found; the model may be partial (what failed to lower is left out).
    Rejected(Model),
}

impl Verdict {
    /// The checked model, unless it was rejected.
    pub fn checked(&self) -> Option<&Checked> {
        match self {
            Verdict::Checked(checked) => Some(checked),
            Verdict::Rejected(_) => None,
        }
    }

    /// [`Verdict::checked`], by value.
    pub fn into_checked(self) -> Option<Checked> {
        match self {
            Verdict::Checked(checked) => Some(checked),
            Verdict::Rejected(_) => None,
        }
    }
}

impl Deref for Verdict {
    type Target = Model;

    fn deref(&self) -> &Model {
        match self {
            Verdict::Checked(checked) => checked,
            Verdict::Rejected(model) => model,
        }
    }
}
