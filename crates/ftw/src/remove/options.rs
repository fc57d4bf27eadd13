//! How a removal runs: [`RemoveOptions`].

use super::report::{Progress, Report};
use std::fmt;
use std::sync::Arc;

/// How a removal runs: built with [`RemoveOptions::new`] and its setters.
///
/// ```
/// let opts = ftw::RemoveOptions::new()
///     .threads(1)
///     .same_file_system(true)
///     .ignore_missing(true);
/// let summary = ftw::remove_tree("/nonexistent/ftw-doc", &opts);
/// assert!(summary.errors.is_empty());
/// ```
#[derive(Clone)]
pub struct RemoveOptions {
    pub(super) threads: usize,
    pub(super) same_file_system: bool,
    pub(super) make_writable: bool,
    pub(super) count_bytes: bool,
    pub(super) dry_run: bool,
    pub(super) preserve_root: bool,
    pub(super) ignore_missing: bool,
    pub(super) fd_budget: Option<usize>,
    pub(super) report: Option<Arc<dyn Report>>,
    pub(super) progress: Option<Arc<Progress>>,
}

impl fmt::Debug for RemoveOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoveOptions")
            .field("threads", &self.threads)
            .field("same_file_system", &self.same_file_system)
            .field("make_writable", &self.make_writable)
            .field("count_bytes", &self.count_bytes)
            .field("dry_run", &self.dry_run)
            .field("preserve_root", &self.preserve_root)
            .field("ignore_missing", &self.ignore_missing)
            .field("fd_budget", &self.fd_budget)
            .finish_non_exhaustive()
    }
}

impl Default for RemoveOptions {
    fn default() -> RemoveOptions {
        RemoveOptions::new()
    }
}

impl RemoveOptions {
    /// The defaults: threads as for a parallel walk, file systems crossed, nothing made
    /// writable, sizes not counted, the root directory refused, a missing path an error.
    pub fn new() -> RemoveOptions {
        RemoveOptions {
            threads: 0,
            same_file_system: false,
            make_writable: false,
            count_bytes: false,
            dry_run: false,
            preserve_root: true,
            ignore_missing: false,
            fd_budget: None,
            report: None,
            progress: None,
        }
    }

    /// Worker threads: 0 (the default) is one per core, and more while they wait on the
    /// disk (unlinks that wait for freed blocks to be discarded, reads of a cold
    /// cache); 1 removes serially, on the calling thread; N, exactly N.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// Do not remove anything on another file system than the path's: a directory inside
    /// the tree on another device, or the root of any mount (a bind mount of a directory
    /// of the same file system too, which its device does not tell: Linux's `statx`
    /// tells it, from 5.8 on), is reported and left, with its ancestors. The path itself
    /// is emptied even if it is a mount point (whose own removal then fails, `EBUSY`).
    pub fn same_file_system(mut self, yes: bool) -> Self {
        self.same_file_system = yes;
        self
    }

    /// Where removing an entry is refused because its directory is not writable (a
    /// read-only tree, such as Go's module cache), add owner write and search permission
    /// to that directory and try again; and give a directory that cannot be read (mode
    /// 0000 or 0300) owner read, write and search before reading it, which costs one
    /// `faccessat2` per directory. Only directories inside the tree are changed (the path
    /// itself included, never its parent), through their own handles, never through a
    /// link. A dry run changes nothing.
    pub fn make_writable(mut self, yes: bool) -> Self {
        self.make_writable = yes;
        self
    }

    /// Add up the sizes of the files removed ([`Summary::bytes`]): one `statx` more per
    /// file.
    ///
    /// [`Summary::bytes`]: super::Summary::bytes
    pub fn count_bytes(mut self, yes: bool) -> Self {
        self.count_bytes = yes;
        self
    }

    /// Remove nothing: report what would be removed, and as errors what the removal
    /// would fail on, so that the [`Summary`] is the one the removal would give, errors
    /// and all. The system is asked without anything being changed: for each directory,
    /// whether this process may remove its entries (write and search permission, by
    /// its effective ids; a read-only file system; an immutable or append-only
    /// directory; with [`RemoveOptions::make_writable`], what that would change); for
    /// each entry, its inode flags (immutable, append-only: one `statx` per entry, which
    /// tells them), the sticky bit of its directory, and for a directory whether it is a
    /// mount point (`EBUSY`). A directory that cannot be read is reported, as the
    /// removal reports it unless it is empty, which cannot be seen from outside; with
    /// [`RemoveOptions::make_writable`], one that the removal would give the permissions
    /// it lacks is told as removed, without what it holds (which cannot be listed before
    /// the change).
    ///
    /// [`Summary`]: super::Summary
    pub fn dry_run(mut self, yes: bool) -> Self {
        self.dry_run = yes;
        self
    }

    /// Refuse the root directory, or what resolves to it (on by default; see
    /// [`check_path`]). A path whose last component is `.` or `..` is refused whatever
    /// this says, as POSIX asks of `rm`.
    ///
    /// [`check_path`]: super::check_path
    pub fn preserve_root(mut self, yes: bool) -> Self {
        self.preserve_root = yes;
        self
    }

    /// A path that does not exist is no error, nor one that leads through something
    /// that is not a directory (`file/x`, `ENOTDIR`), as with `rm -f`.
    pub fn ignore_missing(mut self, yes: bool) -> Self {
        self.ignore_missing = yes;
        self
    }

    /// Keep at most `n` directory handles open (see [`WalkBuilder::fd_budget`]).
    ///
    /// [`WalkBuilder::fd_budget`]: crate::walk::WalkBuilder::fd_budget
    pub fn fd_budget(mut self, n: usize) -> Self {
        self.fd_budget = Some(n);
        self
    }

    /// Tell `report` of each error, and of each entry removed if it asks for them,
    /// while the removal runs; without one, errors are kept in the [`Summary`].
    ///
    /// [`Summary`]: super::Summary
    pub fn report(mut self, report: Arc<dyn Report>) -> Self {
        self.report = Some(report);
        self
    }

    /// Count into `progress` while the removal runs, for another thread to show.
    pub fn progress(mut self, progress: Arc<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }
}
