//! Typed access to KDL nodes for lowering. Every node is read through a [`NodeReader`], which
//! knows the properties and children the node accepts, so unknown and duplicate names are
//! reported in one place with one style of suggestion, and every value is converted with its
//! span.

use kdl::{KdlEntry, KdlNode, KdlValue};

use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::values;
use crate::name::Name;
use crate::span::{FileId, Span, Spanned};
use crate::suggest::help_for;
use crate::syntax::span_of;
use crate::units::{Bandwidth, Currency, Duration, Money, Percent, UnitError};

/// A KDL node of one file, with the set of properties and children it accepts.
pub(crate) struct NodeReader<'a> {
    pub node: &'a KdlNode,
    pub file: FileId,
}

/// One value of a node (an argument or a property) with its span.
#[derive(Clone, Copy)]
pub(crate) struct Value<'a> {
    pub entry: &'a KdlEntry,
    pub span: Span,
    /// The property name, or `None` for an argument.
    pub key: Option<&'a str>,
}

impl<'a> NodeReader<'a> {
    pub fn new(node: &'a KdlNode, file: FileId) -> NodeReader<'a> {
        NodeReader { node, file }
    }

    /// The node's name (`tier`).
    pub fn kind(&self) -> &'a str {
        self.node.name().value()
    }

    /// The span of the node's name, the narrowest span that identifies the node.
    pub fn name_span(&self) -> Span {
        span_of(self.file, self.node.name().span())
    }

    fn value(&self, entry: &'a KdlEntry) -> Value<'a> {
        Value { entry, span: span_of(self.file, entry.span()), key: entry.name().map(|name| name.value()) }
    }

    /// Positional arguments.
    pub fn args(&self) -> Vec<Value<'a>> {
        self.node.entries().iter().filter(|entry| entry.name().is_none()).map(|entry| self.value(entry)).collect()
    }

    /// Checks that the node has between `min` and `max` arguments, reporting otherwise.
    pub fn expect_args(&self, cx: &mut Cx, min: usize, max: usize, what: &str) -> Option<Vec<Value<'a>>> {
        let args = self.args();
        if args.len() < min {
            cx.error(
                Diagnostic::error(Code::MissingValue, self.name_span(), format!("`{}` needs {what}", self.kind()))
                    .label("missing argument"),
            );
            return None;
        }
        if args.len() > max {
            cx.error(
                Diagnostic::error(Code::InvalidValue, args[max].span, format!("`{}` takes at most {max} argument(s)", self.kind()))
                    .label("unexpected argument")
                    .help(format!("`{}` takes {what}", self.kind())),
            );
            return None;
        }
        Some(args)
    }

    /// The arguments of a node that takes nothing but arguments (`priority 500`, `tiers "P1"
    /// "P2"`): any property or child is reported as unknown, then the count is checked as
    /// [`NodeReader::expect_args`] does. Every such node is read through here, so they all
    /// report a stray property, child or argument alike.
    pub fn leaf_args(&self, cx: &mut Cx, min: usize, max: usize, what: &str) -> Option<Vec<Value<'a>>> {
        self.props(cx, &[]);
        self.children(cx, &[]);
        self.expect_args(cx, min, max, what)
    }

    /// Properties, checked against `allowed`: unknown and duplicate keys are reported.
    pub fn props(&self, cx: &mut Cx, allowed: &[&str]) -> Props<'a> {
        let mut found: Vec<Value<'a>> = Vec::new();
        for entry in self.node.entries().iter().filter(|entry| entry.name().is_some()) {
            let value = self.value(entry);
            let key = value.key.unwrap_or_default();
            if !allowed.contains(&key) {
                let diagnostic = Diagnostic::error(Code::UnknownProperty, value.span, format!("`{}` has no property `{key}`", self.kind()))
                    .label("unknown property")
                    .maybe_help(help_for(key, allowed.iter().copied()));
                cx.error(diagnostic);
                continue;
            }
            if let Some(first) = found.iter().find(|earlier| earlier.key == value.key) {
                let diagnostic = Diagnostic::error(Code::DuplicateProperty, value.span, format!("property `{key}` is given twice"))
                    .label("second value")
                    .with_secondary(first.span, "first value")
                    .help("give each property once");
                cx.error(diagnostic);
                continue;
            }
            found.push(value);
        }
        Props { values: found }
    }

    /// Children, checked against `allowed`: unknown names are reported and skipped.
    pub fn children(&self, cx: &mut Cx, allowed: &[&str]) -> Vec<NodeReader<'a>> {
        let Some(document) = self.node.children() else {
            return Vec::new();
        };
        let mut children = Vec::new();
        for child in document.nodes() {
            let reader = NodeReader::new(child, self.file);
            let kind = reader.kind();
            if !allowed.contains(&kind) {
                let message = if allowed.is_empty() {
                    format!("`{}` takes no children", self.kind())
                } else {
                    format!("`{kind}` is not allowed inside `{}`", self.kind())
                };
                cx.error(
                    Diagnostic::error(Code::UnknownNode, reader.name_span(), message)
                        .label("unknown node")
                        .maybe_help(help_for(kind, allowed.iter().copied())),
                );
                continue;
            }
            children.push(reader);
        }
        children
    }

    /// The single child named `kind`, reporting a second one.
    pub fn single<'r>(cx: &mut Cx, children: &'r [NodeReader<'a>], kind: &str) -> Option<&'r NodeReader<'a>> {
        let mut matching = children.iter().filter(|child| child.kind() == kind);
        let first = matching.next()?;
        for extra in matching {
            cx.error(
                Diagnostic::error(Code::DuplicateProperty, extra.name_span(), format!("`{kind}` is given twice"))
                    .label("second one")
                    .with_secondary(first.name_span(), "first one")
                    .help(format!("give `{kind}` once")),
            );
        }
        Some(first)
    }
}

