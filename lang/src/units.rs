//! Units, parsed strictly and normalised: durations to seconds, memory to bytes, bandwidth
//! to bits per second, percentages to basis points and money to integer minor units.
//! Nothing here uses floating point, so a value prints back exactly as it was meant.

use std::fmt;

/// A length of time in whole seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    /// Seconds.
    pub seconds: u64,
}

/// An amount of memory in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bandwidth {
    /// Bits per second.
    pub bits_per_second: u64,
}

/// A percentage in basis points (1% = 100), so `99.95%` stays exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percent {
    /// Hundredths of a percent.
    pub basis_points: u32,
}

/// A currency placid knows, with its number of minor-unit digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Currency {
    /// US dollar (cents).
    Usd,
    /// Euro (cents).
    Eur,
    /// Pound sterling (pence).
    Gbp,
    /// Swiss franc (centimes).
    Chf,
    /// Japanese yen (no minor unit).
    Jpy,
    /// Chinese yuan (fen).
    Cny,
}

impl Currency {
    /// Every currency, for suggestions.
    pub const ALL: &'static [Currency] = &[Currency::Usd, Currency::Eur, Currency::Gbp, Currency::Chf, Currency::Jpy, Currency::Cny];

    /// The lower-case code used as a KDL type annotation: `(usd)12`.
    pub fn code(self) -> &'static str {
        match self {
            Currency::Usd => "usd",
            Currency::Eur => "eur",
            Currency::Gbp => "gbp",
            Currency::Chf => "chf",
            Currency::Jpy => "jpy",
            Currency::Cny => "cny",
        }
    }

    /// Digits after the decimal point.
    pub fn minor_digits(self) -> u32 {
        match self {
            Currency::Jpy => 0,
            _ => 2,
        }
    }

    /// Parses a currency code, case-insensitively.
    pub fn parse(code: &str) -> Option<Currency> {
        Currency::ALL.iter().copied().find(|currency| currency.code().eq_ignore_ascii_case(code))
    }
}

/// An exact amount of money in a currency's minor unit (cents for `usd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money {
    /// The currency.
    pub currency: Currency,
    /// Amount in minor units.
    pub minor: i64,
}

/// Why a quantity did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// What went wrong.
    pub message: String,
    /// How to write it instead.
    pub help: String,
}

fn unit_error(message: impl Into<String>, help: impl Into<String>) -> UnitError {
    UnitError { message: message.into(), help: help.into() }
}

/// A decimal number split at the point: `digits` scaled by `10^-scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// All digits as one integer.
    pub digits: u128,
    /// Number of digits after the point.
    pub scale: u32,
}

impl Decimal {
    /// Parses a non-negative decimal such as `3.10` or `900` without going through floats.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (whole, fraction) = match text.split_once('.') {
            Some((whole, fraction)) => (whole, fraction),
            None => (text, ""),
        };
        let valid = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit() || byte == b'_');
        if whole.is_empty() || !valid(whole) || !valid(fraction) || (text.contains('.') && fraction.is_empty()) {
            return None;
        }
        let mut digits: u128 = 0;
        let mut scale = 0u32;
        for byte in whole.bytes().chain(fraction.bytes()).filter(|byte| *byte != b'_') {
            digits = digits.checked_mul(10)?.checked_add(u128::from(byte - b'0'))?;
        }
        for _ in fraction.bytes().filter(|byte| *byte != b'_') {
            scale += 1;
        }
        if scale > 18 {
            return None;
        }
        Some(Decimal { digits, scale })
    }

    /// `self * multiplier`, exact, or `None` if it has a fractional part or overflows.
    pub fn scale_to_integer(self, multiplier: u128) -> Option<u128> {
        let product = self.digits.checked_mul(multiplier)?;
        let divisor = 10u128.checked_pow(self.scale)?;
        (product % divisor == 0).then_some(product / divisor)
    }
}

/// Splits `12.5GiB` into (`12.5`, `GiB`).
fn split_number(text: &str) -> (&str, &str) {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(text.len());
    (&text[..end], &text[end..])
}

