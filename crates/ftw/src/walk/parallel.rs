//! The parallel walk: one job per directory on the work-stealing pool ([`super::pool`]),
//! each job opening its directory relative to a shared handle of its parent, reading it
//! with the worker's own buffer, reporting its entries to the worker's visitor and
//! pushing its subdirectories. Entries come in no fixed order.
//!
//! Each directory entered is a [`Node`], shared by the jobs of its subdirectories: it
//! holds the directory's state for its visitor, the way to reopen it, and (with
//! `keep_handles`) its handle. The node is left, exactly once, by whichever job lets go
//! of the last reference to it: its own job when it has no subdirectory left to read,
//! else the last of its children's. No lock is taken per entry, and there is no
//! barrier: a reference count per directory, as bfs keeps.

use super::budget::Budget;
use super::event::{DirEvent, Visitor};
use super::gate::{Gate, Gated};
use super::listing::Listing;
use super::node::{self, Handle, Id};
use super::pool::{self, PoolOptions, PoolStats, Scope};
use super::step::{self, Decision, Place, RootDecision};
use super::{
    Control, Entry, Error, Filter, Options, Origin, WalkBuilder, bytes_to_path, path_to_bytes,
};
use crate::sys::{Dir, DirBuf};
use std::ffi::CStr;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What each worker of a [`ParallelWalk`] reports entries to.
///
/// Closures `FnMut(Result<&Entry, Error>) -> Control + Send` are visitors.
pub trait ParallelVisitor: Send {
    /// Sees one entry or error; [`Control::Skip`] keeps a directory from being opened,
    /// [`Control::Stop`] ends the whole walk (every worker) promptly.
    fn visit(&mut self, item: Result<&Entry<'_>, Error>) -> Control;
}

impl<F> ParallelVisitor for F
where
    F: FnMut(Result<&Entry<'_>, Error>) -> Control + Send,
{
    fn visit(&mut self, item: Result<&Entry<'_>, Error>) -> Control {
        self(item)
    }
}

/// A walk run by several threads, made by [`WalkBuilder::build_parallel`].
///
/// ```
/// use ftw::walk::{Control, WalkBuilder};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let tmp = tempfile::tempdir()?;
/// for i in 0..10 {
///     std::fs::create_dir_all(tmp.path().join(format!("d{i}/sub")))?;
///     std::fs::write(tmp.path().join(format!("d{i}/sub/f")), b"")?;
/// }
/// let count = AtomicUsize::new(0);
/// WalkBuilder::new(tmp.path()).min_depth(1).threads(2).build_parallel().visit(|| {
///     |item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>| {
///         item.expect("readable");
///         count.fetch_add(1, Ordering::Relaxed);
///         Control::Continue
///     }
/// });
/// assert_eq!(count.into_inner(), 30);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct ParallelWalk {
    roots: Vec<Origin>,
    opts: Options,
    filter: Option<Filter>,
    gate: Option<Arc<dyn Gate>>,
}

/// A directory entered and not yet left (see the module's notes).
struct Node<S> {
    parent: Parent<S>,
    /// Its name in its parent followed by a NUL (empty for a root). The node keeps no
    /// path: that of any job below it starts with its own, `path_len` long (so a chain
    /// of nodes takes memory in proportion to its depth, not its square).
    name: Box<[u8]>,
    path_len: usize,
    depth: usize,
    /// Its identity, when known: with `follow_links` or `same_file_system`, or recorded
    /// when its handle could not be kept, to check a reopening.
    id: Option<Id>,
    via_link: bool,
    /// Its handle, kept until it is left (`keep_handles`, within the budget).
    handle: Option<Pin>,
    state: S,
}

impl<S> Node<S> {
    fn dir(&self) -> Option<&Dir> {
        self.handle.as_ref().map(|p| &p.handle.dir)
    }

