//! `ftw du --mpi`: du's count as directory jobs shared across MPI ranks (`ftw_mpi`),
//! with the lines, figures and order of the single process.
//!
//! # du's order, from sorted records
//!
//! du prints each directory after its contents, the entries of a directory in the
//! order its listing gives them (every rank reads a directory in the same order). So
//! each entry gets a *place*: its root's number, then the position of each of its
//! names in its directory's listing (order-preserving: a length byte, then the
//! position's bytes, high first); a directory's own line sorts at its place followed
//! by 0xFF, after everything below it. The records go through the engine's sorted
//! merge, and rank 0 reads them in du's order.
//!
//! # Totals up the tree
//!
//! A job counts its directory itself and its files (each asked one `statx` relative to
//! the directory's handle), and makes one record for the directory: its own totals, at
//! its place. Rank 0 reads the records in du's order, a directory's after all of its
//! subdirectories', and adds them up with one running sum per depth (the subdirectories
//! done of the directory open at that depth): a directory's total is its own plus what
//! its subdirectories added; so nothing is sent up the tree during the walk, and no rank
//! waits for another. A directory deeper than the depth printed (-s, -d) has no line:
//! its totals are added, on the rank that counted it, into one record at the place of
//! its ancestor that has one (a rank holds at most one such record per directory
//! printed, whatever the tree below).
//!
//! # Hard links, once across ranks
//!
//! du counts a file with several links at its first name in du's order and leaves its
//! other names out. Here each name of such a file (`-l` aside) is sent as a note to
//! the rank its (device, inode) hashes to, which keeps, per file, the name with the
//! smallest place: that is the first in du's order, whichever rank found it and when.
//! When the walk is over (every note delivered: notes count as work in flight for the
//! termination waves), that rank makes the file's records: its totals added to its
//! directory's (or the printed ancestor's), and with -a its line. Exact, whatever the
//! ranks and the order they work in; the one table a rank keeps grows with the files
//! with several links whose (device, inode) it owns, as du's own table does.
//!
//! # Memory
//!
//! A rank holds its pending jobs (each with its place and own size), its records (one
//! per line printed that it counted, one per printed directory for what it folded
//! below the depth printed), and its share of the files with several links; rank 0
//! holds one running sum per depth. The records are the sorted output's, each rank
//! holding its own share, as `find --mpi --sort` does.

use super::Lines;
use crate::msg::{describe, report};
use crate::output::{Closed, Output};
use ftw::sys::{self, FileType, Metadata, StatMask};
use ftw::usage::{Listed, Stamp, TimeOf, Totals};
use ftw::walk::{Control, WalkBuilder};
use ftw_mpi::{Ctx, Held, Job, Mpi, Options, Work};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What `ftw du --mpi` counts and prints.
pub(super) struct How {
    /// Lines for directories (and files, with `all`) at most this deep.
    pub max_depth: usize,
    pub all: bool,
    pub total: bool,
    pub count_links: bool,
    pub one_file_system: bool,
    pub follow_roots: bool,
    pub latest: Option<TimeOf>,
    pub threads: usize,
    pub exclude: Option<super::PathTest>,
}

/// The types a record may name, by their number in it.
const TYPES: [FileType; 8] = FileType::ALL;

/// After a place: a directory's own line, after everything below it.
const END: u8 = 0xff;

/// Appends position `i` to a place: its length in bytes, then the bytes, high first.
fn push_pos(key: &mut Vec<u8>, i: u64) {
    let n = (8 - i.leading_zeros() as usize / 8).max(1);
    key.push(n as u8);
    key.extend_from_slice(&i.to_be_bytes()[8 - n..]);
}

/// The place of the ancestor at `depth` of the entry at `place` (`depth` names below
/// the root's number).
fn ancestor(place: &[u8], depth: usize) -> &[u8] {
    let mut at = 4;
    for _ in 0..depth {
        if at >= place.len() {
            break;
        }
        at += 1 + usize::from(place[at]);
    }
    &place[..at.min(place.len())]
}

/// What a record adds to a directory: to its own totals (and so to its total), and to
/// its total alone (what was below the depth printed).
#[derive(Clone, Copy, Default)]
struct Adds {
    own: Totals,
    extra: Totals,
    own_latest: Option<Stamp>,
    extra_latest: Option<Stamp>,
}

