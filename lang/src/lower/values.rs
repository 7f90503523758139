//! Checks of single values that do not depend on the syntax they were written in: names,
//! keywords, counts, quantities, amounts of money and labels. The KDL reader's `Value`
//! applies them once it holds a value of the right type; the inventory draft applies them to
//! what either inventory form read. So one mistake gives one diagnostic, whichever form it is
//! written in. They take the lowering's context (`context::Cx`) and nothing of the reader, so
//! the reader can depend on them without a circle.

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::name::{LabelKey, Name, is_label_value};
use crate::span::{Span, Spanned};
use crate::suggest::help_for;
use crate::units::{Currency, Money, UnitError};

/// A name (see [`Name`]).
pub(super) fn name(cx: &mut Cx, text: &Spanned<String>) -> Option<Spanned<Name>> {
    match Name::new(&text.value) {
        Ok(name) => Some(Spanned::new(name, text.span)),
        Err(reason) => {
            cx.error(
                Diagnostic::error(Code::InvalidName, text.span, reason).label("invalid name").help(
                    "names use ASCII letters, digits, `-`, `_` and `.`, start with a letter or digit, and have at most 63 characters",
                ),
            );
            None
        }
    }
}

/// One of a fixed set of keywords. `key` is the property it is given as, for the message.
pub(super) fn keyword<T: Copy>(cx: &mut Cx, text: &Spanned<String>, key: Option<&str>, choices: &[(&str, T)]) -> Option<T> {
    if let Some((_, value)) = choices.iter().find(|(keyword, _)| *keyword == text.value) {
        return Some(*value);
    }
    let what = key.map_or_else(|| "value".to_owned(), |key| format!("`{key}`"));
    cx.error(
        Diagnostic::error(Code::InvalidValue, text.span, format!("`{}` is not a valid {what}", text.value.escape_debug()))
            .label("unknown keyword")
            .maybe_help(help_for(&text.value, choices.iter().map(|(keyword, _)| *keyword))),
    );
    None
}

/// A count of at least 1, so that targets may divide by it.
pub(super) fn positive(cx: &mut Cx, number: Spanned<u32>) -> Option<u32> {
    if number.value == 0 {
        cx.error(
            Diagnostic::error(Code::InvalidValue, number.span, "must be at least 1").label("zero").help("use a positive whole number"),
        );
        return None;
    }
    Some(number.value)
}

/// A quantity with its unit (`"141GiB"`), read by `parse`.
pub(super) fn quantity<T>(cx: &mut Cx, text: &Spanned<String>, parse: impl Fn(&str) -> Result<T, UnitError>) -> Option<T> {
    match parse(&text.value) {
        Ok(value) => Some(value),
        Err(error) => {
            unit_error(cx, text.span, error);
            None
        }
    }
}

/// Reports a quantity or amount that does not parse.
pub(super) fn unit_error(cx: &mut Cx, span: Span, error: UnitError) {
    cx.error(Diagnostic::error(Code::InvalidUnit, span, error.message).label("invalid quantity").help(error.help));
}

/// An amount of money in `currency` from its digits as written (`"3.10"`), which is never
/// negative. `help` says how the form the amount came from writes one.
pub(super) fn amount(cx: &mut Cx, currency: Currency, digits: &Spanned<String>, help: impl FnOnce() -> String) -> Option<Spanned<Money>> {
    match Money::parse(currency, &digits.value) {
        Ok(money) if money.minor >= 0 => Some(Spanned::new(money, digits.span)),
        Ok(_) => {
            cx.error(Diagnostic::error(Code::InvalidValue, digits.span, "amounts cannot be negative").label("negative").help(help()));
            None
        }
        Err(error) => {
            unit_error(cx, digits.span, error);
            None
        }
    }
}

/// A label key and value, validated with Kubernetes' rules.
pub(super) fn label(cx: &mut Cx, key: &Spanned<String>, value: &Spanned<String>) -> Option<(LabelKey, String)> {
    let key = match LabelKey::new(&key.value) {
        Ok(label) => label,
        Err(reason) => {
            cx.error(
                Diagnostic::error(Code::InvalidName, key.span, reason)
                    .label("invalid label key")
                    .help("label keys look like `zone` or `example.com/zone`"),
            );
            return None;
        }
    };
    if !is_label_value(&value.value) {
        cx.error(
            Diagnostic::error(Code::InvalidName, value.span, format!("`{}` is not a valid label value", value.value.escape_debug()))
                .label("invalid label value")
                .help("label values have at most 63 letters, digits, `-`, `_` or `.`, and start and end with a letter or digit"),
        );
        return None;
    }
    Some((key, value.value.clone()))
}