    /// The nodes from this one up to its root.
    fn lineage(&self) -> impl Iterator<Item = &Node<S>> {
        std::iter::successors(Some(self), |n| n.parent.0.as_deref())
    }
}

/// A handle a node keeps until it is left (with `keep_handles`). At most half of the
/// handles a walk may share are pinned so: the rest stay for the jobs of
/// subdirectories to open from their parent, so that a deep chain below the pinned
/// directories is opened one level at a time, not from a pinned ancestor each time.
struct Pin {
    handle: Arc<Handle>,
    pinned: Arc<AtomicUsize>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.pinned.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The reference a node or a job holds to its parent node. Dropped without recursion:
/// a chain of 100,000 ancestors let go of at once is freed in a loop, whatever the
/// stack's size.
struct Parent<S>(Option<Arc<Node<S>>>);

impl<S> Drop for Parent<S> {
    fn drop(&mut self) {
        let mut next = self.0.take();
        while let Some(n) = next {
            next = Arc::into_inner(n).and_then(|mut n| n.parent.0.take());
        }
    }
}

/// One directory to read.
struct DirJob<S> {
    /// The parent directory's node (`None` for a root).
    parent: Parent<S>,
    /// The nearest ancestor whose handle is kept, and where its path ends in `path`:
    /// the directory is opened from it one component at a time (just its own name when
    /// it is the parent).
    base: Option<(Arc<Handle>, usize)>,
    /// The directory's path (for a root, as given), followed by a NUL.
    path: Vec<u8>,
    name_start: usize,
    depth: usize,
    via_link: bool,
    root_dev: u64,
    /// When the directory is opened from an older ancestor than its parent: the
    /// parent's (device, inode), checked on the way down, so that a directory moved
    /// or replaced meanwhile is reported, not listed in another's place.
    parent_id: Option<Id>,
    /// A root's handle, when the caller opened it ([`WalkBuilder::from_dir`]).
    root_dir: Option<Dir>,
}

/// What a worker of the pool runs: a directory to read, or a part of a huge one, read
/// already, whose entries are to be reported.
enum Job<S> {
    Dir(DirJob<S>),
    Part(Box<Part<S>>),
}

/// A part of a huge directory, read by the worker reading the directory and handed to
/// an idle one ([`Options::share_parts`]): its entries, and what reporting them needs.
struct Part<S> {
    list: Listing,
    node: Arc<Node<S>>,
    /// The directory's handle (a part goes out only where it is shared).
    handle: Arc<Handle>,
    /// The directory's path.
    path: Vec<u8>,
    /// Its entries' depth.
    depth: usize,
    root_dev: u64,
    has_dirs: bool,
    sub_base: SubBase,
    /// Set when a worker starts on the part: its reader keeps one part waiting.
    started: Arc<AtomicBool>,
}

/// A worker's own things: its read buffer, its listing, its visitor.
struct WorkerState<V> {
    buf: DirBuf,
    list: Listing,
    visitor: V,
}

struct Ctx {
    opts: Options,
    filter: Option<Filter>,
    open: Arc<AtomicUsize>,
    /// With `follow_links`: how many nodes of each identity are entered and not left,
    /// in shards. A directory whose identity is none of them cannot be an ancestor of
    /// anything (the common case, answered in one look); only where it is one are the
    /// ancestors walked, to tell a loop from the same directory reached elsewhere.
    live: Option<Vec<std::sync::Mutex<std::collections::HashMap<Id, usize>>>>,
    /// Handles pinned by nodes, and how many may be (see [`Pin`]).
    pinned: Arc<AtomicUsize>,
    pin_limit: usize,
    /// Handles that may be kept for subdirectories' jobs and, with `keep_handles`, until
    /// their directories are left (see [`Budget::parallel_keep`]); and how many when
    /// the directory has a single subdirectory ([`Budget::parallel_single`]).
    keep_limit: usize,
    single_limit: usize,
}

impl Ctx {
    fn live_shard(
        &self,
        id: Id,
    ) -> Option<&std::sync::Mutex<std::collections::HashMap<Id, usize>>> {
        let shards = self.live.as_ref()?;
        let h = (id.1 ^ id.0.rotate_left(17)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Some(&shards[(h >> 58) as usize % shards.len()])
    }

    /// Counts a node of identity `id` in (`add`) or out.
    fn live(&self, id: Option<Id>, add: bool) {
        let Some(shard) = id.and_then(|id| self.live_shard(id)) else {
            return;
        };
        let id = id.expect("a shard for an identity");
        let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
        if add {
            *map.entry(id).or_insert(0) += 1;
        } else if let Some(n) = map.get_mut(&id) {
            *n -= 1;
            if *n == 0 {
                map.remove(&id);
            }
        }
    }

    /// Whether some node of identity `id` is entered and not left.
    fn is_live(&self, id: Id) -> bool {
        self.live_shard(id).is_some_and(|shard| {
            shard
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&id)
        })
    }

    /// Counts a pin in, if there is room for one (a root's regardless).
    fn try_pin(&self, root: bool) -> bool {
        if self.pinned.fetch_add(1, Ordering::Relaxed) < self.pin_limit || root {
            true
        } else {
            self.pinned.fetch_sub(1, Ordering::Relaxed);
            false
        }
    }
}

impl WalkBuilder {
    /// Starts a walk on several threads (see [`WalkBuilder::threads`]); entries come in
    /// no fixed order.
    pub fn build_parallel(self) -> ParallelWalk {
        ParallelWalk {
            roots: self.roots,
            opts: self.opts,
            filter: self.filter,
            gate: self.gate,
        }
    }
}

/// A [`ParallelVisitor`] as a [`Visitor`] with no state.
pub(super) struct Plain<V>(pub(super) V);

impl<V: ParallelVisitor> Visitor for Plain<V> {
    type State = ();

