//! The experiment: per seed, shuffle the pods, inflate the workload, place every pod once, and
//! after each pod record x (arrived GPU milli over the cluster's, in whole percent) and y
//! (allocated over the cluster's, in percent). The figure at a mark is the mean y of the pods
//! at that x, averaged over the seeds.

use rand::RngExt;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_pcg::Pcg64;

use crate::Trace;
use crate::place::{Cluster, Placement, ScoreFailed, Scratch};

/// The arrived percents reported: the trace as is, and inflated to 1.3×.
pub const MARKS: [u32; 2] = [100, 130];

/// How far the workload is inflated, in thousandths of the cluster's GPUs (1300 = 1.3×).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inflation(u32);

impl Inflation {
    /// No inflation.
    pub const NONE: Inflation = Inflation(1000);
    /// The largest inflation, 4×: a run then places at most about four times the trace's pods.
    pub const MAX_PERMILLE: u32 = 4000;

    /// Parses a decimal factor from 1 to 4 with at most three decimals (`1.3`).
    pub fn parse(text: &str) -> Result<Inflation, String> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 3 || whole.len() > 1 {
            return Err(format!("`{text}` is not a factor like 1.3 (at most three decimals)"));
        }
        let permille = whole.parse::<u32>().unwrap_or(0) * 1000 + format!("{fraction:0<3}").parse::<u32>().unwrap_or(0);
        if !(1000..=Self::MAX_PERMILLE).contains(&permille) {
            return Err(format!("`{text}` is outside 1 to 4"));
        }
        Ok(Inflation(permille))
    }

    /// The factor in thousandths.
    pub fn permille(self) -> u32 {
        self.0
    }
}

/// The seeds of a run, each an independent repetition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds(Vec<u64>);

impl Seeds {
    /// The most seeds one run takes.
    pub const MAX: usize = 100;

    /// Parses `42`, `42-51` or `1,2,7` (ranges may appear in a list).
    pub fn parse(text: &str) -> Result<Seeds, String> {
        let mut seeds = Vec::new();
        for part in text.split(',') {
            let number = |text: &str| text.trim().parse::<u64>().map_err(|_| format!("`{text}` is not a seed"));
            let (first, last) = match part.split_once('-') {
                Some((first, last)) => (number(first)?, number(last)?),
                None => (number(part)?, number(part)?),
            };
            if first > last {
                return Err(format!("the range `{part}` runs backwards"));
            }
            if last - first >= Self::MAX as u64 || seeds.len() + (last - first) as usize >= Self::MAX {
                return Err(format!("at most {} seeds", Self::MAX));
            }
            seeds.extend(first..=last);
        }
        Ok(Seeds(seeds))
    }

    /// The seeds in order.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }
}

/// The most pods a seed places, as a multiple of the trace's pods.
pub const MAX_PODS_FACTOR: usize = 4;

/// What one seed measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRun {
    /// The seed.
    pub seed: u64,
    /// Pods placed or failed, inflation included.
    pub pods: usize,
    /// Pods no node could take.
    pub failed: usize,
    /// Mean allocated percent at each of [`MARKS`]; `None` when no pod came near it.
    pub allocation: Vec<(u32, Option<f64>)>,
}

/// What a run measured, over every seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// One entry per seed, in order.
    pub runs: Vec<SeedRun>,
    /// The mean over the seeds that reached each mark.
    pub allocation: Vec<(u32, Option<f64>)>,
}

/// The most node visits one seed may cost: each arriving pod is placed by looking at every
/// node, so a seed costs at most the trace's nodes times [`MAX_PODS_FACTOR`] times its pods.
/// Three times the published openb trace (1,523 nodes, 8,152 pods: 5.0e7); a run past it is
/// refused before it starts, where a few MB of lists would run a seed for minutes
/// (docs/limits.md gives the time at this bound).
pub const MAX_SEED_VISITS: u64 = 150_000_000;

/// The most node visits one seed of `trace` can cost (see [`MAX_SEED_VISITS`]).
pub fn seed_visits(trace: &Trace) -> u64 {
    (trace.nodes.len() as u64).saturating_mul(trace.pods.len() as u64).saturating_mul(MAX_PODS_FACTOR as u64)
}

/// Runs the experiment for every seed.
pub fn run(trace: &Trace, placement: &mut Placement<'_>, seeds: &Seeds, inflation: Inflation) -> Result<Outcome, ScoreFailed> {
    let runs = seeds.as_slice().iter().map(|&seed| run_seed(trace, placement, seed, inflation)).collect::<Result<Vec<_>, _>>()?;
    let allocation = MARKS
        .iter()
        .enumerate()
        .map(|(index, &mark)| {
            let reached: Vec<f64> = runs.iter().filter_map(|run| run.allocation[index].1).collect();
            (mark, (!reached.is_empty()).then(|| reached.iter().sum::<f64>() / reached.len() as f64))
        })
        .collect();
    Ok(Outcome { runs, allocation })
}