/// What a record is.
const DIR: u8 = 0; // additions to the directory at its place (with its line if a path)
const FILE: u8 = 1; // a file's line (its totals are in its directory's record)
const ROOT_FILE: u8 = 2; // a PATH that is not a directory: a line, and the grand total

fn put_totals(buf: &mut Vec<u8>, t: &Totals) {
    for v in [t.bytes, t.apparent, t.inodes] {
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

fn put_time(buf: &mut Vec<u8>, t: Option<Stamp>) {
    let t0 = t.unwrap_or_default();
    buf.push(u8::from(t.is_some()));
    buf.extend_from_slice(&t0.secs.to_le_bytes());
    buf.extend_from_slice(&t0.nsec.to_le_bytes());
}

/// Reads a record's (or a note's) fields in turn.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u8(&mut self) -> u8 {
        self.bytes(1)[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.bytes(8).try_into().unwrap())
    }
    fn totals(&mut self) -> Totals {
        Totals {
            bytes: self.u64(),
            apparent: self.u64(),
            inodes: self.u64(),
        }
    }
    fn time(&mut self) -> Option<Stamp> {
        let some = self.u8() != 0;
        let secs = self.u64() as i64;
        let nsec = self.u32();
        some.then_some(Stamp { secs, nsec })
    }
    fn sized(&mut self) -> &'a [u8] {
        let n = self.u32() as usize;
        self.bytes(n)
    }
}

/// A record: kind, depth, type, additions, then the path (empty: no line).
fn record(kind: u8, depth: usize, file_type: FileType, adds: &Adds, path: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(90 + path.len());
    r.push(kind);
    r.extend_from_slice(&(depth as u32).to_le_bytes());
    r.push(TYPES.iter().position(|&t| t == file_type).unwrap_or(7) as u8);
    put_totals(&mut r, &adds.own);
    put_totals(&mut r, &adds.extra);
    put_time(&mut r, adds.own_latest);
    put_time(&mut r, adds.extra_latest);
    r.extend_from_slice(path);
    r
}

struct Record<'a> {
    kind: u8,
    depth: usize,
    file_type: FileType,
    adds: Adds,
    path: &'a [u8],
}

fn read_record(r: &[u8]) -> Record<'_> {
    let mut rd = Reader(r);
    let kind = rd.u8();
    let depth = rd.u32() as usize;
    let file_type = TYPES[usize::from(rd.u8() & 7)];
    let own = rd.totals();
    let extra = rd.totals();
    let own_latest = rd.time();
    let extra_latest = rd.time();
    Record {
        kind,
        depth,
        file_type,
        adds: Adds {
            own,
            extra,
            own_latest,
            extra_latest,
        },
        path: rd.0,
    }
}

fn later(a: Option<Stamp>, b: Option<Stamp>) -> Option<Stamp> {
    a.max(b)
}

impl Adds {
    fn add(&mut self, o: &Adds) {
        self.own += o.own;
        self.extra += o.extra;
        self.own_latest = later(self.own_latest, o.own_latest);
        self.extra_latest = later(self.extra_latest, o.extra_latest);
    }
}

/// A job's data: its place, and its directory's own totals and time (from its parent's
/// listing, so that a directory that cannot be read still counts its own size).
fn job_data(place: &[u8], own: &Totals, time: Option<Stamp>) -> Vec<u8> {
    let mut d = Vec::with_capacity(place.len() + 40);
    d.extend_from_slice(&(place.len() as u32).to_le_bytes());
    d.extend_from_slice(place);
    put_totals(&mut d, own);
    put_time(&mut d, time);
    d
}

/// The rank that decides on file (`dev`, `ino`).
fn owner(dev: u64, ino: u64, ranks: usize) -> usize {
    // splitmix64 of both.
    let mut z = dev.rotate_left(32) ^ ino;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % ranks as u64) as usize
}

/// What a job does: count one directory.
struct DuWork<'a> {
    how: &'a How,
    ask: StatMask,
    errors: AtomicU64,
    /// Additions to printed directories from below the depth printed, by place.
    folds: Mutex<HashMap<Vec<u8>, (usize, Adds)>>,
    /// Files with several links this rank decides on: the note of the first name in
    /// du's order.
    links: Mutex<HashMap<(u64, u64), Vec<u8>>>,
}

