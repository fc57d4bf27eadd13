//! Disk usage: the totals of whole trees (allocated bytes, apparent bytes, entries),
//! kept per directory down to a depth, as `du` counts them.
//!
//! One walk per root on the parallel walker ([`crate::walk::ParallelWalk`]), with
//! events: each directory's state holds its totals; each non-directory entry is asked
//! one `statx`, relative to its directory's handle, for its type, size, blocks, link
//! count and inode only; each directory's own blocks come from the handle the walk
//! opened anyway; a directory's totals are folded into its parent's when it is left.
//! Directories deeper than [`UsageOptions::max_depth`] are folded into their ancestors
//! and not kept, so memory follows the kept depth, not the tree's size.
//!
//! Hard links are counted once per (device, inode), across all the roots of a run,
//! as `du` does: only entries with more than one link are remembered (every entry when
//! several roots are given or links are followed, where one file may be met twice),
//! unless [`UsageOptions::count_links`] says to count every link.
//!
//! ```
//! use ftw::usage::{UsageOptions, disk_usage};
//!
//! let tmp = tempfile::tempdir()?;
//! std::fs::create_dir(tmp.path().join("a"))?;
//! std::fs::write(tmp.path().join("a/f"), vec![1u8; 10_000])?;
//! std::fs::hard_link(tmp.path().join("a/f"), tmp.path().join("g"))?;
//! let usage = disk_usage(&[tmp.path()], &UsageOptions::new().max_depth(1));
//! let root = &usage.roots[0];
//! // The file's 10,000 bytes are counted once, though it has two names.
//! assert_eq!(root.total.apparent, 10_000);
//! assert_eq!(root.total.inodes, 3); // the root, a, and the file
//! assert_eq!(root.children.len(), 1); // a (files are kept only when asked)
//! assert_eq!(usage.errors, 0);
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::sys::{self, FileType, Metadata, StatMask};
use crate::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

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
struct AtomicTotals {
    bytes: AtomicU64,
    apparent: AtomicU64,
    inodes: AtomicU64,
    /// Bit 0: bytes wrapped; 1: apparent; 2: inodes.
    wrapped: std::sync::atomic::AtomicU8,
}

