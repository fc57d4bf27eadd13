//! A work-stealing pool for per-directory jobs, independent of what a job does: listing,
//! removal and disk usage each bring their own job type.
//!
//! Each worker keeps a LIFO deque of its own (depth first: the directory it just found
//! is the next it reads, while its handles are warm), and steals the oldest jobs of the
//! others when it runs dry. A job pushes the jobs it finds through its [`Scope`].
//!
//! The calling thread runs the first job itself; workers start, up to
//! [`PoolOptions::threads`], once jobs are queued for them (so a walk of an empty
//! directory starts no thread). With
//! [`PoolOptions::max_threads`] above that, the thread that called [`run`] watches, every
//! 10 ms, how the workers spend their time: when the time they spend inside the file
//! system calls they mark ([`Scope::io`]) is well above the CPU time the process uses,
//! they are waiting for the disk (a cold cache), and while work is queued the pool
//! doubles its workers, up to the cap. On a warm cache the two times are alike (the
//! calls spend their time on the CPU), and the pool stays as it started.
//!
//! A worker that cannot be started (a limit on processes or memory) is not an error: the
//! pool goes on with the workers it has and grows no more, and if it has none, the
//! calling thread runs every job itself. [`WalkStats::spawn_error`] tells what failed.
//!
//! The pool is the crate's own: walks, removal and disk usage run on it, and what it
//! did comes out of a parallel walk as [`WalkStats`], which tells the threads it ran
//! and nothing of the pool's workings.
//!
//! ```text
//! // Count the nodes of a binary tree of depth 10, one job per node
//! // (the test `a_tree_of_jobs_runs_every_node` runs this).
//! let nodes = AtomicUsize::new(0);
//! run(vec![0u32], PoolOptions::fixed(2), || (), |_, depth, scope| {
//!     nodes.fetch_add(1, Ordering::Relaxed);
//!     if depth < 10 {
//!         scope.push(depth + 1);
//!         scope.push(depth + 1);
//!     }
//! });
//! assert_eq!(nodes.into_inner(), (1 << 11) - 1);
//! ```

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

/// How many workers a pool runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// Workers at the start (at least 1).
    pub threads: usize,
    /// The most workers the pool may grow to when they wait on the disk.
    pub max_threads: usize,
    /// All workers share one stack of jobs instead of a deque each: every worker takes
    /// the newest job of all, so that where jobs are pushed in the order their results
    /// are wanted (the next wanted last), the workers together keep to that order, none
    /// far ahead of the others (see [`PoolOptions::in_order`]).
    pub one_stack: bool,
}

impl PoolOptions {
    /// Exactly `n` workers, never more.
    pub fn fixed(n: usize) -> PoolOptions {
        PoolOptions {
            threads: n.max(1),
            max_threads: n.max(1),
            one_stack: false,
        }
    }

    /// As many workers as cores (at most `max`) to start with, growing up to `max`
    /// when the disk is what they wait for.
    pub fn adaptive(max: usize) -> PoolOptions {
        let max = max.max(1);
        PoolOptions {
            threads: cores().min(max),
            max_threads: max,
            one_stack: false,
        }
    }

    /// With one stack of jobs for all workers ([`PoolOptions::one_stack`]) if `yes`.
    /// Work stealing takes the *oldest* job of another worker, the one furthest from
    /// what its owner does next; where results are told in one order, that is the work
    /// whose results wait longest. A shared stack costs a lock per push and pop, a small
    /// price beside a directory's reading.
    pub fn in_order(self, yes: bool) -> PoolOptions {
        PoolOptions {
            one_stack: yes,
            ..self
        }
    }
}

