//! The statistics a replay reports: nearest-rank percentiles of waits, and time-weighted
//! means of quantities that change at events.

use serde::Serialize;

/// Percentiles of a set of durations in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// How many values.
    pub count: usize,
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// The largest value.
    pub max: u64,
}

impl Percentiles {
    /// The percentiles of `values` (in any order). Nearest rank, the definition Prometheus'
    /// and most dashboards' readers expect for small samples: the p-th percentile is the
    /// smallest value with at least p % of the values at or below it.
    pub fn of(mut values: Vec<u64>) -> Percentiles {
        values.sort_unstable();
        let rank = |percent: usize| -> u64 {
            if values.is_empty() {
                return 0;
            }
            let index = (percent * values.len()).div_ceil(100).max(1) - 1;
            values[index.min(values.len() - 1)]
        };
        Percentiles { count: values.len(), p50: rank(50), p95: rank(95), p99: rank(99), max: values.last().copied().unwrap_or(0) }
    }
}

/// A quantity that holds its value between events, sampled as `(time, value)` steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps {
    points: Vec<(u64, f64)>,
}

impl Steps {
    /// Records that the quantity is `value` from `time` on. Several records at one time keep
    /// the last, so a burst of events at one instant is one step.
    pub fn set(&mut self, time: u64, value: f64) {
        match self.points.last_mut() {
            Some(last) if last.0 == time => last.1 = value,
            Some(last) if last.1 == value => {}
            _ => self.points.push((time, value)),
        }
    }

    /// The mean over `0..end`, each value weighted by how long it held.
    pub fn time_mean(&self, end: u64) -> f64 {
        if end == 0 {
            return self.points.first().map_or(0.0, |point| point.1);
        }
        let mut total = 0.0;
        for (index, (time, value)) in self.points.iter().enumerate() {
            let until = self.points.get(index + 1).map_or(end, |next| next.0).min(end);
            total += value * until.saturating_sub(*time) as f64;
        }
        total / end as f64
    }

    /// The steps as plot points, with a point at `end` so the last value is drawn to the end.
    /// At most `limit` points: longer series are thinned to evenly spaced steps, since a
    /// plot cannot show more points than it has pixels.
    pub fn points(&self, end: u64, limit: usize) -> Vec<(f64, f64)> {
        let stride = self.points.len().div_ceil(limit.max(1)).max(1);
        let mut points: Vec<(f64, f64)> = self.points.iter().step_by(stride).map(|(time, value)| (*time as f64, *value)).collect();
        if let Some(last) = self.points.last() {
            points.push((end.max(last.0) as f64, last.1));
        }
        points
    }
}

/// A quantity's time-weighted mean, kept as it changes instead of as steps: what
/// [`Steps::time_mean`] gives for a series never plotted, without a point per event (a
/// replay of a million jobs has millions). The same sums in the same order, so the same mean.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimeMean {
    /// The current step, once one is set.
    last: Option<(u64, f64)>,
    /// The sum of value × duration of the steps before it.
    total: f64,
}

impl TimeMean {
    /// Records that the quantity is `value` from `time` on, as [`Steps::set`] does.
    pub fn set(&mut self, time: u64, value: f64) {
        match &mut self.last {
            Some(last) if last.0 == time => last.1 = value,
            Some(last) if last.1 == value => {}
            Some(last) => {
                self.total += last.1 * time.saturating_sub(last.0) as f64;
                *last = (time, value);
            }
            None => self.last = Some((time, value)),
        }
    }

    /// The mean over `0..end`, `end` at or after the last step, as [`Steps::time_mean`].
    pub fn mean(&self, end: u64) -> f64 {
        if end == 0 {
            return self.last.map_or(0.0, |last| last.1);
        }
        let total = self.last.map_or(self.total, |last| self.total + last.1 * end.saturating_sub(last.0) as f64);
        total / end as f64
    }
}

#[cfg(test)]
mod tests {
    use super::{Percentiles, Steps, TimeMean};

    #[test]
    fn nearest_rank_percentiles() {
        let p = Percentiles::of((1..=100).rev().collect());
        assert_eq!((p.count, p.p50, p.p95, p.p99, p.max), (100, 50, 95, 99, 100));
        let one = Percentiles::of(vec![7]);
        assert_eq!((one.p50, one.p99), (7, 7));
        assert_eq!(Percentiles::of(Vec::new()), Percentiles::default());
        // Four values: p50 is the second, p95 and p99 the fourth.
        let four = Percentiles::of(vec![40, 10, 30, 20]);
        assert_eq!((four.p50, four.p95, four.p99), (20, 40, 40));
    }

    #[test]
    fn time_mean_weights_each_value_by_how_long_it_held() {
        let mut steps = Steps::default();
        steps.set(0, 0.0);
        steps.set(10, 1.0);
        steps.set(10, 0.5);
        steps.set(30, 0.5);
        // 0 for 10 s, then 0.5 for 30 s of a 40 s run.
        assert!((steps.time_mean(40) - 15.0 / 40.0).abs() < 1e-12);
        assert_eq!(steps.points(40, 100), [(0.0, 0.0), (10.0, 0.5), (40.0, 0.5)]);
    }

    #[test]
    fn a_time_mean_kept_as_it_goes_is_the_mean_of_the_steps() {
        let mut steps = Steps::default();
        let mut mean = TimeMean::default();
        let changes = [(0, 0.3), (0, 0.7), (5, 0.7), (9, 1.5), (9, 0.1), (20, 0.0), (33, 2.25), (40, 2.25)];
        for (time, value) in changes {
            steps.set(time, value);
            mean.set(time, value);
        }
        for end in [40, 41, 1000] {
            assert_eq!(mean.mean(end).to_bits(), steps.time_mean(end).to_bits(), "{end}");
        }
        assert_eq!(TimeMean::default().mean(0), Steps::default().time_mean(0));
        assert_eq!(TimeMean::default().mean(10), Steps::default().time_mean(10));
    }
}
