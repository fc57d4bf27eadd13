//! `ftw du`: disk usage, printed as GNU du prints it (`SIZE<TAB>PATH`, line for line),
//! or on a terminal as a tree of the largest entries, or exported in ncdu's format.

use crate::msg::{report, warn};
use crate::output::{Closed, Output};
use crate::progress::{self, Progress};
use crate::size::Format;
use crate::size::{argmatch, xstrtol};
use crate::term::{ColorArg, Names};
use clap::{ArgAction, ArgMatches, Args};
use ftw::usage::{Listed, Stamp, TimeOf, Totals, UsageOptions, UsageProgress, disk_usage};
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
threads, a file with hard links in several directories counted where du counts it.
Errors are reported as
'ftw: PATH: reason' while the count goes on; the totals are then incomplete, said on
standard error, and the exit status is 1. On a terminal, names are escaped and
coloured as 'ftw find' does (the tree view escapes them always).";

/// Disk usage of each PATH: du's figures, exact, fast.
#[derive(Args, Clone)]
#[command(
    disable_help_flag = true,
    args_override_self = true,
    infer_long_args = true
)]
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

    /// du: units of SIZE bytes: 1, K, M, G, ... (powers of 1024), KB, MB, ... (of 1000),
    /// KiB, MiB, ...; a unit alone is also written after each size; human-readable, si.
    #[arg(
        short = 'B',
        long = "block-size",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
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

    /// du: follow only the PATHs that are symbolic links (-H is the same).
    #[arg(short = 'D', long = "dereference-args", visible_short_alias = 'H')]
    dereference_args: bool,

    /// du: leave out entries smaller than SIZE if positive, larger than -SIZE if
    /// negative (bytes, or entries with --inodes; K, M, KB, ... as -B).
    #[arg(
        short = 't',
        long = "threshold",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    threshold: Option<String>,

    /// du: show the latest modification time of everything at and below each entry; WORD:
    /// atime, access, use (last access), ctime, status (last change of status).
    #[arg(long = "time", value_name = "WORD", num_args = 0..=1, require_equals = true,
          default_missing_value = MTIME, hide_default_value = true)]
    time: Option<String>,

    /// du: how --time writes times: full-iso, long-iso (the default), iso, or +FORMAT
    /// (as date's); else TIME_STYLE.
    #[arg(long = "time-style", value_name = "STYLE")]
    time_style: Option<String>,

    /// du: the PATHs, NUL-ended, read from file F ('-': standard input), not the
    /// command line.
    #[arg(long = "files0-from", value_name = "F")]
    files0_from: Option<PathBuf>,

    /// du: skip entries whose path, or its tail after a '/', matches the shell glob
    /// PATTERN (may be given several times).
    #[arg(long = "exclude", value_name = "PATTERN")]
    exclude: Vec<String>,

    /// du: --exclude each pattern of FILE (one a line).
    #[arg(short = 'X', long = "exclude-from", value_name = "FILE")]
    exclude_from: Vec<PathBuf>,

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

    /// Share the count across the ranks of an MPI job: 'mpirun -n 4 ftw du --mpi -s
    /// PATH'. Rank 0 prints du's lines, those the single process prints, in its order,
    /// byte for byte (a hard-linked file counted once across the ranks); the exit
    /// status is the highest of all ranks'. Needs an ftw built with the feature 'mpi'
    /// (cargo install --features mpi). Not with -L, --files0-from, --ignore,
    /// --no-hidden, the tree view or -o; PATHs must not hold one another.
    #[arg(long = "mpi")]
    mpi: bool,
}

#[cfg(feature = "mpi")]
#[path = "du_mpi.rs"]
mod mpi;

/// The option that `--mpi` does not take, if one is given.
fn mpi_refused(args: &DuArgs, m: &ArgMatches) -> Option<&'static str> {
    if args.last_link_option(m) == "dereference" {
        Some("-L (--dereference)")
    } else if args.files0_from.is_some() {
        Some("--files0-from")
    } else if args.ignore {
        Some("--ignore")
    } else if args.no_hidden {
        Some("--no-hidden")
    } else if args.tree || args.number.is_some() || args.depth.is_some() {
        Some("the tree view (--tree, -n, --depth)")
    } else if args.export.is_some() {
        Some("-o (--export)")
    } else {
        None
    }
}

