//! Walking a tree: [`WalkBuilder`] sets it up, [`Walk`] runs it.
//!
//! The walk goes through directory handles: each directory is opened relative to its
//! parent, read whole into a reused buffer, and its entries are handed out borrowed
//! ([`Entry`]) with their type from `d_type`; a `statx` is made only where the file
//! system does not tell the type, or to follow a link. There is no recursion and only a
//! bounded number of handles is held open ([`WalkBuilder::fd_budget`]): a directory whose
//! handle had to be closed is reopened from its nearest open ancestor, one component at a
//! time, and checked to be the same directory. So depth is no obstacle, nor `PATH_MAX`.
//!
//! Three ways to consume a walk, fastest first:
//!
//! - [`Walk::visit`]: a callback gets each borrowed [`Entry`] and says whether to go on,
//!   skip the directory just seen, or stop.
//! - [`Walk::next_entry`]: the same, pulled one at a time.
//! - `Iterator`: owned [`DirEntry`] values, a `PathBuf` each.
//!
//! ```
//! use ftw::walk::{Control, WalkBuilder};
//!
//! let tmp = tempfile::tempdir()?;
//! std::fs::create_dir_all(tmp.path().join("a/b"))?;
//! std::fs::write(tmp.path().join("a/b/c.txt"), b"hi")?;
//! std::fs::create_dir(tmp.path().join("skip"))?;
//! std::fs::write(tmp.path().join("skip/x"), b"")?;
//!
//! let mut paths = Vec::new();
//! WalkBuilder::new(tmp.path()).sort(true).build().visit(|item| {
//!     let entry = item.expect("readable");
//!     if entry.name() == b"skip" {
//!         return Control::Skip; // never opened
//!     }
//!     let mut path = Vec::new();
//!     entry.write_path(&mut path);
//!     paths.push(path);
//!     Control::Continue
//! });
//! let root = tmp.path().to_str().unwrap();
//! assert_eq!(paths, vec![
//!     root.as_bytes().to_vec(),
//!     format!("{root}/a").into_bytes(),
//!     format!("{root}/a/b").into_bytes(),
//!     format!("{root}/a/b/c.txt").into_bytes(),
//! ]);
//! # Ok::<(), std::io::Error>(())
//! ```

mod ahead;
mod budget;
mod error;
mod event;
mod gate;
mod hooks;
pub(crate) mod listing;
mod node;
mod parallel;
mod pool;
mod run;
mod serial;
mod step;

pub use budget::Budget;
pub use error::Error;
pub(crate) use error::describe;
pub use event::{DirEvent, Visitor};
pub(crate) use gate::{DirRules, Gate};
pub use parallel::{ParallelVisitor, ParallelWalk};
pub use pool::WalkStats;
pub use serial::Walk;

use crate::sys::{Dir, FileType, Metadata, StatMask};
#[cfg(all(test, unix))]
use hooks::Fault;
use hooks::Hooks;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a visitor wants after seeing an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Go on.
    Continue,
    /// If the entry is a directory, do not open it; otherwise the same as `Continue`.
    Skip,
    /// End the walk.
    Stop,
}

/// A filter shared by every thread of a walk.
type Filter = Arc<dyn Fn(&Entry<'_>) -> bool + Send + Sync>;

/// Sets up a walk over one or more roots.
///
/// ```
/// use ftw::walk::WalkBuilder;
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("a/b/c"))?;
/// let depths: Vec<usize> = WalkBuilder::new(tmp.path())
///     .min_depth(1)
///     .max_depth(2)
///     .build()
///     .map(|e| e.unwrap().depth())
///     .collect();
/// assert_eq!(depths, vec![1, 2]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct WalkBuilder {
    pub(crate) roots: Vec<Origin>,
    pub(crate) opts: Options,
    pub(crate) filter: Option<Filter>,
    /// Rules made per directory (git's ignore rules: [`WalkBuilder::git_ignore`]).
    pub(crate) gate: Option<Arc<dyn Gate>>,
}

/// A root of a walk: its path, and its handle when the caller opened it already
/// ([`WalkBuilder::from_dir`]).
pub(crate) struct Origin {
    pub(crate) path: PathBuf,
    pub(crate) dir: Option<Dir>,
}

impl Origin {
    fn path<P: AsRef<Path>>(path: P) -> Origin {
        Origin {
            path: path.as_ref().to_path_buf(),
            dir: None,
        }
    }
}

