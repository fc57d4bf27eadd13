//! `ftw find`'s filters: the options that choose what is printed (patterns, types,
//! extensions, sizes, times) and where the walk goes (exclusions, --prune), turned into
//! the library's [`Filter`] and [`Excludes`].

use clap::Args;
use ftw::filter::{
    Case, Excludes, Filter, Ignore, IgnoreOptions, PatternKind, Patterns, SizeLimit, Time, Types,
};
use ftw::sys::StatMask;
use ftw::walk::{Control, Entry, ParallelVisitor, WalkBuilder, WalkStats};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// The filter options, shared by the commands that list.
#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Print entries whose name matches the regular expression (found anywhere in the
    /// name; '^' and '$' anchor it). Several -n, -g and -F: any of them.
    #[arg(
        short = 'n',
        long = "name",
        value_name = "REGEX",
        allow_hyphen_values = true
    )]
    names: Vec<String>,

    /// Print entries whose name matches the glob ('*.rs', 'Makefile*', '[ab]?.c').
    #[arg(
        short = 'g',
        long = "glob",
        value_name = "GLOB",
        allow_hyphen_values = true
    )]
    globs: Vec<String>,

    /// Print entries whose name contains STRING.
    #[arg(
        short = 'F',
        long = "fixed",
        value_name = "STRING",
        allow_hyphen_values = true
    )]
    fixed: Vec<String>,

    /// Match -n, -g and -F against the whole path, not the name.
    #[arg(short = 'p', long = "full-path")]
    full_path: bool,

    /// Case never matters in -n, -g and -F (by default it matters only in a pattern with
    /// an upper-case letter).
    #[arg(short = 'i', long = "ignore-case", overrides_with = "case_sensitive")]
    ignore_case: bool,

    /// Case always matters in -n, -g and -F.
    #[arg(short = 's', long = "case-sensitive", overrides_with = "ignore_case")]
    case_sensitive: bool,

    /// Print files with this extension ('rs', 'tar.gz'; case does not matter). Several:
    /// any of them.
    #[arg(short = 'e', long = "extension", value_name = "EXT")]
    extensions: Vec<String>,

    /// Print entries of this type: f (file), d (directory), l (symbolic link), s
    /// (socket), p (pipe), b, c (devices); x (executable file) and e (empty file or
    /// directory) narrow the others. Several: any of them.
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = TypeParser,
          hide_possible_values = true)]
    types: Vec<String>,

    /// Print regular files of this size: +N at least, -N at most, N exactly; units b, k,
    /// m, g, t (powers of 1000) and ki, mi, gi, ti (powers of 1024). Several: all.
    #[arg(
        short = 'S',
        long = "size",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    sizes: Vec<SizeLimit>,

    /// Print entries modified within this time: a duration (10min, 2h, 3d, 1h30m) or
    /// since a date (2024-05-01, '2024-05-01 13:45', in the local time zone).
    #[arg(long = "changed-within", value_name = "WHEN", value_parser = time)]
    changed_within: Option<Time>,

    /// Print entries modified before this time: a duration ago, or a date.
    #[arg(long = "changed-before", value_name = "WHEN", value_parser = time)]
    changed_before: Option<Time>,

    /// Do not descend into the directories printed (those that match the filters).
    #[arg(long = "prune")]
    prune: bool,

    /// Leave out entries matching the glob, and everything below a directory that does
    /// (it is not even opened). A glob without '/' matches names ('.git', '*.o'); one
    /// with '/' the end of the path ('src/gen'); one starting with '/' the path below
    /// each PATH ('/src': ./src, not ./a/src) or, below an absolute PATH, a whole
    /// absolute path. Several: any.
    #[arg(
        short = 'E',
        long = "exclude",
        value_name = "GLOB",
        allow_hyphen_values = true
    )]
    excludes: Vec<String>,

    /// Honour ignore files with git's rules: .gitignore (inside a git work tree), the
    /// work tree's .git/info/exclude, git's excludes file (core.excludesFile), .ignore
    /// and .ftwignore; '.git' itself is left out. Ignored directories are not opened.
    /// As 'git ls-files --cached --others --exclude-standard': files git tracks are
    /// listed even where a rule ignores them, and a repository nested in the work tree
    /// is listed but not entered.
    #[arg(long = "ignore")]
    ignore: bool,

    /// With --ignore, honour .gitignore files outside git work trees too.
    #[arg(long = "no-require-git")]
    no_require_git: bool,

    /// Leave out names that start with a dot (and all below such directories).
    #[arg(long = "no-hidden")]
    no_hidden: bool,

    /// Also honour FILE, in gitignore syntax, relative to each PATH (with or without
    /// --ignore).
    #[arg(long = "ignore-file", value_name = "FILE")]
    ignore_files: Vec<PathBuf>,
}

fn check_type(s: &str) -> Result<String, String> {
    Types::default().add(s).map(|_| s.to_string())
}

/// `-t`'s values: checked by the library's [`Types`], and offered to the shell
/// completions (the help lists them in words).
#[derive(Clone)]
struct TypeParser;

/// The letters `-t` takes, with what each means (for the completions).
const TYPES: &[(&str, &str)] = &[
    ("f", "file"),
    ("d", "directory"),
    ("l", "symbolic link"),
    ("x", "executable file"),
    ("e", "empty file or directory"),
    ("s", "socket"),
    ("p", "pipe"),
    ("b", "block device"),
    ("c", "character device"),
];

