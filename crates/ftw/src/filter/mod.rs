//! What a walk reports and where it goes: name patterns ([`Patterns`]), types, extensions,
//! sizes and modification times ([`Filter`]), and globs that exclude whole subtrees
//! ([`Excludes`]: an excluded directory is never opened); and ignore files with git's
//! semantics ([`Ignore`]), which a walk honours with
//! [`WalkBuilder::git_ignore`](crate::walk::WalkBuilder::git_ignore) or
//! [`WalkBuilder::ignore_rules`](crate::walk::WalkBuilder::ignore_rules).
//!
//! A [`Filter`] checks what the directory entry tells first (type, name) and asks for
//! metadata only for the entries that passed, with only the fields it needs, relative to
//! their directory's handle.
//!
//! ```
//! use ftw::filter::{Case, Filter, PatternKind, Patterns, Types};
//! use ftw::walk::WalkBuilder;
//!
//! let tmp = tempfile::tempdir()?;
//! std::fs::create_dir(tmp.path().join("src"))?;
//! std::fs::write(tmp.path().join("src/lib.rs"), b"")?;
//! std::fs::write(tmp.path().join("README"), b"")?;
//! let mut types = Types::default();
//! types.add("f").unwrap();
//! let filter = Filter::new()
//!     .types(types)
//!     .patterns(Patterns::new(&[(PatternKind::Glob, "*.rs".into())], Case::Smart, false)?);
//! let mut scratch = Vec::new();
//! let mut found = Vec::new();
//! WalkBuilder::new(tmp.path()).build().visit(|item| {
//!     let e = item.unwrap();
//!     if filter.matches(&e, &mut scratch) {
//!         found.push(e.name().to_vec());
//!     }
//!     ftw::walk::Control::Continue
//! });
//! assert_eq!(found, vec![b"lib.rs".to_vec()]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod exclude;
mod git_config;
mod git_index;
mod ignores;
mod matcher;
mod pattern;
mod spec;
mod walk_ignore;

pub use exclude::Excludes;
pub use ignores::{Ignore, IgnoreError, IgnoreOptions, Rules};
pub use pattern::{Case, PatternError, PatternKind, Patterns};
pub use spec::{SizeLimit, Time, parse_time};

use crate::sys::{self, FileType, StatMask};
use crate::walk::Entry;
use std::io;

/// Which types of entries pass: any, by default; `add` narrows to the types named
/// (any of them), as `fd --type` does.
///
/// ```
/// use ftw::filter::Types;
/// let mut t = Types::default();
/// t.add("d").unwrap();
/// t.add("e").unwrap();   // empty directories
/// assert!(t.add("q").is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Types {
    /// Bits of [`Types::bit`]; 0: any type.
    kinds: u16,
    executable: bool,
    empty: bool,
}

impl Types {
    fn bit(t: FileType) -> u16 {
        1 << (t as u16)
    }

    /// Adds a type by letter or name: `f`/`file`, `d`/`dir`/`directory`, `l`/`symlink`,
    /// `s`/`socket`, `p`/`pipe`, `b`/`block-device`, `c`/`char-device`; `x`/`executable`
    /// (files with an execute bit) and `e`/`empty` (empty files and directories) narrow
    /// the others instead.
    ///
    /// # Errors
    ///
    /// A message saying which letters and names there are, when `name` is none of them.
    pub fn add(&mut self, name: &str) -> Result<(), String> {
        let t = match name {
            "f" | "file" => FileType::File,
            "d" | "dir" | "directory" => FileType::Dir,
            "l" | "symlink" => FileType::Symlink,
            "s" | "socket" => FileType::Socket,
            "p" | "pipe" => FileType::Fifo,
            "b" | "block-device" => FileType::BlockDevice,
            "c" | "char-device" => FileType::CharDevice,
            "x" | "executable" => {
                self.executable = true;
                FileType::File
            }
            "e" | "empty" => {
                self.empty = true;
                return Ok(());
            }
            _ => {
                return Err(format!(
                    "unknown type '{name}' (one of f, d, l, x, e, s, p, b, c)"
                ));
            }
        };
        self.kinds |= Types::bit(t);
        Ok(())
    }

    fn any_kind(&self) -> bool {
        self.kinds == 0
    }