/// The settings a walk runs with (see [`WalkBuilder`]).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) min_depth: usize,
    pub(crate) max_depth: usize,
    /// The depth the roots are at ([`WalkBuilder::root_depth`]).
    pub(crate) root_depth: usize,
    pub(crate) follow_links: bool,
    pub(crate) same_file_system: bool,
    pub(crate) sort: bool,
    pub(crate) fd_budget: usize,
    pub(crate) buf_size: usize,
    pub(crate) threads: usize,
    /// Keep each directory's handle until it is left ([`WalkBuilder::keep_handles`]).
    pub(crate) keep_handles: bool,
    /// Close a directory's own handle before its leave event
    /// ([`WalkBuilder::close_before_leave`]).
    pub(crate) close_before_leave: bool,
    /// The visitor's calls wait on the file system ([`WalkBuilder::visitor_waits`]).
    pub(crate) visitor_waits: bool,
    /// Large directories' entries in inode order ([`WalkBuilder::inode_order`]).
    pub(crate) inode_order: bool,
    /// A parallel walk's workers take up a directory's subdirectories first first
    /// ([`WalkBuilder::first_subdirectory_first`]).
    pub(crate) first_sub_first: bool,
    /// A huge directory's parts may go to idle workers
    /// ([`WalkBuilder::share_huge_directories`]).
    pub(crate) share_parts: bool,
    /// A sorted [`Walk`] reads ahead on `threads` workers (set by [`WalkBuilder::threads`]).
    pub(crate) read_ahead: bool,
    /// Settings only the crate's tests change.
    pub(crate) hooks: Hooks,
}

impl Options {
    /// Whether each directory's (device, inode) is needed: to find loops when links are
    /// followed, or to see mount points.
    pub(crate) fn wants_ids(&self) -> bool {
        self.follow_links || self.same_file_system
    }

    /// Whether a directory of identity `id` is on another file system than the root's
    /// (device `root_dev`) and the walk must not enter it.
    pub(crate) fn off_fs(&self, id: Option<(u64, u64)>, root_dev: u64) -> bool {
        self.same_file_system && id.is_some_and(|(dev, _)| dev != root_dev)
    }
}

impl WalkBuilder {
    /// A walk of `root` (and everything below it), with defaults: all depths, links not
    /// followed, file systems crossed, unsorted.
    pub fn new<P: AsRef<Path>>(root: P) -> WalkBuilder {
        WalkBuilder {
            roots: vec![Origin::path(root)],
            opts: Options {
                min_depth: 0,
                max_depth: usize::MAX,
                root_depth: 0,
                follow_links: false,
                same_file_system: false,
                sort: false,
                fd_budget: Budget::from_limit().handles(),
                buf_size: crate::sys::DEFAULT_DIR_BUF,
                threads: 0,
                keep_handles: false,
                close_before_leave: false,
                visitor_waits: false,
                inode_order: false,
                first_sub_first: false,
                share_parts: true,
                read_ahead: false,
                hooks: Hooks::new(),
            },
            filter: None,
            gate: None,
        }
    }

