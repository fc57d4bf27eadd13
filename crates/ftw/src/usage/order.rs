//! du's order out of a parallel count: each directory after its contents, the entries
//! of a directory in the order its listing gave them, whatever worker finished first.
//!
//! Each directory whose line is told has a *node* here, holding what is to be told
//! from it in order: lines, and a place for each subdirectory to tell, reserved when
//! its directory's worker meets it (in listing order) and claimed by the subdirectory
//! when it is entered. The *cursor* is where the told output stands: what reaches its
//! node is told at the next drain; what reaches another node waits there until the
//! cursor comes (after everything before it was told). So only what waits on an
//! earlier sibling is held, never the tree.
//!
//! Each node has its own lock, so workers counting different directories never wait
//! for each other. One thread at a time drains: it moves the cursor, holding one
//! node's lock at a time, and tells what it passed after letting go (see
//! [`Order::with`]); a file's count in du's order and the additions of the nodes on the
//! cursor's way are the drainer's alone.

use super::{Listed, Stamp, Totals};
use crate::sys::FileType;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, Weak};

/// The types a held line may have, by their number in it.
const TYPES: [FileType; 8] = FileType::ALL;

fn put(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn get(buf: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Holds line `l` at the end of `buf`, packed (a few bytes and its path: a tree's
/// worth of `du -a` lines may wait on one slow directory).
pub(super) fn hold(buf: &mut Vec<u8>, l: &Listed<'_>) {
    put(buf, l.path.len() as u64);
    buf.extend_from_slice(l.path);
    put(buf, l.depth as u64);
    let kind = TYPES.iter().position(|&t| t == l.file_type).unwrap_or(7);
    let same = l.own == l.total;
    let times = l.latest.is_some() || l.own_latest.is_some();
    buf.push(kind as u8 | if same { 0x80 } else { 0 } | if times { 0x40 } else { 0 });
    let both = [l.total, l.own];
    for t in &both[..if same { 1 } else { 2 }] {
        put(buf, t.bytes);
        put(buf, t.apparent);
        put(buf, t.inodes);
    }
    if times {
        for t in [l.latest, l.own_latest] {
            let t = t.unwrap_or_default();
            // Zigzag: times before the epoch are negative.
            put(buf, ((t.secs << 1) ^ (t.secs >> 63)) as u64);
            put(buf, u64::from(t.nsec));
        }
    }
}

/// What a node's files of deferred count added when their turn came: to its total,
/// to its own (`du -S`), and their latest times.
#[derive(Clone, Copy, Default)]
pub(super) struct Adjust {
    pub(super) total: Totals,
    pub(super) own: Totals,
    pub(super) latest: Option<Stamp>,
    pub(super) own_latest: Option<Stamp>,
}

impl Adjust {
    fn apply(&self, l: &Listed<'_>) -> (Totals, Totals, Option<Stamp>, Option<Stamp>) {
        (
            l.total + self.total,
            l.own + self.own,
            l.latest.max(self.latest),
            l.own_latest.max(self.own_latest),
        )
    }
}

/// Tells `l` to `out`, with what `adj` adds to it.
fn tell_adjusted(l: &Listed<'_>, adj: Option<&Adjust>, out: &mut dyn Out) {
    match adj {
        Some(a) => {
            let (total, own, latest, own_latest) = a.apply(l);
            out.tell(&Listed {
                total,
                own,
                latest,
                own_latest,
                ..*l
            });
        }
        None => out.tell(l),
    }
}

/// Where told lines go, and who says whether a file met again is met for the first
/// time in du's order (the set of files counted).
pub(super) trait Out {
    fn tell(&mut self, l: &Listed<'_>);
    fn first(&mut self, dev: u64, ino: u64) -> bool;
}

/// A file whose count waits for its turn in du's order: a name of a file with several
/// links (or, where every file is remembered, any file), counted only if no name of it
/// came before.
pub(super) struct Deferred {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) total: Totals,
    pub(super) latest: Option<Stamp>,
    /// In its node's directory itself (its own), not below.
    pub(super) own: bool,
    /// Its line, packed, if it has one (`du -a`).
    pub(super) line: Option<Vec<u8>>,
}

/// Batches of deferred files kept for their memory (each holds up to a thousand
/// files: made again for each, they cost more in the kernel's zeroed pages than the
/// rest of the count).
const SPARE_BATCHES: usize = 16;

/// Tells the line held in `buf` at `at`, and moves `at` past it.
fn tell_held(buf: &[u8], at: &mut usize, adj: Option<&Adjust>, out: &mut dyn Out) {
    let len = get(buf, at) as usize;
    let path = &buf[*at..*at + len];
    *at += len;
    let depth = get(buf, at) as usize;
    let kind = buf[*at];
    *at += 1;
    let mut totals = || Totals {
        bytes: get(buf, at),
        apparent: get(buf, at),
        inodes: get(buf, at),
    };
    let total = totals();
    let own = if kind & 0x80 != 0 { total } else { totals() };
    let mut time = || {
        (kind & 0x40 != 0).then(|| {
            let z = get(buf, at);
            Stamp {
                secs: (z >> 1) as i64 ^ -((z & 1) as i64),
                nsec: get(buf, at) as u32,
            }
        })
    };
    let latest = time();
    let own_latest = time();
    let l = Listed {
        path,
        depth,
        file_type: TYPES[usize::from(kind & 0x3f)],
        total,
        own,
        latest,
        own_latest,
    };
    tell_adjusted(&l, adj, out);
}

enum Item {
    /// So many lines held in the node's buffer.
    Lines(usize),
    /// The node's own line, held in its buffer, told with its [`Adjust`].
    Own,
    /// Files counted in their turn (a batch, as a worker gave them).
    Deferred(Vec<Deferred>),
    /// A subdirectory's place: everything it tells.
    Child(NodeId),
}

/// A directory whose line is told, as its count and the drain share it: each behind
/// its own lock, so that workers counting different directories never wait for each
/// other, nor for the drain (which holds one node's lock at a time, never while it
/// tells).
#[derive(Default)]
pub(super) struct Node {
    state: Mutex<NodeState>,
    /// Its parent's node (none for a root), to know whether the drain waits for it.
    parent: Option<Weak<Node>>,
    /// Its directory is being counted (a reserved place not yet claimed waits for a
    /// worker to take its directory).
    claimed: AtomicBool,
}

/// A node, shared by the directory's count, its parent's and the drain.
pub(super) type NodeId = Arc<Node>;

#[derive(Default)]
struct NodeState {
    items: VecDeque<Item>,
    /// The lines held, packed, and where the next to tell starts.
    held: Vec<u8>,
    read: usize,
    /// Subdirectories reserved here and not yet claimed, by name.
    unclaimed: FxHashMap<Box<[u8]>, NodeId>,
    /// Everything it will tell is in `items`.
    done: bool,
}

impl Node {
    fn lock(&self) -> std::sync::MutexGuard<'_, NodeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `at` is this node or one of its ancestors (or may be: an ancestor let
    /// go of was passed by the drain already).
    fn below(self: &Arc<Node>, at: &NodeId) -> bool {
        let mut node = self.clone();
        loop {
            if Arc::ptr_eq(&node, at) {
                return true;
            }
            match node.parent.as_ref().map(Weak::upgrade) {
                Some(Some(p)) => node = p,
                Some(None) => return true,
                None => return false,
            }
        }
    }
}

impl NodeState {
    /// Holds a line; the bytes it takes.
    fn push_line(&mut self, l: &Listed<'_>) -> usize {
        let before = self.held.len();
        hold(&mut self.held, l);
        match self.items.back_mut() {
            Some(Item::Lines(n)) => *n += 1,
            _ => self.items.push_back(Item::Lines(1)),
        }
        self.held.len() - before
    }

    /// Holds the line of the node itself; the bytes it takes.
    fn push_own(&mut self, l: &Listed<'_>) -> usize {
        let before = self.held.len();
        hold(&mut self.held, l);
        self.items.push_back(Item::Own);
        self.held.len() - before
    }

    /// Holds a batch of deferred files; the bytes they take.
    fn push_deferred(&mut self, files: Vec<Deferred>) -> usize {
        let cost = weight(&files);
        if !files.is_empty() {
            self.items.push_back(Item::Deferred(files));
        }
        cost
    }

    /// A new node for a subdirectory of `parent` (this one's node), at the end of
    /// what this one tells so far.
    fn push_child(&mut self, parent: &NodeId) -> NodeId {
        let child = Arc::new(Node {
            state: Mutex::default(),
            parent: Some(Arc::downgrade(parent)),
            claimed: AtomicBool::new(false),
        });
        self.items.push_back(Item::Child(child.clone()));
        child
    }
}

/// What an allocation costs beyond its bytes (the allocator's header and rounding).
const MALLOC_OVERHEAD: usize = 32;

/// The bytes a batch of deferred files takes, as [`Order::held`] counts them.
fn weight(files: &[Deferred]) -> usize {
    std::mem::size_of_val(files)
        + files
            .iter()
            .map(|f| {
                f.line
                    .as_ref()
                    .map_or(0, |l| l.capacity() + MALLOC_OVERHEAD)
            })
            .sum::<usize>()
}

/// What the cursor passed, in order, for the drainer to tell.
enum Event {
    /// A line, held in [`Drain::held`].
    Line,
    /// The line of the node at the cursor, held, told with its [`Adjust`].
    Own,
    /// Files counted in their turn, in the node at the cursor.
    Deferred(Vec<Deferred>),
    /// Into a subdirectory's node.
    Enter,
    /// Out of the node at the cursor, to its parent.
    Leave,
}

/// The drainer's side, used by one thread at a time: the cursor (the nodes from the
/// root down to where the told output stands), what it passed and is yet to tell, and
/// the [`Adjust`] of each node on the way (only the drainer changes them, so they need
/// no lock).
#[derive(Default)]
struct Drain {
    cursor: Vec<NodeId>,
    held: Vec<u8>,
    events: Vec<Event>,
    path: Vec<Adjust>,
    /// The root's [`Adjust`], once the cursor left it.
    root: Option<Adjust>,
    /// Batches counted, to keep for their memory.
    spent: Vec<Vec<Deferred>>,
    /// Bytes taken out of the nodes since last counted (see [`Order::held`]).
    freed: usize,
}

impl Drain {
    /// Moves the cursor on, up to `steps` items, taking what it passes (to be told by
    /// [`Drain::tell`], without a node's lock); whether it could go further.
    fn pass(&mut self, mut steps: usize) -> bool {
        'nodes: while let Some(node) = self.cursor.last().cloned() {
            let mut st = node.lock();
            loop {
                if steps == 0 {
                    return st.done || !st.items.is_empty();
                }
                steps -= 1;
                match st.items.pop_front() {
                    Some(Item::Own) => {
                        let NodeState { held, read, .. } = &mut *st;
                        let before = self.held.len();
                        tell_held(held, read, None, &mut Rehold(&mut self.held));
                        self.freed += self.held.len() - before;
                        self.events.push(Event::Own);
                    }
                    Some(Item::Deferred(files)) => {
                        self.freed += weight(&files);
                        self.events.push(Event::Deferred(files));
                    }
                    Some(Item::Lines(n)) => {
                        let NodeState { held, read, .. } = &mut *st;
                        let before = self.held.len();
                        tell_held(held, read, None, &mut Rehold(&mut self.held));
                        self.freed += self.held.len() - before;
                        self.events.push(Event::Line);
                        if n > 1 {
                            st.items.push_front(Item::Lines(n - 1));
                        } else if st.read == st.held.len() {
                            st.held.clear();
                            st.read = 0;
                        }
                    }
                    Some(Item::Child(child)) => {
                        drop(st);
                        self.cursor.push(child);
                        self.events.push(Event::Enter);
                        continue 'nodes;
                    }
                    None if st.done => {
                        drop(st);
                        self.cursor.pop();
                        self.events.push(Event::Leave);
                        continue 'nodes;
                    }
                    None => return false,
                }
            }
        }
        false
    }

    /// Tells what the cursor passed, in order: lines with their node's additions, and
    /// each deferred file counted where no name of it came before.
    fn tell(&mut self, out: &mut dyn Out) {
        let Drain {
            held,
            events,
            path,
            root,
            spent,
            ..
        } = self;
        let mut at = 0;
        for event in events.drain(..) {
            match event {
                Event::Line => tell_held(held, &mut at, None, out),
                Event::Own => {
                    let adj = path.last().copied().unwrap_or_default();
                    tell_held(held, &mut at, Some(&adj), out);
                }
                Event::Deferred(mut files) => {
                    if let Some(adj) = path.last_mut() {
                        for f in &files {
                            resolve(adj, f, out);
                        }
                    }
                    if spent.len() < SPARE_BATCHES {
                        files.clear();
                        spent.push(files);
                    }
                }
                Event::Enter => path.push(Adjust::default()),
                Event::Leave => {
                    let adj = path.pop().unwrap_or_default();
                    match path.last_mut() {
                        // A subdirectory's additions are its parent's, below it.
                        Some(up) => {
                            up.total += adj.total;
                            up.latest = up.latest.max(adj.latest);
                        }
                        None => *root = Some(adj),
                    }
                }
            }
        }
        held.clear();
    }
}

/// A deferred file's turn: counted (into `adj`, its node's additions), and its line
/// told, if no name of it came before.
fn resolve(adj: &mut Adjust, d: &Deferred, out: &mut dyn Out) {
    if !out.first(d.dev, d.ino) {
        return;
    }
    adj.total += d.total;
    adj.latest = adj.latest.max(d.latest);
    if d.own {
        adj.own += d.total;
        adj.own_latest = adj.own_latest.max(d.latest);
    }
    if let Some(line) = &d.line {
        tell_held(line, &mut 0, None, out);
    }
}

/// Holds the lines told to it again (to move a held line from one buffer to another).
struct Rehold<'a>(&'a mut Vec<u8>);

impl Out for Rehold<'_> {
    fn tell(&mut self, l: &Listed<'_>) {
        hold(self.0, l);
    }
    fn first(&mut self, _: u64, _: u64) -> bool {
        unreachable!("held lines only")
    }
}

