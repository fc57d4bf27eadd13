//! Read-ahead for the sorted walk: worker threads read the directories the walker will
//! enter next, so that a sorted, depth-first, streaming walk uses several cores.
//!
//! Each directory read (by a worker or by the walker) queues its subdirectories as one
//! *group*: its sorted subdirectories, one after another. A group stands for a run of
//! the walk's order (depth-first with sorted names), and the runs of two groups never
//! overlap, so the groups wait on a stack ordered by the next directory of each: the
//! workers take the directory the walker will want soonest from the top, and a new
//! group almost always goes on top (below it only when reads finish out of order).
//! A directory's place in the order is its *key*: its index among its siblings, below
//! its parent's key (one node each, linked to the parent's: see [`order`]).
//!
//! A worker opens a directory relative to a handle: its parent's where one is shared,
//! else the parent's opened by path from the root's handle (`openat2`, no symbolic
//! links unless the walk follows them) and checked to be the directory read there. It
//! reads, sorts and types its entries, and queues its subdirectories in turn. At most
//! `window` finished or running reads wait for the walker; the walker takes its
//! directory when finished, with its identity to check any later reopening, reads the
//! next one in line (or waits) while a worker reads it, and reads it itself when no
//! worker has started it. Nothing the walker reports depends on who read a directory.
//!
//! With the default thread count, the walker adds workers (doubling, up to a cap) when
//! the time spent in reads outgrows the CPU time used, as the pool does: on a cold
//! cache the disk wants many reads in flight. A worker that cannot be started means
//! fewer workers (none at worst: the walker reads everything itself).
//!
//! The parts: [`slots`] tracks each queued directory, [`order`] keeps the walk's order
//! (keys, groups, the stack), [`worker`] does one read from start to end.

mod order;
mod slots;
mod worker;

use super::budget::SortedShare;
use super::gate::{DirRules, Gate};
use super::listing::Listing;
use super::node::Handle;
use super::pool::DiskWatch;
use super::{Filter, Options};
use crate::sys::{Dir, DirBuf};
use order::{Group, Key, KeyNode, Waiting, prepare, push_group};
use slots::SlotId;

/// A queued directory's slot, waiting in its group.
type Slot = slots::Slot<Arc<order::Group>>;
/// The slots of the directories queued.
type Slots = slots::Slots<Arc<order::Group>>;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;
use worker::{hand_in, next_request, run_request};

/// Longest relative path a worker opens in one call (below `PATH_MAX`); deeper
/// directories are read by the walker itself, through its handles.
const MAX_REL: usize = 4000;

/// How far the workers read ahead of the walker, at most: 4096 directories read or
/// being read, holding 128 Ki entries (about 5 MiB).
pub(crate) const WINDOW: (usize, usize) = (4096, 1 << 17);

/// Listings the walker keeps to give back at its next visit to the shared state.
const RETURNED: usize = 16;

/// What the read-ahead knows of a directory the walker entered, kept beside its listing
/// and handed back to [`ReadAhead::take`] and [`ReadAhead::discard`] for its entries:
/// its place in the walk's order, and the slot of each subdirectory queued.
#[derive(Default)]
pub(crate) struct AheadInfo {
    /// `None` when nothing is read ahead for the directory's root.
    key: Option<Key>,
    /// By the index of the entry in the listing; empty when none was queued.
    slots: Vec<SlotId>,
}

impl AheadInfo {
    /// The read-ahead slot of the `index`th entry ([`SlotId::NONE`] if it has none).
    fn slot(&self, index: usize) -> SlotId {
        self.slots.get(index).copied().unwrap_or(SlotId::NONE)
    }
}

/// A directory read ahead.
pub(crate) struct Ready {
    pub(crate) list: Listing,
    /// Its (device, inode), to check a later reopening by name against.
    pub(crate) id: (u64, u64),
    /// Reading failed part way (what was read is in `list`).
    pub(crate) read_error: Option<io::Error>,
    /// What the walker keeps for it (see [`AheadInfo`]).
    pub(crate) ahead: AheadInfo,
    /// Beside a gate, its rules, made from its parent's as the walker would make them,
    /// and what kept them from being whole (for the walker to report as it enters).
    pub(crate) rules: Option<(DirRules, Vec<super::Error>)>,
}

