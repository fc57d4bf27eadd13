//! `ftw cp`: copy whole trees, as GNU `cp -R` decides what goes where.

use crate::msg::{report, warn};
use crate::output::{Closed, Output};
use crate::progress::{self, Progress};
use clap::{Args, ValueEnum};
use ftw::copy::{CopyOptions, Dereference, Preserve, Reflink, Report, Sparse, Update};
use ftw::sys::FileType;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub const EXAMPLES: &str = "\
Examples:
  ftw cp -a src backup           an exact copy of src as backup (or in it, if it
                                 is a directory already)
  ftw cp -a a b c /mnt/dest      three trees into the directory /mnt/dest
  ftw cp -t /mnt/dest -a a b c   the same, the directory named first
  ftw cp -aT src dest            merge src's contents into dest, never dest/src
  ftw cp -al src snapshot        a tree of hard links to src's files
  ftw cp -a --update src dest    only what is newer in src
  ftw cp -n -a src dest          leave every file that dest has already
  ftw cp -av --parents a/b/c d   makes d/a/b/c
  ftw cp -a --attributes-only src dest
                                 src's files in dest with their modes, owners
                                 and times, but no data

Directories are copied with everything in them, without -r or -R (both accepted).
What goes where is GNU cp's rule: with one SOURCE and a DEST that is not a
directory, DEST is the copy; otherwise each SOURCE goes into DEST (or into -t DIR)
under its own name, merging into a directory already there and replacing the files of
the same names (-n, --update keep them). By default a new entry gets its source's
permission bits less the umask, and nothing else is kept; -p keeps mode, owner and
times (to the nanosecond); -a keeps everything cp -a keeps: links as links, hard
links as links (across the SOURCEs too), holes of sparse files, extended attributes
and ACLs, fifos and devices. Without root, the owner is kept where the system allows
and silently not otherwise, as cp does.

On a terminal a long copy shows a line of what is copied, the rate, and, once the
sources are counted (beside the copy), the total and the time left; -q hides it, and
nothing is shown when standard error is not a terminal. -v prints each copy made as
'SOURCE' -> 'DEST', names quoted as GNU cp quotes them.

Every call works relative to directory handles, so a symbolic link put in place of a
destination directory while ftw copies is never followed, and a link already in DEST
is replaced, never written through. A directory is never copied into itself. What
fails is reported as 'ftw: PATH: reason' while the rest is copied; the exit status is
then 1. Backups (-b, -S), prompts (-i) and SELinux contexts (-Z, --context) are
refused (status 2).";

/// When to share blocks (`--reflink`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReflinkArg {
    /// Where the file system can, else copy.
    Auto,
    /// Only by sharing blocks: an error where the file system cannot.
    Always,
    /// Always copy the data.
    Never,
}

/// What becomes of holes (`--sparse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SparseArg {
    /// Holes of sparse files kept.
    Auto,
    /// Holes kept, and runs of zeros made holes too.
    Always,
    /// Every byte written.
    Never,
}

/// Which existing files are replaced (`--update`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UpdateArg {
    /// Every one.
    All,
    /// None (as -n).
    None,
    /// Those older than their source.
    Older,
}

/// Copy each SOURCE to DEST, or into the directory DEST (like 'cp -R', in parallel and
/// through directory handles).
#[derive(Args, Clone)]
#[command(args_override_self = true, infer_long_args = true)]
pub struct CpArgs {
    /// What to copy, then where: SOURCE... DEST (or SOURCE... with -t DIR).
    #[arg(value_name = "PATH", required = true, value_parser = clap::value_parser!(OsString))]
    paths: Vec<OsString>,

    /// Copy every SOURCE into the directory DIR.
    #[arg(short = 't', long = "target-directory", value_name = "DIR", value_parser = clap::value_parser!(OsString))]
    target_directory: Option<OsString>,

    /// DEST is the copy itself, never a directory to copy into (exactly SOURCE DEST).
    #[arg(short = 'T', long = "no-target-directory")]
    no_target_directory: bool,

    /// Accepted for cp's habits: directories are always copied with their contents.
    #[arg(short = 'r', short_alias = 'R', long = "recursive")]
    recursive: bool,

