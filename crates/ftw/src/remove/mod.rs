//! Removal of whole trees through directory handles: a [`Visitor`] of the walker that
//! unlinks each non-directory as its entry is seen and removes each directory when it
//! is left, relative to the handles the walk keeps.
//!
//! - Every call is relative to an open directory: a subdirectory is opened with
//!   `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)`, an entry removed with
//!   `unlinkat(dir, name)`. A symbolic link is removed, never followed, whether it is
//!   the path given or inside the tree, and a directory swapped for a link while the
//!   removal runs is not entered: nothing outside the tree is touched.
//! - The entry's `d_type` says file or directory (a `statx` only where the file system
//!   does not say), so no call is made that is expected to fail.
//! - No recursion and a bounded number of open handles, whatever the depth
//!   ([`WalkBuilder::keep_handles`]).
//! - In parallel, each directory is a job of the walker's work-stealing pool, and the
//!   job that finishes a directory's last child removes it.
//! - Another process removing the same tree is no error: an entry already gone counts
//!   as removed. A directory that fills again while it is removed is read again, a
//!   bounded number of times, then reported.
//!
//! ```
//! let tmp = tempfile::tempdir()?;
//! let tree = tmp.path().join("tree");
//! std::fs::create_dir_all(tree.join("a/b"))?;
//! std::fs::write(tree.join("a/b/file"), b"data")?;
//! std::fs::write(tree.join("top"), b"data")?;
//!
//! let summary = ftw::remove_tree(&tree, &ftw::RemoveOptions::new());
//! assert!(summary.errors.is_empty());
//! assert_eq!(summary.removed, 5); // top, a/b/file, a/b, a and the tree itself
//! assert!(!tree.exists());
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::TreeError;
use crate::sys::{self, Dir, FileType, StatMask};
use crate::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder, bytes_to_path};
use std::ffi::{CStr, CString};
use std::fmt;
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How many times a directory that keeps filling while it is removed is read again
/// before it is reported.
const REFILLS: usize = 3;

/// How many errors a [`Summary`] keeps in [`Summary::errors`] when no [`Report`] takes
/// them: the first ones met. Every error is counted all the same
/// ([`Summary::error_count`]).
pub const KEPT_ERRORS: usize = 100;

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
    threads: usize,
    same_file_system: bool,
    make_writable: bool,
    count_bytes: bool,
    dry_run: bool,
    preserve_root: bool,
    ignore_missing: bool,
    fd_budget: Option<usize>,
    report: Option<Arc<dyn Report>>,
    progress: Option<Arc<Progress>>,
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

    /// Do not remove anything on another file system than the path's: a mount point
    /// inside the tree is reported and left, with its ancestors.
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
    pub fn count_bytes(mut self, yes: bool) -> Self {
        self.count_bytes = yes;
        self
    }

    /// Remove nothing: report what would be removed.
    pub fn dry_run(mut self, yes: bool) -> Self {
        self.dry_run = yes;
        self
    }

    /// Refuse the root directory, and a path ending in `.` or `..` (on by default; see
    /// [`check_path`]).
    pub fn preserve_root(mut self, yes: bool) -> Self {
        self.preserve_root = yes;
        self
    }

    /// A path that does not exist is no error (as with `rm -f`).
    pub fn ignore_missing(mut self, yes: bool) -> Self {
        self.ignore_missing = yes;
        self
    }

    /// Keep at most `n` directory handles open (see [`WalkBuilder::fd_budget`]).
    pub fn fd_budget(mut self, n: usize) -> Self {
        self.fd_budget = Some(n);
        self
    }

    /// Tell `report` of each error, and of each entry removed if it asks for them,
    /// while the removal runs; without one, errors are kept in the [`Summary`].
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

/// Told of a removal's errors, and of the entries it removes, as they happen: from
/// several threads at once in a parallel removal.
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Default)]
/// struct Log(Mutex<Vec<Vec<u8>>>);
/// impl ftw::remove::Report for Log {
///     fn wants_paths(&self) -> bool {
///         true
///     }
///     fn removed(&self, path: &[u8], _: ftw::sys::FileType) {
///         self.0.lock().unwrap().push(path.to_vec());
///     }
/// }
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("t"))?;
/// std::fs::write(tmp.path().join("t/f"), b"x")?;
/// let log = Arc::new(Log::default());
/// let t = tmp.path().join("t");
/// ftw::remove_tree(&t, &ftw::RemoveOptions::new().report(log.clone())).into_result()?;
/// let f = t.join("f");
/// let expected: Vec<&[u8]> = vec![f.to_str().unwrap().as_bytes(), t.to_str().unwrap().as_bytes()];
/// assert_eq!(*log.0.lock().unwrap(), expected); // a directory after its entries
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait Report: Send + Sync {
    /// Whether [`Report::removed`] is wanted: each path is then built, which costs.
    fn wants_paths(&self) -> bool {
        false
    }

    /// An entry was removed (or, in a dry run, would be): a directory after everything
    /// in it.
    fn removed(&self, path: &[u8], file_type: FileType) {
        let _ = (path, file_type);
    }

    /// An entry could not be removed; the directories holding it are kept, without an
    /// error of their own.
    fn error(&self, error: Error) {
        let _ = error;
    }
}

/// Counts that a removal updates while it runs (in batches, not per entry), for a
/// progress display.
#[derive(Debug, Default)]
pub struct Progress {
    removed: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
}

