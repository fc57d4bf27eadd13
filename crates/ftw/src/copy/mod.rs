//! Copying whole trees through directory handles: a [`Visitor`] of the walker that makes
//! each directory when it is entered, copies each file, link, fifo and device as its
//! entry is seen, and sets each directory's mode and times when it is left, after its
//! contents (the order of `cp -a`).
//!
//! - Every call is relative to an open directory, on both sides: a destination
//!   directory is made with `mkdirat` in its parent's handle and opened with
//!   `O_NOFOLLOW`, a file made with `openat(O_CREAT | O_EXCL | O_NOFOLLOW)` in it,
//!   links with `symlinkat` and `linkat`, fifos and devices with `mknodat`; a
//!   file's owner, mode, extended attributes and times are set on its open handle. No
//!   path is resolved from the root per entry, and a directory of the destination
//!   swapped for a link while the copy runs is never followed.
//! - Data moves in the kernel ([`sys::copy_data`]: `FICLONE`, `copy_file_range`, holes
//!   kept with `SEEK_DATA`/`SEEK_HOLE`).
//! - Hard links: with [`Preserve::links`], one copy per inode; its other names, in
//!   this tree or another copied by the same call ([`copy_trees`]), are linked to it,
//!   also when a parallel walk meets the second name while the first is still being
//!   copied (the second waits for it).
//! - The destination's handles are kept within a budget, as the walk keeps its own: a
//!   handle closed for want of room is opened again when needed (from its child's `..`
//!   or from its nearest open ancestor, each checked to be the directory made).
//! - One entry's failure never stops the rest: it is reported with its path and the
//!   reason ([`Report`], or [`Summary::errors`]).
//!
//! ```
//! let tmp = tempfile::tempdir()?;
//! let src = tmp.path().join("src");
//! std::fs::create_dir_all(src.join("a/b"))?;
//! std::fs::write(src.join("a/b/file"), b"data")?;
//!
//! let dst = tmp.path().join("dst");
//! let summary = ftw::copy_tree(&src, &dst, &ftw::CopyOptions::archive());
//! let counts = summary.into_result()?;
//! assert_eq!((counts.copied, counts.bytes), (4, 4)); // src, a, a/b, a/b/file
//! assert_eq!(std::fs::read(dst.join("a/b/file"))?, b"data");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::TreeError;
use crate::sys::{self, DataCopy, Dir, FileTimes, FileType, Metadata, StatMask};
use crate::tree_error::{not_a_directory, path_error};
use crate::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder, bytes_to_path};
use std::collections::{HashMap, VecDeque};
use std::ffi::{CStr, CString};
use std::fmt;
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

pub use crate::sys::{Reflink, Sparse};

/// How many errors a [`Summary`] keeps when no [`Report`] takes them (every error is
/// counted all the same).
pub const KEPT_ERRORS: usize = 100;

/// What a copy keeps of each source entry besides its name, type and contents (GNU
/// cp's `--preserve` list). Without any, a new file or directory gets the source's
/// permission bits less the umask, as `cp` gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preserve {
    /// Permission bits, set-user-ID, set-group-ID and sticky included, and POSIX ACLs
    /// (GNU cp keeps them with the mode).
    pub mode: bool,
    /// Owner and group: as root; otherwise the group where this process is in it, and
    /// no error where the system refuses (as GNU cp does).
    pub ownership: bool,
    /// Access and modification times, to the nanosecond.
    pub timestamps: bool,
    /// Hard links: one copy per inode, linked for its other names.
    pub links: bool,
    /// Extended attributes (POSIX ACLs among them), where both file systems have
    /// them; where the destination has none, nothing is said.
    pub xattr: bool,
}

impl Preserve {
    /// Everything (`cp -a`, `--preserve=all`).
    pub const ALL: Preserve = Preserve {
        mode: true,
        ownership: true,
        timestamps: true,
        links: true,
        xattr: true,
    };
    /// Mode, ownership and timestamps (`cp -p`).
    pub const P: Preserve = Preserve {
        mode: true,
        ownership: true,
        timestamps: true,
        links: false,
        xattr: false,
    };
}

/// When links are followed (GNU cp's `-P`, `-L`, `-H`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dereference {
    /// Never: a link is copied as a link (`-P`, and `-R`'s default).
    #[default]
    Never,
    /// A source given is followed, not the links found below it (`-H`).
    Roots,
    /// Always: each link is copied as what it leads to (`-L`).
    Always,
}

/// Which existing destination files are replaced (GNU cp's `--update`, `-n`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Update {
    /// Every one (the default).
    #[default]
    All,
    /// None: an existing destination is left as it is, without an error (`-n`,
    /// `--update=none`).
    None,
    /// Those older than their source (`--update`, `--update=older`).
    Older,
}

/// How a copy runs: built with [`CopyOptions::new`] (or [`CopyOptions::archive`]) and
/// its setters.
///
/// ```
/// use ftw::copy::{CopyOptions, Dereference, Preserve, Update};
/// let opts = CopyOptions::new()
///     .preserve(Preserve::P)
///     .dereference(Dereference::Always)
///     .update(Update::Older)
///     .threads(1);
/// # let _ = opts;
/// ```
#[derive(Clone)]
pub struct CopyOptions {
    threads: usize,
    preserve: Preserve,
    dereference: Dereference,
    update: Update,
    link_files: bool,
    force: bool,
    same_file_system: bool,
    parents: bool,
    default_modes: bool,
    attributes_only: bool,
    remove_destination: bool,
    data: DataCopy,
    fd_budget: Option<usize>,
    report: Option<Arc<dyn Report>>,
    progress: Option<Arc<Progress>>,
}

impl fmt::Debug for CopyOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CopyOptions")
            .field("threads", &self.threads)
            .field("preserve", &self.preserve)
            .field("dereference", &self.dereference)
            .field("update", &self.update)
            .field("link_files", &self.link_files)
            .field("force", &self.force)
            .field("same_file_system", &self.same_file_system)
            .field("parents", &self.parents)
            .field("default_modes", &self.default_modes)
            .field("attributes_only", &self.attributes_only)
            .field("remove_destination", &self.remove_destination)
            .field("data", &self.data)
            .field("fd_budget", &self.fd_budget)
            .finish_non_exhaustive()
    }
}

impl Default for CopyOptions {
    fn default() -> CopyOptions {
        CopyOptions::new()
    }
}

impl CopyOptions {
    /// As `cp -R`: links copied as links, nothing kept but the permission bits (less
    /// the umask), existing files overwritten, threads as for a parallel walk, blocks
    /// shared where the file system can (`--reflink=auto`), holes kept.
    pub fn new() -> CopyOptions {
        CopyOptions {
            threads: 0,
            preserve: Preserve::default(),
            dereference: Dereference::Never,
            update: Update::All,
            link_files: false,
            force: false,
            same_file_system: false,
            parents: false,
            default_modes: false,
            attributes_only: false,
            remove_destination: false,
            data: DataCopy::default(),
            fd_budget: None,
            report: None,
            progress: None,
        }
    }

    /// As `cp -a`: everything kept ([`Preserve::ALL`]), links copied as links.
    pub fn archive() -> CopyOptions {
        CopyOptions::new().preserve(Preserve::ALL)
    }

    /// Worker threads: 0 (the default) is one per core, and more while they wait on
    /// the disk; 1 copies serially, on the calling thread.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// What is kept of each entry.
    pub fn preserve(mut self, p: Preserve) -> Self {
        self.preserve = p;
        self
    }

    /// When links are followed.
    pub fn dereference(mut self, d: Dereference) -> Self {
        self.dereference = d;
        self
    }

    /// Which existing destination files are replaced.
    pub fn update(mut self, u: Update) -> Self {
        self.update = u;
        self
    }

    /// Make hard links to the source files instead of copies (`cp -l`); directories
    /// are made all the same.
    pub fn link_files(mut self, yes: bool) -> Self {
        self.link_files = yes;
        self
    }

    /// An existing destination file that cannot be opened for writing is removed and
    /// made again (`cp -f`).
    pub fn force(mut self, yes: bool) -> Self {
        self.force = yes;
        self
    }