impl AtomicTotals {
    fn add(&self, t: Totals) {
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

    fn into_inner(self) -> Totals {
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
    entries: AtomicU64,
    bytes: AtomicU64,
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

/// A test of a path (as the walk built it from its root) for exclusion.
type PathTest = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;
/// Where kept entries go when they are streamed ([`UsageOptions::stream`]).
type ListSink = Arc<dyn Fn(&Listed<'_>) -> bool + Send + Sync>;

/// An entry complete, as [`UsageOptions::stream`] tells it: everything below it was
/// counted.
#[derive(Clone, Copy, Debug)]
pub struct Listed<'a> {
    /// Its path, as the walk built it from its root (a root as given, but with one
    /// trailing slash at most).
    pub path: &'a [u8],
    /// Its depth below its root.
    pub depth: usize,
    /// Its type.
    pub file_type: FileType,
    /// Everything at and below it.
    pub total: Totals,
    /// The directory itself and its files, without its subdirectories (`du -S`).
    pub own: Totals,
}
/// What is told of each error.
type ErrorSink = Arc<dyn Fn(&Error) + Send + Sync>;

/// How [`disk_usage`] counts and what it keeps.
///
/// ```
/// use ftw::usage::UsageOptions;
///
/// let opts = UsageOptions::new()
///     .max_depth(2)              // keep the top two levels below each root
///     .keep_files(true)          // and their files
///     .same_file_system(true)    // du -x
///     .threads(2);
/// # let _ = opts;
/// ```
#[derive(Clone)]
pub struct UsageOptions {
    max_depth: usize,
    count_links: bool,
    same_file_system: bool,
    follow_links: bool,
    keep_files: bool,
    largest: usize,
    threads: usize,
    exclude: Option<PathTest>,
    ignore: Option<Arc<crate::filter::Ignore>>,
    on_error: Option<ErrorSink>,
    progress: Option<Arc<UsageProgress>>,
    stream: Option<ListSink>,
}

impl Default for UsageOptions {
    fn default() -> Self {
        UsageOptions::new()
    }
}

impl UsageOptions {
    /// Every level kept, hard links counted once, links not followed, file systems
    /// crossed, no file kept, threads as the walker chooses.
    pub fn new() -> UsageOptions {
        UsageOptions {
            max_depth: usize::MAX,
            count_links: false,
            same_file_system: false,
            follow_links: false,
            keep_files: false,
            largest: usize::MAX,
            threads: 0,
            exclude: None,
            ignore: None,
            on_error: None,
            progress: None,
            stream: None,
        }
    }

    /// Keep the nodes at most `depth` levels below each root (0: the roots alone, as
    /// `du -s`); deeper levels are counted into their ancestors only.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Count every hard link of a file (`du -l`), not the first one met alone.
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::write(tmp.path().join("f"), vec![1u8; 100])?;
    /// std::fs::hard_link(tmp.path().join("f"), tmp.path().join("g"))?;
    /// let once = disk_usage(&[tmp.path()], &UsageOptions::new());
    /// let every = disk_usage(&[tmp.path()], &UsageOptions::new().count_links(true));
    /// assert_eq!((once.total.apparent, every.total.apparent), (100, 200));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn count_links(mut self, yes: bool) -> Self {
        self.count_links = yes;
        self
    }

    /// Count nothing on another file system than its root's (`du -x`): mount points
    /// are neither entered nor counted.
    pub fn same_file_system(mut self, yes: bool) -> Self {
        self.same_file_system = yes;
        self
    }

    /// Follow symbolic links (`du -L`): each link counts as what it leads to, a
    /// dangling link is an error, and every file is counted once however it is reached.
    /// Without it, a link counts as itself, and so does a root that is a link (unless
    /// written with a trailing slash, which the system resolves).
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::write(tmp.path().join("f"), vec![1u8; 100])?;
    /// std::os::unix::fs::symlink("f", tmp.path().join("link"))?;
    /// let link = tmp.path().join("link");
    /// let itself = disk_usage(&[&link], &UsageOptions::new());
    /// let target = disk_usage(&[&link], &UsageOptions::new().follow_links(true));
    /// assert_eq!((itself.total.apparent, target.total.apparent), (1, 100));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn follow_links(mut self, yes: bool) -> Self {
        self.follow_links = yes;
        self
    }

    /// Keep the files too, not only the directories (down to the kept depth): for
    /// `du -a` or an export. Off by default.
    pub fn keep_files(mut self, yes: bool) -> Self {
        self.keep_files = yes;
        self
    }

    /// Below each directory, keep only its `n` largest descendants (by allocated
    /// bytes, a directory before its contents on ties): enough to show the `n` largest
    /// entries of the whole tree, which are among them, in memory bounded by `n` for
    /// each directory being walked rather than by the tree's size.
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// for (name, len) in [("small", 10u64), ("big", 100_000), ("mid", 20_000)] {
    ///     std::fs::write(tmp.path().join(name), vec![1u8; len as usize])?;
    /// }
    /// let opts = UsageOptions::new().keep_files(true).keep_largest(1);
    /// let root = &disk_usage(&[tmp.path()], &opts).roots[0];
    /// assert_eq!(root.children.len(), 1);
    /// assert_eq!(root.children[0].name, b"big");
    /// assert_eq!(root.total.apparent, 120_010); // everything is still counted
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn keep_largest(mut self, n: usize) -> Self {
        self.largest = n;
        self
    }

    /// Worker threads (see [`WalkBuilder::threads`]). With 1, the walk is serial and
    /// in du's order: depth first, each directory's entries in the order the system
    /// reads them, a subdirectory walked where it is met; so a file with links in
    /// several directories is counted where du counts it, and the kept children are in
    /// that order. With several, in the order workers reach them.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// Leave out what `ignore`'s rules ignore (ignore files with git's semantics,
    /// hidden names): an ignored directory is not opened, and counts nothing.
    ///
    /// ```
    /// use ftw::filter::{Ignore, IgnoreOptions};
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::write(tmp.path().join(".ignore"), "*.bin\n")?;
    /// std::fs::write(tmp.path().join("big.bin"), vec![0u8; 50_000])?;
    /// let opts = ftw::UsageOptions::new().ignore(Ignore::new(IgnoreOptions::default()));
    /// let du = ftw::disk_usage(&[tmp.path()], &opts);
    /// assert!(du.total.apparent < 50_000);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn ignore(mut self, rules: crate::filter::Ignore) -> Self {
        self.ignore = Some(Arc::new(rules));
        self
    }

    /// Neither count nor enter an entry whose path (as built from its root) `test`
    /// says `true` for; roots are tested too.
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("target"))?;
    /// std::fs::write(tmp.path().join("target/big"), vec![1u8; 100_000])?;
    /// std::fs::write(tmp.path().join("main.rs"), vec![1u8; 100])?;
    /// let opts = UsageOptions::new().exclude(|path: &[u8]| path.ends_with(b"/target"));
    /// assert_eq!(disk_usage(&[tmp.path()], &opts).total.apparent, 100);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn exclude<F>(mut self, test: F) -> Self
    where
        F: Fn(&[u8]) -> bool + Send + Sync + 'static,
    {
        self.exclude = Some(Arc::new(test));
        self
    }

    /// Tell each error to `sink` (called from any worker) as it happens. The run goes
    /// on; [`DiskUsage::errors`] counts them.
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let told = Arc::new(Mutex::new(Vec::new()));
    /// let sink = told.clone();
    /// let opts = UsageOptions::new().on_error(move |e| sink.lock().unwrap().push(e.path().to_owned()));
    /// let usage = disk_usage(&["/nonexistent/ftw-doc"], &opts);
    /// assert_eq!(usage.errors, 1);
    /// assert!(usage.roots.is_empty());
    /// assert_eq!(told.lock().unwrap()[0], std::path::Path::new("/nonexistent/ftw-doc"));
    /// ```
    pub fn on_error<F>(mut self, sink: F) -> Self
    where
        F: Fn(&Error) + Send + Sync + 'static,
    {
        self.on_error = Some(Arc::new(sink));
        self
    }

    /// Tell each entry that would be kept to `sink` as soon as it is complete, instead of
    /// keeping it: a directory after everything below it (the order du prints in), from
    /// any worker, one call at a time for each worker. Memory then stays bounded
    /// whatever the kept depth; the roots are still in the result, without their
    /// children. When `sink` returns `false` the walk stops (its reader went away).
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("a/b"))?;
    /// let lines = Arc::new(Mutex::new(Vec::new()));
    /// let out = lines.clone();
    /// let opts = UsageOptions::new().threads(1).stream(move |l| {
    ///     out.lock().unwrap().push((l.depth, l.total.inodes));
    ///     true
    /// });
    /// let usage = disk_usage(&[tmp.path()], &opts);
    /// // a/b, then a, then the root: each after its contents.
    /// assert_eq!(*lines.lock().unwrap(), vec![(2, 1), (1, 2), (0, 3)]);
    /// assert!(usage.roots[0].children.is_empty());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn stream<F>(mut self, sink: F) -> Self
    where
        F: Fn(&Listed<'_>) -> bool + Send + Sync + 'static,
    {
        self.stream = Some(Arc::new(sink));
        self
    }

    /// Add to these counters while counting (see [`UsageProgress`]).
    pub fn progress(mut self, counters: Arc<UsageProgress>) -> Self {
        self.progress = Some(counters);
        self
    }
}