/// A name of a file with several links, for the rank that decides on it.
struct LinkNote<'a> {
    dev: u64,
    ino: u64,
    /// The name's place.
    place: &'a [u8],
    /// Where its totals go: the place of its directory (own) or of the printed
    /// ancestor (extra), and that directory's depth; empty for a PATH.
    to: &'a [u8],
    to_depth: usize,
    own: bool,
    file_type: FileType,
    total: Totals,
    time: Option<Stamp>,
    /// Its depth and path, if it has a line (-a, or a PATH); empty path: none.
    depth: usize,
    path: &'a [u8],
}

impl LinkNote<'_> {
    fn encode(&self) -> Vec<u8> {
        let mut n = Vec::new();
        n.extend_from_slice(&self.dev.to_le_bytes());
        n.extend_from_slice(&self.ino.to_le_bytes());
        for s in [self.place, self.to] {
            n.extend_from_slice(&(s.len() as u32).to_le_bytes());
            n.extend_from_slice(s);
        }
        n.extend_from_slice(&(self.to_depth as u32).to_le_bytes());
        n.push(u8::from(self.own));
        n.push(TYPES.iter().position(|&t| t == self.file_type).unwrap_or(7) as u8);
        put_totals(&mut n, &self.total);
        put_time(&mut n, self.time);
        n.extend_from_slice(&(self.depth as u32).to_le_bytes());
        n.extend_from_slice(self.path);
        n
    }

    fn decode(n: &[u8]) -> LinkNote<'_> {
        let mut r = Reader(n);
        let dev = r.u64();
        let ino = r.u64();
        let place = r.sized();
        let to = r.sized();
        let to_depth = r.u32() as usize;
        let own = r.u8() != 0;
        let file_type = TYPES[usize::from(r.u8() & 7)];
        let total = r.totals();
        let time = r.time();
        let depth = r.u32() as usize;
        LinkNote {
            dev,
            ino,
            place,
            to,
            to_depth,
            own,
            file_type,
            total,
            time,
            depth,
            path: r.0,
        }
    }
}

impl DuWork<'_> {
    fn error(&self, path: &[u8], e: &std::io::Error) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        report(path, &describe(e));
    }

    fn time(&self, m: &Metadata) -> Option<Stamp> {
        self.how.latest.map(|t| t.of(m))
    }

    fn excluded(&self, path: &[u8]) -> bool {
        self.how.exclude.as_ref().is_some_and(|ex| ex(path))
    }

    /// Whether a file at `depth` has a line.
    fn file_line(&self, depth: usize) -> bool {
        self.how.all && depth <= self.how.max_depth
    }

    /// A PATH that is not a directory: its line at its place, or (several links) a
    /// note to the rank that decides on it.
    fn root_file(&self, job: &Job, place: &[u8], m: &Metadata, ctx: &mut Ctx<'_>) {
        let t = Totals::of(m);
        let time = self.time(m);
        if m.nlink > 1 && !self.how.count_links {
            let note = LinkNote {
                dev: m.dev,
                ino: m.ino,
                place,
                to: &[],
                to_depth: 0,
                own: true,
                file_type: m.file_type(),
                total: t,
                time,
                depth: 0,
                path: &job.path,
            };
            ctx.note(owner(m.dev, m.ino, ctx.ranks()), &note.encode());
            return;
        }
        let adds = Adds {
            own: t,
            own_latest: time,
            ..Adds::default()
        };
        ctx.record(
            place,
            &record(ROOT_FILE, 0, m.file_type(), &adds, &job.path),
        );
    }
}