    /// An existing destination file is removed before it is copied again, rather than
    /// opened and overwritten (`cp --remove-destination`): its other hard links keep
    /// the old contents. With [`CopyOptions::link_files`], as [`CopyOptions::force`],
    /// an existing file is replaced by the link.
    pub fn remove_destination(mut self, yes: bool) -> Self {
        self.remove_destination = yes;
        self
    }

    /// Do not enter directories on another file system than their source's (`-x`):
    /// they are made, empty.
    pub fn same_file_system(mut self, yes: bool) -> Self {
        self.same_file_system = yes;
        self
    }

    /// `cp --parents`: each pair's destination is a directory, below which the
    /// source's path as given is made (a leading `/` left out): its directories made as
    /// copies of the source's (their mode, owner and times kept as the others are,
    /// once the copy is in them).
    pub fn parents(mut self, yes: bool) -> Self {
        self.parents = yes;
        self
    }

    /// New entries get the default modes (0666, or 0777 for directories and sockets,
    /// less the umask) rather than their sources' (GNU cp's explicit
    /// `--no-preserve=mode`); without [`Preserve::mode`] only.
    pub fn default_modes(mut self, yes: bool) -> Self {
        self.default_modes = yes;
        self
    }

    /// Copy no data (GNU cp's `--attributes-only`): each file is made, empty, or an
    /// existing one left with its contents, and given the attributes kept (mode,
    /// owner, times, extended attributes, as [`CopyOptions::preserve`] says); links,
    /// fifos and directories are made as in any copy.
    ///
    /// ```
    /// let tmp = tempfile::tempdir()?;
    /// let src = tmp.path().join("src");
    /// std::fs::create_dir(&src)?;
    /// std::fs::write(src.join("f"), b"data")?;
    /// let opts = ftw::CopyOptions::archive().attributes_only(true);
    /// ftw::copy_tree(&src, tmp.path().join("dst"), &opts).into_result()?;
    /// assert_eq!(std::fs::read(tmp.path().join("dst/f"))?, b"");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attributes_only(mut self, yes: bool) -> Self {
        self.attributes_only = yes;
        self
    }

    /// Whether blocks are shared (`--reflink`).
    pub fn reflink(mut self, r: Reflink) -> Self {
        self.data.reflink = r;
        self
    }

    /// What becomes of holes (`--sparse`).
    pub fn sparse(mut self, s: Sparse) -> Self {
        self.data.sparse = s;
        self
    }

    /// Keep at most about `n` directory handles open, on both sides together.
    pub fn fd_budget(mut self, n: usize) -> Self {
        self.fd_budget = Some(n);
        self
    }

    /// Tell `report` of each error, and of each entry copied if it asks for them,
    /// while the copy runs; without one, errors are kept in the [`Summary`].
    pub fn report(mut self, report: Arc<dyn Report>) -> Self {
        self.report = Some(report);
        self
    }

    /// Count into `progress` while the copy runs, for another thread to show.
    pub fn progress(mut self, progress: Arc<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }
}

/// Told of a copy's errors, and of the entries it copies, as they happen: from several
/// threads at once in a parallel copy.
pub trait Report: Send + Sync {
    /// Whether [`Report::copied`] is wanted: each pair of paths is then built.
    fn wants_paths(&self) -> bool {
        false
    }

    /// The entry `src` was copied as `dst` (a directory when it is made, not when the
    /// copy merges into one there).
    fn copied(&self, src: &[u8], dst: &[u8], file_type: FileType) {
        let _ = (src, dst, file_type);
    }

    /// An entry could not be copied, or not wholly (its path is the source's or the
    /// destination's, whichever failed).
    fn error(&self, error: Error) {
        let _ = error;
    }
}

/// Counts that a copy updates while it runs, for a progress display.
#[derive(Debug, Default)]
pub struct Progress {
    copied: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
}

impl Progress {
    /// Entries copied so far (directories made, files, links, fifos...).
    pub fn copied(&self) -> u64 {
        self.copied.load(Ordering::Relaxed)
    }

    /// Bytes of file data copied so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Errors so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

/// What a copy did: it goes on past an error. [`Summary::into_result`] makes it a
/// `Result`.
#[derive(Debug, Default)]
#[must_use = "a copy may have failed: see its `error_count`, or `into_result()`"]
pub struct Summary {
    /// Entries copied (or linked), the sources themselves included.
    pub copied: u64,
    /// Bytes of file data copied.
    pub bytes: u64,
    /// How many errors there were: every one, kept or not.
    pub error_count: u64,
    /// The errors, when no [`Report`] took them: the first [`KEPT_ERRORS`].
    pub errors: Vec<Error>,
    /// The first failure to start a worker thread, and the threads the copy went on
    /// with.
    pub thread_error: Option<(io::Error, usize)>,
}

impl Summary {
    /// `Ok` with what was copied when there was no error, else the first error kept and
    /// how many there were.
    ///
    /// # Errors
    ///
    /// A [`TreeError`] when [`Summary::error_count`] is not 0: its first error is the
    /// first of [`Summary::errors`] (`None` if a [`Report`] took them), its count
    /// [`Summary::error_count`].
    ///
    /// ```
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("src"))?;
    /// std::fs::write(tmp.path().join("src/f"), b"abc")?;
    /// let opts = ftw::CopyOptions::new();
    /// let counts = ftw::copy_tree(tmp.path().join("src"), tmp.path().join("dst"), &opts)
    ///     .into_result()?;
    /// assert_eq!((counts.copied, counts.bytes), (2, 3));
    ///
    /// let missing = tmp.path().join("missing");
    /// let err = ftw::copy_tree(&missing, tmp.path().join("d2"), &opts)
    ///     .into_result()
    ///     .unwrap_err();
    /// assert_eq!((err.count(), err.kind()), (1, std::io::ErrorKind::NotFound));
    /// assert_eq!(err.first().unwrap().path(), missing);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_result(self) -> Result<Counts, TreeError> {
        if self.error_count == 0 {
            return Ok(Counts {
                copied: self.copied,
                bytes: self.bytes,
            });
        }
        let first = self.errors.into_iter().next();
        Err(TreeError::new(first, self.error_count))
    }
}

/// What a copy without errors copied ([`Summary::into_result`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Entries copied, the sources included.
    pub copied: u64,
    /// Bytes of file data.
    pub bytes: u64,
}

/// Copies the directory `src` and everything in it to `dst`, as `cp -R src dst` does
/// when `dst` does not exist: `dst` is made (or, if it is a directory already, the
/// copy merges into it, replacing the files of the same names). Links inside are
/// copied as links; a `src` that is a link to a directory is followed, its directory
/// copied (as `cp -RH` does); the permission bits are kept, less the umask; nothing
/// else is (see [`copy_tree`] with [`CopyOptions::archive`] for an exact copy).
///
/// # Errors
///
/// `NotADirectory` when `src` is not a directory, `NotFound` when it does not exist;
/// otherwise, if some entries could not be copied, an error of the first one's kind.
/// Either way its message names the path, and says how many errors there were (its
/// inner error is a [`TreeError`]).
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// let src = tmp.path().join("src");
/// std::fs::create_dir_all(src.join("sub"))?;
/// std::fs::write(src.join("sub/f"), b"x")?;
/// ftw::copy_dir_all(&src, tmp.path().join("dst"))?;
/// assert_eq!(std::fs::read(tmp.path().join("dst/sub/f"))?, b"x");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn copy_dir_all<P: AsRef<Path>, Q: AsRef<Path>>(src: P, dst: Q) -> io::Result<()> {
    let src = src.as_ref();
    match std::fs::metadata(src) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(path_error(src, not_a_directory())),
        Err(e) => return Err(path_error(src, e)),
    }
    // The source's own link followed, as the check above followed it (`cp -RH`): a
    // copy of the link instead would be no directory, and a relative one would lead
    // nowhere from `dst`.
    let opts = CopyOptions::new().dereference(Dereference::Roots);
    copy_tree(src, dst, &opts)
        .into_result()
        .map(drop)
        .map_err(io::Error::from)
}

