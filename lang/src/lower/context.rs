//! The shared state of one lowering: where diagnostics go and the project's currency, which
//! every amount of money is read in. Its own module because both the KDL reader and the
//! syntax-free value checks (`values`) take it, and neither may depend on the other for it.

use crate::diag::{Diagnostic, Diagnostics};
use crate::units::Currency;

/// Shared state of one lowering: the diagnostics sink and the project's currency.
pub(crate) struct Cx {
    pub diagnostics: Diagnostics,
    pub currency: Currency,
}

impl Cx {
    pub fn new() -> Cx {
        Cx { diagnostics: Diagnostics::new(), currency: Currency::Usd }
    }

    pub fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }
}