/// The checked properties of a node.
pub(crate) struct Props<'a> {
    values: Vec<Value<'a>>,
}

impl<'a> Props<'a> {
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.values.iter().find(|value| value.key == Some(key)).copied()
    }

    /// The property, reporting it as missing on `node` otherwise.
    pub fn require(&self, cx: &mut Cx, node: &NodeReader<'_>, key: &str) -> Option<Value<'a>> {
        let value = self.get(key);
        if value.is_none() {
            cx.error(
                Diagnostic::error(Code::MissingValue, node.name_span(), format!("`{}` needs `{key}=`", node.kind()))
                    .label(format!("`{key}` missing")),
            );
        }
        value
    }
}

fn type_name(value: &KdlValue) -> &'static str {
    match value {
        KdlValue::String(_) => "a string",
        KdlValue::Integer(_) => "an integer",
        KdlValue::Float(_) => "a number",
        KdlValue::Bool(_) => "a boolean",
        KdlValue::Null => "#null",
    }
}

impl<'a> Value<'a> {
    fn wrong(&self, cx: &mut Cx, expected: &str, help: &str) {
        let what = self.key.map_or_else(|| "argument".to_owned(), |key| format!("`{key}`"));
        cx.error(
            Diagnostic::error(Code::InvalidValue, self.span, format!("{what} must be {expected}, not {}", type_name(self.entry.value())))
                .label(format!("expected {expected}"))
                .help(help.to_owned()),
        );
    }

    /// A string value.
    pub fn string(&self, cx: &mut Cx) -> Option<Spanned<String>> {
        match self.entry.value() {
            KdlValue::String(text) => Some(Spanned::new(text.clone(), self.span)),
            _ => {
                self.wrong(cx, "a string", "quote the value: \"...\"");
                None
            }
        }
    }

    /// The span of a string's content (after the opening quote), for pointing inside it.
    /// `file_text` is the text of the file the value is in.
    pub fn content_span(&self, file_text: &str) -> Span {
        let written = file_text.get(self.span.start as usize..self.span.end as usize).unwrap_or_default();
        let start = written.find('"').map_or(0, |index| index + 1);
        let end = written.rfind('"').filter(|end| *end >= start).unwrap_or(written.len());
        self.span.sub(start, end)
    }

    /// A name (see [`Name`]).
    pub fn name(&self, cx: &mut Cx) -> Option<Spanned<Name>> {
        let text = self.string(cx)?;
        values::name(cx, &text)
    }

