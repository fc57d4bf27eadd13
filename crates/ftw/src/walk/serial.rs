//! The serial walker: an explicit stack of directory frames, depth first, no recursion,
//! a bounded number of open handles.

use super::ahead::{AheadInfo, ReadAhead, Root, Take};
use super::event::{DirEvent, Entries, Visitor};
use super::gate::{DirRules, Gate};
use super::listing::Listing;
use super::node::{self, Id};
use super::step::{self, Decision, Kept, Place, RootDecision};
use super::{
    Control, DirEntry, Entry, Error, Filter, Options, Origin, WalkBuilder, bytes_to_path, join,
    path_to_bytes,
};
use crate::sys::{Dir, DirBuf, FileType};
use std::io;

/// A walk in progress, made by [`WalkBuilder::build`]. Consume it with [`Walk::visit`],
/// [`Walk::next_entry`] or as an `Iterator` of owned [`DirEntry`] values.
pub struct Walk {
    opts: Options,
    filter: Option<Filter>,
    /// Rules made per directory, kept in its frame ([`WalkBuilder::git_ignore`]).
    gate: Option<std::sync::Arc<dyn Gate>>,
    /// The path of the entry the gate is asked about, when it needs it.
    scratch: Vec<u8>,
    roots: std::vec::IntoIter<Origin>,
    root_dev: u64,
    /// The directories from the root down to the one being listed.
    stack: Vec<Frame>,
    /// Listings of popped frames, kept for their memory.
    spare: Vec<Listing>,
    /// The path of the top frame's directory: the root, then each frame's name.
    path: Vec<u8>,
    buf: Option<DirBuf>,
    /// Handles held by frames.
    open: usize,
    pending: Pending,
    /// Workers reading ahead (a sorted walk with several threads).
    pub(super) ahead: Option<ReadAhead>,
    /// An error to report before going on (after a root that could not be read).
    queued_error: std::collections::VecDeque<Error>,
    /// Handles the frames may hold: the whole budget, or half of it beside a read-ahead
    /// (which keeps to the other half).
    budget: usize,
    /// Report entering and leaving directories ([`Walk::visit_events`]).
    events: bool,
    /// With `follow_links`: the frame of each directory on the stack, by identity, to see
    /// in one look whether a link leads back to one (a scan of the stack would cost the
    /// depth at every directory).
    /// The value: the frame's index and the length of its path.
    ancestors: std::collections::HashMap<Id, (usize, usize)>,
    /// Frames whose handle was closed while subdirectories are left to open there:
    /// while there are any, a frame left hands its parent its `..`.
    closed_pending: usize,
    /// No frame below this index holds a handle: where closing the shallowest starts, so
    /// that a deep stack is not scanned from the root at every step.
    low: usize,
    /// The frame just left, kept until the next step: its handle and path are lent to
    /// the leave event.
    leaving: Option<Frame>,
}

/// One directory on the way down.
struct Frame {
    dir: Option<Dir>,
    list: Listing,
    /// What the read-ahead knows of this directory (empty without a read-ahead).
    ahead: AheadInfo,
    /// The next entry of `list` to report.
    cursor: usize,
    /// Past this index no entry can be a directory, so the handle can go.
    last_dir: Option<usize>,
    /// `path[..path_len]` is this directory's path; `path[name_start..path_len]` its
    /// name in its parent (the whole root path for a root).
    path_len: usize,
    name_start: usize,
    depth: usize,
    /// (device, inode), when known: always with `follow_links`, `same_file_system` or a
    /// read-ahead, else recorded when the handle is closed early, to check a reopening.
    id: Option<Id>,
    /// Entered through a symbolic link (reopen by following it).
    via_link: bool,
    /// Counted in `closed_pending`.
    counted: bool,
    /// The gate's rules for this directory's entries.
    rules: Option<DirRules>,
}

impl Frame {
    /// Whether subdirectories are left to open (the handle is wanted again).
    fn pending(&self) -> bool {
        self.last_dir.is_some_and(|last| self.cursor <= last)
    }
}

/// What to descend into before reporting anything more.
enum Pending {
    None,
    Root(Dir, Option<Id>),
    /// The entry just reported from the top frame.
    Child {
        via_link: bool,
    },
}