impl Duration {
    /// Parses `90s`, `3m`, `24h`, `7d` or a compound such as `1h30m`.
    pub fn parse(text: &str) -> Result<Duration, UnitError> {
        let help = "write a whole number followed by s, m, h or d, such as `90s`, `3m`, `24h` or `1h30m`";
        let text = text.trim();
        if text.is_empty() {
            return Err(unit_error("empty duration", help));
        }
        let mut rest = text;
        let mut seconds: u64 = 0;
        while !rest.is_empty() {
            let (number, tail) = split_number(rest);
            let unit_len = tail.find(|c: char| c.is_ascii_digit()).unwrap_or(tail.len());
            let unit = &tail[..unit_len];
            if number.is_empty() && !unit.is_empty() && rest == text {
                // A unit alone (`"h"`): the number in front of it is missing.
                return Err(unit_error(
                    format!("`{text}` has no number"),
                    format!("write the number before the unit, such as \"1{unit}\""),
                ));
            }
            if number.is_empty() || number.contains('.') {
                return Err(unit_error(format!("`{text}` is not a duration"), help));
            }
            let value: u64 = number.replace('_', "").parse().map_err(|_| unit_error(format!("`{text}` is too large"), help))?;
            let per_unit = match unit {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                "d" => 86_400,
                "" if rest == text => {
                    let help = format!("give the number a unit: \"{text}s\", \"{text}m\", \"{text}h\" or \"{text}d\"");
                    return Err(unit_error(format!("`{text}` has no unit"), help));
                }
                "" => return Err(unit_error(format!("`{text}` has no unit after its last number"), help)),
                other => {
                    // Units spelt out (`"3 minutes"`) get their letter.
                    let letter = match other.trim().to_ascii_lowercase().trim_end_matches('s') {
                        "sec" | "second" => Some('s'),
                        "min" | "minute" => Some('m'),
                        "hour" | "hr" => Some('h'),
                        "day" => Some('d'),
                        _ => None,
                    };
                    let help =
                        letter.map_or_else(|| help.to_owned(), |letter| format!("write \"{number}{letter}\": durations use s, m, h and d"));
                    return Err(unit_error(format!("unknown duration unit `{other}`"), help));
                }
            };
            seconds = value
                .checked_mul(per_unit)
                .and_then(|part| seconds.checked_add(part))
                .ok_or_else(|| unit_error(format!("`{text}` is too large"), help))?;
            rest = &tail[unit_len..];
        }
        Ok(Duration { seconds })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.seconds;
        if rest == 0 {
            return f.write_str("0s");
        }
        for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
            if rest >= size {
                write!(f, "{}{unit}", rest / size)?;
                rest %= size;
            }
        }
        Ok(())
    }
}

impl Bytes {
    /// Parses `141GiB`, `512GiB`, `80GB`, `64MiB`, `1.5TiB`.
    pub fn parse(text: &str) -> Result<Bytes, UnitError> {
        let help = "write a number with B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB), such as `141GiB`";
        let (number, unit) = split_number(text.trim());
        let multiplier: u128 = match unit {
            "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "TiB" => 1 << 40,
            "KB" | "kB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            "TB" => 1_000_000_000_000,
            "" => return Err(unit_error(format!("`{text}` has no unit"), help)),
            other => return Err(unit_error(format!("unknown memory unit `{other}`"), help)),
        };
        let decimal = Decimal::parse(number).ok_or_else(|| unit_error(format!("`{text}` is not a size"), help))?;
        let bytes = decimal
            .scale_to_integer(multiplier)
            .and_then(|bytes| u64::try_from(bytes).ok())
            .ok_or_else(|| unit_error(format!("`{text}` is not a whole number of bytes or is too large"), help))?;
        Ok(Bytes(bytes))
    }

    /// A scheduler's request for at least this much: whole GiB where it is a multiple of
    /// one, else whole MiB rounded up, as `(count, 'G' or 'M')`. Slurm writes `64G`,
    /// Kubernetes `64Gi`; both read binary units.
    pub fn request(self) -> (u64, char) {
        let mib = self.0.div_ceil(1 << 20);
        if mib.is_multiple_of(1024) { (mib / 1024, 'G') } else { (mib, 'M') }
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (unit, size) in [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
            if self.0 >= size && self.0.is_multiple_of(size) {
                return write!(f, "{}{unit}", self.0 / size);
            }
        }
        write!(f, "{}B", self.0)
    }
}

impl Bandwidth {
    /// Parses `900GB/s` (bytes), `400Gb/s` (bits), `1.8TB/s`; decimal prefixes.
    pub fn parse(text: &str) -> Result<Bandwidth, UnitError> {
        let help = "write a number with b/s, Kb/s, Mb/s, Gb/s, Tb/s (bits) or B/s, KB/s, MB/s, GB/s, TB/s (bytes), such as `900GB/s`";
        let (number, unit) = split_number(text.trim());
        let bits_per_unit: u128 = match unit {
            "b/s" => 1,
            "Kb/s" | "kb/s" => 1_000,
            "Mb/s" => 1_000_000,
            "Gb/s" => 1_000_000_000,
            "Tb/s" => 1_000_000_000_000,
            "B/s" => 8,
            "KB/s" | "kB/s" => 8_000,
            "MB/s" => 8_000_000,
            "GB/s" => 8_000_000_000,
            "TB/s" => 8_000_000_000_000,
            "" => return Err(unit_error(format!("`{text}` has no unit"), help)),
            other => {
                return Err(unit_error(format!("unknown bandwidth unit `{other}`"), help));
            }
        };
        let decimal = Decimal::parse(number).ok_or_else(|| unit_error(format!("`{text}` is not a bandwidth"), help))?;
        let bits_per_second = decimal
            .scale_to_integer(bits_per_unit)
            .and_then(|bits| u64::try_from(bits).ok())
            .ok_or_else(|| unit_error(format!("`{text}` is not a whole number of bits per second or is too large"), help))?;
        Ok(Bandwidth { bits_per_second })
    }