/// A file or directory kept in the result. Dropped without recursion, however deep.
///
/// ```
/// use ftw::usage::{UsageOptions, disk_usage};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("a/b"))?;
/// std::fs::write(tmp.path().join("a/b/f"), vec![1u8; 100])?;
/// let root = &disk_usage(&[tmp.path()], &UsageOptions::new()).roots[0];
/// let a = &root.children[0];
/// assert_eq!((a.name.as_slice(), a.is_dir()), (&b"a"[..], true));
/// assert_eq!(a.total.inodes, 3); // a, b and f
/// assert_eq!(a.own.inodes, 1); // a alone: b is a subdirectory (du -S)
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageNode {
    /// Its name in its directory; for a root, its path as given.
    pub name: Vec<u8>,
    /// Its type ([`FileType::Dir`] for a directory).
    pub file_type: FileType,
    /// Everything at and below it, counted once.
    pub total: Totals,
    /// The directory itself and its non-directory entries, without its subdirectories
    /// (`du -S`); for a file, its total.
    pub own: Totals,
    /// Its own `st_size`.
    pub size: u64,
    /// Its device.
    pub dev: u64,
    /// Its inode number.
    pub ino: u64,
    /// Its link count.
    pub nlink: u64,
    /// The entries kept below it: in the walk's order with one thread (files as met,
    /// a directory once left, which a serial walk does before going on), else as the
    /// workers happened to finish them.
    pub children: Vec<UsageNode>,
}

impl Drop for UsageNode {
    fn drop(&mut self) {
        let mut below = std::mem::take(&mut self.children);
        while let Some(mut c) = below.pop() {
            below.append(&mut c.children);
        }
    }
}

impl UsageNode {
    fn file(name: Vec<u8>, m: &Metadata) -> UsageNode {
        let t = Totals::of(m);
        UsageNode {
            name,
            file_type: m.file_type(),
            total: t,
            own: t,
            size: m.size,
            dev: m.dev,
            ino: m.ino,
            nlink: m.nlink,
            children: Vec::new(),
        }
    }

    /// Whether this is a directory.
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Dir
    }
}

/// What [`disk_usage`] found: it goes on past an error, so check
/// [`DiskUsage::errors`] (each error is told to [`UsageOptions::on_error`]; none is
/// kept here).
///
/// ```
/// use ftw::usage::{UsageOptions, disk_usage};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("a"))?;
/// std::fs::write(tmp.path().join("a/f"), vec![1u8; 100])?;
/// std::fs::hard_link(tmp.path().join("a/f"), tmp.path().join("g"))?;
/// // g is a/f: counted under a, not again as a root (as du -c does).
/// let usage = disk_usage(&[tmp.path().join("a"), tmp.path().join("g")], &UsageOptions::new());
/// assert_eq!(usage.roots.len(), 1);
/// assert_eq!(usage.total.apparent, 100);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "some of the tree may not have been counted: see its `errors`"]
pub struct DiskUsage {
    /// One node a root, in the order given; a root that could not be read at all, or
    /// that was met already (given twice, or inside an earlier root), has none.
    pub roots: Vec<UsageNode>,
    /// The roots' totals added up (`du -c`).
    pub total: Totals,
    /// Errors met (each told to [`UsageOptions::on_error`]): when not 0, the totals
    /// miss what could not be read.
    pub errors: u64,
}

/// A hasher for (device, inode) pairs: a multiply and a rotation per word, not SipHash
/// (the keys come from the file system, not from an adversary choosing collisions
/// through a network).
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

type IdSet = HashSet<(u64, u64), std::hash::BuildHasherDefault<IdHasher>>;

/// The (device, inode) pairs counted, in shards so that workers rarely wait, with a
/// bitmap in front: a pair whose bit is clear was never counted, which an atomic load
/// tells without taking a lock (most files of most trees have one link, never enter
/// the set, and so are looked up for nothing but a bit).
struct Seen {
    shards: Vec<Mutex<IdSet>>,
    bits: Vec<AtomicU64>,
}

