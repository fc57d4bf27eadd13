//! `ftw rm --mpi`: `ftw rm` as directory jobs shared across MPI ranks (`ftw_mpi`).
//!
//! # Files through their directory's handle
//!
//! A job opens its directory as every `--mpi` job does (from its parent's handle on the
//! rank that listed it, else below its root's handle with no link followed, and checked
//! to be the directory listed by its (device, inode)), lists it with the serial walker
//! one level deep, and unlinks each entry that is not a directory with `unlinkat`
//! relative to that handle. Each subdirectory becomes a job.
//!
//! # Directories once their contents are gone: completion counts
//!
//! The rank that ran a directory's job *holds* it: it keeps, under a token, how many of
//! its subdirectories are not yet done, whether something in it could not be removed,
//! and its handle (within the ranks' budget of handles, a quarter of the limit on open
//! descriptors, whose soft limit `rm --mpi` raises to the hard one, up to 65,536; past
//! the budget, the directory is opened again below its root, checked, when it is
//! needed). Each job carries its parent's holder and token. A directory is done when its own listing is over and all
//! its subdirectories are done; its job (or the note that finished it) then sends a
//! note, a *completion*, to the rank that holds its parent, which removes it there with
//! `unlinkat(parent, name, AT_REMOVEDIR)` through the parent's handle and counts it
//! done: so a directory is removed only once everything below it is gone, and never by a
//! path resolved from the root. A root is removed through its parent's handle, opened
//! by its job as the single process opens it.
//!
//! Chosen over removing level by level, deepest first: that would need every directory
//! of the tree remembered until the walk is over, then one collective step per level
//! (3,000 of them for a 3,000-level chain) with the ranks waiting on one another at
//! each, and it would reopen every parent from the root. Completion counts remove each
//! directory as soon as it is empty, through a handle its holder has open, and a rank
//! remembers only the directories whose subdirectories are still being removed. The
//! notes are counted as work in flight by the termination waves, so the walk ends only
//! once every completion has been delivered and every removal made.
//!
//! # What changed meanwhile
//!
//! A subdirectory that is no longer the one listed when its job opens it (replaced,
//! swapped for a symbolic link, gone) is not entered and not reported: its completion
//! says so, its holder leaves it, and the parent, found not empty when it is removed,
//! is read again (a new job, at most three times, as the single process reads a
//! directory again), which unlinks the link and removes what the swap left. Nothing is
//! ever followed: every open is `O_NOFOLLOW` relative to a handle (or `openat2` with
//! `RESOLVE_NO_SYMLINKS` below the root's) and checked; every removal is relative to
//! the handle of the directory it removes from. A directory swapped for a link after it
//! was emptied fails its `rmdir` with `ENOTDIR`: it is left to the parent's reading
//! again too.
//!
//! # Errors
//!
//! What cannot be removed is reported once, by the rank that met it, as the single
//! process says it (`ftw: PATH: reason`); a directory that cannot be read
//! (`EACCES`) is removed all the same if it is empty, else reported with that error by
//! the rank that holds its parent. The directories holding what was kept are kept,
//! without messages. The refusals (`.`, `..`, `/`) are decided and said by rank 0
//! before any rank starts.

use crate::msg::{describe, report};
use crate::output::{Closed, Output};
use crate::term::Names;
use ftw::remove::Refusal;
use ftw::sys::{Dir, FileType, StatMask};
use ftw::walk::{Control, WalkBuilder};
use ftw_mpi::{Ctx, Held, Job, Mpi, Options, Replaced, Work};
use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::io::{self, ErrorKind};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What `ftw rm --mpi` does.
pub(super) struct How {
    pub force: bool,
    pub verbose: bool,
    pub one_file_system: bool,
    pub preserve_root: bool,
    pub threads: usize,
    pub names: Names,
}

/// How many times a directory found not empty when it is removed is read again.
const REFILLS: u32 = 3;

/// A job's parent, for a root.
const NO_PARENT: u32 = u32::MAX;

/// What a completion says of a directory.
const EMPTIED: u8 = 0; // everything in it is gone: remove it
const KEPT: u8 = 1; // something in it could not be removed (reported): keep it
const CHANGED: u8 = 2; // not the directory listed, or gone: leave it to the parent's reading again
const UNREADABLE: u8 = 3; // it could not be opened (EACCES): remove it if empty, else report

