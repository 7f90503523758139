//! A forgiving scan of KDL text into statements: each node's name, its arguments and
//! properties with byte ranges, and the path of nodes enclosing it (`tier/preemption`,
//! `target=kubernetes/extender`, the paths of `placid_lang::lower::schema`).
//!
//! The editor's buffer is half-typed most of the time, and the `kdl` parser gives no tree
//! for text that does not parse; this scan never fails, so completion, hover and navigation
//! keep working on a line that is still being written. It knows only what those need:
//! strings (plain, raw, multi-line), comments, braces, `;`, `=` and line continuations.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A bare word: an identifier, a number, `#true`.
    Word,
    /// A quoted string; `text` holds its value without the quotes.
    Str,
    /// `{`.
    Open,
    /// `}`.
    Close,
    /// `;` or a line break: the end of a statement.
    End,
    /// `=`.
    Equals,
}

/// One token, with its byte range (`start..end`, the quotes included for a string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// The word, or the string's value.
    pub text: String,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Token {
    /// The range of the value: inside the quotes for a simple string, so that an edit or a
    /// highlight covers the name and not its quotes.
    pub fn inner(&self) -> (usize, usize) {
        if self.kind == Kind::Str && self.end >= self.start + 2 && self.text.len() + 2 == self.end - self.start {
            (self.start + 1, self.end - 1)
        } else {
            (self.start, self.end)
        }
    }

    /// Whether `offset` lies on the token (its end included, where an editor's cursor sits
    /// after typing it).
    pub fn touches(&self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }
}

/// A property (`key=value`) or an argument (no key) of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key of a property.
    pub key: Option<Token>,
    /// The value; a property still being typed (`window=`) has none.
    pub value: Option<Token>,
}

/// One node of the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The path of the enclosing node (`tier`, `plan/stage`), empty at the top level.
    pub parent: String,
    /// The first argument of each enclosing node, outermost first (`["vit-train"]` for a
    /// stage of plan "vit-train"), which scopes names such as stages.
    pub scope: Vec<String>,
    /// The node's name.
    pub name: Token,
    /// Its arguments and properties, in order.
    pub entries: Vec<Entry>,
}

impl Statement {
    /// The node's own path: the parent's path and its name, with a target's kind in the name
    /// (`target=slurm`) as the schema spells it.
    pub fn path(&self) -> String {
        child_path(&self.parent, &self.name.text, self.first_argument().map(|token| token.text.as_str()))
    }

    /// Its first argument, usually the name it declares.
    pub fn first_argument(&self) -> Option<&Token> {
        self.entries.iter().find(|entry| entry.key.is_none()).and_then(|entry| entry.value.as_ref())
    }

    /// Its arguments.
    pub fn arguments(&self) -> impl Iterator<Item = &Token> {
        self.entries.iter().filter(|entry| entry.key.is_none()).filter_map(|entry| entry.value.as_ref())
    }

    /// Its properties: key and value, if typed yet.
    pub fn properties(&self) -> impl Iterator<Item = (&Token, Option<&Token>)> {
        self.entries.iter().filter_map(|entry| entry.key.as_ref().map(|key| (key, entry.value.as_ref())))
    }
}

/// The path of a node named `name` (with first argument `argument`) under `parent`.
pub fn child_path(parent: &str, name: &str, argument: Option<&str>) -> String {
    let own = if parent.is_empty() && name == "target" { format!("target={}", argument.unwrap_or_default()) } else { name.to_owned() };
    if parent.is_empty() { own } else { format!("{parent}/{own}") }
}

/// The most tokens one scan reads: far more than any policy has, and a bound on the work a
/// pathological buffer can cause.
const MAX_TOKENS: usize = 4_000_000;