    /// Archive: keep everything (as -dR --preserve=all).
    #[arg(short = 'a', long = "archive")]
    archive: bool,

    /// Keep mode, ownership and times (as --preserve=mode,ownership,timestamps).
    #[arg(short = 'p')]
    preserve_default: bool,

    /// Keep what LIST says, comma-separated: mode, ownership, timestamps, links,
    /// xattr, all [default: mode,ownership,timestamps].
    #[arg(long = "preserve", value_name = "LIST", num_args = 0..=1, require_equals = true,
          default_missing_value = "mode,ownership,timestamps")]
    preserve: Vec<String>,

    /// Do not keep what LIST says (the same words as --preserve).
    #[arg(long = "no-preserve", value_name = "LIST")]
    no_preserve: Vec<String>,

    /// Copy symbolic links as links, and keep hard links (as --no-dereference
    /// --preserve=links).
    #[arg(short = 'd')]
    no_deref_links: bool,

    /// Never follow symbolic links in a SOURCE (the default).
    #[arg(short = 'P', long = "no-dereference", overrides_with_all = ["dereference", "deref_roots"])]
    no_dereference: bool,

    /// Always follow symbolic links in a SOURCE: copy what they lead to.
    #[arg(short = 'L', long = "dereference", overrides_with_all = ["no_dereference", "deref_roots"])]
    dereference: bool,

    /// Follow the symbolic links given as SOURCEs, not those below them.
    #[arg(short = 'H', overrides_with_all = ["no_dereference", "dereference"])]
    deref_roots: bool,

    /// Make hard links to the files instead of copying them (directories are made).
    #[arg(short = 'l', long = "link")]
    link: bool,

    /// Never replace an existing file (no error: it is left as it is).
    #[arg(short = 'n', long = "no-clobber")]
    no_clobber: bool,

    /// Replace only the files older than their source (older), none, or all.
    #[arg(short = 'u', long = "update", value_name = "WHICH", num_args = 0..=1, require_equals = true,
          default_missing_value = "older", value_enum)]
    update: Option<UpdateArg>,

    /// Where an existing file cannot be opened for writing, remove it and copy again
    /// (with -l: replace an existing file by the link).
    #[arg(short = 'f', long = "force")]
    force: bool,

    /// Remove each existing destination file before copying it (rather than
    /// overwriting it in place: its other hard links keep the old contents).
    #[arg(long = "remove-destination")]
    remove_destination: bool,

    /// Remove the trailing slashes of each SOURCE.
    #[arg(long = "strip-trailing-slashes")]
    strip_trailing_slashes: bool,

    /// Do not go into directories on other file systems (they are made, empty).
    #[arg(short = 'x', long = "one-file-system")]
    one_file_system: bool,

    /// Share the source's blocks where the file system can (auto, the default),
    /// always (an error where it cannot), or never.
    #[arg(long = "reflink", value_name = "WHEN", num_args = 0..=1, require_equals = true,
          default_missing_value = "always", value_enum, default_value = "auto")]
    reflink: ReflinkArg,

    /// Keep holes of sparse files (auto, the default), make runs of zeros holes
    /// too (always), or write every byte (never).
    #[arg(
        long = "sparse",
        value_name = "WHEN",
        value_enum,
        default_value = "auto"
    )]
    sparse: SparseArg,

    /// Copy no data: make the files (empty; an existing one keeps its contents) and
    /// set the attributes kept (with -a, -p, --preserve).
    #[arg(long = "attributes-only")]
    attributes_only: bool,

    /// Make each SOURCE's path, as given, below the directory DEST.
    #[arg(long = "parents")]
    parents: bool,

    /// Print each copy made, as 'SOURCE' -> 'DEST' (quoted as GNU cp quotes names).
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,

    /// No progress line on the terminal (files, bytes, rate, time left).
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,

    /// Worker threads. 0 (the default): one per core, and more while they wait on the
    /// disk. 1: a serial copy.
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    threads: usize,

    /// Refused: ftw cp makes no backups.
    #[arg(short = 'b', hide = true)]
    backup_short: bool,

    /// Refused: ftw cp makes no backups.
    #[arg(long = "backup", hide = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "existing", value_name = "CONTROL")]
    backup: Option<String>,

    /// Refused: ftw cp makes no backups.
    #[arg(short = 'S', long = "suffix", hide = true, value_name = "SUFFIX")]
    suffix: Option<String>,

    /// Refused: ftw cp never prompts.
    #[arg(short = 'i', long = "interactive", hide = true)]
    interactive: bool,

    /// Refused: ftw cp sets no SELinux contexts.
    #[arg(short = 'Z', hide = true)]
    selinux: bool,

    /// Refused: ftw cp sets no SELinux contexts.
    #[arg(long = "context", hide = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "", value_name = "CTX")]
    context: Option<String>,
}

