//! Globs that exclude entries, and with a directory everything below it (which is then
//! never opened).

use super::PatternError;
use crate::walk::Entry;
use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use rustc_hash::FxHashSet;
use std::borrow::Cow;
use std::path::Path;

/// Exclusion globs, as `fd --exclude` and `find -prune` use them. A glob without a `/`
/// matches names (`*.o`, `.git`, `node_modules`); one with a `/` matches the end of the
/// path, at a component's start (`src/gen` excludes `./a/src/gen`; `*` does not cross a
/// `/`; `**` does); one that starts with `/` is anchored at the walk's root, as in a
/// `.gitignore` at the root (`/src` excludes `./src`, not `./a/src`), and matches a
/// whole path too where the walk's are absolute (`/home/me/.cache` below `/home`); one
/// that ends with `/` excludes directories only, as in a `.gitignore` (`build/` leaves
/// a file named `build`). Case matters.
///
/// Simple name globs (a literal name, `*.ext`, `prefix*`, `*suffix`, and a group of
/// literal alternatives written out into those, like `*.{c,h}`) are sorted out first: a
/// hash lookup or a comparison, not a glob matcher per name.
///
/// ```
/// use ftw::filter::Excludes;
/// let ex = Excludes::new(&[".git".into(), "*.o".into(), "build/out".into()])?;
/// assert!(ex.is_match_name(b".git") && ex.is_match_name(b"main.o"));
/// assert!(!ex.is_match_name(b"main.c"));
/// assert!(ex.is_match_path(b"./x/build/out") && !ex.is_match_path(b"./x/rebuild/out"));
///
/// let anchored = Excludes::new(&["/src/gen".into()])?;
/// assert!(anchored.is_match_below_root(b"src/gen"));
/// assert!(!anchored.is_match_below_root(b"a/src/gen"));
/// # Ok::<(), ftw::filter::PatternError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Excludes {
    /// Name globs sorted by kind: a literal name or an extension is one hash lookup,
    /// a prefix or suffix a comparison; only the rest go through the glob matcher.
    literal: Lookup,
    extensions: Lookup,
    prefixes: Vec<Vec<u8>>,
    suffixes: Vec<Vec<u8>>,
    names: Option<GlobSet>,
    paths: Option<GlobSet>,
    /// Globs that start with `/`, without it: matched against the path below the root.
    anchored: Option<GlobSet>,
    /// Globs written with a trailing `/`, without it: they exclude directories only.
    dirs: Option<Box<Excludes>>,
}

/// A set of literals (names or extensions): one of up to 7 bytes is packed into a `u64`
/// with its length, whose FxHash is one multiplication; longer ones are FxHash'ed as
/// bytes. A lookup is skipped when no literal has the length asked about.
#[derive(Clone, Debug, Default)]
struct Lookup {
    short: FxHashSet<u64>,
    long: FxHashSet<Box<[u8]>>,
    /// Bit `min(len, 63)` set for each literal's length.
    lens: u64,
}

/// The bytes of `key` and its length in the top byte, if it has at most 7 bytes.
#[inline]
fn pack(key: &[u8]) -> Option<u64> {
    if key.len() > 7 {
        return None;
    }
    // Byte by byte: a copy of a variable length would be a call to memcpy.
    let mut k = (key.len() as u64) << 56;
    for (i, &b) in key.iter().enumerate() {
        k |= u64::from(b) << (8 * i);
    }
    Some(k)
}

impl Lookup {
    fn insert(&mut self, key: &[u8]) {
        self.lens |= 1 << key.len().min(63);
        match pack(key) {
            Some(k) => self.short.insert(k),
            None => self.long.insert(key.into()),
        };
    }

    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        if self.lens & (1 << key.len().min(63)) == 0 {
            return false;
        }
        match pack(key) {
            Some(k) => self.short.contains(&k),
            None => self.long.contains(key),
        }
    }

    fn is_empty(&self) -> bool {
        self.lens == 0
    }
}

/// A name glob with one group of literal alternatives (`*.{c,h}`, `{arch}`) written out,
/// one glob for each (as globset reads the group); `None` for any other glob.
fn expand_braces(glob: &str) -> Option<Vec<String>> {
    let open = glob.find('{')?;
    let close = open + glob[open..].find('}')?;
    let (head, inner, tail) = (&glob[..open], &glob[open + 1..close], &glob[close + 1..]);
    let plain = |s: &str| !s.contains(['{', '}', '[', ']', '\\']);
    if !plain(head) || !plain(tail) || !plain(inner) || inner.contains(['*', '?']) {
        return None;
    }
    let alternatives: Vec<&str> = inner.split(',').collect();
    if alternatives.iter().any(|a| a.is_empty()) {
        return None;
    }
    Some(
        alternatives
            .iter()
            .map(|a| format!("{head}{a}{tail}"))
            .collect(),
    )
}