/// Splits `text` into tokens. Never fails: an unterminated string or comment runs to the end.
pub fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() && out.len() < MAX_TOKENS {
        let byte = bytes[at];
        match byte {
            b'\n' | b';' | b'{' | b'}' | b'=' => {
                let kind = match byte {
                    b'{' => Kind::Open,
                    b'}' => Kind::Close,
                    b'=' => Kind::Equals,
                    _ => Kind::End,
                };
                out.push(token(kind, &text[at..at + 1], at, at + 1));
                at += 1;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = find_from(bytes, at, b'\n').unwrap_or(bytes.len());
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => at = block_comment_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'-') => at += 2,
            // A line continuation: the line break after it does not end the statement.
            b'\\' => {
                let line_end = find_from(bytes, at, b'\n').unwrap_or(bytes.len());
                at = line_end.saturating_add(1).min(bytes.len());
            }
            // A type annotation, `(usd)12`: skipped, the value follows.
            b'(' => at = find_from(bytes, at, b')').map_or(bytes.len(), |close| close + 1),
            b'"' => {
                let (end, value) = quoted(text, at);
                out.push(Token { kind: Kind::Str, text: value, start: at, end });
                at = end;
            }
            b'#' if raw_hashes(bytes, at).is_some() => {
                let (end, value) = raw(text, at);
                out.push(Token { kind: Kind::Str, text: value, start: at, end });
                at = end;
            }
            _ if byte.is_ascii_whitespace() => at += 1,
            _ => {
                let start = at;
                while at < bytes.len() && !is_delimiter(bytes[at]) {
                    at += 1;
                }
                // Non-ASCII text is only ever inside a word here, so `at` is a boundary.
                out.push(Token { kind: Kind::Word, text: text.get(start..at).unwrap_or_default().to_owned(), start, end: at });
            }
        }
    }
    out
}

fn token(kind: Kind, text: &str, start: usize, end: usize) -> Token {
    Token { kind, text: text.to_owned(), start, end }
}

fn is_delimiter(byte: u8) -> bool {
    byte.is_ascii_whitespace() || matches!(byte, b'{' | b'}' | b';' | b'=' | b'"' | b'(' | b')' | b'\\')
}

fn find_from(bytes: &[u8], from: usize, wanted: u8) -> Option<usize> {
    bytes.get(from..)?.iter().position(|byte| *byte == wanted).map(|index| from + index)
}

/// The end of a (nested) block comment starting at `at`.
fn block_comment_end(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    while at < bytes.len() {
        if bytes[at] == b'/' && bytes.get(at + 1) == Some(&b'*') {
            depth += 1;
            at += 2;
        } else if bytes[at] == b'*' && bytes.get(at + 1) == Some(&b'/') {
            depth = depth.saturating_sub(1);
            at += 2;
            if depth == 0 {
                return at;
            }
        } else {
            at += 1;
        }
    }
    bytes.len()
}

/// A `"..."` or `"""..."""` string at `at`: its end and its value (escapes resolved only as
/// far as a name needs: `\"` and `\\`).
fn quoted(text: &str, at: usize) -> (usize, String) {
    let bytes = text.as_bytes();
    if bytes.get(at..at + 3) == Some(b"\"\"\"") {
        let body = at + 3;
        let end = text.get(body..).and_then(|rest| rest.find("\"\"\"")).map_or(bytes.len(), |index| body + index + 3);
        let value = text.get(body..end.saturating_sub(3).max(body)).unwrap_or_default().to_owned();
        return (end, value);
    }
    let mut value = String::new();
    let mut chars = text.get(at + 1..).unwrap_or_default().char_indices();
    while let Some((index, character)) = chars.next() {
        match character {
            '"' => return (at + 1 + index + 1, value),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            // An unterminated string ends at its line, so the next lines still scan.
            '\n' => return (at + 1 + index, value),
            other => value.push(other),
        }
    }
    (bytes.len(), value)
}

/// The number of `#` of a raw string starting at `at`, if one does.
fn raw_hashes(bytes: &[u8], at: usize) -> Option<usize> {
    let hashes = bytes.get(at..)?.iter().take_while(|byte| **byte == b'#').count();
    (bytes.get(at + hashes) == Some(&b'"')).then_some(hashes)
}

/// A raw string `#"..."#` at `at`: its end and its value.
fn raw(text: &str, at: usize) -> (usize, String) {
    let bytes = text.as_bytes();
    let hashes = raw_hashes(bytes, at).unwrap_or(0);
    let body = at + hashes + 1;
    let close = format!("\"{}", "#".repeat(hashes));
    match text.get(body..).and_then(|rest| rest.find(&close)) {
        Some(index) => (body + index + close.len(), text.get(body..body + index).unwrap_or_default().to_owned()),
        None => (bytes.len(), text.get(body..).unwrap_or_default().to_owned()),
    }
}

/// The statements of `text` and, for the position `cursor` (a byte offset), the state of the
/// scan there: see [`At`].
pub fn scan(text: &str) -> Vec<Statement> {
    scan_to(text, usize::MAX).0
}

/// Where the cursor is, for completion: the enclosing node's path and scope, and the tokens
/// of the statement typed so far on the cursor's line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct At {
    /// The enclosing node's path.
    pub parent: String,
    /// The first arguments of the enclosing nodes.
    pub scope: Vec<String>,
    /// The tokens of the statement before the cursor.
    pub before: Vec<Token>,
}

/// The scan state at byte `cursor` of `text`.
pub fn at(text: &str, cursor: usize) -> At {
    scan_to(text, cursor).1
}