/// What `advance` found, to be turned into an [`Entry`] that borrows the walker.
enum Step {
    Root {
        file_type: FileType,
        followed_link: bool,
    },
    Child {
        file_type: FileType,
        followed_link: bool,
    },
    Error(Error),
    /// The top frame was just pushed.
    Enter,
    /// The frame in `leaving` was just popped.
    Leave,
}

/// What [`Walk::descend`] did.
enum Descent {
    /// Nothing entered (a mount point the walk does not cross).
    None,
    /// A frame pushed, with the error that cut its reading short, if any.
    Entered(Option<Error>),
}

impl Walk {
    pub(crate) fn new(b: WalkBuilder) -> Walk {
        // Read ahead in a sorted walk (the order is the walker's own) asked for with
        // several threads. The workers ask the walk's filter before they read a
        // directory, as the walker does before it enters one.
        let threads = match b.opts.threads {
            0 => super::pool::cores(),
            n => n,
        };
        let share = super::Budget::new(b.opts.fd_budget).sorted();
        // The walker reads too (whenever the directory it needs is being read), so it
        // counts as one of the threads.
        let workers = (threads - 1).min(share.max_workers);
        // Beside a gate, the workers make each directory's rules as the walker would.
        let ahead = (b.opts.sort && b.opts.read_ahead && workers > 0).then(|| {
            // By default, more workers when reads wait on the disk (a cold cache).
            let max = match b.opts.threads {
                0 => super::Budget::new(b.opts.fd_budget).sorted_io_workers(),
                _ => workers,
            };
            ReadAhead::new(
                &b.opts,
                b.filter.clone(),
                b.gate.clone(),
                workers,
                max,
                share,
            )
        });
        let budget = if ahead.is_some() {
            share.walker
        } else {
            b.opts.fd_budget
        };
        Walk {
            opts: b.opts,
            filter: b.filter,
            gate: b.gate,
            scratch: Vec::new(),
            roots: b.roots.into_iter(),
            root_dev: 0,
            stack: Vec::new(),
            spare: Vec::new(),
            path: Vec::new(),
            buf: None,
            open: 0,
            pending: Pending::None,
            budget,
            ahead,
            queued_error: Default::default(),
            ancestors: Default::default(),
            closed_pending: 0,
            low: 0,
            events: false,
            leaving: None,
        }
    }

    /// Whether handles are kept until their directory is left (not closed as soon as no
    /// subdirectory is left to open).
    fn hold(&self) -> bool {
        self.opts.keep_handles || self.events
    }