/// `ENOTEMPTY`, `ELOOP`: Linux's numbers.
const ENOTEMPTY: i32 = 39;
const ELOOP: i32 = 40;

/// A job's data: the rank that holds its parent, the parent's token there, and how
/// many times the directory was read again.
fn job_data(holder: u32, token: u64, refills: u32) -> Vec<u8> {
    let mut d = Vec::with_capacity(16);
    d.extend_from_slice(&holder.to_le_bytes());
    d.extend_from_slice(&token.to_le_bytes());
    d.extend_from_slice(&refills.to_le_bytes());
    d
}

fn read_job_data(d: &[u8]) -> (u32, u64, u32) {
    if d.len() < 16 {
        return (NO_PARENT, 0, 0);
    }
    (
        u32::from_le_bytes(d[0..4].try_into().unwrap()),
        u64::from_le_bytes(d[4..12].try_into().unwrap()),
        u32::from_le_bytes(d[12..16].try_into().unwrap()),
    )
}

/// A completion: the parent's token, what it says, an error number, the directory's
/// refills, its name.
fn completion(token: u64, what: u8, errno: i32, refills: u32, name: &[u8]) -> Vec<u8> {
    let mut n = Vec::with_capacity(17 + name.len());
    n.extend_from_slice(&token.to_le_bytes());
    n.push(what);
    n.extend_from_slice(&errno.to_le_bytes());
    n.extend_from_slice(&refills.to_le_bytes());
    n.extend_from_slice(name);
    n
}

/// How the holder reaches a directory it holds.
enum Handle {
    /// The handle its subdirectories' jobs share.
    Held(Arc<Held>),
    /// A root's own handle (always kept: a root is not opened again below itself).
    Root(Arc<Dir>),
    /// None kept (the budget was spent): opened again below its root, checked.
    Reopen,
}

/// A directory held on this rank: some of its subdirectories are not yet done.
struct Pending {
    /// Subdirectories not yet done.
    left: usize,
    /// Something in it could not be removed (reported).
    failed: bool,
    handle: Handle,
    /// Its job (without its parent's handle).
    job: Job,
    /// A root's parent, through which it is removed.
    root_parent: Option<Arc<Dir>>,
}

/// What each job does: empty one directory, unlinking its files.
struct RmWork<'a> {
    how: &'a How,
    /// Each root's PATH as given (the engine's root is its shown form).
    given: Vec<Vec<u8>>,
    /// The directories this rank holds, by token.
    pending: Mutex<HashMap<u64, Pending>>,
    next_token: AtomicU64,
    failed: AtomicBool,
    /// Some removal was refused for want of write permission in a directory inside.
    read_only: AtomicBool,
}

/// Whether `e` is `EACCES` (a mode refused), not `EPERM`.
fn refused_by_mode(e: &io::Error) -> bool {
    e.kind() == ErrorKind::PermissionDenied && e.raw_os_error() != Some(1)
}

/// `path` without its trailing slashes.
fn trim_slashes(path: &[u8]) -> &[u8] {
    let end = path.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    &path[..end]
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes)
        .map_err(|_| io::Error::new(ErrorKind::InvalidInput, "a NUL byte in the path"))
}

/// The last name of a job's path.
fn last_name(job: &Job) -> &[u8] {
    let below = job.below_root();
    below.rsplit(|&b| b == b'/').next().unwrap_or(below)
}