impl Work for DuWork<'_> {
    fn run(&self, job: Job, ctx: &mut Ctx<'_>) {
        let depth = job.depth as usize;
        let max = self.how.max_depth;
        // The place, and the directory's own totals.
        let (mut place, own, own_time, root_dev) = if depth == 0 {
            let mut place = job.root.to_be_bytes().to_vec();
            if self.excluded(&job.path) {
                return;
            }
            let path = Path::new(OsStr::from_bytes(&job.path));
            let m = match sys::stat_path(path, self.ask, self.how.follow_roots) {
                Ok(m) => m,
                Err(e) => return self.error(&job.path, &e),
            };
            if !m.file_type().is_dir() {
                place.push(END);
                return self.root_file(&job, &place, &m, ctx);
            }
            (place, Totals::of(&m), self.time(&m), m.dev)
        } else {
            let mut r = Reader(&job.data);
            let place = r.sized().to_vec();
            (place, r.totals(), r.time(), job.dev)
        };
        let path_os = OsStr::from_bytes(&job.path);
        let dir = if depth == 0 {
            sys::Dir::open(Path::new(path_os))
        } else {
            ctx.open(&job)
        };
        let mut adds = Adds {
            own,
            own_latest: own_time,
            ..Adds::default()
        };
        // Where this directory's files' totals go: its own record, or (below the depth
        // printed) the printed ancestor's, as extra.
        let here = depth <= max;
        let prefix_len = place.len();
        let mut to = if here {
            place.clone()
        } else {
            ancestor(&place, max).to_vec()
        };
        to.push(END);
        let to_depth = depth.min(max);
        match dir {
            Err(e) => self.error(&job.path, &e),
            Ok(dir) => {
                let b = WalkBuilder::from_dir(dir, path_os)
                    .root_depth(depth)
                    .min_depth(depth + 1)
                    .max_depth(depth + 1)
                    .keep_handles(true);
                let mut pos = 0u64;
                let mut path = Vec::new();
                let mut shared: Option<Option<Arc<Held>>> = None;
                b.build().visit(|item| {
                    let e = match item {
                        Ok(e) => e,
                        Err(err) => {
                            self.errors.fetch_add(1, Ordering::Relaxed);
                            crate::msg::error(&err);
                            return Control::Continue;
                        }
                    };
                    let at = pos;
                    pos += 1;
                    path.clear();
                    e.write_path(&mut path);
                    if self.excluded(&path) {
                        return Control::Skip;
                    }
                    let (Some(parent), Some(name)) = (e.dir(), e.c_name()) else {
                        return Control::Continue;
                    };
                    let m = match parent.stat_at(name, self.ask, false) {
                        Ok(m) => m,
                        Err(err) => {
                            self.error(&path, &err);
                            return Control::Skip;
                        }
                    };
                    if self.how.one_file_system && m.dev != root_dev {
                        return Control::Skip;
                    }
                    place.truncate(prefix_len);
                    push_pos(&mut place, at);
                    let t = Totals::of(&m);
                    let time = self.time(&m);
                    if m.file_type().is_dir() {
                        let held = shared.get_or_insert_with(|| Held::share(parent)).clone();
                        let mut child = job.child(e.name(), m.dev, m.ino, held);
                        child.data = job_data(&place, &t, time);
                        ctx.push(child);
                        return Control::Continue;
                    }
                    if m.nlink > 1 && !self.how.count_links {
                        let line = self.file_line(depth + 1);
                        let note = LinkNote {
                            dev: m.dev,
                            ino: m.ino,
                            place: &place,
                            to: &to,
                            to_depth,
                            own: here,
                            file_type: m.file_type(),
                            total: t,
                            time,
                            depth: depth + 1,
                            path: if line { &path } else { &[] },
                        };
                        ctx.note(owner(m.dev, m.ino, ctx.ranks()), &note.encode());
                        return Control::Continue;
                    }
                    adds.own += t;
                    adds.own_latest = later(adds.own_latest, time);
                    if self.file_line(depth + 1) {
                        let file = Adds {
                            own: t,
                            own_latest: time,
                            ..Adds::default()
                        };
                        ctx.record(
                            &place,
                            &record(FILE, depth + 1, m.file_type(), &file, &path),
                        );
                    }
                    Control::Continue
                });
            }
        }
        if here {
            ctx.record(&to, &record(DIR, depth, FileType::Dir, &adds, &job.path));
        } else {
            let below = Adds {
                extra: adds.own,
                extra_latest: adds.own_latest,
                ..Adds::default()
            };
            let mut folds = self.folds.lock().unwrap_or_else(|e| e.into_inner());
            folds
                .entry(to)
                .or_insert((to_depth, Adds::default()))
                .1
                .add(&below);
        }
    }

    fn note(&self, note: &[u8], _ctx: &mut Ctx<'_>) {
        let n = LinkNote::decode(note);
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        match links.get_mut(&(n.dev, n.ino)) {
            Some(best) if LinkNote::decode(best).place <= n.place => {}
            Some(best) => *best = note.to_vec(),
            None => {
                links.insert((n.dev, n.ino), note.to_vec());
            }
        }
    }

    fn finish(&self, out: &mut dyn FnMut(&[u8], &[u8])) {
        let folds = std::mem::take(&mut *self.folds.lock().unwrap_or_else(|e| e.into_inner()));
        for (place, (depth, adds)) in &folds {
            out(place, &record(DIR, *depth, FileType::Dir, adds, &[]));
        }
        let links = std::mem::take(&mut *self.links.lock().unwrap_or_else(|e| e.into_inner()));
        for note in links.values() {
            let n = LinkNote::decode(note);
            let file = Adds {
                own: n.total,
                own_latest: n.time,
                ..Adds::default()
            };
            if n.to.is_empty() {
                // A PATH.
                out(n.place, &record(ROOT_FILE, 0, n.file_type, &file, n.path));
                continue;
            }
            let adds = if n.own {
                file
            } else {
                Adds {
                    extra: n.total,
                    extra_latest: n.time,
                    ..Adds::default()
                }
            };
            out(n.to, &record(DIR, n.to_depth, FileType::Dir, &adds, &[]));
            if !n.path.is_empty() {
                out(n.place, &record(FILE, n.depth, n.file_type, &file, n.path));
            }
        }
    }
}