/// What the walker is to do for a directory.
pub(crate) enum Take {
    /// A worker read it (or failed in a way to report: a panic).
    Ready(io::Result<Ready>),
    /// No worker started it: read it here, from the parent's handle when one is given,
    /// then queue its subdirectories with the [`AheadInfo`] given.
    Yourself(Option<Arc<Handle>>, AheadInfo),
}

/// The root being walked: a handle for the workers, where paths below it start, and
/// its device (for `same_file_system`).
pub(crate) struct Root {
    pub(crate) dir: Dir,
    /// Its path as given (the start of every entry's path below it).
    pub(crate) path: Box<[u8]>,
    pub(crate) rel: usize,
    pub(crate) dev: u64,
}

impl Root {
    /// The full path of the directory whose path below the root is `rel` (components
    /// separated by `/`), as the walker makes it.
    pub(crate) fn path_of(&self, rel: &[u8]) -> Vec<u8> {
        let mut path = Vec::with_capacity(self.path.len() + rel.len() + 1);
        path.extend_from_slice(&self.path);
        for c in rel.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
            if !path.is_empty() && !super::ends_with_sep(&path) {
                path.push(super::sep(&path));
            }
            path.extend_from_slice(c);
        }
        path
    }
}

struct State {
    /// Groups with children not yet handed out; the top one holds the soonest wanted.
    stack: Vec<Waiting>,
    slots: Slots,
    /// Reads running or finished and not yet taken, and the entries of those finished.
    busy: usize,
    held: usize,
    /// A worker waits for room in the window (not for work).
    held_back: bool,
    /// Workers waiting for work, and whether the walker waits for a read.
    idle: usize,
    walker_waits: bool,
    shutdown: bool,
    /// A worker ended by a panic outside a read: a read running may never be handed in,
    /// so the walker waits for none.
    lost_worker: bool,
    /// Listings the walker is done with, for the workers to fill again.
    free: Vec<Listing>,
    /// Groups let go of under the lock, for the next thread that releases it to drop
    /// (see [`release`]).
    trash: Vec<Arc<Group>>,
}

/// Releases the lock, then drops the groups let go of under it: the last reference to a
/// group closes its directory's handle, not a call to make while others wait for the
/// lock. `spare` is the caller's own vector, swapped with the shared one.
fn release(mut st: MutexGuard<'_, State>, spare: &mut Vec<Arc<Group>>) {
    if st.trash.is_empty() {
        return;
    }
    std::mem::swap(&mut st.trash, spare);
    drop(st);
    spare.clear();
}

struct Shared {
    /// Handles shared by queued subdirectories, and how many may be.
    open: Arc<AtomicUsize>,
    share_limit: usize,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    /// At most this many reads are running or wait for the walker, holding at most
    /// `max_held` entries: memory stays bounded however slowly the walker goes.
    window: usize,
    max_held: usize,
    opts: Options,
    /// The walk's filter: a directory it leaves out is not read ahead either.
    filter: Option<Filter>,
    /// The walk's gate: each directory read ahead has its rules made, and a directory
    /// they leave out is not read ahead.
    gate: Option<Arc<dyn Gate>>,
    /// Time spent reading directories, in all threads (see [`ReadAhead::grow`]).
    io_ns: AtomicU64,
}

impl Shared {
    fn has_room(&self, st: &State) -> bool {
        st.busy < self.window && st.held < self.max_held
    }

    /// Whether a worker held back by a full window should go on: once a quarter of the
    /// window is free again, so that it is woken for many reads, not for each.
    fn wake_held_back(&self, st: &State) -> bool {
        st.held_back
            && st.busy <= self.window - self.window / 4
            && st.held <= self.max_held - self.max_held / 4
    }
}