    #[inline]
    fn enter(&mut self, _: &DirEvent<'_>, _: Option<&()>) {}

    #[inline]
    fn entry(&mut self, item: Result<&Entry<'_>, Error>, _: Option<&()>) -> Control {
        self.0.visit(item)
    }

    #[inline]
    fn leave(&mut self, _: &DirEvent<'_>, _: (), _: Option<&()>) {}
}

impl ParallelWalk {
    /// Runs the walk: each worker thread calls `make_visitor` once and reports its
    /// entries to the visitor it made (dropped when the worker ends). Returns when every
    /// entry was seen or a visitor said [`Control::Stop`].
    pub fn visit<V, M>(self, make_visitor: M) -> PoolStats
    where
        V: ParallelVisitor,
        M: Fn() -> V + Sync,
    {
        self.visit_events(|| Plain(make_visitor()))
    }

    /// Runs the walk with events (see [`Visitor`]): each worker calls `make_visitor`
    /// once. A directory is entered on the worker that reads it and left on the worker
    /// that finishes the last job below it; its state is shared with the jobs below it
    /// (read through `&`, hence `Sync`), and given back, by value, on leaving.
    ///
    /// ```
    /// use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
    /// use std::sync::Mutex;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// /// Adds up the sizes of the files below each directory.
    /// struct Sizes<'a>(&'a Mutex<Vec<(usize, u64)>>);
    /// impl Visitor for Sizes<'_> {
    ///     type State = AtomicU64;
    ///     fn enter(&mut self, _: &DirEvent<'_>, _: Option<&AtomicU64>) -> AtomicU64 {
    ///         AtomicU64::new(0)
    ///     }
    ///     fn entry(&mut self, e: Result<&Entry<'_>, Error>, dir: Option<&AtomicU64>) -> Control {
    ///         let e = e.expect("readable");
    ///         if let (Some(d), Some(name), Some(total)) = (e.dir(), e.c_name(), dir) {
    ///             if !e.is_dir() {
    ///                 let m = d.stat_at(name, ftw::sys::StatMask::SIZE, false).unwrap();
    ///                 total.fetch_add(m.size, Ordering::Relaxed);
    ///             }
    ///         }
    ///         Control::Continue
    ///     }
    ///     fn leave(&mut self, d: &DirEvent<'_>, total: AtomicU64, _: Option<&AtomicU64>) {
    ///         self.0.lock().unwrap().push((d.depth(), total.into_inner()));
    ///     }
    /// }
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir(tmp.path().join("a"))?;
    /// std::fs::write(tmp.path().join("a/f"), b"12345")?;
    /// std::fs::write(tmp.path().join("g"), b"12")?;
    /// let left = Mutex::new(Vec::new());
    /// WalkBuilder::new(tmp.path()).threads(2).build_parallel().visit_events(|| Sizes(&left));
    /// let mut left = left.into_inner().unwrap();
    /// left.sort();
    /// assert_eq!(left, vec![(0, 2), (1, 5)]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn visit_events<V, M>(mut self, make_visitor: M) -> PoolStats
    where
        V: Visitor + Send,
        V::State: Send + Sync,
        M: Fn() -> V + Sync,
    {
        match self.gate.take() {
            None => self.run_events(make_visitor),
            Some(gate) => {
                let gate = &*gate;
                self.run_events(|| Gated::new(make_visitor(), gate))
            }
        }
    }

    /// [`ParallelWalk::visit_events`], the rules of its gate (if any) in front of the
    /// visitors already.
    fn run_events<V, M>(self, make_visitor: M) -> PoolStats
    where
        V: Visitor + Send,
        V::State: Send + Sync,
        M: Fn() -> V + Sync,
    {
        let opts = self.opts;
        // Each worker holds up to two handles of its own besides those kept for jobs:
        // the thread count is capped by the budget, `-j` included.
        let budget = Budget::new(opts.fd_budget);
        let pool_opts = match opts.threads {
            0 => PoolOptions::adaptive(budget.max_io_threads()),
            n => PoolOptions::fixed(n.min(budget.max_threads())),
        }
        .in_order(opts.first_sub_first);
        let keep_limit = budget.parallel_keep(pool_opts.max_threads);
        let ctx = Ctx {
            live: opts
                .follow_links
                .then(|| (0..64).map(|_| Default::default()).collect()),
            open: Arc::new(AtomicUsize::new(0)),
            pinned: Arc::new(AtomicUsize::new(0)),
            pin_limit: keep_limit / 2,
            keep_limit,
            single_limit: budget.parallel_single(pool_opts.max_threads),
            opts,
            filter: self.filter,
        };
        let roots = self.roots.into_iter().map(|r| {
            let mut path = path_to_bytes(&r.path);
            path.push(0);
            Job::Dir(DirJob::<V::State> {
                parent: Parent(None),
                base: None,
                path,
                name_start: 0,
                depth: 0,
                via_link: false,
                root_dev: 0,
                parent_id: None,
                root_dir: r.dir,
            })
        });
        pool::run(
            roots,
            pool_opts,
            || WorkerState {
                buf: DirBuf::with_capacity(ctx.opts.buf_size),
                list: Listing::default(),
                visitor: make_visitor(),
            },
            |state, job, scope| match job {
                Job::Dir(job) => run_job(&ctx, state, job, scope),
                Job::Part(part) => run_part(&ctx, state, *part, scope),
            },
        )
    }
}

fn report<V: Visitor>(
    state: &mut WorkerState<V>,
    scope: &Scope<'_, Job<V::State>>,
    err: Error,
    dir: Option<&V::State>,
) {
    if state.visitor.entry(Err(err), dir) == Control::Stop {
        scope.stop();
    }
}

/// Opens a job's directory below a root, from its base handle: one component at a
/// time, checking the parent's identity on the way when the base is an older ancestor
/// (symbolic links followed on the way only where the walk follows them).
fn open<S>(job: &DirJob<S>, opts: &Options) -> io::Result<(Dir, Option<Id>)> {
    let (base, base_len) = job.base.as_ref().expect("a job below a root has a base");
    let name = CStr::from_bytes_with_nul(&job.path[job.name_start..])
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let want_id = opts.wants_ids();
    if job.name_start <= *base_len + 1 {
        return node::open_child(&base.dir, name, job.via_link, want_id);
    }
    let sep = super::sep(&job.path);
    let between = job.path[*base_len..job.name_start]
        .split(|&b| b == sep)
        .filter(|c| !c.is_empty())
        .map(|c| (c, opts.follow_links));
    let parent = node::reopen(&base.dir, between, job.parent_id)?;
    node::open_child(&parent, name, job.via_link, want_id)
}

/// Runs one directory's job: opens the directory, reads it, enters it (a [`Node`]),
/// reports its entries and pushes its subdirectories' jobs; leaves it here if no
/// subdirectory is left to read.
fn run_job<V>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    mut job: DirJob<V::State>,
    scope: &Scope<'_, Job<V::State>>,
) where
    V: Visitor,
    V::State: Send + Sync,
{
    if scope.is_stopped() {
        return;
    }
    let Some((dir, id, root_dev)) = open_job(ctx, state, &mut job, scope) else {
        return;
    };
    let opts = &ctx.opts;
    // A huge directory is read in parts (`more`: the listing goes on), each handed out
    // before the next is read.
    let (read, mut more) = scope.io(|| read_listing(opts, state, &dir, opts.hooks.part()));
    let depth = job.depth + 1;
    let has_dirs = (more || state.list.last_dir().is_some()) && depth < opts.max_depth;
    let single = !more && state.list.dirs_up_to(2) == 1;
    let mut kept = keep_handle(ctx, single, dir, id, has_dirs, job.depth == 0);
    let DirJob {
        parent,
        base,
        path,
        name_start,
        depth: own_depth,
        via_link,
        ..
    } = job;
    let own = &path[..path.len() - 1];
    let node = enter(
        ctx,
        state,
        scope,
        parent,
        &mut kept,
        (&path, name_start, own_depth, via_link),
    );
    if let Err(e) = read {
        let err = Error::io(bytes_to_path(own.to_vec()), own_depth, e);
        report(state, scope, err, Some(&node.state));
    }
    // Where the subdirectories open from: this directory's handle if it is kept; else
    // this job's own base, with this directory's identity to check on the way.
    let sub_base = match &kept.handle {
        Some(h) => (Some((h.clone(), own.len())), None),
        None => (base.clone(), node.id),
    };
    let at = Place {
        parent: own,
        depth,
        dir: Some(kept.dir()),
        root_dev,
    };
    // Subdirectories' jobs held back, to be pushed last first (so this worker, popping
    // the newest, takes the first first: see `Options::first_sub_first`).
    let mut held = Vec::new();
    // A part of a huge directory (but the last) goes out where a worker is idle, or
    // where none of this directory's parts waits in the queue (so that a worker that
    // finishes its part finds the next one there, not a gap until this reader reads
    // again), and this one reads on: the calls made per entry are spread over the
    // workers, with at most one part waiting beside those being worked on.
    let share = opts.share_parts && !opts.first_sub_first;
    let mut last_sub = None;
    let mut waiting: Option<Arc<AtomicBool>> = None;
    loop {
        let queue_empty = waiting.as_ref().is_none_or(|w| w.load(Ordering::Acquire));
        match &kept.handle {
            Some(h) if more && share && (queue_empty || scope.has_idle()) => {
                let started = Arc::new(AtomicBool::new(false));
                waiting = Some(started.clone());
                let part = Part {
                    list: std::mem::take(&mut state.list),
                    node: node.clone(),
                    handle: h.clone(),
                    path: own.to_vec(),
                    depth,
                    root_dev,
                    has_dirs,
                    sub_base: sub_base.clone(),
                    started,
                };
                scope.push(Job::Part(Box::new(part)));
            }
            _ => {
                let Some(sub) = report_entries(
                    ctx,
                    state,
                    scope,
                    (&node, &at, has_dirs, &sub_base),
                    &mut held,
                ) else {
                    scope.stop();
                    return;
                };
                last_sub = sub;
            }
        }
        if !more {
            break;
        }
        // The part's names go with it: its last subdirectory's job gets a path of its
        // own, and jobs held back go out now.
        if let Some((last, link)) = last_sub.take() {
            let name = state.list.name(&state.list.items[last]);
            let mut sub = Vec::with_capacity(own.len() + name.len() + 2);
            sub.extend_from_slice(own);
            let job = sub_job(sub, name, &sub_base, link, &node, depth, root_dev);
            if opts.first_sub_first {
                held.push(job);
            } else {
                scope.push(Job::Dir(job));
            }
        }
        for job in held.drain(..).rev() {
            scope.push(Job::Dir(job));
        }
        // A part handed out may have stopped the walk (`--max-results`): this reader
        // hears of it only here, and reads no further.
        if scope.is_stopped() {
            return;
        }
        // Where the parts may go to other workers, those after the first are smaller:
        // each one alive (the one read, the one waiting, those being reported) holds
        // its entries, and a quarter of a part still keeps a worker busy for a while.
        let part = if share && kept.handle.is_some() {
            (opts.hooks.part() / SHARED_PART_DIVISOR).max(1)
        } else {
            opts.hooks.part()
        };
        let read;
        (read, more) = scope.io(|| read_listing(opts, state, at.dir.expect("kept"), part));
        if let Err(e) = read {
            let err = Error::io(bytes_to_path(own.to_vec()), own_depth, e);
            report(state, scope, err, Some(&node.state));
        }
    }
    if let Some((last, link)) = last_sub {
        let name = state.list.name(&state.list.items[last]);
        let mut sub = path;
        sub.pop(); // The NUL.
        let job = sub_job(sub, name, &sub_base, link, &node, depth, root_dev);
        // The job holds the node: this reference is not the last, so the node is not
        // to be left here (and this job's path is not needed any more). Let go of it
        // before the job can run, and finish, elsewhere.
        drop((node, kept, base, sub_base));
        scope.push(Job::Dir(job));
        for job in held.into_iter().rev() {
            scope.push(Job::Dir(job));
        }
        return;
    }
    // A handle not pinned in the node is still the node's own, should it be left now
    // (when it has no subdirectory left to read).
    let carry = match (kept.local, &kept.handle) {
        (Some(d), _) if opts.keep_handles => Some(d),
        (None, Some(h)) if opts.keep_handles && node.handle.is_none() => (Arc::strong_count(&node)
            == 1)
            .then(|| h.dir.try_clone().ok())
            .flatten(),
        _ => None,
    };
    drop((kept.handle, base, sub_base));
    finish(ctx, state, Parent(Some(node)), scope, carry, own);
}

/// Reports the entries of a part of a huge directory that another worker read (see
/// [`Options::share_parts`]), pushes its subdirectories' jobs, and lets go of the
/// directory's node: the last to do so leaves it.
fn run_part<V>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    part: Part<V::State>,
    scope: &Scope<'_, Job<V::State>>,
) where
    V: Visitor,
    V::State: Send + Sync,
{
    if scope.is_stopped() {
        return;
    }
    let Part {
        list,
        node,
        handle,
        path,
        depth,
        root_dev,
        has_dirs,
        sub_base,
        started,
    } = part;
    started.store(true, Ordering::Release);
    // The part's listing is this worker's while it is reported; its own is kept for
    // the next directory it reads.
    let own_list = std::mem::replace(&mut state.list, list);
    let at = Place {
        parent: &path,
        depth,
        dir: Some(&handle.dir),
        root_dev,
    };
    let mut held = Vec::new();
    let reported = report_entries(
        ctx,
        state,
        scope,
        (&node, &at, has_dirs, &sub_base),
        &mut held,
    );
    let Some(last_sub) = reported else {
        state.list = own_list;
        scope.stop();
        return;
    };
    if let Some((last, link)) = last_sub {
        let name = state.list.name(&state.list.items[last]);
        let job = sub_job(path.clone(), name, &sub_base, link, &node, depth, root_dev);
        held.push(job);
    }
    state.list = own_list;
    for job in held.into_iter().rev() {
        scope.push(Job::Dir(job));
    }
    drop((handle, sub_base));
    finish(ctx, state, Parent(Some(node)), scope, None, &path);
}

/// Opens a job's directory: a root is started (typed, filtered, reported), a directory
/// below opened from its base. Gives its handle, identity and its root's device; `None`
/// when there is nothing to read (what failed was reported, and the job is done).
fn open_job<V>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    job: &mut DirJob<V::State>,
    scope: &Scope<'_, Job<V::State>>,
) -> Option<(Dir, Option<Id>, u64)>
where
    V: Visitor,
    V::State: Send + Sync,
{
    let opts = &ctx.opts;
    let path = &job.path[..job.path.len() - 1];
    if job.depth == 0 {
        let root = bytes_to_path(path.to_vec());
        let given = job.root_dir.take();
        let decision = scope.io(|| step::root(opts, ctx.filter.as_ref(), &root, path, given));
        let (file_type, followed_link, show, error, mut enter) = match decision {
            RootDecision::Dropped => return None,
            RootDecision::Failed(e) => {
                report(state, scope, e, None);
                return None;
            }
            RootDecision::Kept {
                file_type,
                followed_link,
                report,
                error,
                enter,
            } => (file_type, followed_link, report, error, enter),
        };
        if show {
            match state
                .visitor
                .entry(Ok(&Entry::root(path, file_type, followed_link)), None)
            {
                Control::Stop => {
                    scope.stop();
                    return None;
                }
                Control::Skip => enter = None,
                Control::Continue => {}
            }
        }
        // A root that exists but cannot be read is listed, then reported.
        if let Some(e) = error {
            report(state, scope, e, None);
        }
        let (dir, id) = enter?;
        return Some((dir, id, id.map_or(0, |(dev, _)| dev)));
    }
    match scope.io(|| open(job, opts)) {
        // A mount point the walk does not cross (known only once opened, when its
        // entry could not be identified).
        Ok((_, id)) if opts.off_fs(id, job.root_dev) => {}
        Ok((dir, id)) => return Some((dir, id, job.root_dev)),
        Err(e) => {
            let err = Error::io(bytes_to_path(path.to_vec()), job.depth, e);
            report(state, scope, err, job.parent.0.as_deref().map(|p| &p.state));
        }
    }
    let parent = Parent(job.parent.0.take());
    finish(ctx, state, parent, scope, None, &job.path);
    None
}

/// How much smaller than [`super::listing::PART`] the parts of a huge directory are
/// after the first, where they are handed out to other workers.
const SHARED_PART_DIVISOR: usize = 4;

/// Reads `dir` into the worker's listing, ordered as asked and every type resolved: all
/// of it, or (a huge directory) a part, and then says that more is to be read.
fn read_listing<V>(
    opts: &Options,
    state: &mut WorkerState<V>,
    dir: &Dir,
    part: usize,
) -> (io::Result<()>, bool) {
    state.list.clear();
    opts.hooks.pause();
    let (r, more) = match state
        .list
        .read_some(dir, &mut state.buf, opts.hooks.forget_types(), part)
    {
        Ok(more) => (Ok(()), more),
        Err(e) => (Err(e), false),
    };
    state.list.order_by_inode(opts);
    state
        .list
        .resolve_all(dir, opts.follow_links, opts.same_file_system);
    (r, more)
}

/// A directory's handle as its job keeps it: shared with its subdirectories' jobs
/// (`handle`), or its own (`local`); pinned until it is left (`pin`); and its identity
/// where a reopening will have to be checked.
struct Kept {
    handle: Option<Arc<Handle>>,
    local: Option<Dir>,
    pin: Option<Pin>,
    id: Option<Id>,
}

impl Kept {
    fn dir(&self) -> &Dir {
        match (&self.handle, &self.local) {
            (Some(h), _) => &h.dir,
            (None, Some(d)) => d,
            (None, None) => unreachable!("the handle is shared or local"),
        }
    }
}

/// Shares the directory's handle with its subdirectories' jobs while the budget allows
/// (past it, they open themselves from the nearest shared ancestor, checking this one's
/// identity); with `keep_handles`, pins it until it is left, within the pins' share of
/// the budget.
fn keep_handle(
    ctx: &Ctx,
    single: bool,
    dir: Dir,
    id: Option<Id>,
    has_dirs: bool,
    root: bool,
) -> Kept {
    let want_pin = ctx.opts.keep_handles && ctx.try_pin(root);
    // A root's handle is always shared: every job below has a base. That of a
    // directory with one subdirectory (a chain) may be shared beyond the others' limit,
    // by one handle a worker: where it could not be, each level of a deep chain would
    // be opened from further up.
    let single = has_dirs && single;
    let limit = if single {
        ctx.single_limit
    } else {
        ctx.keep_limit
    };
    let (handle, local) = if has_dirs || want_pin {
        match Handle::share(dir, &ctx.open, limit, root) {
            Ok(h) => (Some(h), None),
            Err(d) => (None, Some(d)),
        }
    } else {
        (None, Some(dir))
    };
    let pin = match &handle {
        Some(h) if want_pin => Some(Pin {
            handle: h.clone(),
            pinned: ctx.pinned.clone(),
        }),
        _ => {
            if want_pin {
                ctx.pinned.fetch_sub(1, Ordering::Relaxed);
            }
            None
        }
    };
    let mut kept = Kept {
        handle,
        local,
        pin,
        id,
    };
    // Its identity, where a reopening will have to be checked: by the jobs below when
    // they open from an older ancestor, or by a child climbing back through `..`.
    let unshared = has_dirs && kept.handle.is_none();
    let unpinned = ctx.opts.keep_handles && kept.pin.is_none();
    if kept.id.is_none() && (unshared || unpinned) {
        kept.id = node::identify(kept.dir()).ok();
    }
    kept
}

/// Enters the directory of a job (its path followed by a NUL, where its name starts,
/// its depth, whether through a link): tells the visitor, and makes its node, which
/// takes the handle's pin.
fn enter<V>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    scope: &Scope<'_, Job<V::State>>,
    parent: Parent<V::State>,
    kept: &mut Kept,
    (path, name_start, depth, via_link): (&[u8], usize, usize, bool),
) -> Arc<Node<V::State>>
where
    V: Visitor,
    V::State: Send + Sync,
{
    let opts = &ctx.opts;
    let own = &path[..path.len() - 1];
    // Its name in its parent, with the NUL (none for a root).
    let name = (depth > 0).then(|| &path[name_start..]);
    let event = DirEvent {
        path: own,
        name,
        depth,
        dir: Some(kept.dir()),
        parent: parent.0.as_deref().and_then(|p| p.dir()),
        listing: Some(&state.list),
    };
    let parent_state = parent.0.as_deref().map(|p| &p.state);
    let dir_state = in_visitor(scope, opts, || state.visitor.enter(&event, parent_state));
    ctx.live(kept.id.filter(|_| opts.follow_links), true);
    Arc::new(Node {
        parent,
        name: name.unwrap_or_default().into(),
        path_len: own.len(),
        depth,
        id: kept.id,
        via_link,
        handle: kept.pin.take(),
        state: dir_state,
    })
}