/// The number of cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What a parallel walk did with its threads, as [`ParallelWalk::visit`] and
/// [`ParallelWalk::visit_events`] return it: how many worker threads it ran, and why it
/// could not start another, if it could not. A thread that cannot be started (a limit
/// on processes or memory) is no error: the walk goes on with the threads it has, and
/// with none, on the calling thread alone; a program may say so.
///
/// ```
/// use ftw::walk::{Control, Entry, Error, WalkBuilder};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::create_dir_all(tmp.path().join("a/b"))?;
/// let stats = WalkBuilder::new(tmp.path())
///     .threads(2)
///     .build_parallel()
///     .visit(|| |_: Result<&Entry<'_>, Error>| Control::Continue);
/// assert!(stats.threads() <= 2);
/// if let Some(e) = stats.spawn_error() {
///     // The walk went on, on the threads it had (0: the calling thread alone).
///     eprintln!("cannot start a thread: {e}: ran on {}", stats.threads().max(1));
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// [`ParallelWalk::visit`]: super::ParallelWalk::visit
/// [`ParallelWalk::visit_events`]: super::ParallelWalk::visit_events
#[derive(Debug, Default)]
pub struct WalkStats {
    /// Workers at the end (the most it had): 0 when the calling thread ran every job.
    pub(crate) threads: usize,
    /// Jobs run (read by the pool's tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) jobs: u64,
    /// The first failure to start a worker, if any: the pool then ran with the workers
    /// it had (see the module's notes).
    pub(crate) spawn_error: Option<io::Error>,
}

impl WalkStats {
    /// The worker threads the walk had at the end, the most it had: 0 when the calling
    /// thread read every directory itself (none could be started, or none was needed).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The first failure to start a worker thread, if any: the walk then went on with
    /// the [`threads`](WalkStats::threads) it had, and grew no more.
    pub fn spawn_error(&self) -> Option<&io::Error> {
        self.spawn_error.as_ref()
    }
}

/// What a pool did: the pool's name for the [`WalkStats`] a parallel walk hands on.
pub(crate) type PoolStats = WalkStats;

struct Shared<J> {
    injector: Injector<J>,
    /// The one stack of jobs where [`PoolOptions::one_stack`] is asked.
    stack: Option<Mutex<Vec<J>>>,
    stealers: RwLock<Vec<Stealer<J>>>,
    /// Jobs pushed and not yet finished: zero means the work is done.
    pending: AtomicUsize,
    stop: AtomicBool,
    /// Nanoseconds spent inside [`Scope::io`], all workers together.
    io_ns: AtomicU64,
    jobs: AtomicU64,
    /// Workers asleep on `idle`, finding no job.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    /// Where workers without a job sleep: a push wakes one.
    idle: Condvar,
    /// Where the thread that called [`run`] waits between looks.
    watcher: Condvar,
    /// Workers that have not exited.
    live: AtomicUsize,
    /// Workers to have once there is work for them (the starting count): the pool
    /// starts with one, so that a tiny walk pays for one thread only. Lowered to the
    /// workers it has when one cannot be started.
    want: AtomicUsize,
}

impl<J> Shared<J> {
    /// A new deque whose oldest jobs every worker may steal.
    fn register(&self) -> Worker<J> {
        let local = Worker::new_lifo();
        self.stealers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(local.stealer());
        local
    }

    /// Counts a job out; true when it was the last, the work then being done.
    fn finish_job(&self) -> bool {
        self.jobs.fetch_add(1, Ordering::Relaxed);
        self.pending.fetch_sub(1, Ordering::AcqRel) == 1
    }

    fn done(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.pending.load(Ordering::Acquire) == 0
    }

    /// Wakes every sleeping worker and the watching thread.
    fn wake_all(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.idle.notify_all();
        self.watcher.notify_all();
    }

    /// Wakes the watching thread (to start a worker, or to see that all have ended).
    fn wake_watcher(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.watcher.notify_all();
    }

    /// Whether a job waits on any deque (a look without taking it).
    fn has_queued(&self) -> bool {
        !self.injector.is_empty()
            || self
                .stack
                .as_ref()
                .is_some_and(|s| !s.lock().unwrap_or_else(|e| e.into_inner()).is_empty())
            || self
                .stealers
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|s| !s.is_empty())
    }
}