    /// A non-negative integer that fits in `u32`.
    pub fn u32(&self, cx: &mut Cx) -> Option<u32> {
        match self.entry.value() {
            KdlValue::Integer(number) => match u32::try_from(*number) {
                Ok(number) => Some(number),
                Err(_) => {
                    cx.error(
                        Diagnostic::error(Code::InvalidValue, self.span, format!("{number} is out of range"))
                            .label("out of range")
                            .help("use a whole number between 0 and 4294967295"),
                    );
                    None
                }
            },
            KdlValue::String(text) if text.trim().parse::<i64>().is_ok() => {
                // A habit from YAML and JSON configs: the number in quotes.
                self.wrong(cx, "a whole number", &format!("write `{}` without quotes: KDL numbers are not strings", text.trim()));
                None
            }
            _ => {
                self.wrong(cx, "a whole number", "write a whole number without quotes, such as `4`");
                None
            }
        }
    }

    /// A positive integer.
    pub fn positive(&self, cx: &mut Cx) -> Option<u32> {
        let number = self.u32(cx)?;
        values::positive(cx, Spanned::new(number, self.span))
    }

    /// An integer in `range`, with `what` saying in the help why the range is what it is.
    pub fn in_range(&self, cx: &mut Cx, range: std::ops::RangeInclusive<u32>, what: &str) -> Option<u32> {
        let number = self.u32(cx)?;
        if !range.contains(&number) {
            cx.error(
                Diagnostic::error(Code::InvalidValue, self.span, format!("{number} is out of range")).label("out of range").help(format!(
                    "use a whole number from {} to {}: {what}",
                    range.start(),
                    range.end()
                )),
            );
            return None;
        }
        Some(number)
    }

    /// A number (integer or decimal), as f64.
    pub fn number(&self, cx: &mut Cx) -> Option<f64> {
        match self.entry.value() {
            KdlValue::Integer(number) => Some(*number as f64),
            KdlValue::Float(number) if number.is_finite() => Some(*number),
            KdlValue::String(text) if text.trim().parse::<f64>().is_ok_and(f64::is_finite) => {
                self.wrong(cx, "a finite number", &format!("write `{}` without quotes: KDL numbers are not strings", text.trim()));
                None
            }
            _ => {
                self.wrong(cx, "a finite number", "write a number without quotes, such as `0.5`");
                None
            }
        }
    }

    /// `#true` or `#false`.
    pub fn bool(&self, cx: &mut Cx) -> Option<bool> {
        match self.entry.value() {
            KdlValue::Bool(value) => Some(*value),
            KdlValue::String(text) if matches!(text.as_str(), "true" | "false") => {
                self.wrong(cx, "a boolean", &format!("write `#{text}` without quotes: KDL booleans are `#true` and `#false`"));
                None
            }
            _ => {
                self.wrong(cx, "a boolean", "write `#true` or `#false`");
                None
            }
        }
    }

    /// One of a fixed set of keywords.
    pub fn keyword<T: Copy>(&self, cx: &mut Cx, choices: &[(&str, T)]) -> Option<T> {
        let text = self.string(cx)?;
        values::keyword(cx, &text, self.key, choices)
    }

    fn quantity<T>(&self, cx: &mut Cx, parse: impl Fn(&str) -> Result<T, UnitError>, example: &str) -> Option<T> {
        let text = self.quantity_text(cx, example)?;
        values::quantity(cx, &text, parse)
    }

    /// The text of a quantity (`"141GiB"`), before its unit is read. `example` is one such
    /// quantity, for the help line.
    pub fn quantity_text(&self, cx: &mut Cx, example: &str) -> Option<Spanned<String>> {
        match self.entry.value() {
            KdlValue::String(text) => Some(Spanned::new(text.clone(), self.span)),
            KdlValue::Integer(_) | KdlValue::Float(_) => {
                // The expected form with the number written: `max-time 4` -> "4m" (the
                // example's unit, to be read as "some unit").
                let unit = example.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                let number = self.entry.value().to_string();
                cx.error(
                    Diagnostic::error(Code::InvalidUnit, self.span, "a quantity needs a unit")
                        .label("no unit")
                        .help(format!("write the number with its unit, in quotes, such as \"{number}{unit}\"")),
                );
                None
            }
            _ => {
                self.wrong(cx, "a quantity with a unit", &format!("such as \"{example}\""));
                None
            }
        }
    }