impl Progress {
    /// Entries removed so far.
    pub fn removed(&self) -> u64 {
        self.removed.load(Ordering::Relaxed)
    }

    /// Bytes of the files removed so far (with [`RemoveOptions::count_bytes`]).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Errors so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

/// What a removal did: it goes on past an error, so a removal that failed somewhere
/// still says what it removed. [`Summary::into_result`] makes it a `Result`.
#[derive(Debug, Default)]
#[must_use = "a removal may have failed: see its `error_count`, or `into_result()`"]
pub struct Summary {
    /// Entries removed (in a dry run: that would be), the path itself included; an entry
    /// that something else removed meanwhile counts.
    pub removed: u64,
    /// The sizes of the files removed, with [`RemoveOptions::count_bytes`].
    pub bytes: u64,
    /// How many entries could not be removed (their directories not counted): every
    /// error, whether kept in [`Summary::errors`], told to a [`Report`], or past the cap.
    pub error_count: u64,
    /// The errors, when no [`Report`] took them: the first [`KEPT_ERRORS`] (100) met, in
    /// the order met; those past the cap are only counted ([`Summary::error_count`]).
    pub errors: Vec<Error>,
    /// The first failure to start a worker thread, and the threads the removal went on
    /// with (it went on all the same).
    pub thread_error: Option<(io::Error, usize)>,
}

impl Summary {
    /// `Ok` with what was removed when there was no error, else the first error kept
    /// and how many there were.
    ///
    /// # Errors
    ///
    /// A [`TreeError`] when [`Summary::error_count`] is not 0: its first error is the
    /// first of [`Summary::errors`] (`None` if a [`Report`] took them), its count
    /// [`Summary::error_count`]. A failure to start a worker thread
    /// ([`Summary::thread_error`]) is no error: the removal went on with fewer.
    ///
    /// ```
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("t"))?;
    /// std::fs::write(tmp.path().join("t/f"), b"x")?;
    /// let opts = ftw::RemoveOptions::new().count_bytes(true);
    /// let counts = ftw::remove_tree(tmp.path().join("t"), &opts).into_result()?;
    /// assert_eq!((counts.removed, counts.bytes), (2, 1));
    ///
    /// let err = ftw::remove_tree(tmp.path().join("t"), &opts).into_result().unwrap_err();
    /// assert_eq!((err.count(), err.kind()), (1, std::io::ErrorKind::NotFound));
    /// assert_eq!(err.first().unwrap().path(), tmp.path().join("t"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_result(self) -> Result<Counts, TreeError> {
        if self.error_count == 0 {
            return Ok(Counts {
                removed: self.removed,
                bytes: self.bytes,
            });
        }
        let first = self.errors.into_iter().next();
        Err(TreeError::new(first, self.error_count))
    }
}

/// What a removal without errors removed ([`Summary::into_result`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Entries removed, the path itself included (see [`Summary::removed`]).
    pub removed: u64,
    /// The sizes of the files removed, with [`RemoveOptions::count_bytes`].
    pub bytes: u64,
}

/// Removes a directory and everything in it, as [`std::fs::remove_dir_all`] does, but
/// in parallel and through directory handles (see the [module](self)): nothing outside
/// the tree is touched, even if a directory inside it is replaced by a symbolic link
/// while the removal runs.
///
/// The same contract as std's: a path that is a symbolic link is removed itself, not
/// what it leads to; a path that does not exist is an error of kind
/// [`NotFound`](io::ErrorKind::NotFound); a path that is neither a directory nor a link
/// is an error of kind [`NotADirectory`](io::ErrorKind::NotADirectory) (use
/// [`std::fs::remove_file`]); an entry removed by someone else meanwhile is no error. It
/// goes on past an error, removing all it can. It is stricter where std's would
/// remove what is outside the path or fail half-way: the root directory, a path ending
/// in `.` or `..`, and a link named with a trailing slash are refused before anything
/// is removed ([`RemoveOptions::preserve_root`], [`check_path`]). For threads, file
/// systems, permissions or progress, use [`remove_tree`] with [`RemoveOptions`].
///
/// # Errors
///
/// The path's own error as std's gives it (no such file, not a directory, permission
/// denied); otherwise, if some entries could not be removed, an error of the first
/// one's kind whose message names its path and says how many there were (its inner
/// error is a [`TreeError`]: see [`io::Error::get_ref`]).
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// let tree = tmp.path().join("tree");
/// std::fs::create_dir_all(tree.join("a/b"))?;
/// std::fs::write(tree.join("a/b/file"), b"data")?;
/// ftw::remove_dir_all(&tree)?;
/// assert!(!tree.exists());
///
/// let err = ftw::remove_dir_all(&tree).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn remove_dir_all<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    // The path's own errors as std's gives them (the same `lstat` first).
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() && !meta.file_type().is_symlink() {
        return Err(io::Error::from(ErrorKind::NotADirectory));
    }
    remove_tree(path, &RemoveOptions::new())
        .into_result()
        .map(drop)
        .map_err(io::Error::from)
}

/// Why a path is refused by [`check_path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path is the root directory (or resolves to it).
    Root,
    /// The path's last component is `.` or `..`.
    Dot,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Root => "it is the root directory",
            Refusal::Dot => "refusing to remove '.' or '..'",
        })
    }
}