/// The CLI's end of a copy: copies printed (with -v), errors reported.
struct CliReport {
    out: Option<Mutex<Output>>,
    out_failed: AtomicBool,
    failed: AtomicBool,
}

impl Report for CliReport {
    fn wants_paths(&self) -> bool {
        self.out.is_some()
    }

    fn copied(&self, src: &[u8], dst: &[u8], _: FileType) {
        let Some(out) = &self.out else { return };
        let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
        if self.out_failed.load(Ordering::Relaxed) {
            return;
        }
        let buf = out.buf();
        buf.extend_from_slice(shell_quote(src).as_bytes());
        buf.extend_from_slice(b" -> ");
        buf.extend_from_slice(shell_quote(dst).as_bytes());
        buf.push(b'\n');
        if let Err(c) = out.end_record() {
            self.closed(c);
        }
    }

    fn error(&self, err: ftw::walk::Error) {
        self.failed.store(true, Ordering::Relaxed);
        crate::msg::error(&err);
    }
}

impl CliReport {
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

/// A name as GNU cp's `-v` quotes it (gnulib's shell-escape-always style), so that
/// a shell reads it back: `'a b'`; `"it's"` where a double quote is as plain; else
/// `'it'\''s'`; bytes that are not printable text as `$'\n'`, `$'\377'` between the
/// quoted parts (`'new'$'\n''line'`).
fn shell_quote(name: &[u8]) -> String {
    enum Unit {
        Text(char),
        Byte(u8),
    }
    let mut units = Vec::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                let mut b = [0u8; 4];
                units.extend(c.encode_utf8(&mut b).bytes().map(Unit::Byte));
            } else {
                units.push(Unit::Text(c));
            }
        }
        units.extend(chunk.invalid().iter().map(|&b| Unit::Byte(b)));
    }
    let plain = units.iter().all(|u| matches!(u, Unit::Text(_)));
    let quote = units.iter().any(|u| matches!(u, Unit::Text('\'')));
    let double_safe = units
        .iter()
        .all(|u| matches!(u, Unit::Text(c) if !"\"$`\\!".contains(*c)));
    if plain && quote && double_safe {
        let text: String = units
            .iter()
            .filter_map(|u| match u {
                Unit::Text(c) => Some(*c),
                _ => None,
            })
            .collect();
        return format!("\"{text}\"");
    }
    // In a '...' part (true) or a $'...' part (false).
    let mut out = String::from("'");
    let mut quoted = true;
    for u in &units {
        match u {
            Unit::Text(c) => {
                if !quoted {
                    out.push_str("''");
                    quoted = true;
                }
                if *c == '\'' {
                    out.push_str("'\\''");
                } else {
                    out.push(*c);
                }
            }
            Unit::Byte(b) => {
                if quoted {
                    out.push_str("'$'");
                    quoted = false;
                }
                match b {
                    7 => out.push_str("\\a"),
                    8 => out.push_str("\\b"),
                    9 => out.push_str("\\t"),
                    10 => out.push_str("\\n"),
                    11 => out.push_str("\\v"),
                    12 => out.push_str("\\f"),
                    13 => out.push_str("\\r"),
                    _ => out.push_str(&format!("\\{b:03o}")),
                }
            }
        }
    }
    out.push('\'');
    out
}

