//! `ftw find`: list every entry under each root.

use crate::format::Format;
use crate::msg::{report, warn};
use crate::output::{Age, Closed, LATENCY, Output};
use crate::select::{FilterArgs, Select};
use crate::term::{ColorArg, Names};
use clap::Args;
use ftw::sys::StatMask;
use ftw::walk::{Control, ParallelVisitor, WalkBuilder};

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};

pub const EXAMPLES: &str = "\
Examples:
  ftw find                       every entry under the working directory
  ftw find /usr | head           stops quietly when the reader goes away
  ftw find -0 src | xargs -0 ls -ld
  ftw find --sort -d 2 /etc      the top two levels, in a fixed order
  ftw find -L --one-file-system /
  ftw find --max-results 1 /     is there anything at all?
  ftw find -e rs -E target       Rust sources, nothing under a directory 'target'
  ftw find -t f -S +100mi ~      files of 100 MiB or more
  ftw find -g '*.o' -X rm --     remove the object files found
  ftw find --color always | less -R

Paths are printed as ROOT/relative/name, in no fixed order unless --sort is given.
Piped, a path is the bytes on disk as they are (names need not be UTF-8); on a
terminal, control characters and bytes that are not UTF-8 are escaped (\\n, \\t,
\\\\, \\x1b, \\xff; \\u{202e} for bidirectional controls), and names are coloured by
LS_COLORS (--color). Errors are reported as 'ftw: PATH: reason' on standard error
(the path escaped so) while the listing goes on; the exit status is
then 1.

Threads: by default one per core to start with; when they spend their time waiting on
the disk (a cold cache), more are added while work is queued, up to the cap below. A
warm cache keeps one per core.";

/// List every entry under each PATH (like 'find PATH -mindepth 1').
#[derive(Args, Clone)]
#[command(args_override_self = true)]
pub struct FindArgs {
    /// Trees to list [default: .]. A root that is a symbolic link is followed.
    // Read as OS strings, so that an empty one is an error for that PATH alone (as in
    // find), not a usage error.
    #[arg(value_name = "PATH", value_parser = clap::value_parser!(OsString))]
    paths: Vec<OsString>,

    /// End each path with a NUL byte instead of a newline (for 'xargs -0').
    #[arg(short = '0', long = "print0")]
    print0: bool,

    /// Descend at most N levels below each root (1: the root's own entries only).
    #[arg(short = 'd', long = "max-depth", value_name = "N")]
    max_depth: Option<usize>,

    /// Do not print entries less than N levels below their root (0 prints the root too).
    #[arg(long = "min-depth", value_name = "N", default_value_t = 1)]
    min_depth: usize,

    /// Follow symbolic links (like 'find -L'). A link leading back to a directory being
    /// listed is reported as an error, not followed; a dangling link is printed.
    #[arg(short = 'L', long = "follow")]
    follow: bool,

    /// Do not descend into directories on other file systems (mount points are printed).
    #[arg(long = "one-file-system", visible_alias = "xdev")]
    one_file_system: bool,

    /// Print in a fixed order: each directory's entries sorted by their bytes, each
    /// directory's contents right after it. Streams as it goes; with several threads,
    /// the others read ahead the directories it will print next.
    #[arg(long = "sort")]
    sort: bool,

