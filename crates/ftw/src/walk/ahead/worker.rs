//! One read ahead, start to end: taking the directory wanted soonest, opening it through
//! a handle with the same identity checks as the walker's, reading it, and handing it in
//! with its subdirectories queued. The workers' loop, and the reads the walker does
//! itself while it would wait, both go through here.

use super::Slot;
use super::order::{Group, prepare, push_group, skip_claimed};
use super::slots::SlotId;
use super::{AheadInfo, Ready, Shared, State, release};
use crate::sys::{Dir, DirBuf};
use crate::walk::event::DirEvent;
use crate::walk::gate::{DirRules, Gate};
use crate::walk::listing::Listing;
use crate::walk::node::{self, Handle, Id};
use crate::walk::{Error, Options};
use std::ffi::CStr;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::Instant;

/// A directory taken to read: its group and place in it, and a listing to fill.
pub(super) struct Job {
    group: Arc<Group>,
    child: usize,
    list: Listing,
}

impl Job {
    fn slot(&self) -> SlotId {
        self.group.children[self.child].slot
    }
}

/// What became of a read (moved once per read: its size does not matter).
#[allow(clippy::large_enum_variant)]
pub(super) enum Outcome {
    /// Read, and the group of its subdirectories to queue.
    Read(Ready, Option<Group>),
    /// Opening it failed: forgotten, the walker opens it itself (one component at a
    /// time) and reports what it finds.
    Failed,
    /// The read panicked: the error is reported for the directory.
    Panicked(io::Error),
}

/// Takes the directory the walker will want soonest, if the window has room.
pub(super) fn next_request(st: &mut State, shared: &Shared) -> Option<Job> {
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
/// lock). A panic on the way is caught and becomes the directory's error, so that the
/// walker, which may be waiting for this very directory, never waits in vain.
pub(super) fn run_request(
    shared: &Shared,
    job: &mut Job,
    buf: &mut DirBuf,
    path: &mut Vec<u8>,
) -> Outcome {
    catch_unwind(AssertUnwindSafe(|| read_job(shared, job, buf, path))).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| p.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        Outcome::Panicked(io::Error::other(format!(
            "reading ahead failed: a worker panicked: {what}"
        )))
    })
}

/// [`run_request`] without the catch: the read, and the job's subdirectories made
/// ready to queue, sharing its handle with them while the budget allows.
fn read_job(shared: &Shared, job: &mut Job, buf: &mut DirBuf, path: &mut Vec<u8>) -> Outcome {
    let list = std::mem::take(&mut job.list);
    let group = &job.group;
    let child = &group.children[job.child];
    let opts = &shared.opts;
    opts.hooks
        .ahead_fault(path, |path| group.child_rel(job.child, path));
    let start = Instant::now();
    let result = read(opts, group, job.child, buf, path, list);
    shared
        .io_ns
        .fetch_add(start.elapsed().as_nanos() as u64, AtomicOrdering::Relaxed);
    let Ok((mut ready, dir)) = result else {
        return Outcome::Failed;
    };
    ready.ahead.key = Some(child.key.clone());
    // Past `MAX_REL`, no path is kept (nor needed: see `Group::rel`).
    group.child_rel(job.child, path);
    let rel = group.rel.as_ref().map(|_| &path[..]);
    if let (Some(gate), Some(dir), Some(rel)) = (&shared.gate, &dir, rel) {
        ready.rules = Some(rules(&**gate, group, job.child, rel, dir, &ready.list));
    }
    if ready.read_error.is_some() {
        return Outcome::Read(ready, None);
    }
    let dir = dir
        .filter(|_| ready.list.last_dir().is_some() && opts.hooks.ahead_share())
        .and_then(|dir| Handle::share(dir, &shared.open, shared.share_limit, false).ok());
    let children = prepare(
        opts,
        shared.filter.as_ref(),
        shared
            .gate
            .as_deref()
            .map(|g| (g, ready.rules.as_ref().map(|r| &r.0))),
        &group.root,
        rel,
        group.depth,
        &ready.list,
        &child.key,
        Some(ready.id),
        dir,
    );
    Outcome::Read(ready, children)
}

/// The rules of the `child`th directory of `group`, just read (`list`) through `dir`
/// at `rel` below the root, made from the group's as the walker makes them on entering
/// it; with what kept them from being whole.
fn rules(
    gate: &dyn Gate,
    group: &Group,
    child: usize,
    rel: &[u8],
    dir: &Dir,
    list: &Listing,
) -> (DirRules, Vec<Error>) {
    let path = group.root.path_of(rel);
    let event = DirEvent {
        path: &path,
        name: Some(group.name(&group.children[child]).to_bytes_with_nul()),
        depth: group.depth,
        dir: Some(dir),
        parent: group.dir.as_deref().map(|h| &h.dir),
        listing: Some(list),
    };
    let mut errors = Vec::new();
    let rules = gate.enter(&event, group.rules.as_ref(), &mut |e| errors.push(e));
    (rules, errors)
}

