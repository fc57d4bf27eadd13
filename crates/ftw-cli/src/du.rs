//! `ftw du`: disk usage, printed as GNU du prints it (`SIZE<TAB>PATH`, line for line),
//! or on a terminal as a tree of the largest entries, or exported in ncdu's format.

use crate::msg::{report, warn};
use crate::output::{Closed, Output};
use crate::progress::{self, Progress};
use crate::size::Format;
use crate::term::{ColorArg, Names};
use clap::{ArgAction, ArgMatches, Args};
use ftw::usage::{Totals, UsageOptions, UsageProgress, disk_usage};
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub const EXAMPLES: &str = "\
Examples:
  ftw du                         on a terminal: the largest entries, as a tree
  ftw du -sh /usr /var           du's own options print what du prints
  ftw du -d 1 -B1 . | sort -n    piped: du's lines (SIZE<TAB>PATH), for scripts
  ftw du --tree -n 40 ~          the tree, piped too, 40 entries
  ftw du -x -o usage.json /      an export for 'ncdu -f usage.json' or 'gdu -f'

Sizes are the space allocated on disk, as du counts it: hard links once, across all
PATHs; symbolic links as themselves (unless -L). With --apparent-size (-A, -b), only
regular files and symbolic links add their size (coreutils 9.2 and later); directories
add none. Without du's options and with standard output on a terminal, ftw shows the
tree; with any of them, or piped, it prints what du would print, in du's order (each
directory after its contents, in the order its directory lists them), whatever the
threads; with -j 1, a file with hard links in several directories is also counted where
du counts it, not where a worker met it first. Errors are reported as
'ftw: PATH: reason' while the count goes on; the totals are then incomplete, said on
standard error, and the exit status is 1. On a terminal, names are escaped and
coloured as 'ftw find' does (the tree view escapes them always).";

/// Disk usage of each PATH: du's figures, exact, fast.
#[derive(Args, Clone)]
#[command(disable_help_flag = true, args_override_self = true)]
pub struct DuArgs {
    /// Trees to measure [default: .].
    // Read as OS strings, so that an empty one is an error for that PATH alone.
    #[arg(value_name = "PATH", value_parser = clap::value_parser!(OsString))]
    paths: Vec<OsString>,

    /// Print help (-h is --human-readable, as in du).
    #[arg(long = "help", action = ArgAction::Help)]
    help: Option<bool>,

    /// du: a total for each PATH only (as -d 0).
    #[arg(short = 's', long = "summarize")]
    summarize: bool,

    /// du: print directories (with -a, files too) at most N levels below each PATH.
    #[arg(short = 'd', long = "max-depth", value_name = "N")]
    max_depth: Option<usize>,

    /// du: apparent sizes (regular files and symbolic links only), not disk usage.
    #[arg(short = 'A', long = "apparent-size")]
    apparent: bool,

    /// du: --apparent-size --block-size=1.
    #[arg(short = 'b', long = "bytes")]
    bytes: bool,

    /// du: units of SIZE bytes: 1, K, M, G, ... (powers of 1024), KB, MB, ... (of 1000).
    #[arg(short = 'B', long = "block-size", value_name = "SIZE")]
    block_size: Option<String>,

    /// du: --block-size=1K.
    #[arg(short = 'k')]
    kilo: bool,

    /// du: --block-size=1M.
    #[arg(short = 'm')]
    mega: bool,

    /// du: sizes in powers of 1024, as 4.0K, 1.5M, 12G.
    #[arg(short = 'h', long = "human-readable")]
    human: bool,

    /// du: sizes in powers of 1000, as 4.1k, 1.6M.
    #[arg(long = "si")]
    si: bool,

    /// du: print files too, not only directories.
    #[arg(short = 'a', long = "all")]
    all: bool,

    /// du: a grand total at the end.
    #[arg(short = 'c', long = "total")]
    total: bool,

    /// du: a directory's size without its subdirectories'.
    #[arg(short = 'S', long = "separate-dirs")]
    separate_dirs: bool,

    /// du: count every hard link of a file, not the first met alone.
    #[arg(short = 'l', long = "count-links")]
    count_links: bool,

    /// du: skip what is on other file systems than each PATH's.
    #[arg(short = 'x', long = "one-file-system")]
    one_file_system: bool,

    /// du: follow symbolic links (count what they lead to, once).
    #[arg(short = 'L', long = "dereference")]
    dereference: bool,