/// Bits in [`Seen::bits`] (128 KiB).
const SEEN_BITS: u64 = 1 << 20;

impl Seen {
    fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(IdSet::default())).collect(),
            bits: (0..SEEN_BITS / 64).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn hash(dev: u64, ino: u64) -> u64 {
        (ino ^ dev.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    fn shard(&self, h: u64) -> std::sync::MutexGuard<'_, IdSet> {
        self.shards[(h >> 58) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The word and bit of a hash in the bitmap.
    fn bit(&self, h: u64) -> (&AtomicU64, u64) {
        let i = (h >> 20) % SEEN_BITS;
        (&self.bits[(i / 64) as usize], 1 << (i % 64))
    }

    /// Records a file; `false` if it was counted already.
    fn insert(&self, dev: u64, ino: u64) -> bool {
        let h = Seen::hash(dev, ino);
        let (word, bit) = self.bit(h);
        if word.load(Relaxed) & bit == 0 {
            word.fetch_or(bit, Relaxed);
        }
        self.shard(h).insert((dev, ino))
    }

    /// Whether a file was counted already. (Its bit is set before it enters the set:
    /// a look at the moment between finds it absent, and the caller then asks the
    /// system and [`Seen::insert`], which answers right.)
    fn contains(&self, dev: u64, ino: u64) -> bool {
        let h = Seen::hash(dev, ino);
        let (word, bit) = self.bit(h);
        word.load(Relaxed) & bit != 0 && self.shard(h).contains(&(dev, ino))
    }
}

/// What the workers of one run share.
struct Run<'a> {
    opts: &'a UsageOptions,
    seen: Seen,
    /// Remember every file, not only those with several links.
    hash_all: bool,
    errors: AtomicU64,
    /// The root's node, once it is left.
    result: Mutex<Option<UsageNode>>,
    /// The stream's reader went away.
    stopped: std::sync::atomic::AtomicBool,
}

impl Run<'_> {
    fn error(&self, e: &Error) {
        self.errors.fetch_add(1, Relaxed);
        if let Some(sink) = &self.opts.on_error {
            sink(e);
        }
    }

    /// Whether a file of metadata `m` is to be counted now (not met before).
    fn first_time(&self, m: &Metadata) -> bool {
        self.opts.count_links
            || !(self.hash_all || (m.nlink > 1 && !m.file_type().is_dir()))
            || self.seen.insert(m.dev, m.ino)
    }

    fn excluded(&self, path: &[u8]) -> bool {
        self.opts.exclude.as_ref().is_some_and(|ex| ex(path))
    }

    /// Tells a complete entry to the stream, if there is one; `false` when there is none
    /// (the caller keeps the entry) or its reader went away.
    fn tell(&self, listed: &Listed<'_>) -> bool {
        match &self.opts.stream {
            Some(sink) => {
                if !self.stopped.load(Relaxed) && !sink(listed) {
                    self.stopped.store(true, Relaxed);
                }
                true
            }
            None => false,
        }
    }
}

/// A directory being counted.
struct DirState {
    depth: usize,
    /// The directory itself and its non-directory entries.
    own: AtomicTotals,
    /// Its subdirectories, folded in as they are left.
    sub: AtomicTotals,
    /// Its entries kept, as they come.
    children: Mutex<Vec<UsageNode>>,
    meta: Metadata,
    /// The ignore rules here, with [`UsageOptions::ignore`].
    rules: Option<Arc<crate::filter::Rules>>,
}

/// Each worker's visitor.
struct Counter<'a> {
    run: &'a Run<'a>,
    root_dev: u64,
    /// The root's device, where its directory entries' inode numbers are those `stat`
    /// gives ([`crate::sys::Dir::entry_inodes_exact`]): a file found there by its entry's
    /// inode among those counted is a further link to one counted, and needs no `statx`.
    exact_dev: Option<u64>,
    path: Vec<u8>,
    /// Counted and not yet added to the shared progress counters.
    entries: u64,
    bytes: u64,
}

const ASK: StatMask = StatMask::SIZE
    .union(StatMask::BLOCKS)
    .union(StatMask::NLINK)
    .union(StatMask::ID);

