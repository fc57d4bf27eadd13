//! Sizes and times as a user writes them: `+10M`, `-500k`, `2d`, `1h30m`, `2024-05-01`.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

/// A limit on a file's size, in bytes, as `fd --size` writes it: `+N` at least, `-N` at
/// most, `N` exactly; units `b`, `k`, `m`, `g`, `t` (powers of 1000) and `ki`, `mi`, `gi`,
/// `ti` (powers of 1024), in any case, with or without a trailing `b`.
///
/// ```
/// use ftw::filter::SizeLimit;
/// assert_eq!("+10M".parse(), Ok(SizeLimit::AtLeast(10_000_000)));
/// assert_eq!("-4ki".parse(), Ok(SizeLimit::AtMost(4096)));
/// assert_eq!("12".parse(), Ok(SizeLimit::Exactly(12)));
/// assert!("10Q".parse::<SizeLimit>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeLimit {
    /// At least this many bytes.
    AtLeast(u64),
    /// At most this many bytes.
    AtMost(u64),
    /// Exactly this many bytes.
    Exactly(u64),
}

impl SizeLimit {
    /// Whether a size of `size` bytes is within the limit.
    pub fn admits(self, size: u64) -> bool {
        match self {
            SizeLimit::AtLeast(n) => size >= n,
            SizeLimit::AtMost(n) => size <= n,
            SizeLimit::Exactly(n) => size == n,
        }
    }
}

impl FromStr for SizeLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<SizeLimit, String> {
        let bad = |why: &str| format!("invalid size '{s}': {why} (like +10M, -500k, 4ki)");
        let (make, rest): (fn(u64) -> SizeLimit, &str) = match s.as_bytes().first() {
            Some(b'+') => (SizeLimit::AtLeast, &s[1..]),
            Some(b'-') => (SizeLimit::AtMost, &s[1..]),
            _ => (SizeLimit::Exactly, s),
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad("a number is needed"));
        }
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| bad("the number is too large"))?;
        let unit = rest[digits..].to_ascii_lowercase();
        let unit = unit.strip_suffix('b').unwrap_or(&unit);
        let factor: u64 = match unit {
            "" => 1,
            "k" => 1_000,
            "m" => 1_000_000,
            "g" => 1_000_000_000,
            "t" => 1_000_000_000_000,
            "ki" => 1 << 10,
            "mi" => 1 << 20,
            "gi" => 1 << 30,
            "ti" => 1 << 40,
            _ => return Err(bad(&format!("unknown unit '{}'", &rest[digits..]))),
        };
        n.checked_mul(factor)
            .map(make)
            .ok_or_else(|| bad("the size is too large"))
    }
}

/// A point in time: seconds and nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Time {
    /// Seconds since 1970-01-01 UTC (negative before).
    pub secs: i64,
    /// Nanoseconds past `secs`.
    pub nanos: u32,
}

impl Time {
    /// The time `t`.
    pub fn from_system(t: SystemTime) -> Time {
        match t.duration_since(UNIX_EPOCH) {
            Ok(d) => Time {
                secs: d.as_secs() as i64,
                nanos: d.subsec_nanos(),
            },
            Err(e) => {
                let d = e.duration();
                let (secs, nanos) = (d.as_secs() as i64, d.subsec_nanos());
                match nanos {
                    0 => Time {
                        secs: -secs,
                        nanos: 0,
                    },
                    n => Time {
                        secs: -secs - 1,
                        nanos: 1_000_000_000 - n,
                    },
                }
            }
        }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}.{:09}", self.secs, self.nanos)
    }
}