    /// A walk of the directory already open as `dir`, whose entries' paths begin with
    /// `path`. The path is never opened: nothing put in its place (a rename, a symbolic
    /// link) can lead the walk elsewhere.
    ///
    /// ```
    /// use ftw::sys::Dir;
    /// use ftw::walk::WalkBuilder;
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::write(tmp.path().join("f"), b"x")?;
    /// let dir = Dir::open(tmp.path())?;
    /// let paths: Vec<_> = WalkBuilder::from_dir(dir, "here")
    ///     .min_depth(1)
    ///     .build()
    ///     .map(|e| e.unwrap().into_path())
    ///     .collect();
    /// assert_eq!(paths, vec![std::path::PathBuf::from("here/f")]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn from_dir<P: AsRef<Path>>(dir: Dir, path: P) -> WalkBuilder {
        let mut b = WalkBuilder::new(&path);
        b.roots[0].dir = Some(dir);
        b
    }

    /// Adds another root, walked after the ones before it.
    pub fn add_root<P: AsRef<Path>>(mut self, root: P) -> Self {
        self.roots.push(Origin::path(root));
        self
    }

    /// Entries shallower than `depth` are not reported (they are still walked). A root
    /// is at depth 0, its entries at depth 1.
    pub fn min_depth(mut self, depth: usize) -> Self {
        self.opts.min_depth = depth;
        self
    }

    /// Directories at `depth` are reported but not opened.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.opts.max_depth = depth;
        self
    }

    /// The depth of the roots (0 by default): a walk of a directory found `depth`
    /// levels below some other root reports its entries at `depth + 1` and so on, and
    /// [`WalkBuilder::min_depth`] and [`WalkBuilder::max_depth`] count from that other
    /// root, as do the filters that look at [`Entry::depth`] (an anchored exclusion, a
    /// path below the root). For one walk taken up again below a directory another
    /// walk (or process) found: with [`WalkBuilder::from_dir`], its entries are what
    /// the whole walk would have reported there. Honoured by the serial walk
    /// ([`WalkBuilder::build`]); a parallel walk starts its roots at 0.
    ///
    /// ```
    /// use ftw::sys::Dir;
    /// use ftw::walk::WalkBuilder;
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("a/b/c"))?;
    /// let below = Dir::open(&tmp.path().join("a"))?;
    /// let found: Vec<_> = WalkBuilder::from_dir(below, "top/a")
    ///     .root_depth(1)
    ///     .min_depth(2)
    ///     .max_depth(2)
    ///     .build()
    ///     .map(|e| e.map(|e| (e.depth(), e.into_path())).unwrap())
    ///     .collect();
    /// assert_eq!(found, [(2, std::path::PathBuf::from("top/a/b"))]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn root_depth(mut self, depth: usize) -> Self {
        self.opts.root_depth = depth;
        self
    }

    /// Follow symbolic links (like `find -L`): a link is reported with its target's
    /// type and a link to a directory is walked, except when the directory is one being
    /// walked already, which is reported once as an error ([`Error::loop_ancestor`]). A
    /// dangling link is reported as a link. Roots are always followed.
    pub fn follow_links(mut self, yes: bool) -> Self {
        self.opts.follow_links = yes;
        self
    }

    /// Do not open directories on another file system than their root's (mount points
    /// are reported, not entered).
    pub fn same_file_system(mut self, yes: bool) -> Self {
        self.opts.same_file_system = yes;
        self
    }

    /// Report entries in a fixed order: each directory's entries sorted by their name's
    /// bytes, and each directory's contents right after it (depth first).
    pub fn sort(mut self, yes: bool) -> Self {
        self.opts.sort = yes;
        self
    }

    /// Keep at most `n` directory handles open (at least 2; by default
    /// [`Budget::from_limit`]); a parallel walk may hold one more a worker, for
    /// directories with a single subdirectory. Deep trees need no more: a directory
    /// whose handle was closed is reopened when needed.
    pub fn fd_budget(mut self, n: usize) -> Self {
        self.opts.fd_budget = n.max(2);
        self
    }

    /// Worker threads for [`WalkBuilder::build_parallel`]: `n` fixes the count; 0 (the
    /// default) starts with one per core and adds workers, up to
    /// [`Budget::max_io_threads`], while they wait on the disk. Either way there are at
    /// most [`Budget::max_threads`] for the handle budget.
    ///
    /// Set on a sorted walk made by [`WalkBuilder::build`] (0 meaning one per core),
    /// it makes `n` threads read directories: `n - 1` workers read ahead of the walker,
    /// in the walk's order, and the walker reads the next one in line whenever the one
    /// it needs is still being read. With 0, workers are added while reads wait on the
    /// disk, as in a parallel walk. The entries and their order are the same, but
    /// directories may be read before the visitor decides to [skip](Control::Skip) them
    /// (never one that [`WalkBuilder::filter_entry`] leaves out: the workers ask the
    /// filter first). With [`WalkBuilder::keep_handles`], the walker opens each
    /// directory read ahead once more for its handle, checked to be the one read.
    pub fn threads(mut self, n: usize) -> Self {
        self.opts.threads = n;
        self.opts.read_ahead = n != 1;
        self
    }

    /// Keep each directory's handle until the directory is left, for a visitor that works
    /// relative to it: every entry below a root then gives its directory's handle
    /// ([`Entry::dir`]), and every enter and leave event the directory's own and its
    /// parent's ([`DirEvent`]). Within the handle budget: a handle that had to be closed
    /// is had back when needed, checked to be the same directory (climbing back through
    /// `..`, one call a level). Off by default: a listing closes each handle as soon as no
    /// subdirectory is left to open.
    pub fn keep_handles(mut self, yes: bool) -> Self {
        self.opts.keep_handles = yes;
        self
    }

    /// With [`WalkBuilder::keep_handles`], close each directory's own handle just before
    /// its leave event, which then gives its parent's handle only ([`DirEvent::dir`] is
    /// `None` on leaving): for a visitor that removes the directory as it leaves it. On
    /// ext4 and the like, a directory removed while it is still open is put on the
    /// file system's orphan list (one more journaled update, under a lock that every
    /// worker shares) and freed only at the close. Off by default.
    ///
    /// ```
    /// use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
    ///
    /// /// Counts the leave events that came with the directory's own handle.
    /// struct Open(usize);
    /// impl Visitor for Open {
    ///     type State = ();
    ///     fn enter(&mut self, _: &DirEvent<'_>, _: Option<&()>) {}
    ///     fn entry(&mut self, _: Result<&Entry<'_>, Error>, _: Option<&()>) -> Control {
    ///         Control::Continue
    ///     }
    ///     fn leave(&mut self, d: &DirEvent<'_>, _: (), _: Option<&()>) {
    ///         self.0 += d.dir().is_some() as usize;
    ///     }
    /// }
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("a/b"))?;
    /// let walk = |close| {
    ///     let mut v = Open(0);
    ///     WalkBuilder::new(tmp.path())
    ///         .keep_handles(true)
    ///         .close_before_leave(close)
    ///         .build()
    ///         .visit_events(&mut v);
    ///     v.0
    /// };
    /// assert_eq!(walk(false), 3);
    /// assert_eq!(walk(true), 0);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn close_before_leave(mut self, yes: bool) -> Self {
        self.opts.close_before_leave = yes;
        self
    }

    /// Tell a parallel walk that the visitor's own calls wait on the file system (a
    /// removal's `unlinkat`, which on a file system that discards freed blocks at once
    /// waits for the disk at each file): the time spent in the visitor then counts
    /// with the walk's reads when the pool decides whether its workers are waiting on
    /// the disk, and with [`WalkBuilder::threads`] 0 it adds workers while they are.
    /// Off by default: a listing's visitor works on the CPU, or waits on its reader
    /// (a pipe), which more workers would not help.
    ///
    /// ```
    /// let walk = ftw::walk::WalkBuilder::new(".").threads(0).visitor_waits(true);
    /// # let _ = walk;
    /// ```
    pub fn visitor_waits(mut self, yes: bool) -> Self {
        self.opts.visitor_waits = yes;
        self
    }

    /// Report the entries of a large directory (10,000 entries or more) in inode order
    /// rather than as the file system lists them, unless the walk sorts: on ext4 and
    /// the like, removing or asking metadata of them in that order visits the inode
    /// table in sequence (GNU rm does the same). Off by default.
    pub fn inode_order(mut self, yes: bool) -> Self {
        self.opts.inode_order = yes;
        self
    }

    /// In a parallel walk, each worker takes up the subdirectories of the directory it
    /// has read in the order its listing gave them, the first first, as a serial walk
    /// meets them (by default it takes the last first: the one whose path it already
    /// holds), and all workers take their next directory from one stack, the first
    /// left in line (by default each keeps its own and steals the oldest of another's).
    /// For a visitor whose results are told in the serial walk's order (as `ftw du`
    /// prints each directory after its contents), so that little of what is done waits
    /// on an earlier sibling. No effect on a walk on one thread. Off by default.
    ///
    /// ```
    /// let walk = ftw::walk::WalkBuilder::new(".").threads(0).first_subdirectory_first(true);
    /// # let _ = walk;
    /// ```
    pub fn first_subdirectory_first(mut self, yes: bool) -> Self {
        self.opts.first_sub_first = yes;
        self
    }

    /// In a parallel walk, a huge directory (read in parts of 32,768 entries) has its
    /// parts reported by whichever workers are idle, while the worker that reads it
    /// reads on: the calls made for each entry (a `statx` for its size, an `unlinkat`)
    /// are then spread over the cores even where one directory holds everything. Its
    /// entries then reach several visitors at once, in no fixed order among parts, and
    /// the directory is left once every part is done. Never with
    /// [`first_subdirectory_first`](Self::first_subdirectory_first), whose order it
    /// would break. On by default.
    ///
    /// ```
    /// let walk = ftw::walk::WalkBuilder::new(".").threads(0).share_huge_directories(false);
    /// # let _ = walk;
    /// ```
    pub fn share_huge_directories(mut self, yes: bool) -> Self {
        self.opts.share_parts = yes;
        self
    }

    /// The size of the buffer directories are read into (64 KiB by default).
    pub fn buffer_size(mut self, bytes: usize) -> Self {
        self.opts.buf_size = bytes;
        self
    }

    /// Decide before an entry is reported, and before a directory is opened: an entry
    /// for which `keep` says `false` is neither reported nor, if a directory, entered.
    /// Every walk applies it, serial, sorted or parallel (where every worker calls it).
    ///
    /// ```
    /// use ftw::walk::WalkBuilder;
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("node_modules/x"))?;
    /// std::fs::write(tmp.path().join("main.rs"), b"")?;
    /// let names: Vec<_> = WalkBuilder::new(tmp.path())
    ///     .min_depth(1)
    ///     .filter_entry(|e| e.name() != b"node_modules")
    ///     .build()
    ///     .map(|e| e.unwrap().path().file_name().unwrap().to_owned())
    ///     .collect();
    /// assert_eq!(names, vec!["main.rs"]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn filter_entry<F>(mut self, keep: F) -> Self
    where
        F: Fn(&Entry<'_>) -> bool + Send + Sync + 'static,
    {
        self.filter = Some(Arc::new(keep));
        self
    }

    /// Starts the walk (nothing is opened before the first entry is asked for).
    pub fn build(self) -> Walk {
        Walk::new(self)
    }
}