/// The read-ahead workers of one sorted walk.
pub(crate) struct ReadAhead {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// Why a worker could not be started, if one could not (the first reason).
    spawn_error: Option<io::Error>,
    root: Option<Arc<Root>>,
    /// Counts the roots, so that each root's keys differ from the last one's.
    roots: u32,
    /// The walker's buffers, for the reads it does while it would wait.
    buf: DirBuf,
    path: Vec<u8>,
    /// Listings the walker is done with, handed over at its next lock.
    returned: Vec<Listing>,
    /// The walker's side of [`release`].
    trash: Vec<Arc<Group>>,
    /// Whether and how far the workers may grow (the default thread count).
    growth: Option<Growth>,
}

/// What [`ReadAhead::grow`] looks at: the most workers, and whether reads wait.
struct Growth {
    max: usize,
    watch: DiskWatch,
}

impl ReadAhead {
    /// Starts `threads` workers (growing up to `max_threads` while reads wait on the
    /// disk) reading ahead within `opts.hooks.ahead_window()`, within the read-ahead's
    /// share of the handle budget. Workers that cannot be started are done without
    /// (see [`ReadAhead::spawn_error`]).
    pub(crate) fn new(
        opts: &Options,
        filter: Option<Filter>,
        gate: Option<Arc<dyn Gate>>,
        threads: usize,
        max_threads: usize,
        share: SortedShare,
    ) -> ReadAhead {
        let (window, max_held) = opts.hooks.ahead_window();
        let max_threads = max_threads.max(threads);
        let shared = Arc::new(Shared {
            open: Arc::new(AtomicUsize::new(0)),
            share_limit: share.ahead_shared(max_threads),
            io_ns: AtomicU64::new(0),
            state: Mutex::new(State {
                stack: Vec::new(),
                slots: Slots::default(),
                busy: 0,
                held: 0,
                held_back: false,
                idle: 0,
                walker_waits: false,
                shutdown: false,
                lost_worker: false,
                free: Vec::new(),
                trash: Vec::new(),
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            window: window.max(1),
            max_held: max_held.max(1),
            opts: opts.clone(),
            filter,
            gate,
        });
        let mut ahead = ReadAhead {
            buf: DirBuf::with_capacity(opts.buf_size),
            path: Vec::new(),
            shared,
            workers: Vec::new(),
            spawn_error: None,
            root: None,
            roots: 0,
            returned: Vec::new(),
            trash: Vec::new(),
            growth: (max_threads > threads).then(|| Growth {
                max: max_threads,
                watch: DiskWatch::new(0),
            }),
        };
        ahead.spawn(threads);
        ahead
    }

    /// Starts `n` more workers; at the first that cannot be started, keeps the reason
    /// and starts no more, now or later.
    fn spawn(&mut self, n: usize) {
        for _ in 0..n {
            let shared = self.shared.clone();
            let started = if self.workers.len() < self.shared.opts.hooks.ahead_spawn_limit() {
                super::pool::room_for_thread().and_then(|()| {
                    std::thread::Builder::new().spawn(move || worker::worker(&shared))
                })
            } else {
                Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "no more threads (a test's limit)",
                ))
            };
            match started {
                Ok(w) => self.workers.push(w),
                Err(e) => {
                    self.spawn_error.get_or_insert(e);
                    self.growth = None;
                    return;
                }
            }
        }
    }

    /// Why a worker could not be started, if one could not: the walk goes on with
    /// those that were (or with none: the walker then reads every directory itself).
    pub(crate) fn take_spawn_error(&mut self) -> Option<io::Error> {
        self.spawn_error.take()
    }

    pub(crate) fn spawn_error(&self) -> Option<&io::Error> {
        self.spawn_error.as_ref()
    }

