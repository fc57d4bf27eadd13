//! The ranks' work sharing: a pool of workers per rank, and the one thread that makes
//! every MPI call (see the crate's documentation for the protocol).

use crate::job::Job;
use ftw::sys::{Dir, StatMask};
use mpi::collective::SystemOperation;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Message tags.
const T_STEAL: i32 = 1; // a request for work (empty)
const T_JOBS: i32 = 2; // the answer: jobs, or nothing
const T_OUT: i32 = 3; // records for rank 0 to write
const T_WAVE: i32 = 4; // rank 0 asks for the counts
const T_ACK: i32 = 5; // the counts: idle, sent, received
const T_DONE: i32 = 6; // nothing is left anywhere
const T_PULL: i32 = 7; // rank 0 wants the next sorted records
const T_CHUNK: i32 = 8; // sorted records (empty: the end)
const T_PUSH: i32 = 9; // jobs sent unasked (the test-only scattering)
const T_NOTE: i32 = 10; // notes from one rank's workers to another rank's Work

/// Sorted records go to rank 0 in chunks of about this size.
const CHUNK: usize = 64 << 10;

/// The MPI environment of this process: initialized once, finalized when dropped.
pub struct Mpi {
    world: SimpleCommunicator,
    rank: i32,
    size: i32,
    // Last: MPI is finalized after the communicator is gone.
    _universe: mpi::environment::Universe,
}

/// How a distributed walk runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads on each rank (0: one per core).
    pub threads: usize,
    /// Keep records with their keys and merge them in order at rank 0.
    pub sorted: bool,
    /// Test only: every job found is sent to the next rank, so that every job moves.
    pub scatter: bool,
}

/// What the walk did, summed over all ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Jobs run.
    pub jobs: u64,
    /// Jobs sent to another rank.
    pub sent: u64,
    /// Jobs received from another rank.
    pub received: u64,
    /// Requests for work made.
    pub steals: u64,
}

/// What a rank does with a job: list the directory, write records through the
/// [`Ctx`], and push the jobs of the subdirectories to enter.
pub trait Work: Sync {
    /// Runs `job`.
    fn run(&self, job: Job, ctx: &mut Ctx<'_>);

    /// A note that a job (or another note) sent to this rank ([`Ctx::note`]), on the
    /// rank's MPI thread (or on the worker, when it was sent to its own rank). Every
    /// note is delivered before the walk ends. A note is handled as a small job is: it
    /// may push jobs, send notes and write output through `ctx`.
    fn note(&self, _note: &[u8], _ctx: &mut Ctx<'_>) {}

    /// Sorted walks: called once on each rank when the walk is over everywhere (every
    /// note delivered), before the merge, to add records of its own: `record(key,
    /// record)`.
    fn finish(&self, _record: &mut dyn FnMut(&[u8], &[u8])) {}
}

/// A worker's side of the walk, handed to [`Work::run`].
pub struct Ctx<'a> {
    roots: &'a [Option<Dir>],
    jobs: Vec<Job>,
    out: Vec<u8>,
    records: Vec<u8>,
    sorted: bool,
    rank: usize,
    /// Notes for each rank, each with its length first.
    notes: Vec<Vec<u8>>,
}

impl Ctx<'_> {
    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.notes.len()
    }

    /// Sends `note` to rank `to`'s [`Work::note`] (after this job, in one message per
    /// rank with the job's other notes). Counted as work in flight: the walk does not
    /// end before it is delivered.
    pub fn note(&mut self, to: usize, note: &[u8]) {
        let buf = &mut self.notes[to];
        buf.extend_from_slice(&(note.len() as u32).to_le_bytes());
        buf.extend_from_slice(note);
    }

    /// This rank's handle of root number `root`, opened when the walk started (as
    /// [`Mpi::walk`] opens it: following a link), if it could be: the directory that a
    /// job which moved opens its own below.
    pub fn root_dir(&self, root: u32) -> Option<&Dir> {
        self.roots.get(root as usize).and_then(Option::as_ref)
    }

    /// This rank's number.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Opens `job`'s directory (from its parent's handle, or below its root's, never
    /// through a link), checked to be the directory listed by its (device, inode).
    ///
    /// # Errors
    ///
    /// The system's error, or one saying the directory is not the one listed.
    pub fn open(&self, job: &Job) -> std::io::Result<Dir> {
        job.open(self.roots.get(job.root as usize).and_then(Option::as_ref))
    }

    /// A job to run (here or on another rank).
    pub fn push(&mut self, job: Job) {
        self.jobs.push(job);
    }

    /// Whether records go through [`Ctx::record`] (sorted) or [`Ctx::out`].
    pub fn sorted(&self) -> bool {
        self.sorted
    }

    /// Where unsorted records go: whole records only.
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// A sorted record, at `key` (keys compare as bytes).
    pub fn record(&mut self, key: &[u8], record: &[u8]) {
        push_record(&mut self.records, key, record);
    }
}

