//! Message construction (`Object{...}`, `Object.spec.template{...}`), which a
//! MutatingAdmissionPolicy's ApplyConfiguration returns and cel-rust parses but does not
//! evaluate, spelled as map literals: each constructor's `{` opens a map, and its field names
//! (which follow that `{` or a `,` inside it) become string keys. String literals are copied
//! whole, so nothing inside one is rewritten.

/// `expression` with every constructor spelled as a map literal.
pub fn as_maps(expression: &str) -> String {
    let mut out = String::with_capacity(expression.len());
    // For each open brace, bracket or parenthesis: whether it is a constructor's brace.
    let mut braces: Vec<bool> = Vec::new();
    let mut rest = expression;
    while let Some(character) = rest.chars().next() {
        if rest.starts_with("Object") && !out.ends_with(|previous: char| is_identifier(previous) || previous == '.') {
            let end = rest.find(|next: char| !(is_identifier(next) || next == '.')).unwrap_or(rest.len());
            if let Some(after) = rest[end..].strip_prefix('{') {
                out.push('{');
                braces.push(true);
                rest = quote_field(&mut out, after);
                continue;
            }
        }
        match character {
            '\'' | '"' => {
                let end = string_end(rest, character);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
                continue;
            }
            '{' | '(' | '[' => braces.push(false),
            '}' | ')' | ']' => _ = braces.pop(),
            ',' if braces.last() == Some(&true) => {
                out.push(',');
                rest = quote_field(&mut out, &rest[1..]);
                continue;
            }
            _ => {}
        }
        out.push(character);
        rest = &rest[character.len_utf8()..];
    }
    out
}

fn is_identifier(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_'
}

/// The length of the string literal `rest` starts with (quoted by `quote`, with `\` escapes),
/// closing quote included; all of `rest` when it is not closed.
fn string_end(rest: &str, quote: char) -> usize {
    let mut escaped = false;
    for (index, character) in rest.char_indices().skip(1) {
        match character {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            _ if character == quote => return index + character.len_utf8(),
            _ => {}
        }
    }
    rest.len()
}

/// Copies the spaces at the start of `rest` and the field name after them, quoted, into `out`
/// (when a field name and `:` follow); returns what is left.
fn quote_field<'a>(out: &mut String, rest: &'a str) -> &'a str {
    let trimmed = rest.trim_start();
    out.push_str(&rest[..rest.len() - trimmed.len()]);
    let end = trimmed.find(|next: char| !is_identifier(next)).unwrap_or(trimmed.len());
    if end > 0 && trimmed[end..].starts_with(':') {
        out.push_str(&format!("'{}'", &trimmed[..end]));
        return &trimmed[end..];
    }
    trimmed
}

#[cfg(test)]
mod tests {
    use super::as_maps;

    #[test]
    fn constructors_become_maps_and_strings_stay() {
        assert_eq!(
            as_maps("x ? Object{metadata: Object.metadata{labels: {'a, b: c': 'Object{d: e}'}}, spec: Object.spec{}} : Object{}"),
            "x ? {'metadata': {'labels': {'a, b: c': 'Object{d: e}'}}, 'spec': {}} : {}"
        );
        assert_eq!(
            as_maps("l.map(j, Object.spec.jobs{name: j.name, template: Object.spec.jobs.template{}})"),
            "l.map(j, {'name': j.name, 'template': {}})"
        );
    }
}
