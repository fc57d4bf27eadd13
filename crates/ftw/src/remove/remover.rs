//! The removal of a tree below an open directory: the walk's visitor ([`Remover`]),
//! which unlinks each non-directory as it is seen and removes each directory when it is
//! left, and what its workers share ([`Shared`]).

use super::options::RemoveOptions;
use super::policy::{is_sep, trim_slashes};
use super::predict::{self, Room};
use super::report::Progress;
use super::summary::{KEPT_ERRORS, Summary};
use super::writable::{open_up, read_only, refused_by_mode};
use crate::sys::{self, Dir, FileType, Metadata, StatMask};
use crate::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder, bytes_to_path};
use std::ffi::{CStr, CString};
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How many times a directory that keeps filling while it is removed is read again
/// before it is reported.
pub(super) const REFILLS: usize = 3;

/// What every worker of one removal shares.
pub(super) struct Shared<'a> {
    pub(super) opts: &'a RemoveOptions,
    pub(super) progress: Arc<Progress>,
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
    pub(super) fn new(opts: &'a RemoveOptions) -> Shared<'a> {
        Shared {
            opts,
            progress: opts.progress.clone().unwrap_or_default(),
            errors: Mutex::new(Vec::new()),
            thread_error: Mutex::new(None),
            fd_budget: default_fd_budget(),
        }
    }

    pub(super) fn summary(self) -> Summary {
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

    pub(super) fn error(&self, err: Error) {
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

    /// In a dry run: the directory `path` would be given the permissions it lacks, and
    /// is told as removed without what it holds (see [`Report::not_read`]).
    ///
    /// [`Report::not_read`]: super::Report::not_read
    pub(super) fn not_read(&self, path: &[u8]) {
        if let Some(r) = &self.opts.report {
            r.not_read(path);
        }
    }

    pub(super) fn removed(&self, path: &[u8], file_type: FileType) {
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
    pub(super) fn walk(
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
pub(super) fn root_dev(shared: &Shared<'_>, dir: &Dir) -> u64 {
    if !shared.opts.same_file_system {
        return 0;
    }
    dir.stat(StatMask::ID).map_or(0, |m| m.dev)
}

/// Why a directory was not removed.
pub(super) enum Gone {
    /// Something in it could not be removed, and was reported.
    Reported,
    /// Its own removal failed.
    Failed(io::Error),
}

/// The state of a directory being removed: whether something in it could not be
/// removed (it is then kept, and so are its ancestors).
#[derive(Default)]
pub(super) struct DirState {
    failed: AtomicBool,
    /// Its subdirectories that could not be opened for want of permission (mode 0000,
    /// another user's), with the error: removed when it is left if they are empty, as
    /// `rm -rf` does (`rmdir` asks only this directory's permission), else reported.
    unreadable: Mutex<Vec<(CString, Error)>>,
    /// In a dry run, what this process may remove in it: asked of the system once, for
    /// the first entry.
    room: OnceLock<Room>,
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
pub(super) struct Remover<'s, 'a> {
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
    pub(super) fn new(
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

    /// In a dry run: whether an entry of `dir` (whose state is `state`), of metadata
    /// `meta` (asked with [`predict::ASK`]; `None` if that failed), would be removed,
    /// asked of the system without removing anything.
    fn foresee(
        &self,
        dir: &Dir,
        state: Option<&DirState>,
        meta: Option<&Metadata>,
    ) -> io::Result<()> {
        let make_writable = self.shared.opts.make_writable;
        let asked;
        let room = match state {
            Some(s) => s.room.get_or_init(|| Room::of(dir, make_writable)),
            None => {
                asked = Room::of(dir, make_writable);
                &asked
            }
        };
        room.removal(meta)
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
    pub(super) fn remove_dir(
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
            // A dry run cannot tell whether it is empty: it reports it, as a removal
            // would unless it is.
            Err(err) if refused_by_mode(err.io_error()) => {
                let why = predict::unreadable(err.io_error());
                self.fail(dir, Error::io(err.path().to_path_buf(), err.depth(), why));
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
            if opts.make_writable && opts.dry_run {
                if let Ok(m) = d.stat_at(name, predict::ASK, false) {
                    if predict::opened_up(&m) {
                        // The removal would give it the permissions it lacks, then empty
                        // it: what it holds cannot be listed before that.
                        match self.foresee(d, dir, Some(&m)) {
                            Ok(()) => {
                                let path = e.path();
                                self.shared.not_read(&crate::walk::path_to_bytes(&path));
                                self.done_entry(e);
                            }
                            Err(err) => {
                                let err = read_only(err, e.parent_path());
                                self.fail(dir, Error::io(e.path(), e.depth(), err));
                            }
                        }
                        return Control::Skip;
                    }
                }
            }
            return Control::Continue;
        }
        if opts.dry_run {
            let mask = match opts.count_bytes {
                true => predict::ASK | StatMask::SIZE,
                false => predict::ASK,
            };
            let meta = d.stat_at(name, mask, false).ok();
            match self.foresee(d, dir, meta.as_ref()) {
                Ok(()) => {
                    if let (true, Some(m)) = (opts.count_bytes, &meta) {
                        let bytes = &self.shared.progress.bytes;
                        bytes.fetch_add(m.size, Ordering::Relaxed);
                    }
                    self.done_entry(e);
                }
                Err(err) => {
                    let err = read_only(err, e.parent_path());
                    self.fail(dir, Error::io(e.path(), e.depth(), err));
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
        let (Some(pdir), Some(name)) = (ev.parent_dir(), ev.c_name()) else {
            let err = io::Error::other("no handle to its parent");
            self.fail(Some(parent), Error::io(ev.to_path_buf(), ev.depth(), err));
            return;
        };
        let parent_path = &path[..path.len().saturating_sub(name.to_bytes().len())];
        if self.shared.opts.dry_run {
            let meta = pdir.stat_at(name, predict::ASK, false).ok();
            match self.foresee(pdir, Some(parent), meta.as_ref()) {
                Ok(()) => self.done(path, FileType::Dir),
                Err(e) => {
                    let e = read_only(e, trim_slashes(parent_path));
                    self.fail(Some(parent), Error::io(ev.to_path_buf(), ev.depth(), e));
                }
            }
            return;
        }
        match self.remove_dir(pdir, name, path, true) {
            Ok(()) => self.done(path, FileType::Dir),
            Err(Gone::Reported) => parent.failed.store(true, Ordering::Relaxed),
            Err(Gone::Failed(e)) => {
                let e = read_only(e, trim_slashes(parent_path));
                self.fail(Some(parent), Error::io(ev.to_path_buf(), ev.depth(), e))
            }
        }
    }
}