impl RmWork<'_> {
    fn error(&self, path: &[u8], reason: &str) {
        self.failed.store(true, Ordering::Relaxed);
        report(path, reason);
    }

    /// An entry of `dir` (the directory `dir_path`) that could not be removed, said as
    /// the single process says it.
    fn removal_error(&self, path: &[u8], e: &io::Error, dir_path: &[u8], inside: bool) {
        if refused_by_mode(e) {
            if inside {
                self.read_only.store(true, Ordering::Relaxed);
            }
            let dir = if dir_path.is_empty() { b"." } else { dir_path };
            return self.error(
                path,
                &format!(
                    "{}: its directory {} is not writable",
                    describe(e),
                    crate::term::quote(dir)
                ),
            );
        }
        self.error(path, &describe(e));
    }

    fn removed(&self, path: &[u8], file_type: FileType, ctx: &mut Ctx<'_>) {
        if self.how.verbose {
            let out = ctx.out();
            self.how.names.path(path, file_type, out);
            out.push(b'\n');
        }
    }

    /// A directory done: its completion to the rank that holds its parent, or for a
    /// root, its removal here.
    fn done(&self, job: &Job, what: u8, errno: i32, root_parent: Option<&Dir>, ctx: &mut Ctx<'_>) {
        let (holder, token, refills) = read_job_data(&job.data);
        if holder != NO_PARENT {
            let note = completion(token, what, errno, refills, last_name(job));
            ctx.note(holder as usize, &note);
            return;
        }
        // A root: removed through its parent's handle.
        let (Some(parent), EMPTIED) = (root_parent, what) else {
            return;
        };
        let given = &self.given[job.root as usize];
        let (parent_path, name) = split(given);
        let Ok(c_name) = cstring(name) else { return };
        match parent.remove_dir_at(&c_name) {
            Ok(()) => self.removed(&job.path, FileType::Dir, ctx),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                self.removed(&job.path, FileType::Dir, ctx)
            }
            Err(e) if e.raw_os_error() == Some(ENOTEMPTY) && refills < REFILLS => {
                let mut again = Job::root(job.root, &job.path);
                again.data = job_data(NO_PARENT, 0, refills + 1);
                ctx.push(again);
            }
            Err(e) => self.removal_error(given, &e, parent_path, false),
        }
    }

    /// Lists `dir` (the directory of `job`): unlinks its files, makes a job of each
    /// subdirectory, and holds it until they are done (or is done at once).
    fn empty(&self, job: Job, dir: Dir, root_parent: Option<Arc<Dir>>, ctx: &mut Ctx<'_>) {
        let depth = job.depth as usize;
        let root_dev = if depth == 0 || self.how.one_file_system {
            dir.stat(StatMask::ID).map_or(job.dev, |m| m.dev)
        } else {
            job.dev
        };
        let root_handle = (depth == 0)
            .then(|| dir.try_clone().ok().map(Arc::new))
            .flatten();
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let child_data = job_data(ctx.rank() as u32, token, 0);
        let mut left = 0usize;
        let mut failed = false;
        let mut shared: Option<Option<Arc<Held>>> = None;
        let mut path = Vec::new();
        let mut children = Vec::new();
        let b = WalkBuilder::from_dir(dir, OsStr::from_bytes(&job.path))
            .root_depth(depth)
            .min_depth(depth + 1)
            .max_depth(depth + 1)
            .keep_handles(true);
        b.build().visit(|item| {
            let e = match item {
                Ok(e) => e,
                Err(err) if err.io_error().kind() == ErrorKind::NotFound => {
                    return Control::Continue;
                }
                Err(err) => {
                    failed = true;
                    self.failed.store(true, Ordering::Relaxed);
                    crate::msg::error(&err);
                    return Control::Continue;
                }
            };
            path.clear();
            e.write_path(&mut path);
            let (Some(d), Some(name)) = (e.dir(), e.c_name()) else {
                failed = true;
                self.error(&path, "no handle to its directory");
                return Control::Continue;
            };
            let mut file_type = e.file_type();
            if e.is_dir() {
                match d.stat_at(name, StatMask::ID.union(StatMask::TYPE), false) {
                    Ok(m) if m.file_type().is_dir() => {
                        if self.how.one_file_system {
                            let why = if m.dev != root_dev {
                                Some("on another file system: not removed")
                            } else if d.is_mount_root_at(name).unwrap_or(false) {
                                Some("a mount point: not removed")
                            } else {
                                None
                            };
                            if let Some(why) = why {
                                failed = true;
                                self.error(&path, why);
                                return Control::Continue;
                            }
                        }
                        let held = shared.get_or_insert_with(|| Held::share(d)).clone();
                        let mut child = job.child(e.name(), m.dev, m.ino, held);
                        child.data = child_data.clone();
                        children.push(child);
                        left += 1;
                        return Control::Continue;
                    }
                    // No longer a directory: removed as what it is now.
                    Ok(m) => file_type = m.file_type(),
                    Err(err) if err.kind() == ErrorKind::NotFound => return Control::Continue,
                    Err(err) => {
                        failed = true;
                        self.error(&path, &describe(&err));
                        return Control::Continue;
                    }
                }
            }
            match d.unlink_at(name) {
                Ok(()) => self.removed(&path, file_type, ctx),
                Err(err) if err.kind() == ErrorKind::NotFound => {
                    self.removed(&path, file_type, ctx)
                }
                // Became a directory since it was listed: this directory, found not empty
                // when it is removed, is read again.
                Err(err) if err.kind() == ErrorKind::IsADirectory => {}
                Err(err) => {
                    failed = true;
                    self.removal_error(&path, &err, &job.path, true);
                }
            }
            Control::Continue
        });
        for child in children {
            ctx.push(child);
        }
        if left == 0 {
            let what = if failed { KEPT } else { EMPTIED };
            return self.done(&job, what, 0, root_parent.as_deref(), ctx);
        }
        let handle = match (root_handle, shared.flatten()) {
            (Some(root), _) => Handle::Root(root),
            (None, Some(held)) => Handle::Held(held),
            (None, None) => Handle::Reopen,
        };
        let mut job = job;
        job.parent = None;
        let pending = Pending {
            left,
            failed,
            handle,
            job,
            root_parent,
        };
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, pending);
    }

    /// The job of a PATH, as the single process removes one: checked, its parent opened
    /// (searched only), then unlinked, or emptied and removed through the parent.
    fn root(&self, job: Job, ctx: &mut Ctx<'_>) {
        let how = self.how;
        let given = &self.given[job.root as usize];
        let err = |e: &io::Error| self.error(given, &describe(e));
        let missing = |e: &io::Error| {
            how.force && matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
        };
        if given.is_empty() {
            if !how.force {
                err(&io::Error::from_raw_os_error(2));
            }
            return;
        }
        let trimmed = trim_slashes(given);
        let slash = trimmed.len() < given.len();
        let path = Path::new(OsStr::from_bytes(given));
        let (parent, name) = split(given);
        if name.is_empty() {
            // The root directory, allowed (--no-preserve-root): what is inside it.
            match Dir::open(path) {
                Ok(dir) if self.same_as_opened(&job, &dir, ctx) => self.empty(job, dir, None, ctx),
                Ok(_) => self.error(given, "replaced while the ranks opened it: not entered"),
                Err(e) => err(&e),
            }
            return;
        }
        let c_name = match cstring(name) {
            Ok(c) => c,
            Err(e) => return err(&e),
        };
        let parent_dir = match Dir::open_search_only(Path::new(OsStr::from_bytes(parent))) {
            Ok(d) => d,
            Err(e) if missing(&e) => return,
            Err(e) => return err(&e),
        };
        let meta = match parent_dir.stat_at(&c_name, StatMask::TYPE, false) {
            Ok(m) => m,
            Err(e) if missing(&e) => return,
            Err(e) => return err(&e),
        };
        let shown = &job.path;
        match meta.file_type() {
            FileType::Dir => {}
            FileType::Symlink if slash => {
                return match parent_dir.stat_at(&c_name, StatMask::TYPE, true) {
                    Ok(m) if m.file_type() == FileType::Dir => self.error(
                        given,
                        "a symbolic link named with a trailing '/': not removing what it leads \
                         to (name it without the '/' to remove the link itself)",
                    ),
                    _ if how.force => {}
                    _ => err(&io::Error::from_raw_os_error(20)),
                };
            }
            _ if slash => {
                if !how.force {
                    err(&io::Error::from_raw_os_error(20));
                }
                return;
            }
            file_type => {
                match parent_dir.unlink_at(&c_name) {
                    Ok(()) => self.removed(shown, file_type, ctx),
                    Err(e) if e.kind() == ErrorKind::NotFound => {
                        self.removed(shown, file_type, ctx)
                    }
                    Err(e) => self.removal_error(given, &e, parent, false),
                }
                return;
            }
        }
        let dir = match parent_dir.open_at(&c_name) {
            Ok(d) => d,
            Err(e) if e.kind() == ErrorKind::NotFound && how.force => return,
            // A PATH that cannot be read may be empty: then removed, as `rm -rf` does.
            Err(e) if refused_by_mode(&e) => {
                return match parent_dir.remove_dir_at(&c_name) {
                    Ok(()) => self.removed(shown, FileType::Dir, ctx),
                    Err(_) => err(&e),
                };
            }
            Err(e) => return err(&e),
        };
        if how.preserve_root {
            // Checked again on the handle: the path may have changed since.
            let root = ftw::sys::stat_path(Path::new("/"), StatMask::ID, true);
            if let (Ok(r), Ok(d)) = (root, dir.stat(StatMask::ID)) {
                if (r.dev, r.ino) == (d.dev, d.ino) {
                    return self.error(given, super::refusal_reason(Refusal::Root));
                }
            }
        }
        if !self.same_as_opened(&job, &dir, ctx) {
            return self.error(given, "replaced while the ranks opened it: not entered");
        }
        self.empty(job, dir, Some(Arc::new(parent_dir)), ctx);
    }

    /// Whether `dir` is the directory every rank opened as the job's root (the one below
    /// which jobs that moved open theirs).
    fn same_as_opened(&self, job: &Job, dir: &Dir, ctx: &Ctx<'_>) -> bool {
        let id = |d: &Dir| d.stat(StatMask::ID).ok().map(|m| (m.dev, m.ino));
        match ctx.root_dir(job.root) {
            Some(opened) => id(opened).is_some() && id(opened) == id(dir),
            None => false,
        }
    }
}