    /// Adds workers (doubling, up to the most allowed) when reads waited on the disk in
    /// the last 10 ms or more (the pool's rule: [`DiskWatch`]) and directories wait to
    /// be read.
    fn grow(&mut self) {
        let Some(g) = &mut self.growth else {
            return;
        };
        if g.watch.elapsed() < Duration::from_millis(10)
            || !g
                .watch
                .waits(self.shared.io_ns.load(AtomicOrdering::Relaxed))
        {
            return;
        }
        let queued = {
            let st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            !st.stack.is_empty() && self.shared.has_room(&st)
        };
        if queued {
            let n = self.workers.len().max(1).min(g.max - self.workers.len());
            if self.workers.len() + n >= g.max {
                self.growth = None;
            }
            self.spawn(n);
        }
    }

    /// The root being walked now (`None`: read nothing ahead for it); returns what the
    /// walker keeps for the root's listing.
    pub(crate) fn set_root(&mut self, root: Option<Root>) -> AheadInfo {
        self.root = root.map(Arc::new);
        self.roots += 1;
        AheadInfo {
            key: Some(KeyNode::root(self.roots)),
            slots: Vec::new(),
        }
    }

    /// Queues the subdirectories of a directory the walker read itself: `list` is its
    /// listing, `id` its (device, inode) (needed to queue any below the root's), `info`
    /// what [`ReadAhead::take`] or [`ReadAhead::set_root`] gave for it, where their
    /// slots are recorded; `rules`, its rules beside a gate.
    pub(crate) fn queue_children(
        &mut self,
        path: &[u8],
        depth: usize,
        list: &Listing,
        id: Option<(u64, u64)>,
        info: &mut AheadInfo,
        rules: Option<&DirRules>,
    ) {
        let (Some(root), Some(key)) = (&self.root, &info.key) else {
            return;
        };
        if self.workers.is_empty() {
            return;
        }
        // The root's path is followed by a `/` (unless it ends with one) where the path
        // below it starts.
        let rel = path.get(root.rel..).unwrap_or_default();
        let (opts, filter) = (&self.shared.opts, self.shared.filter.as_ref());
        let gate = self.shared.gate.as_deref().map(|g| (g, rules));
        let Some(group) = prepare(
            opts,
            filter,
            gate,
            root,
            Some(rel),
            depth,
            list,
            key,
            id,
            None,
        ) else {
            return;
        };
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        push_group(&mut st, group, info, list.items.len());
        // Workers held back wait for room, not for work.
        let wake = st.idle > 0 && self.shared.has_room(&st);
        if wake {
            st.held_back = false;
        }
        release(st, &mut self.trash);
        if wake {
            self.shared.work.notify_all();
        }
    }

    /// The `index`th entry of the directory the walker keeps `parent` for, if a worker
    /// read it (waiting while one reads it); [`Take::Yourself`] when the walker must
    /// read it itself.
    pub(crate) fn take(&mut self, parent: &AheadInfo, index: usize) -> Take {
        self.grow();
        let own = || AheadInfo {
            key: parent.key.as_ref().map(|k| KeyNode::child(k, index)),
            slots: Vec::new(),
        };
        let slot = parent.slot(index);
        if slot == SlotId::NONE {
            return Take::Yourself(None, own());
        }
        let mut spins = 0;
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.shared.window.saturating_sub(st.free.len());
        // Keep a few for the walker's own reads.
        let n = self.returned.len().saturating_sub(4).min(room);
        st.free.extend(self.returned.drain(..n));
        loop {
            let lost = st.lost_worker;
            match st.slots.get_mut(slot) {
                None | Some(Slot::Free | Slot::Claimed | Slot::Discarded) => {
                    release(st, &mut self.trash);
                    return Take::Yourself(None, own());
                }
                Some(s @ Slot::Queued(..)) => {
                    let Slot::Queued(group, child) = std::mem::replace(s, Slot::Claimed) else {
                        unreachable!()
                    };
                    let dir = group.dir.clone();
                    let info = AheadInfo {
                        key: Some(group.children[child as usize].key.clone()),
                        slots: Vec::new(),
                    };
                    st.trash.push(group);
                    release(st, &mut self.trash);
                    return Take::Yourself(dir, info);
                }
                Some(s @ Slot::Running) if lost => {
                    // Its worker may be the one lost: read it here, and let a worker
                    // that does finish it drop it.
                    *s = Slot::Discarded;
                    release(st, &mut self.trash);
                    return Take::Yourself(None, own());
                }
                Some(Slot::Running) => {
                    // While a worker reads it, read the next directory in line here
                    // rather than wait idle.
                    if let Some(mut job) = next_request(&mut st, &self.shared) {
                        release(st, &mut self.trash);
                        let outcome =
                            run_request(&self.shared, &mut job, &mut self.buf, &mut self.path);
                        st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                        hand_in(&mut st, &self.shared, job, outcome);
                        continue;
                    }
                    // A read takes tens of microseconds: let the worker finish on this
                    // core before paying for a sleep and a wake-up.
                    if spins < 64 {
                        spins += 1;
                        release(st, &mut self.trash);
                        std::thread::yield_now();
                        st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                        continue;
                    }
                    st.walker_waits = true;
                    st = self.shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
                    st.walker_waits = false;
                }
                Some(Slot::Done(_)) => {
                    let Some(Slot::Done(r)) = st.slots.remove(slot) else {
                        unreachable!()
                    };
                    st.busy -= 1;
                    if let Ok(ready) = &r {
                        st.held -= ready.list.items.len();
                    }
                    let wake = self.shared.wake_held_back(&st);
                    if wake {
                        st.held_back = false;
                    }
                    release(st, &mut self.trash);
                    if wake {
                        self.shared.work.notify_all();
                    }
                    return Take::Ready(r);
                }
            }
        }
    }

