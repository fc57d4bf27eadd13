//! Read-ahead for the sorted walk: worker threads read the directories the walker will
//! enter next, so that a sorted, depth-first, streaming walk uses several cores.
//!
//! Each directory read (by a worker or by the walker) queues its subdirectories as one
//! *group*: its sorted subdirectories, one after another. A group stands for a run of
//! the walk's order (depth-first with sorted names), and the runs of two groups never
//! overlap, so the groups wait on a stack ordered by the next directory of each: the
//! workers take the directory the walker will want soonest from the top, and a new
//! group almost always goes on top (below it only when reads finish out of order).
//! A directory's place in the order is its *key*: the index of each of its ancestors
//! among its siblings, from the root down.
//!
//! A worker opens a directory through its parent's handle where one is shared, else
//! from the root's handle in one call (`openat2`, no symbolic links unless the walk
//! follows them); it reads, sorts and types its entries, and queues its subdirectories
//! in turn. At most `window` finished or running reads wait for the walker; the walker
//! takes its directory when finished, reads the next one in line (or waits) while a
//! worker reads it, and reads it itself when no worker has started it. Nothing the
//! walker reports depends on who read a directory.
//!
//! With the default thread count, the walker adds workers (doubling, up to a cap) when
//! the time spent in reads outgrows the CPU time used, as the pool does: on a cold
//! cache the disk wants many reads in flight.

use super::Options;
use super::listing::Listing;
use super::node::Handle;
use super::pool::DiskWatch;
use crate::sys::{Dir, DirBuf, FileType, StatMask};
use std::cmp::Ordering;
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest relative path a worker opens in one call (below `PATH_MAX`); deeper
/// directories are read by the walker itself, through its handles.
const MAX_REL: usize = 4000;

/// How far the workers read ahead of the walker, at most: 4096 directories read or
/// being read, holding 128 Ki entries (about 5 MiB).
pub(crate) const WINDOW: (usize, usize) = (4096, 1 << 17);

/// Listings the walker keeps to give back at its next visit to the shared state.
const RETURNED: usize = 16;

/// Where a queued directory's read is tracked: an index into the slots and the
/// generation of that slot, so a slot used again is never mistaken for an older one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct SlotId {
    index: u32,
    generation: u32,
}

impl SlotId {
    /// No slot: the directory was not queued.
    pub(crate) const NONE: SlotId = SlotId {
        index: u32::MAX,
        generation: 0,
    };
}

/// A directory read ahead.
pub(crate) struct Ready {
    pub(crate) list: Listing,
    pub(crate) id: Option<(u64, u64)>,
    /// Reading failed part way (what was read is in `list`).
    pub(crate) read_error: Option<io::Error>,
}

/// The subdirectories of one directory, queued together.
struct Group {
    /// The directory's key; a child's key adds its index in the directory's listing.
    key: Arc<[u32]>,
    /// The directory's path, ending with `/`.
    path: Vec<u8>,
    /// The children's names, each followed by a NUL.
    names: Vec<u8>,
    children: Vec<Child>,
    /// The directory's handle, where one is shared.
    dir: Option<Arc<Handle>>,
    /// The children's depth.
    depth: usize,
    root: Arc<Root>,
}

struct Child {
    /// Where the name starts in the group's `names`.
    name: u32,
    /// The child's index in its directory's listing.
    index: u32,
    slot: SlotId,
}

impl Group {
    fn name(&self, c: &Child) -> &CStr {
        CStr::from_bytes_until_nul(&self.names[c.name as usize..]).expect("NUL-terminated")
    }
}

/// A group waiting on the stack, and the next of its children to hand out.
struct Waiting {
    group: Arc<Group>,
    next: usize,
}

impl Waiting {
    /// Orders by the next child to hand out (the key of the whole rest of the group).
    fn cmp_next(&self, o: &Waiting) -> Ordering {
        let a = self.group.children[self.next].index;
        let b = o.group.children[o.next].index;
        self.group
            .key
            .iter()
            .chain([&a])
            .cmp(o.group.key.iter().chain([&b]))
    }
}

enum Slot {
    Free,
    /// Waiting for a worker: its group.
    Queued(Arc<Group>),
    Running,
    Done(io::Result<Ready>),
    /// The walker took it before any worker started it.
    Claimed,
    /// The walker will not enter it while a worker reads it: the worker drops it.
    Discarded,
}

