//! The parallel walk: one job per directory on the work-stealing pool ([`super::pool`]),
//! each job opening its directory relative to a shared handle of its parent, reading it
//! with the worker's own buffer, reporting its entries to the worker's visitor and
//! pushing its subdirectories. Entries come in no fixed order.

use super::listing::Listing;
use super::node::Handle;
use super::pool::{self, PoolOptions, PoolStats, Scope};
use super::{Control, Entry, Error, Options, WalkBuilder, bytes_to_path, join, path_to_bytes};
use crate::sys::{self, Dir, DirBuf, FileType, StatMask};
use std::ffi::CStr;
use std::io::{self, ErrorKind::NotADirectory, ErrorKind::NotFound};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

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
    roots: Vec<PathBuf>,
    opts: Options,
}

/// A directory on the way down, for loop detection with `follow_links`.
struct Ancestor {
    id: (u64, u64),
    path_len: usize,
    parent: Option<Arc<Ancestor>>,
}

/// One directory to read.
struct DirJob {
    /// The nearest ancestor whose handle is kept, and where its path ends in `path`:
    /// the directory is opened from it one component at a time (just its own name when
    /// it is the parent).
    base: Option<(Arc<Handle>, usize)>,
    /// The directory's path (for a root, as given).
    path: Vec<u8>,
    depth: usize,
    via_link: bool,
    ancestors: Option<Arc<Ancestor>>,
    root_dev: u64,
    /// When the directory is opened from an older ancestor than its parent: the
    /// parent's (device, inode), checked on the way down, so that a directory moved
    /// or replaced meanwhile is reported, not listed in another's place.
    parent_id: Option<(u64, u64)>,
}

/// A worker's own things: its read buffer, its listing, its visitor.
struct WorkerState<V> {
    buf: DirBuf,
    list: Listing,
    visitor: V,
}

struct Ctx {
    opts: Options,
    open: Arc<AtomicUsize>,
    /// Handles that may be kept for subdirectories' jobs (the budget less what the
    /// workers hold while reading).
    keep_limit: usize,
}

impl WalkBuilder {
    /// Starts a walk on several threads (see [`WalkBuilder::threads`]); entries come in
    /// no fixed order.
    pub fn build_parallel(self) -> ParallelWalk {
        ParallelWalk {
            roots: self.roots,
            opts: self.opts,
        }
    }
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
        let opts = self.opts;
        // Each worker holds up to two handles of its own besides those kept for jobs:
        // the thread count is capped by the budget, `-j` included.
        let pool_opts = match opts.threads {
            0 => PoolOptions::adaptive(max_io_threads(opts.fd_budget)),
            n => PoolOptions::fixed(n.min(max_threads(opts.fd_budget))),
        };
        let reserve = 2 * pool_opts.max_threads + 1;
        let ctx = Ctx {
            open: Arc::new(AtomicUsize::new(0)),
            keep_limit: opts.fd_budget.saturating_sub(reserve).max(1),
            opts,
        };
        let roots = self.roots.iter().map(|r| DirJob {
            base: None,
            path: path_to_bytes(r),
            depth: 0,
            via_link: false,
            ancestors: None,
            root_dev: 0,
            parent_id: None,
        });
        pool::run(
            roots,
            pool_opts,
            || WorkerState {
                buf: DirBuf::with_capacity(ctx.opts.buf_size),
                list: Listing::default(),
                visitor: make_visitor(),
            },
            |state, job, scope| run_job(&ctx, state, job, scope),
        )
    }
}

/// The most workers the default choice grows to: 32 (the disk wants many requests in
/// flight on a cold cache), fewer when the handle budget is small (see [`max_threads`]).
///
/// ```
/// assert_eq!(ftw::walk::max_io_threads(1024), 32);
/// assert_eq!(ftw::walk::max_io_threads(12), 3);
/// ```
pub fn max_io_threads(fd_budget: usize) -> usize {
    max_threads(fd_budget).min(32)
}

/// The most workers a walk runs under a handle budget, whatever
/// [`WalkBuilder::threads`] asks: a quarter of the budget (each worker holds up to two
/// handles of its own, and the rest are kept for directories waiting to be read).
///
/// ```
/// assert_eq!(ftw::walk::max_threads(12), 3);
/// assert_eq!(ftw::walk::max_threads(4), 1);
/// ```
pub fn max_threads(fd_budget: usize) -> usize {
    (fd_budget / 4).max(1)
}