    /// Gigabytes per second as a float, for score features and reports only.
    pub fn gigabytes_per_second(self) -> f64 {
        self.bits_per_second as f64 / 8e9
    }

    /// Whole GB/s, rounded down (`up` false) or up: for places that compare integers, such as
    /// Kubernetes node affinity.
    pub fn whole_gigabytes_per_second(self, up: bool) -> u64 {
        const BITS_PER_GIGABYTE: u64 = 8_000_000_000;
        if up { self.bits_per_second.div_ceil(BITS_PER_GIGABYTE) } else { self.bits_per_second / BITS_PER_GIGABYTE }
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.bits_per_second;
        if bits.is_multiple_of(8) {
            let bytes = bits / 8;
            for (unit, size) in [("TB/s", 1_000_000_000_000u64), ("GB/s", 1_000_000_000), ("MB/s", 1_000_000), ("KB/s", 1_000)] {
                if bytes >= size && bytes.is_multiple_of(size) {
                    return write!(f, "{}{unit}", bytes / size);
                }
            }
        }
        for (unit, size) in [("Tb/s", 1_000_000_000_000u64), ("Gb/s", 1_000_000_000), ("Mb/s", 1_000_000), ("Kb/s", 1_000)] {
            if bits >= size && bits.is_multiple_of(size) {
                return write!(f, "{}{unit}", bits / size);
            }
        }
        write!(f, "{bits}b/s")
    }
}

impl Percent {
    /// Parses `90%`, `1%`, `99.95%` (at most two decimals).
    pub fn parse(text: &str) -> Result<Percent, UnitError> {
        let help = "write a percentage with at most two decimals, such as `90%` or `99.95%`";
        let number = text.trim().strip_suffix('%').ok_or_else(|| unit_error(format!("`{text}` has no `%`"), help))?;
        let decimal = Decimal::parse(number).ok_or_else(|| unit_error(format!("`{text}` is not a percentage"), help))?;
        let basis_points = decimal
            .scale_to_integer(100)
            .and_then(|value| u32::try_from(value).ok())
            .ok_or_else(|| unit_error(format!("`{text}` has more than two decimals or is too large"), help))?;
        Ok(Percent { basis_points })
    }

    /// The percentage as a fraction (`90%` -> 0.9), for reports and generated thresholds.
    pub fn fraction(self) -> f64 {
        f64::from(self.basis_points) / 10_000.0
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.basis_points / 100;
        match self.basis_points % 100 {
            0 => write!(f, "{whole}%"),
            rest if rest % 10 == 0 => write!(f, "{whole}.{}%", rest / 10),
            rest => write!(f, "{whole}.{rest:02}%"),
        }
    }
}

impl Money {
    /// The largest amount placid accepts, in minor units: a quadrillion dollars, far beyond
    /// any budget or price. The bound leaves room for what one amount becomes downstream:
    /// Slurm's billing minutes are 60 times a daily budget (targets/src/slurm/billing.rs) and
    /// still fit in an `i64`. Sums and products of amounts are checked where they are formed.
    pub const MAX_MINOR: i64 = 100_000_000_000_000_000;