impl Counter<'_> {
    /// One more entry looked at (counted or not).
    fn tick(&mut self) {
        self.entries += 1;
        if self.entries >= 4096 {
            self.flush();
        }
    }

    fn counted(&mut self, t: Totals) {
        self.bytes = self.bytes.saturating_add(t.bytes);
    }

    fn flush(&mut self) {
        if let Some(p) = &self.run.opts.progress {
            p.entries.fetch_add(self.entries, Relaxed);
            p.bytes.fetch_add(self.bytes, Relaxed);
        }
        self.entries = 0;
        self.bytes = 0;
    }

    fn stat(&self, e: &Entry<'_>, mask: StatMask) -> std::io::Result<Metadata> {
        let follow = self.run.opts.follow_links;
        match (e.dir(), e.c_name()) {
            (Some(dir), Some(name)) => dir.stat_at(name, mask, follow),
            _ => sys::stat_path(&e.path(), mask, follow),
        }
    }

    /// Adds a file (not a directory) of metadata `m`, counted for the first time, to its
    /// directory and keeps or streams it.
    fn count_file(&mut self, e: &Entry<'_>, state: &DirState, m: &Metadata) -> Control {
        let t = Totals::of(m);
        state.own.add(t);
        self.counted(t);
        if self.keep(e.depth()) && self.run.opts.stream.is_some() {
            self.path.clear();
            e.write_path(&mut self.path);
            self.run.tell(&Listed {
                path: &self.path,
                depth: e.depth(),
                file_type: m.file_type(),
                total: t,
                own: t,
            });
        } else if self.keep(e.depth()) {
            let node = UsageNode::file(e.name().to_vec(), m);
            state
                .children
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node);
        }
        Control::Continue
    }

    fn keep(&self, depth: usize) -> bool {
        depth <= self.run.opts.max_depth && self.run.opts.keep_files
    }

    /// A directory that the walk could not open: `du` counts its own size all the same.
    fn unreadable(&mut self, err: &Error, parent: &DirState) {
        let opts = self.run.opts;
        let Ok(m) = sys::stat_path(err.path(), ASK, opts.follow_links) else {
            return;
        };
        if !m.file_type().is_dir() || (opts.same_file_system && m.dev != self.root_dev) {
            return;
        }
        let t = Totals::of(&m);
        parent.sub.add(t);
        self.counted(t);
        let told = err.depth() <= opts.max_depth
            && self.run.tell(&Listed {
                path: &crate::walk::path_to_bytes(err.path()),
                depth: err.depth(),
                file_type: FileType::Dir,
                total: t,
                own: t,
            });
        if err.depth() <= opts.max_depth && !told {
            let name = err
                .path()
                .file_name()
                .map_or_else(Vec::new, |n| crate::walk::path_to_bytes(Path::new(n)));
            let node = UsageNode::file(name, &m);
            parent
                .children
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node);
        }
    }
}

impl Drop for Counter<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Visitor for Counter<'_> {
    type State = DirState;

    /// Each entry is asked for its size relative to its directory's handle.
    fn wants_handles(&self) -> bool {
        true
    }

    fn enter(&mut self, d: &DirEvent<'_>, parent: Option<&DirState>) -> DirState {
        let rules = self.run.opts.ignore.as_ref().map(|ig| {
            let run = self.run;
            ig.enter(d, parent.and_then(|p| p.rules.as_ref()), &mut |e| {
                run.error(&Error::io(
                    e.path,
                    d.depth(),
                    std::io::Error::other(e.reason),
                ))
            })
        });
        let m = match d.dir() {
            Some(dir) => dir.stat(ASK),
            None => sys::stat_path(&d.to_path_buf(), ASK, true),
        };
        let m = m.unwrap_or_else(|e| {
            self.run.error(&Error::io(d.to_path_buf(), d.depth(), e));
            Metadata::default()
        });
        let t = Totals::of(&m);
        self.counted(t);
        if d.depth() == 0 {
            self.tick();
        }
        let own = AtomicTotals::default();
        own.add(Totals { inodes: 1, ..t });
        DirState {
            depth: d.depth(),
            own,
            sub: AtomicTotals::default(),
            children: Mutex::new(Vec::new()),
            meta: m,
            rules,
        }
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&DirState>) -> Control {
        let e = match item {
            Ok(e) => e,
            Err(err) => {
                // A link back to a directory being walked: du -L passes it silently
                // (the directory is counted already).
                if err.loop_ancestor().is_some() {
                    return Control::Continue;
                }
                self.run.error(&err);
                if let Some(parent) = dir.filter(|p| err.depth() == p.depth + 1) {
                    self.unreadable(&err, parent);
                }
                return Control::Continue;
            }
        };
        // A root is counted when entered (or before the walk, if not a directory).
        let Some(state) = dir else {
            return Control::Continue;
        };
        if self.run.stopped.load(Relaxed) {
            return Control::Stop;
        }
        self.tick();
        let opts = self.run.opts;
        if let (Some(ig), Some(rules)) = (&opts.ignore, &state.rules) {
            if ig.is_ignored(rules, e, &mut self.path) {
                return Control::Skip;
            }
        }
        if opts.exclude.is_some() {
            self.path.clear();
            e.write_path(&mut self.path);
            if self.run.excluded(&self.path) {
                return Control::Skip;
            }
        }
        let is_dir = e.is_dir();
        if is_dir && !self.run.hash_all && !opts.same_file_system {
            // Counted when entered, from its own handle.
            return Control::Continue;
        }
        // A further link to a file counted already, known from its directory entry: no
        // call needed (most of the cost of a tree of hard-linked copies).
        if !is_dir
            && self.exact_dev == Some(state.meta.dev)
            && self.run.seen.contains(state.meta.dev, e.ino())
        {
            return Control::Continue;
        }
        // Where the listing told a file's size, allocation and id (Windows), no call:
        // the file is on its directory's volume. Its link count is not told, so every
        // such file is counted once by its id (each id kept in memory, as `-l` would
        // not).
        let listed = e.listed_metadata().filter(|_| !is_dir && !e.followed_link);
        if let Some(m) = listed {
            let m = Metadata {
                dev: state.meta.dev,
                ..m
            };
            if !opts.count_links && !self.run.seen.insert(m.dev, m.ino) {
                return Control::Skip;
            }
            return self.count_file(e, state, &m);
        }
        let mask = if is_dir { StatMask::ID } else { ASK };
        let m = match self.stat(e, mask) {
            Ok(m) => m,
            Err(err) => {
                self.run.error(&Error::io(e.path(), e.depth(), err));
                return Control::Skip;
            }
        };
        if opts.same_file_system && m.dev != self.root_dev {
            return Control::Skip;
        }
        if !self.run.first_time(&m) {
            return Control::Skip;
        }
        if is_dir || m.file_type().is_dir() {
            return Control::Continue;
        }
        self.count_file(e, state, &m)
    }

    fn leave(&mut self, d: &DirEvent<'_>, state: DirState, parent: Option<&DirState>) {
        let DirState {
            depth,
            own,
            sub,
            children,
            meta,
            ..
        } = state;
        let own = own.into_inner();
        let total = own + sub.into_inner();
        if let Some(p) = parent {
            p.sub.add(total);
        }
        if depth > self.run.opts.max_depth {
            return;
        }
        let told = self.run.tell(&Listed {
            path: d.path(),
            depth,
            file_type: FileType::Dir,
            total,
            own,
        });
        if told && parent.is_some() {
            return;
        }
        let mut children = children.into_inner().unwrap_or_else(|e| e.into_inner());
        if self.run.opts.largest != usize::MAX {
            keep_largest(&mut children, self.run.opts.largest);
        }
        let name = match d.c_name() {
            Some(n) if depth > 0 => n.to_bytes().to_vec(),
            _ => d.path().to_vec(),
        };
        let node = UsageNode {
            name,
            file_type: FileType::Dir,
            total,
            own,
            size: meta.size,
            dev: meta.dev,
            ino: meta.ino,
            nlink: meta.nlink,
            children,
        };
        match parent {
            Some(p) => p
                .children
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node),
            None => *self.run.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(node),
        }
    }
}

