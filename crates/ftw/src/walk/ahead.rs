//! Read-ahead for the sorted walk: worker threads read the directories the walker will
//! enter next, so that a sorted, depth-first, streaming walk uses several cores.
//!
//! Requests wait in a heap ordered by their place in the walk's order (the path with
//! `/` ranked below every name byte: exactly depth-first order with sorted names), so
//! the workers always read the directory the walker will want soonest. A worker opens a
//! directory from the root's handle in one call (`openat2`, no symbolic links unless the
//! walk follows them), reads, sorts and types its entries, and queues its
//! subdirectories in turn. At most `window` finished or running reads wait for the
//! walker; the walker takes its directory when finished, reads the next one in line
//! (or waits) while a worker reads it, and reads it itself when no worker has started
//! it. Nothing the walker reports
//! depends on who read a directory.

use super::Options;
use super::listing::Listing;
use super::parallel::Handle;
use crate::sys::{Dir, DirBuf, FileType, StatMask};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::ffi::CString;
use std::io;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Longest relative path a worker opens in one call (below `PATH_MAX`); deeper
/// directories are read by the walker itself, through its handles.
const MAX_REL: usize = 4000;

/// A directory read ahead.
pub(crate) struct Ready {
    pub(crate) list: Listing,
    pub(crate) id: Option<(u64, u64)>,
    /// Reading failed part way (what was read is in `list`).
    pub(crate) read_error: Option<io::Error>,
}

enum Slot {
    /// Waiting for a worker; the parent's handle, where one is shared.
    Queued(Option<Arc<Handle>>),
    Running,
    Done(io::Result<Ready>),
    /// The walker took it before any worker started it.
    Claimed,
    /// The walker will not enter it while a worker reads it: the worker drops it.
    Discarded,
}

struct Request {
    key: Vec<u8>,
    path: Vec<u8>,
    /// Where the directory's name starts in `path`.
    name: usize,
    depth: usize,
    root: Arc<Root>,
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

impl PartialEq for Request {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Request {}
impl PartialOrd for Request {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Request {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

struct State {
    heap: BinaryHeap<Reverse<Request>>,
    slots: HashMap<Vec<u8>, Slot>,
    /// Reads running or finished and not yet taken.
    busy: usize,
    /// Workers waiting for work, and whether the walker waits for a read.
    idle: usize,
    walker_waits: bool,
    shutdown: bool,
    /// Listings the walker is done with, for the workers to fill again.
    free: Vec<Listing>,
}

struct Shared {
    /// Handles shared by queued subdirectories, and how many may be.
    open: Arc<AtomicUsize>,
    share_limit: usize,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    window: usize,
    opts: Options,
}

/// The read-ahead workers of one sorted walk.
pub(crate) struct ReadAhead {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    root: Option<Arc<Root>>,
    /// The walker's buffer, for the reads it does while it would wait.
    buf: DirBuf,
}

/// The walk's order as a byte string: `/` below any byte of a name.
fn order_key(path: &[u8]) -> Vec<u8> {
    path.iter()
        .map(|&b| if b == b'/' { 0 } else { b })
        .collect()
}

impl ReadAhead {
    /// Starts `threads` workers keeping at most `window` reads ahead.
    pub(crate) fn new(opts: &Options, threads: usize, window: usize) -> ReadAhead {
        let shared = Arc::new(Shared {
            open: Arc::new(AtomicUsize::new(0)),
            // Half the budget is the walker's; of the other half, each worker holds up to
            // two handles while it reads, the root one more.
            share_limit: (opts.fd_budget / 2).saturating_sub(2 * threads + 1).max(1),
            state: Mutex::new(State {
                heap: BinaryHeap::new(),
                slots: HashMap::new(),
                busy: 0,
                idle: 0,
                walker_waits: false,
                shutdown: false,
                free: Vec::new(),
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            window: window.max(1),
            opts: opts.clone(),
        });
        let workers = (0..threads.max(1))
            .map(|_| {
                let shared = shared.clone();
                std::thread::spawn(move || worker(&shared))
            })
            .collect();
        ReadAhead {
            buf: DirBuf::with_capacity(opts.buf_size),
            shared,
            workers,
            root: None,
        }
    }

    /// The root being walked now (`None`: read nothing ahead for it).
    pub(crate) fn set_root(&mut self, root: Option<Root>) {
        self.root = root.map(Arc::new);
    }

    /// Queues the subdirectories of a directory the walker read itself.
    pub(crate) fn queue_children(&self, path: &[u8], depth: usize, list: &Listing) {
        let Some(root) = &self.root else {
            return;
        };
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        queue(&mut st, &self.shared.opts, root, path, depth, list, None);
        let wake = st.idle > 0 && !st.heap.is_empty();
        drop(st);
        if wake {
            self.shared.work.notify_all();
        }
    }

    /// The directory at `path`, if a worker read it (waiting while one reads it);
    /// `None` when the walker must read it itself.
    pub(crate) fn take(&mut self, path: &[u8]) -> Take {
        let mut spins = 0;
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match st.slots.get_mut(path) {
                None | Some(Slot::Claimed) | Some(Slot::Discarded) => return Take::Yourself(None),
                Some(slot @ Slot::Queued(_)) => {
                    let Slot::Queued(parent) = std::mem::replace(slot, Slot::Claimed) else {
                        unreachable!()
                    };
                    return Take::Yourself(parent);
                }
                Some(Slot::Running) => {
                    // While a worker reads it, read the next directory in line here
                    // rather than wait idle.
                    if let Some(mut job) = next_request(&mut st, &self.shared) {
                        drop(st);
                        let (result, dir) = run_request(&self.shared, &mut job, &mut self.buf);
                        st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                        hand_in(&mut st, &self.shared, job.0, result, dir);
                        continue;
                    }
                    // A read takes tens of microseconds: let the worker finish on this
                    // core before paying for a sleep and a wake-up.
                    if spins < 64 {
                        spins += 1;
                        drop(st);
                        std::thread::yield_now();
                        st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                        continue;
                    }
                    st.walker_waits = true;
                    st = self.shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
                    st.walker_waits = false;
                }
                Some(Slot::Done(_)) => {
                    let Some(Slot::Done(r)) = st.slots.remove(path) else {
                        unreachable!()
                    };
                    // A worker held back by a full window may go on.
                    let wake = st.busy == self.shared.window && st.idle > 0;
                    st.busy -= 1;
                    drop(st);
                    if wake {
                        self.shared.work.notify_one();
                    }
                    return Take::Ready(r);
                }
            }
        }
    }

    /// Gives back a listing the walker is done with, for its memory.
    pub(crate) fn recycle(&self, list: Listing) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.free.len() < self.shared.window {
            st.free.push(list);
        }
    }