/// How du's lines are written: the figure, the time, the path, the end.
struct Lines {
    fmt: Format,
    measure: Measure,
    threshold: Option<i128>,
    time_format: Option<String>,
    /// -S: a directory's own figure, without its subdirectories'.
    separate: bool,
    end: u8,
    names: Arc<Names>,
}

impl Lines {
    /// Appends `l`'s line to `buf`; false, with nothing appended, when the threshold
    /// leaves it out.
    fn write(&self, l: &Listed<'_>, buf: &mut Vec<u8>) -> bool {
        let own = self.separate && l.file_type.is_dir();
        let value = self.measure.of(if own { &l.own } else { &l.total });
        // -t: at least the threshold, or at most its opposite (du's test).
        let shown = match self.threshold {
            Some(t) if t < 0 => i128::from(value) <= -t,
            Some(t) => i128::from(value) >= t,
            None => true,
        };
        if !shown {
            return false;
        }
        buf.extend_from_slice(self.fmt.show(value).as_bytes());
        buf.push(b'\t');
        let latest = if own { l.own_latest } else { l.latest };
        if let (Some(format), Some(t)) = (&self.time_format, latest) {
            buf.extend_from_slice(show_time(t, format).as_bytes());
            buf.push(b'\t');
        }
        self.names.path(l.path, l.file_type, buf);
        buf.push(self.end);
        true
    }

    /// Appends -c's line: the grand total, and with --time the latest of the PATHs'.
    fn total(&self, total: &Totals, latest: Option<Stamp>, buf: &mut Vec<u8>) {
        buf.extend_from_slice(self.fmt.show(self.measure.of(total)).as_bytes());
        buf.push(b'\t');
        if let (Some(format), Some(t)) = (&self.time_format, latest) {
            buf.extend_from_slice(show_time(t, format).as_bytes());
            buf.push(b'\t');
        }
        buf.extend_from_slice(b"total");
        buf.push(self.end);
    }
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
            || !self.exclude_from.is_empty()
            || self.dereference_args
            || self.threshold.is_some()
            || self.time.is_some()
            || self.files0_from.is_some()
            || self.inodes
            || self.null
    }
}

/// A test on a path: true to leave it out (--exclude, -X, -E).
type PathTest = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

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
                Format::parse(spec).map_err(|e| e.message(&spelled("block-size", 'B'), spec))?
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

/// A refusal of du's: `ftw du: MESSAGE`, with du's pointer to --help where du gives
/// it, and du's status, 1.
fn refuse(message: &str, try_help: bool) -> ExitCode {
    let hint = if try_help {
        "\nTry 'ftw du --help' for more information."
    } else {
        ""
    };
    let _ = writeln!(std::io::stderr(), "ftw du: {message}{hint}");
    ExitCode::from(1)
}

/// A long option abbreviated so that several begin with it, refused as du refuses it
/// (clap says only that it is unknown): `None` if there is none among `words`.
pub fn ambiguous(du: &clap::Command, words: &[&str]) -> Option<ExitCode> {
    let longs: Vec<&str> = du.get_arguments().filter_map(|a| a.get_long()).collect();
    for word in words {
        let Some(name) = word.strip_prefix("--").filter(|n| !n.is_empty()) else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if longs.contains(&name) {
            continue;
        }
        let found: Vec<String> = longs
            .iter()
            .filter(|l| l.starts_with(name))
            .map(|l| format!("'--{l}'"))
            .collect();
        if found.len() > 1 {
            return Some(refuse(
                &format!(
                    "option '--{name}' is ambiguous; possibilities: {}",
                    found.join(" ")
                ),
                true,
            ));
        }
    }
    None
}