/// Where a directory's subdirectories open from: a kept handle and the length of the
/// path it is at, or the job's own base; and the directory's identity to check on the
/// way.
type SubBase = (Option<(Arc<Handle>, usize)>, Option<Id>);

/// Reports each entry of the worker's listing (the directory of `node`, found at
/// `at`) to the visitor as [`step::decide`] says, and pushes a job for each
/// subdirectory to enter but the last (or holds them in `held`, to be pushed last
/// first: [`Options::first_sub_first`]), the last being given back (its index, and whether it
/// is a followed link): its job takes over this job's path. `None` when the walk is to
/// stop.
fn report_entries<V>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    scope: &Scope<'_, Job<V::State>>,
    (node, at, has_dirs, sub_base): (&Arc<Node<V::State>>, &Place<'_>, bool, &SubBase),
    held: &mut Vec<DirJob<V::State>>,
) -> Option<Option<(usize, bool)>>
where
    V: Visitor,
    V::State: Send + Sync,
{
    let opts = &ctx.opts;
    let mut last_sub = None;
    for i in 0..state.list.items.len() {
        if scope.is_stopped() {
            return None;
        }
        let item = state.list.items[i];
        // Only where some directory of that identity is being walked are the
        // ancestors looked at, to tell a loop from the same directory reached elsewhere.
        let ancestor = |t| {
            ctx.is_live(t)
                .then(|| node::find_loop(node.lineage().map(|n| (n.id, n.path_len)), t))
                .flatten()
        };
        let kept = match step::decide(
            opts,
            ctx.filter.as_ref(),
            &mut state.list,
            &item,
            at,
            ancestor,
        ) {
            Decision::Error(e) => {
                report(state, scope, e, Some(&node.state));
                continue;
            }
            Decision::Dropped { late } => {
                if let Some(err) = late {
                    report(state, scope, err, Some(&node.state));
                }
                continue;
            }
            Decision::Kept(kept) => kept,
        };
        let control = if kept.report {
            let entry = Entry::listed(at, &state.list, &item, kept.file_type, kept.followed_link);
            in_visitor(scope, opts, || {
                state.visitor.entry(Ok(&entry), Some(&node.state))
            })
        } else {
            Control::Continue
        };
        // Reported although its type could not be found: its error comes after it.
        if let Some(err) = kept.late.filter(|_| control != Control::Stop) {
            report(state, scope, err, Some(&node.state));
        }
        match control {
            Control::Stop => return None,
            Control::Skip => continue,
            Control::Continue => {}
        }
        if kept.enter && has_dirs {
            // The last subdirectory is held back: once the listing is done, its job
            // takes over this job's path buffer instead of a copy, so that each level
            // of a deep chain costs the length of its name, not of its path.
            if let Some((before, link)) = last_sub.replace((i, kept.followed_link)) {
                let name = state.list.name(&state.list.items[before]);
                let mut sub = Vec::with_capacity(at.parent.len() + name.len() + 2);
                sub.extend_from_slice(at.parent);
                let job = sub_job(sub, name, sub_base, link, node, at.depth, at.root_dev);
                if opts.first_sub_first {
                    // Held back, to go out last first once the listing (or its part)
                    // is done: pushed at once, the last found would be taken first.
                    held.push(job);
                } else {
                    scope.push(Job::Dir(job));
                }
            }
        }
    }
    Some(last_sub)
}