struct SlotEntry {
    generation: u32,
    slot: Slot,
}

/// The directories queued and not yet taken by the walker, by [`SlotId`].
#[derive(Default)]
struct Slots {
    entries: Vec<SlotEntry>,
    free: Vec<u32>,
}

impl Slots {
    fn insert(&mut self, slot: Slot) -> SlotId {
        match self.free.pop() {
            Some(i) => {
                let e = &mut self.entries[i as usize];
                e.slot = slot;
                SlotId {
                    index: i,
                    generation: e.generation,
                }
            }
            None => {
                self.entries.push(SlotEntry {
                    generation: 0,
                    slot,
                });
                SlotId {
                    index: (self.entries.len() - 1) as u32,
                    generation: 0,
                }
            }
        }
    }

    fn entry(&self, id: SlotId) -> Option<&SlotEntry> {
        let e = self.entries.get(id.index as usize)?;
        (e.generation == id.generation && !matches!(e.slot, Slot::Free)).then_some(e)
    }

    fn get_mut(&mut self, id: SlotId) -> Option<&mut Slot> {
        let e = self.entries.get_mut(id.index as usize)?;
        (e.generation == id.generation && !matches!(e.slot, Slot::Free)).then_some(&mut e.slot)
    }

    fn remove(&mut self, id: SlotId) -> Option<Slot> {
        self.entry(id)?;
        let e = &mut self.entries[id.index as usize];
        e.generation = e.generation.wrapping_add(1);
        self.free.push(id.index);
        Some(std::mem::replace(&mut e.slot, Slot::Free))
    }
}

/// What the walker is to do for a directory.
pub(crate) enum Take {
    /// A worker read it.
    Ready(io::Result<Ready>),
    /// No worker started it: read it here, from the parent's handle when one is given.
    Yourself(Option<Arc<Handle>>),
}