/// How the option of long name `long` and short `short` was last written on the
/// command line (`--block-size`, however abbreviated, or `-B`), as du names it in its
/// messages.
fn spelled(long: &str, short: char) -> String {
    let mut last = format!("-{short}");
    for word in std::env::args().skip(1).take_while(|w| w != "--") {
        if let Some(name) = word.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if !name.is_empty() && long.starts_with(name) {
                last = format!("--{long}");
            }
        } else if word.starts_with('-') && word.contains(short) {
            last = format!("-{short}");
        }
    }
    last
}

/// `--time=WORD`: the time shown (`None`: the word was refused, and said so).
fn time_of(word: &str) -> Result<TimeOf, String> {
    if word == MTIME {
        return Ok(TimeOf::Modified);
    }
    let words = [
        ("atime", TimeOf::Accessed),
        ("access", TimeOf::Accessed),
        ("use", TimeOf::Accessed),
        ("ctime", TimeOf::Changed),
        ("status", TimeOf::Changed),
    ];
    argmatch(word, &words).map_err(|ambiguous| {
        format!(
            "{} argument '{word}' for '--time'\nValid arguments are:\n  - 'atime', 'access', \
             'use'\n  - 'ctime', 'status'",
            if ambiguous { "ambiguous" } else { "invalid" }
        )
    })
}

/// The strftime format of `--time-style` (else `TIME_STYLE`, as du reads it).
fn time_format(style: Option<&str>) -> Result<String, String> {
    let env = std::env::var("TIME_STYLE").ok();
    let style = match (style, env.as_deref()) {
        (Some(s), _) => s.to_string(),
        (None, None | Some("locale")) => "long-iso".to_string(),
        // Anything after a newline is ignored, as ls does.
        (None, Some(s)) if s.starts_with('+') => s.split('\n').next().unwrap_or(s).to_string(),
        (None, Some(mut s)) => {
            while let Some(rest) = s.strip_prefix("posix-") {
                s = rest;
            }
            s.to_string()
        }
    };
    if let Some(format) = style.strip_prefix('+') {
        return Ok(plain_conversions(format));
    }
    let styles = [
        ("full-iso", "%Y-%m-%d %H:%M:%S.%N %z"),
        ("long-iso", "%Y-%m-%d %H:%M"),
        ("iso", "%Y-%m-%d"),
    ];
    argmatch(&style, &styles)
        .map(str::to_string)
        .map_err(|ambiguous| {
            format!(
                "{} argument '{style}' for 'time style'\nValid arguments are:\n  - 'full-iso'\n  - \
             'long-iso'\n  - 'iso'",
                if ambiguous { "ambiguous" } else { "invalid" }
            )
        })
}

/// `format` without strftime's E and O modifiers (`%Ey`, `%Od`), which the C locale
/// ignores and jiff does not know.
fn plain_conversions(format: &str) -> String {
    let mut out = String::with_capacity(format.len());
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '%' {
            continue;
        }
        // Flags and width, kept.
        while let Some(&f) = chars
            .peek()
            .filter(|f| "_-0^#".contains(**f) || f.is_ascii_digit())
        {
            out.push(f);
            chars.next();
        }
        if matches!(chars.peek(), Some('E' | 'O')) {
            chars.next();
        }
        out.extend(chars.next());
    }
    out
}

/// A time as --time writes it: in the local time zone, in `format`; its seconds where
/// it cannot be written as a date.
fn show_time(t: Stamp, format: &str) -> String {
    match jiff::Timestamp::new(t.secs, t.nsec as i32) {
        Ok(ts) => ts
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime(format)
            .to_string(),
        Err(_) => t.secs.to_string(),
    }
}

/// `--threshold=SIZE`: at least SIZE, or (negative) at most -SIZE.
fn threshold(spec: &str) -> Result<i128, String> {
    let t = xstrtol(spec, "kKmMGTPEZY0", true)
        .map_err(|e| e.message(&spelled("threshold", 't'), spec))?;
    if t == 0 && spec.starts_with('-') {
        return Err("invalid --threshold argument '-0'".to_string());
    }
    Ok(t)
}

/// Reads a file named on the command line, `-` being standard input.
fn read_arg_file(file: &std::path::Path) -> std::io::Result<Vec<u8>> {
    if file.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut v)?;
        Ok(v)
    } else {
        std::fs::read(file)
    }
}