    /// A listing to fill, from those the walker gave back.
    pub(crate) fn spare(&mut self) -> Option<Listing> {
        self.returned.pop()
    }

    /// Gives back a listing the walker is done with, for its memory.
    pub(crate) fn recycle(&mut self, list: Listing) {
        if self.returned.len() < RETURNED {
            self.returned.push(list);
        }
    }

    /// Reads finished and never taken nor forgotten, and the entries counted as held
    /// (tests: both are 0 once a walk is complete).
    #[cfg(all(test, unix))]
    pub(crate) fn left_over(&self) -> (usize, usize) {
        let st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let done = st
            .slots
            .entries
            .iter()
            .filter(|e| matches!(e.slot, Slot::Done(_)))
            .count();
        (done, st.held)
    }

    /// Counts a read the walker did itself, for [`ReadAhead::grow`].
    pub(crate) fn add_io(&self, took: Duration) {
        self.shared
            .io_ns
            .fetch_add(took.as_nanos() as u64, AtomicOrdering::Relaxed);
    }

    /// The number of workers now.
    pub(crate) fn workers(&self) -> usize {
        self.workers.len()
    }

    /// Forgets the `index`th entry of the directory the walker keeps `parent` for (a
    /// directory it will not enter), and what was read below it: the work is that of
    /// the directories read ahead under it, whatever else is queued.
    pub(crate) fn discard(&mut self, parent: &AheadInfo, index: usize) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut todo = vec![parent.slot(index)];
        while let Some(id) = todo.pop() {
            match st.slots.get_mut(id) {
                Some(s @ Slot::Queued(..)) => {
                    if let Slot::Queued(group, _) = std::mem::replace(s, Slot::Claimed) {
                        st.trash.push(group);
                    }
                }
                Some(s @ Slot::Running) => *s = Slot::Discarded,
                Some(Slot::Done(_)) => {
                    let Some(Slot::Done(r)) = st.slots.remove(id) else {
                        unreachable!()
                    };
                    st.busy -= 1;
                    if let Ok(ready) = r {
                        st.held -= ready.list.items.len();
                        // Its subdirectories were queued when it was read.
                        todo.extend(ready.ahead.slots.iter().filter(|&&s| s != SlotId::NONE));
                    }
                }
                _ => {}
            }
        }
        st.held_back = false;
        release(st, &mut self.trash);
        self.shared.work.notify_all();
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        let (stack, slots) = {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            st.shutdown = true;
            (std::mem::take(&mut st.stack), std::mem::take(&mut st.slots))
        };
        // Dropped without the lock (they close handles).
        drop((stack, slots));
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