/// Items a drain takes at a time before it tells them (its memory).
const DRAIN_STEPS: usize = 4096;

/// Past so many bytes waiting in the nodes, a worker that adds more waits for the
/// drain to go on before it goes on itself: the output's reader sets the pace, and the
/// workers counting what the drain waits for are the only ones to go on.
const HELD_MAX: usize = 4 << 20;

/// How often a worker held back looks again, and the longest it is held back.
const PACE_LOOK: std::time::Duration = std::time::Duration::from_millis(50);
const PACE_MAX: std::time::Duration = std::time::Duration::from_secs(1);

/// The nodes of one root's count (see the [module](self)).
///
/// One thread at a time drains (moves the cursor and tells what it passes): a worker
/// that finds another draining leaves the drain to it ([`Order::with`]).
#[derive(Default)]
pub(super) struct Order {
    /// A thread drains.
    draining: AtomicBool,
    /// A change was made while another thread drained: it looks again.
    missed: AtomicBool,
    /// The drainer's side (locked only by the drainer).
    drain: Mutex<Drain>,
    /// Batches of deferred files counted, kept for their memory.
    spare: Mutex<Vec<Vec<Deferred>>>,
    /// Bytes of lines and deferred files waiting in the nodes.
    held: AtomicUsize,
    /// The node where the drain stopped last (it waits for what is below it).
    stopped_at: Mutex<Option<Weak<Node>>>,
    /// Workers waiting for the drain to go on, and where they wait.
    pacing: AtomicUsize,
    paced: (Mutex<()>, Condvar),
}