/// Copies `src` (a file, a link, or a directory and everything below it) to `dst`:
/// `dst` is the copy's own path (as with `cp -T`). An existing directory `dst` is
/// merged into; an existing file replaced as [`CopyOptions::update`] says. See the
/// [module](self) for how.
pub fn copy_tree<P: AsRef<Path>, Q: AsRef<Path>>(src: P, dst: Q, options: &CopyOptions) -> Summary {
    copy_trees([(src, dst)], options)
}

/// Copies each `(src, dst)` pair as [`copy_tree`] does, in order, with one map of the
/// hard links: a file linked under two sources is copied once, and linked
/// ([`Preserve::links`]).
pub fn copy_trees<I, P, Q>(pairs: I, options: &CopyOptions) -> Summary
where
    I: IntoIterator<Item = (P, Q)>,
    P: AsRef<Path>,
    Q: AsRef<Path>,
{
    let shared = Shared::new(options);
    for (src, dst) in pairs {
        if options.parents {
            shared.copy_with_parents(src.as_ref(), dst.as_ref());
        } else {
            shared.copy_root(src.as_ref(), dst.as_ref());
        }
    }
    shared.summary()
}

/// Why `dst` may not receive a copy of the directory `src`: it is `src` itself or lies
/// below it (GNU cp's "cannot copy a directory into itself"). Both are resolved as
/// far as they exist (links followed), so `dst` need not exist yet.
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("a"))?;
/// assert!(ftw::copy::into_itself(&tmp.path().join("a"), &tmp.path().join("a/b")));
/// assert!(!ftw::copy::into_itself(&tmp.path().join("a"), &tmp.path().join("ab")));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn into_itself(src: &Path, dst: &Path) -> bool {
    let Ok(src) = std::fs::canonicalize(src) else {
        return false;
    };
    // The longest part of `dst` that exists, resolved, and the rest as written.
    let mut base = dst.to_path_buf();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(r) = std::fs::canonicalize(&base) {
            break r;
        }
        match (base.file_name().map(|n| n.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = if parent.as_os_str().is_empty() {
                    Path::new(".").to_path_buf()
                } else {
                    parent.to_path_buf()
                };
            }
            _ => return false,
        }
    };
    let mut full = resolved;
    for name in rest.into_iter().rev() {
        full.push(name);
    }
    full.starts_with(&src)
}

/// Where a copy's destination handles are kept: every directory made and not yet
/// left, and those that a hard link's first copy lies in.
struct Node {
    parent: Option<Arc<Node>>,
    /// For a source's own copy (no parent node): the directory it was made in, to open
    /// it again from (a hard link to a file in it may come from a later source).
    above: Option<Arc<Dir>>,
    /// The name in the parent's destination.
    name: CString,
    /// The destination directory's identity, checked when it is opened again.
    id: (u64, u64),
    handle: Mutex<Option<Arc<Dir>>>,
    /// The source directory's metadata, set on the copy when it is left.
    src: Metadata,
    /// Whether the copy made the directory (rather than merging into one there).
    made: bool,
}

/// A hard link's first copy: its destination directory and name.
struct FirstCopy {
    dir: Arc<Node>,
    name: CString,
}

type LinkCell = Arc<OnceLock<Option<FirstCopy>>>;

/// What every worker of one copy shares.
struct Shared<'a> {
    opts: &'a CopyOptions,
    progress: Arc<Progress>,
    errors: Mutex<Vec<Error>>,
    thread_error: Mutex<Option<(io::Error, usize)>>,
    links: Mutex<HashMap<(u64, u64), LinkCell>>,
    /// The destination handles held by nodes, oldest first, and how many are open.
    open: Mutex<VecDeque<Weak<Node>>>,
    open_count: AtomicUsize,
    dst_budget: usize,
    walk_budget: usize,
    umask: u32,
    root: bool,
    /// The (source device, destination device) pairs between which `FICLONE` was
    /// refused.
    no_reflink: std::sync::RwLock<Vec<(u64, u64)>>,
    /// The identities of the destination directories made for the sources, never
    /// entered as sources (a copy into itself).
    dst_roots: Mutex<Vec<(u64, u64)>>,
}

/// Whether this process has root's privileges over owners (`/proc/self` belongs to
/// the effective user), for GNU cp's rule: a refused change of owner is an error only
/// for root.
fn is_root() -> bool {
    cfg!(unix)
        && sys::stat_path(Path::new("/proc/self"), StatMask::OWNER, true).is_ok_and(|m| m.uid == 0)
}

