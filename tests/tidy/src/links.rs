//! Markdown links as the tidy test checks them: every relative link of the docs names a file
//! that exists, and an anchor names a heading of that file.

/// The targets of the inline links `[text](target)` of a Markdown text, outside fenced code
/// blocks and inline code spans, without any `"title"`.
pub fn targets(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code is not a link: drop every other backtick-delimited part.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or_default();
            found.push(target.trim_matches(['<', '>']).to_owned());
            rest = &after[end..];
        }
    }
    found
}

/// Whether a link leaves the repository (a URL or a mail address): those are not checked here.
pub fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// The anchors GitHub gives the headings of a Markdown text: lowercase, spaces to `-`, and
/// every character but letters, digits, `-` and `_` dropped; a repeated heading gets `-1`,
/// `-2`, ...
pub fn anchors(markdown: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut anchors = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let repeats = seen.iter().filter(|earlier| **earlier == slug).count();
        anchors.push(if repeats == 0 { slug.clone() } else { format!("{slug}-{repeats}") });
        seen.push(slug);
    }
    anchors
}