/// Whether `path` may be removed while the root is preserved: not the root directory
/// (`/`, `//`, `/..`, or anything that resolves to it, such as a bind mount of it; a
/// symbolic link to it is only a link, removable), and not a path whose last component
/// is `.` or `..`.
///
/// # Errors
///
/// The [`Refusal`]: [`Refusal::Root`] for the root directory (or what resolves to it),
/// [`Refusal::Dot`] for a last component `.` or `..`. A path that does not exist or cannot
/// be asked about is not refused here (its removal says why it fails).
///
/// ```
/// use ftw::remove::{Refusal, check_path};
/// assert_eq!(check_path("/"), Err(Refusal::Root));
/// assert_eq!(check_path("///"), Err(Refusal::Root));
/// assert_eq!(check_path("."), Err(Refusal::Dot));
/// assert_eq!(check_path("a/.."), Err(Refusal::Dot));
/// assert_eq!(check_path("./"), Err(Refusal::Dot));
/// assert_eq!(check_path("/nonexistent/ftw-doc"), Ok(()));
/// ```
pub fn check_path<P: AsRef<Path>>(path: P) -> Result<(), Refusal> {
    let bytes = crate::walk::path_to_bytes(path.as_ref());
    let trimmed = trim_slashes(&bytes);
    if trimmed.is_empty() && !bytes.is_empty() {
        return Err(Refusal::Root);
    }
    let last = trimmed.rsplit(|&b| is_sep(b)).next().unwrap_or(b"");
    if last == b"." || last == b".." {
        return Err(Refusal::Dot);
    }
    // On Windows every drive (`D:\`) and share (`\\server\share\`) has a root, and
    // `/` is only the current drive's.
    #[cfg(windows)]
    if path.as_ref().has_root() && path.as_ref().parent().is_none() {
        return Err(Refusal::Root);
    }
    // `X:` alone is drive X's current directory: `.` there.
    if drive_relative(&bytes).is_some_and(|rest| rest.is_empty()) {
        return Err(Refusal::Dot);
    }
    // Without a trailing slash, a link is only a link; with one, what it leads to.
    let root = sys::stat_path(Path::new("/"), StatMask::ID, true);
    let this = match trimmed.len() < bytes.len() {
        true => sys::stat_path(path.as_ref(), StatMask::ID, true),
        false => sys::stat_path(path.as_ref(), StatMask::ID, false),
    };
    match (root, this) {
        (Ok(r), Ok(t)) if t.file_type() == FileType::Dir && (r.dev, r.ino) == (t.dev, t.ino) => {
            Err(Refusal::Root)
        }
        _ => Ok(()),
    }
}

/// `path` without its trailing slashes (`/` alone becomes empty).
fn trim_slashes(path: &[u8]) -> &[u8] {
    let end = path.iter().rposition(|&b| !is_sep(b)).map_or(0, |i| i + 1);
    &path[..end]
}

/// On Windows, what follows the drive of a drive-relative path (`X:` and no separator
/// after it: relative to drive X's current directory); `None` for any other path, and
/// everywhere else.
fn drive_relative(path: &[u8]) -> Option<&[u8]> {
    match path {
        [d, b':', rest @ ..] if cfg!(windows) && d.is_ascii_alphabetic() => {
            (!rest.first().copied().is_some_and(is_sep)).then_some(rest)
        }
        _ => None,
    }
}

/// Whether `b` separates path components: `/`, and on Windows `\` too.
fn is_sep(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}

/// Removes `path` and, if it is a directory, everything below it. A symbolic link is
/// removed, not followed (named with a trailing slash, it is refused: the slash asks
/// for the directory it leads to, which is not inside the tree). Errors are reported
/// with their paths (to the [`Report`] if one is set, else in the summary) and the
/// rest is still removed. See the [module](self) for how.
pub fn remove_tree<P: AsRef<Path>>(path: P, options: &RemoveOptions) -> Summary {
    let shared = Shared::new(options);
    remove_path(&shared, path.as_ref());
    shared.summary()
}

/// Removes everything inside the open directory `dir`, but not `dir` itself. Paths in
/// errors and reports begin with `.`.
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("sub"))?;
/// std::fs::write(tmp.path().join("sub/f"), b"x")?;
/// let dir = ftw::sys::Dir::open(tmp.path())?;
/// let summary = ftw::remove_dir_contents(&dir, &ftw::RemoveOptions::new());
/// assert_eq!((summary.removed, summary.error_count), (2, 0));
/// assert_eq!(std::fs::read_dir(tmp.path())?.count(), 0);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn remove_dir_contents(dir: &Dir, options: &RemoveOptions) -> Summary {
    let shared = Shared::new(options);
    // A new open of the directory (not a copy of the handle, which would share its
    // read position).
    match dir.open_at(c".") {
        Ok(own) => {
            let root_dev = root_dev(&shared, &own);
            let reopen = || dir.open_at(c".");
            shared.walk(own, b".", root_dev, options.threads, false, &reopen);
        }
        Err(e) => shared.error(Error::io(".".into(), 0, e)),
    }
    shared.summary()
}

/// What every worker of one removal shares.
struct Shared<'a> {
    opts: &'a RemoveOptions,
    progress: Arc<Progress>,
    errors: Mutex<Vec<Error>>,
    thread_error: Mutex<Option<(io::Error, usize)>>,
    /// The handle budget when the options set none ([`default_fd_budget`]).
    fd_budget: usize,
}

