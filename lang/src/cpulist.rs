//! The kernel's cpulist syntax (`0-7,16-23`), read and written in one place so the probe,
//! the inventory reader and the printer agree. Lists are sorted and free of duplicates.

/// The largest CPU number accepted; bounds the work a garbled list like `0-4294967295` causes.
pub const MAX_CPU: u32 = 1 << 16;

/// Parses a cpulist (`0-7,16-23`, `3`, or empty). Returns why the text is refused otherwise.
pub fn parse(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return Err(format!("the range `{}` runs backwards", part.escape_debug()));
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn number(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(cpu) if cpu <= MAX_CPU => Ok(cpu),
        Ok(_) => Err(format!("CPU `{}` is beyond {MAX_CPU}", text.escape_debug())),
        Err(_) => Err(format!("`{}` is not a CPU number", text.escape_debug())),
    }
}

/// Writes sorted CPUs as a cpulist, folding runs into ranges.
pub fn format(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut index = 0;
    while index < cpus.len() {
        let first = cpus[index];
        let mut last = first;
        while index + 1 < cpus.len() && cpus[index + 1] == last + 1 {
            index += 1;
            last = cpus[index];
        }
        parts.push(if first == last { first.to_string() } else { format!("{first}-{last}") });
        index += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_ranges_and_singles() {
        assert_eq!(parse("0-3,8,10-11\n"), Ok(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse(""), Ok(vec![]));
        assert!(parse("3-1").is_err());
        assert!(parse("0-99999999").is_err());
        assert!(parse("x").is_err());
    }

    proptest! {
        #[test]
        fn format_then_parse_is_identity(mut cpus in proptest::collection::vec(0u32..300, 0..40)) {
            cpus.sort_unstable();
            cpus.dedup();
            prop_assert_eq!(parse(&format(&cpus)), Ok(cpus));
        }
    }
}