/// A builder is walked as it is built: `for entry in WalkBuilder::new(path)` is
/// `for entry in WalkBuilder::new(path).build()`, a serial walk yielding owned
/// [`DirEntry`] values (or an [`Error`] for what could not be read, and the walk goes
/// on).
///
/// ```
/// use ftw::WalkBuilder;
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("a"))?;
/// std::fs::write(tmp.path().join("a/f"), b"x")?;
/// let mut paths = Vec::new();
/// for entry in WalkBuilder::new(tmp.path()).sort(true) {
///     let entry = entry?;
///     paths.push(entry.path().strip_prefix(tmp.path()).unwrap().to_owned());
/// }
/// assert_eq!(paths, ["", "a", "a/f"].map(std::path::PathBuf::from));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl IntoIterator for WalkBuilder {
    type Item = Result<DirEntry, Error>;
    type IntoIter = Walk;

    fn into_iter(self) -> Walk {
        self.build()
    }
}

/// An entry seen during a walk, borrowed from the walker: no allocation is made for it.
/// Its full path is built only when asked ([`Entry::write_path`], [`Entry::path`]).
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    pub(crate) parent: &'a [u8],
    pub(crate) name: &'a [u8],
    pub(crate) depth: usize,
    pub(crate) file_type: FileType,
    pub(crate) followed_link: bool,
    pub(crate) ino: u64,
    /// The metadata the listing gave, where it gives any (Windows).
    #[cfg(windows)]
    pub(crate) meta: Option<crate::sys::Metadata>,
    pub(crate) dir: Option<&'a Dir>,
    /// The name followed by its NUL (made a `CStr` only when asked: checking it costs a
    /// pass over the name).
    pub(crate) c_name: Option<&'a [u8]>,
    /// Metadata fetched already, and which fields of it ([`Entry::with_metadata`]).
    pub(crate) known: Option<(StatMask, Metadata)>,
}

