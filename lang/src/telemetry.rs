//! Live NVLink utilisation as scoring and throttling see it, as plain functions of a series of
//! samples, so the scheduler extender (samples from Prometheus) and the engine's simulator (a
//! recorded series) smooth and throttle identically.
//!
//! - [`Ewma`]: an exponentially weighted moving average over irregularly spaced samples with
//!   a half-life: a sample `dt` after the last one weighs `1 - 2^(-dt / half_life)`, so the
//!   figure moves halfway to a new level in one half-life whatever the scrape interval is, and
//!   a step input gives a monotone, non-oscillating response.
//! - [`Throttle`]: "a domain above `threshold` for `hold` takes no new comm-heavy jobs",
//!   decided on the smoothed figure, so one noisy sample neither starts nor ends a throttle.
//! - Bad telemetry never reaches either: NaN, infinite or negative samples, and samples older
//!   than the last one, are [`Rejected`] and change nothing; [`Ewma::current`] gives the
//!   static figure instead once the last good sample is older than `max_age`.

/// Why a sample was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejected {
    /// NaN or infinite.
    NotFinite,
    /// Below zero: utilisation cannot be.
    Negative,
    /// Not after the last sample used (a replayed or reordered answer).
    OutOfOrder,
}

impl Rejected {
    /// The reason, for the log line of the fallback.
    pub fn as_str(self) -> &'static str {
        match self {
            Rejected::NotFinite => "not a finite number",
            Rejected::Negative => "negative",
            Rejected::OutOfOrder => "not newer than the last sample",
        }
    }
}

/// Where a figure came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    /// The smoothed live value.
    Live(f64),
    /// The inventory's static figure: no good sample yet, or the last one is too old.
    Static(f64),
}

impl Figure {
    /// The number, whichever its source.
    pub fn value(self) -> f64 {
        match self {
            Figure::Live(value) | Figure::Static(value) => value,
        }
    }
}

/// An exponentially weighted moving average with a half-life, over samples at any times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ewma {
    half_life_seconds: f64,
    last: Option<(f64, f64)>,
}

impl Ewma {
    /// An average with this half-life (seconds; at least a millisecond, so a zero or negative
    /// half-life from a hand-made caller means "follow the samples", not a division by zero).
    pub fn new(half_life_seconds: f64) -> Ewma {
        let half_life_seconds = if half_life_seconds.is_finite() { half_life_seconds.max(0.001) } else { 0.001 };
        Ewma { half_life_seconds, last: None }
    }

    /// Takes the sample `value` taken at `at` (seconds on any fixed clock) and returns the new
    /// average, or why the sample was not used (the average is then unchanged).
    pub fn update(&mut self, at: f64, value: f64) -> Result<f64, Rejected> {
        if !value.is_finite() || !at.is_finite() {
            return Err(Rejected::NotFinite);
        }
        if value < 0.0 {
            return Err(Rejected::Negative);
        }
        let average = match self.last {
            None => value,
            Some((last_at, _)) if at <= last_at => return Err(Rejected::OutOfOrder),
            Some((last_at, average)) => {
                let weight = 1.0 - (-(at - last_at) / self.half_life_seconds).exp2();
                average + weight * (value - average)
            }
        };
        self.last = Some((at, average));
        Ok(average)
    }

    /// When the last sample used was taken, if any: the figure turns static `max_age` later.
    pub fn last_at(&self) -> Option<f64> {
        self.last.map(|(at, _)| at)
    }

    /// The average at `now`, or `fallback` when there is none or its last sample is older than
    /// `max_age_seconds` (Prometheus down, the series gone).
    pub fn current(&self, now: f64, max_age_seconds: f64, fallback: f64) -> Figure {
        match self.last {
            Some((at, average)) if now - at <= max_age_seconds => Figure::Live(average),
            _ => Figure::Static(fallback),
        }
    }
}

/// The throttling rule: above `threshold` (0-1) without a break for `hold_seconds`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throttle {
    threshold: f64,
    hold_seconds: f64,
    above_since: Option<f64>,
}

impl Throttle {
    /// A rule of this threshold (a fraction: 0.85 for 85 %) and hold time.
    pub fn new(threshold: f64, hold_seconds: f64) -> Throttle {
        Throttle { threshold, hold_seconds: hold_seconds.max(0.0), above_since: None }
    }

    /// When the throttle starts if the figure stays above the threshold (the start of the
    /// current run above it plus the hold); `None` while it is not above.
    pub fn throttles_from(&self) -> Option<f64> {
        self.above_since.map(|since| since + self.hold_seconds)
    }

