//! The kernel's cpulist syntax (`0-7,16-23`), read and written in one place so the probe,
//! the inventory reader and the printer agree, and [`CpuSet`], the set it denotes.
//!
//! A set is kept as its ranges, never expanded: `0-65536` written 20,000 times (160 KB of
//! text) is one range, where a list of CPU numbers took gigabytes.

use std::fmt;

/// The largest CPU number accepted; bounds the CPUs a garbled list like `0-4294967295` names,
/// so that iterating a set (the probe reads files per CPU) stays bounded too.
pub const MAX_CPU: u32 = 1 << 16;

/// A set of CPU numbers: sorted, disjoint ranges with gaps between them (`0-3,8` never as
/// `0-1,2-3,8`), so equal sets are equal values and print alike.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuSet {
    /// Inclusive `(first, last)` ranges.
    ranges: Vec<(u32, u32)>,
}

impl CpuSet {
    /// The set of the CPUs in inclusive `ranges`, in any order, overlapping or not.
    pub fn from_ranges(ranges: impl IntoIterator<Item = (u32, u32)>) -> CpuSet {
        let mut ranges: Vec<(u32, u32)> = ranges.into_iter().filter(|(first, last)| first <= last).collect();
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (first, last) in ranges {
            match merged.last_mut() {
                Some((_, end)) if u64::from(first) <= u64::from(*end) + 1 => *end = (*end).max(last),
                _ => merged.push((first, last)),
            }
        }
        CpuSet { ranges: merged }
    }

    /// How many CPUs the set has.
    pub fn count(&self) -> u64 {
        self.ranges.iter().map(|(first, last)| u64::from(last - first) + 1).sum()
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: u32) -> bool {
        let after = self.ranges.partition_point(|(first, _)| *first <= cpu);
        after > 0 && cpu <= self.ranges[after - 1].1
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|(first, last)| *first..=*last)
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(cpus: I) -> CpuSet {
        CpuSet::from_ranges(cpus.into_iter().map(|cpu| (cpu, cpu)))
    }
}

/// The cpulist syntax: runs as ranges, single CPUs alone, `,` between.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (first, last)) in self.ranges.iter().enumerate() {
            let separator = if index == 0 { "" } else { "," };
            if first == last {
                write!(f, "{separator}{first}")?;
            } else {
                write!(f, "{separator}{first}-{last}")?;
            }
        }
        Ok(())
    }
}

/// Parses a cpulist (`0-7,16-23`, `3`, or empty). Returns why the text is refused otherwise.
pub fn parse(text: &str) -> Result<CpuSet, String> {
    let mut ranges = Vec::new();
    for part in text.trim().split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return Err(format!("the range `{}` runs backwards", part.escape_debug()));
        }
        ranges.push((first, last));
    }
    Ok(CpuSet::from_ranges(ranges))
}

fn number(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(cpu) if cpu <= MAX_CPU => Ok(cpu),
        Ok(_) => Err(format!("CPU `{}` is beyond {MAX_CPU}", text.escape_debug())),
        Err(_) => Err(format!("`{}` is not a CPU number", text.escape_debug())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_ranges_and_singles() {
        assert_eq!(parse("0-3,8,10-11\n").map(|set| set.iter().collect::<Vec<_>>()), Ok(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse(""), Ok(CpuSet::default()));
        assert!(parse("3-1").is_err());
        assert!(parse("0-99999999").is_err());
        assert!(parse("x").is_err());
    }

    #[test]
    fn a_huge_repeated_range_stays_one_range() {
        // 20,000 copies of the widest range (160 KB of text) took 5 GB as a list of CPUs.
        let text = vec!["0-65536"; 20_000].join(",");
        let set = parse(&text).unwrap_or_default();
        assert_eq!(set.count(), u64::from(MAX_CPU) + 1);
        assert_eq!(set.to_string(), "0-65536");
    }

    #[test]
    fn overlapping_and_adjacent_ranges_merge() {
        let set = CpuSet::from_ranges([(8, 9), (0, 3), (4, 5), (2, 6)]);
        assert_eq!(set.to_string(), "0-6,8-9");
        assert!(set.contains(0) && set.contains(6) && set.contains(9));
        assert!(!set.contains(7) && !set.contains(10));
        assert_eq!(CpuSet::from_ranges([(u32::MAX, u32::MAX), (0, u32::MAX - 1)]).count(), 1 << 32);
    }

    proptest! {
        #[test]
        fn format_then_parse_is_identity(cpus in proptest::collection::vec(0u32..300, 0..40)) {
            let set: CpuSet = cpus.iter().copied().collect();
            prop_assert_eq!(parse(&set.to_string()), Ok(set.clone()));
            let mut sorted = cpus.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(set.iter().collect::<Vec<_>>(), sorted.clone());
            prop_assert_eq!(set.count(), sorted.len() as u64);
            for cpu in 0..300 {
                prop_assert_eq!(set.contains(cpu), sorted.contains(&cpu));
            }
        }
    }
}
