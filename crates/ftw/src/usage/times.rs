//! The latest time of a tree (`du --time`): of which time it is ([`TimeOf`]), the time
//! itself ([`Stamp`]), and the latest kept per directory while workers count.

use crate::sys::{Metadata, StatMask};
use std::sync::Mutex;

/// Which time of its files a tree's latest is taken from ([`UsageOptions::latest`]).
///
/// [`UsageOptions::latest`]: super::UsageOptions::latest
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeOf {
    /// The last modification (`du --time`).
    Modified,
    /// The last access (`du --time=atime`).
    Accessed,
    /// The last change of status (`du --time=ctime`).
    Changed,
}

impl TimeOf {
    /// This time of a file of metadata `m` (asked with [`TimeOf::mask`]).
    ///
    /// ```
    /// use ftw::sys::Metadata;
    /// use ftw::usage::{Stamp, TimeOf};
    ///
    /// let m = Metadata { mtime: 5, mtime_nsec: 7, ctime: 9, ..Default::default() };
    /// assert_eq!(TimeOf::Modified.of(&m), Stamp { secs: 5, nsec: 7 });
    /// assert_eq!(TimeOf::Changed.of(&m), Stamp { secs: 9, nsec: 0 });
    /// ```
    pub fn of(self, m: &Metadata) -> Stamp {
        let (secs, nsec) = match self {
            TimeOf::Modified => (m.mtime, m.mtime_nsec),
            TimeOf::Accessed => (m.atime, m.atime_nsec),
            TimeOf::Changed => (m.ctime, m.ctime_nsec),
        };
        Stamp { secs, nsec }
    }

    /// What to ask of the system for this time.
    pub fn mask(self) -> StatMask {
        match self {
            TimeOf::Modified => StatMask::MTIME,
            TimeOf::Accessed | TimeOf::Changed => StatMask::TIMES,
        }
    }
}

/// A time: seconds since the Unix epoch and nanoseconds; ordered as time goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    /// Seconds since the Unix epoch (negative before it).
    pub secs: i64,
    /// Nanoseconds past `secs` (below 1,000,000,000).
    pub nsec: u32,
}

/// The latest of the times noted, shared by workers (noted only when times are asked).
#[derive(Default)]
pub(super) struct Latest(Mutex<Option<Stamp>>);

impl Latest {
    pub(super) fn note(&self, t: Option<Stamp>) {
        if let Some(t) = t {
            let mut cur = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if cur.is_none_or(|c| c < t) {
                *cur = Some(t);
            }
        }
    }

    pub(super) fn into_inner(self) -> Option<Stamp> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}