/// The job of a subdirectory `name` of `node`, whose path (without its NUL) `path`
/// holds.
fn sub_job<S>(
    mut path: Vec<u8>,
    name: &[u8],
    (base, parent_id): &SubBase,
    via_link: bool,
    node: &Arc<Node<S>>,
    depth: usize,
    root_dev: u64,
) -> DirJob<S> {
    if !super::ends_with_sep(&path) {
        path.push(super::sep(&path));
    }
    let name_start = path.len();
    path.extend_from_slice(name);
    path.push(0);
    DirJob {
        parent: Parent(Some(node.clone())),
        base: base.clone(),
        path,
        name_start,
        depth,
        via_link,
        root_dev,
        parent_id: *parent_id,
        root_dir: None,
    }
}

/// Lets go of a job's reference to a node (its own, or its parent's when it entered
/// nothing): the last reference leaves the node, and so up the tree, in a loop.
fn finish<V: Visitor>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    mut node: Parent<V::State>,
    scope: &Scope<'_, Job<V::State>>,
    mut carry: Option<Dir>,
    path: &[u8],
) {
    // `carry` is the handle of the node let go of, if the caller has it at hand: then,
    // the parent's handle when leaving a node had to open it, the next node up being
    // that parent. `path` is the caller's job's: every node up the tree has a prefix of
    // it for its path.
    while let Some(n) = node.0.take() {
        let Some(mut n) = Arc::into_inner(n) else {
            return;
        };
        if scope.is_stopped() {
            return;
        }
        let parent = Parent(n.parent.0.take());
        ctx.live(n.id.filter(|_| ctx.opts.follow_links), false);
        carry = leave(
            ctx,
            state,
            scope,
            n,
            parent.0.as_deref(),
            carry.take(),
            path,
        );
        node = parent;
    }
}