    /// A duration (`"3m"`).
    pub fn duration(&self, cx: &mut Cx) -> Option<Duration> {
        self.quantity(cx, Duration::parse, "3m")
    }

    /// A bandwidth (`"900GB/s"`).
    pub fn bandwidth(&self, cx: &mut Cx) -> Option<Bandwidth> {
        self.quantity(cx, Bandwidth::parse, "900GB/s")
    }

    /// A percentage (`"90%"`).
    pub fn percent(&self, cx: &mut Cx) -> Option<Percent> {
        self.quantity(cx, Percent::parse, "90%")
    }

    /// Money: a number with a currency annotation, `(usd)3.10`, in the project's currency.
    pub fn money(&self, cx: &mut Cx) -> Option<Spanned<Money>> {
        let digits = self.money_digits(cx)?;
        let currency = cx.currency;
        values::amount(cx, currency, &digits, || money_help(currency))
    }

    /// The digits of an amount of money as written (`(usd)3.10` gives `3.10`), once its
    /// currency is known to be the project's; [`values::amount`] reads them.
    pub fn money_digits(&self, cx: &mut Cx) -> Option<Spanned<String>> {
        let help = money_help(cx.currency);
        let Some(annotation) = self.entry.ty() else {
            // The expected form with the amount written: `4000` -> `(usd)4000`, and a quoted
            // `"(usd)4000"` unquoted.
            let code = cx.currency.code();
            let help = match self.entry.value() {
                KdlValue::Integer(_) | KdlValue::Float(_) => {
                    format!("write `({code}){}`: amounts carry their currency", self.entry.value())
                }
                KdlValue::String(text) if text.trim().starts_with('(') => {
                    format!("write `{}` without quotes: the currency is a KDL type annotation", text.trim())
                }
                _ => help,
            };
            cx.error(
                Diagnostic::error(Code::InvalidUnit, self.span, "an amount of money needs a currency").label("no currency").help(help),
            );
            return None;
        };
        let Some(currency) = Currency::parse(annotation.value()) else {
            cx.error(
                Diagnostic::error(Code::InvalidUnit, self.span, format!("unknown currency `{}`", annotation.value().escape_debug()))
                    .label("unknown currency")
                    .maybe_help(help_for(annotation.value(), Currency::ALL.iter().map(|currency| currency.code()))),
            );
            return None;
        };
        if currency != cx.currency {
            cx.error(
                Diagnostic::error(
                    Code::CurrencyMismatch,
                    self.span,
                    format!("amount in {} but the project uses {}", currency.code(), cx.currency.code()),
                )
                .label("other currency")
                .help(format!("placid never converts currencies; write `({})...` or set `currency=` on `project`", cx.currency.code())),
            );
            return None;
        }
        // Take the digits as written, not through the parsed float, so `3.10` is exactly 310.
        let text = match self.entry.value() {
            KdlValue::Integer(number) => number.to_string(),
            KdlValue::Float(number) => self
                .entry
                .format()
                .map(|format| format.value_repr.trim_start_matches(|c| c != '-' && !char::is_ascii_digit(&c)).to_owned())
                .filter(|repr| !repr.is_empty())
                .unwrap_or_else(|| number.to_string()),
            KdlValue::String(text) => text.clone(),
            _ => {
                self.wrong(cx, "an amount", &help);
                return None;
            }
        };
        Some(Spanned::new(text, self.span))
    }
}

/// How KDL writes an amount of money, for help lines.
pub(crate) fn money_help(currency: Currency) -> String {
    format!("write the amount with its currency, such as `({})12000`", currency.code())
}

/// For optional values: `None` when absent, `Some(None)` when present but invalid.
pub(crate) trait Optional<T> {
    /// `Some(None)` when absent, `Some(Some(value))` when valid, `None` when invalid (the
    /// error is already reported), so `?` drops the element.
    fn lowered(self) -> Option<Option<T>>;
}

impl<T> Optional<T> for Option<Option<T>> {
    fn lowered(self) -> Option<Option<T>> {
        match self {
            None => Some(None),
            Some(Some(value)) => Some(Some(value)),
            Some(None) => None,
        }
    }
}