/// The root being walked: a handle for the workers, where paths below it start, and
/// its device (for `same_file_system`).
pub(crate) struct Root {
    pub(crate) dir: Dir,
    pub(crate) rel: usize,
    pub(crate) dev: u64,
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

/// The key of the `index`th entry of the directory whose key is `parent`.
pub(crate) fn child_key(parent: &[u32], index: usize) -> Arc<[u32]> {
    parent.iter().copied().chain([index as u32]).collect()
}

impl ReadAhead {
    /// Starts `threads` workers (growing up to `max_threads` while reads wait on the
    /// disk) reading ahead within `opts.hooks.ahead_window`, holding at most `budget` handles.
    pub(crate) fn new(
        opts: &Options,
        threads: usize,
        max_threads: usize,
        budget: usize,
    ) -> ReadAhead {
        let (window, max_held) = opts.hooks.ahead_window;
        let max_threads = max_threads.max(threads);
        let shared = Arc::new(Shared {
            open: Arc::new(AtomicUsize::new(0)),
            // Of the handles this may hold, each worker holds one while it reads and the
            // root's is one more: the rest may be shared.
            share_limit: budget.saturating_sub(max_threads + 1),
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
                free: Vec::new(),
                trash: Vec::new(),
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            window: window.max(1),
            max_held: max_held.max(1),
            opts: opts.clone(),
        });
        let mut ahead = ReadAhead {
            buf: DirBuf::with_capacity(opts.buf_size),
            path: Vec::new(),
            shared,
            workers: Vec::new(),
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

    fn spawn(&mut self, n: usize) {
        for _ in 0..n {
            let shared = self.shared.clone();
            self.workers
                .push(std::thread::spawn(move || worker(&shared)));
        }
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

    /// The root being walked now (`None`: read nothing ahead for it); returns the key
    /// of the root's listing.
    pub(crate) fn set_root(&mut self, root: Option<Root>) -> Arc<[u32]> {
        self.root = root.map(Arc::new);
        self.roots += 1;
        Arc::from([self.roots])
    }

    /// Queues the subdirectories of a directory the walker read itself (`list.key` is
    /// its key), recording their slots in `list`.
    pub(crate) fn queue_children(&mut self, path: &[u8], depth: usize, list: &mut Listing) {
        let Some(root) = &self.root else {
            return;
        };
        let Some(group) = prepare(&self.shared.opts, root, path, depth, list, None) else {
            return;
        };
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        push_group(&mut st, group, list);
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

    /// The directory queued in `slot`, if a worker read it (waiting while one reads
    /// it); [`Take::Yourself`] when the walker must read it itself.
    pub(crate) fn take(&mut self, slot: SlotId) -> Take {
        self.grow();
        if slot == SlotId::NONE {
            return Take::Yourself(None);
        }
        let mut spins = 0;
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.shared.window.saturating_sub(st.free.len());
        // Keep a few for the walker's own reads.
        let n = self.returned.len().saturating_sub(4).min(room);
        st.free.extend(self.returned.drain(..n));
        loop {
            match st.slots.get_mut(slot) {
                None | Some(Slot::Free | Slot::Claimed | Slot::Discarded) => {
                    release(st, &mut self.trash);
                    return Take::Yourself(None);
                }
                Some(s @ Slot::Queued(_)) => {
                    let Slot::Queued(group) = std::mem::replace(s, Slot::Claimed) else {
                        unreachable!()
                    };
                    let dir = group.dir.clone();
                    st.trash.push(group);
                    release(st, &mut self.trash);
                    return Take::Yourself(dir);
                }
                Some(Slot::Running) => {
                    // While a worker reads it, read the next directory in line here
                    // rather than wait idle.
                    if let Some(mut job) = next_request(&mut st, &self.shared) {
                        release(st, &mut self.trash);
                        let (result, children) =
                            run_request(&self.shared, &mut job, &mut self.buf, &mut self.path);
                        st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                        hand_in(&mut st, &self.shared, job, result, children);
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
    #[cfg(test)]
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

    /// The number of workers now (tests).
    #[cfg(test)]
    pub(crate) fn workers(&self) -> usize {
        self.workers.len()
    }

    /// Forgets a directory the walker will not enter, and what was read below it: the
    /// work is that of the directories read ahead under it, whatever else is queued.
    pub(crate) fn discard(&mut self, slot: SlotId) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut todo = vec![slot];
        while let Some(id) = todo.pop() {
            match st.slots.get_mut(id) {
                Some(s @ Slot::Queued(_)) => {
                    if let Slot::Queued(group) = std::mem::replace(s, Slot::Claimed) {
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
                        todo.extend(ready.list.slots.iter().filter(|&&s| s != SlotId::NONE));
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
        {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            st.shutdown = true;
            st.stack.clear();
            st.slots = Slots::default();
        }
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Makes the group of the subdirectories listed in `list`, the listing of the
/// directory at `path` (its key in `list.key`), without the lock; `None` when there
/// is nothing to queue.
fn prepare(
    opts: &Options,
    root: &Arc<Root>,
    path: &[u8],
    depth: usize,
    list: &Listing,
    dir: Option<Arc<Handle>>,
) -> Option<Group> {
    if depth + 1 >= opts.max_depth {
        return None;
    }
    let is_child =
        |item: &super::listing::Item| item.file_type == FileType::Dir && !list.is_error(item);
    let (count, bytes) = list
        .items
        .iter()
        .filter(|item| is_child(item))
        .fold((0, 0), |(n, b), item| {
            (n + 1, b + list.c_name(item).to_bytes_with_nul().len())
        });
    if count == 0 {
        return None;
    }
    let mut names = Vec::with_capacity(bytes);
    let mut children = Vec::with_capacity(count);
    let dir_len = path.len() + usize::from(!path.ends_with(b"/"));
    for (i, item) in list.items.iter().enumerate() {
        // A mount point the walk does not enter is not read either.
        if !is_child(item) || opts.off_fs(list.id(item), root.dev) {
            continue;
        }
        let name = list.c_name(item).to_bytes_with_nul();
        if dir.is_none() && dir_len + name.len() - root.rel > MAX_REL {
            continue;
        }
        children.push(Child {
            name: names.len() as u32,
            index: i as u32,
            slot: SlotId::NONE,
        });
        names.extend_from_slice(name);
    }
    if children.is_empty() {
        return None;
    }
    let mut dir_path = Vec::with_capacity(dir_len);
    dir_path.extend_from_slice(path);
    if !dir_path.ends_with(b"/") {
        dir_path.push(b'/');
    }
    Some(Group {
        key: list.key.clone().unwrap_or_else(|| Arc::from([])),
        path: dir_path,
        names,
        children,
        dir,
        depth: depth + 1,
        root: root.clone(),
    })
}

/// Queues a group made by [`prepare`] from `list` (under the lock), and records its
/// children's slots in `list`.
fn push_group(st: &mut State, mut group: Group, list: &mut Listing) {
    list.slots.resize(list.items.len(), SlotId::NONE);
    for c in &mut group.children {
        c.slot = st.slots.insert(Slot::Claimed);
        list.slots[c.index as usize] = c.slot;
    }
    let group = Arc::new(group);
    for c in &group.children {
        if let Some(slot) = st.slots.get_mut(c.slot) {
            *slot = Slot::Queued(group.clone());
        }
    }
    let new = Waiting { group, next: 0 };
    // Reads finish nearly in order: the new group almost always goes on top. Each group
    // passed on the way down is first moved past the children the walker claimed (their
    // subdirectories may be this very group).
    let mut at = st.stack.len();
    while at > 0 {
        let State {
            stack,
            slots,
            trash,
            ..
        } = &mut *st;
        if !skip_claimed(slots, &mut stack[at - 1]) {
            trash.push(stack.remove(at - 1).group);
        } else if stack[at - 1].cmp_next(&new) == Ordering::Greater {
            break;
        }
        at -= 1;
    }
    st.stack.insert(at, new);
    #[cfg(test)]
    check_order(st);
}

/// Checks (in tests) that the stack is in the walk's order, each group by the first of
/// its children still queued: the top group holds the directory wanted soonest.
#[cfg(test)]
fn check_order(st: &State) {
    let next = |w: &Waiting| -> Option<Vec<u32>> {
        let c = w.group.children[w.next..].iter().find(|c| {
            matches!(
                st.slots.entry(c.slot).map(|e| &e.slot),
                Some(Slot::Queued(_))
            )
        })?;
        Some(w.group.key.iter().copied().chain([c.index]).collect())
    };
    let keys: Vec<_> = st.stack.iter().filter_map(next).collect();
    assert!(
        keys.windows(2).all(|w| w[0] > w[1]),
        "read-ahead stack out of order: {keys:?}"
    );
}

/// Moves a waiting group past the children the walker claimed (it reads them itself;
/// their own subdirectories come before the group's next child in the walk's order);
/// says whether a child is left to hand out.
fn skip_claimed(slots: &mut Slots, w: &mut Waiting) -> bool {
    while let Some(c) = w.group.children.get(w.next) {
        // A child not handed out yet is queued, or claimed by the walker.
        if let Some(Slot::Queued(_)) = slots.get_mut(c.slot) {
            return true;
        }
        slots.remove(c.slot);
        w.next += 1;
    }
    false
}

/// A directory taken to read: its group and place in it, and a listing to fill.
struct Job {
    group: Arc<Group>,
    child: usize,
    list: Listing,
}

impl Job {
    fn slot(&self) -> SlotId {
        self.group.children[self.child].slot
    }
}

/// Takes the directory the walker will want soonest, if the window has room.
fn next_request(st: &mut State, shared: &Shared) -> Option<Job> {
    if !shared.has_room(st) {
        return None;
    }
    let State {
        stack,
        slots,
        trash,
        busy,
        free,
        ..
    } = st;
    loop {
        let top = stack.last_mut()?;
        if !skip_claimed(slots, top) {
            trash.push(stack.pop().expect("a top").group);
            continue;
        }
        let child = top.next;
        top.next += 1;
        let slot = top.group.children[child].slot;
        let group = if top.next == top.group.children.len() {
            stack.pop().expect("a top").group
        } else {
            top.group.clone()
        };
        if let Some(s) = slots.get_mut(slot) {
            *s = Slot::Running;
        }
        *busy += 1;
        return Some(Job {
            group,
            child,
            list: free.pop().unwrap_or_default(),
        });
    }
}

/// Reads a job's directory and prepares the group of its subdirectories (without the
/// lock), sharing its handle with them while the budget allows.
fn run_request(
    shared: &Shared,
    job: &mut Job,
    buf: &mut DirBuf,
    path: &mut Vec<u8>,
) -> (io::Result<Ready>, Option<Group>) {
    let list = std::mem::take(&mut job.list);
    let group = &job.group;
    let child = &group.children[job.child];
    let start = Instant::now();
    let result = read(&shared.opts, group, job.child, buf, path, list);
    shared
        .io_ns
        .fetch_add(start.elapsed().as_nanos() as u64, AtomicOrdering::Relaxed);
    match result {
        Ok((mut ready, dir)) => {
            ready.list.key = Some(child_key(&group.key, child.index as usize));
            if ready.read_error.is_some() {
                return (Ok(ready), None);
            }
            let dir = dir
                .and_then(|dir| Handle::share(dir, &shared.open, shared.share_limit, false).ok());
            path.clear();
            path.extend_from_slice(&group.path);
            path.extend_from_slice(group.name(child).to_bytes());
            let children = prepare(
                &shared.opts,
                &group.root,
                path,
                group.depth,
                &ready.list,
                dir,
            );
            (Ok(ready), children)
        }
        Err(e) => (Err(e), None),
    }
}

/// Hands in a read (under the lock): queues its subdirectories and marks it done, or
/// forgets it if it failed or was discarded meanwhile; wakes the walker if it waits.
fn hand_in(
    st: &mut State,
    shared: &Shared,
    job: Job,
    result: io::Result<Ready>,
    children: Option<Group>,
) {
    let slot = job.slot();
    let keep = matches!(st.slots.get_mut(slot), Some(Slot::Running));
    let mut unused = children;
    match result {
        Ok(mut ready) if keep => {
            if let Some(group) = unused.take() {
                push_group(st, group, &mut ready.list);
            }
            if let Some(s) = st.slots.get_mut(slot) {
                st.held += ready.list.items.len();
                *s = Slot::Done(Ok(ready));
            }
        }
        // Failed (the walker opens it itself, one component at a time, and reports what
        // it finds), or discarded meanwhile: forget it.
        _ => {
            st.slots.remove(slot);
            st.busy -= 1;
        }
    }
    if st.walker_waits {
        shared.done.notify_one();
    }
    // Dropped without the lock (the last reference closes a handle).
    st.trash.push(job.group);
    if let Some(group) = unused {
        st.trash.push(Arc::new(group));
    }
}

fn worker(shared: &Shared) {
    let mut buf = DirBuf::with_capacity(shared.opts.buf_size);
    let mut path = Vec::new();
    let mut trash = Vec::new();
    // The lock is taken once per directory: to hand in a read and take the next.
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if st.shutdown {
            return;
        }
        let Some(mut job) = next_request(&mut st, shared) else {
            if !st.trash.is_empty() {
                release(st, &mut trash);
                st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            st.idle += 1;
            if !st.stack.is_empty() {
                st.held_back = true;
            }
            st = shared.work.wait(st).unwrap_or_else(|e| e.into_inner());
            st.idle -= 1;
            continue;
        };
        release(st, &mut trash);
        let (result, children) = run_request(shared, &mut job, &mut buf, &mut path);
        st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.shutdown {
            return;
        }
        hand_in(&mut st, shared, job, result, children);
        // Another idle worker is needed only if more is queued than this one takes next.
        if st.idle > 0 && !st.held_back && !st.stack.is_empty() && shared.has_room(&st) {
            shared.work.notify_one();
        }
    }
}

/// Reads the `child`th directory of `group` as the walker would: opened through the
/// parent's handle or from the root, identified when the walk needs it, read, sorted,
/// typed.
fn read(
    opts: &Options,
    group: &Group,
    child: usize,
    buf: &mut DirBuf,
    path: &mut Vec<u8>,
    mut list: Listing,
) -> io::Result<(Ready, Option<Dir>)> {
    let name = group.name(&group.children[child]);
    let dir = match &group.dir {
        Some(p) if opts.follow_links => p.dir.open_at_follow(name)?,
        Some(p) => p.dir.open_at(name)?,
        None => {
            path.clear();
            path.extend_from_slice(&group.path[group.root.rel..]);
            path.extend_from_slice(name.to_bytes_with_nul());
            let rel = CStr::from_bytes_with_nul(path)
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            group.root.dir.open_beneath(rel, opts.follow_links)?
        }
    };
    let id = if opts.follow_links || opts.same_file_system {
        let m = dir.stat(StatMask::TYPE)?;
        Some((m.dev, m.ino))
    } else {
        None
    };
    list.clear();
    if opts.off_fs(id, group.root.dev) {
        // Not entered: the walker only checks the identity.
        return Ok((
            Ready {
                list,
                id,
                read_error: None,
            },
            None,
        ));
    }
    // The walk sorts: it reads ahead only then.
    let read_error = list.fill(&dir, buf, opts).err();
    let dir = list.last_dir().is_some().then_some(dir);
    Ok((
        Ready {
            list,
            id,
            read_error,
        },
        dir,
    ))
}