/// `-X FILE`: its patterns, one a line, trailing blanks cut, blank lines skipped (as
/// gnulib's `add_exclude_file`).
fn exclude_from(file: &std::path::Path) -> Result<Vec<String>, String> {
    let text = read_arg_file(file).map_err(|e| {
        format!(
            "{}: {}",
            String::from_utf8_lossy(&crate::os::bytes(file.as_os_str())),
            crate::msg::describe(&e)
        )
    })?;
    Ok(text
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii_end())
        .filter(|l| !l.is_empty())
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect())
}

/// `--files0-from=F`: the PATHs it holds, NUL-ended; an empty one (or `-` read from
/// standard input) is an error told here, and the others are counted.
fn files0(file: &std::path::Path, failed: &mut bool) -> Result<Vec<PathBuf>, String> {
    let shown = String::from_utf8_lossy(&crate::os::bytes(file.as_os_str())).into_owned();
    let data = read_arg_file(file).map_err(|e| {
        format!(
            "cannot open '{shown}' for reading: {}",
            crate::msg::describe(&e)
        )
    })?;
    let mut names: Vec<&[u8]> = data.split(|&b| b == 0).collect();
    if names.last().is_some_and(|n| n.is_empty()) {
        names.pop();
    }
    let mut roots = Vec::new();
    for (i, name) in names.into_iter().enumerate() {
        if name.is_empty() {
            report(
                format!("{shown}:{}", i + 1).as_bytes(),
                "invalid zero-length file name",
            );
            *failed = true;
        } else if name == b"-" && file.as_os_str() == "-" {
            warn_error("when reading file names from stdin, no file name of '-' allowed");
            *failed = true;
        } else {
            roots.push(PathBuf::from(crate::os::os(name).into_owned()));
        }
    }
    Ok(roots)
}

/// An error of du's own (not about a PATH), on standard error.
fn warn_error(message: &str) {
    let _ = writeln!(std::io::stderr(), "ftw du: {message}");
}

/// What `--time` given alone stands for (no word typed can be it: a command line holds
/// no NUL).
const MTIME: &str = "\0";

fn usage_error(message: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "ftw du: {message}\nTry 'ftw du --help' for more information."
    );
    ExitCode::from(2)
}