impl<'a> Entry<'a> {
    /// A root as an entry: at depth 0, named by its path as given (`followed_link` if
    /// that is a symbolic link, followed).
    pub(crate) fn root(path: &'a [u8], file_type: FileType, followed_link: bool) -> Entry<'a> {
        Entry {
            parent: b"",
            name: path,
            depth: 0,
            file_type,
            followed_link,
            ino: 0,
            #[cfg(windows)]
            meta: None,
            dir: None,
            c_name: None,
            known: None,
        }
    }

    /// The handle of the directory holding the entry, to work on the entry relative to
    /// it ([`Dir::stat_at`], [`Dir::unlink_at`], ...) with [`Entry::c_name`]. Always given
    /// below a root when the walk keeps handles ([`WalkBuilder::keep_handles`]);
    /// otherwise where it happens to be open. `None` for a root.
    pub fn dir(&self) -> Option<&'a Dir> {
        self.dir
    }

    /// The entry's name as a C string, ready for the kernel; `None` for a root.
    pub fn c_name(&self) -> Option<&'a CStr> {
        self.c_name.and_then(|n| CStr::from_bytes_with_nul(n).ok())
    }

    /// The entry's name, the bytes on disk; for a root (depth 0), the root as given.
    pub fn name(&self) -> &'a [u8] {
        self.name
    }

    /// The path of the directory holding the entry, as the walk built it from its root
    /// (empty for a root).
    pub fn parent_path(&self) -> &'a [u8] {
        self.parent
    }

    /// The depth below the root: 0 for the root, 1 for its entries, and so on.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The type: from `d_type`, or a `statx` where that was unknown; for a followed link,
    /// its target's type.
    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// Whether the entry is a directory (or a followed link to one).
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Dir
    }

    /// Whether the entry is a symbolic link, followed by the walk or not (a root given
    /// as a link, which the walk always follows, too), as walkdir's says: its path then
    /// names the link.
    pub fn path_is_symlink(&self) -> bool {
        self.followed_link || self.file_type == FileType::Symlink
    }

    /// The inode number the directory entry gave (0 for a root).
    pub fn ino(&self) -> u64 {
        self.ino
    }

    /// The entry's metadata as its directory's listing gave it, with no call for it:
    /// on Windows (see [`crate::sys::RawEntry::metadata`]: size, allocation, mode, time
    /// and file id; `dev` and `nlink` 0); `None` on Linux and for a root. For a
    /// followed link, the link's own.
    pub fn listed_metadata(&self) -> Option<crate::sys::Metadata> {
        #[cfg(windows)]
        return self.meta;
        #[cfg(not(windows))]
        None
    }

    /// Appends the entry's full path to `out`: the parent's path, a `/` unless that ends
    /// with one, and the name.
    pub fn write_path(&self, out: &mut Vec<u8>) {
        push_joined(out, self.parent, self.name);
    }

    /// The entry's full path, allocated.
    pub fn path(&self) -> PathBuf {
        join(self.parent, self.name)
    }

    /// The entry's metadata, with at least the fields of `mask`. For a followed link,
    /// its target's; for a root, what the walk took it for (the target of a link given
    /// as the root, unless it dangles). Answered by the listing where that told every
    /// field asked for (Windows: no call), else by one `statx` relative to the
    /// directory's handle where the walk kept it ([`WalkBuilder::keep_handles`]), else
    /// by path.
    ///
    /// # Errors
    ///
    /// The system's error for the `statx` (or `stat` by path): the entry may have been
    /// removed or renamed since it was listed (`NotFound`), or, for a followed link, what
    /// it leads to may be gone.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ftw::sys::StatMask;
    /// use ftw::walk::{Control, WalkBuilder};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("f"), b"12345")?;
    /// let mut sizes = Vec::new();
    /// WalkBuilder::new(dir.path())
    ///     .min_depth(1)
    ///     .keep_handles(true)
    ///     .build()
    ///     .visit(|item| {
    ///         let e = item.unwrap();
    ///         sizes.push((e.name().to_vec(), e.metadata(StatMask::SIZE).unwrap().size));
    ///         Control::Continue
    ///     });
    /// assert_eq!(sizes, [(b"f".to_vec(), 5)]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn metadata(&self, mask: StatMask) -> std::io::Result<Metadata> {
        if let Some((have, m)) = self.known {
            if have.contains(mask) {
                return Ok(m);
            }
        }
        let follow = (self.followed_link || self.depth == 0) && self.file_type != FileType::Symlink;
        if !follow && crate::sys::listing_answers(mask) {
            if let Some(m) = self.listed_metadata() {
                return Ok(m);
            }
        }
        match (self.dir(), self.c_name()) {
            (Some(dir), Some(name)) => dir.stat_at(name, mask, follow),
            _ => crate::sys::stat_path(&self.path(), mask, follow),
        }
    }

    /// A copy of the entry that answers [`Entry::metadata`] for the fields of `mask`
    /// with `meta`, with no call: metadata fetched already (as
    /// [`crate::filter::Filter::check_keeping`] leaves it) is not fetched again by what
    /// reads the entry next. `meta` must be this entry's, as [`Entry::metadata`] gave it
    /// for `mask`.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ftw::sys::StatMask;
    /// use ftw::walk::{Control, WalkBuilder};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("f"), b"12345")?;
    /// WalkBuilder::new(dir.path()).min_depth(1).build().visit(|item| {
    ///     let e = item.unwrap();
    ///     let m = e.metadata(StatMask::SIZE | StatMask::MODE).unwrap();
    ///     let known = e.with_metadata(StatMask::SIZE | StatMask::MODE, m);
    ///     std::fs::remove_file(e.path()).unwrap();
    ///     // Answered from what was fetched: the file is gone.
    ///     assert_eq!(known.metadata(StatMask::SIZE).unwrap().size, 5);
    ///     assert!(e.metadata(StatMask::SIZE).is_err());
    ///     Control::Continue
    /// });
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_metadata(self, mask: StatMask, meta: Metadata) -> Entry<'a> {
        Entry {
            known: Some((mask, meta)),
            ..self
        }
    }

    /// An owned copy of the entry.
    pub fn to_owned(&self) -> DirEntry {
        DirEntry {
            path: self.path(),
            depth: self.depth,
            file_type: self.file_type,
            followed_link: self.followed_link,
            ino: self.ino,
        }
    }
}