    /// Print in ORDER, once the whole tree is read (nothing is printed before): paths:
    /// as the whole paths sort as strings (Emacs's 'sort' with 'string<'; for UTF-8
    /// names 'LC_ALL=C sort'), a directory's contents where its name and a '/' sort;
    /// emacs: as Emacs's directory-files-recursively returns them, in each directory its
    /// subdirectories first (a symbolic link to a directory counts as one; it is
    /// entered only with -L), each one's contents before it, then its other entries.
    /// Names are compared by code point as Emacs decodes them from UTF-8, a byte that
    /// is not UTF-8 after every character, a directory's name with a '/' after it.
    /// The paths are the bytes on disk (never escaped). Not with --sort, --format, -l,
    /// -x, -X or --mpi.
    #[arg(long = "order", value_name = "ORDER",
          conflicts_with_all = ["sort", "format", "long", "exec", "exec_batch", "mpi"])]
    order: Option<crate::order::Order>,

    /// With --order: print the paths as an Emacs Lisp list of strings, for 'read': '(',
    /// then each path in double quotes on a line of its own (a double quote or a
    /// backslash escaped with a backslash, a newline written as backslash n, every other
    /// byte as it is), then ')'.
    #[arg(long = "lisp", requires = "order", conflicts_with = "print0")]
    lisp: bool,

    /// With --lisp: one list per line for each run of entries of one directory (in the
    /// order's sequence), not one list of paths: the directory's path with a '/' after
    /// it, then the names. No list around them: 'read' them one by one.
    #[arg(long = "group", requires = "lisp")]
    group: bool,

    /// With --order: leave the directories out of what is printed (they are still
    /// walked); with --order emacs, the symbolic links to directories too.
    #[arg(long = "no-dirs", requires = "order")]
    no_dirs: bool,

    /// With --order: write a '/' after the name of each directory (with --order emacs,
    /// and of each symbolic link to one), as Emacs's file-name-all-completions and
    /// 'ls -p' mark them.
    #[arg(long = "mark-dirs", requires = "order")]
    mark_dirs: bool,

    /// Worker threads. 0 (the default): one per core to start with, and more while they
    /// wait on the disk (a cold cache; the cap is below). 1: a serial walk. With --sort,
    /// N threads read, the printing one among them (by default, as many as without).
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    threads: usize,

    /// Stop after printing N entries.
    #[arg(long = "max-results", value_name = "N")]
    max_results: Option<u64>,

    /// Print only entries exactly N levels below their root (--min-depth N --max-depth N).
    #[arg(long = "exact-depth", value_name = "N")]
    exact_depth: Option<usize>,

    /// Run CMD for each entry found instead of printing it, in parallel (each command's
    /// output kept together; with --sort or -j1, one at a time, in order). In CMD, {} is
    /// the path, {/} its name, {//} its directory, {.} and {/.} the same without the
    /// extension; without any, the path is appended. CMD ends at ';' or with the
    /// arguments.
    #[arg(short = 'x', long = "exec", value_name = "CMD", num_args = 1..,
          allow_hyphen_values = true, value_terminator = ";", conflicts_with = "exec_batch")]
    exec: Option<Vec<std::ffi::OsString>>,

    /// Run CMD once with all the entries found (as many times as the system's limit on
    /// the length of a command line needs), in walk order: an argument with {} (or the
    /// others above) is repeated for each path; without any, the paths come last.
    #[arg(short = 'X', long = "exec-batch", value_name = "CMD", num_args = 1..,
          allow_hyphen_values = true, value_terminator = ";")]
    exec_batch: Option<Vec<std::ffi::OsString>>,

    /// Print each entry by TEMPLATE, as 'find -printf': %p path, %P path below the
    /// root, %f name, %h its directory, %d depth, %y type letter, %s size, %k KiB
    /// allocated, %i inode, %m octal mode, %M mode as ls writes it, %n links, %u/%g
    /// owner and group (%U/%G as numbers), %t and %Tk modification time, %Ak access
    /// time, %Ck status change time (k: @, +, or a strftime letter), %l link target,
    /// %%; widths and flags as find's (%-20f, %10s, %.3p, %#m); escapes \n \t \0
    /// \\. No newline is added.
    #[arg(
        long = "format",
        value_name = "TEMPLATE",
        conflicts_with = "long",
        allow_hyphen_values = true
    )]
    format: Option<String>,

    /// Print a line like 'ls -l' for each entry: mode, links, owner, group, size, time,
    /// path, and a link's target.
    #[arg(short = 'l', long = "long")]
    long: bool,

    /// Share the walk across the ranks of an MPI job: 'mpirun -n 4 ftw find --mpi
    /// PATH'. Rank 0 writes everything, the lines the single process writes (with
    /// --sort, in its order, byte for byte); the exit status is the highest of all
    /// ranks'. Needs an ftw built with the feature 'mpi' (cargo install --features mpi).
    /// Not with -L, --ignore, -x, -X or --max-results.
    #[arg(long = "mpi")]
    mpi: bool,

    #[command(flatten)]
    color: ColorArg,

    #[command(flatten)]
    filters: FilterArgs,
}