impl Order {
    /// Makes a change with `f`, then drains if no other thread does (else leaves it to
    /// that thread, which looks again before it stops).
    ///
    /// `f` returns the bytes it left waiting in a node. Past [`HELD_MAX`] of them, a
    /// thread that finds another draining waits for it to stop, then drains itself:
    /// the drainer never waits for a worker (only for the output), so the wait ends.
    fn with(&self, id: &NodeId, out: &mut dyn Out, f: impl FnOnce() -> usize) {
        let added = f();
        self.held.fetch_add(added, Relaxed);
        self.missed.store(true, SeqCst);
        if self.draining.swap(true, SeqCst) {
            self.pace(id);
            return;
        }
        let mut d = self.drainer();
        loop {
            // Cleared before each look at the nodes: a change made after it is seen.
            self.missed.store(false, SeqCst);
            loop {
                let more = d.pass(DRAIN_STEPS);
                self.held.fetch_sub(std::mem::take(&mut d.freed), Relaxed);
                d.tell(out);
                if !more {
                    break;
                }
            }
            if !d.spent.is_empty() {
                let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
                let room = SPARE_BATCHES.saturating_sub(spare.len());
                let n = d.spent.len().min(room);
                spare.extend(d.spent.drain(..n));
                d.spent.clear();
            }
            if self.held.load(Relaxed) > HELD_MAX || self.pacing.load(SeqCst) > 0 {
                *self.stopped_at.lock().unwrap_or_else(|e| e.into_inner()) =
                    d.cursor.last().map(Arc::downgrade);
            }
            if self.pacing.load(SeqCst) > 0 {
                let _g = self.paced.0.lock().unwrap_or_else(|e| e.into_inner());
                self.paced.1.notify_all();
            }
            self.draining.store(false, SeqCst);
            if !self.missed.load(SeqCst) || self.draining.swap(true, SeqCst) {
                break;
            }
        }
    }