/// The progress line: entries and bytes copied, the rate, and once the sources are
/// counted (`total`: entries, bytes) how much of them and the time left, from the
/// rate so far.
fn progress_line(n: u64, bytes: u64, total: Option<(u64, u64)>, elapsed: Duration) -> String {
    let human = |b: u64| crate::size::Format::HUMAN.show(b);
    let rate = bytes as f64 / elapsed.as_secs_f64().max(1e-3);
    let Some((all, all_bytes)) = total else {
        return format!(
            "ftw cp: {} copied, {} ({}/s), {:.0} s",
            progress::count(n),
            human(bytes),
            human(rate as u64),
            elapsed.as_secs_f64()
        );
    };
    // By the bytes where there are any to copy, else by the entries.
    let left = if all_bytes > 0 && bytes > 0 {
        Some(all_bytes.saturating_sub(bytes) as f64 / rate)
    } else if all_bytes == 0 && n > 0 {
        let per = elapsed.as_secs_f64() / n as f64;
        Some(all.saturating_sub(n) as f64 * per)
    } else {
        None
    };
    let left = match left {
        Some(s) if s >= 3600.0 => format!(
            ", {}h{:02}m left",
            (s / 3600.0) as u64,
            (s % 3600.0 / 60.0) as u64
        ),
        Some(s) if s >= 60.0 => format!(", {}m{:02}s left", (s / 60.0) as u64, (s % 60.0) as u64),
        Some(s) => format!(", {} s left", s.ceil() as u64),
        None => String::new(),
    };
    format!(
        "ftw cp: {} of {} copied, {} of {} ({}/s){left}",
        progress::count(n),
        progress::count(all),
        human(bytes),
        human(all_bytes),
        human(rate as u64),
    )
}

/// A usage error of cp's: said, status 2.
fn usage(reason: &str) -> ExitCode {
    report(b"cp", reason);
    ExitCode::from(2)
}

/// Adds or removes the words of `list` in `p`.
fn apply(p: &mut Preserve, list: &str, on: bool) -> Result<(), String> {
    for word in list.split(',').filter(|w| !w.is_empty()) {
        match word {
            "mode" => p.mode = on,
            "ownership" => p.ownership = on,
            "timestamps" => p.timestamps = on,
            "links" => p.links = on,
            "xattr" => p.xattr = on,
            "all" => {
                *p = if on {
                    Preserve::ALL
                } else {
                    Preserve::default()
                };
            }
            "context" => {
                return Err(
                    "--preserve=context: ftw cp sets no SELinux contexts ('all' keeps \
                     everything else)"
                        .into(),
                );
            }
            other => {
                return Err(format!(
                    "--preserve: '{other}' is none of mode, ownership, timestamps, links, \
                     xattr, all"
                ));
            }
        }
    }
    Ok(())
}

/// Whether `b` separates names in a path: `/`, and on Windows `\\` too.
fn is_sep(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}