/// The pods of one seed, in arrival order: the trace shuffled, then uniform random copies of
/// its pods appended while the arrived GPU milli stays within the inflated target (the first
/// copy that would pass it stops the inflation and is not added).
pub fn workload(trace: &Trace, rng: &mut Pcg64, inflation: Inflation) -> Vec<usize> {
    let mut order: Vec<usize> = (0..trace.pods.len()).collect();
    order.shuffle(rng);
    let target = trace.total_gpu_milli() * u64::from(inflation.permille()) / 1000;
    let mut arrived: u64 = trace.pods.iter().map(|pod| pod.gpu_request()).sum();
    // GPU-less copies never reach the target, so the pod count is capped too: at most
    // `MAX_PODS_FACTOR` times the trace's pods (docs/limits.md).
    let cap = trace.pods.len().saturating_mul(MAX_PODS_FACTOR);
    while order.len() < cap {
        let copy = rng.random_range(0..trace.pods.len());
        let request = trace.pods[copy].gpu_request();
        if arrived + request > target {
            break;
        }
        arrived += request;
        order.push(copy);
    }
    order
}

/// Runs one seed: the workload placed pod by pod, with the allocation recorded after each.
pub fn run_seed(trace: &Trace, placement: &mut Placement<'_>, seed: u64, inflation: Inflation) -> Result<SeedRun, ScoreFailed> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let order = workload(trace, &mut rng, inflation);
    let mut cluster = Cluster::new(trace);
    let total = cluster.total_gpu_milli();
    let mut scratch = Scratch::default();
    let mut marks = MARKS.map(|mark| Mark { mark, exact: Mean::default(), near: Mean::default() });
    let mut arrived = 0u64;
    let mut failed = 0;
    for &index in &order {
        let pod = &trace.pods[index];
        if cluster.place(pod, placement, &mut rng, &mut scratch)?.is_none() {
            failed += 1;
        }
        arrived += pod.gpu_request();
        if total == 0 {
            continue;
        }
        let x = percent_rounded(arrived, total);
        let y = cluster.allocated_gpu_milli() as f64 * 100.0 / total as f64;
        for mark in &mut marks {
            mark.record(x, y);
        }
    }
    let allocation = marks.iter().map(|mark| (mark.mark, mark.mean())).collect();
    Ok(SeedRun { seed, pods: order.len(), failed, allocation })
}

/// `part / whole` in whole percent, rounded to nearest with halves to even (as the artifact's
/// analysis rounds).
fn percent_rounded(part: u64, whole: u64) -> u32 {
    let scaled = u128::from(part) * 100;
    let whole = u128::from(whole);
    let (quotient, remainder) = (scaled / whole, scaled % whole);
    let up = match (2 * remainder).cmp(&whole) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => quotient % 2 == 1,
        std::cmp::Ordering::Less => false,
    };
    u32::try_from(quotient + u128::from(up)).unwrap_or(u32::MAX)
}

#[derive(Default)]
struct Mean {
    sum: f64,
    count: u64,
}

impl Mean {
    fn add(&mut self, value: f64) {
        self.sum += value;
        self.count += 1;
    }

    fn get(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// The pods at one mark, and those within one percent of it, which the artifact's analysis
/// falls back to when no pod lands on the mark itself.
struct Mark {
    mark: u32,
    exact: Mean,
    near: Mean,
}

impl Mark {
    fn record(&mut self, x: u32, y: f64) {
        if x == self.mark {
            self.exact.add(y);
        }
        if x.abs_diff(self.mark) <= 1 {
            self.near.add(y);
        }
    }

    fn mean(&self) -> Option<f64> {
        self.exact.get().or_else(|| self.near.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percents_round_to_nearest_with_halves_to_even() {
        assert_eq!(percent_rounded(1004, 1000), 100);
        assert_eq!(percent_rounded(1006, 1000), 101);
        assert_eq!(percent_rounded(1005, 1000), 100);
        assert_eq!(percent_rounded(1015, 1000), 102);
    }

    #[test]
    fn inflation_reads_decimal_factors() {
        assert_eq!(Inflation::parse("1.3").map(Inflation::permille), Ok(1300));
        assert_eq!(Inflation::parse("1").map(Inflation::permille), Ok(1000));
        assert_eq!(Inflation::parse("4.000").map(Inflation::permille), Ok(4000));
        for bad in ["0.9", "4.001", "1.3333", "", ".5", "1.-3", "13"] {
            assert!(Inflation::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seeds_read_ranges_and_lists() {
        assert_eq!(Seeds::parse("42-51").map(|seeds| seeds.as_slice().len()), Ok(10));
        assert_eq!(Seeds::parse("1,5-6").map(|seeds| seeds.as_slice().to_vec()), Ok(vec![1, 5, 6]));
        for bad in ["51-42", "x", "0-100", "0-18446744073709551615", ""] {
            assert!(Seeds::parse(bad).is_err(), "{bad}");
        }
    }
}
