//! `ftw rm`: remove whole trees.

use crate::msg::{report, warn};
use crate::output::{Closed, Output};
use crate::progress::{self, Progress};
use crate::term::{ColorArg, Names};
use clap::Args;
use ftw::remove::{Refusal, Report};
use ftw::sys::FileType;
use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub const EXAMPLES: &str = "\
Examples:
  ftw rm build target            remove two trees
  ftw rm -n node_modules | wc -l what would go, without removing anything
  ftw rm -v old | tail           each path as it is removed
  ftw rm --chmod ~/go/pkg/mod    Go's read-only module cache
  ftw rm -rf dir                 rm's spellings work too
  mpirun -n 4 ftw rm --mpi old   across the ranks of an MPI job

Each PATH is removed with everything below it (a file PATH is simply unlinked). A
symbolic link is removed, never followed: inside a tree, and as a PATH too; 'link/'
(with the slash, which would mean the directory it leads to) is refused. Directories
are opened relative to their parents with O_NOFOLLOW, so a directory swapped for a
link while ftw runs cannot lead it out of the tree.

What cannot be removed is reported as 'ftw: PATH: reason' (the directories holding it
are kept, without further messages) while the rest is removed; the exit status is then
1. A PATH whose last component is '.' or '..' ('x/..', './') is refused always, as
POSIX asks, and '/' (or what resolves to it) unless --no-preserve-root is given: the
other PATHs are removed all the same, and the exit status is 1. ftw never prompts: -i,
-I and --interactive (but --interactive=never) are refused.

On a terminal, a progress line on standard error counts what is removed, and the
paths printed (-v, -n) are escaped and coloured as 'ftw find' does.";

/// Remove each PATH and everything below it (like 'rm -rf', but safe against symbolic
/// link races, with bounded resources at any depth, and in parallel).
#[derive(Args, Clone)]
#[command(args_override_self = true)]
pub struct RmArgs {
    /// Files and trees to remove.
    // Read as OS strings, so that an empty one is rm's 'No such file or directory', not
    // a usage error. None with -f is nothing to do, as for rm -f (a script's empty list).
    #[arg(value_name = "PATH", required_unless_present = "force",
          value_parser = clap::value_parser!(OsString))]
    paths: Vec<OsString>,

    /// Accepted for rm's habits: ftw rm is always recursive.
    #[arg(short = 'r', short_alias = 'R', long = "recursive")]
    recursive: bool,

    /// A PATH that does not exist, or leads through a file ('file/x'), is no error, and no
    /// PATH is nothing to do (ftw never prompts, with or without -f).
    // As rm's -f, it also cancels a prompting option given before it.
    #[arg(short = 'f', long = "force",
          overrides_with_all = ["interactive", "interactive_once", "interactive_when"])]
    force: bool,

    /// Print each path removed (a directory after its contents).
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,

    /// Remove nothing: print each path that would be removed, and report what the
    /// removal would fail on (a directory you cannot write, an immutable or append-only
    /// file, a mount point, a directory that cannot be read), with its exit status.
    #[arg(short = 'n', long = "dry-run")]
    dry_run: bool,

    /// No progress line on the terminal.
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,

    /// Do not remove anything on another file system than its PATH's: a directory inside
    /// on another device, or the root of any mount, is reported and left, with the
    /// directories holding it. That keeps bind mounts of the same file system too (told
    /// by the kernel, Linux 5.8 on), which rm, telling by the device only, empties. A
    /// PATH that is itself a mount point is emptied, and its removal fails.
    #[arg(long = "one-file-system", visible_alias = "xdev")]
    one_file_system: bool,

    /// Refuse '/' (and what resolves to it, such as a bind mount of it): the default.
    #[arg(long = "preserve-root", overrides_with = "no_preserve_root")]
    preserve_root: bool,

    /// Do not refuse '/' ('.' and '..' are refused all the same).
    #[arg(long = "no-preserve-root", overrides_with = "preserve_root")]
    no_preserve_root: bool,

    /// Where a directory inside a tree is read-only (mode 0555, such as Go's module
    /// cache), add owner write and search permission to it so that it can be emptied;
    /// one that cannot be read (mode 0000 or 0300) gets owner read, write and search
    /// before it is read (one access check more per directory). Only your own directories can
    /// be changed. Never changes anything outside the trees, nor follows links.
    #[arg(long = "chmod")]
    chmod: bool,

    /// Worker threads. 0 (the default): one per core, and more (up to 32) while they
    /// wait on the disk (unlinks that wait for freed blocks to be discarded, a cold
    /// cache). 1: a serial removal.
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    threads: usize,

    /// Share the removal across the ranks of an MPI job: 'mpirun -n 4 ftw rm --mpi
    /// PATH'. Each rank unlinks files through the handles of the directories it lists,
    /// and a directory is removed through its parent's handle once its contents are
    /// gone, never through a link; the errors, refusals and exit status are the single
    /// process's (the highest of all ranks'), each error said once; -v's paths come in
    /// no set order. Needs an ftw built with the feature 'mpi' (cargo install --features
    /// mpi). Not with -n or --chmod.
    #[arg(long = "mpi")]
    mpi: bool,

    #[command(flatten)]
    color: ColorArg,

    // The prompting options: the last one given counts, as for rm (-f cancels those
    // before it).
    /// Refused: ftw rm never prompts (see --dry-run).
    #[arg(short = 'i', hide = true,
          overrides_with_all = ["interactive_once", "interactive_when"])]
    interactive: bool,

    /// Refused: ftw rm never prompts (see --dry-run).
    #[arg(short = 'I', hide = true, overrides_with_all = ["interactive", "interactive_when"])]
    interactive_once: bool,

    /// never (what ftw rm does) is accepted; the others are refused (see --dry-run).
    #[arg(long = "interactive", hide = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "always", value_name = "WHEN",
          overrides_with_all = ["interactive", "interactive_once"])]
    interactive_when: Option<String>,
}

