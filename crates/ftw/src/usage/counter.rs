//! The counting itself: what a run's workers share ([`Run`]) and each worker's visitor
//! ([`Counter`]), which counts each entry into its directory's totals.

use super::cycles::{Lineage, Live};
use super::links::{Met, MetFile, Seen};
use super::order::{Deferred, NodeId, Order, Out};
use super::times::{Latest, Stamp};
use super::totals::AtomicTotals;
use super::tree::keep_largest;
use super::{Listed, Totals, UsageNode, UsageOptions};
use crate::sys::{self, FileType, Metadata, StatMask};
use crate::walk::{Control, DirEvent, Entry, Error, Visitor};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// What the workers of one run share.
pub(super) struct Run<'a> {
    pub(super) opts: &'a UsageOptions,
    pub(super) seen: Seen,
    /// Remember every file, not only those with several links.
    pub(super) hash_all: bool,
    /// What to ask of each file: [`ASK`], and the time of [`UsageOptions::latest`].
    pub(super) ask: StatMask,
    pub(super) errors: AtomicU64,
    /// The root's node, once it is left.
    pub(super) result: Mutex<Option<UsageNode>>,
    /// The stream's reader went away.
    pub(super) stopped: std::sync::atomic::AtomicBool,
    /// The directories being counted, where a directory that is its own ancestor (a
    /// bind mount) is not found otherwise (see [`super::cycles`]).
    pub(super) live: Option<Live>,
    /// Where a parallel count's stream is put in du's order (none when the walk is
    /// serial, in that order already).
    pub(super) order: Option<Order>,
    /// With [`Run::order`], files that may be met again are counted in du's order, at
    /// their turn ([`Deferred`]), not where a worker meets them first: where some
    /// directory below a root is told.
    pub(super) defer: bool,
    /// With `defer`, the files met that may be met again.
    pub(super) met: Met,
}

impl Run<'_> {
    pub(super) fn error(&self, e: &Error) {
        self.errors.fetch_add(1, Relaxed);
        if let Some(sink) = &self.opts.on_error {
            sink(e);
        }
    }

    /// Whether a file of metadata `m` is to be counted now (not met before).
    pub(super) fn first_time(&self, m: &Metadata) -> bool {
        !self.remembered(m) || self.seen.insert(m.dev, m.ino)
    }

    /// Whether a file of metadata `m` may be met again, and is remembered.
    fn remembered(&self, m: &Metadata) -> bool {
        !self.opts.count_links && (self.hash_all || (m.nlink > 1 && !m.file_type().is_dir()))
    }

    pub(super) fn excluded(&self, path: &[u8]) -> bool {
        self.opts.exclude.as_ref().is_some_and(|ex| ex(path))
    }

    /// Tells a complete entry to the stream, if there is one; `false` when there is none
    /// (the caller keeps the entry) or its reader went away.
    pub(super) fn tell(&self, listed: &Listed<'_>) -> bool {
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

    /// [`Run::tell`], in du's order: a line of the directory whose node is `at`.
    fn tell_in(&self, at: Option<&NodeId>, listed: &Listed<'_>) -> bool {
        match (&self.order, at) {
            (Some(order), Some(id)) => {
                order.line(id, listed, &mut To(self));
                true
            }
            _ => self.tell(listed),
        }
    }
}

/// A run's output, in du's order: its stream, and its set of files counted.
struct To<'a>(&'a Run<'a>);

impl Out for To<'_> {
    fn tell(&mut self, l: &Listed<'_>) {
        self.0.tell(l);
    }
    fn first(&mut self, dev: u64, ino: u64) -> bool {
        self.0.seen.insert(dev, ino)
    }
}

/// A directory being counted.
pub(super) struct DirState {
    depth: usize,
    /// The directory itself and its non-directory entries.
    own: AtomicTotals,
    /// Its subdirectories, folded in as they are left.
    sub: AtomicTotals,
    /// The latest times of `own` and `sub` ([`UsageOptions::latest`]).
    own_latest: Latest,
    sub_latest: Latest,
    /// Its entries kept, as they come.
    children: Mutex<Vec<UsageNode>>,
    meta: Metadata,
    /// The ignore rules here, with [`UsageOptions::ignore`].
    rules: Option<Arc<crate::filter::Rules>>,
    /// Its node in du's order, when lines are told from it in that order.
    node: Option<NodeId>,
    /// Its identity and its ancestors', with [`Run::live`].
    lineage: Option<Arc<Lineage>>,
    /// It is one of its ancestors, seen again: neither counted nor entered.
    cycle: bool,
    /// `node` is its own (else its ancestor's, below the depth told).
    owns_node: bool,
    /// Its deferred files not yet given to `node`: given at once, before the next
    /// subdirectory's place or on leaving (where they come in order all the same).
    batch: Mutex<Vec<Deferred>>,
}