/// The handle budget of a removal whose options set none: the walker's default, but
/// no more than the descriptors free now allow (less one for the path's parent and one
/// for a parallel worker's way down), so that a small `ulimit -n` (8, 6) slows the
/// removal instead of failing it.
fn default_fd_budget() -> usize {
    let budget = crate::walk::Budget::from_limit().handles();
    let (Some(limit), Some(open)) = (sys::fd_limit(), sys::open_fds()) else {
        return budget;
    };
    let free = usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .saturating_sub(open);
    budget.min(free.saturating_sub(2)).max(2)
}

impl<'a> Shared<'a> {
    fn new(opts: &'a RemoveOptions) -> Shared<'a> {
        Shared {
            opts,
            progress: opts.progress.clone().unwrap_or_default(),
            errors: Mutex::new(Vec::new()),
            thread_error: Mutex::new(None),
            fd_budget: default_fd_budget(),
        }
    }

    fn summary(self) -> Summary {
        Summary {
            removed: self.progress.removed(),
            bytes: self.progress.bytes(),
            error_count: self.progress.errors(),
            errors: self.errors.into_inner().unwrap_or_else(|e| e.into_inner()),
            thread_error: self
                .thread_error
                .into_inner()
                .unwrap_or_else(|e| e.into_inner()),
        }
    }

    fn error(&self, err: Error) {
        self.progress.errors.fetch_add(1, Ordering::Relaxed);
        match &self.opts.report {
            Some(r) => r.error(err),
            None => {
                let mut kept = self.errors.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() < KEPT_ERRORS {
                    kept.push(err);
                }
            }
        }
    }

    fn wants_paths(&self) -> bool {
        self.opts.report.as_ref().is_some_and(|r| r.wants_paths())
    }

    fn removed(&self, path: &[u8], file_type: FileType) {
        self.progress.removed.fetch_add(1, Ordering::Relaxed);
        if let Some(r) = &self.opts.report {
            if r.wants_paths() {
                r.removed(path, file_type);
            }
        }
    }

    /// Removes everything below the open directory `dir` (named `path`; `reopen` opens
    /// it again, for its subdirectories that could not be read: see
    /// `DirState::unreadable`). `nested`: a directory read again because it filled
    /// while being removed, whose own directories are not read again. Returns whether
    /// it was emptied.
    fn walk(
        &self,
        dir: Dir,
        path: &[u8],
        root_dev: u64,
        threads: usize,
        nested: bool,
        reopen: &dyn Fn() -> io::Result<Dir>,
    ) -> bool {
        // Whether the root was left with something in it that could not be removed
        // (already reported).
        let root_failed = AtomicBool::new(false);
        // The root's subdirectories that could not be read: removed here once the walk
        // is done (and its handles closed), through the root opened again.
        let root_unreadable = Mutex::new(Vec::new());
        // One worker per core to start with (0: the walker's default). The pool adds
        // workers while they wait on the disk, the unlinks counted with the reads: where
        // freed blocks are discarded at once (ext4 mounted with `discard`), each unlink
        // of a file with data waits for the disk, and removing a copy of `cra` took 1.2
        // to 1.9 s with 24 workers against 4 to 12 s with 2. Where the unlinks do not
        // wait (a warm cache, no discard), the pool stays at one worker per core:
        // more would only contend in the kernel (the system time doubled).
        let mut builder = WalkBuilder::from_dir(dir, bytes_to_path(path.to_vec()))
            .min_depth(1)
            .keep_handles(true)
            .close_before_leave(true)
            .inode_order(true)
            .visitor_waits(true)
            .threads(threads);
        let budget = self.opts.fd_budget.unwrap_or(self.fd_budget);
        builder = builder.fd_budget(budget);
        if nested {
            // Inside a removal that holds its own handles: a small share.
            builder = builder.fd_budget((budget / 4).max(4));
        }
        let make = || Remover::new(self, &root_failed, &root_unreadable, root_dev, nested);
        // Too few handles for a worker beside the walker's own: serially.
        if nested || crate::walk::Budget::new(budget).max_threads() == 1 {
            builder = builder.threads(1);
        }
        let stats = builder.run(make);
        if let Some(e) = stats.spawn_error {
            let mut first = self.thread_error.lock().unwrap_or_else(|e| e.into_inner());
            first.get_or_insert((e, stats.threads.max(1)));
        }
        let unreadable = root_unreadable
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let mut emptied = !root_failed.into_inner();
        if !unreadable.is_empty() {
            let own = reopen();
            let gone = |p: &[u8]| self.removed(p, FileType::Dir);
            emptied &= remove_unreadable(self, own.as_ref(), path, unreadable, gone);
        }
        emptied
    }
}

/// The device of the root being removed, when [`RemoveOptions::same_file_system`] needs
/// it.
fn root_dev(shared: &Shared<'_>, dir: &Dir) -> u64 {
    if !shared.opts.same_file_system {
        return 0;
    }
    dir.stat(StatMask::ID).map_or(0, |m| m.dev)
}

/// Removes one path given by the caller.
fn remove_path(shared: &Shared<'_>, path: &Path) {
    let opts = shared.opts;
    let given = crate::walk::path_to_bytes(path);
    let err = |e: io::Error| shared.error(Error::io(path.to_path_buf(), 0, e));
    if opts.preserve_root {
        if let Err(r) = check_path(path) {
            return err(io::Error::new(ErrorKind::InvalidInput, r.to_string()));
        }
    }
    if given.is_empty() {
        // No such file (ENOENT, said as the system says it), as for rm: never the
        // current directory.
        if !opts.ignore_missing {
            err(io::Error::from_raw_os_error(2));
        }
        return;
    }
    let trimmed = trim_slashes(&given);
    let slash = trimmed.len() < given.len();
    let (parent, name): (&[u8], &[u8]) = match trimmed.iter().rposition(|&b| is_sep(b)) {
        Some(0) => (b"/", &trimmed[1..]),
        // A drive's root (`C:\`) keeps its separator: `C:` is the drive's current
        // directory.
        Some(i) if cfg!(windows) && trimmed[i - 1] == b':' => (&trimmed[..=i], &trimmed[i + 1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        // `X:name`: `name` in drive X's current directory (not a stream `name` of a
        // file `X` here).
        None if drive_relative(trimmed).is_some() => (&trimmed[..2], &trimmed[2..]),
        None => (b".", trimmed),
    };
    if name.is_empty() || name == b"." || name == b".." {
        // The root directory, `.` or `..`, allowed by the caller: what is inside them.
        match Dir::open(path) {
            Ok(dir) => {
                let dev = root_dev(shared, &dir);
                // Opened again by its path, whose links may have changed meanwhile: it
                // must be the same directory (known by its identity).
                let id = dir.stat(StatMask::ID).map(|m| (m.dev, m.ino));
                let reopen = || {
                    let d = Dir::open(path)?;
                    match (&id, d.stat(StatMask::ID)) {
                        (Ok(id), Ok(m)) if *id == (m.dev, m.ino) => Ok(d),
                        _ => Err(io::Error::other("replaced while it was being emptied")),
                    }
                };
                shared.walk(
                    dir,
                    trimmed_or_root(&given),
                    dev,
                    opts.threads,
                    false,
                    &reopen,
                );
            }
            Err(e) => err(e),
        }
        return;
    }
    let Ok(c_name) = CString::new(name) else {
        return err(io::Error::new(
            ErrorKind::InvalidInput,
            "a NUL byte in the path",
        ));
    };
    let parent_dir = match Dir::open(&bytes_to_path(parent.to_vec())) {
        Ok(d) => d,
        Err(e) if e.kind() == ErrorKind::NotFound && opts.ignore_missing => return,
        Err(e) => return err(e),
    };
    let meta = match parent_dir.stat_at(&c_name, StatMask::TYPE, false) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound && opts.ignore_missing => return,
        Err(e) => return err(e),
    };
    let shown = &given[..trimmed.len()];
    match meta.file_type() {
        FileType::Dir => {}
        FileType::Symlink if slash => {
            return err(io::Error::new(
                ErrorKind::InvalidInput,
                "a symbolic link named with a trailing '/': not removing what it leads to \
                 (name it without the '/' to remove the link itself)",
            ));
        }
        _ if slash => return err(io::Error::from(ErrorKind::NotADirectory)),
        file_type => {
            if opts.dry_run {
                return shared.removed(shown, file_type);
            }
            match parent_dir.unlink_at(&c_name) {
                Ok(()) => shared.removed(shown, file_type),
                Err(e) if e.kind() == ErrorKind::NotFound => shared.removed(shown, file_type),
                Err(e) => err(read_only(e, parent)),
            }
            return;
        }
    }
    let mut opened = parent_dir.open_at(&c_name);
    if let Err(e) = &opened {
        // The PATH itself is inside the tree: with --chmod, a PATH that cannot be read
        // is given the permissions its removal takes (its parent is left as it is).
        if refused_by_mode(e) && opts.make_writable && !opts.dry_run {
            if let Err(e) = open_up(&parent_dir, &c_name) {
                return err(e);
            }
            opened = parent_dir.open_at(&c_name);
        }
    }
    let dir = match opened {
        Ok(d) => d,
        Err(e) if e.kind() == ErrorKind::NotFound && opts.ignore_missing => return,
        // A PATH that cannot be read may be empty: then removed, as `rm -rf` does.
        Err(e) if refused_by_mode(&e) && !opts.dry_run => {
            return match parent_dir.remove_dir_at(&c_name) {
                Ok(()) => shared.removed(shown, FileType::Dir),
                Err(_) => err(e),
            };
        }
        Err(e) => return err(e),
    };
    if opts.preserve_root {
        // Checked again on the handle: the path may have changed since.
        let root = sys::stat_path(Path::new("/"), StatMask::ID, true);
        if let (Ok(r), Ok(d)) = (root, dir.stat(StatMask::ID)) {
            if (r.dev, r.ino) == (d.dev, d.ino) {
                return err(io::Error::new(
                    ErrorKind::InvalidInput,
                    Refusal::Root.to_string(),
                ));
            }
        }
    }
    let dev = root_dev(shared, &dir);
    let reopen = || parent_dir.open_at(&c_name);
    if !shared.walk(dir, shown, dev, opts.threads, false, &reopen) {
        return;
    }
    if opts.dry_run {
        return shared.removed(shown, FileType::Dir);
    }
    // The path's parent is outside the tree: never made writable.
    let unused = AtomicBool::new(false);
    let none = Mutex::new(Vec::new());
    let mut remover = Remover::new(shared, &unused, &none, dev, false);
    match remover.remove_dir(&parent_dir, &c_name, shown, false) {
        Ok(()) => shared.removed(shown, FileType::Dir),
        Err(Gone::Reported) => {}
        Err(Gone::Failed(e)) => err(read_only(e, parent)),
    }
}

/// The path of a root that has no name of its own (`/`, `.`, `..`), as it is shown.
fn trimmed_or_root(given: &[u8]) -> &[u8] {
    match trim_slashes(given) {
        b"" => b"/",
        t => t,
    }
}

/// Why a directory was not removed.
enum Gone {
    /// Something in it could not be removed, and was reported.
    Reported,
    /// Its own removal failed.
    Failed(io::Error),
}

/// The state of a directory being removed: whether something in it could not be
/// removed (it is then kept, and so are its ancestors).
#[derive(Default)]
struct DirState {
    failed: AtomicBool,
    /// Its subdirectories that could not be opened for want of permission (mode 0000,
    /// another user's), with the error: removed when it is left if they are empty, as
    /// `rm -rf` does (`rmdir` asks only this directory's permission), else reported.
    unreadable: Mutex<Vec<(CString, Error)>>,
}

/// The name an error's path ends with (the entry's own name in its directory).
fn last_name(path: &Path) -> Option<CString> {
    let bytes = crate::walk::path_to_bytes(path);
    let trimmed = trim_slashes(&bytes);
    let name = match trimmed.iter().rposition(|&b| is_sep(b)) {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    };
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    CString::new(name).ok()
}

/// Removes those of the subdirectories `unreadable` of `own` (the directory `dir_path`)
/// that are empty, calling `gone` with the path of each; reports the others with the
/// error their opening met. Returns whether all went.
fn remove_unreadable(
    shared: &Shared<'_>,
    own: Result<&Dir, &io::Error>,
    dir_path: &[u8],
    unreadable: Vec<(CString, Error)>,
    mut gone: impl FnMut(&[u8]),
) -> bool {
    let mut all = true;
    let mut path = Vec::new();
    for (name, err) in unreadable {
        match own.map(|d| d.remove_dir_at(&name)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) if e.kind() == ErrorKind::NotFound => {}
            _ => {
                all = false;
                shared.error(err);
                continue;
            }
        }
        path.clear();
        crate::walk::push_joined(&mut path, dir_path, name.to_bytes());
        gone(&path);
    }
    all
}

/// A worker's visitor: removes files on entry, directories on leave.
struct Remover<'s, 'a> {
    shared: &'s Shared<'a>,
    /// Set when the walk's root is left with something in it not removed.
    root_failed: &'s AtomicBool,
    /// The root's subdirectories that could not be read, for the walk's caller (the walk
    /// closes the root's handle before leaving it).
    root_unreadable: &'s Mutex<Vec<(CString, Error)>>,
    root_dev: u64,
    /// Entries removed and not yet added to the shared count.
    uncounted: u64,
    /// Inside a directory read again: its directories are not read again.
    nested: bool,
    wants_paths: bool,
    path: Vec<u8>,
}

impl<'s, 'a> Remover<'s, 'a> {
    fn new(
        shared: &'s Shared<'a>,
        root_failed: &'s AtomicBool,
        root_unreadable: &'s Mutex<Vec<(CString, Error)>>,
        root_dev: u64,
        nested: bool,
    ) -> Remover<'s, 'a> {
        Remover {
            shared,
            root_failed,
            root_unreadable,
            root_dev,
            uncounted: 0,
            nested,
            wants_paths: shared.wants_paths(),
            path: Vec::new(),
        }
    }