/// Leaves a node: its handle and its parent's are given, had back if they had to be
/// closed, when the walk keeps handles: its own from `carry` (opened when its last
/// child was left) or reopened from an ancestor; its parent's through `..`, checked, one
/// call a level, so that a deep chain is left in linear time. Returns the parent's
/// handle if it had to be opened. `path` starts with the node's path.
fn leave<V: Visitor>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    scope: &Scope<'_, Job<V::State>>,
    n: Node<V::State>,
    parent: Option<&Node<V::State>>,
    carry: Option<Dir>,
    path: &[u8],
) -> Option<Dir> {
    let mut own = carry.filter(|_| n.handle.is_none());
    let mut up = None;
    if ctx.opts.keep_handles {
        if n.handle.is_none() && own.is_none() {
            match reopen(&n, parent) {
                Ok(d) => own = Some(d),
                Err(e) => {
                    let err = Error::io(bytes_to_path(path[..n.path_len].to_vec()), n.depth, e);
                    report(state, scope, err, parent.map(|p| &p.state));
                }
            }
        }
        if let Some(p) = parent.filter(|p| p.handle.is_none()) {
            let from = n.dir().or(own.as_ref());
            let climbed = match (from, p.id) {
                (Some(d), Some(id)) if !n.via_link => node::open_parent(d, id),
                _ => None,
            };
            up = match climbed {
                Some(d) => Some(d),
                None => match reopen(p, p.parent.0.as_deref()) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        let err = Error::io(bytes_to_path(path[..p.path_len].to_vec()), p.depth, e);
                        report(state, scope, err, Some(&p.state));
                        None
                    }
                },
            };
        }
    }
    if scope.is_stopped() {
        // The visitor said to stop when told what failed.
        return None;
    }
    let Node {
        name,
        path_len,
        depth,
        handle,
        state: dir_state,
        ..
    } = n;
    let (handle, own) = if ctx.opts.close_before_leave {
        drop((handle, own));
        (None, None)
    } else {
        (handle, own)
    };
    let event = DirEvent {
        path: &path[..path_len],
        name: (depth > 0).then_some(&name[..]),
        depth,
        dir: handle.as_ref().map(|p| &p.handle.dir).or(own.as_ref()),
        parent: parent.and_then(|p| p.dir()).or(up.as_ref()),
        listing: None,
    };
    let parent_state = parent.map(|p| &p.state);
    in_visitor(scope, &ctx.opts, || {
        state.visitor.leave(&event, dir_state, parent_state)
    });
    up
}

/// Runs the visitor's call `f`, its time counted as time in the file system where the
/// visitor waits on it ([`WalkBuilder::visitor_waits`]).
fn in_visitor<J, T>(scope: &Scope<'_, J>, opts: &Options, f: impl FnOnce() -> T) -> T {
    if opts.visitor_waits { scope.io(f) } else { f() }
}

/// Opens a node's directory again from its nearest ancestor whose handle is kept, one
/// component at a time, checked against its recorded identity.
fn reopen<S>(n: &Node<S>, parent: Option<&Node<S>>) -> io::Result<Dir> {
    let mut below = vec![n];
    let mut cur = parent;
    while let Some(p) = cur {
        if let Some(dir) = p.dir() {
            let components = below
                .iter()
                .rev()
                .map(|b| (&b.name[..b.name.len() - 1], b.via_link));
            return node::reopen(dir, components, n.id);
        }
        below.push(p);
        cur = p.parent.0.as_deref();
    }
    Err(io::Error::other(
        "no open ancestor to reopen the directory from",
    ))
}
