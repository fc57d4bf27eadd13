//! What a count is asked to do: [`UsageOptions`], and what it tells as it goes
//! ([`Listed`]).

#[cfg(doc)]
use super::UsageNode;
use super::{Stamp, TimeOf, Totals, UsageProgress};
use crate::sys::FileType;
use crate::walk::Error;
use std::sync::Arc;
#[cfg(doc)]
use {super::DiskUsage, super::disk_usage, crate::walk::WalkBuilder};

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
    /// With [`UsageOptions::latest`], the latest time at and below it (`du --time`);
    /// `None` without.
    pub latest: Option<Stamp>,
    /// With [`UsageOptions::latest`], the latest time of the directory itself and its
    /// files (`du --time -S`); `None` without.
    pub own_latest: Option<Stamp>,
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
    pub(super) max_depth: usize,
    pub(super) count_links: bool,
    pub(super) same_file_system: bool,
    pub(super) follow_links: bool,
    pub(super) follow_roots: bool,
    pub(super) latest: Option<TimeOf>,
    pub(super) keep_files: bool,
    pub(super) keep_every_name: bool,
    pub(super) largest: usize,
    pub(super) threads: usize,
    pub(super) exclude: Option<PathTest>,
    pub(super) ignore: Option<Arc<crate::filter::Ignore>>,
    pub(super) on_error: Option<ErrorSink>,
    pub(super) progress: Option<Arc<UsageProgress>>,
    pub(super) stream: Option<ListSink>,
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
            follow_roots: false,
            latest: None,
            keep_files: false,
            keep_every_name: false,
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

    /// Follow the roots that are symbolic links (`du -H`, `-D`), and no other link:
    /// such a root counts as what it leads to. Without it (and without
    /// [`UsageOptions::follow_links`]), a root that is a link counts as the link.
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("d"))?;
    /// std::fs::write(tmp.path().join("d/f"), vec![1u8; 100])?;
    /// std::os::unix::fs::symlink("f", tmp.path().join("d/inner"))?;
    /// std::os::unix::fs::symlink("d", tmp.path().join("link"))?;
    /// let link = tmp.path().join("link");
    /// let root = disk_usage(&[&link], &UsageOptions::new().follow_roots(true));
    /// // d and f, and the link inside as itself (one byte: "f").
    /// assert_eq!(root.total.apparent, 101);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn follow_roots(mut self, yes: bool) -> Self {
        self.follow_roots = yes;
        self
    }

    /// Tell, with each entry streamed ([`UsageOptions::stream`]), the latest `time` of
    /// everything counted at and below it ([`Listed::latest`]), as `du --time` shows
    /// it: a further link to a file counted already adds nothing.
    ///
    /// ```
    /// use ftw::usage::{TimeOf, UsageOptions, disk_usage};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// let f = std::fs::File::create(tmp.path().join("f"))?;
    /// let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(4_000_000_000);
    /// f.set_modified(when)?;
    /// let latest = Arc::new(Mutex::new(Vec::new()));
    /// let seen = latest.clone();
    /// let opts = UsageOptions::new().latest(Some(TimeOf::Modified)).stream(move |l| {
    ///     seen.lock().unwrap().push(l.latest.unwrap().secs);
    ///     true
    /// });
    /// let _ = disk_usage(&[tmp.path()], &opts);
    /// // The root's latest is its file's, in the future.
    /// assert_eq!(*latest.lock().unwrap(), vec![4_000_000_000]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn latest(mut self, time: Option<TimeOf>) -> Self {
        self.latest = time;
        self
    }

    /// Keep the files too, not only the directories (down to the kept depth): for
    /// `du -a` or an export. Off by default.
    pub fn keep_files(mut self, yes: bool) -> Self {
        self.keep_files = yes;
        self
    }

    /// With [`UsageOptions::keep_files`], keep every name of a file with hard links,
    /// not the first met alone: each further name as a node whose totals are the
    /// file's, marked not [counted](UsageNode::counted) there (as ncdu's export lists
    /// every name, for ncdu to count the file once). Off by default.
    ///
    /// ```
    /// use ftw::usage::{UsageOptions, disk_usage};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("a"))?;
    /// std::fs::write(tmp.path().join("f"), vec![1u8; 100])?;
    /// std::fs::hard_link(tmp.path().join("f"), tmp.path().join("a/g"))?;
    /// let opts = UsageOptions::new().threads(1).keep_files(true).keep_every_name(true);
    /// let root = &disk_usage(&[tmp.path()], &opts).roots[0];
    /// assert_eq!(root.total.apparent, 100); // counted once
    /// let mut names = Vec::new();
    /// for c in &root.children {
    ///     names.push((c.name.clone(), c.counted, c.total.apparent));
    ///     for g in &c.children {
    ///         names.push((g.name.clone(), g.counted, g.total.apparent));
    ///     }
    /// }
    /// names.sort();
    /// assert_eq!(names.len(), 3); // a, f and a/g: both names of the file
    /// assert_eq!(names.iter().filter(|n| n.1 && n.2 == 100).count(), 1);
    /// assert_eq!(names.iter().filter(|n| !n.1 && n.2 == 100).count(), 1);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn keep_every_name(mut self, yes: bool) -> Self {
        self.keep_every_name = yes;
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
    /// that order. With several, the kept children are in the order workers reach
    /// them (and a file with links in several directories is counted where a worker
    /// met it first), but the entries told to [`UsageOptions::stream`] are in du's
    /// order all the same, and each such file counted where du counts it: each of its
    /// names waits for its turn in du's order, and the first counts.
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

    /// Tell each entry that would be kept to `sink` as soon as it and everything before
    /// it are complete, instead of keeping it, in du's order: a directory after
    /// everything below it, the entries of a directory in the order its listing gave
    /// them, whatever the threads. One call at a time, from any worker. Memory then
    /// stays bounded whatever the kept depth: with several threads, only the entries
    /// that wait on an earlier sibling still being counted are held (packed, a few
    /// bytes and a path each). The roots are still in the result, without their
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