/// Rank 0's side: the records in du's order, added up and printed.
struct Printer<'a> {
    lines: &'a Lines,
    out: Output,
    closed: Option<Closed>,
    /// The directory whose records are being read: its place, depth, additions and path.
    cur: Option<(Vec<u8>, usize, Adds, Vec<u8>)>,
    /// At each depth, what the subdirectories done of the directory open there add.
    sums: Vec<(Totals, Option<Stamp>)>,
    grand: Totals,
    grand_latest: Option<Stamp>,
}

impl Printer<'_> {
    fn line(&mut self, l: &Listed<'_>) {
        if self.closed.is_some() {
            return;
        }
        if self.lines.write(l, self.out.buf()) {
            if let Err(c) = self.out.end_record() {
                self.closed = Some(c);
            }
        }
    }

    /// A directory whose records are all read: its total, its line.
    fn close(&mut self) {
        let Some((_, depth, adds, path)) = self.cur.take() else {
            return;
        };
        if self.sums.len() < depth + 2 {
            self.sums.resize(depth + 2, (Totals::default(), None));
        }
        let (sub, sub_latest) = std::mem::take(&mut self.sums[depth + 1]);
        let total = adds.own + adds.extra + sub;
        let latest = later(later(adds.own_latest, adds.extra_latest), sub_latest);
        let s = &mut self.sums[depth];
        s.0 += total;
        s.1 = later(s.1, latest);
        if depth == 0 {
            self.grand += total;
            self.grand_latest = later(self.grand_latest, latest);
        }
        if !path.is_empty() {
            self.line(&Listed {
                path: &path,
                depth,
                file_type: FileType::Dir,
                total,
                own: adds.own,
                latest,
                own_latest: adds.own_latest,
            });
        }
    }

    fn take(&mut self, key: &[u8], rec: &[u8]) {
        if self.cur.as_ref().is_some_and(|c| c.0 != key) {
            self.close();
        }
        let r = read_record(rec);
        match r.kind {
            DIR => {
                let cur = self
                    .cur
                    .get_or_insert_with(|| (key.to_vec(), r.depth, Adds::default(), Vec::new()));
                cur.2.add(&r.adds);
                if !r.path.is_empty() {
                    cur.3 = r.path.to_vec();
                }
            }
            kind => {
                let t = r.adds.own;
                if kind == ROOT_FILE {
                    self.grand += t;
                    self.grand_latest = later(self.grand_latest, r.adds.own_latest);
                }
                self.line(&Listed {
                    path: r.path,
                    depth: r.depth,
                    file_type: r.file_type,
                    total: t,
                    own: t,
                    latest: r.adds.own_latest,
                    own_latest: r.adds.own_latest,
                });
            }
        }
    }
}