/// What a job sees of the pool: where to push the jobs it finds.
pub struct Scope<'a, J> {
    local: &'a Worker<J>,
    shared: &'a Shared<J>,
    /// On the calling thread while it runs the first jobs alone: starts the workers
    /// once a job pushes work for them (see [`run`]).
    starter: Option<&'a dyn Fn()>,
    /// On the calling thread: whether the starter has a worker to start beside it.
    first_room: bool,
}

impl<J> Scope<'_, J> {
    /// Queues a job (on this worker's own deque, where others may steal it, or on the
    /// one stack).
    pub fn push(&self, job: J) {
        let shared = self.shared;
        let pending = shared.pending.fetch_add(1, Ordering::AcqRel) + 1;
        match &shared.stack {
            Some(stack) => stack.lock().unwrap_or_else(|e| e.into_inner()).push(job),
            None => self.local.push(job),
        }
        if let Some(start) = self.starter {
            // The first job found more: workers start now, not when it ends (a huge
            // directory's subdirectories are walked while it is read). Those started
            // earlier may sleep: they are woken below like any other.
            start();
        }
        // Orders the push before the look at `sleepers`, as a worker going to sleep
        // orders its count before its last look for jobs: either it sees this job or
        // this sees it asleep (and wakes it under the lock, so not before it waits).
        fence(Ordering::SeqCst);
        let live = shared.live.load(Ordering::Relaxed);
        if self.starter.is_none() && live < shared.want.load(Ordering::Relaxed) && pending > live {
            // Work for another starting worker: the watching thread spawns it.
            shared.wake_watcher();
            return;
        }
        let sleepers = shared.sleepers.load(Ordering::Relaxed);
        // A sleeper is woken only when the jobs not yet finished outnumber the workers
        // awake (each running one, and the calling thread its first): a job then waits
        // with no one free to take it. Where the awake workers will soon take it
        // themselves, a wake-up would cost two system calls for nothing.
        let awake = live.saturating_sub(sleepers) + usize::from(self.starter.is_some());
        if sleepers > 0 && pending > awake {
            let _g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            shared.idle.notify_one();
        }
    }

    /// Whether a job pushed now would start at once: a worker sleeps with no job queued
    /// for it (or the workers are still to start). A look, not a promise.
    pub fn has_idle(&self) -> bool {
        let shared = self.shared;
        if self.starter.is_some() && shared.live.load(Ordering::Relaxed) == 0 {
            // Room for a worker, unless starting one failed (`want` then fell to 0):
            // the calling thread is then the only one, and nothing pushed starts at once.
            return self.first_room && shared.want.load(Ordering::Relaxed) > 0;
        }
        // The jobs not finished are those running (one a worker awake, and one on the
        // calling thread while it runs the first) and those queued.
        let sleepers = shared.sleepers.load(Ordering::Relaxed);
        let awake = shared.live.load(Ordering::Relaxed).saturating_sub(sleepers)
            + usize::from(self.starter.is_some());
        sleepers > 0 && shared.pending.load(Ordering::Relaxed) <= awake
    }

    /// Ends the whole run: every worker stops after its current job; queued jobs are
    /// dropped without running.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake_all();
    }

    /// Whether the run was stopped.
    pub fn is_stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Runs `f`, counting its time as time in the file system (see the module's notes on
    /// growing).
    #[inline]
    pub fn io<T>(&self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let r = f();
        self.shared
            .io_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }
}

/// Tells, from one look to the next, whether the threads of this process wait on the
/// disk: more time spent inside file system calls (counted by the caller, in all
/// threads) than CPU time used, by half a thread's worth of the interval. Both the pool
/// and the sorted walk's read-ahead grow their workers by it.
pub(crate) struct DiskWatch {
    at: Instant,
    cpu: Duration,
    io_ns: u64,
}

impl DiskWatch {
    /// Starts watching, with `io_ns` the time counted in file system calls so far.
    pub(crate) fn new(io_ns: u64) -> DiskWatch {
        DiskWatch {
            at: Instant::now(),
            cpu: crate::sys::process_cpu_time(),
            io_ns,
        }
    }