    /// Past [`HELD_MAX`] bytes waiting, holds back a worker that added to node `id`
    /// while another thread drains (the output's reader may be slow: this worker waits
    /// for the drain, which never waits for a worker), or while the drain waits for
    /// another worker's directory (the node it stopped at is
    /// claimed, and is neither `id` nor one of its ancestors): until the drain goes on
    /// far enough, for at most [`PACE_MAX`]. The worker the drain waits for is never
    /// held back, so the wait ends; where the drain waits for a directory no worker has
    /// taken yet, nobody is held back (one of them is to take it).
    fn pace(&self, id: &NodeId) {
        let start = std::time::Instant::now();
        while self.held.load(Relaxed) > HELD_MAX && start.elapsed() < PACE_MAX {
            if self.draining.load(SeqCst) {
                // The drain may wait for the output's reader: so does this worker.
                drop(self.drainer());
                continue;
            }
            let stopped = self
                .stopped_at
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let Some(at) = stopped.and_then(|w| w.upgrade()) else {
                return;
            };
            if !at.claimed.load(SeqCst) || id.below(&at) {
                return;
            }
            let g = self.paced.0.lock().unwrap_or_else(|e| e.into_inner());
            self.pacing.fetch_add(1, SeqCst);
            let _ = self.paced.1.wait_timeout(g, PACE_LOOK);
            self.pacing.fetch_sub(1, SeqCst);
        }
    }

