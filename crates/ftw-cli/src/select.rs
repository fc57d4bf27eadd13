//! `ftw find`'s filters: the options that choose what is printed (patterns, types,
//! extensions, sizes, times) and where the walk goes (exclusions, --prune), turned into
//! the library's [`Filter`] and [`Excludes`].

use clap::Args;
use ftw::filter::{Case, Excludes, Filter, PatternKind, Patterns, SizeLimit, Time, Types};
use ftw::walk::{Control, Entry};

/// The filter options, shared by the commands that list.
#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Print entries whose name matches the regular expression (found anywhere in the
    /// name; '^' and '$' anchor it). Several -n, -g and -F: any of them.
    #[arg(short = 'n', long = "name", value_name = "REGEX")]
    names: Vec<String>,

    /// Print entries whose name matches the glob ('*.rs', 'Makefile*', '[ab]?.c').
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,

    /// Print entries whose name contains STRING.
    #[arg(short = 'F', long = "fixed", value_name = "STRING")]
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
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = check_type)]
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
    /// with '/' the end of the path ('src/gen'). Several: any of them.
    #[arg(short = 'E', long = "exclude", value_name = "GLOB")]
    excludes: Vec<String>,
}

fn check_type(s: &str) -> Result<String, String> {
    Types::default().add(s).map(|_| s.to_string())
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
}

impl Select {
    /// Whether the walk must keep handles for the filters' metadata.
    pub fn needs_metadata(&self) -> bool {
        self.filter.needs_metadata()
    }

    /// Whether `e` is printed, and what the walk does next.
    #[inline]
    pub fn decide(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> (bool, Control) {
        if self.all {
            return (true, Control::Continue);
        }
        let print = self.filter.matches(e, scratch);
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
            filter = filter.extension(e);
        }
        if !self.types.is_empty() {
            let mut types = Types::default();
            for t in &self.types {
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
            },
            excludes,
        ))
    }
}