/// The CLI's end of a removal: paths printed (with -v or -n), errors reported.
struct CliReport {
    out: Option<Mutex<Output>>,
    /// How the paths printed are written (escaped on a terminal, coloured by type).
    names: Names,
    /// Standard output failed (other than a reader gone away): reported once.
    out_failed: AtomicBool,
    failed: AtomicBool,
    /// Some entry was refused for want of write permission on its directory.
    read_only: AtomicBool,
}

impl Report for CliReport {
    fn wants_paths(&self) -> bool {
        self.out.is_some()
    }

    fn removed(&self, path: &[u8], file_type: FileType) {
        let Some(out) = &self.out else { return };
        let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
        if self.out_failed.load(Ordering::Relaxed) {
            return;
        }
        let buf = out.buf();
        self.names.path(path, file_type, buf);
        buf.push(b'\n');
        if let Err(c) = out.end_record() {
            self.closed(c);
        }
    }

    fn not_read(&self, path: &[u8]) {
        warn(&format!(
            "{}: cannot be read until --chmod changes its mode: what it holds is not listed \
             nor checked by a dry run",
            crate::term::quote(path)
        ));
    }

    fn error(&self, err: ftw::walk::Error) {
        self.failed.store(true, Ordering::Relaxed);
        let e = err.io_error();
        if let Some(r) = e.get_ref().and_then(|e| e.downcast_ref::<Refusal>()) {
            report(
                &crate::os::bytes(err.path().as_os_str()),
                refusal_reason(*r),
            );
            return;
        }
        // Below a PATH (a PATH's own directory is outside the tree: --chmod leaves it),
        // and not EPERM (an immutable file, a sticky directory): no mode cures that.
        if e.kind() == std::io::ErrorKind::PermissionDenied
            && e.raw_os_error() != Some(1)
            && err.depth() > 0
        {
            self.read_only.store(true, Ordering::Relaxed);
        }
        crate::msg::error(&err);
    }
}

impl CliReport {
    /// Standard output closed: the removal goes on, printing nothing more.
    fn closed(&self, c: Closed) {
        if self.out_failed.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Closed::Failed(e) = c {
            self.failed.store(true, Ordering::Relaxed);
            report(b"standard output", &crate::msg::describe(&e));
        }
    }
}

/// What is said of a PATH refused.
fn refusal_reason(r: Refusal) -> &'static str {
    match r {
        Refusal::Root => {
            "it is the root directory: refusing to remove it \
             (--no-preserve-root overrides this)"
        }
        Refusal::Dot => "refusing to remove '.' or '..' directory: skipping it",
    }
}

/// Whether `--interactive=WHEN` asks for prompts, as rm reads WHEN: `never`, `no`,
/// `none` (no), `once`, `always`, `yes` (yes), or a prefix of them that tells which
/// (`n`, `al`). `Err` for anything else.
fn prompts(when: &str) -> Result<bool, ()> {
    const WORDS: [(&str, bool); 6] = [
        ("never", false),
        ("no", false),
        ("none", false),
        ("once", true),
        ("always", true),
        ("yes", true),
    ];
    if let Some(&(_, p)) = WORDS.iter().find(|(w, _)| *w == when) {
        return Ok(p);
    }
    let mut found = WORDS
        .iter()
        .filter(|(w, _)| !when.is_empty() && w.starts_with(when))
        .map(|&(_, p)| p);
    let first = found.next().ok_or(())?;
    match found.all(|p| p == first) {
        true => Ok(first),
        false => Err(()),
    }
}