    /// Time since the last look.
    pub(crate) fn elapsed(&self) -> Duration {
        self.at.elapsed()
    }

    /// Whether the threads waited on the disk since the last look (`io_ns`: the time
    /// counted in file system calls so far); starts the next interval.
    pub(crate) fn waits(&mut self, io_ns: u64) -> bool {
        let now = DiskWatch::new(io_ns);
        let wall = now.at.duration_since(self.at).as_nanos() as f64;
        let cpu = now.cpu.saturating_sub(self.cpu).as_nanos() as f64;
        let io = io_ns.saturating_sub(self.io_ns) as f64;
        *self = now;
        wall > 0.0 && io > 1.5 * cpu + 0.5 * wall
    }
}

/// Runs `roots` and every job they push on a pool of workers, until no job is left or
/// a job calls [`Scope::stop`]. Each worker makes its own state with `make_state`
/// (dropped when the worker ends: a place to flush buffers) and calls
/// `handle(state, job, scope)` for each job it takes. The calling thread runs the first
/// jobs while they find no more (starting the workers as soon as one does), then watches.
pub fn run<J, S, MS, H>(
    roots: impl IntoIterator<Item = J>,
    opts: PoolOptions,
    make_state: MS,
    handle: H,
) -> PoolStats
where
    J: Send,
    MS: Fn() -> S + Sync,
    H: Fn(&mut S, J, &Scope<'_, J>) + Sync,
{
    let shared = Shared {
        injector: Injector::new(),
        stack: opts.one_stack.then(|| Mutex::new(Vec::new())),
        stealers: RwLock::new(Vec::new()),
        pending: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        io_ns: AtomicU64::new(0),
        jobs: AtomicU64::new(0),
        sleepers: AtomicUsize::new(0),
        lock: Mutex::new(()),
        idle: Condvar::new(),
        watcher: Condvar::new(),
        live: AtomicUsize::new(0),
        want: AtomicUsize::new(opts.threads.max(1)),
    };
    for job in roots {
        shared.pending.fetch_add(1, Ordering::AcqRel);
        shared.injector.push(job);
    }
    if shared.pending.load(Ordering::Acquire) == 0 {
        return PoolStats::default();
    }
    let start = opts.threads.max(1);
    let max = opts.max_threads.max(start);
    let jobs = || shared.jobs.load(Ordering::Relaxed);
    // What the workers started so far: how many, the first failure (after which the
    // pool grows no more), the starting count and the cap as they now stand.
    let pool = std::cell::RefCell::new((0usize, None::<io::Error>, start, max));
    std::thread::scope(|s| {
        // Starts up to `n` more workers; returns how many started. On the first failure
        // the pool keeps the workers it has: it grows no more.
        let spawn = |n: usize| {
            let mut p = pool.borrow_mut();
            let threads = p.0;
            let mut started = n;
            for i in 0..n {
                let local = shared.register();
                shared.live.fetch_add(1, Ordering::AcqRel);
                let (shared, make_state, handle) = (&shared, &make_state, &handle);
                let spawned = spawn_worker(s, threads + i, move || {
                    // Counts the worker out even if a job panics: the others stop and
                    // the scope re-raises the panic instead of waiting forever.
                    let _exit = Exit(shared);
                    let mut state = make_state();
                    work(shared, &local, &mut state, handle);
                });
                if let Err(e) = spawned {
                    // The deque made for it stays empty; its stealer finds nothing.
                    shared.want.store(threads + i, Ordering::Relaxed);
                    shared.live.fetch_sub(1, Ordering::AcqRel);
                    p.1.get_or_insert(e);
                    started = i;
                    break;
                }
            }
            p.0 += started;
            if started < n {
                (p.2, p.3) = (p.0, p.0);
            }
            started
        };
        // The first workers, once there are jobs for them: up to `of` of the starting
        // count (all but one while the calling thread still runs a job itself, so that
        // no more than the count run at once).
        let top_up = |of: usize| {
            let (have, failed) = {
                let p = pool.borrow();
                (p.0, p.1.is_some())
            };
            let want = of.min(shared.pending.load(Ordering::Acquire));
            if !failed && have < want {
                spawn(want - have);
            }
        };
        let first = || top_up(start - 1);
        // The calling thread runs the first jobs itself while there is no other to
        // share: a walk of an empty directory starts no thread at all. A job that pushes
        // another starts the workers at once.
        {
            let local = shared.register();
            let mut state = make_state();
            let scope = Scope {
                local: &local,
                shared: &shared,
                starter: Some(&first),
                first_room: start > 1,
            };
            while !shared.done() && shared.pending.load(Ordering::Acquire) == 1 {
                let Some(job) = local.pop().or_else(|| steal(&shared, &local)) else {
                    break;
                };
                handle(&mut state, job, &scope);
                shared.finish_job();
            }
            // Jobs this pushed stay on its deque, for the workers to steal.
        }
        if shared.done() {
            // (Workers started, if any, see the end and exit.)
            shared.wake_all();
            return;
        }
        top_up(start.max(1));
        if pool.borrow().0 == 0 {
            // Not one worker: this thread runs every job, those queued on the deques
            // included (they are stolen like any other worker's).
            let local = shared.register();
            let mut state = make_state();
            work(&shared, &local, &mut state, &handle);
            return;
        }
        let mut watch = DiskWatch::new(0);
        loop {
            let (threads, start, max) = {
                let p = pool.borrow();
                (p.0, p.2, p.3)
            };
            {
                let g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
                if shared.live.load(Ordering::Acquire) == 0 {
                    break;
                }
                // Checked under the lock: a push that wants a worker wakes this thread
                // after it waits, never between the check and the wait.
                let starting = threads < start && shared.pending.load(Ordering::Acquire) > threads;
                if !starting {
                    // Looks every 10 ms while the pool may grow; once it cannot, only
                    // the end of the workers (which wakes this thread) is waited for.
                    let pause = if threads < max { LOOK } else { LONG_WAIT };
                    let _ = shared.watcher.wait_timeout(g, pause);
                }
            }
            if shared.live.load(Ordering::Acquire) == 0 {
                break;
            }
            let pending = shared.pending.load(Ordering::Relaxed);
            let mut more = 0;
            if threads < start && pending > threads && !shared.done() {
                more = (start - threads).min(pending - threads);
            } else if threads < max && !shared.done() {
                let waits = watch.waits(shared.io_ns.load(Ordering::Relaxed));
                if waits && shared.pending.load(Ordering::Relaxed) > threads {
                    more = threads.min(max - threads);
                }
            }
            if more > 0 {
                spawn(more);
            }
        }
    });
    let (threads, spawn_error, ..) = pool.into_inner();
    PoolStats {
        threads,
        jobs: jobs(),
        spawn_error,
    }
}

/// Starts worker number `index` (counting from 0) in the scope `s`. Tests make it fail
/// past a number of workers ([`fail_spawns_after`]), as a limit on processes would.
fn spawn_worker<'scope, F>(
    s: &'scope std::thread::Scope<'scope, '_>,
    index: usize,
    f: F,
) -> io::Result<()>
where
    F: FnOnce() + Send + 'scope,
{
    #[cfg(test)]
    if SPAWN_LIMIT
        .with(|l| l.get())
        .is_some_and(|limit| index >= limit)
    {
        return Err(io::Error::from(io::ErrorKind::WouldBlock));
    }
    let _ = index;
    room_for_thread()?;
    std::thread::Builder::new().spawn_scoped(s, f).map(drop)
}