    /// du: do not follow symbolic links (the default).
    #[arg(short = 'P', long = "no-dereference")]
    no_dereference: bool,

    /// du: skip entries whose path, or its tail after a '/', matches the shell glob
    /// PATTERN (may be given several times).
    #[arg(long = "exclude", value_name = "PATTERN")]
    exclude: Vec<String>,

    /// Leave out entries matching the glob, and everything below a directory that does
    /// (ftw find's -E: a glob without '/' matches names, one with '/' the end of the
    /// path; the directory is not opened).
    #[arg(short = 'E', value_name = "GLOB")]
    exclude_glob: Vec<String>,

    /// Leave out what ignore files ignore, with git's rules (as 'ftw find --ignore'):
    /// by default du counts everything.
    #[arg(long = "ignore")]
    ignore: bool,

    /// Leave out names that start with a dot.
    #[arg(long = "no-hidden")]
    no_hidden: bool,

    /// du: count entries (inodes) instead of bytes.
    #[arg(long = "inodes")]
    inodes: bool,

    /// du: end each line with NUL, not newline.
    #[arg(short = '0', long = "null")]
    null: bool,

    /// The tree view, even when piped or with du's options.
    #[arg(long = "tree")]
    tree: bool,

    /// The tree view: show N entries [default: what fits the terminal's height].
    #[arg(short = 'n', long = "number", value_name = "N")]
    number: Option<usize>,

    /// The tree view: at most N levels below each PATH [default: all].
    #[arg(long = "depth", value_name = "N")]
    depth: Option<usize>,

    #[command(flatten)]
    color: ColorArg,

    /// Write the tree in ncdu's JSON export format to FILE ('-': standard output),
    /// down to -d or --depth if given, for 'ncdu -f FILE' or 'gdu -f FILE'; nothing
    /// else is printed.
    #[arg(short = 'o', long = "export", value_name = "FILE")]
    export: Option<PathBuf>,

    /// Worker threads; 0 (default): one per core, more while waiting on the disk.
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    threads: usize,
}

impl DuArgs {
    /// Whether one of du's own options was given: then ftw prints as du does.
    fn du_options(&self) -> bool {
        self.summarize
            || self.max_depth.is_some()
            || self.apparent
            || self.bytes
            || self.block_size.is_some()
            || self.kilo
            || self.mega
            || self.human
            || self.si
            || self.all
            || self.total
            || self.separate_dirs
            || self.count_links
            || self.one_file_system
            || self.dereference
            || !self.exclude.is_empty()
            || self.inodes
            || self.null
    }
}

/// Which figure is shown.
#[derive(Clone, Copy)]
enum Measure {
    Bytes,
    Apparent,
    Inodes,
}

impl Measure {
    fn of(self, t: &Totals) -> u64 {
        match self {
            Measure::Bytes => t.bytes,
            Measure::Apparent => t.apparent,
            Measure::Inodes => t.inodes,
        }
    }
}

/// The size format du would use: the environment's, then the last of -b, -B, -k, -m,
/// -h, --si on the command line.
fn size_format(args: &DuArgs, m: &ArgMatches) -> Result<Format, String> {
    let mut fmt = Format::from_env(|v| std::env::var(v).ok());
    let mut last: Vec<(usize, &str)> = ["bytes", "block_size", "kilo", "mega", "human", "si"]
        .iter()
        .filter_map(|id| last_index(m, id).map(|index| (index, *id)))
        .collect();
    last.sort();
    for (_, id) in last {
        fmt = match id {
            "bytes" => Format::blocks(1),
            "block_size" => {
                let spec = args.block_size.as_deref().unwrap_or_default();
                Format::parse(spec).map_err(|_| format!("invalid -B argument '{spec}'"))?
            }
            "kilo" => Format::blocks(1024),
            "mega" => Format::blocks(1 << 20),
            "human" => Format::HUMAN,
            _ => Format::SI,
        };
    }
    Ok(fmt)
}

/// Where an option was last given on the command line (`None` if it was not).
fn last_index(m: &ArgMatches, id: &str) -> Option<usize> {
    if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
        return None;
    }
    m.indices_of(id).and_then(|i| i.max())
}

/// A -E test on a path: its name, or (for globs with a '/') its end.
fn glob_excluded(globs: &ftw::filter::Excludes, path: &[u8]) -> bool {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    globs.is_match_name(name) || globs.is_match_path(path)
}