fn scan_to(text: &str, cursor: usize) -> (Vec<Statement>, At) {
    let mut statements = Vec::new();
    // (path, first argument) of each open block.
    let mut stack: Vec<(String, String)> = Vec::new();
    let mut current: Vec<Token> = Vec::new();
    let parent = |stack: &[(String, String)]| stack.last().map(|(path, _)| path.clone()).unwrap_or_default();
    let scope = |stack: &[(String, String)]| stack.iter().map(|(_, argument)| argument.clone()).collect::<Vec<_>>();
    let mut at = None;
    for token in tokens(text) {
        if at.is_none() && token.start >= cursor {
            at = Some(At { parent: parent(&stack), scope: scope(&stack), before: current.clone() });
        }
        match token.kind {
            Kind::Open => {
                let statement = statement(parent(&stack), scope(&stack), std::mem::take(&mut current));
                let frame = match &statement {
                    Some(statement) => (statement.path(), statement.first_argument().map(|token| token.text.clone()).unwrap_or_default()),
                    None => (parent(&stack), String::new()),
                };
                statements.extend(statement);
                stack.push(frame);
            }
            Kind::Close => {
                statements.extend(statement(parent(&stack), scope(&stack), std::mem::take(&mut current)));
                stack.pop();
            }
            Kind::End => statements.extend(statement(parent(&stack), scope(&stack), std::mem::take(&mut current))),
            Kind::Word | Kind::Str | Kind::Equals => current.push(token),
        }
    }
    let at = at.unwrap_or_else(|| At { parent: parent(&stack), scope: scope(&stack), before: current.clone() });
    statements.extend(statement(parent(&stack), scope(&stack), current));
    (statements, at)
}

/// Groups a statement's tokens into its name, arguments and properties.
fn statement(parent: String, scope: Vec<String>, tokens: Vec<Token>) -> Option<Statement> {
    let mut tokens = tokens.into_iter().peekable();
    let name = tokens.next().filter(|token| token.kind != Kind::Equals)?;
    let mut entries = Vec::new();
    while let Some(token) = tokens.next() {
        if token.kind == Kind::Equals {
            continue;
        }
        if tokens.peek().is_some_and(|next| next.kind == Kind::Equals) {
            tokens.next();
            let value = tokens.next_if(|next| next.kind != Kind::Equals);
            entries.push(Entry { key: Some(token), value });
        } else {
            entries.push(Entry { key: None, value: Some(token) });
        }
    }
    Some(Statement { parent, scope, name, entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_properties_and_paths() {
        let text = "tier \"P1\" {\n    preemption window=\"3m\" mode=\"requeue\"\n}\ntarget \"kubernetes\" { extender score=\"cost\" }\n";
        let statements = scan(text);
        let paths: Vec<String> = statements.iter().map(Statement::path).collect();
        assert_eq!(paths, ["tier", "tier/preemption", "target=kubernetes", "target=kubernetes/extender"]);
        let preemption = &statements[1];
        let properties: Vec<(&str, &str)> =
            preemption.properties().map(|(key, value)| (key.text.as_str(), value.map_or("", |value| value.text.as_str()))).collect();
        assert_eq!(properties, [("window", "3m"), ("mode", "requeue")]);
        assert_eq!(preemption.scope, ["P1"]);
    }

    #[test]
    fn the_cursor_state_is_the_statement_typed_so_far() {
        let text = "plan \"p\" team=\"a\" {\n    stage \"s\" tier=";
        let at = at(text, text.len());
        assert_eq!(at.parent, "plan");
        assert_eq!(at.scope, ["p"]);
        let words: Vec<&str> = at.before.iter().map(|token| token.text.as_str()).collect();
        assert_eq!(words, ["stage", "s", "tier", "="]);
    }

    #[test]
    fn strings_and_comments_hold_no_structure() {
        let text = "a \"{ } ;\" /* { */ b=#\"x\"y\"# // }\nc \"\"\"\n{\n\"\"\"\n";
        let statements = scan(text);
        assert_eq!(statements.len(), 2);
        assert_eq!(statements[0].first_argument().map(|token| token.text.as_str()), Some("{ } ;"));
        assert_eq!(statements[1].parent, "");
    }

    #[test]
    fn any_bytes_scan_without_panicking() {
        for text in ["\"", "#\"", "/*", "(", "\\", "a=", "=", "}}}}", "é\"é", "#", "##\"", "\"\"\""] {
            let _ = scan(text);
            for cursor in 0..=text.len() + 2 {
                let _ = at(text, cursor);
            }
        }
    }
}