/// A PATH's parent and last name, as the single process cuts it (`/` alone: no name).
fn split(given: &[u8]) -> (&[u8], &[u8]) {
    let trimmed = trim_slashes(given);
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(0) => (b"/", &trimmed[1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (b".", trimmed),
    }
}

impl Work for RmWork<'_> {
    fn run(&self, job: Job, ctx: &mut Ctx<'_>) {
        if job.depth == 0 {
            return self.root(job, ctx);
        }
        match ctx.open(&job) {
            Ok(dir) => self.empty(job, dir, None, ctx),
            // Gone, swapped for a link or something else, replaced: not entered, and
            // left to its parent's reading again.
            Err(e)
                if e.kind() == ErrorKind::NotFound
                    || e.kind() == ErrorKind::NotADirectory
                    || e.raw_os_error() == Some(ELOOP)
                    || Replaced::is(&e) =>
            {
                self.done(&job, CHANGED, 0, None, ctx)
            }
            Err(e) if refused_by_mode(&e) => {
                let errno = e.raw_os_error().unwrap_or(13);
                self.done(&job, UNREADABLE, errno, None, ctx)
            }
            Err(e) => {
                self.error(&job.path, &describe(&e));
                self.done(&job, KEPT, 0, None, ctx)
            }
        }
    }

    /// A completion, on the rank that holds the directory's parent.
    fn note(&self, note: &[u8], ctx: &mut Ctx<'_>) {
        let token = u64::from_le_bytes(note[0..8].try_into().unwrap());
        let what = note[8];
        let errno = i32::from_le_bytes(note[9..13].try_into().unwrap());
        let refills = u32::from_le_bytes(note[13..17].try_into().unwrap());
        let name = &note[17..];
        // The parent's handle, and its job, taken out of the table for the removal.
        let (handle, parent_job) = {
            let table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let p = table.get(&token).expect("a directory this rank holds");
            let handle = match &p.handle {
                Handle::Held(h) => Some(Handle::Held(h.clone())),
                Handle::Root(d) => Some(Handle::Root(d.clone())),
                Handle::Reopen => None,
            };
            (handle, p.job.clone())
        };
        let mut kept = false;
        let mut again = None;
        if what == EMPTIED || what == UNREADABLE {
            let path = parent_job.child(name, 0, 0, None).path;
            let reopened;
            let dir: io::Result<&Dir> = match &handle {
                Some(Handle::Held(h)) => Ok(h.dir()),
                Some(Handle::Root(d)) => Ok(d),
                _ => {
                    reopened = ctx.open(&parent_job);
                    reopened
                        .as_ref()
                        .map_err(|e| io::Error::new(e.kind(), describe(e)))
                }
            };
            let gone = match (dir, cstring(name)) {
                (Ok(dir), Ok(c_name)) => match dir.remove_dir_at(&c_name) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
                    Err(e)
                        if what == EMPTIED
                            && e.raw_os_error() == Some(ENOTEMPTY)
                            && refills < REFILLS =>
                    {
                        // Filled again meanwhile: read again, a new job of the same parent.
                        match dir.stat_at(&c_name, StatMask::ID.union(StatMask::TYPE), false) {
                            Ok(m) if m.file_type().is_dir() => {
                                let mut job = parent_job.child(name, m.dev, m.ino, None);
                                job.data = job_data(ctx.rank() as u32, token, refills + 1);
                                again = Some(job);
                            }
                            _ => {}
                        }
                        Err(None)
                    }
                    // Swapped for something else after it was emptied: left to the parent's
                    // reading again.
                    Err(e) if what == EMPTIED && e.kind() == ErrorKind::NotADirectory => Err(None),
                    Err(e) => Err(Some(e)),
                },
                (Err(e), _) | (_, Err(e)) => Err(Some(e)),
            };
            match gone {
                Ok(()) => self.removed(&path, FileType::Dir, ctx),
                Err(None) => {}
                Err(Some(e)) => {
                    kept = true;
                    if what == UNREADABLE {
                        self.error(&path, &describe(&io::Error::from_raw_os_error(errno)));
                        if refused_by_mode(&io::Error::from_raw_os_error(errno)) {
                            self.read_only.store(true, Ordering::Relaxed);
                        }
                    } else {
                        self.removal_error(&path, &e, &parent_job.path, true);
                    }
                }
            }
        } else if what == KEPT {
            kept = true;
        }
        if let Some(job) = again {
            // The parent still waits on it.
            ctx.push(job);
            return;
        }
        let finished = {
            let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let p = table.get_mut(&token).expect("a directory this rank holds");
            p.failed |= kept;
            p.left -= 1;
            if p.left == 0 {
                table.remove(&token)
            } else {
                None
            }
        };
        if let Some(p) = finished {
            let what = if p.failed { KEPT } else { EMPTIED };
            self.done(&p.job, what, 0, p.root_parent.as_deref(), ctx);
        }
    }
}