/// Keeps the `n` largest nodes of the trees `children` (and, as they are no larger,
/// their ancestors come first on ties): level by level, so that a node is looked at
/// after its parent, without recursion.
fn keep_largest(children: &mut Vec<UsageNode>, n: usize) {
    let mut sizes = Vec::new();
    let mut stack: Vec<&UsageNode> = children.iter().collect();
    while let Some(c) = stack.pop() {
        sizes.push(c.total.bytes);
        stack.extend(c.children.iter());
    }
    if sizes.len() <= n {
        return;
    }
    if n == 0 {
        children.clear();
        return;
    }
    let (_, &mut cut, _) = sizes.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
    let mut ties = n - sizes.iter().filter(|&&s| s > cut).count();
    let mut queue = std::collections::VecDeque::from([children]);
    while let Some(v) = queue.pop_front() {
        v.retain(|c| {
            c.total.bytes > cut
                || (c.total.bytes == cut && ties > 0 && {
                    ties -= 1;
                    true
                })
        });
        for c in v {
            queue.push_back(&mut c.children);
        }
    }
}

/// The size of the tree at `path` in bytes, as `du -sb` gives it: the apparent sizes
/// (`st_size`) of the files and symbolic links in it, each file counted once however
/// many hard links it has in the tree; directories and other files add 0; links are
/// not followed, so a `path` that is a link counts as the link (name it with a trailing
/// slash to count what it leads to), and a `path` that is a file gives its size. This is
/// what the files hold, not what they take on disk: for that (`du -s`, allocated blocks,
/// with sparse files and file system overhead) use [`disk_usage`] and
/// [`Totals::bytes`]. Counted in parallel, one `statx` per entry.
///
/// # Errors
///
/// If some of the tree could not be read (a directory without permission, `path`
/// missing), an error of the first one's kind whose message names its path and says how
/// many there were (its inner error is a [`TreeError`](crate::TreeError): see
/// [`std::io::Error::get_ref`]). No partial size is given: for that, use
/// [`disk_usage`], which counts what it can and the errors.
///
/// ```
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir(tmp.path().join("a"))?;
/// std::fs::write(tmp.path().join("a/f"), vec![1u8; 1000])?;
/// std::fs::hard_link(tmp.path().join("a/f"), tmp.path().join("g"))?; // counted once
/// std::fs::write(tmp.path().join("h"), vec![1u8; 234])?;
/// assert_eq!(ftw::dir_size(tmp.path())?, 1234);
///
/// let err = ftw::dir_size(tmp.path().join("missing")).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn dir_size<P: AsRef<Path>>(path: P) -> std::io::Result<u64> {
    let first: Arc<Mutex<Option<Error>>> = Arc::default();
    let sink = first.clone();
    let opts = UsageOptions::new().max_depth(0).on_error(move |e| {
        let mut first = sink.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(crate::tree_error::copy_error(e));
        }
    });
    let usage = disk_usage(&[path], &opts);
    if usage.errors > 0 {
        let first = first.lock().unwrap_or_else(|e| e.into_inner()).take();
        return Err(crate::TreeError::new(first, usage.errors).into());
    }
    Ok(usage.total.apparent)
}