/// Whether a glob byte is special.
fn is_meta(b: u8) -> bool {
    matches!(b, b'*' | b'?' | b'[' | b']' | b'{' | b'}' | b'\\')
}

/// A name glob's kind, where it is a simple one.
enum Simple<'a> {
    Literal(&'a [u8]),
    Extension(&'a [u8]),
    Prefix(&'a [u8]),
    Suffix(&'a [u8]),
}

fn simple(glob: &[u8]) -> Option<Simple<'_>> {
    if !glob.iter().copied().any(is_meta) {
        return Some(Simple::Literal(glob));
    }
    if let Some(rest) = glob.strip_prefix(b"*") {
        if !rest.iter().copied().any(is_meta) {
            return Some(match rest.strip_prefix(b".") {
                Some(ext) if !ext.is_empty() && !ext.contains(&b'.') => Simple::Extension(ext),
                _ => Simple::Suffix(rest),
            });
        }
    }
    if let Some(rest) = glob.strip_suffix(b"*") {
        if !rest.is_empty() && !rest.iter().copied().any(is_meta) {
            return Some(Simple::Prefix(rest));
        }
    }
    None
}

impl Excludes {
    /// Compiles the globs.
    ///
    /// # Errors
    ///
    /// A [`PatternError`] for the first glob that does not compile (an unclosed `[` or `{`,
    /// say).
    pub fn new(globs: &[String]) -> Result<Excludes, PatternError> {
        // As in a .gitignore, a glob that ends with `/` excludes directories only.
        let (dir_only, rest): (Vec<String>, Vec<String>) = globs
            .iter()
            .cloned()
            .partition(|g| g.len() > 1 && g.ends_with('/') && !g.trim_end_matches('/').is_empty());
        let mut ex = Excludes::compile(&rest)?;
        if !dir_only.is_empty() {
            let trimmed: Vec<String> = dir_only
                .iter()
                .map(|g| g.trim_end_matches('/').to_owned())
                .collect();
            ex.dirs = Some(Box::new(Excludes::compile(&trimmed)?));
        }
        Ok(ex)
    }

    fn compile(globs: &[String]) -> Result<Excludes, PatternError> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let mut anchored = GlobSetBuilder::new();
        let mut any_anchored = false;
        let mut any_path = false;
        let mut any_name = false;
        let mut literal = Lookup::default();
        let mut extensions = Lookup::default();
        let (mut prefixes, mut suffixes) = (Vec::new(), Vec::new());
        for g in globs {
            let err = |e: globset::Error| PatternError {
                pattern: g.clone(),
                reason: e.kind().to_string(),
            };
            let trimmed = g.trim_end_matches('/');
            if let Some(below) = trimmed.strip_prefix('/') {
                // Anchored at the root; and, as it was always read, a whole path when
                // the walk's are absolute (below a root, a path of a root other than
                // '/' never equals one that starts at '/' in the same words).
                any_anchored = true;
                let glob = GlobBuilder::new(below.trim_start_matches('/'))
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(err)?;
                anchored.add(glob);
            }
            let (builder, source) = if trimmed.contains('/') {
                any_path = true;
                let source = if trimmed.starts_with("**/") {
                    Cow::Borrowed(trimmed)
                } else {
                    Cow::Owned(format!("**/{trimmed}"))
                };
                (&mut paths, source)
            } else {
                let expanded = expand_braces(trimmed);
                let alternatives: Vec<&str> = match &expanded {
                    Some(v) => v.iter().map(String::as_str).collect(),
                    None => vec![trimmed],
                };
                let kinds: Option<Vec<Simple<'_>>> =
                    alternatives.iter().map(|a| simple(a.as_bytes())).collect();
                if let Some(kinds) = kinds {
                    for kind in kinds {
                        match kind {
                            Simple::Literal(l) => literal.insert(l),
                            Simple::Extension(e) => extensions.insert(e),
                            Simple::Prefix(p) => prefixes.push(p.to_vec()),
                            Simple::Suffix(x) => suffixes.push(x.to_vec()),
                        }
                    }
                    continue;
                }
                any_name = true;
                (&mut names, Cow::Borrowed(trimmed))
            };
            let glob = GlobBuilder::new(&source)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(err)?;
            builder.add(glob);
        }
        let build = |b: GlobSetBuilder| {
            b.build().map_err(|e| PatternError {
                pattern: globs.join(" "),
                reason: e.kind().to_string(),
            })
        };
        Ok(Excludes {
            literal,
            extensions,
            prefixes,
            suffixes,
            names: if any_name { Some(build(names)?) } else { None },
            paths: if any_path { Some(build(paths)?) } else { None },
            anchored: if any_anchored {
                Some(build(anchored)?)
            } else {
                None
            },
            dirs: None,
        })
    }

    /// Whether a name is excluded (by a glob without `/`). The type is not known here:
    /// a glob written `name/` (directories only) counts as `name`.
    #[inline]
    pub fn is_match_name(&self, name: &[u8]) -> bool {
        self.name_own(name) || self.dirs.as_ref().is_some_and(|d| d.name_own(name))
    }

    #[inline]
    fn name_own(&self, name: &[u8]) -> bool {
        if self.literal.contains(name) {
            return true;
        }
        if !self.extensions.is_empty() {
            // With extensions of up to 7 bytes only, the last dot is looked for in the
            // last 8 bytes of the name.
            let from = if self.extensions.long.is_empty() {
                name.len().saturating_sub(8)
            } else {
                0
            };
            if let Some(dot) = name[from..].iter().rposition(|&b| b == b'.') {
                if self.extensions.contains(&name[from + dot + 1..]) {
                    return true;
                }
            }
        }
        // The first (last) byte first: most names differ there, and the comparison of
        // the rest is a call to bcmp.
        if self
            .prefixes
            .iter()
            .any(|p| p.first().is_none_or(|b| name.first() == Some(b)) && name.starts_with(p))
            || self
                .suffixes
                .iter()
                .any(|x| x.last().is_none_or(|b| name.last() == Some(b)) && name.ends_with(x))
        {
            return true;
        }
        self.names
            .as_ref()
            .is_some_and(|n| n.is_match_candidate(&Candidate::new(as_path(name).as_ref())))
    }

    /// Whether a path is excluded by a glob with a `/` (the type is not known here: a
    /// glob written `a/b/`, directories only, counts as `a/b`).
    pub fn is_match_path(&self, path: &[u8]) -> bool {
        self.path_own(path) || self.dirs.as_ref().is_some_and(|d| d.path_own(path))
    }

    fn path_own(&self, path: &[u8]) -> bool {
        self.paths
            .as_ref()
            .is_some_and(|p| p.is_match_candidate(&Candidate::new(as_path(path).as_ref())))
    }

    /// Whether a path below a root (`src/gen` for `./src/gen`) is excluded by a glob
    /// that starts with `/` (a glob written `/src/`, directories only, counts as `/src`).
    pub fn is_match_below_root(&self, below: &[u8]) -> bool {
        self.below_own(below) || self.dirs.as_ref().is_some_and(|d| d.below_own(below))
    }

    fn below_own(&self, below: &[u8]) -> bool {
        self.anchored
            .as_ref()
            .is_some_and(|p| p.is_match_candidate(&Candidate::new(as_path(below).as_ref())))
    }

    /// Whether the entry is excluded (its path is built in `scratch` only when a glob
    /// needs it): a glob written with a trailing `/` excludes only directories. The
    /// roots themselves are never excluded.
    pub fn is_match(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        if e.depth() == 0 {
            return false;
        }
        self.entry_own(e, scratch)
            || (e.is_dir() && self.dirs.as_ref().is_some_and(|d| d.entry_own(e, scratch)))
    }

    fn entry_own(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        if self.name_own(e.name()) {
            return true;
        }
        if self.paths.is_none() && self.anchored.is_none() {
            return false;
        }
        scratch.clear();
        e.write_path(scratch);
        self.path_own(scratch) || self.below_own(below_root(scratch, e.depth()))
    }
}

/// The last `depth` components of `path`: an entry's path below its root (names hold
/// no separator, whatever the root's path holds).
fn below_root(path: &[u8], depth: usize) -> &[u8] {
    let is_sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let mut seen = 0;
    for (i, b) in path.iter().enumerate().rev() {
        if is_sep(b) {
            seen += 1;
            if seen == depth {
                return &path[i + 1..];
            }
        }
    }
    path
}

#[cfg(unix)]
fn as_path(bytes: &[u8]) -> Cow<'_, Path> {
    use std::os::unix::ffi::OsStrExt;
    Cow::Borrowed(Path::new(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn as_path(bytes: &[u8]) -> Cow<'_, Path> {
    Cow::Owned(crate::walk::bytes_to_path(bytes.to_vec()))
}