pub fn run(args: DuArgs, matches: &ArgMatches) -> ExitCode {
    if args.mpi {
        if let Some(what) = mpi_refused(&args, matches) {
            return crate::msg::refuse_mpi(b"du", what);
        }
        #[cfg(not(feature = "mpi"))]
        {
            report(b"--mpi", crate::msg::NO_MPI);
            return ExitCode::from(2);
        }
    }
    let mut fmt = match size_format(&args, matches) {
        Ok(f) => f,
        Err(e) => return refuse(&e, false),
    };
    let threshold = match args.threshold.as_deref().map(threshold).transpose() {
        Ok(t) => t,
        Err(e) => return refuse(&e, false),
    };
    let time = match args.time.as_deref().map(time_of).transpose() {
        Ok(t) => t,
        Err(e) => return refuse(&e, true),
    };
    // The style is read (and may be refused) only when times are shown, as du does.
    let time_format = match time.map(|_| time_format(args.time_style.as_deref())) {
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => return refuse(&e, true),
        None => None,
    };
    if args.summarize && args.all {
        return refuse("cannot both summarize and show all entries", true);
    }
    if args.summarize && args.max_depth.is_some_and(|d| d > 0) {
        return refuse(
            &format!(
                "warning: summarizing conflicts with --max-depth={}",
                args.max_depth.unwrap_or(0)
            ),
            true,
        );
    }
    if args.summarize && args.max_depth == Some(0) {
        warn_error("warning: summarizing is the same as using --max-depth=0");
    }
    let mut patterns = args.exclude.clone();
    for file in &args.exclude_from {
        match exclude_from(file) {
            Ok(p) => patterns.extend(p),
            Err(e) => return refuse(&e, true),
        }
    }
    let exclude = match exclude_test(&patterns) {
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
    let mut bad_names = false;
    let roots: Vec<PathBuf> = if let Some(file) = &args.files0_from {
        if let Some(extra) = args.paths.first() {
            return refuse(
                &format!(
                    "extra operand '{}'\nfile operands cannot be combined with --files0-from",
                    extra.to_string_lossy()
                ),
                true,
            );
        }
        match files0(file, &mut bad_names) {
            Ok(r) => r,
            Err(e) => return refuse(&e, false),
        }
    } else if args.paths.is_empty() {
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
        .follow_links(args.last_link_option(matches) == "dereference")
        .follow_roots(args.last_link_option(matches) == "dereference_args")
        .latest(time)
        .keep_files(args.all || tree || args.export.is_some())
        // ncdu's export lists every name of a file, for ncdu to count it once.
        .keep_every_name(args.export.is_some())
        .threads(args.threads);
    if tree && args.export.is_none() {
        opts = opts.keep_largest(lines);
    }
    let globs = match ftw::filter::Excludes::new(&args.exclude_glob) {
        Ok(g) => g,
        Err(e) => return usage_error(&e.to_string()),
    };
    let exclude: Option<PathTest> = match (exclude, args.exclude_glob.is_empty()) {
        (Some(set), true) => Some(Arc::new(move |p: &[u8]| excluded(&set, p))),
        (Some(set), false) => Some(Arc::new(move |p: &[u8]| {
            excluded(&set, p) || glob_excluded(&globs, p)
        })),
        (None, false) => Some(Arc::new(move |p: &[u8]| glob_excluded(&globs, p))),
        (None, true) => None,
    };
    #[cfg(feature = "mpi")]
    if args.mpi {
        let lines = Lines {
            fmt,
            measure,
            threshold,
            time_format,
            separate: args.separate_dirs,
            end: if args.null { 0u8 } else { b'\n' },
            // mpirun hands the ranks a terminal of its own, which says nothing of where
            // the output goes: written as piped (the bytes, colours only if asked for).
            names: Arc::new(Names::new(false, args.color.color.colors(false))),
        };
        let how = mpi::How {
            max_depth: du_depth.unwrap_or(usize::MAX),
            all: args.all,
            total: args.total,
            count_links: args.count_links,
            one_file_system: args.one_file_system,
            follow_roots: args.last_link_option(matches) == "dereference_args",
            latest: time,
            threads: args.threads,
            exclude,
        };
        return mpi::run(&how, &roots, &lines, bad_names);
    }
    if let Some(test) = exclude {
        opts = opts.exclude(move |p: &[u8]| test(p));
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
    let latest_of_all: Arc<Mutex<Option<Stamp>>> = Arc::default();
    let du_format = Arc::new(Lines {
        fmt,
        measure,
        threshold,
        time_format,
        separate: args.separate_dirs,
        end: if args.null { 0u8 } else { b'\n' },
        names: names.clone(),
    });
    if du_lines {
        let out = out.clone();
        let closed = closed.clone();
        let latest_of_all = latest_of_all.clone();
        let lines = du_format.clone();
        opts = opts.stream(move |l| {
            if l.depth == 0 {
                let mut all = latest_of_all.lock().unwrap_or_else(|e| e.into_inner());
                *all = (*all).max(l.latest);
            }
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            if !lines.write(l, out.buf()) {
                return true;
            }
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

    let mut status = if bad_names || failed.load(Ordering::Relaxed) || usage.errors > 0 {
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
        // --time: the latest of the PATHs'.
        let latest = *latest_of_all.lock().unwrap_or_else(|e| e.into_inner());
        du_format.total(&usage.total, latest, out.buf());
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
    /// The last of -L, -P and -H (-D) given (du: the last of them wins).
    fn last_link_option(&self, m: &ArgMatches) -> &'static str {
        ["dereference", "no_dereference", "dereference_args"]
            .into_iter()
            .filter_map(|id| last_index(m, id).map(|i| (i, id)))
            .max()
            .map_or("no_dereference", |(_, id)| id)
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