/// Runs `ftw rm --mpi` on this rank: every rank removes, rank 0 says what was refused
/// and writes the paths removed (-v).
pub(super) fn run(how: &How, paths: &[OsString]) -> ExitCode {
    let Some(mpi) = Mpi::init() else {
        report(b"--mpi", "MPI could not be initialized");
        return ExitCode::from(2);
    };
    // Room for the handles of the directories being emptied (a quarter of the limit),
    // so that a deep tree's are not opened again from its root at each level.
    crate::process::raise_open_file_limit(1 << 16);
    // Rank 0 decides what is refused, says it, and tells the others.
    let mut refused: Vec<u64> = vec![0; paths.len()];
    if mpi.rank() == 0 {
        for (i, p) in paths.iter().enumerate() {
            let refusal = match ftw::remove::check_path(p) {
                Err(Refusal::Dot) => Some(Refusal::Dot),
                Err(Refusal::Root) if how.preserve_root => Some(Refusal::Root),
                _ => None,
            };
            if let Some(r) = refusal {
                refused[i] = 1;
                report(p.as_bytes(), super::refusal_reason(r));
            }
        }
    }
    mpi.broadcast(&mut refused);
    let kept: Vec<&OsString> = paths
        .iter()
        .zip(&refused)
        .filter(|(_, r)| **r == 0)
        .map(|(p, _)| p)
        .collect();
    let mut status = u8::from(refused.iter().any(|&r| r != 0));
    let given: Vec<Vec<u8>> = kept.iter().map(|p| p.as_bytes().to_vec()).collect();
    // PATHs that hold one another are removed one after another, in their order, as the
    // single process removes them (together, each would find the other's work done
    // under it); rank 0 decides.
    let mut apart = [u64::from(mpi.rank() == 0 && overlap(&given))];
    mpi.broadcast(&mut apart);
    let batches: Vec<Vec<Vec<u8>>> = if apart[0] != 0 {
        given.iter().map(|g| vec![g.clone()]).collect()
    } else if given.is_empty() {
        Vec::new()
    } else {
        vec![given]
    };
    let opts = Options {
        threads: how.threads,
        sorted: false,
        // Test only: every job moves to the next rank.
        scatter: std::env::var_os("FTW_MPI_SCATTER").is_some_and(|v| v == "1"),
    };
    let mut out = if how.verbose && mpi.rank() == 0 {
        match Output::stdout() {
            Ok(o) => Some(o),
            Err(e) => {
                report(b"standard output", &describe(&e));
                status = 1;
                None
            }
        }
    } else {
        None
    };
    let mut closed: Option<Closed> = None;
    let mut write = |_key: &[u8], bytes: &[u8]| {
        if let (Some(out), None) = (&mut out, &closed) {
            out.buf().extend_from_slice(bytes);
            if let Err(c) = out.end_record() {
                closed = Some(c);
            }
        }
    };
    let mut total = ftw_mpi::Stats::default();
    let mut failed = false;
    let mut read_only = false;
    for given in batches {
        // The engine's roots: as the paths below them are shown (no trailing slash).
        let roots: Vec<Vec<u8>> = given
            .iter()
            .map(|g| match trim_slashes(g) {
                b"" if !g.is_empty() => b"/".to_vec(),
                t => t.to_vec(),
            })
            .collect();
        let work = RmWork {
            how,
            given,
            pending: Mutex::default(),
            next_token: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            read_only: AtomicBool::new(false),
        };
        match mpi.walk(&roots, &opts, &work, &mut write) {
            Ok(stats) => {
                total.jobs += stats.jobs;
                total.sent += stats.sent;
                total.received += stats.received;
                total.steals += stats.steals;
            }
            Err(e) => {
                if mpi.rank() == 0 {
                    report(b"--mpi", &e);
                }
                status = 2;
            }
        }
        let held = work.pending.lock().unwrap_or_else(|e| e.into_inner()).len();
        if held > 0 {
            report(
                b"--mpi",
                &format!("{held} directories were left waiting on their contents (a bug)"),
            );
            status = status.max(1);
        }
        failed |= work.failed.load(Ordering::Relaxed);
        read_only |= work.read_only.load(Ordering::Relaxed);
    }
    crate::msg::mpi_stats(&mpi, &total);
    if let Some(out) = &mut out {
        if closed.is_none() {
            closed = out.flush().err();
        }
    }
    if let Some(Closed::Failed(e)) = &closed {
        report(b"standard output", &describe(e));
        status = status.max(1);
    }
    if failed {
        status = status.max(1);
    }
    let read_only = mpi.max_status(u8::from(read_only));
    if read_only != 0 && mpi.rank() == 0 {
        crate::msg::warn(
            "--chmod gives the read-only and unreadable directories inside the trees the \
             permissions removal takes (ftw rm --chmod, without --mpi)",
        );
    }
    ExitCode::from(mpi.max_status(status))
}