/// PATHs that hold one another (or are the same) are counted by du once; here they are
/// refused. The first such pair, if any.
fn overlap(roots: &[Vec<u8>], follow_roots: bool) -> Option<(usize, usize)> {
    let id = |p: &Path, follow: bool| {
        sys::stat_path(p, StatMask::ID, follow)
            .ok()
            .map(|m| (m.dev, m.ino, m.file_type().is_dir()))
    };
    let ids: Vec<_> = roots
        .iter()
        .map(|r| id(Path::new(OsStr::from_bytes(r)), follow_roots))
        .collect();
    for (i, r) in roots.iter().enumerate() {
        let Some((dev, ino, is_dir)) = ids[i] else {
            continue;
        };
        let path = Path::new(OsStr::from_bytes(r));
        // The directories it is in: its own (a directory), then each above it.
        let base = if is_dir {
            path.to_path_buf()
        } else {
            match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            }
        };
        let Ok(canon) = std::fs::canonicalize(&base) else {
            continue;
        };
        let above: Vec<(u64, u64)> = canon
            .ancestors()
            .filter_map(|a| id(a, true).map(|(d, i, _)| (d, i)))
            .collect();
        for (j, other) in ids.iter().enumerate() {
            let Some((d, n, _)) = other else { continue };
            if j != i && ((*d, *n) == (dev, ino) || above.contains(&(*d, *n))) {
                return Some((i.min(j), i.max(j)));
            }
        }
    }
    None
}

/// Runs `ftw du --mpi` on this rank: every rank counts, rank 0 prints.
pub(super) fn run(how: &How, roots: &[PathBuf], lines: &Lines, bad_names: bool) -> ExitCode {
    let Some(mpi) = Mpi::init() else {
        report(b"--mpi", "MPI could not be initialized");
        return ExitCode::from(2);
    };
    // Trailing slashes cut down to one, as du writes the root.
    let roots: Vec<Vec<u8>> = roots
        .iter()
        .map(|r| {
            let mut name = r.as_os_str().as_bytes().to_vec();
            while name.len() > 1 && name.ends_with(b"//") {
                name.pop();
            }
            name
        })
        .collect();
    if roots.len() > 1 {
        let found = overlap(&roots, how.follow_roots);
        // Said before the ranks agree, so that none exits before rank 0 has said it.
        if let (0, Some((i, j))) = (mpi.rank(), found) {
            report(
                b"du",
                &format!(
                    "{} and {} hold one another (or are the same): such PATHs cannot be \
                         used with --mpi (yet)",
                    crate::term::quote(&roots[i]),
                    crate::term::quote(&roots[j])
                ),
            );
        }
        if mpi.max_status(u8::from(found.is_some())) != 0 {
            return ExitCode::from(2);
        }
    }
    let ask = StatMask::SIZE
        .union(StatMask::BLOCKS)
        .union(StatMask::NLINK)
        .union(StatMask::ID)
        .union(how.latest.map_or(StatMask::TYPE, TimeOf::mask));
    let work = DuWork {
        how,
        ask,
        errors: AtomicU64::new(0),
        folds: Mutex::default(),
        links: Mutex::default(),
    };
    let opts = Options {
        threads: how.threads,
        sorted: true,
        // Test only: every job moves to the next rank.
        scatter: std::env::var_os("FTW_MPI_SCATTER").is_some_and(|v| v == "1"),
    };
    let out = match Output::stdout() {
        Ok(o) => o,
        Err(e) => {
            report(b"standard output", &describe(&e));
            return ExitCode::from(mpi.max_status(1));
        }
    };
    let mut printer = Printer {
        lines,
        out,
        closed: None,
        cur: None,
        sums: Vec::new(),
        grand: Totals::default(),
        grand_latest: None,
    };
    let walked = mpi.walk(&roots, &opts, &work, &mut |key, rec| printer.take(key, rec));
    printer.close();
    let mut status = u8::from(bad_names).max(crate::msg::mpi_walked(&mpi, walked));
    if how.total && mpi.rank() == 0 && printer.closed.is_none() {
        let (grand, latest) = (printer.grand, printer.grand_latest);
        lines.total(&grand, latest, printer.out.buf());
        if let Err(c) = printer.out.end_record() {
            printer.closed = Some(c);
        }
    }
    if printer.closed.is_none() {
        printer.closed = printer.out.flush().err();
    }
    if let Some(Closed::Failed(e)) = &printer.closed {
        report(b"standard output", &describe(e));
        status = status.max(1);
    }
    let errors = mpi.sum(&[work.errors.load(Ordering::Relaxed)])[0];
    if errors > 0 {
        status = status.max(1);
    }
    let status = mpi.max_status(status);
    if mpi.rank() == 0 {
        return super::finish(status, errors);
    }
    ExitCode::from(status)
}