    fn fail(&self, dir: Option<&DirState>, err: Error) {
        if let Some(d) = dir {
            d.failed.store(true, Ordering::Relaxed);
        } else {
            self.root_failed.store(true, Ordering::Relaxed);
        }
        self.shared.error(err);
    }

    /// Counts (and reports) an entry removed: into the shared count in batches.
    fn done(&mut self, path: &[u8], file_type: FileType) {
        if self.wants_paths {
            self.shared.removed(path, file_type);
            return;
        }
        self.uncounted += 1;
        if self.uncounted == 256 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let n = std::mem::take(&mut self.uncounted);
        self.shared.progress.removed.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts (and reports) an entry removed.
    fn done_entry(&mut self, entry: &Entry<'_>) {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        if self.wants_paths {
            entry.write_path(&mut path);
        }
        self.done(&path, entry.file_type());
        self.path = path;
    }

    /// Adds owner write and search permission to `dir`, if that is allowed and could
    /// help; says whether it was done.
    fn make_writable(&self, dir: &Dir) -> bool {
        if !self.shared.opts.make_writable {
            return false;
        }
        match dir.stat(StatMask::MODE) {
            Ok(m) if m.mode & 0o300 != 0o300 => dir.set_permissions(m.mode | 0o300).is_ok(),
            _ => false,
        }
    }