    /// The drainer's side, for the thread that drains.
    fn drainer(&self) -> std::sync::MutexGuard<'_, Drain> {
        self.drain.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A root's node, where the output starts.
    pub(super) fn root(&self) -> NodeId {
        let root = NodeId::default();
        root.claimed.store(true, SeqCst);
        *self.drainer() = Drain {
            cursor: vec![root.clone()],
            path: vec![Adjust::default()],
            ..Drain::default()
        };
        root
    }

    /// Reserves the place of subdirectory `name` of `parent`, met now in its listing,
    /// after the files of `parent` deferred before it (`files`).
    pub(super) fn reserve(&self, parent: &NodeId, name: &[u8], files: Vec<Deferred>) {
        let mut st = parent.lock();
        let added = st.push_deferred(files);
        let child = st.push_child(parent);
        st.unclaimed.insert(name.into(), child);
        drop(st);
        self.held.fetch_add(added, Relaxed);
        self.pace(parent);
    }

    /// The node of subdirectory `name` of `parent`, now entered: its reserved place, or
    /// (were none reserved) one at the end of what `parent` tells so far.
    pub(super) fn claim(&self, parent: &NodeId, name: &[u8]) -> NodeId {
        let mut st = parent.lock();
        let child = match st.unclaimed.remove(name) {
            Some(child) => child,
            None => st.push_child(parent),
        };
        child.claimed.store(true, SeqCst);
        child
    }

