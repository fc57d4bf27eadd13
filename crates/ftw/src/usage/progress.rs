//! Counters to show progress while a count runs.

#[cfg(doc)]
use super::disk_usage;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters a caller may read while [`disk_usage`] runs, to show progress. Workers add
/// to them in batches, not once per entry.
///
/// ```
/// use ftw::usage::{UsageOptions, UsageProgress, disk_usage};
/// use std::sync::Arc;
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::write(tmp.path().join("f"), vec![1u8; 100])?;
/// let counters = Arc::new(UsageProgress::new());
/// // Another thread may read the counters while this runs.
/// let _ = disk_usage(&[tmp.path()], &UsageOptions::new().progress(counters.clone()));
/// assert_eq!(counters.entries(), 2); // the root and f
/// assert!(counters.bytes() > 0);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct UsageProgress {
    pub(super) entries: AtomicU64,
    pub(super) bytes: AtomicU64,
}

impl UsageProgress {
    /// New counters at zero.
    pub fn new() -> UsageProgress {
        UsageProgress::default()
    }

    /// Entries looked at so far (further links to a file included).
    pub fn entries(&self) -> u64 {
        self.entries.load(Relaxed)
    }

    /// Allocated bytes counted so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Relaxed)
    }
}