fn push_record(buf: &mut Vec<u8>, key: &[u8], record: &[u8]) {
    buf.extend_from_slice(&(key.len() as u32).to_le_bytes());
    buf.extend_from_slice(key);
    buf.extend_from_slice(&(record.len() as u32).to_le_bytes());
    buf.extend_from_slice(record);
}

/// The records of a buffer made by [`push_record`], as (key, record).
fn records(mut buf: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut all = Vec::new();
    while buf.len() >= 4 {
        let k = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
        let key = &buf[4..4 + k];
        let r = u32::from_le_bytes(buf[4 + k..8 + k].try_into().unwrap()) as usize;
        let rec = &buf[8 + k..8 + k + r];
        all.push((key, rec));
        buf = &buf[8 + k + r..];
    }
    all
}

/// Each note of a buffer made by [`Ctx::note`].
fn each_note(mut buf: &[u8], f: &mut dyn FnMut(&[u8])) {
    while buf.len() >= 4 {
        let n = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
        f(&buf[4..4 + n]);
        buf = &buf[4 + n..];
    }
}

/// Delivers the notes `ctx` holds for its own rank, and those that these send to it in
/// turn, until there are none.
fn deliver_own<W: Work>(work: &W, ctx: &mut Ctx<'_>) {
    loop {
        let own = std::mem::take(&mut ctx.notes[ctx.rank]);
        if own.is_empty() {
            return;
        }
        each_note(&own, &mut |n| work.note(n, ctx));
    }
}

/// A rank's queue of jobs, shared by its workers and its MPI thread.
struct Queue {
    jobs: VecDeque<Job>,
    /// Workers running a job.
    busy: usize,
    /// Jobs found while scattering, for the MPI thread to send on.
    outbox: Vec<Job>,
    /// Notes for each other rank, for the MPI thread to send.
    notes: Vec<Vec<u8>>,
    done: bool,
}

struct Shared<'a> {
    q: Mutex<Queue>,
    cv: Condvar,
    roots: &'a [Option<Dir>],
    sorted: bool,
    scatter: bool,
    rank: usize,
    jobs_run: AtomicU64,
    /// Each worker's sorted records, when it ends.
    records: Mutex<Vec<Vec<u8>>>,
}

impl Shared<'_> {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.q.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn worker<W: Work>(&self, work: &W, tx: SyncSender<Vec<u8>>) {
        let mut ctx = Ctx {
            roots: self.roots,
            jobs: Vec::new(),
            out: Vec::new(),
            records: Vec::new(),
            sorted: self.sorted,
            rank: self.rank,
            notes: vec![Vec::new(); self.lock().notes.len()],
        };
        loop {
            let job = {
                let mut q = self.lock();
                loop {
                    if q.done {
                        break None;
                    }
                    if let Some(job) = q.jobs.pop_back() {
                        q.busy += 1;
                        break Some(job);
                    }
                    q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let Some(job) = job else { break };
            work.run(job, &mut ctx);
            self.jobs_run.fetch_add(1, Ordering::Relaxed);
            // Notes to this rank are delivered here (and those they send to it in turn);
            // the others are handed on before the worker counts as idle, as its output is.
            deliver_own(work, &mut ctx);
            // The output is handed on before the worker counts as idle, so that an idle
            // rank holds none.
            if !ctx.out.is_empty() {
                let _ = tx.send(std::mem::take(&mut ctx.out));
            }
            let mut q = self.lock();
            for (to, buf) in q.notes.iter_mut().zip(&mut ctx.notes) {
                if !buf.is_empty() {
                    to.append(buf);
                }
            }
            let n = ctx.jobs.len();
            if self.scatter {
                q.outbox.append(&mut ctx.jobs);
            } else {
                q.jobs.extend(ctx.jobs.drain(..));
            }
            q.busy -= 1;
            drop(q);
            match n {
                0 => {}
                1 => self.cv.notify_one(),
                _ => self.cv.notify_all(),
            }
        }
        if !ctx.records.is_empty() {
            self.records
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(ctx.records);
        }
    }
}