    /// Takes the figure at `at` and says whether the domain is throttled now. A static figure
    /// (no live telemetry) never throttles and ends a throttle: without data, scheduling goes
    /// on as if the rule did not exist, rather than stopping on stale saturation.
    pub fn observe(&mut self, at: f64, figure: Figure) -> bool {
        match figure {
            Figure::Live(value) if value > self.threshold => {
                let since = *self.above_since.get_or_insert(at);
                at - since >= self.hold_seconds
            }
            _ => {
                self.above_since = None;
                false
            }
        }
    }
}

/// One step of [`replay`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The sample's time.
    pub at: f64,
    /// The figure scoring sees then.
    pub figure: Figure,
    /// Whether comm-heavy jobs are refused then.
    pub throttled: bool,
}

/// A recorded series `(at, utilisation)` through the average and the rule, as the extender
/// would have seen it sample by sample: what the simulator calls. A rejected sample leaves the
/// figure as it was (or static, once too old).
pub fn replay(series: &[(f64, f64)], half_life_seconds: f64, max_age_seconds: f64, fallback: f64, throttle: &mut Throttle) -> Vec<Step> {
    let mut average = Ewma::new(half_life_seconds);
    series
        .iter()
        .map(|&(at, value)| {
            // A rejected sample is not used; the figure below says what scoring sees instead.
            let _ = average.update(at, value);
            let figure = average.current(at, max_age_seconds, fallback);
            Step { at, figure, throttled: throttle.observe(at, figure) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_half_life_moves_halfway() {
        let mut average = Ewma::new(60.0);
        assert_eq!(average.update(0.0, 0.0), Ok(0.0));
        assert_eq!(average.update(60.0, 1.0), Ok(0.5));
        assert_eq!(average.update(120.0, 1.0), Ok(0.75));
    }

    #[test]
    fn bad_samples_change_nothing_and_age_into_the_static_figure() {
        let mut average = Ewma::new(60.0);
        assert_eq!(average.current(0.0, 120.0, 0.3), Figure::Static(0.3));
        assert_eq!(average.update(10.0, 0.8), Ok(0.8));
        assert_eq!(average.update(20.0, f64::NAN), Err(Rejected::NotFinite));
        assert_eq!(average.update(20.0, -0.1), Err(Rejected::Negative));
        assert_eq!(average.update(5.0, 0.1), Err(Rejected::OutOfOrder));
        assert_eq!(average.current(100.0, 120.0, 0.3), Figure::Live(0.8));
        assert_eq!(average.current(200.0, 120.0, 0.3), Figure::Static(0.3));
    }

    #[test]
    fn throttling_starts_after_the_hold_and_ends_below_or_without_data() {
        let mut rule = Throttle::new(0.85, 600.0);
        assert!(!rule.observe(0.0, Figure::Live(0.9)));
        assert!(!rule.observe(599.0, Figure::Live(0.9)));
        assert!(rule.observe(600.0, Figure::Live(0.9)));
        assert!(!rule.observe(630.0, Figure::Live(0.8)));
        assert!(!rule.observe(660.0, Figure::Live(0.9)), "a dip restarts the hold");
        assert!(!rule.observe(1300.0, Figure::Static(0.95)), "no live data never throttles");
    }

    proptest! {
        /// The average stays within the samples it has seen, and a step up gives a
        /// monotone rise that never overshoots: no oscillation.
        #[test]
        fn a_step_rises_monotonically_without_overshoot(low in 0.0f64..1.0, high in 0.0f64..1.0, gaps in proptest::collection::vec(1.0f64..120.0, 1..50)) {
            let (low, high) = (low.min(high), low.max(high));
            let mut average = Ewma::new(300.0);
            let mut at = 0.0;
            let mut previous = average.update(at, low).unwrap_or(low);
            for gap in gaps {
                at += gap;
                let next = average.update(at, high).unwrap_or(previous);
                prop_assert!(next >= previous - 1e-12 && next <= high + 1e-12);
                previous = next;
            }
        }

        /// Whatever the series, replaying it never panics and every figure is a finite,
        /// non-negative number.
        #[test]
        fn any_series_gives_finite_figures(values in proptest::collection::vec(prop_oneof![Just(f64::NAN), Just(-1.0), Just(f64::INFINITY), 0.0f64..2.0], 0..60)) {
            let series: Vec<(f64, f64)> = values.iter().enumerate().map(|(index, value)| (index as f64 * 30.0, *value)).collect();
            for step in replay(&series, 120.0, 90.0, 0.25, &mut Throttle::new(0.85, 600.0)) {
                prop_assert!(step.figure.value().is_finite() && step.figure.value() >= 0.0);
            }
        }
    }
}