impl<'a> Shared<'a> {
    fn new(opts: &'a CopyOptions) -> Shared<'a> {
        let total = opts
            .fd_budget
            .unwrap_or_else(|| crate::walk::Budget::from_limit().handles());
        Shared {
            opts,
            progress: opts.progress.clone().unwrap_or_default(),
            errors: Mutex::new(Vec::new()),
            thread_error: Mutex::new(None),
            links: Mutex::new(HashMap::new()),
            open: Mutex::new(VecDeque::new()),
            open_count: AtomicUsize::new(0),
            dst_budget: (total / 2).max(2),
            walk_budget: (total / 2).max(2),
            umask: sys::umask(),
            root: is_root(),
            dst_roots: Mutex::new(Vec::new()),
            no_reflink: std::sync::RwLock::new(Vec::new()),
        }
    }

    fn summary(self) -> Summary {
        Summary {
            copied: self.progress.copied(),
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

    fn fail(&self, path: &[u8], depth: usize, err: io::Error) {
        self.error(Error::io(bytes_to_path(path.to_vec()), depth, err));
    }

    fn copied(&self, src: &[u8], dst: &[u8], file_type: FileType) {
        self.progress.copied.fetch_add(1, Ordering::Relaxed);
        if let Some(r) = &self.opts.report {
            if r.wants_paths() {
                r.copied(src, dst, file_type);
            }
        }
    }

    /// A directory copied: counted; told to the [`Report`] only where it was made, not
    /// merged into (GNU cp's `-v` says nothing of a directory already there).
    fn dir_copied(&self, src: &[u8], dst: &[u8], node: &Node) {
        if node.made {
            self.copied(src, dst, FileType::Dir);
        } else {
            self.progress.copied.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Keeps `dir` as `node`'s handle, closing the oldest others past the budget.
    fn keep(&self, node: &Arc<Node>, dir: Arc<Dir>) {
        let mut slot = node.handle.lock().unwrap_or_else(|e| e.into_inner());
        if slot.replace(dir).is_some() {
            return;
        }
        drop(slot);
        self.open_count.fetch_add(1, Ordering::Relaxed);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.push_back(Arc::downgrade(node));
        while self.open_count.load(Ordering::Relaxed) > self.dst_budget {
            let Some(old) = open.pop_front() else { break };
            if let Some(old) = old.upgrade() {
                self.close(&old);
            }
        }
    }

    /// Closes `node`'s handle (a user holding it keeps it until done).
    fn close(&self, node: &Node) {
        let mut slot = node.handle.lock().unwrap_or_else(|e| e.into_inner());
        if slot.take().is_some() {
            self.open_count.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// `node`'s destination handle: the one kept, or opened again from its nearest open
    /// ancestor ([`Dir::open_dir_beneath`]: `openat2` with `RESOLVE_BENEATH`, no link
    /// followed), checked to be the directory made.
    fn handle(&self, node: &Arc<Node>) -> io::Result<Arc<Dir>> {
        if let Some(h) = node
            .handle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(h);
        }
        let mut chain = vec![node.clone()];
        let base = loop {
            let top = chain.last().expect("not empty");
            let Some(parent) = top.parent.clone() else {
                match &top.above {
                    Some(above) => break above.clone(),
                    None => return Err(io::Error::other("the destination's handle was closed")),
                }
            };
            if let Some(h) = parent
                .handle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
            {
                break h;
            }
            chain.push(parent);
        };
        if chain.len() == 1 {
            let d = base.open_at(&node.name)?;
            check_id(&d, node.id)?;
            let d = Arc::new(d);
            self.keep(node, d.clone());
            return Ok(d);
        }
        // Several levels down: one `openat2` beneath the open ancestor, no link
        // followed on the way, and the directory reached checked to be the one made
        // (a directory moved into a place on the way is caught so).
        let mut path = Vec::new();
        for n in chain.iter().rev() {
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(n.name.to_bytes());
        }
        let path = CString::new(path).map_err(|_| io::Error::from(ErrorKind::InvalidInput))?;
        let d = base.open_dir_beneath(&path)?;
        check_id(&d, node.id)?;
        let d = Arc::new(d);
        self.keep(node, d.clone());
        Ok(d)
    }

    /// `--parents`: makes the directories of `src`'s path below the directory `dir`,
    /// copies `src` there, then sets those directories' attributes, innermost first.
    fn copy_with_parents(&self, src: &Path, dir: &Path) {
        let names: Vec<&std::ffi::OsStr> = src
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        let Some((_, above)) = names.split_last() else {
            return self.copy_root(src, dir);
        };
        let mut src_prefix = std::path::PathBuf::new();
        if src.has_root() {
            src_prefix.push("/");
        }
        let mut dst_path = dir.to_path_buf();
        let mut made: Vec<(Arc<Node>, Vec<u8>)> = Vec::new();
        let mut handle = match Dir::open(dir) {
            Ok(d) => Arc::new(d),
            Err(e) => return self.fail(&crate::walk::path_to_bytes(dir), 0, e),
        };
        for name in above {
            src_prefix.push(name);
            dst_path.push(name);
            let dst_b = crate::walk::path_to_bytes(&dst_path);
            let meta = match sys::stat_path(&src_prefix, StatMask::ALL, true) {
                Ok(m) => m,
                Err(e) => return self.fail(&crate::walk::path_to_bytes(&src_prefix), 0, e),
            };
            let Ok(c_name) = CString::new(crate::walk::path_to_bytes(Path::new(name))) else {
                return self.fail(&dst_b, 0, io::Error::from(ErrorKind::InvalidInput));
            };
            let parent = made.last().map(|(n, _)| n.clone());
            let Some(node) = self.make_dir(&handle, parent, &c_name, &meta, &dst_b, 0) else {
                break;
            };
            handle = match self.handle(&node) {
                Ok(h) => h,
                Err(e) => return self.fail(&dst_b, 0, e),
            };
            made.push((node, dst_b));
        }
        if made.len() == above.len() {
            self.copy_root(src, &dir.join(names.iter().collect::<std::path::PathBuf>()));
        }
        for (node, dst_b) in made.iter().rev() {
            self.finish_dir(node, dst_b, 0);
            self.close(node);
        }
    }

    /// Copies one source given by the caller to `dst`.
    fn copy_root(&self, src: &Path, dst: &Path) {
        let src_b = crate::walk::path_to_bytes(src);
        let dst_b = crate::walk::path_to_bytes(dst);
        let err = |e: io::Error| self.fail(&src_b, 0, e);
        let follow = self.opts.dereference != Dereference::Never;
        let meta = match sys::stat_path(src, StatMask::ALL, follow) {
            Ok(m) => m,
            Err(e) => return err(e),
        };
        let Some((dst_parent, dst_name)) = split(dst) else {
            // `.`, `..`, `/`: a directory there already, merged into.
            if meta.file_type() != FileType::Dir {
                let e = io::Error::new(ErrorKind::InvalidInput, "no name to copy to");
                return self.fail(&dst_b, 0, e);
            }
            let dir = match Dir::open(dst).and_then(|d| Ok((d.stat(StatMask::ID)?, d))) {
                Ok((m, d)) => (Arc::new(d), (m.dev, m.ino)),
                Err(e) => return self.fail(&dst_b, 0, e),
            };
            // Never closed for want of room: it cannot be opened again by a name.
            let node = Arc::new(Node {
                parent: None,
                above: None,
                name: CString::default(),
                id: dir.1,
                handle: Mutex::new(Some(dir.0)),
                src: meta,
                made: false,
            });
            return self.walk_root(src, &src_b, &dst_b, node);
        };
        let dparent = match Dir::open(&dst_parent) {
            Ok(d) => Arc::new(d),
            Err(e) => return self.fail(&dst_b, 0, e),
        };
        if meta.file_type() != FileType::Dir {
            let Some((src_parent, src_name)) = split(src) else {
                return err(io::Error::from(ErrorKind::InvalidInput));
            };
            let sparent = match Dir::open(&src_parent) {
                Ok(d) => d,
                Err(e) => return err(e),
            };
            let at = At {
                src_dir: &sparent,
                name: &src_name,
                src_path: &src_b,
                dst_dir: &dparent,
                dst_node: None,
                dst_name: &dst_name,
                dst_path: &dst_b,
                depth: 0,
            };
            self.copy_entry(&at, meta.file_type(), follow);
            return;
        }
        if let Some(node) = self.make_dir(&dparent, None, &dst_name, &meta, &dst_b, 0) {
            self.walk_root(src, &src_b, &dst_b, node);
        }
    }

    /// Copies the directory `src` (its path `src_b`) into its copy's `node` (at
    /// `dst_b`): its extended attributes, then everything below it, by a walk.
    fn walk_root(&self, src: &Path, src_b: &[u8], dst_b: &[u8], node: Arc<Node>) {
        let sdir = match Dir::open(src) {
            Ok(d) => d,
            Err(e) => return self.fail(src_b, 0, e),
        };
        let src_dev = sdir.stat(StatMask::ID).map_or(0, |m| m.dev);
        if self.opts.preserve.xattr || self.opts.preserve.mode {
            if let Err(e) = copy_dir_xattrs(&sdir, &node, self) {
                let e = context("cannot preserve extended attributes", e);
                self.fail(dst_b, 0, e);
            }
        }
        self.dir_copied(src_b, dst_b, &node);
        self.dst_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(node.id);
        let builder = WalkBuilder::from_dir(sdir, src)
            .min_depth(1)
            .keep_handles(true)
            .visitor_waits(true)
            .follow_links(self.opts.dereference == Dereference::Always)
            .same_file_system(self.opts.same_file_system)
            .fd_budget(self.walk_budget)
            .threads(self.opts.threads);
        let src_len = src_b.len();
        let stats = builder.run(|| Copier {
            shared: self,
            root: node.clone(),
            src_dev,
            src_len,
            dst_root: dst_b,
            dst_path: Vec::new(),
            src_path: Vec::new(),
        });
        if let Some(e) = stats.spawn_error {
            let mut first = self.thread_error.lock().unwrap_or_else(|e| e.into_inner());
            first.get_or_insert((e, stats.threads.max(1)));
        }
    }

    /// Makes (or finds, to merge into) the destination directory `name` in `parent`
    /// and opens it: the node of its handle. `None` when that failed (reported).
    fn make_dir(
        &self,
        parent: &Arc<Dir>,
        parent_node: Option<Arc<Node>>,
        name: &CStr,
        src: &Metadata,
        dst_path: &[u8],
        depth: usize,
    ) -> Option<Arc<Node>> {
        let fail = |what: &str, e: io::Error| {
            self.fail(dst_path, depth, context(what, e));
            None
        };
        // Made with owner permissions only while it is filled; its mode is set when it
        // is left.
        let made = match parent.make_dir_at(name, 0o700) {
            Ok(()) => true,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                match parent.stat_at(name, StatMask::TYPE, false) {
                    Ok(m) if m.file_type() == FileType::Dir => false,
                    Ok(_) => {
                        return fail(
                            "cannot overwrite a non-directory with a directory",
                            io::Error::from(ErrorKind::AlreadyExists),
                        );
                    }
                    Err(e) => return fail("cannot create directory", e),
                }
            }
            Err(e) => return fail("cannot create directory", e),
        };
        let dir = match parent.open_at(name) {
            Ok(d) => d,
            Err(e) => return fail("cannot open the directory made", e),
        };
        let id = match dir.stat(StatMask::ID) {
            Ok(m) => (m.dev, m.ino),
            Err(e) => return fail("cannot open the directory made", e),
        };
        let above = parent_node.is_none().then(|| parent.clone());
        let node = Arc::new(Node {
            parent: parent_node,
            above,
            name: name.to_owned(),
            id,
            handle: Mutex::new(None),
            src: *src,
            made,
        });
        self.keep(&node, Arc::new(dir));
        Some(node)
    }

    /// The permission bits a new entry is made with (less the umask, by the kernel or
    /// by [`Shared::finish_dir`]): its source's, and a directory's sticky bit; with
    /// [`CopyOptions::default_modes`], 0666 (0777 for a directory or a socket), as GNU
    /// cp's `--no-preserve=mode` makes them.
    fn new_mode(&self, m: &Metadata) -> u32 {
        let ft = m.file_type();
        let wide = matches!(ft, FileType::Dir | FileType::Socket);
        match (self.opts.default_modes, wide) {
            // A directory's sticky bit stays all the same (GNU's mkdir is asked for it).
            (true, true) => 0o777 | (m.mode & 0o1000),
            (true, false) => 0o666,
            (false, true) if ft == FileType::Dir => m.mode & 0o1777,
            (false, _) => m.mode & 0o777,
        }
    }

    /// Copies a file's data, counting its bytes as they move: with `--reflink=auto`, `FICLONE` first, unless it was
    /// refused already between the same two file systems (then never asked again:
    /// one call per file saved where it cannot be had, as on ext4).
    fn copy_data(
        &self,
        at: &At<'_>,
        src: &sys::File,
        dst: &sys::File,
        meta: &Metadata,
    ) -> io::Result<u64> {
        let mut how = self.opts.data;
        if how.reflink == Reflink::Auto && meta.size > 0 {
            how.reflink = Reflink::Never;
            let key = (meta.dev, at.dst_node.as_ref().map_or(u64::MAX, |n| n.id.0));
            let refused = self
                .no_reflink
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&key);
            if !refused {
                match sys::reflink(src, dst) {
                    Ok(()) => {
                        self.progress.bytes.fetch_add(meta.size, Ordering::Relaxed);
                        return Ok(meta.size);
                    }
                    // EXDEV, EINVAL, ENOTTY, EOPNOTSUPP: not between these two.
                    Err(e)
                        if matches!(e.raw_os_error(), Some(18 | 22 | 25 | 95))
                            || e.kind() == ErrorKind::Unsupported =>
                    {
                        let mut no = self.no_reflink.write().unwrap_or_else(|e| e.into_inner());
                        if !no.contains(&key) {
                            no.push(key);
                        }
                    }
                    Err(_) => {}
                }
            }
        }
        sys::copy_data_counted(src, dst, meta.size, meta.blocks, &how, &self.progress.bytes)
            .map_err(|e| context("cannot copy the data", e))
    }

    /// Sets a directory's owner, mode and times once its contents are copied.
    fn finish_dir(&self, node: &Arc<Node>, dst_path: &[u8], depth: usize) {
        let dir = match self.handle(node) {
            Ok(d) => d,
            Err(e) => return self.fail(dst_path, depth, e),
        };
        let p = self.opts.preserve;
        let m = &node.src;
        let mut owned = true;
        if p.ownership {
            owned = self.set_owner(|u, g| dir.set_owner(u, g), m, dst_path, depth);
        }
        let mode = if p.mode {
            Some(kept_mode(m.mode, owned))
        } else if node.made {
            // As mkdir would have made it (GNU cp asks mkdir for the source's bits):
            // permissions and sticky bit less the umask, set-group-ID as inherited
            // from its parent; changed only where that differs (it was made 0700).
            let want = self.new_mode(m) & !self.umask;
            match dir.stat(StatMask::MODE) {
                Ok(now) if now.mode & 0o7777 == (now.mode & 0o2000) | want => None,
                Ok(now) => Some((now.mode & 0o2000) | want),
                Err(_) => Some(want),
            }
        } else {
            None
        };
        if let Some(mode) = mode {
            if let Err(e) = dir.set_permissions(mode) {
                self.fail(dst_path, depth, context("cannot preserve permissions", e));
            }
        }
        if p.timestamps {
            if let Err(e) = dir.set_times(&FileTimes::of(m)) {
                self.fail(dst_path, depth, context("cannot preserve times", e));
            }
        }
    }

    /// Sets an owner as GNU cp does: owner and group; where that is refused and this
    /// process is not root, the group alone; a refusal then is no error. Says whether
    /// both were kept.
    fn set_owner(
        &self,
        set: impl Fn(Option<u32>, Option<u32>) -> io::Result<()>,
        m: &Metadata,
        dst_path: &[u8],
        depth: usize,
    ) -> bool {
        match set(Some(m.uid), Some(m.gid)) {
            Ok(()) => true,
            // No owners here (Windows): nothing to keep.
            Err(e) if e.kind() == ErrorKind::Unsupported => false,
            Err(e) if !self.root && refused(&e) => {
                let _ = set(None, Some(m.gid));
                false
            }
            Err(e) => {
                self.fail(dst_path, depth, context("cannot preserve ownership", e));
                false
            }
        }
    }

    /// Copies the non-directory `at.name` (of the type listed) to `at.dst_name`.
    fn copy_entry(&self, at: &At<'_>, listed: FileType, follow: bool) {
        let opts = self.opts;
        let mut listed = listed;
        if listed == FileType::Unknown || (follow && listed == FileType::Symlink) {
            match at.src_dir.stat_at(at.name, StatMask::TYPE, follow) {
                Ok(m) => listed = m.file_type(),
                Err(e) => {
                    // A dangling link, followed, is an error, as for cp -L.
                    let e = context("cannot stat", e);
                    return self.fail(at.src_path, at.depth, e);
                }
            }
        }
        let follow = follow && listed != FileType::Symlink;
        if opts.link_files && listed != FileType::Dir {
            return self.link_file(at, follow);
        }
        // Only a regular file is opened; the rest is asked about relative to the
        // directory.
        let (file, meta) = if listed == FileType::File {
            let f = match at.src_dir.open_file_at(at.name, follow) {
                Ok(f) => f,
                Err(e) => {
                    return self.fail(at.src_path, at.depth, context("cannot open for reading", e));
                }
            };
            match f.stat(StatMask::ALL) {
                Ok(m) => (Some(f), m),
                Err(e) => return self.fail(at.src_path, at.depth, e),
            }
        } else {
            match at.src_dir.stat_at(at.name, StatMask::ALL, follow) {
                Ok(m) => (None, m),
                Err(e) => return self.fail(at.src_path, at.depth, e),
            }
        };
        let ft = meta.file_type();
        if ft == FileType::Dir {
            // A directory put in the place of a file since it was listed.
            return self.fail(
                at.src_path,
                at.depth,
                io::Error::other("changed into a directory while copied"),
            );
        }
        if opts.preserve.links && meta.nlink > 1 {
            let cell = {
                let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
                links.entry((meta.dev, meta.ino)).or_default().clone()
            };
            let mut mine = false;
            let first = cell.get_or_init(|| {
                mine = true;
                self.copy_one(at, file.as_ref(), &meta).then(|| FirstCopy {
                    dir: at
                        .dst_node
                        .clone()
                        .unwrap_or_else(|| self.loose_node(at.dst_dir)),
                    name: at.dst_name.to_owned(),
                })
            });
            if mine {
                return;
            }
            if let Some(first) = first {
                match self.link_to(first, at) {
                    Ok(()) => self.copied(at.src_path, at.dst_path, ft),
                    Err(e) => {
                        self.fail(at.dst_path, at.depth, context("cannot create hard link", e))
                    }
                }
                return;
            }
        }
        self.copy_one(at, file.as_ref(), &meta);
    }

    /// A node for a destination directory outside any walk (a file given as a source):
    /// its handle kept only while this holds it.
    fn loose_node(&self, dir: &Arc<Dir>) -> Arc<Node> {
        Arc::new(Node {
            parent: None,
            above: None,
            name: CString::default(),
            id: (0, 0),
            handle: Mutex::new(Some(dir.clone())),
            src: Metadata::default(),
            made: false,
        })
    }

    /// Links `at` to a hard link's first copy.
    fn link_to(&self, first: &FirstCopy, at: &At<'_>) -> io::Result<()> {
        let dir = self.handle(&first.dir)?;
        self.replacing(at, None, |_| {
            dir.hard_link_at(&first.name, at.dst_dir, at.dst_name, false)
        })
    }

    /// `cp -l`: links `at` to its source.
    fn link_file(&self, at: &At<'_>, follow: bool) {
        let link = || {
            at.src_dir
                .hard_link_at(at.name, at.dst_dir, at.dst_name, follow)
        };
        let r = match link() {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => self.link_over(at, follow, link),
            r => r,
        };
        match r {
            Ok(()) => self.copied(at.src_path, at.dst_path, FileType::File),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => self.fail(at.dst_path, at.depth, context("cannot create hard link", e)),
        }
    }

    /// `cp -l` where the destination exists, as GNU cp: already the source's inode,
    /// left (no error); else kept as `-n` or `--update` say, or replaced with `-f` or
    /// `--remove-destination`, or an error ("File exists").
    fn link_over(
        &self,
        at: &At<'_>,
        follow: bool,
        link: impl Fn() -> io::Result<()>,
    ) -> io::Result<()> {
        let src = at.src_dir.stat_at(at.name, StatMask::ALL, follow)?;
        let d = at.dst_dir.stat_at(at.dst_name, StatMask::ID, false)?;
        if (src.dev, src.ino) == (d.dev, d.ino) {
            return Err(io::Error::from(ErrorKind::Interrupted));
        }
        self.may_replace(at, Some(&src))?;
        if !(self.opts.force || self.opts.remove_destination) {
            return Err(io::Error::new(ErrorKind::AlreadyExists, "File exists"));
        }
        at.dst_dir.unlink_at(at.dst_name)?;
        link()
    }

    /// Makes a destination entry with `make`; where one is there already, decides as
    /// `cp` does whether to replace it (removed, then `make` again) or leave it
    /// (`Interrupted`: skipped, no error). `make` is told whether it replaces.
    fn replacing(
        &self,
        at: &At<'_>,
        src: Option<&Metadata>,
        make: impl Fn(bool) -> io::Result<()>,
    ) -> io::Result<()> {
        match make(false) {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            r => return r,
        }
        self.may_replace(at, src)?;
        at.dst_dir.unlink_at(at.dst_name)?;
        make(true)
    }

    /// Whether the existing destination of `at` may be replaced by a copy of the
    /// source of metadata `src` (when known): `Interrupted` to leave it, without an
    /// error; an error to report.
    fn may_replace(&self, at: &At<'_>, src: Option<&Metadata>) -> io::Result<Metadata> {
        let d = at.dst_dir.stat_at(at.dst_name, StatMask::ALL, false)?;
        if d.file_type() == FileType::Dir {
            return Err(io::Error::new(
                ErrorKind::IsADirectory,
                "cannot overwrite a directory with a non-directory",
            ));
        }
        if let Some(s) = src {
            if (s.dev, s.ino) == (d.dev, d.ino) {
                return Err(io::Error::new(
                    ErrorKind::InvalidInput,
                    "the source and the destination are the same file",
                ));
            }
        }
        match self.opts.update {
            Update::None => return Err(io::Error::from(ErrorKind::Interrupted)),
            Update::Older => {
                if let Some(s) = src {
                    if (d.mtime, d.mtime_nsec) >= (s.mtime, s.mtime_nsec) {
                        return Err(io::Error::from(ErrorKind::Interrupted));
                    }
                }
            }
            Update::All => {}
        }
        Ok(d)
    }

    /// Copies one non-directory (`file`: a regular one, opened) and its metadata.
    /// Says whether it was copied.
    fn copy_one(&self, at: &At<'_>, file: Option<&sys::File>, meta: &Metadata) -> bool {
        let ft = meta.file_type();
        let r = match (ft, file) {
            (FileType::File, Some(src)) => self.copy_file(at, src, meta),
            (FileType::Symlink, _) => self.copy_special(at, meta, |_| {
                let target = at.src_dir.read_link_at(at.name)?;
                let target =
                    CString::new(target).map_err(|_| io::Error::from(ErrorKind::InvalidData))?;
                at.dst_dir.symlink_at(&target, at.dst_name)
            }),
            _ => self.copy_special(at, meta, |_| {
                let mode = (meta.mode & 0o170000) | self.new_mode(meta);
                at.dst_dir.make_node_at(at.dst_name, mode, meta.rdev)
            }),
        };
        match r {
            Ok(()) => {
                self.copied(at.src_path, at.dst_path, ft);
                true
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => false,
            Err(e) => {
                self.fail(at.dst_path, at.depth, e);
                false
            }
        }
    }

    /// A link, fifo, socket or device: made with `make`, then its owner, extended
    /// attributes, mode and times set relative to its directory.
    fn copy_special(
        &self,
        at: &At<'_>,
        meta: &Metadata,
        make: impl Fn(bool) -> io::Result<()>,
    ) -> io::Result<()> {
        let what = match meta.file_type() {
            FileType::Symlink => "cannot create symbolic link",
            _ => "cannot create special file",
        };
        self.replacing(at, Some(meta), &make)
            .map_err(|e| context(what, e))?;
        let p = self.opts.preserve;
        let link = meta.file_type() == FileType::Symlink;
        let mut owned = true;
        if p.ownership {
            owned = self.set_owner(
                |u, g| at.dst_dir.set_owner_at(at.dst_name, u, g),
                meta,
                at.dst_path,
                at.depth,
            );
        }
        // Extended attributes, a link's own too (`lsetxattr`), as cp -a copies them;
        // after the owner, which may clear some (`security.capability`). The source's
        // are its own name's even when it was followed (`-L`): GNU cp reads them so
        // (libattr's `attr_copy_file`, `llistxattr`), and the copies are compared.
        if p.xattr || p.mode {
            copy_xattrs(
                XattrFd::At(at.src_dir, at.name, false),
                XattrFd::At(at.dst_dir, at.dst_name, false),
                p.mode,
                p.xattr,
            )
            .map_err(|e| context("cannot preserve extended attributes", e))?;
        }
        if !link {
            let mode = if p.mode {
                Some(kept_mode(meta.mode, owned))
            } else {
                None
            };
            if let Some(mode) = mode {
                at.dst_dir
                    .set_mode_at(at.dst_name, mode)
                    .map_err(|e| context("cannot preserve permissions", e))?;
            }
        }
        if p.timestamps {
            match at.dst_dir.set_times_at(at.dst_name, &FileTimes::of(meta)) {
                // A link's own times, where the system cannot set them (the portable
                // build): as GNU cp without lutimes, kept quiet.
                Err(e) if link && e.kind() == ErrorKind::Unsupported => {}
                r => r.map_err(|e| context("cannot preserve times", e))?,
            }
        }
        Ok(())
    }

    /// A regular file: made (or an existing one opened, emptied), its data copied,
    /// then owner, extended attributes, mode and times set on it.
    fn copy_file(&self, at: &At<'_>, src: &sys::File, meta: &Metadata) -> io::Result<()> {
        let dst = match at.dst_dir.create_file_at(at.dst_name, self.new_mode(meta)) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let d = self.may_replace(at, Some(meta))?;
                let reopen = || {
                    at.dst_dir.unlink_at(at.dst_name)?;
                    at.dst_dir.create_file_at(at.dst_name, self.new_mode(meta))
                };
                if d.file_type() != FileType::File || self.opts.remove_destination {
                    // A link (never written through), a fifo...: replaced.
                    reopen().map_err(|e| context("cannot create regular file", e))?
                } else if self.opts.attributes_only {
                    // Its contents left as they are (no O_TRUNC), as GNU cp leaves them.
                    match at.dst_dir.open_file_at(at.dst_name, false) {
                        Ok(f) => f,
                        Err(_) if self.opts.force => {
                            reopen().map_err(|e| context("cannot create regular file", e))?
                        }
                        Err(e) => return Err(context("cannot open for writing", e)),
                    }
                } else {
                    match at.dst_dir.open_file_write_at(at.dst_name) {
                        Ok(f) => f,
                        Err(_) if self.opts.force => {
                            reopen().map_err(|e| context("cannot create regular file", e))?
                        }
                        Err(e) => return Err(context("cannot open for writing", e)),
                    }
                }
            }
            Err(e) => return Err(context("cannot create regular file", e)),
        };
        // The bytes are counted as they move.
        if !self.opts.attributes_only {
            self.copy_data(at, src, &dst, meta)?;
        }
        let p = self.opts.preserve;
        let mut owned = true;
        if p.ownership {
            owned = self.set_owner(|u, g| dst.set_owner(u, g), meta, at.dst_path, at.depth);
        }
        if p.xattr || p.mode {
            copy_xattrs(XattrFd::File(src), XattrFd::File(&dst), p.mode, p.xattr)
                .map_err(|e| context("cannot preserve extended attributes", e))?;
        }
        if p.mode {
            dst.set_permissions(kept_mode(meta.mode, owned))
                .map_err(|e| context("cannot preserve permissions", e))?;
        }
        if p.timestamps {
            dst.set_times(&FileTimes::of(meta))
                .map_err(|e| context("cannot preserve times", e))?;
        }
        Ok(())
    }
}

/// Where one entry is copied from and to.
struct At<'p> {
    src_dir: &'p Dir,
    name: &'p CStr,
    src_path: &'p [u8],
    dst_dir: &'p Arc<Dir>,
    /// The destination directory's node (`None` for a source that is not a directory).
    dst_node: Option<Arc<Node>>,
    dst_name: &'p CStr,
    dst_path: &'p [u8],
    depth: usize,
}

/// The mode kept with `--preserve=mode`: set-user-ID and set-group-ID only where the
/// owner was kept too, as GNU cp does.
fn kept_mode(mode: u32, owned: bool) -> u32 {
    if owned { mode & 0o7777 } else { mode & 0o1777 }
}

/// `EPERM` or `EACCES`: a change of owner refused.
fn refused(e: &io::Error) -> bool {
    e.kind() == ErrorKind::PermissionDenied || e.raw_os_error() == Some(1)
}

/// `e` with what was being done said first; its kind kept.
fn context(what: &str, e: io::Error) -> io::Error {
    if e.kind() == ErrorKind::Interrupted {
        return e;
    }
    io::Error::new(e.kind(), format!("{what}: {}", crate::walk::describe(&e)))
}

/// Whether `b` separates names in a path: `/`, and on Windows `\` too.
fn is_sep(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}

/// A path's parent directory (`.` for a bare name) and last name; `None` for a path
/// with no name (`/`, `..`, on Windows `C:\`). On Windows `\` separates names as `/`
/// does, and the parent of `C:\x` is `C:\`, not `C:` (the drive's current directory).
fn split(path: &Path) -> Option<(std::path::PathBuf, CString)> {
    let bytes = crate::walk::path_to_bytes(path);
    let end = bytes.iter().rposition(|&b| !is_sep(b)).map_or(0, |i| i + 1);
    let trimmed = &bytes[..end];
    let (parent, name): (&[u8], &[u8]) = match trimmed.iter().rposition(|&b| is_sep(b)) {
        Some(0) => (&trimmed[..1], &trimmed[1..]),
        // `C:\x`: the root of the drive, separator kept.
        Some(i) if cfg!(windows) && trimmed[..i].ends_with(b":") => {
            (&trimmed[..=i], &trimmed[i + 1..])
        }
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (b".", trimmed),
    };
    let drive = cfg!(windows) && name.ends_with(b":");
    if name.is_empty() || name == b"." || name == b".." || drive {
        return None;
    }
    Some((bytes_to_path(parent.to_vec()), CString::new(name).ok()?))
}

fn check_id(d: &Dir, id: (u64, u64)) -> io::Result<()> {
    let m = d.stat(StatMask::ID)?;
    if (m.dev, m.ino) != id {
        return Err(io::Error::other(
            "the destination directory was replaced while the copy ran",
        ));
    }
    Ok(())
}

/// What extended attributes are read from or written to: an open file or directory.
enum XattrFd<'a> {
    File(&'a sys::File),
    OwnDir(&'a Dir),
    /// An entry that is not opened (a link, fifo, socket, device), by its directory
    /// and name; a link followed only with `follow` (a source under `-L`).
    At(&'a Dir, &'a CStr, bool),
}

impl XattrFd<'_> {
    fn names(&self) -> io::Result<Vec<u8>> {
        match self {
            XattrFd::File(f) => f.xattr_names(),
            XattrFd::OwnDir(d) => d.xattr_names(),
            XattrFd::At(d, n, follow) => d.xattr_names_at(n, *follow),
        }
    }

    fn get(&self, name: &CStr) -> io::Result<Vec<u8>> {
        match self {
            XattrFd::File(f) => f.xattr(name),
            XattrFd::OwnDir(d) => d.xattr(name),
            XattrFd::At(d, n, follow) => d.xattr_at(n, name, *follow),
        }
    }

    fn set(&self, name: &CStr, value: &[u8]) -> io::Result<()> {
        match self {
            XattrFd::File(f) => f.set_xattr(name, value),
            XattrFd::OwnDir(d) => d.set_xattr(name, value),
            XattrFd::At(d, n, _) => d.set_xattr_at(n, name, value),
        }
    }
}

/// `ENODATA`: an attribute gone since it was listed.
const ENODATA: i32 = 61;

/// Whether an extended attribute's failure is one `cp -a` says nothing of: a file
/// system without them, a name this process may not read or set (`trusted.*`,
/// `security.*` without the privilege), an attribute gone meanwhile.
fn quiet_xattr_error(e: &io::Error) -> bool {
    e.kind() == ErrorKind::Unsupported
        || e.raw_os_error() == Some(95)
        || e.raw_os_error() == Some(ENODATA)
        || refused(e)
}

/// Whether `name` is a POSIX ACL's extended attribute: kept with the mode, as GNU cp
/// keeps ACLs with `--preserve=mode`.
fn is_acl(name: &[u8]) -> bool {
    name == b"system.posix_acl_access" || name == b"system.posix_acl_default"
}

/// Copies the extended attributes of `from` to `to`: the POSIX ACLs (the attributes
/// `system.posix_acl_access` and `system.posix_acl_default`) with `acls`, the others
/// with `others`.
fn copy_xattrs(from: XattrFd<'_>, to: XattrFd<'_>, acls: bool, others: bool) -> io::Result<()> {
    let names = match from.names() {
        Ok(n) => n,
        Err(e) if quiet_xattr_error(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        // ACLs go with the mode, the rest with `all` (as GNU cp, which leaves ACLs
        // out of the extended attributes it copies).
        if !(if is_acl(name) { acls } else { others }) {
            continue;
        }
        let Ok(name) = CString::new(name) else {
            continue;
        };
        let value = match from.get(&name) {
            Ok(v) => v,
            Err(e) if quiet_xattr_error(&e) => continue,
            Err(e) => return Err(e),
        };
        match to.set(&name, &value) {
            Ok(()) => {}
            Err(e) if quiet_xattr_error(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A worker's visitor.
struct Copier<'s, 'a> {
    shared: &'s Shared<'a>,
    root: Arc<Node>,
    /// The source's device, for `-x`.
    src_dev: u64,
    /// The length of the source's path, which each entry's path begins with.
    src_len: usize,
    dst_root: &'s [u8],
    dst_path: Vec<u8>,
    src_path: Vec<u8>,
}

impl Copier<'_, '_> {
    /// A directory that could not be read (mode 0000, another user's): made all the
    /// same, empty, with its attributes, as GNU cp makes it before it fails to read
    /// it. Its metadata is asked by path: this is the rare case, and the walk gives no
    /// handle with the error.
    fn unreadable(&mut self, err: &Error, node: &Arc<Node>) {
        if err.io_error().kind() != ErrorKind::PermissionDenied || err.depth() == 0 {
            return;
        }
        let follow = self.shared.opts.dereference == Dereference::Always;
        let Ok(m) = sys::stat_path(err.path(), StatMask::ALL, follow) else {
            return;
        };
        if m.file_type() != FileType::Dir {
            return;
        }
        let src_path = crate::walk::path_to_bytes(err.path());
        let Some(name) = src_path.rsplit(|&b| is_sep(b)).next() else {
            return;
        };
        let Ok(name) = CString::new(name) else { return };
        let mut dst_path = Vec::new();
        self.dst_of(&src_path, &mut dst_path);
        let shared = self.shared;
        let Ok(parent) = shared.handle(node) else {
            return;
        };
        if let Some(made) = shared.make_dir(
            &parent,
            Some(node.clone()),
            &name,
            &m,
            &dst_path,
            err.depth(),
        ) {
            shared.finish_dir(&made, &dst_path, err.depth());
            shared.close(&made);
        }
    }

    /// With `-x`: a directory on another file system than its source's is made, empty
    /// (as GNU cp makes a mount point), and not entered.
    fn mount_point(&mut self, e: &Entry<'_>, node: &Arc<Node>) -> Control {
        let (Some(sdir), Some(name)) = (e.dir(), e.c_name()) else {
            return Control::Continue;
        };
        let follow = self.shared.opts.dereference == Dereference::Always;
        let m = match sdir.stat_at(name, StatMask::ALL, follow) {
            Ok(m) if m.dev != self.src_dev => m,
            _ => return Control::Continue,
        };
        let mut src_path = Vec::new();
        e.write_path(&mut src_path);
        let mut dst_path = Vec::new();
        self.dst_of(&src_path, &mut dst_path);
        let shared = self.shared;
        let parent = match shared.handle(node) {
            Ok(d) => d,
            Err(err) => {
                shared.fail(&dst_path, e.depth(), err);
                return Control::Skip;
            }
        };
        if let Some(made) =
            shared.make_dir(&parent, Some(node.clone()), name, &m, &dst_path, e.depth())
        {
            shared.dir_copied(&src_path, &dst_path, &made);
            shared.finish_dir(&made, &dst_path, e.depth());
            shared.close(&made);
        }
        Control::Skip
    }

    /// The destination path of the source path `src`.
    fn dst_of(&self, src: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.dst_root);
        out.extend_from_slice(&src[self.src_len.min(src.len())..]);
    }
}

type State = Option<Arc<Node>>;

impl Visitor for Copier<'_, '_> {
    type State = State;

    fn wants_handles(&self) -> bool {
        true
    }

    fn enter(&mut self, ev: &DirEvent<'_>, parent: Option<&State>) -> State {
        let Some(parent) = parent else {
            return Some(self.root.clone());
        };
        let parent = parent.as_ref()?;
        let shared = self.shared;
        let mut dst_path = std::mem::take(&mut self.dst_path);
        self.dst_of(ev.path(), &mut dst_path);
        let r = (|| {
            let (Some(src), Some(name)) = (ev.dir(), ev.c_name()) else {
                shared.fail(
                    ev.path(),
                    ev.depth(),
                    io::Error::other("no handle to the directory"),
                );
                return None;
            };
            let m = match src.stat(StatMask::ALL) {
                Ok(m) => m,
                Err(e) => {
                    shared.fail(ev.path(), ev.depth(), e);
                    return None;
                }
            };
            let roots = shared.dst_roots.lock().unwrap_or_else(|e| e.into_inner());
            if roots.contains(&(m.dev, m.ino)) {
                drop(roots);
                // As GNU cp: what is there is copied, the copy's own directory
                // refused, said of the source given and the copy made of it.
                let reason = format!(
                    "cannot copy a directory into itself, {}",
                    bytes_to_path(self.dst_root.to_vec()).display()
                );
                let src_root = &ev.path()[..self.src_len.min(ev.path().len())];
                shared.fail(src_root, 0, io::Error::new(ErrorKind::InvalidInput, reason));
                return None;
            }
            drop(roots);
            let pdir = match shared.handle(parent) {
                Ok(d) => d,
                Err(e) => {
                    shared.fail(&dst_path, ev.depth(), e);
                    return None;
                }
            };
            let node =
                shared.make_dir(&pdir, Some(parent.clone()), name, &m, &dst_path, ev.depth())?;
            if shared.opts.preserve.xattr || shared.opts.preserve.mode {
                if let Err(e) = copy_dir_xattrs(src, &node, shared) {
                    shared.fail(
                        &dst_path,
                        ev.depth(),
                        context("cannot preserve extended attributes", e),
                    );
                }
            }
            shared.dir_copied(ev.path(), &dst_path, &node);
            Some(node)
        })();
        self.dst_path = dst_path;
        r
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&State>) -> Control {
        let e = match item {
            Ok(e) => e,
            Err(err) => {
                if let Some(Some(node)) = dir {
                    self.unreadable(&err, node);
                }
                self.shared.error(err);
                return Control::Continue;
            }
        };
        let Some(Some(node)) = dir else {
            // The directory's copy could not be made (reported): nothing below it.
            return Control::Skip;
        };
        if e.is_dir() {
            if self.shared.opts.same_file_system {
                return self.mount_point(e, node);
            }
            return Control::Continue;
        }
        let (Some(sdir), Some(name)) = (e.dir(), e.c_name()) else {
            let err = io::Error::other("no handle to its directory");
            self.shared
                .fail(&crate::walk::path_to_bytes(&e.path()), e.depth(), err);
            return Control::Continue;
        };
        let ddir = match self.shared.handle(node) {
            Ok(d) => d,
            Err(err) => {
                self.shared
                    .fail(&crate::walk::path_to_bytes(&e.path()), e.depth(), err);
                return Control::Continue;
            }
        };
        let mut src_path = std::mem::take(&mut self.src_path);
        src_path.clear();
        e.write_path(&mut src_path);
        let mut dst_path = std::mem::take(&mut self.dst_path);
        self.dst_of(&src_path, &mut dst_path);
        let at = At {
            src_dir: sdir,
            name,
            src_path: &src_path,
            dst_dir: &ddir,
            dst_node: Some(node.clone()),
            dst_name: name,
            dst_path: &dst_path,
            depth: e.depth(),
        };
        let follow = self.shared.opts.dereference == Dereference::Always;
        self.shared.copy_entry(&at, e.file_type(), follow);
        self.src_path = src_path;
        self.dst_path = dst_path;
        Control::Continue
    }

    fn leave(&mut self, ev: &DirEvent<'_>, state: State, parent: Option<&State>) {
        let Some(node) = state else { return };
        let mut dst_path = std::mem::take(&mut self.dst_path);
        self.dst_of(ev.path(), &mut dst_path);
        self.shared.finish_dir(&node, &dst_path, ev.depth());
        // The parent's handle, where it was closed for want of room: from this one's
        // `..`, checked (one call, not a climb from the nearest open ancestor).
        if let Some(Some(pnode)) = parent {
            let closed = pnode
                .handle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_none();
            if closed {
                // The lock let go of before `keep`, which may close (lock) other nodes'
                // handles while another worker, holding one of them, waits for this one.
                let own = node
                    .handle
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                if let Some(own) = own {
                    if let Ok(up) = own.open_at(c"..") {
                        if check_id(&up, pnode.id).is_ok() {
                            self.shared.keep(pnode, Arc::new(up));
                        }
                    }
                }
            }
        }
        // A root merged into a directory named by no name (`.`) keeps its handle: it
        // could not be opened again (and it was never counted).
        if node.parent.is_some() || node.above.is_some() {
            self.shared.close(&node);
        }
        self.dst_path = dst_path;
    }
}

/// Copies a source directory's extended attributes to its copy's handle.
fn copy_dir_xattrs(src: &Dir, node: &Arc<Node>, shared: &Shared<'_>) -> io::Result<()> {
    let dst = shared.handle(node)?;
    copy_xattrs(
        XattrFd::OwnDir(src),
        XattrFd::OwnDir(&dst),
        shared.opts.preserve.mode,
        shared.opts.preserve.xattr,
    )
}

#[cfg(all(test, unix))]
mod tests;