/// A time as a user writes it: a duration before `now` (`90s`, `10min`, `2h`, `1h30m`,
/// `3d`, `2weeks`, `6months`, `1y`), a date or date and time in the local time zone
/// (`2024-05-01`, `2024-05-01 13:45`, `2024-05-01T13:45:10`), a time with its zone
/// (`2024-05-01T13:45:10Z`, `...+02:00`), or `@SECONDS` since the epoch.
///
/// # Errors
///
/// A message saying what is wrong with `s` and what it could be, when it is neither a
/// duration nor a date nor a time.
///
/// ```
/// use ftw::filter::{Time, parse_time};
/// use std::time::{Duration, UNIX_EPOCH};
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
/// assert_eq!(parse_time("1h30m", now)?, Time { secs: 1_000_000 - 5400, nanos: 0 });
/// assert_eq!(parse_time("2d", now)?.secs, 1_000_000 - 2 * 86400);
/// assert_eq!(parse_time("@1700000000", now)?.secs, 1_700_000_000);
/// assert_eq!(parse_time("2023-11-14T22:13:20Z", now)?.secs, 1_700_000_000);
/// assert!(parse_time("yesterday-ish", now).is_err());
/// # Ok::<(), String>(())
/// ```
pub fn parse_time(s: &str, now: SystemTime) -> Result<Time, String> {
    let bad = |why: String| {
        format!(
            "invalid time '{s}': {why} (a duration like 10min, 2h, 3d, 1h30m, or a date \
             like 2024-05-01 or 2024-05-01 13:45)"
        )
    };
    let t = s.trim();
    if let Some(secs) = t.strip_prefix('@') {
        let secs: i64 = secs
            .parse()
            .map_err(|_| bad("a number of seconds is needed after '@'".into()))?;
        return Ok(Time { secs, nanos: 0 });
    }
    if t.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && t.bytes().any(|b| b.is_ascii_alphabetic())
        && !t.contains('-')
        && !t.contains(':')
    {
        let secs = parse_duration(t).map_err(bad)?;
        let back = std::time::Duration::from_secs(secs);
        let when = now
            .checked_sub(back)
            .ok_or_else(|| bad("too long ago".into()))?;
        return Ok(Time::from_system(when));
    }
    parse_date(t).map_err(bad)
}

/// Seconds in a duration such as `1h30m` or `2 weeks`.
fn parse_duration(s: &str) -> Result<u64, String> {
    let mut total: u64 = 0;
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("a number is needed before '{rest}'"));
        }
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| "the number is too large".to_string())?;
        rest = rest[digits..].trim_start();
        let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..letters];
        let secs: u64 = match unit {
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 7 * 86_400,
            "M" | "month" | "months" => 2_630_016, // 30.44 days
            "y" | "year" | "years" => 31_557_600,  // 365.25 days
            "" => return Err(format!("a unit is needed after {n}")),
            u => return Err(format!("unknown unit '{u}'")),
        };
        total = n
            .checked_mul(secs)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| "the duration is too long".to_string())?;
        rest = rest[letters..].trim_start();
    }
    Ok(total)
}

/// A date, or a date and time, in the local time zone unless it says its own.
fn parse_date(s: &str) -> Result<Time, String> {
    use jiff::{Timestamp, civil, tz::TimeZone};
    let stamp = if let Ok(ts) = s.parse::<Timestamp>() {
        ts
    } else {
        let civil: civil::DateTime = match s.parse::<civil::DateTime>() {
            Ok(dt) => dt,
            Err(_) => s
                .parse::<civil::Date>()
                .map_err(|e| format!("not a date: {e}"))?
                .to_datetime(civil::Time::midnight()),
        };
        civil
            .to_zoned(TimeZone::system())
            .map_err(|e| e.to_string())?
            .timestamp()
    };
    Ok(Time {
        secs: stamp.as_second(),
        nanos: stamp.subsec_nanosecond().max(0) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_dates() {
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        assert_eq!(parse_duration("2 weeks"), Ok(14 * 86400));
        assert!(parse_duration("5 fortnights").is_err());
        let now = SystemTime::now();
        let local = parse_time("2024-05-01 13:45", now).unwrap();
        let midnight = parse_time("2024-05-01", now).unwrap();
        assert_eq!(local.secs - midnight.secs, 13 * 3600 + 45 * 60);
        assert_eq!(
            parse_time("2024-05-01T00:00:00+02:00", now).unwrap().secs,
            1_714_514_400
        );
        let e = parse_time("2024-13-01", now).unwrap_err();
        assert!(e.contains("2024-13-01"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!("+1kb".parse(), Ok(SizeLimit::AtLeast(1000)));
        assert_eq!("-1KiB".parse(), Ok(SizeLimit::AtMost(1024)));
        assert_eq!("0".parse(), Ok(SizeLimit::Exactly(0)));
        assert!("+".parse::<SizeLimit>().is_err());
        assert!("99999999999999999999".parse::<SizeLimit>().is_err());
        assert!("+20000000T".parse::<SizeLimit>().is_err());
    }
}