/// An owned entry, as the `Iterator` of a [`Walk`] yields it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    path: PathBuf,
    depth: usize,
    file_type: FileType,
    followed_link: bool,
    ino: u64,
}

impl DirEntry {
    /// The full path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the path out of the entry.
    pub fn into_path(self) -> PathBuf {
        self.path
    }

    /// The depth below the root (0 for the root).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The type (for a followed link, its target's).
    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// Whether the entry is a directory (or a followed link to one).
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Dir
    }

    /// Whether the entry is a symbolic link, followed by the walk or not (a root given
    /// as a link, which the walk always follows, too), as walkdir's says: its path then
    /// names the link.
    pub fn path_is_symlink(&self) -> bool {
        self.followed_link || self.file_type == FileType::Symlink
    }

    /// The inode number the directory entry gave (0 for a root).
    pub fn ino(&self) -> u64 {
        self.ino
    }
}

/// Appends `parent`, a `/` unless `parent` is empty or ends with one, and `name`: how
/// every path of a walk is made from its directory's.
pub(crate) fn push_joined(out: &mut Vec<u8>, parent: &[u8], name: &[u8]) {
    out.extend_from_slice(parent);
    if !parent.is_empty() && !ends_with_sep(parent) {
        out.push(sep(parent));
    }
    out.extend_from_slice(name);
}