    /// Whether the type alone lets `t` pass (before `executable` and `empty`).
    fn admits(&self, t: FileType) -> bool {
        if self.any_kind() {
            // `-t e` alone: empty files and directories.
            return !self.empty || matches!(t, FileType::File | FileType::Dir);
        }
        self.kinds & Types::bit(t) != 0
    }
}

/// The tests an entry must pass to be reported: all of them (each test passes when not
/// set). See the [module](self).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    patterns: Option<Patterns>,
    /// Lower-case, each with its leading dot.
    extensions: Vec<Vec<u8>>,
    types: Types,
    sizes: Vec<SizeLimit>,
    changed_within: Option<Time>,
    changed_before: Option<Time>,
}

impl Filter {
    /// A filter that every entry passes.
    pub fn new() -> Filter {
        Filter::default()
    }

    /// Names (or paths) must match `patterns`.
    pub fn patterns(mut self, patterns: Patterns) -> Self {
        self.patterns = Some(patterns);
        self
    }

    /// Names must end with `.EXT` for one of the extensions added (case does not
    /// matter; `tar.gz` works).
    pub fn extension(mut self, ext: &str) -> Self {
        let mut e = b".".to_vec();
        e.extend(
            ext.trim_start_matches('.')
                .bytes()
                .map(|b| b.to_ascii_lowercase()),
        );
        self.extensions.push(e);
        self
    }

    /// Types must be among `types`.
    pub fn types(mut self, types: Types) -> Self {
        self.types = types;
        self
    }

    /// Regular files only, of a size within `limit` (several limits: all of them).
    pub fn size(mut self, limit: SizeLimit) -> Self {
        self.sizes.push(limit);
        self
    }

    /// Modified at `t` or later.
    pub fn changed_within(mut self, t: Time) -> Self {
        self.changed_within = Some(t);
        self
    }

    /// Modified at `t` or earlier.
    pub fn changed_before(mut self, t: Time) -> Self {
        self.changed_before = Some(t);
        self
    }