/// Hands in a read (under the lock): queues its subdirectories and marks it done, or
/// forgets it if it failed or was discarded meanwhile; wakes the walker if it waits.
pub(super) fn hand_in(st: &mut State, shared: &Shared, job: Job, outcome: Outcome) {
    let slot = job.slot();
    let keep = matches!(st.slots.get_mut(slot), Some(Slot::Running));
    let mut unused = None;
    match outcome {
        Outcome::Read(mut ready, children) if keep => {
            if let Some(group) = children {
                let len = ready.list.items.len();
                push_group(st, group, &mut ready.ahead, len);
            }
            if let Some(s) = st.slots.get_mut(slot) {
                st.held += ready.list.items.len();
                *s = Slot::Done(Ok(ready));
            }
        }
        Outcome::Panicked(e) if keep => {
            if let Some(s) = st.slots.get_mut(slot) {
                *s = Slot::Done(Err(e));
            }
        }
        // Failed, or discarded meanwhile: forget it.
        other => {
            if let Outcome::Read(_, children) = other {
                unused = children;
            }
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

/// Marks the read-ahead as having lost a worker if the worker unwinds (a panic outside
/// a read, where [`run_request`] does not catch it): the walker then waits for no read
/// in progress, and reads such a directory itself.
struct LostGuard<'a>(&'a Shared);

impl Drop for LostGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut st = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
            st.lost_worker = true;
            drop(st);
            self.0.done.notify_all();
        }
    }
}

/// A worker thread: takes the directory wanted soonest, reads it, hands it in, until
/// the read-ahead shuts down.
pub(super) fn worker(shared: &Shared) {
    let _guard = LostGuard(shared);
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
        let outcome = run_request(shared, &mut job, &mut buf, &mut path);
        st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.shutdown {
            return;
        }
        hand_in(&mut st, shared, job, outcome);
        // Another idle worker is needed only if more is queued than this one takes next.
        if st.idle > 0 && !st.held_back && !st.stack.is_empty() && shared.has_room(&st) {
            shared.work.notify_one();
        }
    }
}

/// Opens the `child`th directory of `group` relative to a handle, as the walker would:
/// through the parent's shared handle; else from the root's handle when the parent is
/// the root; else from the parent opened by its path below the root, checked to be the
/// directory that was read there (a directory moved or replaced meanwhile is not read
/// in its place: the walker opens it itself and reports what it finds).
fn open(opts: &Options, group: &Group, child: usize, path: &mut Vec<u8>) -> io::Result<(Dir, Id)> {
    let name = group.name(&group.children[child]);
    let opened;
    let parent = match &group.dir {
        Some(p) => &p.dir,
        None if group.at_root() => &group.root.dir,
        None => {
            let rel = group
                .rel
                .as_ref()
                .expect("queued without a handle: a path kept");
            path.clear();
            path.extend_from_slice(&rel[..rel.len() - 1]);
            path.push(0);
            let rel = CStr::from_bytes_with_nul(path)
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            opened = group.root.dir.open_beneath(rel, opts.follow_links)?;
            // Queued without its identity, it cannot be checked: the walker reads it.
            let id = group
                .id
                .ok_or_else(|| io::Error::other("no identity to check"))?;
            node::check(&opened, Some(id))?;
            &opened
        }
    };
    // Identified: the walker records it, to check any reopening.
    let (dir, id) = node::open_child(parent, name, opts.follow_links, true)?;
    Ok((dir, id.expect("asked for")))
}

/// Reads the `child`th directory of `group` as the walker would: opened relative to a
/// handle ([`open`]), identified, read, sorted, typed.
fn read(
    opts: &Options,
    group: &Group,
    child: usize,
    buf: &mut DirBuf,
    path: &mut Vec<u8>,
    mut list: Listing,
) -> io::Result<(Ready, Option<Dir>)> {
    let (dir, id) = open(opts, group, child, path)?;
    list.clear();
    if opts.off_fs(Some(id), group.root.dev) {
        // Not entered: the walker only checks the identity.
        return Ok((
            Ready {
                list,
                id,
                read_error: None,
                ahead: AheadInfo::default(),
                rules: None,
            },
            None,
        ));
    }
    // The walk sorts: it reads ahead only then.
    let read_error = list.fill(&dir, buf, opts).err();
    Ok((
        Ready {
            list,
            id,
            read_error,
            ahead: AheadInfo::default(),
            rules: None,
        },
        Some(dir),
    ))
}