/// Reports a root (depth 0) to the worker's visitor; stops the walk if it says so.
fn visit_root<V: ParallelVisitor>(
    state: &mut WorkerState<V>,
    scope: &Scope<'_, DirJob>,
    path: &[u8],
    file_type: FileType,
) -> Control {
    let entry = Entry {
        parent: b"",
        name: path,
        depth: 0,
        file_type,
        followed_link: false,
        ino: 0,
    };
    let control = state.visitor.visit(Ok(&entry));
    if control == Control::Stop {
        scope.stop();
    }
    control
}

fn report<V: ParallelVisitor>(state: &mut WorkerState<V>, scope: &Scope<'_, DirJob>, err: Error) {
    if state.visitor.visit(Err(err)) == Control::Stop {
        scope.stop();
    }
}

/// Opens the job's directory: a root by its path, any other from its base handle, one
/// component at a time (symbolic links followed only where the walk follows them).
fn open(job: &DirJob, follow_links: bool) -> io::Result<Dir> {
    let Some((base, base_len)) = &job.base else {
        return Dir::open(&bytes_to_path(job.path.clone()));
    };
    let rest = &job.path[*base_len..];
    let comps: Vec<&[u8]> = rest
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .collect();
    let mut cur: Option<Dir> = None;
    let mut name = Vec::with_capacity(256);
    for (i, c) in comps.iter().enumerate() {
        if i + 1 == comps.len() {
            if let (Some(parent), Some(id)) = (&cur, job.parent_id) {
                let m = parent.stat(StatMask::TYPE)?;
                if (m.dev, m.ino) != id {
                    return Err(io::Error::other("directory replaced during the walk"));
                }
            }
        }
        name.clear();
        name.extend_from_slice(c);
        name.push(0);
        let cname = CStr::from_bytes_with_nul(&name)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let from = cur.as_ref().unwrap_or(&base.dir);
        // Intermediate components were entered through links only if the walk follows
        // links; the last one is this job's own directory.
        let last = i + 1 == comps.len();
        let d = if (last && job.via_link) || (!last && follow_links) {
            from.open_at_follow(cname)?
        } else {
            from.open_at(cname)?
        };
        cur = Some(d);
    }
    cur.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
}