    /// Forgets a directory the walker will not enter (and what was read below it).
    pub(crate) fn discard(&self, path: &[u8]) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let prefix = {
            let mut p = path.to_vec();
            p.push(b'/');
            p
        };
        let mut freed = 0;
        st.slots.retain(|k, slot| {
            let under = k.as_slice() == path || k.starts_with(&prefix);
            match slot {
                Slot::Done(_) if under => {
                    freed += 1;
                    false
                }
                Slot::Queued(_) if under => {
                    *slot = Slot::Claimed;
                    true
                }
                Slot::Running if under => {
                    *slot = Slot::Discarded;
                    true
                }
                _ => true,
            }
        });
        st.busy -= freed;
        drop(st);
        self.shared.work.notify_all();
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            st.shutdown = true;
            st.heap.clear();
            st.slots.clear();
        }
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn queue(
    st: &mut State,
    opts: &Options,
    root: &Arc<Root>,
    path: &[u8],
    depth: usize,
    list: &Listing,
    parent: Option<Arc<Handle>>,
) {
    if depth + 1 >= opts.max_depth {
        return;
    }
    for item in &list.items {
        if item.file_type != FileType::Dir || list.is_error(item) {
            continue;
        }
        let name = list.name(item);
        let mut child = Vec::with_capacity(path.len() + name.len() + 1);
        child.extend_from_slice(path);
        if !child.ends_with(b"/") {
            child.push(b'/');
        }
        child.extend_from_slice(name);
        if parent.is_none() && child.len() - root.rel >= MAX_REL {
            continue;
        }
        st.slots.insert(child.clone(), Slot::Queued(parent.clone()));
        st.heap.push(Reverse(Request {
            key: order_key(&child),
            name: child.len() - name.len(),
            path: child,
            depth: depth + 1,
            root: root.clone(),
        }));
    }
}

/// A request taken from the heap, with the parent's shared handle and a listing to fill.
type Job = (Request, Option<Arc<Handle>>, Listing);

/// Takes the request the walker will want soonest, if the window has room.
fn next_request(st: &mut State, shared: &Shared) -> Option<Job> {
    while st.busy < shared.window {
        let Reverse(req) = st.heap.pop()?;
        match st.slots.get_mut(&req.path) {
            Some(slot @ Slot::Queued(_)) => {
                let Slot::Queued(parent) = std::mem::replace(slot, Slot::Running) else {
                    unreachable!()
                };
                st.busy += 1;
                return Some((req, parent, st.free.pop().unwrap_or_default()));
            }
            Some(Slot::Claimed) => {
                st.slots.remove(&req.path);
            }
            _ => {}
        }
    }
    None
}

/// Reads a request's directory (without the lock) and shares its handle for its
/// subdirectories while the budget allows.
fn run_request(
    shared: &Shared,
    job: &mut Job,
    buf: &mut DirBuf,
) -> (io::Result<Ready>, Option<Arc<Handle>>) {
    let list = std::mem::take(&mut job.2);
    let result = read(&shared.opts, &job.0, job.1.as_deref(), buf, list);
    job.1 = None;
    match result {
        Ok((ready, Some(dir))) => match Handle::share(dir, &shared.open, shared.share_limit, false)
        {
            Ok(h) => (Ok(ready), Some(h)),
            Err(_) => (Ok(ready), None),
        },
        Ok((ready, None)) => (Ok(ready), None),
        Err(e) => (Err(e), None),
    }
}

/// Hands in a read (under the lock): queues its subdirectories and marks it done, or
/// forgets it if it failed or was discarded meanwhile; wakes the walker if it waits.
fn hand_in(
    st: &mut State,
    shared: &Shared,
    req: Request,
    result: io::Result<Ready>,
    dir: Option<Arc<Handle>>,
) {
    let keep = matches!(st.slots.get(&req.path), Some(Slot::Running));
    match result {
        Ok(ready) if keep => {
            if ready.read_error.is_none() {
                queue(
                    st,
                    &shared.opts,
                    &req.root,
                    &req.path,
                    req.depth,
                    &ready.list,
                    dir,
                );
            }
            st.slots.insert(req.path, Slot::Done(Ok(ready)));
        }
        // Failed (the walker opens it itself, one component at a time, and reports what
        // it finds), or discarded meanwhile: forget it.
        _ => {
            st.slots.remove(&req.path);
            st.busy -= 1;
        }
    }
    if st.walker_waits {
        shared.done.notify_one();
    }
}

fn worker(shared: &Shared) {
    let mut buf = DirBuf::with_capacity(shared.opts.buf_size);
    // The lock is taken once per directory: to hand in a read and take the next.
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if st.shutdown {
            return;
        }
        let Some(mut job) = next_request(&mut st, shared) else {
            st.idle += 1;
            st = shared.work.wait(st).unwrap_or_else(|e| e.into_inner());
            st.idle -= 1;
            continue;
        };
        drop(st);
        let (result, dir) = run_request(shared, &mut job, &mut buf);
        st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.shutdown {
            return;
        }
        hand_in(&mut st, shared, job.0, result, dir);
        // Another idle worker is needed only if more is queued than this one takes next.
        if st.idle > 0 && st.heap.len() > 1 && st.busy + 1 < shared.window {
            shared.work.notify_one();
        }
    }
}

/// Reads one directory as the walker would: opened from the root, identified when the
/// walk needs it, read, sorted, typed.
fn read(
    opts: &Options,
    req: &Request,
    parent: Option<&Handle>,
    buf: &mut DirBuf,
    mut list: Listing,
) -> io::Result<(Ready, Option<Dir>)> {
    let dir = match parent {
        Some(p) => {
            let name = CString::new(&req.path[req.name..])
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            if opts.follow_links {
                p.dir.open_at_follow(&name)?
            } else {
                p.dir.open_at(&name)?
            }
        }
        None => {
            let rel = CString::new(&req.path[req.root.rel..])
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            req.root.dir.open_beneath(&rel, opts.follow_links)?
        }
    };
    let id = if opts.follow_links || opts.same_file_system {
        let m = dir.stat(StatMask::TYPE)?;
        Some((m.dev, m.ino))
    } else {
        None
    };
    list.clear();
    if opts.same_file_system && id.is_some_and(|(dev, _)| dev != req.root.dev) {
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
    let read_error = list.read(&dir, buf, opts.forget_types).err();
    list.sort();
    list.resolve_all(&dir, opts.follow_links);
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