#[cfg(feature = "mpi")]
#[path = "rm_mpi.rs"]
mod mpi;

/// The option that `--mpi` does not take, if one is given.
fn mpi_refused(args: &RmArgs) -> Option<&'static str> {
    if args.dry_run {
        Some("-n (--dry-run)")
    } else if args.chmod {
        Some("--chmod")
    } else {
        None
    }
}

pub fn run(args: RmArgs) -> ExitCode {
    let _ = args.recursive;
    #[cfg(windows)]
    if args.chmod {
        // Windows removes what is in a read-only directory, and ftw removes read-only
        // files (FileDispositionInfoEx ignores the attribute, or it is cleared).
        crate::msg::not_on_windows(
            "--chmod: nothing to do on Windows, where a read-only directory keeps none of its entries",
        );
    }
    let when = args.interactive_when.as_deref().map(prompts);
    let usage = if let Some(Err(())) = when {
        let given = args.interactive_when.as_deref().unwrap_or_default();
        Some(format!(
            "invalid argument '{}' for '--interactive': ftw rm never prompts, so only \
             'never' (or 'no', 'none') is accepted",
            crate::term::escape(given.as_bytes())
        ))
    } else if args.interactive || args.interactive_once || when == Some(Ok(true)) {
        Some(
            "-i, -I and --interactive are not supported: ftw rm never prompts \
             (ftw rm -n PATH shows what would be removed; --interactive=never is accepted)"
                .to_string(),
        )
    } else {
        None
    };
    if let Some(message) = usage {
        // Under mpirun, said once (by rank 0).
        if args.mpi {
            return crate::msg::say_once_mpi(b"rm", &message);
        }
        report(b"rm", &message);
        return ExitCode::from(2);
    }
    let preserve_root = !args.no_preserve_root;
    if args.mpi {
        if let Some(what) = mpi_refused(&args) {
            return crate::msg::refuse_mpi(b"rm", what);
        }
        #[cfg(not(feature = "mpi"))]
        {
            report(b"--mpi", crate::msg::NO_MPI);
            return ExitCode::from(2);
        }
        #[cfg(feature = "mpi")]
        {
            let how = mpi::How {
                force: args.force,
                verbose: args.verbose,
                one_file_system: args.one_file_system,
                preserve_root,
                threads: args.threads,
                // mpirun hands the ranks a terminal of its own, which says nothing of
                // where the output goes: written as piped (the bytes, colours only if
                // asked for).
                names: Names::new(false, args.color.color.colors(false)),
            };
            return mpi::run(&how, &args.paths);
        }
    }
    let printing = args.verbose || args.dry_run;
    let out = if printing {
        match Output::stdout() {
            Ok(o) => Some(Mutex::new(o)),
            Err(e) => {
                report(b"standard output", &crate::msg::describe(&e));
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    let cli = Arc::new(CliReport {
        out,
        names: Names::stdout(args.color.color),
        out_failed: AtomicBool::new(false),
        failed: AtomicBool::new(false),
        read_only: AtomicBool::new(false),
    });
    let counts = Arc::new(ftw::remove::Progress::default());
    let opts = ftw::RemoveOptions::new()
        .threads(args.threads)
        .same_file_system(args.one_file_system)
        .make_writable(args.chmod)
        .dry_run(args.dry_run)
        .preserve_root(preserve_root)
        .ignore_missing(args.force)
        .report(cli.clone())
        .progress(counts.clone());
    // No progress line over paths printed to the same terminal.
    let printing_here = printing && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let show = !args.quiet && !printing_here;
    let shown = counts.clone();
    let verb = if args.dry_run { "to remove" } else { "removed" };
    let line = Progress::start(show, move |elapsed| {
        let n = shown.removed();
        format!(
            "ftw rm: {} {verb} ({}/s), {:.1} s",
            progress::count(n),
            progress::rate(n, elapsed),
            elapsed.as_secs_f64()
        )
    });
    let mut thread_warned = false;
    for path in &args.paths {
        let summary = ftw::remove_tree(path, &opts);
        if let (Some((e, n)), false) = (&summary.thread_error, thread_warned) {
            thread_warned = true;
            let threads = if *n == 1 { "thread" } else { "threads" };
            warn(&format!(
                "cannot start a thread: {}: running with {n} {threads}",
                crate::msg::describe(e)
            ));
        }
    }
    line.finish();
    if let Some(out) = &cli.out {
        let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
        if !cli.out_failed.load(Ordering::Relaxed) {
            if let Err(c) = out.flush() {
                cli.closed(c);
            }
        }
    }
    if cli.read_only.load(Ordering::Relaxed) && !args.chmod {
        warn(
            "--chmod gives the read-only and unreadable directories inside the trees the permissions removal takes",
        );
    }
    if cli.failed.load(Ordering::Relaxed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