#[cfg(feature = "mpi")]
#[path = "find_mpi.rs"]
mod mpi;

pub fn run(args: FindArgs) -> ExitCode {
    if args.mpi {
        if let Some(what) = mpi_refused(&args) {
            return crate::msg::refuse_mpi(b"find", what);
        }
        #[cfg(not(feature = "mpi"))]
        {
            report(b"--mpi", crate::msg::NO_MPI);
            return ExitCode::from(2);
        }
    }
    let (mut select, excludes) = match args.filters.build() {
        Ok(f) => f,
        Err(e) => {
            report(b"find", &e);
            return ExitCode::from(2);
        }
    };
    let format = match (&args.format, args.long) {
        (Some(t), _) => match Format::parse(t) {
            Ok(f) => Some(f),
            Err(e) => {
                report(b"find", &e);
                return ExitCode::from(2);
            }
        },
        (None, true) => Some(Format::long()),
        (None, false) => None,
    };
    // What the filters fetch, they fetch with what the record shows.
    select.fetch_also(format.as_ref().map_or(StatMask::TYPE, Format::mask));
    let mut out = match Output::stdout() {
        Ok(o) => o,
        Err(e) => {
            report(b"standard output", &crate::msg::describe(&e));
            return ExitCode::from(1);
        }
    };
    let roots = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.iter().map(PathBuf::from).collect()
    };
    #[cfg(feature = "mpi")]
    if args.mpi {
        // mpirun hands the ranks a terminal of its own, which says nothing of where the
        // output goes: written as piped (the bytes, colours only if asked for).
        let names = Names::new(false, args.color.color.colors(false));
        select.fetch_also(names.metadata_mask());
        let end = match (&args.format, args.print0) {
            (Some(_), _) => None,
            (None, true) => Some(0u8),
            (None, false) => Some(b'\n'),
        };
        let records = Records {
            format: format.as_ref(),
            names: &names,
            end,
        };
        return mpi::run(&args, &roots, &select, excludes, &records, out);
    }
    if let Some(order) = args.order {
        let style = match (args.lisp, args.print0) {
            (true, _) if args.group => crate::order::Style::LispGroups,
            (true, _) => crate::order::Style::Lisp,
            (false, true) => crate::order::Style::Ended(0),
            (false, false) => crate::order::Style::Ended(b'\n'),
        };
        return list_in_order(&args, &roots, excludes, order, style, &select, &mut out);
    }
    let mut b = WalkBuilder::new(&roots[0])
        .min_depth(args.min_depth)
        .follow_links(args.follow)
        .same_file_system(args.one_file_system)
        .sort(args.sort)
        .threads(args.threads);
    for r in &roots[1..] {
        b = b.add_root(r);
    }
    if let Some(rules) = args.filters.ignore() {
        b = b.ignore_rules(rules);
    }
    if let Some(d) = args.exact_depth {
        b = b.min_depth(d).max_depth(d);
    }
    if let Some(ex) = excludes {
        thread_local! {
            // The path for globs with a '/', per walking thread: no allocation per entry.
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        b = b.filter_entry(move |e| SCRATCH.with_borrow_mut(|scratch| !ex.is_match(e, scratch)));
    }
    // Metadata is asked for relative to the directory's handle.
    let names = Names::stdout(args.color.color);
    select.fetch_also(names.metadata_mask());
    let wants_metadata =
        format.as_ref().is_some_and(Format::needs_metadata) || names.needs_metadata();
    if select.needs_metadata() || wants_metadata {
        b = b.keep_handles(true);
    }
    if let Some(d) = args.max_depth {
        b = b.max_depth(d);
    }
    let serial = args.sort || args.threads == 1;
    let commands = match (&args.exec, &args.exec_batch) {
        (Some(words), _) => Some((crate::exec::Template::new(words), false)),
        (_, Some(words)) => Some((crate::exec::Template::new(words), true)),
        _ => None,
    };
    if let Some((template, batch)) = commands {
        let template = match template {
            Ok(t) => t,
            Err(e) => {
                report(b"find", &e);
                return ExitCode::from(2);
            }
        };
        let (failed_cmd, failed_walk) = if batch {
            crate::exec::batch(b, &select, &template)
        } else {
            crate::exec::each(b, &select, &template, serial)
        };
        return if failed_cmd || failed_walk || select.failed() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        };
    }
    // A template says where its records end.
    let end = match (&args.format, args.print0) {
        (Some(_), _) => None,
        (None, true) => Some(0u8),
        (None, false) => Some(b'\n'),
    };
    let out_fmt = Records {
        format: format.as_ref(),
        names: &names,
        end,
    };
    let limit = args.max_results.unwrap_or(u64::MAX);
    let failed = AtomicBool::new(false);
    let closed = list(b, &select, &mut out, &out_fmt, limit, &failed, serial);
    let closed = closed.or_else(|| out.flush().err());
    match closed {
        Some(Closed::Pipe) => return ExitCode::SUCCESS,
        Some(Closed::Failed(e)) => {
            report(b"standard output", &crate::msg::describe(&e));
            return ExitCode::from(1);
        }
        None => {}
    }
    if failed.load(Ordering::Relaxed) || select.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--order`: each root read whole, then printed in `order`. `b` is the walk of the
/// first root, with every option; the others' walks are the same.
fn list_in_order(
    args: &FindArgs,
    roots: &[PathBuf],
    excludes: Option<ftw::filter::Excludes>,
    order: crate::order::Order,
    style: crate::order::Style,
    select: &Select,
    out: &mut crate::output::Output,
) -> ExitCode {
    use crate::order::{Printer, collect, prefix};
    let failed = AtomicBool::new(false);
    let mut printer = Printer {
        order,
        style,
        dirs: !args.no_dirs,
        mark_dirs: args.mark_dirs,
        out,
        left: args.max_results.unwrap_or(u64::MAX),
        group: None,
    };
    let excludes = excludes.map(std::sync::Arc::new);
    let mut result = printer.begin();
    for root in roots {
        if result.is_err() {
            break;
        }
        let mut b = WalkBuilder::new(root)
            .min_depth(args.min_depth.max(1))
            .follow_links(args.follow)
            .same_file_system(args.one_file_system)
            .threads(args.threads);
        if let Some(rules) = args.filters.ignore() {
            b = b.ignore_rules(rules);
        }
        if let Some(d) = args.exact_depth {
            b = b.min_depth(d.max(1)).max_depth(d);
        }
        if let Some(d) = args.max_depth {
            b = b.max_depth(d);
        }
        if let Some(ex) = excludes.clone() {
            thread_local! {
                static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
            }
            b = b.filter_entry(move |e| SCRATCH.with_borrow_mut(|s| !ex.is_match(e, s)));
        }
        if let Some(mut node) = collect(b, order, select, &failed) {
            result = printer.print(&mut node, &mut prefix(root)).map(|_| ());
        }
    }
    let result = result.and_then(|()| printer.end());
    match result {
        Err(Closed::Pipe) => return ExitCode::SUCCESS,
        Err(Closed::Failed(e)) => {
            report(b"standard output", &crate::msg::describe(&e));
            return ExitCode::from(1);
        }
        Ok(()) => {}
    }
    if failed.load(Ordering::Relaxed) || select.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The option that `--mpi` does not take, if one is given.
fn mpi_refused(args: &FindArgs) -> Option<&'static str> {
    if args.follow {
        Some("-L (--follow)")
    } else if args.filters.ignore().is_some() {
        Some("--ignore")
    } else if args.exec.is_some() {
        Some("-x (--exec)")
    } else if args.exec_batch.is_some() {
        Some("-X (--exec-batch)")
    } else if args.max_results.is_some() {
        Some("--max-results")
    } else {
        None
    }
}

/// How each entry is written: its path and an end byte, or by a template.
struct Records<'a> {
    format: Option<&'a Format>,
    /// Escaped or coloured, or the bytes as they are.
    names: &'a Names,
    /// The byte after each record (none after a template's).
    end: Option<u8>,
}

impl Records<'_> {
    /// Appends the entry's record to `buf`; false, with nothing appended, when the
    /// template's metadata could not be had: that is reported (`ftw: PATH: reason`) and
    /// sets `failed`.
    #[inline]
    fn write(&self, entry: &ftw::walk::Entry<'_>, buf: &mut Vec<u8>, failed: &AtomicBool) -> bool {
        match self.format {
            Some(f) => {
                if let Err(e) = f.write(entry, buf, self.names) {
                    failed.store(true, Ordering::Relaxed);
                    let mut path = Vec::new();
                    entry.write_path(&mut path);
                    report(&path, &crate::msg::describe(&e));
                    return false;
                }
            }
            None if self.names.raw() => entry.write_path(buf),
            None => self.names.entry(entry, buf),
        }
        if let Some(end) = self.end {
            buf.push(end);
        }
        true
    }
}

/// The one warning when a thread could not be started: the walk went on with `n`.
fn warn_threads(e: &std::io::Error, n: usize) {
    let threads = if n == 1 { "thread" } else { "threads" };
    warn(&format!(
        "cannot start a thread: {}: running with {n} {threads}",
        crate::msg::describe(e)
    ));
}

/// Each worker formats its entries into a batch of its own and hands full batches to
/// the writer through a bounded queue: a slow reader makes the workers wait, so memory
/// stays bounded whatever the reader does. A walk in order (sorted, or on one thread)
/// has one batcher, which writes its batches itself.
struct Batcher<'a> {
    buf: Vec<u8>,
    /// A batch goes out when this full (the output's chunk, at most [`BATCH`]), or when
    /// its first entry has waited long enough.
    size: usize,
    age: Age,
    records: &'a Records<'a>,
    tx: SyncSender<Vec<u8>>,
    select: &'a Select,
    scratch: Vec<u8>,
    stop: &'a AtomicBool,
    failed: &'a AtomicBool,
    /// Records handed out by all workers, against `limit`: a worker writes an entry only
    /// after taking its place, so exactly `limit` are written.
    issued: &'a AtomicU64,
    limit: u64,
    /// Starts the writer thread (once): it is needed only when a batch would otherwise
    /// wait, so a small walk runs without it. False if it could not be started.
    start_writer: &'a (dyn Fn() -> bool + Sync),
    /// Writes a batch, and any waiting in the queue, from the calling worker (in a walk
    /// in order, or where no writer thread could be started), and with `due` (its
    /// records have waited long enough) lets it out now. False if the output is closed.
    write_here: &'a (dyn Fn(Vec<u8>, bool) -> bool + Sync),
    /// The walk is in order, on this thread alone: every batch is written here, and no
    /// writer thread is started.
    in_order: bool,
}

const BATCH: usize = 64 << 10;

impl Batcher<'_> {
    /// Hands the batch out (`due`: it must go out now, so the writer is wanted); false
    /// if the output is closed. Without a writer thread, the worker writes it itself.
    fn send(&mut self, due: bool) -> bool {
        if self.buf.is_empty() {
            return true;
        }
        self.age.reset();
        let batch = std::mem::replace(&mut self.buf, Vec::with_capacity(self.size + 4096));
        if self.in_order || (due && !(self.start_writer)()) {
            return (self.write_here)(batch, due);
        }
        match self.tx.try_send(batch) {
            Ok(()) => true,
            Err(TrySendError::Disconnected(_)) => false,
            Err(TrySendError::Full(batch)) => {
                if (self.start_writer)() {
                    self.tx.send(batch).is_ok()
                } else {
                    (self.write_here)(batch, due)
                }
            }
        }
    }
}

impl ParallelVisitor for Batcher<'_> {
    fn visit(&mut self, item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>) -> Control {
        if self.stop.load(Ordering::Relaxed) {
            return Control::Stop;
        }
        let mut control = Control::Continue;
        match item {
            Ok(entry) => {
                // (A copy, to carry the metadata the filters fetch to the record.)
                let entry = &mut { *entry };
                let (print, then) = self.select.decide(entry, &mut self.scratch);
                if !print {
                    return then;
                }
                control = then;
                let place = self.issued.fetch_add(1, Ordering::Relaxed);
                if place >= self.limit {
                    self.stop.store(true, Ordering::Relaxed);
                    return Control::Stop;
                }
                if place + 1 == self.limit {
                    // The last record: written (when this batcher is dropped), and the
                    // walk goes no further.
                    self.stop.store(true, Ordering::Relaxed);
                    control = Control::Stop;
                }
                if !self.records.write(entry, &mut self.buf, self.failed) {
                    return control;
                }
                // A full batch goes out, and so do entries coming slowly (a cold disk).
                if (self.age.record() || self.buf.len() >= self.size) && !self.send(true) {
                    return Control::Stop;
                }
            }
            Err(err) => crate::msg::walk_error(&err, self.failed),
        }
        control
    }
}

impl Drop for Batcher<'_> {
    fn drop(&mut self) {
        self.send(false);
    }
}

/// Writes every batch that arrives until all senders are gone, in chunks; when no batch
/// comes for [`LATENCY`], what is buffered goes out, so that a slow walk is not held
/// back.
fn write_batches(rx: &Receiver<Vec<u8>>, out: &mut Output) -> Option<Closed> {
    loop {
        let batch = match rx.recv_timeout(LATENCY) {
            Ok(batch) => batch,
            Err(RecvTimeoutError::Timeout) => {
                if let Err(c) = out.flush() {
                    return Some(c);
                }
                match rx.recv() {
                    Ok(batch) => batch,
                    Err(_) => return None,
                }
            }
            Err(RecvTimeoutError::Disconnected) => return None,
        };
        out.buf().extend_from_slice(&batch);
        if let Err(c) = out.end_record() {
            return Some(c);
        }
    }
}

/// Runs the walk `b`, writing each entry `select` takes by `records` to `out`, at most
/// `limit` of them. `in_order`: the walk is sorted or on one thread, and its one
/// visitor writes; otherwise the workers' batches go to a writer thread.
#[allow(clippy::too_many_arguments)]
fn list(
    b: WalkBuilder,
    select: &Select,
    out: &mut Output,
    records: &Records<'_>,
    limit: u64,
    failed: &AtomicBool,
    in_order: bool,
) -> Option<Closed> {
    if limit == 0 {
        return None;
    }
    let stop = AtomicBool::new(false);
    let issued = AtomicU64::new(0);
    let size = out.chunk().min(BATCH);
    // At most this many batches wait for the writer: 2 MiB.
    let (tx, rx) = sync_channel::<Vec<u8>>(32);
    let rx = Mutex::new(rx);
    let sink = Mutex::new((out, None::<Closed>));
    // The writer thread: not started yet, running, or failed to start (the workers
    // then write their batches themselves). Changed under `writer_error`'s lock, so that
    // no worker waits for a writer that does not come.
    let writer = AtomicU8::new(NO_WRITER);
    let writer_error = Mutex::new(None::<std::io::Error>);
    let drain = || {
        let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
        let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
        let (out, closed) = &mut *sink;
        if closed.is_some() {
            for _ in rx.iter() {}
            return;
        }
        if let Some(c) = write_batches(&rx, out) {
            *closed = Some(c);
            stop.store(true, Ordering::Relaxed);
            // Drain, so that no worker waits on a full queue.
            for _ in rx.iter() {}
        }
    };
    let write_here = |batch: Vec<u8>, due: bool| {
        let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
        let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
        let (out, closed) = &mut *sink;
        if closed.is_some() {
            return false;
        }
        for batch in rx.try_iter().chain(std::iter::once(batch)) {
            out.buf().extend_from_slice(&batch);
            if let Err(c) = out.end_record() {
                *closed = Some(c);
                stop.store(true, Ordering::Relaxed);
                return false;
            }
        }
        if due && let Err(c) = out.flush() {
            *closed = Some(c);
            stop.store(true, Ordering::Relaxed);
            return false;
        }
        true
    };
    let stats = std::thread::scope(|s| {
        let start_writer = || {
            match writer.load(Ordering::Acquire) {
                WRITER_RUNS => return true,
                WRITER_FAILED => return false,
                _ => {}
            }
            let mut error = writer_error.lock().unwrap_or_else(|e| e.into_inner());
            if writer.load(Ordering::Acquire) == NO_WRITER {
                match std::thread::Builder::new().spawn_scoped(s, drain) {
                    Ok(_) => writer.store(WRITER_RUNS, Ordering::Release),
                    Err(e) => {
                        *error = Some(e);
                        writer.store(WRITER_FAILED, Ordering::Release);
                    }
                }
            }
            writer.load(Ordering::Acquire) == WRITER_RUNS
        };
        let start_writer: &(dyn Fn() -> bool + Sync) = &start_writer;
        let write_here: &(dyn Fn(Vec<u8>, bool) -> bool + Sync) = &write_here;
        let (stop, issued) = (&stop, &issued);
        let stats = select.run(b, move || Batcher {
            buf: Vec::with_capacity(size + 4096),
            size,
            age: Age::default(),
            records,
            tx: tx.clone(),
            select,
            scratch: Vec::new(),
            stop,
            failed,
            issued,
            limit,
            start_writer,
            write_here,
            in_order,
        });
        // Every sender is gone: what is left (all of it, if no writer was needed) is
        // written here, or by the writer before the scope ends.
        if writer.load(Ordering::Acquire) != WRITER_RUNS {
            drain();
        }
        stats
    });
    // One warning at most: the walk's threads or the writer, whichever failed first.
    let writer_error = writer_error.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = stats.spawn_error().or(writer_error.as_ref()) {
        warn_threads(e, stats.threads().max(1));
    }
    sink.into_inner().unwrap_or_else(|e| e.into_inner()).1
}

/// The writer thread is not started yet ([`list`]'s `writer`).
const NO_WRITER: u8 = 0;
/// The writer thread runs.
const WRITER_RUNS: u8 = 1;
/// The writer thread could not be started: the workers write.
const WRITER_FAILED: u8 = 2;

// A non-blocking pipe (rustix) watches the writer.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::time::{Duration, Instant};

    #[test]
    fn the_writer_writes_what_it_has_when_no_batch_waits() {
        let (mut r, w) = std::io::pipe().unwrap();
        let mut out = Output::new(
            std::fs::File::from(std::os::fd::OwnedFd::from(w)),
            128 << 10,
        );
        let (tx, rx) = sync_channel::<Vec<u8>>(4);
        std::thread::scope(|s| {
            let writer = s.spawn(move || write_batches(&rx, &mut out).is_none());
            tx.send(b"one/path\n".to_vec()).unwrap();
            // The sender is still there (the walk goes on), yet the batch arrives.
            rustix::fs::fcntl_setfl(&r, rustix::fs::OFlags::NONBLOCK).unwrap();
            let start = Instant::now();
            let mut got = Vec::new();
            while got.len() < 9 && start.elapsed() < Duration::from_secs(5) {
                let mut buf = [0u8; 64];
                match r.read(&mut buf) {
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            drop(tx);
            assert_eq!(got, b"one/path\n");
            assert!(writer.join().unwrap(), "ends when the senders are gone");
        });
    }
}