/// A message received, for the loop to handle.
struct Inbound {
    from: i32,
    tag: i32,
    data: Vec<u8>,
}

impl Mpi {
    /// Initializes MPI (the calling thread alone makes MPI calls); `None` if it was
    /// initialized already or cannot be.
    pub fn init() -> Option<Mpi> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
        let world = universe.world();
        Some(Mpi {
            rank: world.rank(),
            size: world.size(),
            world,
            _universe: universe,
        })
    }

    /// This process's rank.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> i32 {
        self.size
    }

    /// Rank 0's `data`, on every rank (every rank calls it, with as many numbers).
    pub fn broadcast(&self, data: &mut [u64]) {
        if !data.is_empty() {
            self.world.process_at_rank(0).broadcast_into(data);
        }
    }

    /// The highest of every rank's `status` (every rank calls it).
    pub fn max_status(&self, status: u8) -> u8 {
        let mine = i32::from(status);
        let mut all = 0i32;
        self.world
            .all_reduce_into(&mine, &mut all, SystemOperation::max());
        all.clamp(0, 255) as u8
    }

    /// The sums over every rank of `mine` (every rank calls it, with as many numbers).
    pub fn sum(&self, mine: &[u64]) -> Vec<u64> {
        let mut all = vec![0u64; mine.len()];
        self.world
            .all_reduce_into(mine, &mut all[..], SystemOperation::sum());
        all
    }

    /// Opens each root (as the walk does: a link followed) and checks that every rank
    /// sees the same directories as rank 0. `Err` names the first root that differs.
    fn open_roots(&self, roots: &[Vec<u8>]) -> Result<Vec<Option<Dir>>, String> {
        let mut dirs = Vec::new();
        let mut ids = Vec::new();
        for r in roots {
            let dir = Dir::open(Path::new(OsStr::from_bytes(r))).ok();
            let id = dir
                .as_ref()
                .and_then(|d| d.stat(StatMask::ID).ok())
                .map_or((0, 0), |m| (m.dev, m.ino));
            ids.push(id.0);
            ids.push(id.1);
            dirs.push(dir);
        }
        let mut zero = ids.clone();
        if !zero.is_empty() {
            self.world.process_at_rank(0).broadcast_into(&mut zero[..]);
        }
        let differs = ids.chunks(2).zip(zero.chunks(2)).position(|(a, b)| a != b);
        let any = self.max_status(u8::from(differs.is_some()));
        if any != 0 {
            let which = differs.map_or(String::new(), |i| {
                format!(
                    " ({} on rank {})",
                    String::from_utf8_lossy(&roots[i]),
                    self.rank
                )
            });
            return Err(format!(
                "the ranks do not see the same directories as rank 0{which}: \
                 run on a file system every rank shares"
            ));
        }
        Ok(dirs)
    }

    /// Runs a walk of `roots` across all ranks: `work` runs each job on some rank,
    /// and rank 0 writes every record through `write(key, record)` (unsorted: as they
    /// come, the key empty; sorted: merged in key order, records of equal keys one
    /// after another). Every rank calls it with the same roots and options.
    ///
    /// # Errors
    ///
    /// When the ranks do not see the same roots (nothing is walked then).
    pub fn walk<W: Work>(
        &self,
        roots: &[Vec<u8>],
        opts: &Options,
        work: &W,
        write: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<Stats, String> {
        let dirs = self.open_roots(roots)?;
        let threads = match opts.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let shared = Shared {
            q: Mutex::new(Queue {
                jobs: VecDeque::new(),
                busy: 0,
                outbox: Vec::new(),
                notes: vec![Vec::new(); self.size as usize],
                done: false,
            }),
            cv: Condvar::new(),
            roots: &dirs,
            sorted: opts.sorted,
            scatter: opts.scatter && self.size > 1,
            rank: self.rank as usize,
            jobs_run: AtomicU64::new(0),
            records: Mutex::new(Vec::new()),
        };
        if self.rank == 0 {
            let mut q = shared.lock();
            // Popped from the back: the first root first.
            for (i, r) in roots.iter().enumerate().rev() {
                q.jobs.push_back(Job::root(i as u32, r));
            }
        }
        let (tx, rx) = sync_channel::<Vec<u8>>(64);
        let on_note = |n: &[u8], ctx: &mut Ctx<'_>| work.note(n, ctx);
        let mut pump = Pump {
            mpi: self,
            on_note: &on_note,
            ctx: Ctx {
                roots: &dirs,
                jobs: Vec::new(),
                out: Vec::new(),
                records: Vec::new(),
                sorted: opts.sorted,
                rank: self.rank as usize,
                notes: vec![Vec::new(); self.size as usize],
            },
            shared: &shared,
            threads,
            rx,
            write,
            outgoing: Vec::new(),
            inbox: VecDeque::new(),
            sent: 0,
            received: 0,
            stats: Stats::default(),
            stealing: false,
            fails: 0,
            next_steal: Instant::now(),
            rng: 0x9e37_79b9_7f4a_7c15 ^ (self.rank as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d),
            wave: None,
            last_wave: None,
            next_wave: Instant::now(),
        };
        std::thread::scope(|s| {
            for _ in 0..threads {
                let tx = tx.clone();
                let shared = &shared;
                s.spawn(move || shared.worker(work, tx));
            }
            drop(tx);
            pump.run();
            shared.lock().done = true;
            shared.cv.notify_all();
        });
        pump.drain();
        pump.stats.jobs = shared.jobs_run.load(Ordering::Relaxed);
        if opts.sorted {
            let mut bufs =
                std::mem::take(&mut *shared.records.lock().unwrap_or_else(|e| e.into_inner()));
            let mut extra = std::mem::take(&mut pump.ctx.records);
            work.finish(&mut |key, record| push_record(&mut extra, key, record));
            bufs.push(extra);
            pump.merge(&bufs);
        }
        let s = pump.stats;
        let t = self.sum(&[s.jobs, s.sent, s.received, s.steals]);
        Ok(Stats {
            jobs: t[0],
            sent: t[1],
            received: t[2],
            steals: t[3],
        })
    }
}

