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

    /// A block size as `-B` takes it: `human-readable`, `si`, or an optional number
    /// and an optional unit (`K`, `M`, ... powers of 1024; `KB`, `MB`, ... of 1000;
    /// `KiB`, ... of 1024). A unit without a number is written after each size.
    pub fn parse(spec: &str) -> Result<Format, String> {
        let bad = || format!("invalid block size '{spec}'");
        let s = spec.strip_prefix('\'').unwrap_or(spec);
        if !s.is_empty() && "human-readable".starts_with(s) {
            return Ok(Format::HUMAN);
        }
        if !s.is_empty() && "si".starts_with(s) {
            return Ok(Format::SI);
        }
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let (num, rest) = s.split_at(digits);
        let mut n: u64 = if num.is_empty() {
            1
        } else {
            num.parse().map_err(|_| bad())?
        };
        let mut fmt = Format::blocks(1);
        if !rest.is_empty() {
            let mut chars = rest.chars();
            let unit = chars.next().expect("not empty");
            let tail = chars.as_str();
            let base: u64 = match tail {
                "" | "iB" => 1024,
                "B" | "D" => 1000,
                _ => return Err(bad()),
            };
            let power = match unit {
                'k' | 'K' => 1,
                'm' | 'M' => 2,
                'g' | 'G' => 3,
                't' | 'T' => 4,
                'p' | 'P' => 5,
                'e' | 'E' => 6,
                'z' | 'Z' => 7,
                'y' | 'Y' => 8,
                _ => return Err(bad()),
            };
            for _ in 0..power {
                n = n.checked_mul(base).ok_or_else(bad)?;
            }
            if num.is_empty() {
                fmt.letter = true;
                fmt.b = tail.ends_with('B');
                fmt.base1024 = tail != "B";
            }
        }
        if n == 0 {
            return Err(bad());
        }
        fmt.block = n;
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