    /// Parses the decimal text of an amount (`3.10`, `12000`) in `currency`, exactly.
    pub fn parse(currency: Currency, text: &str) -> Result<Money, UnitError> {
        let digits = currency.minor_digits();
        let help = format!("write the amount with at most {digits} decimals, such as `({})12.50`", currency.code());
        let (negative, number) = match text.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.trim()),
        };
        let decimal = Decimal::parse(number).ok_or_else(|| unit_error(format!("`{text}` is not an amount"), help.clone()))?;
        let minor = decimal
            .scale_to_integer(10u128.pow(digits))
            .ok_or_else(|| unit_error(format!("`{text}` has more decimals than {} allows or is too large", currency.code()), help))?;
        let largest = Money { currency, minor: Money::MAX_MINOR };
        let minor = i64::try_from(minor).ok().filter(|minor| *minor <= Money::MAX_MINOR).ok_or_else(|| {
            unit_error(format!("`{text}` is more than the largest amount placid accepts"), format!("amounts are at most {largest}"))
        })?;
        Ok(Money { currency, minor: if negative { -minor } else { minor } })
    }

    /// The amount as a float in major units, for reports and generated weights only.
    pub fn major(self) -> f64 {
        self.minor as f64 / 10f64.powi(self.currency.minor_digits() as i32)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.currency.minor_digits();
        let sign = if self.minor < 0 { "-" } else { "" };
        let magnitude = self.minor.unsigned_abs();
        if digits == 0 {
            return write!(f, "({}){sign}{magnitude}", self.currency.code());
        }
        let scale = 10u64.pow(digits);
        write!(f, "({}){sign}{}.{:0width$}", self.currency.code(), magnitude / scale, magnitude % scale, width = digits as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(Duration::parse("90s").unwrap().seconds, 90);
        assert_eq!(Duration::parse("3m").unwrap().seconds, 180);
        assert_eq!(Duration::parse("1h30m").unwrap().seconds, 5400);
        assert!(Duration::parse("3").is_err());
        assert!(Duration::parse("3w").is_err());
        assert!(Duration::parse("1.5h").is_err());
        assert_eq!(Duration { seconds: 5400 }.to_string(), "1h30m");
    }

    #[test]
    fn durations_written_by_habit_get_the_expected_form() {
        let help = |text: &str| Duration::parse(text).map(|_| String::new()).unwrap_or_else(|error| error.help);
        assert_eq!(help("4"), "give the number a unit: \"4s\", \"4m\", \"4h\" or \"4d\"");
        assert_eq!(help("h"), "write the number before the unit, such as \"1h\"");
        assert_eq!(help("3 minutes"), "write \"3m\": durations use s, m, h and d");
        assert_eq!(help("2 Hours"), "write \"2h\": durations use s, m, h and d");
        assert!(help("2 weeks").contains("such as"));
        assert_eq!(help("2days"), "write \"2d\": durations use s, m, h and d");
    }

    #[test]
    fn memory_and_bandwidth() {
        assert_eq!(Bytes::parse("141GiB").unwrap().0, 141 << 30);
        assert_eq!(Bytes::parse("1.5KiB").unwrap().0, 1536);
        assert!(Bytes::parse("0.3B").is_err());
        // Requests round up, never down: a scheduler must give at least what was asked.
        assert_eq!(Bytes(256 << 30).request(), (256, 'G'));
        assert_eq!(Bytes(3 << 29).request(), (1536, 'M'));
        assert_eq!(Bytes(1).request(), (1, 'M'));
        assert_eq!(Bandwidth::parse("900GB/s").unwrap().bits_per_second, 7_200_000_000_000);
        assert_eq!(Bandwidth::parse("400Gb/s").unwrap().bits_per_second, 400_000_000_000);
        assert_eq!(Bandwidth::parse("900GB/s").unwrap().to_string(), "900GB/s");
        assert_eq!(Bandwidth::parse("1.8TB/s").unwrap().to_string(), "1800GB/s");
        assert!(Bandwidth::parse("900").is_err());
    }

    #[test]
    fn money_is_exact() {
        let cost = Money::parse(Currency::Usd, "3.10").unwrap();
        assert_eq!(cost.minor, 310);
        assert_eq!(cost.to_string(), "(usd)3.10");
        assert!(Money::parse(Currency::Usd, "3.105").is_err());
        assert_eq!(Money::parse(Currency::Jpy, "1200").unwrap().minor, 1200);
        assert!(Money::parse(Currency::Jpy, "12.5").is_err());
    }

    #[test]
    fn money_is_bounded_so_billing_minutes_fit() {
        assert_eq!(Money::parse(Currency::Usd, "1000000000000000").map(|money| money.minor), Ok(Money::MAX_MINOR));
        let error = Money::parse(Currency::Usd, "1000000000000000.01").unwrap_err();
        assert_eq!(error.help, "amounts are at most (usd)1000000000000000.00");
        assert!(Money::parse(Currency::Usd, "92233720368547758.07").is_err());
        assert!(Money::MAX_MINOR.checked_mul(60).is_some());
    }

    #[test]
    fn percentages() {
        assert_eq!(Percent::parse("90%").unwrap().basis_points, 9000);
        assert_eq!(Percent::parse("99.95%").unwrap().to_string(), "99.95%");
        assert_eq!(Percent::parse("0.5%").unwrap().to_string(), "0.5%");
        assert!(Percent::parse("90").is_err());
    }
}
