//! `ftw find --mpi`: the listing as directory jobs shared across MPI ranks
//! (`ftw_mpi`). A job lists one directory with the serial walker, one level deep and
//! started at the job's depth, so that every filter, depth and record is what the
//! single process gives there; its subdirectories to enter become jobs.

use super::{FindArgs, Records};
use crate::msg::{describe, report};
use crate::output::{Closed, Output};
use crate::select::Select;
use ftw::filter::Excludes;
use ftw::sys::StatMask;
use ftw::walk::{Control, WalkBuilder};
use ftw_mpi::{Ctx, Held, Job, Mpi, Options, Work};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a job does: `ftw find`'s decision and record for each entry of its directory.
struct FindWork<'a> {
    select: &'a Select,
    records: &'a Records<'a>,
    excludes: Option<Arc<Excludes>>,
    min_depth: usize,
    max_depth: usize,
    one_file_system: bool,
    failed: &'a AtomicBool,
}

impl Work for FindWork<'_> {
    fn run(&self, job: Job, ctx: &mut Ctx<'_>) {
        let depth = job.depth as usize;
        let path = OsStr::from_bytes(&job.path);
        let b = if depth == 0 {
            WalkBuilder::new(path).min_depth(self.min_depth.min(1))
        } else {
            match ctx.open(&job) {
                Ok(dir) => WalkBuilder::from_dir(dir, path)
                    .root_depth(depth)
                    .min_depth(depth + 1),
                Err(e) => {
                    self.failed.store(true, Ordering::Relaxed);
                    report(&job.path, &describe(&e));
                    return;
                }
            }
        };
        let mut b = b
            .max_depth(self.max_depth.min(depth + 1))
            .keep_handles(true);
        if let Some(ex) = &self.excludes {
            let ex = Arc::clone(ex);
            let scratch = std::sync::Mutex::new(Vec::new());
            b = b.filter_entry(move |e| {
                let mut s = scratch.lock().unwrap_or_else(|p| p.into_inner());
                !ex.is_match(e, &mut s)
            });
        }
        let mut scratch = Vec::new();
        let mut record = Vec::new();
        let mut key = Vec::new();
        // The handle this directory's subdirectories' jobs share (made at the first).
        let mut shared: Option<Option<Arc<Held>>> = None;
        let mut root_dev = (depth > 0).then_some(job.dev);
        b.build().visit(|item| match item {
            Ok(e) => {
                // (A copy, to carry the metadata the filters fetch to the output.)
                let e = &mut { *e };
                // Every entry of the directory comes (its subdirectories make jobs); those
                // above the minimum depth are not printed, and not pruned, as the single
                // walk does not report them.
                let (print, then) = if e.depth() >= self.min_depth {
                    self.select.decide(e, &mut scratch)
                } else {
                    (false, Control::Continue)
                };
                if print {
                    if ctx.sorted() {
                        record.clear();
                        if self.records.write(e, &mut record, self.failed) {
                            key.clear();
                            key.extend_from_slice(&job.root.to_be_bytes());
                            if e.depth() > 0 {
                                if depth > 0 {
                                    // Names hold no NUL: a NUL between them sorts a
                                    // directory's contents right after it.
                                    key.extend(
                                        job.below_root()
                                            .iter()
                                            .map(|&b| if b == b'/' { 0 } else { b }),
                                    );
                                    key.push(0);
                                }
                                key.extend_from_slice(e.name());
                            }
                            ctx.record(&key, &record);
                        }
                    } else {
                        self.records.write(e, ctx.out(), self.failed);
                    }
                }
                let enter = e.is_dir()
                    && e.depth() > depth
                    && e.depth() < self.max_depth
                    && matches!(then, Control::Continue);
                if let (true, Some(dir), Some(name)) = (enter, e.dir(), e.c_name()) {
                    match dir.stat_at(name, StatMask::ID, false) {
                        Ok(m) => {
                            let dev = *root_dev.get_or_insert_with(|| {
                                dir.stat(StatMask::ID).map_or(m.dev, |r| r.dev)
                            });
                            if !(self.one_file_system && m.dev != dev) {
                                let parent = shared.get_or_insert_with(|| Held::share(dir)).clone();
                                ctx.push(job.child(e.name(), m.dev, m.ino, parent));
                            }
                        }
                        Err(err) => {
                            self.failed.store(true, Ordering::Relaxed);
                            scratch.clear();
                            e.write_path(&mut scratch);
                            report(&scratch, &describe(&err));
                        }
                    }
                }
                then
            }
            Err(err) => {
                crate::msg::walk_error(&err, self.failed);
                Control::Continue
            }
        });
    }
}

/// Runs `ftw find --mpi` on this rank: every rank walks, rank 0 writes to `out`.
pub(super) fn run(
    args: &FindArgs,
    roots: &[PathBuf],
    select: &Select,
    excludes: Option<Excludes>,
    records: &Records<'_>,
    mut out: Output,
) -> ExitCode {
    let Some(mpi) = Mpi::init() else {
        report(b"--mpi", "MPI could not be initialized");
        return ExitCode::from(2);
    };
    let failed = AtomicBool::new(false);
    let (min_depth, max_depth) = match args.exact_depth {
        Some(d) => (d, d),
        None => (args.min_depth, args.max_depth.unwrap_or(usize::MAX)),
    };
    let work = FindWork {
        select,
        records,
        excludes: excludes.map(Arc::new),
        min_depth,
        max_depth,
        one_file_system: args.one_file_system,
        failed: &failed,
    };
    let opts = Options {
        threads: args.threads,
        sorted: args.sort,
        // Test only: every job moves to the next rank.
        scatter: std::env::var_os("FTW_MPI_SCATTER").is_some_and(|v| v == "1"),
    };
    let roots: Vec<Vec<u8>> = roots
        .iter()
        .map(|r| r.as_os_str().as_bytes().to_vec())
        .collect();
    let mut closed: Option<Closed> = None;
    let mut write = |_key: &[u8], bytes: &[u8]| {
        if closed.is_none() {
            out.buf().extend_from_slice(bytes);
            if let Err(c) = out.end_record() {
                closed = Some(c);
            }
        }
    };
    let walked = mpi.walk(&roots, &opts, &work, &mut write);
    let mut status = crate::msg::mpi_walked(&mpi, walked);
    if closed.is_none() {
        closed = out.flush().err();
    }
    if let Some(Closed::Failed(e)) = &closed {
        report(b"standard output", &describe(e));
        status = status.max(1);
    }
    if failed.load(Ordering::Relaxed) || select.failed() {
        status = status.max(1);
    }
    ExitCode::from(mpi.max_status(status))
}
