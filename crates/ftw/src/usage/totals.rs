//! What files and trees add up to: [`Totals`], and the shared sums workers add to.

use crate::sys::{FileType, Metadata};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a file or a tree adds up to.
///
/// ```
/// use ftw::usage::Totals;
///
/// let a = Totals { bytes: 4096, apparent: 10, inodes: 1 };
/// let b = Totals { bytes: 8192, apparent: 5000, inodes: 1 };
/// assert_eq!(a + b, Totals { bytes: 12288, apparent: 5010, inodes: 2 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Bytes allocated on disk (`st_blocks` × 512): what `du` shows by default.
    pub bytes: u64,
    /// Apparent size: the `st_size` of regular files and symbolic links, as coreutils
    /// 9.2 and later count it (`du --apparent-size`); directories and other files add 0.
    pub apparent: u64,
    /// Entries counted (`du --inodes`).
    pub inodes: u64,
}

impl Totals {
    /// The totals of one file of metadata `m`.
    ///
    /// ```
    /// use ftw::sys::{FileType, Metadata};
    /// use ftw::usage::Totals;
    ///
    /// let m = Metadata { file_type: Some(FileType::Dir), size: 4096, blocks: 8, ..Default::default() };
    /// assert_eq!(Totals::of(&m), Totals { bytes: 4096, apparent: 0, inodes: 1 });
    /// ```
    pub fn of(m: &Metadata) -> Totals {
        let apparent = match m.file_type() {
            FileType::File | FileType::Symlink => m.size,
            _ => 0,
        };
        Totals {
            bytes: m.blocks.saturating_mul(512),
            apparent,
            inodes: 1,
        }
    }
}

impl std::ops::Add for Totals {
    type Output = Totals;
    /// Saturating, as du's sums are: a total past `u64::MAX` stays there (du prints it
    /// as `Infinity`), rather than wrapping to a small number.
    fn add(self, o: Totals) -> Totals {
        Totals {
            bytes: self.bytes.saturating_add(o.bytes),
            apparent: self.apparent.saturating_add(o.apparent),
            inodes: self.inodes.saturating_add(o.inodes),
        }
    }
}

impl std::ops::AddAssign for Totals {
    fn add_assign(&mut self, o: Totals) {
        *self = *self + o;
    }
}

/// Totals shared by the workers below a directory. Sums saturate at `u64::MAX` (as
/// [`Totals`]' do): an add that wraps sets a sticky flag for its field (the adds are
/// never negative, so once past the maximum the true sum stays past it).
#[derive(Default)]
pub(super) struct AtomicTotals {
    bytes: AtomicU64,
    apparent: AtomicU64,
    inodes: AtomicU64,
    /// Bit 0: bytes wrapped; 1: apparent; 2: inodes.
    wrapped: std::sync::atomic::AtomicU8,
}

impl AtomicTotals {
    pub(super) fn add(&self, t: Totals) {
        // `bit` when adding `v` to `field` wrapped it.
        let wrap = |field: &AtomicU64, v: u64, bit: u8| {
            let before = field.fetch_add(v, Relaxed);
            if before.checked_add(v).is_none() {
                bit
            } else {
                0
            }
        };
        let mut wrapped = wrap(&self.bytes, t.bytes, 1) | wrap(&self.inodes, t.inodes, 4);
        if t.apparent != 0 {
            wrapped |= wrap(&self.apparent, t.apparent, 2);
        }
        if wrapped != 0 {
            self.wrapped.fetch_or(wrapped, Relaxed);
        }
    }

    pub(super) fn into_inner(self) -> Totals {
        let wrapped = self.wrapped.into_inner();
        let field = |v: AtomicU64, bit: u8| {
            if wrapped & bit != 0 {
                u64::MAX
            } else {
                v.into_inner()
            }
        };
        Totals {
            bytes: field(self.bytes, 1),
            apparent: field(self.apparent, 2),
            inodes: field(self.inodes, 4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_sums_saturate_rather_than_wrap() {
        let big = Totals {
            bytes: u64::MAX - 1,
            apparent: 1 << 63,
            inodes: 1,
        };
        assert_eq!(
            big + big,
            Totals {
                bytes: u64::MAX,
                apparent: u64::MAX,
                inodes: 2
            }
        );
        let shared = AtomicTotals::default();
        for _ in 0..3 {
            shared.add(big);
        }
        let t = shared.into_inner();
        assert_eq!((t.bytes, t.apparent, t.inodes), (u64::MAX, u64::MAX, 3));
    }
}
