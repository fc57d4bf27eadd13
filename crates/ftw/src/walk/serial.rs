//! The serial walker: an explicit stack of directory frames, depth first, no recursion,
//! a bounded number of open handles.

use super::ahead::{AheadInfo, ReadAhead, Root, Take};
use super::listing::{Item, Listing};
use super::{
    Control, DirEntry, Entry, Error, Filter, Options, WalkBuilder, bytes_to_path, join,
    path_to_bytes,
};
use crate::sys::{self, Dir, DirBuf, FileType, StatMask};
use std::ffi::CString;
use std::io;
use std::path::PathBuf;

/// A walk in progress, made by [`WalkBuilder::build`]. Consume it with [`Walk::visit`],
/// [`Walk::next_entry`] or as an `Iterator` of owned [`DirEntry`] values.
pub struct Walk {
    opts: Options,
    filter: Option<Filter>,
    roots: std::vec::IntoIter<PathBuf>,
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
    queued_error: Option<Error>,
    /// Handles the frames may hold: the whole budget, or half of it beside a read-ahead
    /// (which keeps to the other half).
    budget: usize,
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
    id: Option<(u64, u64)>,
    /// Entered through a symbolic link (reopen by following it).
    via_link: bool,
}

/// What to descend into before reporting anything more.
enum Pending {
    None,
    Root(Dir, Option<(u64, u64)>),
    /// The entry just reported from the top frame.
    Child {
        via_link: bool,
    },
}

/// What `advance` found, to be turned into an [`Entry`] that borrows the walker.
enum Step {
    Root {
        file_type: FileType,
    },
    Child {
        file_type: FileType,
        followed_link: bool,
    },
    Error(Error),
}

fn entry<'a>(
    path: &'a [u8],
    frame: &'a Frame,
    item: &Item,
    file_type: FileType,
    followed_link: bool,
) -> Entry<'a> {
    Entry {
        parent: &path[..frame.path_len],
        name: frame.list.name(item),
        depth: frame.depth + 1,
        file_type,
        followed_link,
        ino: item.ino,
    }
}

