//! Sizes written as GNU du writes them: block sizes from `-B`, `DU_BLOCK_SIZE`,
//! `BLOCK_SIZE` and `BLOCKSIZE` (gnulib's `human_options`), and numbers rounded up to
//! the unit, or scaled with one decimal below 10 (`-h`, `--si`; gnulib's
//! `human_readable` with its default, ceiling, rounding).

/// How to write a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// The unit: sizes are divided by it, rounded up.
    pub block: u64,
    /// Scale to the largest power that keeps the number below the base (`-h`, `--si`).
    pub autoscale: bool,
    /// Powers of 1024 (else 1000).
    pub base1024: bool,
    /// Write the unit's letter (`-BK` writes `4K`; `-B1K` writes `4`).
    pub letter: bool,
    /// Write a `B` after it (`-BKB` writes `3kB`, `-BKiB` `3KiB`).
    pub b: bool,
}

impl Format {
    /// Plain numbers of `block`-byte units.
    pub const fn blocks(block: u64) -> Format {
        Format {
            block,
            autoscale: false,
            base1024: true,
            letter: false,
            b: false,
        }
    }

    /// `-h`: powers of 1024, `4.0K`, `12M`.
    pub const HUMAN: Format = Format {
        block: 1,
        autoscale: true,
        base1024: true,
        letter: true,
        b: false,
    };

    /// `--si`: powers of 1000, `4.1k`, `13M`.
    pub const SI: Format = Format {
        block: 1,
        autoscale: true,
        base1024: false,
        letter: true,
        b: false,
    };

    /// The default: `DU_BLOCK_SIZE`, else `BLOCK_SIZE`, else `BLOCKSIZE`, else 1024
    /// (512 with `POSIXLY_CORRECT`), as du reads them; `get` reads a variable.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Format {
        let default = || {
            Format::blocks(if get("POSIXLY_CORRECT").is_some() {
                512
            } else {
                1024
            })
        };
        ["DU_BLOCK_SIZE", "BLOCK_SIZE", "BLOCKSIZE"]
            .iter()
            .find_map(|v| get(v))
            .map(|spec| Format::parse(&spec).unwrap_or_else(|_| default()))
            .unwrap_or_else(default)
    }

    /// A block size as `-B` takes it (gnulib's `human_options`): `human-readable` or
    /// `si` (or a prefix of either), or a number with an optional unit (`K`, `M`, ...
    /// powers of 1024; `KB`, `MB`, ... of 1000; `KiB`, ... of 1024), as `strtoumax`
    /// reads numbers (`0x10`, `010` octal, leading blanks, `+`). A unit without a
    /// number is written after each size; a leading `'` (digit grouping) changes
    /// nothing in the C locale. 0 is refused.
    pub fn parse(spec: &str) -> Result<Format, NumError> {
        let s = spec.strip_prefix('\'').unwrap_or(spec);
        if let Ok(f) = argmatch(s, &[("human-readable", Format::HUMAN), ("si", Format::SI)]) {
            return Ok(f);
        }
        let n = xstrtol(s, "eEgGkKmMpPtTyYzZ0", false).map_err(|e| match e {
            // A refused suffix after a 0 is a 0 all the same.
            NumError::Suffix(0) => NumError::Invalid,
            e => e,
        })?;
        let n = u64::try_from(n).map_err(|_| NumError::TooLarge)?;
        if n == 0 {
            return Err(NumError::Invalid);
        }
        let mut fmt = Format::blocks(n);
        // No digit before the end: the unit alone, written after each size.
        if !s.bytes().any(|b| b.is_ascii_digit()) {
            fmt.letter = true;
            fmt.b = s.ends_with('B');
            fmt.base1024 = !s.ends_with('B') || s.ends_with("iB");
        }
        Ok(fmt)
    }

    /// `n` bytes written in this format; `u64::MAX`, where sums saturate, as
    /// `Infinity` (du's `print_only_size`).
    pub fn show(&self, n: u64) -> String {
        if n == u64::MAX {
            return "Infinity".to_string();
        }
        let base: u64 = if self.base1024 { 1024 } else { 1000 };
        let d = self.block as u128;
        let n = n as u128;
        let (mut amt, mut tenths, mut rounding) = if d == 1 {
            (n, 0u128, 0u128)
        } else {
            let r10 = (n % d) * 10;
            let r2 = (r10 % d) * 2;
            let rounding = if r2 < d {
                u128::from(r2 > 0)
            } else {
                2 + u128::from(d < r2)
            };
            (n / d, r10 / d, rounding)
        };
        let base = base as u128;
        let mut exponent: i32 = -1;
        let mut frac: Option<u128> = None;
        const MAX: i32 = 10;
        if self.autoscale {
            exponent = 0;
            if base <= amt {
                loop {
                    let r10 = (amt % base) * 10 + tenths;
                    let r2 = (r10 % base) * 2 + (rounding >> 1);
                    amt /= base;
                    tenths = r10 / base;
                    rounding = if r2 < base {
                        u128::from(r2 + rounding != 0)
                    } else {
                        2 + u128::from(base < r2 + rounding)
                    };
                    exponent += 1;
                    if !(base <= amt && exponent < MAX) {
                        break;
                    }
                }
                if amt < 10 {
                    if rounding > 0 {
                        tenths += 1;
                        rounding = 0;
                        if tenths == 10 {
                            amt += 1;
                            tenths = 0;
                        }
                    }
                    if amt < 10 {
                        frac = Some(tenths);
                        tenths = 0;
                        rounding = 0;
                    }
                }
            }
        }
        if tenths + rounding > 0 {
            amt += 1;
            if self.autoscale && amt == base && exponent < MAX {
                exponent += 1;
                frac = Some(0);
                amt = 1;
            }
        }
        let mut s = amt.to_string();
        if let Some(t) = frac {
            s.push('.');
            s.push(char::from(b'0' + t as u8));
        }
        if self.letter {
            if exponent < 0 {
                exponent = 0;
                let mut power: u128 = 1;
                while power < d {
                    power *= base;
                    exponent += 1;
                    if exponent == MAX {
                        break;
                    }
                }
            }
            if exponent > 0 {
                let letters = b"KMGTPEZYRQ";
                s.push(if !self.base1024 && exponent == 1 {
                    'k'
                } else {
                    char::from(letters[exponent as usize - 1])
                });
            }
            if self.b {
                if self.base1024 && exponent > 0 {
                    s.push('i');
                }
                s.push('B');
            }
        }
        s
    }
}