/// Whether some of the PATHs hold one another (or are the same): the identity of each
/// (a link not followed) against those of the directories each is in.
fn overlap(given: &[Vec<u8>]) -> bool {
    if given.len() < 2 {
        return false;
    }
    let id = |p: &Path, follow: bool| {
        ftw::sys::stat_path(p, StatMask::ID, follow)
            .ok()
            .map(|m| (m.dev, m.ino))
    };
    let ids: Vec<Option<(u64, u64)>> = given
        .iter()
        .map(|g| id(Path::new(OsStr::from_bytes(trim_slashes(g))), false))
        .collect();
    for (i, g) in given.iter().enumerate() {
        let Some(own) = ids[i] else { continue };
        let (parent, _) = split(g);
        let Ok(canon) = std::fs::canonicalize(Path::new(OsStr::from_bytes(parent))) else {
            continue;
        };
        let mut above: Vec<(u64, u64)> = canon.ancestors().filter_map(|a| id(a, true)).collect();
        above.push(own);
        if ids
            .iter()
            .enumerate()
            .any(|(j, other)| j != i && other.is_some_and(|o| above.contains(&o)))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cut_as_the_single_process_cuts_them() {
        assert_eq!(split(b"a/b/"), (&b"a"[..], &b"b"[..]));
        assert_eq!(split(b"/x"), (&b"/"[..], &b"x"[..]));
        assert_eq!(split(b"x"), (&b"."[..], &b"x"[..]));
        assert_eq!(split(b"///"), (&b"."[..], &b""[..]));
    }

    #[test]
    fn job_data_and_completions_survive_their_bytes() {
        assert_eq!(read_job_data(&job_data(3, 77, 2)), (3, 77, 2));
        assert_eq!(read_job_data(&[]), (NO_PARENT, 0, 0));
        let c = completion(9, UNREADABLE, 13, 1, b"a\nb\xff");
        assert_eq!(&c[17..], b"a\nb\xff");
        assert_eq!(c[8], UNREADABLE);
    }
}