/// Counts the disk usage of each of `roots`, in order, with hard links counted once
/// across all of them (see the [module](self)).
///
/// A root that is not a directory is counted as a single file; a root that is a
/// symbolic link counts as the link unless links are followed (or it is written with a
/// trailing slash). A directory that cannot be read counts its own size, and an error.
///
/// ```
/// use ftw::usage::{UsageOptions, disk_usage};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("a/b"))?;
/// std::fs::write(tmp.path().join("a/b/deep"), vec![0u8; 5000])?;
/// std::fs::write(tmp.path().join("top"), b"hello")?;
/// let opts = UsageOptions::new().max_depth(1).keep_files(true);
/// let usage = disk_usage(&[tmp.path()], &opts);
/// let root = &usage.roots[0];
/// assert_eq!(root.total.apparent, 5005);
/// let mut names: Vec<_> = root.children.iter().map(|c| c.name.clone()).collect();
/// names.sort();
/// assert_eq!(names, vec![b"a".to_vec(), b"top".to_vec()]);
/// // a/b is below the kept depth: folded into a, not kept.
/// let a = root.children.iter().find(|c| c.name == b"a").unwrap();
/// assert!(a.children.is_empty());
/// assert_eq!(a.total.apparent, 5000);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn disk_usage<P: AsRef<Path>>(roots: &[P], options: &UsageOptions) -> DiskUsage {
    let run = Run {
        opts: options,
        seen: Seen::new(),
        hash_all: roots.len() > 1 || options.follow_links,
        errors: AtomicU64::new(0),
        result: Mutex::new(None),
        stopped: std::sync::atomic::AtomicBool::new(false),
    };
    let mut usage = DiskUsage::default();
    for root in roots {
        if run.stopped.load(Relaxed) {
            break;
        }
        // Trailing slashes cut down to one, as du writes the root (`dir//` is `dir/`,
        // and its entries `dir/name`).
        let mut name = crate::walk::path_to_bytes(root.as_ref());
        while name.len() > 1 && name.ends_with(b"//") {
            name.pop();
        }
        let root_buf = crate::walk::bytes_to_path(name.clone());
        let root = root_buf.as_path();
        if run.excluded(&name) {
            continue;
        }
        let m = match sys::stat_path(root, ASK, options.follow_links) {
            Ok(m) => m,
            Err(e) => {
                run.error(&Error::io(root.to_path_buf(), 0, e));
                continue;
            }
        };
        if !run.first_time(&m) {
            continue;
        }
        if !m.file_type().is_dir() {
            let node = UsageNode::file(name, &m);
            run.tell(&Listed {
                path: &node.name,
                depth: 0,
                file_type: node.file_type,
                total: node.total,
                own: node.own,
            });
            if let Some(p) = &options.progress {
                p.entries.fetch_add(1, Relaxed);
                p.bytes.fetch_add(node.total.bytes, Relaxed);
            }
            usage.total += node.total;
            usage.roots.push(node);
            continue;
        }
        // Entries' inode numbers are trusted where the file system is known to give
        // st_ino there, links are not followed (a link's entry is the link's inode) and
        // each link is not counted anyway.
        let exact = !options.follow_links
            && !options.count_links
            && sys::Dir::open(root).is_ok_and(|d| d.entry_inodes_exact());
        let counter = || Counter {
            run: &run,
            root_dev: m.dev,
            exact_dev: exact.then_some(m.dev),
            path: Vec::new(),
            entries: 0,
            bytes: 0,
        };
        let walk = WalkBuilder::new(root)
            .follow_links(options.follow_links)
            .same_file_system(options.same_file_system);
        // With one thread, du's order: depth first, each directory's entries as read,
        // a subdirectory walked where it is met.
        let _ = walk.threads(options.threads).run(counter);
        let node = run
            .result
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            // Not entered (it could not be read): its own size, as du counts it.
            .unwrap_or_else(|| {
                let node = UsageNode::file(name, &m);
                run.tell(&Listed {
                    path: &node.name,
                    depth: 0,
                    file_type: node.file_type,
                    total: node.total,
                    own: node.own,
                });
                node
            });
        usage.total += node.total;
        usage.roots.push(node);
    }
    usage.errors = run.errors.into_inner();
    usage
}