    /// Calls `f` with every entry (or error) in turn; `f` says whether to go on, to skip
    /// the directory it was just shown, or to stop.
    ///
    /// ```
    /// use ftw::walk::{Control, WalkBuilder};
    ///
    /// let mut files = 0;
    /// WalkBuilder::new(env!("CARGO_MANIFEST_DIR")).build().visit(|item| {
    ///     match item {
    ///         Ok(e) if e.file_type() == ftw::sys::FileType::File => files += 1,
    ///         Ok(_) => {}
    ///         Err(err) => eprintln!("{err}"),
    ///     }
    ///     Control::Continue
    /// });
    /// assert!(files > 0);
    /// ```
    pub fn visit<F>(&mut self, f: F)
    where
        F: FnMut(Result<&Entry<'_>, Error>) -> Control,
    {
        self.run(&mut Entries(f), false);
    }

    /// Runs the walk with events: `visitor` sees every entry, and every directory
    /// entered and left (see [`Visitor`] for the order), in this walk's order (sorted
    /// with [`WalkBuilder::sort`]).
    ///
    /// ```
    /// use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
    /// use std::cell::Cell;
    ///
    /// /// Counts the files below each directory, handing each total to its parent.
    /// struct Files(Vec<(usize, u64)>);
    /// impl Visitor for Files {
    ///     type State = Cell<u64>;
    ///     fn enter(&mut self, _: &DirEvent<'_>, _: Option<&Cell<u64>>) -> Cell<u64> {
    ///         Cell::new(0)
    ///     }
    ///     fn entry(&mut self, e: Result<&Entry<'_>, Error>, dir: Option<&Cell<u64>>) -> Control {
    ///         if let (false, Some(n)) = (e.unwrap().is_dir(), dir) {
    ///             n.set(n.get() + 1);
    ///         }
    ///         Control::Continue
    ///     }
    ///     fn leave(&mut self, d: &DirEvent<'_>, files: Cell<u64>, parent: Option<&Cell<u64>>) {
    ///         if let Some(up) = parent {
    ///             up.set(up.get() + files.get());
    ///         }
    ///         self.0.push((d.depth(), files.get()));
    ///     }
    /// }
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("a/b"))?;
    /// std::fs::write(tmp.path().join("a/f"), b"")?;
    /// std::fs::write(tmp.path().join("a/b/g"), b"")?;
    /// let mut v = Files(Vec::new());
    /// WalkBuilder::new(tmp.path()).sort(true).build().visit_events(&mut v);
    /// // Left deepest first: a/b (1 file), a (2), the root (2).
    /// assert_eq!(v.0, vec![(2, 1), (1, 2), (0, 2)]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn visit_events<V: Visitor>(&mut self, visitor: &mut V) {
        self.run(visitor, true);
    }

    fn run<V: Visitor>(&mut self, v: &mut V, events: bool) {
        self.finish_leave();
        self.events = events;
        // The states of the frames entered in this call, from the frame at `base` up: a
        // walk taken up where another call left it has frames entered before, which
        // this visitor neither saw entered nor sees left.
        let mut base = self.stack.len();
        let mut states: Vec<V::State> = Vec::new();
        while let Some(step) = self.advance() {
            let top = self.stack.len().checked_sub(1);
            let control = match step {
                Step::Error(e) => v.entry(Err(e), state_of(&states, base, top)),
                Step::Root {
                    file_type,
                    followed_link,
                } => v.entry(Ok(&Entry::root(&self.path, file_type, followed_link)), None),
                Step::Child {
                    file_type,
                    followed_link,
                } => v.entry(
                    Ok(&self.current_entry(file_type, followed_link)),
                    state_of(&states, base, top),
                ),
                Step::Enter => {
                    let parent = top.and_then(|t| t.checked_sub(1));
                    let state = v.enter(&self.enter_event(), state_of(&states, base, parent));
                    states.push(state);
                    Control::Continue
                }
                Step::Leave => {
                    // The frame left was at the index the stack's length now is.
                    let left = self.stack.len();
                    if left >= base {
                        let state = states.pop().expect("a directory left was entered");
                        v.leave(&self.leave_event(), state, state_of(&states, base, top));
                    } else {
                        base = left;
                    }
                    Control::Continue
                }
            };
            match control {
                Control::Continue => {}
                Control::Skip => self.skip_current_dir(),
                Control::Stop => break,
            }
        }
        self.finish_leave();
        self.events = false;
    }

    /// The name, ready for the kernel, of the entry the top frame reported last (the
    /// directory being entered or left, while its frame is on top or leaving).
    fn current_name(parent: Option<&Frame>) -> Option<&[u8]> {
        parent.map(|p| p.list.name_with_nul(&p.list.items[p.cursor - 1]))
    }

    fn enter_event(&self) -> DirEvent<'_> {
        let n = self.stack.len();
        let top = &self.stack[n - 1];
        let parent = n.checked_sub(2).map(|i| &self.stack[i]);
        DirEvent {
            path: &self.path,
            name: Walk::current_name(parent),
            depth: top.depth,
            dir: top.dir.as_ref(),
            parent: parent.and_then(|p| p.dir.as_ref()),
            listing: Some(&top.list),
        }
    }

    fn leave_event(&self) -> DirEvent<'_> {
        let frame = self.leaving.as_ref().expect("a frame leaving");
        let parent = self.stack.last();
        DirEvent {
            path: &self.path[..frame.path_len],
            name: Walk::current_name(parent),
            depth: frame.depth,
            dir: frame.dir.as_ref(),
            parent: parent.and_then(|p| p.dir.as_ref()),
            listing: None,
        }
    }

    /// The next entry (borrowed until the next call) or error; `None` at the end.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, Error>> {
        match self.advance()? {
            Step::Error(e) => Some(Err(e)),
            Step::Root {
                file_type,
                followed_link,
            } => Some(Ok(Entry::root(&self.path, file_type, followed_link))),
            Step::Child {
                file_type,
                followed_link,
            } => Some(Ok(self.current_entry(file_type, followed_link))),
            Step::Enter | Step::Leave => unreachable!("events are only made for visit_events"),
        }
    }

    /// The entry the top frame reported last.
    fn current_entry(&self, file_type: FileType, followed_link: bool) -> Entry<'_> {
        let top = self.stack.last().expect("a child step has a frame");
        let item = &top.list.items[top.cursor - 1];
        let at = Place {
            parent: &self.path[..top.path_len],
            depth: top.depth + 1,
            dir: top.dir.as_ref(),
            root_dev: self.root_dev,
        };
        Entry::listed(&at, &top.list, item, file_type, followed_link)
    }

    /// Do not open the directory last reported (no effect if it was not a directory).
    pub fn skip_current_dir(&mut self) {
        if let (Pending::Child { .. }, Some(ahead), Some(top)) =
            (&self.pending, &mut self.ahead, self.stack.last())
        {
            ahead.discard(&top.ahead, top.cursor - 1);
        }
        self.pending = Pending::None;
    }

    /// The number of directory handles this walk holds open now.
    pub fn open_handles(&self) -> usize {
        self.open
    }

    /// The threads reading directories: the walker and the workers reading ahead of it
    /// (a sorted walk with several threads).
    pub fn threads(&self) -> usize {
        1 + self.ahead.as_ref().map_or(0, |a| a.workers())
    }

    /// Why a thread to read ahead could not be started, if one could not (a process
    /// limit, `ulimit -u`): the walk went on with those there were, at worst the
    /// walker alone, and lists the same.
    pub fn spawn_error(&self) -> Option<&io::Error> {
        self.ahead.as_ref().and_then(|a| a.spawn_error())
    }

    /// What the walk's threads were: its read-ahead's workers (none for a walk read by
    /// the walker alone), and why one could not be started, if one could not.
    pub(crate) fn into_stats(mut self) -> super::WalkStats {
        super::WalkStats {
            threads: self.ahead.as_ref().map_or(0, |a| a.workers()),
            jobs: 0,
            spawn_error: self.ahead.as_mut().and_then(|a| a.take_spawn_error()),
        }
    }

    fn advance(&mut self) -> Option<Step> {
        self.finish_leave();
        loop {
            // An error to tell before going on: after the entry it is about, even one
            // not reported (filtered out, or above the minimum depth).
            if let Some(err) = self.queued_error.pop_front() {
                return Some(Step::Error(err));
            }
            let entered = match std::mem::replace(&mut self.pending, Pending::None) {
                Pending::None => Descent::None,
                Pending::Root(dir, id) => Descent::Entered(self.push_root(dir, id).err()),
                Pending::Child { via_link } => match self.descend(via_link) {
                    Ok(d) => d,
                    Err(e) => return Some(Step::Error(e)),
                },
            };
            if let Descent::Entered(err) = entered {
                if self.events {
                    // The directory is entered, then what cut its reading short told.
                    self.queued_error.extend(err);
                    return Some(Step::Enter);
                }
                if let Some(e) = err {
                    return Some(Step::Error(e));
                }
            }
            let Some(top) = self.stack.last_mut() else {
                let root = self.roots.next()?;
                match self.start_root(root) {
                    Some(step) => return Some(step),
                    None => continue,
                }
            };
            if top.cursor >= top.list.items.len() {
                self.pop();
                if self.events {
                    return Some(Step::Leave);
                }
                self.finish_leave();
                continue;
            }
            let item = top.list.items[top.cursor];
            top.cursor += 1;
            let at = Place {
                parent: &self.path[..top.path_len],
                depth: top.depth + 1,
                dir: top.dir.as_ref(),
                root_dev: self.root_dev,
            };
            let ancestors = &self.ancestors;
            let ancestor = |id| ancestors.get(&id).map(|&(_, path_len)| path_len);
            let decision = step::decide(
                &self.opts,
                self.filter.as_ref(),
                &mut top.list,
                &item,
                &at,
                ancestor,
            );
            let kept = match decision {
                Decision::Error(e) => {
                    if let Some(ahead) = &mut self.ahead {
                        // Queued by the workers (a followed link to a directory), never
                        // to be entered.
                        ahead.discard(&top.ahead, top.cursor - 1);
                    }
                    return Some(Step::Error(e));
                }
                Decision::Dropped { late } => {
                    self.queued_error.extend(late);
                    continue;
                }
                Decision::Kept(kept) => kept,
            };
            // Reported although its type could not be found: its error comes next.
            self.queued_error.extend(kept.late);
            let Kept {
                file_type,
                followed_link,
                ..
            } = kept;
            if let (Some(gate), Some(rules)) = (&self.gate, &top.rules) {
                let e = Entry::listed(&at, &top.list, &item, file_type, followed_link);
                if !gate.keeps(rules, &e, &mut self.scratch) {
                    continue;
                }
            }
            if kept.enter {
                self.pending = Pending::Child {
                    via_link: followed_link,
                };
            }
            if kept.report {
                if self.opts.keep_handles && self.stack.last().is_some_and(|t| t.dir.is_none()) {
                    // Its handle could not be had back when a child was left: a last try
                    // (the entry is reported either way, without it if that fails, and
                    // the failure after it).
                    self.reopen_or_report(self.stack.len() - 1);
                }
                return Some(Step::Child {
                    file_type,
                    followed_link,
                });
            }
        }
    }

    /// Opens a root; reports it (at depth 0) unless `min_depth` says not to.
    fn start_root(&mut self, origin: Origin) -> Option<Step> {
        let root = origin.path;
        self.path.clear();
        self.path.extend_from_slice(&path_to_bytes(&root));
        let decision = step::root(
            &self.opts,
            self.filter.as_ref(),
            &root,
            &self.path,
            origin.dir,
        );
        match decision {
            RootDecision::Dropped => None,
            RootDecision::Failed(e) => Some(Step::Error(e)),
            RootDecision::Kept {
                file_type,
                followed_link,
                report,
                error,
                enter,
            } => {
                if let Some((dir, id)) = enter {
                    self.root_dev = id.map_or(0, |(dev, _)| dev);
                    self.pending = Pending::Root(dir, id);
                }
                // An unreadable root is reported, then its error.
                self.queued_error.extend(error);
                report.then_some(Step::Root {
                    file_type,
                    followed_link,
                })
            }
        }
    }

    /// Enters the directory last reported from the top frame: takes it from the
    /// read-ahead if a worker read it, else opens it from the parent's handle and reads
    /// it; then pushes its frame.
    fn descend(&mut self, via_link: bool) -> Result<Descent, Error> {
        let parent = self.stack.len() - 1;
        let item = {
            let top = &self.stack[parent];
            top.list.items[top.cursor - 1]
        };
        let depth = self.stack[parent].depth + 1;
        let name_start = self.path.len() + usize::from(!super::ends_with_sep(&self.path));
        let child_path = |w: &Walk| join(&w.path, w.stack[parent].list.name(&item));
        let take = match &mut self.ahead {
            Some(ahead) => {
                let top = &self.stack[parent];
                ahead.take(&top.ahead, top.cursor - 1)
            }
            None => Take::Yourself(None, AheadInfo::default()),
        };
        let read_here = !matches!(take, Take::Ready(_));
        // Beside a read-ahead, its workers open the subdirectories from this one opened
        // again by path, and check it by its identity.
        let want_id = self.opts.wants_ids() || self.ahead.is_some();
        let (dir, id, list, read_res, mut info, rules) = match take {
            Take::Ready(Err(e)) => return Err(Error::io(child_path(self), depth, e)),
            Take::Ready(Ok(r)) => {
                // A listing read ahead comes without its handle: a walk that keeps
                // handles opens the directory here, checked to be the one read.
                let dir = if self.opts.keep_handles {
                    self.make_room(2, &[parent]);
                    let opened = self.ensure_open(parent).and_then(|()| {
                        let top = &self.stack[parent];
                        let dir = top.dir.as_ref().expect("ensured");
                        let (d, _) =
                            node::open_child(dir, top.list.c_name(&item), via_link, false)?;
                        node::check(&d, Some(r.id))?;
                        Ok(d)
                    });
                    Some(opened.map_err(|e| Error::io(child_path(self), depth, e))?)
                } else {
                    None
                };
                (
                    dir,
                    Some(r.id),
                    Some(r.list),
                    r.read_error.map_or(Ok(()), Err),
                    r.ahead,
                    r.rules,
                )
            }
            Take::Yourself(shared, info) => {
                let opened = match shared {
                    // The read-ahead shares the parent's handle.
                    Some(h) => {
                        self.make_room(1, &[parent]);
                        let name = self.stack[parent].list.c_name(&item);
                        node::open_child(&h.dir, name, via_link, want_id)
                    }
                    None => {
                        self.make_room(2, &[parent]);
                        self.ensure_open(parent).and_then(|()| {
                            let top = &self.stack[parent];
                            let dir = top.dir.as_ref().expect("ensured");
                            node::open_child(dir, top.list.c_name(&item), via_link, want_id)
                        })
                    }
                };
                let (dir, id) = opened.map_err(|e| Error::io(child_path(self), depth, e))?;
                (Some(dir), id, None, Ok(()), info, None)
            }
        };
        // The parent's handle is no longer needed once no later entry can be a directory
        // (unless the walk keeps handles until directories are left).
        // (unless the walk keeps handles until directories are left, or the stack is
        // deep enough for handles to be closed: then each frame keeps its own, to climb
        // back through `..` to an ancestor that must be had back).
        let hold = self.hold() || self.stack.len() + 2 > self.budget;
        let top = &mut self.stack[parent];
        if !hold && !top.pending() && top.dir.take().is_some() {
            self.open -= 1;
        }
        if self.opts.off_fs(id, self.root_dev) {
            return Ok(Descent::None);
        }
        if name_start > self.path.len() {
            self.path.push(super::sep(&self.path));
        }
        self.path
            .extend_from_slice(self.stack[parent].list.name(&item));
        let (list, read_res) = match (list, &dir) {
            (Some(list), _) => (list, read_res),
            (None, Some(dir)) => self.read_listing(dir),
            (None, None) => unreachable!("a directory read here has its handle"),
        };
        let rules = match rules {
            Some((rules, errors)) => {
                self.queued_error.extend(errors);
                Some(rules)
            }
            None => self.make_rules(dir.as_ref(), &list, depth),
        };
        if read_here {
            if let Some(ahead) = &mut self.ahead {
                ahead.queue_children(&self.path, depth, &list, id, &mut info, rules.as_ref());
            }
        }
        self.push_listing(dir, list, info, id, depth, via_link, name_start, rules);
        let err = read_res
            .err()
            .map(|e| Error::io(bytes_to_path(self.path.clone()), depth, e));
        Ok(Descent::Entered(err))
    }

    /// Reads `dir` whole into a listing (sorted if asked, every type resolved). On an
    /// error part way, what was read is kept and the error returned beside it.
    fn read_listing(&mut self, dir: &Dir) -> (Listing, io::Result<()>) {
        let mut list = match &mut self.ahead {
            Some(ahead) => ahead.spare(),
            None => self.spare.pop(),
        }
        .unwrap_or_default();
        list.clear();
        let buf = self
            .buf
            .get_or_insert_with(|| DirBuf::with_capacity(self.opts.buf_size));
        let start = std::time::Instant::now();
        let res = list.fill(dir, buf, &self.opts);
        if let Some(ahead) = &self.ahead {
            ahead.add_io(start.elapsed());
        }
        (list, res)
    }

    /// The gate's rules for the directory whose path `self.path` now ends with (its
    /// parent's frame on top), made while its handle is at hand; what keeps them from
    /// being whole is reported next.
    fn make_rules(&mut self, dir: Option<&Dir>, list: &Listing, depth: usize) -> Option<DirRules> {
        let gate = self.gate.as_ref()?;
        let parent = self.stack.last();
        let event = DirEvent {
            path: &self.path,
            name: Walk::current_name(parent),
            depth,
            dir,
            parent: parent.and_then(|p| p.dir.as_ref()),
            listing: Some(list),
        };
        let queued = &mut self.queued_error;
        Some(
            gate.enter(&event, parent.and_then(|p| p.rules.as_ref()), &mut |e| {
                queued.push_back(e)
            }),
        )
    }

    /// Pushes the frame of the directory whose path `self.path` now ends with. Its
    /// handle is kept only while it has subdirectories to open.
    #[allow(clippy::too_many_arguments)]
    fn push_listing(
        &mut self,
        dir: Option<Dir>,
        list: Listing,
        ahead: AheadInfo,
        id: Option<Id>,
        depth: usize,
        via_link: bool,
        name_start: usize,
        rules: Option<DirRules>,
    ) {
        let last_dir = list.last_dir();
        let dir = if last_dir.is_some() || self.hold() {
            dir
        } else {
            None
        };
        if dir.is_some() {
            self.open += 1;
        }
        if let (true, Some(id)) = (self.opts.follow_links, id) {
            self.ancestors
                .insert(id, (self.stack.len(), self.path.len()));
        }
        self.stack.push(Frame {
            dir,
            list,
            ahead,
            cursor: 0,
            last_dir,
            path_len: self.path.len(),
            name_start,
            depth,
            id,
            via_link,
            counted: false,
            rules,
        });
    }

    /// Reads a root and pushes its frame.
    fn push_root(&mut self, dir: Dir, id: Option<Id>) -> Result<(), Error> {
        let info = self.ahead.as_mut().map(|ahead| {
            // The same directory the walker reads, not the path opened again.
            let root = dir.try_clone().ok();
            let rel = self.path.len() + usize::from(!super::ends_with_sep(&self.path));
            ahead.set_root(root.map(|dir| Root {
                dir,
                path: self.path.as_slice().into(),
                rel,
                dev: self.root_dev,
            }))
        });
        let (list, res) = self.read_listing(&dir);
        let mut info = info.unwrap_or_default();
        let depth = self.opts.root_depth;
        let rules = self.make_rules(Some(&dir), &list, depth);
        if let Some(ahead) = &mut self.ahead {
            ahead.queue_children(&self.path, depth, &list, id, &mut info, rules.as_ref());
        }
        self.push_listing(Some(dir), list, info, id, depth, false, 0, rules);
        res.map_err(|e| Error::io(bytes_to_path(self.path.clone()), depth, e))
    }

    /// Pops the top frame into `leaving`. When the walk keeps handles, the parent's
    /// handle is had back first, if it was closed: through the child's `..`, checked,
    /// one call a level (so a deep chain is climbed in linear time), else from an open
    /// ancestor.
    fn pop(&mut self) {
        let mut frame = self.stack.pop().expect("a frame to pop");
        if frame.counted {
            self.closed_pending -= 1;
        }
        if let Some(id) = frame.id.filter(|_| self.opts.follow_links) {
            if self.ancestors.get(&id).map(|&(i, _)| i) == Some(self.stack.len()) {
                self.ancestors.remove(&id);
            }
        }
        self.low = self.low.min(self.stack.len());
        // The parent's handle, if it was closed and is wanted again (the walk keeps
        // handles, or subdirectories are left to open there), is had back through this
        // one's `..`: a deep comb is climbed one call a level. Failing that, a walk that
        // keeps handles reopens it now; a listing, when it next needs it.
        if let Some(i) = self.stack.len().checked_sub(1) {
            let wanted = self.opts.keep_handles || self.closed_pending > 0;
            if wanted && self.stack[i].dir.is_none() {
                let up = match (&frame.dir, self.stack[i].id) {
                    (Some(d), Some(id)) if !frame.via_link => node::open_parent(d, id),
                    _ => None,
                };
                match up {
                    Some(d) => {
                        self.make_room(1, &[i]);
                        self.set_dir(i, d);
                    }
                    None if self.opts.keep_handles => self.reopen_or_report(i),
                    None => {}
                }
            }
        }
        if self.opts.close_before_leave && self.events && frame.dir.take().is_some() {
            self.open -= 1;
        }
        self.leaving = Some(frame);
    }

    /// Reopens frame `i` ([`Walk::ensure_open`]); what fails is reported next.
    fn reopen_or_report(&mut self, i: usize) {
        if let Err(e) = self.ensure_open(i) {
            let path = bytes_to_path(self.path[..self.stack[i].path_len].to_vec());
            let depth = self.stack[i].depth;
            self.queued_error.push_back(Error::io(path, depth, e));
        }
    }

    /// Lets go of the frame left last: its handle, its listing (kept for its memory), its
    /// part of the path.
    fn finish_leave(&mut self) {
        let Some(frame) = self.leaving.take() else {
            return;
        };
        if frame.dir.is_some() {
            self.open -= 1;
        }
        // Keep a few listings for their memory (the read-ahead's workers take them back).
        if let Some(ahead) = &mut self.ahead {
            ahead.recycle(frame.list);
        } else if self.spare.len() < 16 {
            self.spare.push(frame.list);
        }
        let len = self.stack.last().map_or(0, |f| f.path_len);
        self.path.truncate(len);
    }

    /// Closes the handles of the shallowest frames (not those in `keep`) until `need`
    /// more fit in the budget. A closed frame's identity is recorded first, so that its
    /// reopening can be checked.
    fn make_room(&mut self, need: usize, keep: &[usize]) {
        let hold = self.hold();
        let mut i = self.low.min(self.stack.len());
        // The first frame passed that keeps its handle: `low` cannot go past it.
        let mut kept = None;
        while self.open + need > self.budget && i < self.stack.len() {
            let frame = &mut self.stack[i];
            if keep.contains(&i) {
                if frame.dir.is_some() {
                    kept.get_or_insert(i);
                }
            } else if let Some(dir) = frame.dir.take() {
                // Its identity, where it may be had back: checked then.
                let pending = frame.pending();
                if frame.id.is_none() && (pending || self.closed_pending > 0 || hold) {
                    frame.id = node::identify(&dir).ok();
                }
                if pending {
                    frame.counted = true;
                    self.closed_pending += 1;
                }
                self.open -= 1;
            }
            i += 1;
        }
        self.low = kept.unwrap_or(i);
    }

    /// Gives frame `i` its handle back (counted, and where closing starts moved).
    fn set_dir(&mut self, i: usize, dir: Dir) {
        if std::mem::take(&mut self.stack[i].counted) {
            self.closed_pending -= 1;
        }
        self.stack[i].dir = Some(dir);
        self.open += 1;
        self.low = self.low.min(i);
    }

    /// Makes sure frame `i` has its handle, reopening it from its nearest open ancestor
    /// one component at a time (or from its root's path), and checking that it is the
    /// same directory as before.
    fn ensure_open(&mut self, i: usize) -> io::Result<()> {
        if self.stack[i].dir.is_some() {
            return Ok(());
        }
        let anc = (0..i).rev().find(|&k| self.stack[k].dir.is_some());
        self.make_room(2, &[anc.unwrap_or(usize::MAX)]);
        let components = |from: usize| {
            self.stack[from..=i]
                .iter()
                .map(|f| (&self.path[f.name_start..f.path_len], f.via_link))
        };
        let dir = match anc {
            Some(j) => {
                let from = self.stack[j].dir.as_ref().expect("open ancestor");
                node::reopen(from, components(j + 1), self.stack[i].id)?
            }
            None => {
                let root = Dir::open(&bytes_to_path(self.path[..self.stack[0].path_len].to_vec()))?;
                if i == 0 {
                    node::check(&root, self.stack[0].id)?;
                    root
                } else {
                    node::reopen(&root, components(1), self.stack[i].id)?
                }
            }
        };
        self.set_dir(i, dir);
        Ok(())
    }
}

impl Iterator for Walk {
    type Item = Result<DirEntry, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().map(|r| r.map(|e| e.to_owned()))
    }
}

/// The state of the frame at index `i`, if it was entered in this call (see `Walk::run`).
fn state_of<S>(states: &[S], base: usize, i: Option<usize>) -> Option<&S> {
    states.get(i?.checked_sub(base)?)
}
