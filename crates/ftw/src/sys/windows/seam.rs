//! The fault seam and call counters of the crate's tests: per thread, so that a test
//! counts only its own calls.

use std::cell::Cell;

thread_local! {
    /// When set, `stat_at` and `stat_path` skip `GetFileAttributesExW` and take the
    /// handle-based way, as when that call fails.
    pub(crate) static FORCE_HANDLE_STAT: Cell<bool> = const { Cell::new(false) };
    /// When set, the POSIX disposition is skipped for the classic one.
    pub(crate) static FORCE_CLASSIC_DELETE: Cell<bool> = const { Cell::new(false) };
    /// When set, the handle way of `stat` skips `GetFileInformationByHandle` for
    /// the queries of one class each, as when that call fails.
    pub(crate) static FORCE_CLASS_QUERIES: Cell<bool> = const { Cell::new(false) };
    static COUNTS: Cell<Counts> = const { Cell::new(Counts::ZERO) };
}

/// Calls made by this thread, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// `NtCreateFile` / `CreateFileW` opens of a directory.
    pub(crate) dir_opens: u64,
    /// `GetFileInformationByHandleEx` directory batch reads.
    pub(crate) batch_reads: u64,
    /// `GetFileAttributesExW` calls.
    pub(crate) attr_calls: u64,
    /// Opens of an entry for its metadata (the handle way of `stat_at`).
    pub(crate) stat_opens: u64,
    /// Queries on a handle (`GetFileInformationByHandle(Ex)` for metadata or a tag).
    pub(crate) handle_queries: u64,
    /// Opens for deletion.
    pub(crate) delete_opens: u64,
    /// `SetFileInformationByHandle` disposition calls.
    pub(crate) dispositions: u64,
    /// `FileNameInfo` queries before a classic disposition.
    pub(crate) name_queries: u64,
}

impl Counts {
    const ZERO: Counts = Counts {
        dir_opens: 0,
        batch_reads: 0,
        attr_calls: 0,
        stat_opens: 0,
        handle_queries: 0,
        delete_opens: 0,
        dispositions: 0,
        name_queries: 0,
    };
}

pub(crate) fn bump(f: impl FnOnce(&mut Counts)) {
    COUNTS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// This thread's counts so far, reset to zero.
pub(crate) fn take() -> Counts {
    COUNTS.with(|c| c.replace(Counts::ZERO))
}

pub(crate) fn force_handle_stat() -> bool {
    FORCE_HANDLE_STAT.with(Cell::get)
}

pub(crate) fn force_classic_delete() -> bool {
    FORCE_CLASSIC_DELETE.with(Cell::get)
}

pub(crate) fn force_class_queries() -> bool {
    FORCE_CLASS_QUERIES.with(Cell::get)
}