/// The (SOURCE, copy) pairs the arguments ask for, as GNU cp decides them.
fn pairs(args: &CpArgs) -> Result<Vec<(PathBuf, PathBuf)>, (String, u8)> {
    let mut paths: Vec<PathBuf> = args.paths.iter().map(PathBuf::from).collect();
    if args.strip_trailing_slashes {
        // Each SOURCE's; DEST (the last, without -t) keeps its own.
        let n = paths.len() - usize::from(args.target_directory.is_none());
        for p in &mut paths[..n] {
            let b = crate::os::bytes(p.as_os_str());
            let end = b
                .iter()
                .rposition(|&c| !is_sep(c))
                .map_or(1.min(b.len()), |i| i + 1);
            *p = PathBuf::from(ftw::sys::bytes_to_os(&b[..end]));
        }
    }
    let into = |dir: &Path, src: &Path| -> PathBuf {
        if args.parents {
            // The library makes the SOURCE's path below DIR.
            return dir.to_path_buf();
        }
        // The SOURCE's last name as written ('a/.' ends in '.'): '.', '..' or none
        // ('/') puts what is in it into DIR itself, as GNU cp does.
        let bytes = crate::os::bytes(src.as_os_str());
        let end = bytes.iter().rposition(|&b| !is_sep(b)).map_or(0, |i| i + 1);
        let last = bytes[..end].rsplit(|&b| is_sep(b)).next().unwrap_or(b"");
        match last {
            b"" | b"." | b".." => dir.to_path_buf(),
            _ => dir.join(ftw::sys::bytes_to_os(last)),
        }
    };
    if let Some(dir) = &args.target_directory {
        if args.no_target_directory {
            return Err(("-t and -T cannot be given together".into(), 2));
        }
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            return Err((format!("target {}: not a directory", quoted(&dir)), 1));
        }
        return Ok(paths.iter().map(|s| (s.clone(), into(&dir, s))).collect());
    }
    if paths.len() < 2 {
        let which = paths
            .first()
            .map_or(String::new(), |p| format!(" after {}", quoted(p)));
        return Err((format!("missing destination file operand{which}"), 2));
    }
    let dest = paths.pop().expect("two or more");
    if args.no_target_directory {
        if paths.len() > 1 {
            return Err((
                format!("extra operand {} (-T takes SOURCE DEST)", quoted(&paths[1])),
                2,
            ));
        }
        return Ok(vec![(paths.remove(0), dest)]);
    }
    if dest.is_dir() {
        return Ok(paths.iter().map(|s| (s.clone(), into(&dest, s))).collect());
    }
    if paths.len() > 1 || args.parents {
        return Err((format!("target {}: not a directory", quoted(&dest)), 1));
    }
    // 'DEST/' names a directory: a new one for a directory SOURCE, never a file.
    let slash = crate::os::bytes(dest.as_os_str())
        .last()
        .is_some_and(|&b| is_sep(b));
    if slash && !paths[0].is_dir() {
        return Err((
            format!(
                "cannot create regular file {}: Not a directory",
                quoted(&dest)
            ),
            1,
        ));
    }
    Ok(vec![(paths.remove(0), dest)])
}

fn quoted(p: &Path) -> String {
    crate::term::quote(&crate::os::bytes(p.as_os_str()))
}