/// The MPI thread's state.
struct Pump<'a, 'w> {
    mpi: &'a Mpi,
    /// The Work's [`Work::note`].
    on_note: &'w (dyn Fn(&[u8], &mut Ctx<'_>) + Sync),
    /// What the notes handled here push, send and write.
    ctx: Ctx<'a>,
    shared: &'a Shared<'a>,
    threads: usize,
    rx: Receiver<Vec<u8>>,
    write: &'w mut dyn FnMut(&[u8], &[u8]),
    outgoing: Vec<(i32, i32, Vec<u8>)>,
    inbox: VecDeque<Inbound>,
    /// Work-carrying messages (jobs, output) sent and received, for termination.
    sent: u64,
    received: u64,
    stats: Stats,
    /// A request for work is out, unanswered.
    stealing: bool,
    /// Requests answered with nothing in a row.
    fails: u32,
    next_steal: Instant,
    rng: u64,
    /// Rank 0: the wave under way (answers, all idle, sent, received).
    wave: Option<(i32, bool, u64, u64)>,
    last_wave: Option<(u64, u64)>,
    next_wave: Instant,
}

impl Pump<'_, '_> {
    fn world(&self) -> &SimpleCommunicator {
        &self.mpi.world
    }

    /// Takes every message waiting.
    fn receive(&mut self) {
        while let Some(probed) = self.mpi.world.any_process().immediate_matched_probe() {
            let (data, status) = probed.matched_receive_vec::<u8>();
            self.inbox.push_back(Inbound {
                from: status.source_rank(),
                tag: status.tag(),
                data,
            });
        }
    }

    /// Whether this rank has nothing to do and holds nothing.
    fn idle(&self) -> bool {
        let q = self.shared.lock();
        q.jobs.is_empty() && q.busy == 0 && q.outbox.is_empty() && q.notes.iter().all(Vec::is_empty)
    }

    /// Sends (rank 0: writes) the output the workers handed on.
    fn flush_output(&mut self) -> bool {
        let mut batch = Vec::new();
        while let Ok(b) = self.rx.try_recv() {
            if self.mpi.rank == 0 {
                (self.write)(&[], &b);
            } else if batch.is_empty() {
                batch = b;
            } else {
                batch.extend_from_slice(&b);
            }
            if batch.len() >= 1 << 20 {
                break;
            }
        }
        if batch.is_empty() {
            return false;
        }
        self.sent += 1;
        self.outgoing.push((0, T_OUT, batch));
        true
    }