    /// A line of `id` (a file of it), in its listing's order.
    pub(super) fn line(&self, id: &NodeId, l: &Listed<'_>, out: &mut dyn Out) {
        self.with(id, out, || id.lock().push_line(l));
    }

    /// Files of `id` (or below it) counted in their turn, in its listing's order.
    /// Gives back an empty batch to fill next, if one is spare.
    pub(super) fn deferred(
        &self,
        id: &NodeId,
        files: Vec<Deferred>,
        out: &mut dyn Out,
    ) -> Option<Vec<Deferred>> {
        self.with(id, out, || id.lock().push_deferred(files));
        self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    /// What the last root's deferred files added to it, once it was told.
    pub(super) fn root_adjust(&self) -> Option<Adjust> {
        self.drainer().root.take()
    }

    /// Node `id` is done, after its last deferred files (`files`) and its own line `l`
    /// (if it has one): what it tells is complete. Its reserved subdirectories never
    /// entered tell nothing.
    pub(super) fn close(
        &self,
        id: &NodeId,
        files: Vec<Deferred>,
        l: Option<&Listed<'_>>,
        out: &mut dyn Out,
    ) {
        self.with(id, out, || {
            let mut st = id.lock();
            let mut added = st.push_deferred(files);
            if let Some(l) = l {
                added += st.push_own(l);
            }
            for (_, never) in st.unclaimed.drain() {
                never.lock().done = true;
            }
            st.done = true;
            added
        });
    }

    /// Subdirectory `name` of `parent` could not be entered and tells `l` alone, at
    /// its place if one was reserved.
    pub(super) fn alone(&self, parent: &NodeId, name: &[u8], l: &Listed<'_>, out: &mut dyn Out) {
        self.with(parent, out, || {
            let mut st = parent.lock();
            match st.unclaimed.remove(name) {
                Some(child) => {
                    let mut c = child.lock();
                    c.done = true;
                    c.push_line(l)
                }
                None => st.push_line(l),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(path: &str) -> Listed<'_> {
        Listed {
            path: path.as_bytes(),
            depth: 0,
            file_type: FileType::Dir,
            total: Totals::default(),
            own: Totals::default(),
            latest: None,
            own_latest: None,
        }
    }

    /// Told lines: by path, and whole; a file is met for the first time unless its
    /// inode is 9.
    #[derive(Default)]
    struct Lines(Vec<String>, Vec<Told>);

    /// A line told, whole.
    type Told = (
        Vec<u8>,
        usize,
        FileType,
        Totals,
        Totals,
        Option<Stamp>,
        Option<Stamp>,
    );

    impl Out for Lines {
        fn tell(&mut self, l: &Listed<'_>) {
            self.0.push(String::from_utf8_lossy(l.path).into_owned());
            self.1.push((
                l.path.to_vec(),
                l.depth,
                l.file_type,
                l.total,
                l.own,
                l.latest,
                l.own_latest,
            ));
        }
        fn first(&mut self, _: u64, ino: u64) -> bool {
            ino != 9
        }
    }

    #[test]
    fn lines_come_in_listing_order_whoever_finishes_first() {
        let order = Order::default();
        let mut out = Lines::default();
        let r = order.root();
        order.reserve(&r, b"a", Vec::new());
        order.line(&r, &l("f"), &mut out);
        order.reserve(&r, b"b", Vec::new());
        order.reserve(&r, b"never", Vec::new());
        let b = order.claim(&r, b"b");
        order.close(&b, Vec::new(), Some(&l("b")), &mut out);
        let a = order.claim(&r, b"a");
        order.reserve(&a, b"x", Vec::new());
        order.alone(&a, b"x", &l("a/x"), &mut out);
        order.close(&a, Vec::new(), Some(&l("a")), &mut out);
        order.close(&r, Vec::new(), Some(&l(".")), &mut out);
        assert_eq!(out.0, ["a/x", "a", "f", "b", "."]);
        // The cursor is past the root: the next root starts afresh.
        assert!(order.drainer().cursor.is_empty());
    }

    #[test]
    fn held_lines_come_back_whole() {
        let mut buf = Vec::new();
        let big = Totals {
            bytes: u64::MAX,
            apparent: 1 << 40,
            inodes: 3,
        };
        let t = |secs, nsec| Some(Stamp { secs, nsec });
        let odd = Listed {
            path: b"x\xff\ny",
            depth: 300,
            file_type: FileType::Fifo,
            total: big,
            own: Totals::default(),
            latest: None,
            own_latest: None,
        };
        hold(&mut buf, &odd);
        hold(
            &mut buf,
            &Listed {
                own: big,
                latest: t(-5, 999_999_999),
                own_latest: t(i64::MAX, 1),
                ..odd
            },
        );
        let (mut at, mut out) = (0, Lines::default());
        while at < buf.len() {
            tell_held(&buf, &mut at, None, &mut out);
        }
        let p = odd.path.to_vec();
        assert_eq!(
            out.1,
            [
                (
                    p.clone(),
                    300,
                    FileType::Fifo,
                    big,
                    Totals::default(),
                    None,
                    None
                ),
                (
                    p,
                    300,
                    FileType::Fifo,
                    big,
                    big,
                    t(-5, 999_999_999),
                    t(i64::MAX, 1)
                ),
            ]
        );
    }

    #[test]
    fn a_file_met_twice_counts_where_du_order_meets_it_first() {
        let order = Order::default();
        let mut out = Lines::default();
        let one = Totals {
            bytes: 10,
            apparent: 1,
            inodes: 1,
        };
        let file = |ino, own| Deferred {
            dev: 1,
            ino,
            total: one,
            latest: None,
            own,
            line: None,
        };
        let r = order.root();
        order.reserve(&r, b"a", Vec::new());
        order.reserve(&r, b"b", Vec::new());
        // b is done first, a comes first: each file counts in its turn (9 stands for a
        // file counted already, which counts nowhere).
        let b = order.claim(&r, b"b");
        order.deferred(&b, vec![file(5, true)], &mut out);
        order.deferred(&b, vec![file(9, true)], &mut out);
        order.close(&b, Vec::new(), Some(&l("b")), &mut out);
        let a = order.claim(&r, b"a");
        order.deferred(&a, vec![file(6, true)], &mut out);
        order.close(&a, Vec::new(), Some(&l("a")), &mut out);
        order.deferred(&r, vec![file(7, true)], &mut out);
        order.close(&r, Vec::new(), Some(&l(".")), &mut out);
        let shown: Vec<_> = out
            .1
            .iter()
            .map(|o| (o.0.clone(), o.3.bytes, o.4.bytes))
            .collect();
        assert_eq!(
            shown,
            [
                (b"a".to_vec(), 10, 10),
                (b"b".to_vec(), 10, 10),
                (b".".to_vec(), 30, 10)
            ]
        );
        assert_eq!(order.root_adjust().map(|a| a.total.bytes), Some(30));
    }
}