    /// Whether every entry passes.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_none()
            && self.extensions.is_empty()
            && self.types == Types::default()
            && !self.needs_metadata()
    }

    /// The metadata fields the filter asks for (beyond the type the directory entry
    /// tells), or `None`.
    pub fn metadata_needed(&self) -> Option<StatMask> {
        let mut mask = None;
        let mut add = |m: StatMask| mask = Some(mask.map_or(m, |old| old | m));
        if !self.sizes.is_empty() || self.types.empty {
            add(StatMask::SIZE);
        }
        if self.changed_within.is_some() || self.changed_before.is_some() {
            add(StatMask::MTIME);
        }
        if self.types.executable {
            add(StatMask::MODE);
        }
        mask
    }

    /// Whether the filter asks for metadata: the walk should then keep its handles
    /// ([`crate::walk::WalkBuilder::keep_handles`]) to ask relative to them.
    pub fn needs_metadata(&self) -> bool {
        self.metadata_needed().is_some()
    }

    /// Whether `e` passes. `scratch` is a buffer for paths, kept between calls. An entry
    /// whose metadata cannot be had does not pass ([`Filter::check`] says why).
    pub fn matches(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        self.check(e, scratch).unwrap_or(false)
    }

    /// Whether `e` passes, or the error that kept the filter from knowing: the entry's
    /// metadata (or, for an empty directory, its listing) could not be had. Only the
    /// entries that passed the cheaper tests (type, extension, pattern) are asked for.
    ///
    /// # Errors
    ///
    /// The error of the call that was to tell what a test needs: the entry's metadata (for
    /// sizes, times, the executable bit, an empty file), or an empty directory's listing;
    /// the entry may have gone meanwhile (`NotFound`).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ftw::filter::{Filter, SizeLimit};
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("big"), vec![0u8; 2000])?;
    /// std::fs::write(dir.path().join("small"), b"x")?;
    /// let filter = Filter::new().size("+1k".parse::<SizeLimit>().unwrap());
    /// let mut scratch = Vec::new();
    /// let mut found = Vec::new();
    /// let mut failed = None;
    /// ftw::walk::WalkBuilder::new(dir.path()).keep_handles(true).build().visit(|item| {
    ///     let e = item.unwrap();
    ///     match filter.check(&e, &mut scratch) {
    ///         Ok(true) => found.push(e.name().to_vec()),
    ///         Ok(false) => {}
    ///         Err(err) => failed = Some(err),
    ///     }
    ///     ftw::walk::Control::Continue
    /// });
    /// assert!(failed.is_none());
    /// assert_eq!(found, [b"big".to_vec()]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn check(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> io::Result<bool> {
        let mut e = *e;
        self.check_keeping(&mut e, scratch, StatMask::TYPE)
    }

    /// As [`Filter::check`]; and where the filter asks for `e`'s metadata, it asks for
    /// the fields of `also` with it (one call) and leaves them in `e`
    /// ([`Entry::with_metadata`]), so that what the caller reads next (a size to print,
    /// a mode to colour by) costs no second call.
    ///
    /// # Errors
    ///
    /// As [`Filter::check`].
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ftw::filter::{Filter, SizeLimit};
    /// use ftw::sys::StatMask;
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("big"), vec![0u8; 2000])?;
    /// let filter = Filter::new().size("+1k".parse::<SizeLimit>().unwrap());
    /// let mut scratch = Vec::new();
    /// ftw::walk::WalkBuilder::new(dir.path()).min_depth(1).build().visit(|item| {
    ///     let mut e = *item.unwrap();
    ///     assert!(filter.check_keeping(&mut e, &mut scratch, StatMask::MODE).unwrap());
    ///     std::fs::remove_file(e.path()).unwrap();
    ///     // The size and mode the filter fetched, with no call (the file is gone).
    ///     let m = e.metadata(StatMask::SIZE | StatMask::MODE).unwrap();
    ///     assert_eq!((m.size, m.mode & 0o170000), (2000, 0o100000));
    ///     ftw::walk::Control::Continue
    /// });
    /// # Ok(())
    /// # }
    /// ```
    pub fn check_keeping(
        &self,
        e: &mut Entry<'_>,
        scratch: &mut Vec<u8>,
        also: StatMask,
    ) -> io::Result<bool> {
        let t = e.file_type();
        if !self.types.admits(t) {
            return Ok(false);
        }
        if !self.extensions.is_empty() && !self.has_extension(e.name()) {
            return Ok(false);
        }
        if let Some(p) = &self.patterns {
            if !p.matches(e, scratch) {
                return Ok(false);
            }
        }
        let Some(mask) = self.metadata_needed() else {
            return Ok(true);
        };
        if !self.sizes.is_empty() && t != FileType::File {
            return Ok(false);
        }
        // A directory's emptiness is read from it: its size says nothing.
        if t == FileType::Dir && mask == StatMask::SIZE && self.types.empty {
            return dir_is_empty(e, scratch);
        }
        let m = e.metadata(mask | also)?;
        *e = e.with_metadata(mask | also, m);
        if !self.sizes.iter().all(|s| s.admits(m.size)) {
            return Ok(false);
        }
        let mtime = Time {
            secs: m.mtime,
            nanos: m.mtime_nsec,
        };
        if self.changed_within.is_some_and(|t| mtime < t)
            || self.changed_before.is_some_and(|t| mtime > t)
        {
            return Ok(false);
        }
        if self.types.executable && m.mode & 0o111 == 0 {
            return Ok(false);
        }
        if self.types.empty {
            let empty = match t {
                FileType::File => m.size == 0,
                FileType::Dir => dir_is_empty(e, scratch)?,
                _ => false,
            };
            if !empty {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn has_extension(&self, name: &[u8]) -> bool {
        self.extensions.iter().any(|ext| {
            name.len() > ext.len() && name[name.len() - ext.len()..].eq_ignore_ascii_case(ext)
        })
    }
}

/// Whether the directory `e` has no entries.
fn dir_is_empty(e: &Entry<'_>, scratch: &mut Vec<u8>) -> io::Result<bool> {
    let opened = match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.open_at_follow(name),
        _ => {
            scratch.clear();
            e.write_path(scratch);
            sys::Dir::open(&crate::walk::bytes_to_path(scratch.clone()))
        }
    };
    let dir = opened?;
    let mut any = false;
    let mut buf = sys::DirBuf::with_capacity(4096);
    dir.read_entries(&mut buf, |_| any = true)?;
    Ok(!any)
}

// These tests build trees with Unix calls (symlink, modes, fifos, rustix); the
// Windows backend has its own in sys/windows_tests.rs.
#[cfg(all(test, unix))]
mod tests;