    /// Unlinks the non-directory `name` of `dir`.
    fn unlink(&self, dir: &Dir, name: &CStr, inside: bool) -> io::Result<()> {
        match dir.unlink_at(name) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) if refused_by_mode(&e) && inside => {
                if self.make_writable(dir) {
                    self.unlink(dir, name, false)
                } else {
                    Err(e)
                }
            }
            r => r,
        }
    }

    /// Removes the directory `name` of `parent`: when something filled it meanwhile,
    /// empties it again (a bounded number of times). `inside`:
    /// `parent` is inside the tree, and may be made writable.
    fn remove_dir(
        &mut self,
        parent: &Dir,
        name: &CStr,
        path: &[u8],
        mut inside: bool,
    ) -> Result<(), Gone> {
        let mut refills = if self.nested { 0 } else { REFILLS };
        loop {
            match parent.remove_dir_at(name) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
                Err(e) if refused_by_mode(&e) && inside => {
                    inside = false;
                    if !self.make_writable(parent) {
                        return Err(Gone::Failed(e));
                    }
                }
                Err(e) if e.kind() == ErrorKind::DirectoryNotEmpty && refills > 0 => {
                    refills -= 1;
                    // The directory that refused, opened again by its name in `parent`
                    // (never followed): the one the walk emptied may have been moved
                    // out of the tree meanwhile, and is no longer this one's business.
                    let own = match parent.open_at(name) {
                        Ok(d) => d,
                        Err(o) if o.kind() == ErrorKind::NotFound => continue,
                        Err(_) => return Err(Gone::Failed(e)),
                    };
                    let reopen = || parent.open_at(name);
                    if !self.shared.walk(own, path, self.root_dev, 1, true, &reopen) {
                        return Err(Gone::Reported);
                    }
                }
                Err(e) => return Err(Gone::Failed(e)),
            }
        }
    }
}