/// Why gnulib's `xstrtol` refuses a number, which du tells in its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumError {
    /// Not a number (`invalid -B argument 'x'`).
    Invalid,
    /// A number (this one) followed by what is not a unit
    /// (`invalid suffix in -t argument '1x'`).
    Suffix(i128),
    /// Beyond the type's range (`-t argument '...' too large`).
    TooLarge,
}

impl NumError {
    /// du's message for `arg` given to `option` (`-B`, `--block-size`).
    pub fn message(self, option: &str, arg: &str) -> String {
        match self {
            NumError::Invalid => format!("invalid {option} argument '{arg}'"),
            NumError::Suffix(_) => format!("invalid suffix in {option} argument '{arg}'"),
            NumError::TooLarge => format!("{option} argument '{arg}' too large"),
        }
    }
}

/// gnulib's `xstrtoimax` (`signed`) or `xstrtoumax` in base 0, with the unit letters
/// `valid` (a `0` among them allowing `KB`, `KiB`, `KD`): leading blanks, a sign
/// (`-` refused unsigned), `0x` hexadecimal, `0` octal; a unit alone means 1 of it.
pub fn xstrtol(s: &str, valid: &str, signed: bool) -> Result<i128, NumError> {
    let b = s.as_bytes();
    let mut i = b
        .iter()
        .take_while(|&&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    if !signed && b.get(i) == Some(&b'-') {
        return Err(NumError::Invalid);
    }
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let (radix, start) = match (b.get(i), b.get(i + 1), b.get(i + 2)) {
        (Some(b'0'), Some(b'x' | b'X'), Some(h)) if h.is_ascii_hexdigit() => (16, i + 2),
        (Some(b'0'), _, _) => (8, i),
        _ => (10, i),
    };
    // The range's bound in magnitude; past it the value is clamped, as strtol does.
    let bound: i128 = match (signed, negative) {
        (true, true) => -(i128::from(i64::MIN)),
        (true, false) => i128::from(i64::MAX),
        (false, _) => i128::from(u64::MAX),
    };
    let mut magnitude: i128 = 0;
    let mut overflow = false;
    let mut j = start;
    while let Some(d) = b.get(j).and_then(|&c| char::from(c).to_digit(radix)) {
        magnitude = magnitude * i128::from(radix) + i128::from(d);
        if magnitude > bound {
            magnitude = bound;
            overflow = true;
        }
        j += 1;
    }
    let mut value = if j == start {
        // No number: a unit alone stands for 1 of it (the string's first byte).
        if b.first().is_some_and(|c| valid.as_bytes().contains(c)) {
            j = 0;
            1
        } else {
            return Err(NumError::Invalid);
        }
    } else if negative && !signed {
        // strtoumax negates; xstrtoumax refused '-' before.
        return Err(NumError::Invalid);
    } else if negative {
        -magnitude
    } else {
        magnitude
    };
    let (min, max) = if signed {
        (i128::from(i64::MIN), i128::from(i64::MAX))
    } else {
        (0, i128::from(u64::MAX))
    };
    if let Some(&c) = b.get(j) {
        if !valid.as_bytes().contains(&c) {
            return Err(NumError::Suffix(value));
        }
        let mut base: i128 = 1024;
        let mut len = 1;
        if b"EGgkKMmPQRTtYZ".contains(&c) && valid.contains('0') {
            match (b.get(j + 1), b.get(j + 2)) {
                (Some(b'i'), Some(b'B')) => len += 2,
                (Some(b'B' | b'D'), _) => {
                    base = 1000;
                    len += 1;
                }
                _ => {}
            }
        }
        let scale: i128 = match c {
            b'b' => 512,
            b'B' => 1024,
            b'c' => 1,
            b'w' => 2,
            b'k' | b'K' => base,
            b'M' | b'm' => base.pow(2),
            b'G' | b'g' => base.pow(3),
            b'T' | b't' => base.pow(4),
            b'P' => base.pow(5),
            b'E' => base.pow(6),
            b'Z' => base.pow(7),
            b'Y' => base.pow(8),
            b'R' => base.pow(9),
            b'Q' => base.pow(10),
            _ => return Err(NumError::Suffix(value)),
        };
        value = value.saturating_mul(scale);
        if value > max || value < min {
            value = value.clamp(min, max);
            overflow = true;
        }
        if j + len < b.len() {
            return Err(NumError::Suffix(value));
        }
    }
    if overflow {
        return Err(NumError::TooLarge);
    }
    Ok(value)
}

/// gnulib's `argmatch`: the value of `arg` among `words`, or of the words it begins
/// if they all have one value; else `Err(true)` if it begins words of several values,
/// `Err(false)` if none.
pub fn argmatch<V: Copy + PartialEq>(arg: &str, words: &[(&str, V)]) -> Result<V, bool> {
    if let Some((_, v)) = words.iter().find(|(w, _)| *w == arg) {
        return Ok(*v);
    }
    let mut found = words
        .iter()
        .filter(|(w, _)| w.starts_with(arg))
        .map(|(_, v)| *v);
    match found.next() {
        Some(v) if found.all(|o| o == v) => Ok(v),
        Some(_) => Err(true),
        None => Err(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_du_writes_them() {
        let k = Format::blocks(1024);
        assert_eq!(k.show(0), "0");
        assert_eq!(k.show(1), "1");
        assert_eq!(k.show(3_018_752), "2948");
        let h = Format::HUMAN;
        assert_eq!(h.show(0), "0");
        assert_eq!(h.show(512), "512");
        assert_eq!(h.show(4096), "4.0K");
        assert_eq!(h.show(3_018_752), "2.9M");
        assert_eq!(h.show(1023 * 1024 + 1), "1.0M");
        assert_eq!(h.show(12 * 1024 * 1024 + 1), "13M");
        assert_eq!(h.show(10 * 1024 * 1024), "10M");
        assert_eq!(h.show(1536), "1.5K");
        assert_eq!(Format::SI.show(3_018_752), "3.1M");
        assert_eq!(Format::SI.show(4096), "4.1k");
        assert_eq!(Format::parse("K").unwrap().show(3_018_752), "2948K");
        assert_eq!(Format::parse("KB").unwrap().show(3_018_752), "3019kB");
        assert_eq!(Format::parse("1K").unwrap().show(3_018_752), "2948");
        assert_eq!(Format::parse("MiB").unwrap().show(3_018_752), "3MiB");
        assert_eq!(Format::parse("M").unwrap().show(3_018_752), "3M");
        assert_eq!(Format::parse("3").unwrap().show(3_018_752), "1006251");
        assert_eq!(Format::parse("human").unwrap(), Format::HUMAN);
        assert!(Format::parse("0").is_err());
        // As GNU du reads them: strtoumax's numbers, its messages' three kinds.
        assert_eq!(Format::parse("0x10").unwrap(), Format::blocks(16));
        assert_eq!(Format::parse("010").unwrap(), Format::blocks(8));
        assert_eq!(Format::parse(" +5").unwrap(), Format::blocks(5));
        assert_eq!(Format::parse("1g").unwrap(), Format::blocks(1 << 30));
        for (spec, e) in [
            ("", NumError::Invalid),
            ("-1", NumError::Invalid),
            ("0x", NumError::Invalid),
            ("08", NumError::Invalid),
            ("'", NumError::Invalid),
            ("1.5K", NumError::Suffix(1)),
            ("1e", NumError::Suffix(1)),
            ("1B", NumError::Suffix(1)),
            ("1R", NumError::Suffix(1)),
            ("1Y", NumError::TooLarge),
            ("18446744073709551616", NumError::TooLarge),
        ] {
            assert_eq!(Format::parse(spec).map(|_| ()), Err(e), "{spec:?}");
        }
        assert_eq!(xstrtol("-1K", "kKmMGTPEZY0", true), Ok(-1024));
        assert_eq!(xstrtol("1KB", "kKmMGTPEZY0", true), Ok(1000));
        assert_eq!(
            xstrtol("-9223372036854775808", "", true),
            Ok(i128::from(i64::MIN))
        );
        assert_eq!(
            xstrtol("9223372036854775808", "", true),
            Err(NumError::TooLarge)
        );
        assert_eq!(xstrtol("0x", "kK0", true), Err(NumError::Suffix(0)));
        assert_eq!(xstrtol("K", "kK0", true), Ok(1024));
        assert_eq!(
            argmatch("lo", &[("full-iso", 0), ("long-iso", 1), ("iso", 2)]),
            Ok(1)
        );
        assert_eq!(
            argmatch("a", &[("atime", 0), ("access", 0), ("ctime", 1)]),
            Ok(0)
        );
        assert_eq!(argmatch("", &[("a", 0), ("b", 1)]), Err(true));
        assert_eq!(argmatch("x", &[("a", 0)]), Err(false));
        assert!(Format::parse("foo").is_err());
        assert!(Format::parse("1Q").is_err());
        // Sums saturate there: du writes it as Infinity, whatever the format.
        for f in [k, h, Format::SI, Format::blocks(1)] {
            assert_eq!(f.show(u64::MAX), "Infinity");
        }
        assert_eq!(Format::blocks(1).show(u64::MAX - 1), "18446744073709551614");
    }

    #[test]
    fn block_size_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Format::from_env(env(&[])), Format::blocks(1024));
        assert_eq!(
            Format::from_env(env(&[("BLOCK_SIZE", "1"), ("DU_BLOCK_SIZE", "K")])),
            Format::parse("K").unwrap()
        );
        assert_eq!(
            Format::from_env(env(&[("BLOCKSIZE", "human-readable")])),
            Format::HUMAN
        );
        assert_eq!(
            Format::from_env(env(&[("POSIXLY_CORRECT", "1")])),
            Format::blocks(512)
        );
    }
}
