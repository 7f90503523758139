//! "Did you mean" suggestions. Every suggestion in placid goes through [`did_you_mean`], so
//! all diagnostics use the same similarity threshold.

/// The closest candidate to `wrong`, if one is close enough to be a likely typo.
pub fn did_you_mean<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wrong_lower = wrong.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(&wrong_lower, &candidate.to_ascii_lowercase()), candidate))
        .filter(|(similarity, _)| *similarity >= 0.8)
        .max_by(|left, right| left.0.total_cmp(&right.0).then_with(|| right.1.cmp(left.1)))
        .map(|(_, candidate)| candidate)
}

/// A help line offering the closest candidate, or listing the valid ones when few.
pub fn help_for<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str> + Clone) -> Option<String> {
    if let Some(best) = did_you_mean(wrong, candidates.clone()) {
        return Some(format!("did you mean `{best}`?"));
    }
    let all: Vec<&str> = candidates.into_iter().collect();
    match all.len() {
        0 => None,
        1..=12 => Some(format!("expected one of: {}", all.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("visoin", ["vision", "nlp", "speech"]), Some("vision"));
        assert_eq!(did_you_mean("zzz", ["vision", "nlp"]), None);
    }
}