/// Whether a name is appended to the directory path `path` as it is, with no separator
/// between: when `path` ends with `/`; on Windows also with `\`, or is a drive-relative
/// `X:` (whose entries are `X:name`: `X:/name` would be at the drive's root).
pub(crate) fn ends_with_sep(path: &[u8]) -> bool {
    #[cfg(windows)]
    if path.ends_with(b"\\") || matches!(path, [d, b':'] if d.is_ascii_alphabetic()) {
        return true;
    }
    path.ends_with(b"/")
}

/// The separator put between a directory's path and a name: `/`; on Windows `\` below
/// a verbatim root (`\\?\...`), where the system takes `/` as part of a name.
pub(crate) fn sep(path: &[u8]) -> u8 {
    #[cfg(windows)]
    if path.starts_with(br"\\?\") {
        return b'\\';
    }
    let _ = path;
    b'/'
}

/// `parent` joined with `name` (see [`push_joined`]).
pub(crate) fn join(parent: &[u8], name: &[u8]) -> PathBuf {
    let mut v = Vec::with_capacity(parent.len() + name.len() + 1);
    push_joined(&mut v, parent, name);
    bytes_to_path(v)
}

/// Path bytes as a `PathBuf`, exactly (see [`crate::sys::bytes_to_os`]).
pub(crate) fn bytes_to_path(v: Vec<u8>) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(v))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(crate::sys::bytes_to_os(&v))
    }
}

/// A path's bytes, exactly (see [`crate::sys::os_to_bytes`]).
pub(crate) fn path_to_bytes(p: &Path) -> Vec<u8> {
    crate::sys::os_to_bytes(p.as_os_str())
}

// These tests build trees with Unix calls (symlink, modes, fifos, rustix); the
// Windows backend has its own in sys/windows_tests.rs.
#[cfg(all(test, unix))]
mod event_tests;
#[cfg(all(test, unix))]
mod tests;