// The tests build trees with symbolic links and count blocks as Unix does; the Windows
// backend's du is tested in sys/windows_tests.rs.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        std::fs::create_dir_all(r.join("a/b/c")).unwrap();
        std::fs::create_dir_all(r.join("d")).unwrap();
        std::fs::write(r.join("a/f"), vec![1u8; 3000]).unwrap();
        std::fs::write(r.join("a/b/c/g"), vec![1u8; 9000]).unwrap();
        std::fs::hard_link(r.join("a/f"), r.join("d/f2")).unwrap();
        std::fs::hard_link(r.join("a/f"), r.join("a/b/f3")).unwrap();
        std::os::unix::fs::symlink("a/f", r.join("link")).unwrap();
        std::fs::File::create(r.join("sparse"))
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        tmp
    }

    fn blocks(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).unwrap().blocks() * 512
    }

    #[test]
    fn usage_counts_hard_links_once_and_links_as_themselves() {
        let tmp = tree();
        let r = tmp.path();
        for threads in [1, 2, 0] {
            let u = disk_usage(&[r], &UsageOptions::new().threads(threads));
            let root = &u.roots[0];
            assert_eq!(u.errors, 0);
            // root, a, a/b, a/b/c, d, f (3 links), g, link, sparse
            assert_eq!(root.total.inodes, 9);
            assert_eq!(root.total.apparent, 3000 + 9000 + 3 + (1 << 30));
            let expect: u64 = [
                "", "a", "a/b", "a/b/c", "d", "a/f", "a/b/c/g", "link", "sparse",
            ]
            .iter()
            .map(|p| blocks(&r.join(p)))
            .sum();
            assert_eq!(root.total.bytes, expect);
            let l = disk_usage(&[r], &UsageOptions::new().count_links(true));
            assert_eq!(l.roots[0].total.inodes, 11);
            assert_eq!(l.roots[0].total.apparent, root.total.apparent + 6000);
        }
    }

    #[test]
    fn usage_keeps_the_asked_depth_and_folds_the_rest() {
        let tmp = tree();
        let r = tmp.path();
        let u = disk_usage(&[r], &UsageOptions::new().max_depth(0));
        assert!(u.roots[0].children.is_empty());
        let all = disk_usage(&[r], &UsageOptions::new());
        assert_eq!(u.roots[0].total, all.roots[0].total);
        let a = all.roots[0]
            .children
            .iter()
            .find(|c| c.name == b"a")
            .unwrap();
        let b = &a.children[0];
        assert_eq!(b.name, b"b");
        // -S: a's own is a itself and a/f, without b; but a/f has links in a/b and d,
        // and is counted where the walk meets it first (in a/b when a lists b before
        // f, in d when a worker gets there first): once, in a, b or d.
        let d = all.roots[0]
            .children
            .iter()
            .find(|c| c.name == b"d")
            .unwrap();
        assert_eq!(a.own.inodes + b.own.inodes + d.own.inodes, 3 + 1);
        assert_eq!(a.total.inodes, a.own.inodes + b.total.inodes);
        let files = disk_usage(
            &[r],
            &UsageOptions::new()
                .max_depth(1)
                .keep_files(true)
                .keep_largest(1),
        );
        assert_eq!(files.roots[0].children.len(), 1, "the largest entry alone");
        assert_eq!(files.roots[0].children[0].name, b"a");
    }

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

    #[test]
    fn usage_counts_a_file_once_across_roots() {
        let tmp = tree();
        let r = tmp.path();
        let u = disk_usage(
            &[r.join("a"), r.join("d"), r.join("a/b")],
            &UsageOptions::new(),
        );
        // d/f2 is a/f, met first under a; a/b was counted within a.
        assert_eq!(u.roots.len(), 2);
        assert_eq!(u.roots[1].total.inodes, 1);
        assert_eq!(u.total.inodes, u.roots[0].total.inodes + 1);
    }

    #[test]
    fn usage_roots_that_are_files_links_or_missing() {
        let tmp = tree();
        let r = tmp.path();
        let errors = Arc::new(AtomicU64::new(0));
        let seen = errors.clone();
        let opts = UsageOptions::new().on_error(move |_| {
            seen.fetch_add(1, Relaxed);
        });
        let u = disk_usage(&[r.join("link"), r.join("missing"), r.join("a/f")], &opts);
        assert_eq!(u.errors, 1);
        assert_eq!(errors.load(Relaxed), 1);
        assert_eq!(u.roots[0].file_type, FileType::Symlink);
        assert_eq!(u.roots[0].total.apparent, 3);
        assert_eq!(u.roots[1].total.apparent, 3000);
        let followed = disk_usage(&[r.join("link")], &UsageOptions::new().follow_links(true));
        assert_eq!(followed.roots[0].total.apparent, 3000);
    }

    #[test]
    fn usage_excludes_paths() {
        let tmp = tree();
        let r = tmp.path();
        let u = disk_usage(
            &[r],
            &UsageOptions::new().exclude(|p: &[u8]| p.ends_with(b"/a")),
        );
        // Without a: root, d, d/f2, link, sparse.
        assert_eq!(u.roots[0].total.inodes, 5);
    }

    #[test]
    fn usage_keeps_the_largest_files() {
        let mk = |name: &str, bytes: u64| UsageNode {
            name: name.as_bytes().to_vec(),
            file_type: FileType::File,
            total: Totals {
                bytes,
                apparent: 0,
                inodes: 1,
            },
            own: Totals::default(),
            size: 0,
            dev: 0,
            ino: 0,
            nlink: 1,
            children: Vec::new(),
        };
        let mut v = vec![mk("a", 1), mk("b", 5), mk("c", 5), mk("d", 9), mk("e", 2)];
        let mut dir = mk("x", 5);
        dir.file_type = FileType::Dir;
        dir.children = vec![mk("y", 5), mk("z", 1)];
        v.push(dir);
        keep_largest(&mut v, 3);
        let names: Vec<_> = v.iter().map(|c| c.name.clone()).collect();
        // d (9), then two of the 5s: b and c come before x, whose child y never fits.
        assert_eq!(names, vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
        let mut deep = mk("top", 7);
        let mut cur = &mut deep;
        for i in 0..200_000 {
            cur.children.push(mk(&i.to_string(), 7));
            cur = &mut cur.children[0];
        }
        let mut v = vec![deep];
        keep_largest(&mut v, 2);
        assert_eq!(
            v[0].children[0].children.len(),
            0,
            "a chain cut at 2, without recursion"
        );
    }
}