impl clap::builder::TypedValueParser for TypeParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        // As clap tells a function's error: "invalid value 'q' for '--type <TYPE>': ...".
        let check = check_type as fn(&str) -> Result<String, String>;
        check.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(TYPES.iter().map(|(t, help)| {
            clap::builder::PossibleValue::new(*t).help(*help)
        })))
    }
}

fn time(s: &str) -> Result<Time, String> {
    ftw::filter::parse_time(s, std::time::SystemTime::now())
}

/// What the filters decide for an entry.
pub struct Select {
    filter: Filter,
    prune: bool,
    /// Whether every entry is printed (no test at all): the listing's fast path.
    all: bool,
    /// Set when an entry's metadata, asked for by a filter, could not be had
    /// (reported).
    filter_failed: AtomicBool,
    /// The fields the output reads after the filters: asked for with theirs.
    also: StatMask,
}

impl Select {
    /// Whether the walk must keep handles for the filters' metadata.
    pub fn needs_metadata(&self) -> bool {
        self.filter.needs_metadata()
    }

    /// Whether every entry is printed (no filter, no --prune).
    pub fn takes_all(&self) -> bool {
        self.all
    }

    /// Where a filter asks for an entry's metadata, the fields of `mask` are asked for
    /// with it, for what prints the entry next (its size, its mode for a colour).
    pub fn fetch_also(&mut self, mask: StatMask) {
        self.also = self.also | mask;
    }

    /// Whether `e` is printed, and what the walk does next. Metadata a filter fetched
    /// is left in `e` ([`Select::fetch_also`]).
    #[inline]
    pub fn decide(&self, e: &mut Entry<'_>, scratch: &mut Vec<u8>) -> (bool, Control) {
        if self.all {
            return (true, Control::Continue);
        }
        let print = match self.filter.check_keeping(e, scratch, self.also) {
            Ok(print) => print,
            // The entry is there but what the filters ask of it is not to be had: said,
            // as find says it, and the exit status is 1.
            Err(err) => {
                self.filter_failed.store(true, Ordering::Relaxed);
                scratch.clear();
                e.write_path(scratch);
                crate::msg::report(scratch, &crate::msg::describe(&err));
                false
            }
        };
        let control = if print && self.prune && e.is_dir() {
            Control::Skip
        } else {
            Control::Continue
        };
        (print, control)
    }
}

impl FilterArgs {
    /// The filters, or a usage error's message (a pattern that does not compile).
    pub fn build(&self) -> Result<(Select, Option<Excludes>), String> {
        let mut patterns: Vec<(PatternKind, String)> = Vec::new();
        patterns.extend(self.names.iter().map(|p| (PatternKind::Regex, p.clone())));
        patterns.extend(self.globs.iter().map(|p| (PatternKind::Glob, p.clone())));
        patterns.extend(self.fixed.iter().map(|p| (PatternKind::Fixed, p.clone())));
        let case = if self.ignore_case {
            Case::Insensitive
        } else if self.case_sensitive {
            Case::Sensitive
        } else {
            Case::Smart
        };
        let mut filter = Filter::new();
        if !patterns.is_empty() {
            let p = Patterns::new(&patterns, case, self.full_path).map_err(|e| e.to_string())?;
            filter = filter.patterns(p);
        }
        for e in &self.extensions {
            if e.trim_start_matches('.').is_empty() {
                return Err(format!(
                    "invalid extension '{e}': an extension is needed (like rs, tar.gz)"
                ));
            }
            filter = filter.extension(e);
        }
        if !self.types.is_empty() {
            let mut types = Types::default();
            for t in &self.types {
                #[cfg(windows)]
                crate::msg::note_type(t);
                types.add(t)?;
            }
            filter = filter.types(types);
        }
        for s in &self.sizes {
            filter = filter.size(*s);
        }
        if let Some(t) = self.changed_within {
            filter = filter.changed_within(t);
        }
        if let Some(t) = self.changed_before {
            filter = filter.changed_before(t);
        }
        let excludes = if self.excludes.is_empty() {
            None
        } else {
            Some(Excludes::new(&self.excludes).map_err(|e| e.to_string())?)
        };
        let all = filter.is_empty() && !self.prune;
        Ok((
            Select {
                filter,
                prune: self.prune,
                all,
                filter_failed: AtomicBool::new(false),
                also: StatMask::TYPE,
            },
            excludes,
        ))
    }

    /// The ignore rules asked for, if any.
    pub fn ignore(&self) -> Option<Ignore> {
        if !self.ignore && !self.no_hidden && self.ignore_files.is_empty() {
            return None;
        }
        let mut opts = IgnoreOptions::default()
            .ignore_files(self.ignore)
            .require_git(!self.no_require_git)
            .hidden(!self.no_hidden);
        for f in &self.ignore_files {
            opts = opts.ignore_file(f.clone());
        }
        Some(Ignore::new(opts))
    }
}

impl Select {
    /// Whether a filter could not have an entry's metadata during the walks run so far:
    /// the exit status is then 1. (An ignore file that cannot be read is one of the
    /// walk's errors.)
    pub fn failed(&self) -> bool {
        self.filter_failed.load(Ordering::Relaxed)
    }

    /// Runs the walk `b` (serial when sorted or on one thread, else parallel: see
    /// [`WalkBuilder::run`]; its ignore rules, if any, set on it).
    pub fn run<V, M>(&self, b: WalkBuilder, make: M) -> WalkStats
    where
        V: ParallelVisitor,
        M: Fn() -> V + Sync,
    {
        b.run_entries(make)
    }
}