impl Drop for Remover<'_, '_> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Visitor for Remover<'_, '_> {
    type State = DirState;

    fn enter(&mut self, _: &DirEvent<'_>, _: Option<&DirState>) -> DirState {
        DirState::default()
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&DirState>) -> Control {
        let e = match item {
            Ok(e) => e,
            // Removed by someone else meanwhile.
            Err(err) if err.io_error().kind() == ErrorKind::NotFound => return Control::Continue,
            // No longer a directory (replaced by a link or a file since it was listed):
            // not entered; its directory, found not empty, is read again.
            Err(err) if err.io_error().kind() == ErrorKind::NotADirectory => {
                return Control::Continue;
            }
            // A subdirectory that cannot be opened may be empty, and then removed all
            // the same when its directory is left.
            Err(err) if refused_by_mode(err.io_error()) && !self.shared.opts.dry_run => {
                match (dir, last_name(err.path())) {
                    (Some(d), Some(name)) => d
                        .unreadable
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((name, err)),
                    _ => self.fail(dir, err),
                }
                return Control::Continue;
            }
            Err(err) => {
                self.fail(dir, err);
                return Control::Continue;
            }
        };
        let (Some(d), Some(name)) = (e.dir(), e.c_name()) else {
            let err = io::Error::other("no handle to its directory");
            self.fail(dir, Error::io(e.path(), e.depth(), err));
            return Control::Skip;
        };
        let opts = self.shared.opts;
        if e.is_dir() {
            if opts.same_file_system {
                match d.stat_at(name, StatMask::ID, false) {
                    Ok(m) if m.dev != self.root_dev && m.file_type() == FileType::Dir => {
                        let err = io::Error::other("on another file system: not removed");
                        self.fail(dir, Error::io(e.path(), e.depth(), err));
                        return Control::Skip;
                    }
                    _ => {}
                }
                // A mount of the same file system (a bind mount) has the same device:
                // the kernel tells its root apart. What it shows is not this tree's.
                if d.is_mount_root_at(name).unwrap_or(false) {
                    let err = io::Error::other("a mount point: not removed");
                    self.fail(dir, Error::io(e.path(), e.depth(), err));
                    return Control::Skip;
                }
            }
            if opts.make_writable && !opts.dry_run {
                if let Err(err) = open_up(d, name) {
                    self.fail(dir, Error::io(e.path(), e.depth(), err));
                    return Control::Skip;
                }
            }
            return Control::Continue;
        }
        if opts.count_bytes {
            if let Ok(m) = d.stat_at(name, StatMask::SIZE, false) {
                self.shared
                    .progress
                    .bytes
                    .fetch_add(m.size, Ordering::Relaxed);
            }
        }
        if opts.dry_run {
            self.done_entry(e);
            return Control::Continue;
        }
        match self.unlink(d, name, true) {
            Ok(()) => self.done_entry(e),
            // Became a directory since it was listed: its directory, found not empty, is
            // read again.
            Err(err) if err.kind() == ErrorKind::IsADirectory => {}
            Err(err) => {
                let err = read_only(err, e.parent_path());
                self.fail(dir, Error::io(e.path(), e.depth(), err));
            }
        }
        Control::Continue
    }