impl Walk {
    pub(crate) fn new(b: WalkBuilder) -> Walk {
        // Read ahead only where it cannot change what is reported or opened: a sorted
        // walk (the order is the walker's own) asked for with several threads, and no
        // filter (which would have to run before the workers open a directory).
        let threads = match b.opts.threads {
            0 => super::pool::cores(),
            n => n,
        };
        // With read-ahead, half the handle budget is the walker's. Of the other half,
        // each worker holds the directory it reads and the root's handle is one more;
        // the rest may be shared with queued subdirectories.
        let walker_budget = (b.opts.fd_budget / 2).max(3);
        let ahead_budget = b.opts.fd_budget.saturating_sub(walker_budget);
        let max_workers = ahead_budget.saturating_sub(1) / 2;
        // The walker reads too (whenever the directory it needs is being read), so it
        // counts as one of the threads.
        let workers = (threads - 1).min(max_workers);
        let ahead =
            (b.opts.sort && b.opts.read_ahead && workers > 0 && b.filter.is_none()).then(|| {
                // By default, more workers when reads wait on the disk (a cold cache).
                let max = match b.opts.threads {
                    0 => max_workers.min(31),
                    _ => workers,
                };
                ReadAhead::new(&b.opts, workers, max, ahead_budget)
            });
        let budget = if ahead.is_some() {
            walker_budget
        } else {
            b.opts.fd_budget
        };
        Walk {
            opts: b.opts,
            filter: b.filter,
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
            queued_error: None,
        }
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
    pub fn visit<F>(&mut self, mut f: F)
    where
        F: FnMut(Result<&Entry<'_>, Error>) -> Control,
    {
        while let Some(item) = self.next_entry() {
            let control = match item {
                Ok(e) => f(Ok(&e)),
                Err(e) => f(Err(e)),
            };
            match control {
                Control::Continue => {}
                Control::Skip => self.skip_current_dir(),
                Control::Stop => break,
            }
        }
    }

    /// The next entry (borrowed until the next call) or error; `None` at the end.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, Error>> {
        match self.advance()? {
            Step::Error(e) => Some(Err(e)),
            Step::Root { file_type } => Some(Ok(Entry {
                parent: b"",
                name: &self.path,
                depth: 0,
                file_type,
                followed_link: false,
                ino: 0,
            })),
            Step::Child {
                file_type,
                followed_link,
            } => {
                let top = self.stack.last().expect("a child step has a frame");
                let item = &top.list.items[top.cursor - 1];
                Some(Ok(entry(&self.path, top, item, file_type, followed_link)))
            }
        }
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

    fn advance(&mut self) -> Option<Step> {
        if let Some(err) = self.queued_error.take() {
            return Some(Step::Error(err));
        }
        loop {
            match std::mem::replace(&mut self.pending, Pending::None) {
                Pending::None => {}
                Pending::Root(dir, id) => {
                    if let Err(e) = self.push_root(dir, id) {
                        return Some(Step::Error(e));
                    }
                }
                Pending::Child { via_link } => {
                    if let Err(e) = self.descend(via_link) {
                        return Some(Step::Error(e));
                    }
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
                continue;
            }
            let item = top.list.items[top.cursor];
            top.cursor += 1;
            let depth = top.depth + 1;
            let (file_type, followed_link, target) = match top.list.resolved(&item) {
                Ok(typed) => typed,
                Err(e) => {
                    let path = join(&self.path[..top.path_len], top.list.name(&item));
                    return Some(Step::Error(Error::io(path, depth, e)));
                }
            };
            let top = self.stack.last().expect("frame");
            if let Some(id) = target.filter(|_| self.opts.follow_links) {
                if let Some(anc) = self.stack.iter().find(|f| f.id == Some(id)) {
                    let path = join(&self.path[..top.path_len], top.list.name(&item));
                    let ancestor = bytes_to_path(self.path[..anc.path_len].to_vec());
                    if let Some(ahead) = &mut self.ahead {
                        // Queued by the workers (a followed link to a directory), never
                        // to be entered.
                        ahead.discard(&top.ahead, top.cursor - 1);
                    }
                    return Some(Step::Error(Error::fs_loop(path, depth, ancestor)));
                }
            }
            if let Some(filter) = self.filter.as_mut() {
                if !filter(&entry(&self.path, top, &item, file_type, followed_link)) {
                    continue;
                }
            }
            // A mount point is printed, not opened: its device is known from its entry.
            let other_fs = self.opts.off_fs(target, self.root_dev);
            if file_type == FileType::Dir && depth < self.opts.max_depth && !other_fs {
                self.pending = Pending::Child {
                    via_link: followed_link,
                };
            }
            if depth >= self.opts.min_depth {
                return Some(Step::Child {
                    file_type,
                    followed_link,
                });
            }
        }
    }

    /// Opens a root; reports it (at depth 0) unless `min_depth` says not to.
    fn start_root(&mut self, root: PathBuf) -> Option<Step> {
        self.path.clear();
        self.path.extend_from_slice(&path_to_bytes(&root));
        let want_id = self.opts.follow_links || self.opts.same_file_system;
        let file_type = match Dir::open(&root) {
            Ok(dir) => {
                let id = if want_id {
                    match dir.stat(StatMask::TYPE) {
                        Ok(m) => Some((m.dev, m.ino)),
                        Err(e) => return Some(Step::Error(Error::io(root, 0, e))),
                    }
                } else {
                    None
                };
                self.root_dev = id.map_or(0, |(dev, _)| dev);
                if self.opts.max_depth > 0 {
                    self.pending = Pending::Root(dir, id);
                }
                FileType::Dir
            }
            Err(e) => match e.raw_os_error() {
                // Not a directory (or a dangling link): a root that is a single entry.
                Some(20) | Some(2) => {
                    let follow = e.raw_os_error() == Some(20);
                    match sys::stat_path(&root, StatMask::TYPE, follow) {
                        Ok(m) => m.file_type(),
                        Err(_) => return Some(Step::Error(Error::io(root, 0, e))),
                    }
                }
                _ => {
                    // A root that exists but cannot be read is listed, then reported
                    // (as find does).
                    let err = Error::io(root.clone(), 0, e);
                    match sys::stat_path(&root, StatMask::TYPE, true) {
                        Ok(m) if self.opts.min_depth == 0 => {
                            self.queued_error = Some(err);
                            m.file_type()
                        }
                        _ => return Some(Step::Error(err)),
                    }
                }
            },
        };
        if let Some(filter) = self.filter.as_mut() {
            let e = Entry {
                parent: b"",
                name: &self.path,
                depth: 0,
                file_type,
                followed_link: false,
                ino: 0,
            };
            if !filter(&e) {
                self.pending = Pending::None;
                return None;
            }
        }
        (self.opts.min_depth == 0).then_some(Step::Root { file_type })
    }

    /// Enters the directory last reported from the top frame: takes it from the
    /// read-ahead if a worker read it, else opens it from the parent's handle and reads
    /// it; then pushes its frame.
    fn descend(&mut self, via_link: bool) -> Result<(), Error> {
        let parent = self.stack.len() - 1;
        let item = {
            let top = &self.stack[parent];
            top.list.items[top.cursor - 1]
        };
        let depth = self.stack[parent].depth + 1;
        let name_start = self.path.len() + usize::from(!self.path.ends_with(b"/"));
        let child_path = |w: &Walk| join(&w.path, w.stack[parent].list.name(&item));
        let take = match &mut self.ahead {
            Some(ahead) => {
                let top = &self.stack[parent];
                ahead.take(&top.ahead, top.cursor - 1)
            }
            None => Take::Yourself(None, AheadInfo::default()),
        };
        let read_here = !matches!(take, Take::Ready(_));
        let (dir, id, list, read_res, mut info) = match take {
            Take::Ready(Err(e)) => return Err(Error::io(child_path(self), depth, e)),
            Take::Ready(Ok(r)) => (
                None,
                Some(r.id),
                Some(r.list),
                r.read_error.map_or(Ok(()), Err),
                r.ahead,
            ),
            Take::Yourself(shared, info) => {
                if shared.is_some() {
                    self.make_room(1, &[parent]);
                }
                let name = self.stack[parent].list.c_name(&item);
                let opened = match shared {
                    // The read-ahead shares the parent's handle.
                    Some(h) if via_link => h.dir.open_at_follow(name),
                    Some(h) => h.dir.open_at(name),
                    None => {
                        self.make_room(2, &[parent]);
                        self.ensure_open(parent).and_then(|()| {
                            let top = &self.stack[parent];
                            let dir = top.dir.as_ref().expect("ensured");
                            let name = top.list.c_name(&item);
                            if via_link {
                                dir.open_at_follow(name)
                            } else {
                                dir.open_at(name)
                            }
                        })
                    }
                };
                let dir = opened.map_err(|e| Error::io(child_path(self), depth, e))?;
                // Beside a read-ahead, its workers open the subdirectories from this one
                // opened again by path, and check it by its identity.
                let want_id =
                    self.opts.follow_links || self.opts.same_file_system || self.ahead.is_some();
                let id = if want_id {
                    let m = dir
                        .stat(StatMask::TYPE)
                        .map_err(|e| Error::io(child_path(self), depth, e))?;
                    Some((m.dev, m.ino))
                } else {
                    None
                };
                (Some(dir), id, None, Ok(()), info)
            }
        };
        // The parent's handle is no longer needed once no later entry can be a directory.
        let top = &mut self.stack[parent];
        if top.last_dir.is_none_or(|last| top.cursor > last) && top.dir.take().is_some() {
            self.open -= 1;
        }
        if self.opts.off_fs(id, self.root_dev) {
            return Ok(());
        }
        if name_start > self.path.len() {
            self.path.push(b'/');
        }
        self.path
            .extend_from_slice(self.stack[parent].list.name(&item));
        let (list, read_res) = match (list, &dir) {
            (Some(list), _) => (list, read_res),
            (None, Some(dir)) => self.read_listing(dir),
            (None, None) => unreachable!("a directory read here has its handle"),
        };
        if read_here {
            if let Some(ahead) = &mut self.ahead {
                ahead.queue_children(&self.path, depth, &list, id, &mut info);
            }
        }
        self.push_listing(dir, list, info, id, depth, via_link, name_start);
        read_res.map_err(|e| Error::io(bytes_to_path(self.path.clone()), depth, e))
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

    /// Pushes the frame of the directory whose path `self.path` now ends with. Its
    /// handle is kept only while it has subdirectories to open.
    #[allow(clippy::too_many_arguments)]
    fn push_listing(
        &mut self,
        dir: Option<Dir>,
        list: Listing,
        ahead: AheadInfo,
        id: Option<(u64, u64)>,
        depth: usize,
        via_link: bool,
        name_start: usize,
    ) {
        let last_dir = list.last_dir();
        let dir = if last_dir.is_some() { dir } else { None };
        if dir.is_some() {
            self.open += 1;
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
        });
    }

    /// Reads a root and pushes its frame.
    fn push_root(&mut self, dir: Dir, id: Option<(u64, u64)>) -> Result<(), Error> {
        let info = self.ahead.as_mut().map(|ahead| {
            // The same directory the walker reads, not the path opened again.
            let root = dir.try_clone().ok();
            let rel = self.path.len() + usize::from(!self.path.ends_with(b"/"));
            ahead.set_root(root.map(|dir| Root {
                dir,
                rel,
                dev: self.root_dev,
            }))
        });
        let (list, res) = self.read_listing(&dir);
        let mut info = info.unwrap_or_default();
        if let Some(ahead) = &mut self.ahead {
            ahead.queue_children(&self.path, 0, &list, id, &mut info);
        }
        self.push_listing(Some(dir), list, info, id, 0, false, 0);
        res.map_err(|e| Error::io(bytes_to_path(self.path.clone()), 0, e))
    }

    fn pop(&mut self) {
        let frame = self.stack.pop().expect("a frame to pop");
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
        let mut i = 0;
        while self.open + need > self.budget && i < self.stack.len() {
            if !keep.contains(&i) {
                let frame = &mut self.stack[i];
                if let Some(dir) = frame.dir.take() {
                    if frame.id.is_none() {
                        frame.id = dir.stat(StatMask::TYPE).ok().map(|m| (m.dev, m.ino));
                    }
                    self.open -= 1;
                }
            }
            i += 1;
        }
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
        let component = |k: usize| {
            let f = &self.stack[k];
            CString::new(&self.path[f.name_start..f.path_len])
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
        };
        let (mut cur, from) = match anc {
            Some(j) => {
                let parent = self.stack[j].dir.as_ref().expect("open ancestor");
                let f = &self.stack[j + 1];
                let name = component(j + 1)?;
                let d = if f.via_link {
                    parent.open_at_follow(&name)?
                } else {
                    parent.open_at(&name)?
                };
                (d, j + 1)
            }
            None => (
                Dir::open(&bytes_to_path(self.path[..self.stack[0].path_len].to_vec()))?,
                0,
            ),
        };
        for k in from + 1..=i {
            let name = component(k)?;
            cur = if self.stack[k].via_link {
                cur.open_at_follow(&name)?
            } else {
                cur.open_at(&name)?
            };
        }
        if let Some(id) = self.stack[i].id {
            let m = cur.stat(StatMask::TYPE)?;
            if (m.dev, m.ino) != id {
                return Err(io::Error::other("directory replaced during the walk"));
            }
        }
        self.stack[i].dir = Some(cur);
        self.open += 1;
        Ok(())
    }
}

impl Iterator for Walk {
    type Item = Result<DirEntry, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().map(|r| r.map(|e| e.to_owned()))
    }
}