pub fn run(args: CpArgs) -> ExitCode {
    let _ = (args.recursive, args.no_dereference);
    if args.backup_short || args.backup.is_some() || args.suffix.is_some() {
        return usage("-b, --backup and -S are not supported: ftw cp makes no backups");
    }
    if args.interactive {
        return usage("-i is not supported: ftw cp never prompts (-n keeps existing files)");
    }
    if args.selinux || args.context.is_some() {
        return usage("-Z and --context are not supported: ftw cp sets no SELinux contexts");
    }
    let mut preserve = Preserve::default();
    if args.archive {
        preserve = Preserve::ALL;
    }
    if args.preserve_default {
        preserve.mode = true;
        preserve.ownership = true;
        preserve.timestamps = true;
    }
    if args.no_deref_links {
        preserve.links = true;
    }
    for list in &args.preserve {
        if let Err(e) = apply(&mut preserve, list, true) {
            return usage(&e);
        }
    }
    for list in &args.no_preserve {
        if let Err(e) = apply(&mut preserve, list, false) {
            return usage(&e);
        }
    }
    // An explicit --no-preserve=mode gives new entries the default modes (GNU).
    let default_modes = !preserve.mode
        && args
            .no_preserve
            .iter()
            .flat_map(|l| l.split(','))
            .any(|w| w == "mode" || w == "all");
    let dereference = if args.dereference {
        Dereference::Always
    } else if args.deref_roots {
        Dereference::Roots
    } else {
        Dereference::Never
    };
    let update = match (args.no_clobber, args.update) {
        (true, _) | (_, Some(UpdateArg::None)) => Update::None,
        (_, Some(UpdateArg::Older)) => Update::Older,
        _ => Update::All,
    };
    let pairs = match pairs(&args) {
        Ok(p) => p,
        Err((reason, code)) => {
            report(b"cp", &reason);
            return ExitCode::from(code);
        }
    };
    let out = if args.verbose {
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
        out_failed: AtomicBool::new(false),
        failed: AtomicBool::new(false),
    });
    let counts = Arc::new(ftw::copy::Progress::default());
    let opts = CopyOptions::new()
        .threads(args.threads)
        .preserve(preserve)
        .dereference(dereference)
        .update(update)
        .link_files(args.link)
        .force(args.force)
        .same_file_system(args.one_file_system)
        .parents(args.parents)
        .default_modes(default_modes)
        .attributes_only(args.attributes_only)
        .remove_destination(args.remove_destination)
        .reflink(match args.reflink {
            ReflinkArg::Auto => Reflink::Auto,
            ReflinkArg::Always => Reflink::Always,
            ReflinkArg::Never => Reflink::Never,
        })
        .sparse(match args.sparse {
            SparseArg::Auto => Sparse::Auto,
            SparseArg::Always => Sparse::Always,
            SparseArg::Never => Sparse::Never,
        })
        .report(cli.clone())
        .progress(counts.clone());
    if args.parents {
        for (_, dst) in &pairs {
            if let Some(parent) = dst.parent() {
                if let Err(e) = std::fs::create_dir_all(parent) {
                    report(
                        &crate::os::bytes(parent.as_os_str()),
                        &crate::msg::describe(&e),
                    );
                    return ExitCode::from(1);
                }
            }
        }
    }
    let printing_here = args.verbose && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let shown = counts.clone();
    let wanted = !args.quiet && !printing_here;
    // The total, for the time left: a count of the sources (their sizes, every name
    // of a file) made beside the copy on one thread, only where the line is shown.
    let total = Arc::new(OnceLock::new());
    if wanted && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let roots: Vec<PathBuf> = pairs.iter().map(|(s, _)| s.clone()).collect();
        let usage = ftw::usage::UsageOptions::new()
            .threads(1)
            .count_links(true)
            .same_file_system(args.one_file_system)
            .follow_links(dereference == Dereference::Always)
            .follow_roots(dereference == Dereference::Roots)
            .on_error(|_| {});
        let total = total.clone();
        // Detached: a copy done first does not wait for the count.
        let _ = std::thread::Builder::new()
            .name("ftw cp count".into())
            .spawn(move || {
                let u = ftw::usage::disk_usage(&roots, &usage);
                let _ = total.set((u.total.inodes, u.total.apparent));
            });
    }
    let line = Progress::start(wanted, move |elapsed| {
        progress_line(shown.copied(), shown.bytes(), total.get().copied(), elapsed)
    });
    let summary = ftw::copy::copy_trees(pairs, &opts);
    line.finish();
    if let Some((e, n)) = &summary.thread_error {
        let threads = if *n == 1 { "thread" } else { "threads" };
        warn(&format!(
            "cannot start a thread: {}: running with {n} {threads}",
            crate::msg::describe(e)
        ));
    }
    if let Some(out) = &cli.out {
        let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
        if !cli.out_failed.load(Ordering::Relaxed) {
            if let Err(c) = out.flush() {
                cli.closed(c);
            }
        }
    }
    if cli.failed.load(Ordering::Relaxed) || summary.error_count > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_says_the_time_left_once_the_total_is_known() {
        let ten = Duration::from_secs(10);
        let before = progress_line(1500, 100_000_000, None, ten);
        assert!(before.contains("1.5k copied"), "{before}");
        assert!(!before.contains("left"), "{before}");
        // A quarter of the bytes in 10 s: 30 s left.
        let line = progress_line(1500, 100_000_000, Some((6000, 400_000_000)), ten);
        assert!(line.contains("1.5k of 6.0k"), "{line}");
        assert!(line.ends_with(", 30 s left"), "{line}");
        // Empty files only: by the entries.
        let line = progress_line(100, 0, Some((400, 0)), ten);
        assert!(line.ends_with(", 30 s left"), "{line}");
        let line = progress_line(1, 1, Some((2, 10_000_000)), ten);
        assert!(line.contains("h") && line.ends_with("m left"), "{line}");
    }

    #[test]
    fn names_are_quoted_as_gnu_cp_v_quotes_them() {
        assert_eq!(shell_quote(b"a b"), "'a b'");
        assert_eq!(shell_quote(b"it's"), "\"it's\"");
        assert_eq!(shell_quote(b"it's$x"), "'it'\\''s$x'");
        assert_eq!(shell_quote(b"new\nline"), "'new'$'\\n''line'");
        assert_eq!(shell_quote(b"\nlead"), "''$'\\n''lead'");
        assert_eq!(shell_quote(b"q-\xff"), "'q-'$'\\377'");
        assert_eq!(shell_quote(b""), "''");
    }
}