fn run_job<V: ParallelVisitor>(
    ctx: &Ctx,
    state: &mut WorkerState<V>,
    mut job: DirJob,
    scope: &Scope<'_, DirJob>,
) {
    if scope.is_stopped() {
        return;
    }
    let opts = &ctx.opts;
    let want_id = opts.follow_links || opts.same_file_system;
    // Open, identify and read the directory: the time the pool watches.
    let opened = scope.io(|| {
        let dir = open(&job, opts.follow_links)?;
        let id = if want_id {
            let m = dir.stat(StatMask::TYPE)?;
            Some((m.dev, m.ino))
        } else {
            None
        };
        Ok::<_, io::Error>((dir, id))
    });
    let (dir, id) = match opened {
        Ok(x) => x,
        Err(e) if job.depth == 0 && matches!(e.kind(), NotADirectory | NotFound) => {
            // A root that is not a directory (or a dangling link): a single entry.
            let root = bytes_to_path(job.path.clone());
            match sys::stat_path(&root, StatMask::TYPE, e.kind() == NotADirectory) {
                Ok(m) if opts.min_depth == 0 => {
                    visit_root(state, scope, &job.path, m.file_type());
                }
                Ok(_) => {}
                Err(_) => report(state, scope, Error::io(root, 0, e)),
            }
            return;
        }
        Err(e) => {
            let path = bytes_to_path(job.path.clone());
            // A root that exists but cannot be read is listed, then reported (as find).
            if job.depth == 0 && opts.min_depth == 0 {
                if let Ok(m) = sys::stat_path(&path, StatMask::TYPE, true) {
                    if visit_root(state, scope, &job.path, m.file_type()) == Control::Stop {
                        return;
                    }
                }
            }
            report(state, scope, Error::io(path, job.depth, e));
            return;
        }
    };
    if job.depth == 0 {
        job.root_dev = id.map_or(0, |(dev, _)| dev);
        if opts.min_depth == 0 {
            match visit_root(state, scope, &job.path, FileType::Dir) {
                Control::Continue => {}
                Control::Skip => return,
                Control::Stop => return,
            }
        }
        if opts.max_depth == 0 {
            return;
        }
    } else if opts.off_fs(id, job.root_dev) {
        return;
    }
    let ancestors = match (opts.follow_links, id) {
        (true, Some(id)) => Some(Arc::new(Ancestor {
            id,
            path_len: job.path.len(),
            parent: job.ancestors.take(),
        })),
        _ => None,
    };
    state.list.clear();
    let read = scope.io(|| {
        opts.test_pause();
        let r = state
            .list
            .read(&dir, &mut state.buf, opts.hooks.forget_types);
        state
            .list
            .resolve_all(&dir, opts.follow_links, opts.same_file_system);
        r
    });
    if let Err(e) = read {
        report(
            state,
            scope,
            Error::io(bytes_to_path(job.path.clone()), job.depth, e),
        );
    }
    // Keep this directory's handle for its subdirectories' jobs while the budget
    // allows; past it, they open themselves from the nearest kept ancestor.
    let has_dirs = state.list.last_dir().is_some() && job.depth + 1 < opts.max_depth;
    let mut handle: Option<Arc<Handle>> = None;
    let mut dir = Some(dir);
    // Where the subdirectories' jobs open from: this directory's handle if it can be
    // kept; else the job's own base, with this directory's identity to check on the way.
    let mut own_id = id;
    let child_base = |handle: &mut Option<Arc<Handle>>,
                      dir: &mut Option<Dir>,
                      own_id: &mut Option<(u64, u64)>,
                      job: &DirJob| {
        if handle.is_none() {
            if let Some(d) = dir.take() {
                // A root's handle is always kept: every job below has a base.
                match Handle::share(d, &ctx.open, ctx.keep_limit, job.depth == 0) {
                    Ok(h) => *handle = Some(h),
                    Err(d) => {
                        if own_id.is_none() {
                            *own_id = d.stat(StatMask::TYPE).ok().map(|m| (m.dev, m.ino));
                        }
                    }
                }
            }
        }
        match handle {
            Some(h) => (Some((h.clone(), job.path.len())), None),
            None => (job.base.clone(), *own_id),
        }
    };
    let depth = job.depth + 1;
    let mut stop = false;
    for i in 0..state.list.items.len() {
        if scope.is_stopped() {
            return;
        }
        let item = state.list.items[i];
        let (file_type, followed_link, target) = match state.list.resolved(&item) {
            Ok(typed) => typed,
            Err(e) => {
                let path = join(&job.path, state.list.name(&item));
                report(state, scope, Error::io(path, depth, e));
                continue;
            }
        };
        // Reported although its type could not be found: its error comes after it.
        let late = state
            .list
            .take_error(&item)
            .map(|e| Error::io(join(&job.path, state.list.name(&item)), depth, e));
        if let Some(t) = target {
            let mut a = ancestors.as_deref();
            let mut looped = None;
            while let Some(anc) = a {
                if anc.id == t {
                    looped = Some(anc.path_len);
                    break;
                }
                a = anc.parent.as_deref();
            }
            if let Some(len) = looped {
                let path = join(&job.path, state.list.name(&item));
                let ancestor = bytes_to_path(job.path[..len].to_vec());
                report(state, scope, Error::fs_loop(path, depth, ancestor));
                continue;
            }
        }
        let entry = Entry {
            parent: &job.path,
            name: state.list.name(&item),
            depth,
            file_type,
            followed_link,
            ino: item.ino,
        };
        let control = if depth >= opts.min_depth {
            state.visitor.visit(Ok(&entry))
        } else {
            Control::Continue
        };
        if let Some(err) = late.filter(|_| control != Control::Stop) {
            if state.visitor.visit(Err(err)) == Control::Stop {
                scope.stop();
            }
        }
        match control {
            Control::Stop => {
                stop = true;
                break;
            }
            Control::Skip => continue,
            Control::Continue => {}
        }
        // A mount point is printed, not opened: its device is known from its entry.
        if file_type == FileType::Dir && has_dirs && !opts.off_fs(target, job.root_dev) {
            let mut path = Vec::with_capacity(job.path.len() + entry.name.len() + 1);
            path.extend_from_slice(&job.path);
            if !path.ends_with(b"/") {
                path.push(b'/');
            }
            path.extend_from_slice(state.list.name(&item));
            let (base, parent_id) = child_base(&mut handle, &mut dir, &mut own_id, &job);
            scope.push(DirJob {
                base,
                path,
                depth,
                via_link: followed_link,
                ancestors: ancestors.clone(),
                root_dev: job.root_dev,
                parent_id,
            });
        }
    }
    if stop {
        scope.stop();
    }
}