    fn random_other(&mut self) -> i32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let others = (self.mpi.size - 1) as u64;
        let r = (self.rng % others) as i32;
        if r >= self.mpi.rank { r + 1 } else { r }
    }

    /// The jobs given to a rank that asks: the older half of the queue (the nearest
    /// the roots), the one job queued when every worker is busy, else none.
    fn give(&mut self) -> Vec<u8> {
        let mut q = self.shared.lock();
        let n = q.jobs.len();
        let give = if n >= 2 {
            n.div_ceil(2)
        } else if n == 1 && q.busy >= self.threads {
            1
        } else {
            0
        };
        let mut msg = Vec::new();
        for job in q.jobs.drain(..give) {
            job.encode(&mut msg);
        }
        drop(q);
        if give > 0 {
            self.sent += 1;
            self.stats.sent += give as u64;
        }
        msg
    }

    fn take_jobs(&mut self, data: &[u8]) {
        let jobs = Job::decode_all(data).expect("a message of jobs from another rank");
        self.stats.received += jobs.len() as u64;
        let n = jobs.len();
        let mut q = self.shared.lock();
        q.jobs.extend(jobs);
        drop(q);
        if n > 1 {
            self.shared.cv.notify_all();
        } else {
            self.shared.cv.notify_one();
        }
    }

    fn handle(&mut self, m: Inbound) -> bool {
        match m.tag {
            T_STEAL => {
                let jobs = self.give();
                self.outgoing.push((m.from, T_JOBS, jobs));
            }
            T_JOBS => {
                self.stealing = false;
                if m.data.is_empty() {
                    self.fails += 1;
                    let wait = Duration::from_micros(50 << self.fails.min(8))
                        .min(Duration::from_millis(10));
                    self.next_steal = Instant::now() + wait;
                } else {
                    self.received += 1;
                    self.fails = 0;
                    self.take_jobs(&m.data);
                }
            }
            T_PUSH => {
                self.received += 1;
                self.take_jobs(&m.data);
            }
            T_OUT => {
                self.received += 1;
                (self.write)(&[], &m.data);
            }
            T_NOTE => {
                self.received += 1;
                each_note(&m.data, &mut |n| (self.on_note)(n, &mut self.ctx));
                // At once: a wave answered next must see what they left as work.
                self.absorb();
            }
            T_WAVE => {
                let idle = self.idle();
                // Whatever the workers handed on before going idle is sent now, and
                // counted in this answer.
                self.flush_output();
                let mut ack = Vec::with_capacity(24);
                ack.extend_from_slice(&u64::from(idle).to_le_bytes());
                ack.extend_from_slice(&self.sent.to_le_bytes());
                ack.extend_from_slice(&self.received.to_le_bytes());
                self.outgoing.push((0, T_ACK, ack));
            }
            T_ACK => {
                let word =
                    |i: usize| u64::from_le_bytes(m.data[i * 8..i * 8 + 8].try_into().unwrap());
                if let Some(w) = &mut self.wave {
                    w.0 += 1;
                    w.1 &= word(0) != 0;
                    w.2 += word(1);
                    w.3 += word(2);
                }
            }
            T_DONE => return true,
            _ => {}
        }
        false
    }

    /// Hands on what the notes handled here left in the thread's own [`Ctx`]: the notes
    /// to this rank delivered (and theirs), the others queued for sending, the jobs
    /// queued (or, scattering, sent on), the output written (rank 0) or sent.
    fn absorb(&mut self) {
        let rank = self.ctx.rank;
        loop {
            let own = std::mem::take(&mut self.ctx.notes[rank]);
            if own.is_empty() {
                break;
            }
            let on_note = self.on_note;
            let ctx = &mut self.ctx;
            each_note(&own, &mut |n| on_note(n, ctx));
        }
        let out = std::mem::take(&mut self.ctx.out);
        if !out.is_empty() {
            if self.mpi.rank == 0 {
                (self.write)(&[], &out);
            } else {
                self.sent += 1;
                self.outgoing.push((0, T_OUT, out));
            }
        }
        let n = self.ctx.jobs.len();
        let mut q = self.shared.lock();
        if self.shared.scatter {
            q.outbox.append(&mut self.ctx.jobs);
        } else {
            q.jobs.extend(self.ctx.jobs.drain(..));
        }
        for (to, buf) in q.notes.iter_mut().zip(&mut self.ctx.notes) {
            if !buf.is_empty() {
                to.append(buf);
            }
        }
        drop(q);
        if n > 0 {
            self.shared.cv.notify_all();
        }
    }

    /// Rank 0: starts and judges the waves; true when the walk is over everywhere.
    fn terminate(&mut self) -> bool {
        let now = Instant::now();
        if self.wave.is_none() {
            if now < self.next_wave || !self.idle() {
                return false;
            }
            self.flush_output();
            self.wave = Some((0, true, self.sent, self.received));
            for r in 1..self.mpi.size {
                self.outgoing.push((r, T_WAVE, Vec::new()));
            }
        }
        let Some((answers, idle, sent, received)) = self.wave else {
            return false;
        };
        if answers < self.mpi.size - 1 {
            return false;
        }
        self.wave = None;
        self.next_wave = now + Duration::from_micros(200);
        let totals = (sent, received);
        if idle && sent == received && self.last_wave == Some(totals) {
            for r in 1..self.mpi.size {
                self.outgoing.push((r, T_DONE, Vec::new()));
            }
            return true;
        }
        self.last_wave = idle.then_some(totals);
        false
    }

    /// Sends what is queued, receiving meanwhile (so that two ranks sending to each
    /// other never wait on each other).
    fn send_all(&mut self) {
        if self.outgoing.is_empty() {
            return;
        }
        let outgoing = std::mem::take(&mut self.outgoing);
        let world = &self.mpi.world;
        let mut inbox = Vec::new();
        mpi::request::scope(|scope| {
            let mut pending: Vec<_> = outgoing
                .iter()
                .map(|(to, tag, data)| {
                    world
                        .process_at_rank(*to)
                        .immediate_send_with_tag(scope, &data[..], *tag)
                })
                .collect();
            while !pending.is_empty() {
                pending = pending.into_iter().filter_map(|r| r.test().err()).collect();
                while let Some(probed) = world.any_process().immediate_matched_probe() {
                    let (data, status) = probed.matched_receive_vec::<u8>();
                    inbox.push(Inbound {
                        from: status.source_rank(),
                        tag: status.tag(),
                        data,
                    });
                }
            }
        });
        self.inbox.extend(inbox);
    }

    /// The loop: until rank 0 finds the walk over.
    fn run(&mut self) {
        let mut nap = Duration::from_micros(20);
        loop {
            self.receive();
            let mut busy = !self.inbox.is_empty();
            let mut done = false;
            while let Some(m) = self.inbox.pop_front() {
                done |= self.handle(m);
            }
            busy |= self.flush_output();
            // Scattering (tests): every job found goes to the next rank.
            let out: Vec<Job> = std::mem::take(&mut self.shared.lock().outbox);
            if !out.is_empty() {
                let mut msg = Vec::new();
                for job in &out {
                    job.encode(&mut msg);
                }
                self.stats.sent += out.len() as u64;
                self.sent += 1;
                let next = (self.mpi.rank + 1) % self.mpi.size;
                self.outgoing.push((next, T_PUSH, msg));
                busy = true;
            }
            // Notes, one message per rank.
            let notes: Vec<(usize, Vec<u8>)> = self
                .shared
                .lock()
                .notes
                .iter_mut()
                .enumerate()
                .filter(|(_, b)| !b.is_empty())
                .map(|(r, b)| (r, std::mem::take(b)))
                .collect();
            for (to, msg) in notes {
                self.sent += 1;
                self.outgoing.push((to as i32, T_NOTE, msg));
                busy = true;
            }
            if !done && self.mpi.size > 1 && !self.stealing && Instant::now() >= self.next_steal {
                let q = self.shared.lock();
                let wants = q.jobs.is_empty() && q.busy < self.threads;
                drop(q);
                if wants {
                    let victim = self.random_other();
                    self.outgoing.push((victim, T_STEAL, Vec::new()));
                    self.stealing = true;
                    self.stats.steals += 1;
                }
            }
            if !done && self.mpi.rank == 0 {
                done = self.terminate();
            }
            self.send_all();
            if done {
                return;
            }
            if busy {
                nap = Duration::from_micros(20);
            } else {
                std::thread::sleep(nap);
                nap = (nap * 2).min(Duration::from_millis(1));
            }
        }
    }

    /// After the end: answers the requests for work still in flight (with nothing)
    /// until every rank has had the answer to its own.
    fn drain(&mut self) {
        let answer = |world: &SimpleCommunicator, m: &Inbound| {
            if m.tag == T_STEAL {
                world
                    .process_at_rank(m.from)
                    .send_with_tag(&[0u8; 0][..], T_JOBS);
            }
        };
        loop {
            self.receive();
            while let Some(m) = self.inbox.pop_front() {
                if m.tag == T_JOBS {
                    self.stealing = false;
                }
                answer(self.world(), &m);
            }
            if !self.stealing {
                break;
            }
            std::thread::sleep(Duration::from_micros(20));
        }
        // Only requests for work are taken here: rank 0 may leave the barrier and ask
        // for sorted records (T_PULL) while this rank has not yet seen it end, and that
        // request must be left for the merge.
        let mut barrier = self.world().immediate_barrier();
        loop {
            match barrier.test() {
                Ok(_) => break,
                Err(b) => barrier = b,
            }
            while let Some(probed) = self
                .mpi
                .world
                .any_process()
                .immediate_matched_probe_with_tag(T_STEAL)
            {
                let (_, status) = probed.matched_receive_vec::<u8>();
                self.world()
                    .process_at_rank(status.source_rank())
                    .send_with_tag(&[0u8; 0][..], T_JOBS);
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// Sorted: each rank sorts its records; rank 0 merges the streams, pulling each
    /// rank's next chunk as it needs it.
    fn merge(&mut self, bufs: &[Vec<u8>]) {
        let mut mine: Vec<(&[u8], &[u8])> = bufs.iter().flat_map(|b| records(b)).collect();
        mine.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let world = &self.mpi.world;
        if self.mpi.rank != 0 {
            let mut next = 0;
            loop {
                let _ = world.process_at_rank(0).receive_vec_with_tag::<u8>(T_PULL);
                let mut chunk = Vec::new();
                while next < mine.len() && chunk.len() < CHUNK {
                    push_record(&mut chunk, mine[next].0, mine[next].1);
                    next += 1;
                }
                world.process_at_rank(0).send_with_tag(&chunk[..], T_CHUNK);
                if chunk.is_empty() {
                    return;
                }
            }
        }
        // Rank 0: stream 0 is its own; the others arrive chunk by chunk.
        let size = self.mpi.size as usize;
        let mut chunks: Vec<Vec<u8>> = vec![Vec::new(); size];
        let mut pos: Vec<usize> = vec![0; size];
        let mut ended: Vec<bool> = vec![false; size];
        let pull =
            |r: usize, chunks: &mut Vec<Vec<u8>>, pos: &mut Vec<usize>, ended: &mut Vec<bool>| {
                world
                    .process_at_rank(r as i32)
                    .send_with_tag(&[0u8; 0][..], T_PULL);
                let (data, _) = world
                    .process_at_rank(r as i32)
                    .receive_vec_with_tag::<u8>(T_CHUNK);
                ended[r] = data.is_empty();
                chunks[r] = data;
                pos[r] = 0;
            };
        for r in 1..size {
            pull(r, &mut chunks, &mut pos, &mut ended);
        }
        let mut local = 0usize;
        let head = |chunk: &[u8], at: usize| -> Option<(Vec<u8>, usize, usize)> {
            if at >= chunk.len() {
                return None;
            }
            let k = u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize;
            let r = u32::from_le_bytes(chunk[at + 4 + k..at + 8 + k].try_into().unwrap()) as usize;
            Some((chunk[at + 4..at + 4 + k].to_vec(), at + 8 + k, r))
        };
        loop {
            // The smallest key among the heads (few ranks: a scan).
            let mut best: Option<(Vec<u8>, usize)> = None;
            if local < mine.len() {
                best = Some((mine[local].0.to_vec(), 0));
            }
            for r in 1..size {
                if ended[r] {
                    continue;
                }
                if let Some((key, _, _)) = head(&chunks[r], pos[r]) {
                    if best.as_ref().is_none_or(|(b, _)| key < *b) {
                        best = Some((key, r));
                    }
                }
            }
            let Some((_, r)) = best else { break };
            if r == 0 {
                (self.write)(mine[local].0, mine[local].1);
                local += 1;
            } else {
                let (key, rec_at, len) = head(&chunks[r], pos[r]).expect("a head");
                (self.write)(&key, &chunks[r][rec_at..rec_at + len]);
                pos[r] = rec_at + len;
                if pos[r] >= chunks[r].len() {
                    pull(r, &mut chunks, &mut pos, &mut ended);
                }
            }
        }
    }
}