/// Each worker's visitor.
pub(super) struct Counter<'a> {
    pub(super) run: &'a Run<'a>,
    pub(super) root_dev: u64,
    /// The root's device, where its directory entries' inode numbers are those `stat`
    /// gives ([`crate::sys::Dir::entry_inodes_exact`]): a file found there by its entry's
    /// inode among those counted is a further link to one counted, and needs no `statx`.
    pub(super) exact_dev: Option<u64>,
    pub(super) path: Vec<u8>,
    /// Counted and not yet added to the shared progress counters.
    pub(super) entries: u64,
    pub(super) bytes: u64,
}

pub(super) const ASK: StatMask = StatMask::SIZE
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
        let time = self.time(m);
        state.own_latest.note(time);
        self.counted(t);
        if self.keep(e.depth()) && self.run.opts.stream.is_some() {
            // After the files before it, waiting for their turn.
            self.flush_deferred(state);
            self.path.clear();
            e.write_path(&mut self.path);
            self.run.tell_in(
                state.node.as_ref(),
                &Listed {
                    path: &self.path,
                    depth: e.depth(),
                    file_type: m.file_type(),
                    total: t,
                    own: t,
                    latest: time,
                    own_latest: time,
                },
            );
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

    /// Directory `d` is one of its ancestors: as du, say nothing where it is a mount
    /// point (a bind mount), else warn as du does (a file system's corruption).
    fn cycle(&self, d: &DirEvent<'_>) {
        let mount = match (d.parent_dir(), d.c_name()) {
            (Some(parent), Some(name)) => parent.is_mount_root_at(name).unwrap_or(true),
            _ => true,
        };
        if !mount {
            let warning = "WARNING: Circular directory structure.\nThis almost certainly means \
                           that you have a corrupted file system.\nNOTIFY YOUR SYSTEM MANAGER.\n\
                           The following directory is part of the cycle";
            self.run.error(&Error::io(
                d.to_path_buf(),
                d.depth(),
                std::io::Error::other(warning),
            ));
        }
    }

    /// Goes into subdirectory `e` of `state`: first, in du's order, its place.
    fn descend(&self, e: &Entry<'_>, state: &DirState) -> Control {
        if let (Some(order), Some(at)) = (&self.run.order, &state.node) {
            let max = self.run.opts.max_depth;
            let told = e.depth() <= max;
            if state.owns_node && (told || (self.run.defer && e.depth() == max + 1)) {
                order.reserve(at, e.name(), self.take_deferred(state));
            }
        }
        Control::Continue
    }

    /// The time of `m` that [`UsageOptions::latest`] asks for.
    fn time(&self, m: &Metadata) -> Option<Stamp> {
        self.run.opts.latest.map(|t| t.of(m))
    }

    /// A file that may be met again: counted at its turn in du's order, with its line.
    fn defer(
        &mut self,
        e: &Entry<'_>,
        state: &DirState,
        dev: u64,
        ino: u64,
        f: MetFile,
    ) -> Control {
        let (Some(order), Some(at)) = (&self.run.order, &state.node) else {
            return Control::Continue;
        };
        let MetFile {
            file_type,
            total,
            latest,
        } = f;
        let line = self.keep(e.depth()).then(|| {
            self.path.clear();
            e.write_path(&mut self.path);
            let mut packed = Vec::new();
            super::order::hold(
                &mut packed,
                &Listed {
                    path: &self.path,
                    depth: e.depth(),
                    file_type,
                    total,
                    own: total,
                    latest,
                    own_latest: latest,
                },
            );
            packed
        });
        let d = Deferred {
            dev,
            ino,
            total,
            latest,
            own: state.owns_node && state.depth <= self.run.opts.max_depth,
            line,
        };
        let mut batch = state.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.push(d);
        if batch.len() >= 1024 {
            let spare = order.deferred(at, std::mem::take(&mut *batch), &mut To(self.run));
            *batch = spare.unwrap_or_default();
        }
        Control::Continue
    }

    /// `state`'s deferred files not yet given to its node, to give with what comes
    /// next from it.
    fn take_deferred(&self, state: &DirState) -> Vec<Deferred> {
        std::mem::take(&mut *state.batch.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Gives `state`'s deferred files to its node.
    fn flush_deferred(&self, state: &DirState) {
        if let (Some(order), Some(at)) = (&self.run.order, &state.node) {
            let files = self.take_deferred(state);
            if !files.is_empty() {
                let _ = order.deferred(at, files, &mut To(self.run));
            }
        }
    }

    /// Whether further names of a file are kept at `depth`
    /// ([`UsageOptions::keep_every_name`]).
    fn every_name(&self, depth: usize) -> bool {
        self.run.opts.keep_every_name && self.keep(depth) && self.run.opts.stream.is_none()
    }

    /// A further name of a file counted already: kept, not counted, where every name
    /// is asked for.
    fn further_name(&mut self, e: &Entry<'_>, state: &DirState, m: &Metadata) -> Control {
        if self.every_name(e.depth()) {
            let mut node = UsageNode::file(e.name().to_vec(), m);
            node.counted = false;
            state
                .children
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(node);
        }
        Control::Skip
    }

    fn keep(&self, depth: usize) -> bool {
        depth <= self.run.opts.max_depth && self.run.opts.keep_files
    }

    /// A directory that the walk could not open: `du` counts its own size all the same.
    fn unreadable(&mut self, err: &Error, parent: &DirState) {
        let opts = self.run.opts;
        let Ok(m) = sys::stat_path(err.path(), self.run.ask, opts.follow_links) else {
            return;
        };
        if !m.file_type().is_dir() || (opts.same_file_system && m.dev != self.root_dev) {
            return;
        }
        let t = Totals::of(&m);
        parent.sub.add(t);
        let time = self.time(&m);
        parent.sub_latest.note(time);
        self.counted(t);
        let listed = Listed {
            path: &crate::walk::path_to_bytes(err.path()),
            depth: err.depth(),
            file_type: FileType::Dir,
            total: t,
            own: t,
            latest: time,
            own_latest: time,
        };
        let told = err.depth() <= opts.max_depth
            && match (&self.run.order, &parent.node) {
                (Some(order), Some(at)) => {
                    self.flush_deferred(parent);
                    let name = err.path().file_name().map(Path::new);
                    let name = name.map_or_else(Vec::new, crate::walk::path_to_bytes);
                    order.alone(at, &name, &listed, &mut To(self.run));
                    true
                }
                _ => self.run.tell(&listed),
            };
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
            Some(dir) => dir.stat(self.run.ask),
            None => sys::stat_path(&d.to_path_buf(), self.run.ask, true),
        };
        let m = m.map_err(|e| self.run.error(&Error::io(d.to_path_buf(), d.depth(), e)));
        let (lineage, cycle) = match (&self.run.live, &m) {
            (Some(live), Ok(m)) => {
                let id = (m.dev, m.ino);
                let again = live.enter(id);
                let up = parent.and_then(|p| p.lineage.clone());
                let cycle = again && up.as_ref().is_some_and(|l| l.holds(id));
                if cycle {
                    self.cycle(d);
                }
                (Some(Lineage::new(id, up)), cycle)
            }
            _ => (None, false),
        };
        let m = m.unwrap_or_default();
        let m = if cycle { Metadata::default() } else { m };
        let t = Totals::of(&m);
        self.counted(t);
        if d.depth() == 0 {
            self.tick();
        }
        let own = AtomicTotals::default();
        if !cycle {
            own.add(Totals { inodes: 1, ..t });
        }
        let max = self.run.opts.max_depth;
        let (node, owns_node) = match (&self.run.order, parent) {
            (Some(order), None) => (Some(order.root()), true),
            // Deeper than told, a directory's deferred files go to the node of its
            // ancestor just below the depth told: all of them count there, in any order.
            (Some(_), Some(p)) if self.run.defer && d.depth() > max.saturating_add(1) => {
                (p.node.clone(), false)
            }
            (Some(order), Some(p)) => {
                let node = p
                    .node
                    .as_ref()
                    .filter(|_| d.depth() <= max || (self.run.defer && d.depth() == max + 1))
                    .map(|at| order.claim(at, d.c_name().map_or(&[][..], |n| n.to_bytes())));
                (node, true)
            }
            (None, _) => (None, false),
        };
        let own_latest = Latest::default();
        own_latest.note(self.time(&m));
        DirState {
            depth: d.depth(),
            own,
            sub: AtomicTotals::default(),
            own_latest,
            sub_latest: Latest::default(),
            children: Mutex::new(Vec::new()),
            meta: m,
            rules,
            node,
            lineage,
            cycle,
            owns_node,
            batch: Mutex::new(Vec::new()),
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
        if state.cycle {
            return Control::Skip;
        }
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
            return self.descend(e, state);
        }
        // A further link to a file counted already, known from its directory entry: no
        // call needed (most of the cost of a tree of hard-linked copies).
        // Counted in du's order: a further name of a file met already is known from
        // its entry too, and waits for its turn.
        if !is_dir && self.run.defer && self.exact_dev == Some(state.meta.dev) {
            if let Some(f) = self
                .run
                .met
                .get(state.meta.dev, e.ino(), opts.latest.is_some())
            {
                return self.defer(e, state, state.meta.dev, e.ino(), f);
            }
        }
        if !is_dir
            && !self.run.defer
            && !self.every_name(e.depth())
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
                return self.further_name(e, state, &m);
            }
            return self.count_file(e, state, &m);
        }
        let mask = if is_dir { StatMask::ID } else { self.run.ask };
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
        let file = !is_dir && !m.file_type().is_dir();
        if file && self.run.defer && self.run.remembered(&m) {
            let f = MetFile {
                file_type: m.file_type(),
                total: Totals::of(&m),
                latest: self.time(&m),
            };
            self.run.met.insert(m.dev, m.ino, f);
            return self.defer(e, state, m.dev, m.ino, f);
        }
        if !self.run.first_time(&m) {
            if file {
                return self.further_name(e, state, &m);
            }
            return Control::Skip;
        }
        if is_dir || m.file_type().is_dir() {
            return self.descend(e, state);
        }
        self.count_file(e, state, &m)
    }

    fn leave(&mut self, d: &DirEvent<'_>, state: DirState, parent: Option<&DirState>) {
        // Its deferred files: given with its line where it has a node of its own, else
        // now to its ancestor's node, where they belong.
        let mut files = self.take_deferred(&state);
        if !state.owns_node {
            if let (Some(order), Some(at)) = (&self.run.order, &state.node) {
                let _ = order.deferred(at, std::mem::take(&mut files), &mut To(self.run));
            }
        }
        let DirState {
            depth,
            own,
            sub,
            children,
            meta,
            node,
            own_latest,
            sub_latest,
            lineage,
            cycle,
            owns_node,
            ..
        } = state;
        if let (Some(live), Some(l)) = (&self.run.live, &lineage) {
            live.leave(l.id());
        }
        if cycle {
            // Told nothing, and nothing added to its parent.
            if let (Some(order), Some(id), true) = (&self.run.order, &node, owns_node) {
                order.close(id, files, None, &mut To(self.run));
            }
            return;
        }
        let own = own.into_inner();
        let total = own + sub.into_inner();
        let own_latest = own_latest.into_inner();
        let latest = own_latest.max(sub_latest.into_inner());
        if let Some(p) = parent {
            p.sub.add(total);
            p.sub_latest.note(latest);
        }
        if depth > self.run.opts.max_depth {
            // Its deferred files and those below it are all in its node.
            if let (Some(order), Some(id), true) = (&self.run.order, &node, owns_node) {
                order.close(id, files, None, &mut To(self.run));
            }
            return;
        }
        let listed = Listed {
            path: d.path(),
            depth,
            file_type: FileType::Dir,
            total,
            own,
            latest,
            own_latest,
        };
        let told = match (&self.run.order, &node) {
            (Some(order), Some(id)) => {
                order.close(id, files, Some(&listed), &mut To(self.run));
                true
            }
            _ => self.run.tell(&listed),
        };
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
            counted: true,
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