/// Under a limit on address space (`ulimit -v`), a worker's stack (2 MiB), its
/// buffers and the allocator's arena must fit with room to spare, or a later
/// allocation fails and the process aborts: such a worker is not started, as where
/// the system refuses a thread (the pool, or the read-ahead, goes on with those it has).
pub(crate) fn room_for_thread() -> io::Result<()> {
    if crate::sys::address_space_room().is_some_and(|room| room < WORKER_ROOM) {
        return Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            "too little address space left for another thread (ulimit -v)",
        ));
    }
    Ok(())
}

/// How often the watching thread looks at the workers while the pool may grow.
const LOOK: Duration = Duration::from_millis(10);

/// The longest a thread sleeps when a wake-up is due to it anyway: a safety net, the
/// same in the tests as in use.
const LONG_WAIT: Duration = Duration::from_millis(200);

/// The address space a worker is started with, at least, under a limit on it: its
/// stack, and a malloc arena of its own (glibc reserves 64 MiB of address space for
/// each, and maps twice that for a moment to align it), with room to spare.
const WORKER_ROOM: u64 = 136 << 20;

#[cfg(test)]
thread_local! {
    /// Workers a pool run from this thread may start (tests only; `None`: any number).
    static SPAWN_LIMIT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Makes the pools this thread runs fail to start any worker past the first `n`
/// (`None`: no limit), as a limit on processes would (tests only).
#[cfg(test)]
pub(crate) fn fail_spawns_after(n: Option<usize>) {
    SPAWN_LIMIT.with(|l| l.set(n));
}

/// Counts a worker out when it ends, normally or by a panic.
struct Exit<'a, J>(&'a Shared<J>);

