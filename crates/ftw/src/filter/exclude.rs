//! Globs that exclude entries, and with a directory everything below it (which is then
//! never opened).

use super::PatternError;
use crate::walk::Entry;
use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

/// Exclusion globs, as `fd --exclude` and `find -prune` use them. A glob without a `/`
/// matches names (`*.o`, `.git`, `node_modules`); one with a `/` matches the end of the
/// path, at a component's start (`src/gen` excludes `./a/src/gen`; `*` does not cross a
/// `/`; `**` does). Case matters.
///
/// Simple name globs (a literal name, `*.ext`, `prefix*`, `*suffix`) are sorted out
/// first: a hash lookup or a comparison, not a glob matcher per name.
///
/// ```
/// use ftw::filter::Excludes;
/// let ex = Excludes::new(&[".git".into(), "*.o".into(), "build/out".into()])?;
/// assert!(ex.is_match_name(b".git") && ex.is_match_name(b"main.o"));
/// assert!(!ex.is_match_name(b"main.c"));
/// assert!(ex.is_match_path(b"./x/build/out") && !ex.is_match_path(b"./x/rebuild/out"));
/// # Ok::<(), ftw::filter::PatternError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Excludes {
    /// Name globs sorted by kind: a literal name or an extension is one hash lookup,
    /// a prefix or suffix a comparison; only the rest go through the glob matcher.
    literal: HashSet<Vec<u8>>,
    extensions: HashSet<Vec<u8>>,
    prefixes: Vec<Vec<u8>>,
    suffixes: Vec<Vec<u8>>,
    names: Option<GlobSet>,
    paths: Option<GlobSet>,
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
    pub fn new(globs: &[String]) -> Result<Excludes, PatternError> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let mut any_path = false;
        let mut any_name = false;
        let mut literal = HashSet::new();
        let mut extensions = HashSet::new();
        let (mut prefixes, mut suffixes) = (Vec::new(), Vec::new());
        for g in globs {
            let err = |e: globset::Error| PatternError {
                pattern: g.clone(),
                reason: e.kind().to_string(),
            };
            let trimmed = g.trim_end_matches('/');
            let (builder, source) = if trimmed.contains('/') {
                any_path = true;
                let source = if trimmed.starts_with('/') || trimmed.starts_with("**/") {
                    Cow::Borrowed(trimmed)
                } else {
                    Cow::Owned(format!("**/{trimmed}"))
                };
                (&mut paths, source)
            } else {
                match simple(trimmed.as_bytes()) {
                    Some(Simple::Literal(l)) => {
                        literal.insert(l.to_vec());
                        continue;
                    }
                    Some(Simple::Extension(e)) => {
                        extensions.insert(e.to_vec());
                        continue;
                    }
                    Some(Simple::Prefix(p)) => {
                        prefixes.push(p.to_vec());
                        continue;
                    }
                    Some(Simple::Suffix(x)) => {
                        suffixes.push(x.to_vec());
                        continue;
                    }
                    None => {}
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
        })
    }

    /// Whether a name is excluded (by a glob without `/`).
    pub fn is_match_name(&self, name: &[u8]) -> bool {
        if self.literal.contains(name) {
            return true;
        }
        if !self.extensions.is_empty() {
            if let Some(dot) = name.iter().rposition(|&b| b == b'.') {
                if dot + 1 < name.len() && self.extensions.contains(&name[dot + 1..]) {
                    return true;
                }
            }
        }
        if self.prefixes.iter().any(|p| name.starts_with(p))
            || self.suffixes.iter().any(|x| name.ends_with(x))
        {
            return true;
        }
        self.names
            .as_ref()
            .is_some_and(|n| n.is_match_candidate(&Candidate::new(as_path(name).as_ref())))
    }

    /// Whether a path is excluded by a glob with a `/`.
    pub fn is_match_path(&self, path: &[u8]) -> bool {
        self.paths
            .as_ref()
            .is_some_and(|p| p.is_match_candidate(&Candidate::new(as_path(path).as_ref())))
    }

    /// Whether the entry is excluded (its path is built in `scratch` only when a glob
    /// needs it). The roots themselves are never excluded.
    pub fn is_match(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        if e.depth() == 0 {
            return false;
        }
        if self.is_match_name(e.name()) {
            return true;
        }
        if self.paths.is_some() {
            scratch.clear();
            e.write_path(scratch);
            return self.is_match_path(scratch);
        }
        false
    }
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