    fn leave(&mut self, ev: &DirEvent<'_>, state: DirState, parent: Option<&DirState>) {
        let mut failed = state.failed.into_inner();
        let unreadable = state
            .unreadable
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if !unreadable.is_empty() {
            if parent.is_none() {
                // The root: its caller opens it again once the walk is done.
                let mut root = self
                    .root_unreadable
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                root.extend(unreadable);
            } else {
                // This directory, opened again by its name in its parent, never
                // following a link (the walk closed its handle before leaving it).
                let own = match (ev.parent_dir(), ev.c_name()) {
                    (Some(p), Some(name)) => p.open_at(name),
                    _ => Err(io::Error::other("no handle to its parent")),
                };
                let shared = self.shared;
                let gone = |p: &[u8]| self.done(p, FileType::Dir);
                failed |= !remove_unreadable(shared, own.as_ref(), ev.path(), unreadable, gone);
            }
        }
        let Some(parent) = parent else {
            // The root: removed by the caller, who knows its parent.
            if failed {
                self.root_failed.store(true, Ordering::Relaxed);
            }
            return;
        };
        if failed {
            parent.failed.store(true, Ordering::Relaxed);
            return;
        }
        let path = ev.path();
        if self.shared.opts.dry_run {
            self.done(path, FileType::Dir);
            return;
        }
        let (Some(pdir), Some(name)) = (ev.parent_dir(), ev.c_name()) else {
            let err = io::Error::other("no handle to its parent");
            self.fail(Some(parent), Error::io(ev.to_path_buf(), ev.depth(), err));
            return;
        };
        match self.remove_dir(pdir, name, path, true) {
            Ok(()) => self.done(path, FileType::Dir),
            Err(Gone::Reported) => parent.failed.store(true, Ordering::Relaxed),
            Err(Gone::Failed(e)) => {
                let parent_path = &path[..path.len().saturating_sub(name.to_bytes().len())];
                let e = read_only(e, trim_slashes(parent_path));
                self.fail(Some(parent), Error::io(ev.to_path_buf(), ev.depth(), e))
            }
        }
    }
}

/// With [`RemoveOptions::make_writable`]: gives the directory `name` of `parent`, about
/// to be read, the owner permissions its removal takes (read, write and search) where
/// this process lacks them, so that a directory of mode 0000 or 0300 can be emptied
/// too. One `faccessat2` per directory (root, whom modes do not stop, changes nothing).
/// Where the change is refused (another user's directory) or the entry changed
/// meanwhile, the walk's own open of the directory tells what it finds; any other
/// failure (no descriptor left, no `/proc`) is returned, to be reported in place of the
/// refusal it leads to.
fn open_up(parent: &Dir, name: &CStr) -> io::Result<()> {
    if parent.may_change_at(name).unwrap_or(true) {
        return Ok(());
    }
    let Ok(m) = parent.stat_at(name, StatMask::MODE, false) else {
        return Ok(());
    };
    // With owner read, write and search already, no mode of its owner's would help.
    if m.file_type() != FileType::Dir || m.mode & 0o700 == 0o700 {
        return Ok(());
    }
    match parent.set_dir_permissions_at(name, m.mode | 0o700) {
        Err(e)
            if !matches!(
                e.kind(),
                ErrorKind::NotFound | ErrorKind::PermissionDenied | ErrorKind::NotADirectory
            ) =>
        {
            let why = crate::walk::describe(&e);
            Err(io::Error::new(
                e.kind(),
                format!("cannot give it owner read, write and search (--chmod): {why}"),
            ))
        }
        _ => Ok(()),
    }
}

/// Whether `err` is `EACCES`: the directory's mode refused (which write permission
/// may cure), not `EPERM` (an immutable or append-only file, a sticky directory), which
/// Rust calls `PermissionDenied` as well.
fn refused_by_mode(err: &io::Error) -> bool {
    err.kind() == ErrorKind::PermissionDenied && err.raw_os_error() != Some(EPERM)
}

/// `EPERM`, the same number on every Unix.
const EPERM: i32 = 1;

/// A refusal to remove an entry (`EACCES`) said with the directory that refused it.
fn read_only(err: io::Error, dir: &[u8]) -> io::Error {
    if !refused_by_mode(&err) {
        return err;
    }
    io::Error::new(
        ErrorKind::PermissionDenied,
        DirNotWritable {
            dir: bytes_to_path(dir.to_vec()),
            source: err,
        },
    )
}

/// Why an entry was not removed: its directory's mode refused it (`EACCES`; `--chmod`
/// in the CLI, [`RemoveOptions::make_writable`] here, adds the write permission). It is the
/// inner error of the [`io::Error`] that reports the entry, so that a front end can
/// show the directory's path its own way (escaped on a terminal, say):
///
/// ```
/// use ftw::remove::DirNotWritable;
/// fn shown(err: &std::io::Error) -> String {
///     match err.get_ref().and_then(|e| e.downcast_ref::<DirNotWritable>()) {
///         Some(d) => format!("its directory {:?} is not writable", d.dir()),
///         None => err.to_string(),
///     }
/// }
/// # let _ = shown;
/// ```
#[derive(Debug)]
pub struct DirNotWritable {
    dir: std::path::PathBuf,
    source: io::Error,
}

impl DirNotWritable {
    /// The directory whose mode refused the removal.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The system's error (`EACCES`, "Permission denied").
    pub fn io_error(&self) -> &io::Error {
        &self.source
    }
}

impl fmt::Display for DirNotWritable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: its directory {} is not writable",
            crate::walk::describe(&self.source),
            self.dir.display()
        )
    }
}

impl std::error::Error for DirNotWritable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

// These tests build trees with Unix calls (symlink, modes, fifos, rustix); the
// Windows backend has its own in sys/windows_tests.rs.
#[cfg(all(test, unix))]
mod tests;