impl<J> Drop for Exit<'_, J> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop.store(true, Ordering::Relaxed);
        }
        self.0.live.fetch_sub(1, Ordering::AcqRel);
        self.0.wake_all();
    }
}

fn work<J, S, H>(shared: &Shared<J>, local: &Worker<J>, state: &mut S, handle: &H)
where
    H: Fn(&mut S, J, &Scope<'_, J>),
{
    let scope = Scope {
        local,
        shared,
        starter: None,
        first_room: false,
    };
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        match local.pop().or_else(|| steal(shared, local)) {
            Some(job) => {
                handle(state, job, &scope);
                if shared.finish_job() {
                    shared.wake_all();
                    return;
                }
            }
            None => {
                if shared.done() {
                    return;
                }
                let g = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
                shared.sleepers.fetch_add(1, Ordering::Relaxed);
                // See `Scope::push`: after counting itself asleep, a last look.
                fence(Ordering::SeqCst);
                if !shared.done() && !shared.has_queued() {
                    // A push or the end wakes it; the timeout is only a safety net.
                    let _ = shared.idle.wait_timeout(g, LONG_WAIT);
                }
                shared.sleepers.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

fn steal<J>(shared: &Shared<J>, local: &Worker<J>) -> Option<J> {
    loop {
        let mut retry = false;
        match shared.injector.steal_batch_and_pop(local) {
            Steal::Success(j) => return Some(j),
            Steal::Retry => retry = true,
            Steal::Empty => {}
        }
        if let Some(stack) = &shared.stack
            && let Some(j) = stack.lock().unwrap_or_else(|e| e.into_inner()).pop()
        {
            return Some(j);
        }
        for s in shared
            .stealers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            match s.steal() {
                Steal::Success(j) => return Some(j),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
        }
        if !retry {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_needs_room_for_a_malloc_arena() {
        // glibc reserves 64 MiB of address space for each thread's arena (128 MiB for
        // a moment): under `ulimit -v`, a worker started with less room than that made
        // a later allocation fail and the process abort (`ftw find --sort /usr` under
        // `ulimit -v 400000`, whose read-ahead workers were not checked at all).
        const { assert!(WORKER_ROOM >= (128 + 2) << 20) };
        // Without a limit on address space (as in the tests), any number may start.
        assert!(room_for_thread().is_ok());
    }

    /// Runs a binary tree of jobs of depth `depth`, each job's time counted as time in
    /// the file system (and `pause` long); returns the stats and the jobs that ran.
    fn tree(opts: PoolOptions, depth: u32, pause: Duration) -> (PoolStats, u64) {
        let ran = AtomicU64::new(0);
        let stats = run(
            vec![0u32],
            opts,
            || (),
            |_, d, scope| {
                scope.io(|| std::thread::sleep(pause));
                ran.fetch_add(1, Ordering::Relaxed);
                if d < depth {
                    scope.push(d + 1);
                    scope.push(d + 1);
                }
            },
        );
        (stats, ran.into_inner())
    }

    #[test]
    fn a_job_pushed_while_a_worker_sleeps_wakes_it() {
        use std::sync::mpsc;
        #[derive(Clone, Copy, PartialEq)]
        enum Job {
            Root,
            /// Waits for a worker to sleep, pushes `Late` and waits for it to run.
            Pusher,
            Quick,
            Late,
        }
        for _ in 0..20 {
            let (tx, rx) = mpsc::channel::<()>();
            let tx = Mutex::new(tx);
            let rx = Mutex::new(rx);
            let late_ran = AtomicBool::new(false);
            run(
                vec![Job::Root],
                PoolOptions::fixed(2),
                || (),
                |_, job, scope| {
                    match job {
                        Job::Root => {
                            scope.push(Job::Pusher);
                            scope.push(Job::Quick);
                        }
                        Job::Pusher => {
                            // The other worker runs `Quick`, then finds nothing and sleeps.
                            let t = Instant::now();
                            while scope.shared.sleepers.load(Ordering::Relaxed) == 0 {
                                assert!(t.elapsed() < Duration::from_secs(20), "no sleeper");
                                std::thread::yield_now();
                            }
                            scope.push(Job::Late);
                            // This worker is busy until `Late` has run: only the sleeper
                            // can take it, once it is woken.
                            let got = rx.lock().unwrap().recv_timeout(Duration::from_secs(20));
                            assert!(got.is_ok(), "the sleeping worker was not woken");
                        }
                        Job::Quick => {}
                        Job::Late => {
                            late_ran.store(true, Ordering::Relaxed);
                            tx.lock().unwrap().send(()).unwrap();
                        }
                    }
                },
            );
            assert!(late_ran.into_inner());
        }
    }

    #[test]
    fn on_one_stack_the_workers_take_the_newest_job_of_all() {
        // Jobs pushed last first are taken first first: with one worker, a tree of
        // jobs runs in depth-first order; with several, every node runs once.
        for threads in [1, 3] {
            let order = Mutex::new(Vec::new());
            run(
                vec![vec![0u8]],
                PoolOptions::fixed(threads).in_order(true),
                || (),
                |_, path: Vec<u8>, scope| {
                    order.lock().unwrap().push(path.clone());
                    if path.len() < 6 {
                        for i in (0..3u8).rev() {
                            let mut sub = path.clone();
                            sub.push(i);
                            scope.push(sub);
                        }
                    }
                },
            );
            let order = order.into_inner().unwrap();
            let mut sorted = order.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), order.len());
            assert_eq!(order.len(), (3usize.pow(6) - 1) / 2);
            if threads == 1 {
                assert_eq!(order, sorted, "depth first, first first");
            }
        }
    }

    #[test]
    fn a_pool_of_n_runs_at_most_n_jobs_at_once() {
        // The calling thread counts among the n while it runs the first job: the
        // workers it starts then are one fewer.
        for n in [1, 2] {
            let running = AtomicUsize::new(0);
            let most = AtomicUsize::new(0);
            run(
                vec![0u8],
                PoolOptions::fixed(n),
                || (),
                |_, job, scope| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    if job == 0 {
                        for _ in 0..4 {
                            scope.push(1);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                },
            );
            let most = most.into_inner();
            assert!(most <= n, "{most} jobs at once on a pool of {n}");
        }
    }

    #[test]
    fn the_first_job_s_pushes_run_while_it_runs() {
        // A first job that finds work (a huge root directory's subdirectories, as it
        // reads on): workers start at once and take it, not when the first job ends.
        for one_stack in [false, true] {
            let ran = AtomicBool::new(false);
            let seen = AtomicBool::new(false);
            run(
                vec![0u8],
                PoolOptions::fixed(2).in_order(one_stack),
                || (),
                |_, job, scope| {
                    if job == 0 {
                        scope.push(1);
                        let start = Instant::now();
                        while !ran.load(Ordering::SeqCst)
                            && start.elapsed() < Duration::from_secs(10)
                        {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        seen.store(ran.load(Ordering::SeqCst), Ordering::SeqCst);
                    } else {
                        ran.store(true, Ordering::SeqCst);
                    }
                },
            );
            assert!(
                seen.into_inner(),
                "one stack {one_stack}: the pushed job waited"
            );
        }
    }

    #[test]
    fn a_tree_of_jobs_runs_every_node() {
        // The module's example: the nodes of a binary tree of depth 10, one job each.
        let nodes = AtomicUsize::new(0);
        run(
            vec![0u32],
            PoolOptions::fixed(2),
            || (),
            |_, depth, scope| {
                nodes.fetch_add(1, Ordering::Relaxed);
                if depth < 10 {
                    scope.push(depth + 1);
                    scope.push(depth + 1);
                }
            },
        );
        assert_eq!(nodes.into_inner(), (1 << 11) - 1);
    }

    #[test]
    fn with_no_worker_started_the_calling_thread_runs_every_job() {
        fail_spawns_after(Some(0));
        let (stats, ran) = tree(PoolOptions::fixed(4), 10, Duration::ZERO);
        fail_spawns_after(None);
        assert_eq!(ran, (1 << 11) - 1);
        assert_eq!(stats.jobs, ran);
        assert_eq!(stats.threads, 0);
        let e = stats.spawn_error.expect("the failure is told");
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn with_no_worker_started_the_calling_thread_has_no_idle_one() {
        // Where no thread can start (`ulimit -u`), a first job that hands out work while
        // a worker is idle (a huge directory's parts) must not see one after the failed
        // start: else it hands out everything, and all of it waits in the queue at once.
        fail_spawns_after(Some(0));
        let seen = Mutex::new(Vec::new());
        run(
            vec![0u8],
            PoolOptions::fixed(4),
            || (),
            |_, job, scope| {
                if job == 0 {
                    let before = scope.has_idle();
                    scope.push(1);
                    seen.lock().unwrap().push((before, scope.has_idle()));
                }
            },
        );
        fail_spawns_after(None);
        assert_eq!(seen.into_inner().unwrap(), [(true, false)]);
    }

    #[test]
    fn with_fewer_workers_started_than_asked_the_pool_runs_with_those() {
        for limit in [1, 2, 3] {
            fail_spawns_after(Some(limit));
            let (stats, ran) = tree(PoolOptions::fixed(4), 10, Duration::ZERO);
            fail_spawns_after(None);
            assert_eq!(ran, (1 << 11) - 1, "{limit} workers");
            assert_eq!(stats.jobs, ran);
            assert!(stats.threads <= limit, "{limit} workers: {stats:?}");
            // Only a worker past the limit can fail to start (whether one is tried
            // depends on how fast the others take the jobs).
            assert!(
                stats.spawn_error.is_none() || stats.threads == limit,
                "{stats:?}"
            );
        }
    }

    #[test]
    fn a_pool_that_cannot_grow_goes_on_with_the_workers_it_has() {
        // Jobs that wait (as on a cold disk) make the pool grow, until a worker cannot
        // be started.
        let opts = PoolOptions {
            threads: 1,
            max_threads: 8,
            one_stack: false,
        };
        fail_spawns_after(Some(2));
        let (stats, ran) = tree(opts, 8, Duration::from_millis(2));
        fail_spawns_after(None);
        assert_eq!(ran, (1 << 9) - 1);
        assert!(stats.threads <= 2, "{stats:?}");
        // Only the third worker can fail to start.
        assert!(
            stats.spawn_error.is_none() || stats.threads == 2,
            "{stats:?}"
        );
    }
}