/// An --exclude test: a glob matched against the whole path and each tail of it after a
/// '/' (du's `excluded_file_name` with `EXCLUDE_WILDCARDS`).
fn exclude_test(patterns: &[String]) -> Result<Option<globset::GlobSet>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = globset::GlobSetBuilder::new();
    for p in patterns {
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid --exclude pattern '{p}': {e}"))?;
        set.add(glob);
    }
    set.build().map(Some).map_err(|e| e.to_string())
}

fn excluded(set: &globset::GlobSet, path: &[u8]) -> bool {
    let matches = |p: &[u8]| set.is_match(std::path::Path::new(&crate::os::os(p)));
    if matches(path) {
        return true;
    }
    path.iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'/' && i + 1 < path.len())
        .any(|(i, _)| matches(&path[i + 1..]))
}

fn usage_error(message: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "ftw du: {message}\nTry 'ftw du --help' for more information."
    );
    ExitCode::from(2)
}

pub fn run(args: DuArgs, matches: &ArgMatches) -> ExitCode {
    let mut fmt = match size_format(&args, matches) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    if args.summarize && args.max_depth.is_some_and(|d| d > 0) {
        return usage_error(&format!(
            "summarizing conflicts with --max-depth={}",
            args.max_depth.unwrap_or(0)
        ));
    }
    let exclude = match exclude_test(&args.exclude) {
        Ok(e) => e,
        Err(e) => return usage_error(&e),
    };
    let mut measure = if args.apparent || args.bytes {
        Measure::Apparent
    } else {
        Measure::Bytes
    };
    if args.inodes {
        if args.apparent || args.bytes {
            warn("options --apparent-size and -b are ineffective with --inodes");
        }
        measure = Measure::Inodes;
        fmt.block = 1;
    }
    let stdout_terminal = std::io::stdout().is_terminal();
    let tree = args.tree || (!args.du_options() && stdout_terminal);
    let roots: Vec<PathBuf> = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.iter().map(PathBuf::from).collect()
    };

    // What is kept (or, for du's lines, told as it is complete): du's depth (or --depth
    // for the tree); files for -a, the tree view (the largest only) and the export.
    let du_depth = if args.summarize {
        Some(0)
    } else {
        args.max_depth
    };
    let keep_depth = if tree {
        args.depth.or(du_depth)
    } else {
        du_depth.or(args.depth.filter(|_| args.export.is_some()))
    };
    let (columns, rows) = terminal_size();
    let lines = args
        .number
        .unwrap_or_else(|| usize::from(rows).saturating_sub(3).max(5));
    let mut opts = UsageOptions::new()
        .max_depth(keep_depth.unwrap_or(usize::MAX))
        .count_links(args.count_links)
        .same_file_system(args.one_file_system)
        .follow_links(args.dereference && !args.no_dereference_last(matches))
        .keep_files(args.all || tree || args.export.is_some())
        .threads(args.threads);
    if tree && args.export.is_none() {
        opts = opts.keep_largest(lines);
    }
    let globs = match ftw::filter::Excludes::new(&args.exclude_glob) {
        Ok(g) => g,
        Err(e) => return usage_error(&e.to_string()),
    };
    match (exclude, args.exclude_glob.is_empty()) {
        (Some(set), true) => opts = opts.exclude(move |p: &[u8]| excluded(&set, p)),
        (Some(set), false) => {
            opts = opts.exclude(move |p: &[u8]| excluded(&set, p) || glob_excluded(&globs, p))
        }
        (None, false) => opts = opts.exclude(move |p: &[u8]| glob_excluded(&globs, p)),
        (None, true) => {}
    }
    if args.ignore || args.no_hidden {
        let rules = ftw::filter::IgnoreOptions::default()
            .ignore_files(args.ignore)
            .hidden(!args.no_hidden);
        opts = opts.ignore(ftw::filter::Ignore::new(rules));
    }
    let failed = Arc::new(AtomicBool::new(false));
    let seen = failed.clone();
    opts = opts.on_error(move |e| {
        seen.store(true, Ordering::Relaxed);
        crate::msg::error(e);
    });
    // du's lines are written as each entry is complete (a directory after its
    // contents), from the workers, through one lock: nothing is kept.
    let du_lines = !tree && args.export.is_none();
    let color = args.color.color.colors(stdout_terminal);
    // du's lines: escaped on a terminal, coloured as asked; the tree is always escaped.
    let names = Arc::new(Names::new(stdout_terminal, color));
    let out = match Output::stdout() {
        Ok(o) => Arc::new(Mutex::new(o)),
        Err(e) => {
            report(b"standard output", &crate::msg::describe(&e));
            return ExitCode::from(1);
        }
    };
    let closed: Arc<Mutex<Option<Closed>>> = Arc::default();
    if du_lines {
        let out = out.clone();
        let closed = closed.clone();
        let separate = args.separate_dirs;
        let end = if args.null { 0u8 } else { b'\n' };
        let names = names.clone();
        opts = opts.stream(move |l| {
            let value = if separate && l.file_type.is_dir() {
                measure.of(&l.own)
            } else {
                measure.of(&l.total)
            };
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            let buf = out.buf();
            buf.extend_from_slice(fmt.show(value).as_bytes());
            buf.push(b'\t');
            names.path(l.path, l.file_type, buf);
            buf.push(end);
            match out.end_record() {
                Ok(()) => true,
                Err(c) => {
                    *closed.lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
                    false
                }
            }
        });
    }
    let counters = Arc::new(UsageProgress::new());
    opts = opts.progress(counters.clone());
    let shown = counters.clone();
    let line = Progress::start(true, move |elapsed| {
        format!(
            "ftw du: {} entries, {} so far, {} entries/s",
            progress::count(shown.entries()),
            Format::HUMAN.show(shown.bytes()),
            progress::rate(shown.entries(), elapsed)
        )
    });
    let usage = disk_usage(&roots, &opts);
    line.finish();

    let mut status = if failed.load(Ordering::Relaxed) || usage.errors > 0 {
        1
    } else {
        0
    };
    if let Some(file) = &args.export {
        match crate::export::write(file, &usage) {
            Ok(()) => {}
            // Standard output's reader went away (`-o - | head`): quiet, as du's lines.
            Err(e) if file.as_os_str() == "-" && e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => {
                let what = if file.as_os_str() == "-" {
                    std::borrow::Cow::Borrowed(&b"standard output"[..])
                } else {
                    crate::os::bytes(file.as_os_str())
                };
                report(&what, &crate::msg::describe(&e));
                status = 1;
            }
        }
        // The export is the output.
        return finish(status, usage.errors);
    }
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    let out = &mut *out;
    let written = if let Some(c) = closed.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Err(c)
    } else if tree {
        let show = if matches!(measure, Measure::Inodes) || args.du_options() {
            fmt
        } else {
            Format::HUMAN
        };
        crate::tree::print(
            out,
            &usage,
            &crate::tree::View {
                lines,
                columns: usize::from(columns),
                color,
                names: &Names::new(true, color),
                measure: |t: &Totals| measure.of(t),
                format: show,
            },
        )
    } else if args.total {
        let end = if args.null { 0u8 } else { b'\n' };
        let buf = out.buf();
        buf.extend_from_slice(fmt.show(measure.of(&usage.total)).as_bytes());
        buf.extend_from_slice(b"\ttotal");
        buf.push(end);
        out.end_record()
    } else {
        Ok(())
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(Closed::Pipe) => return finish(status, usage.errors),
        Err(Closed::Failed(e)) => {
            report(b"standard output", &crate::msg::describe(&e));
            status = 1;
        }
    }
    finish(status, usage.errors)
}

impl DuArgs {
    /// Whether -P came after the last -L (du: the last of them wins).
    fn no_dereference_last(&self, m: &ArgMatches) -> bool {
        self.no_dereference && last_index(m, "no_dereference") > last_index(m, "dereference")
    }
}

fn finish(status: u8, errors: u64) -> ExitCode {
    if errors > 0 {
        progress::write_message(
            format!(
                "ftw: totals are incomplete: {errors} error{}\n",
                if errors == 1 { "" } else { "s" }
            )
            .as_bytes(),
        );
    }
    ExitCode::from(status)
}

/// The terminal's columns and rows: asked of standard output, else `COLUMNS` and
/// `LINES`, else 80 by 24.
fn terminal_size() -> (u16, u16) {
    if let Some(size) = crate::process::terminal_size() {
        return size;
    }
    let var = |name: &str, default: u16| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n: &u16| n > 0)
            .unwrap_or(default)
    };
    (var("COLUMNS", 80), var("LINES", 24))
}
