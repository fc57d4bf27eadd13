//! Globs that exclude entries, and with a directory everything below it (which is then
//! never opened).

use super::PatternError;
use crate::walk::Entry;
use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use std::borrow::Cow;
use std::path::Path;

/// Exclusion globs, as `fd --exclude` and `find -prune` use them. A glob without a `/`
/// matches names (`*.o`, `.git`, `node_modules`); one with a `/` matches the end of the
/// path, at a component's start (`src/gen` excludes `./a/src/gen`; `*` does not cross a
/// `/`; `**` does). Case matters.
///
/// globset sorts the globs by kind, so a literal name or an extension is a hash lookup,
/// not a regular expression per glob.
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
    names: GlobSet,
    paths: Option<GlobSet>,
}

impl Excludes {
    /// Compiles the globs.
    pub fn new(globs: &[String]) -> Result<Excludes, PatternError> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let mut any_path = false;
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
            names: build(names)?,
            paths: if any_path { Some(build(paths)?) } else { None },
        })
    }

    /// Whether a name is excluded (by a glob without `/`).
    pub fn is_match_name(&self, name: &[u8]) -> bool {
        self.names
            .is_match_candidate(&Candidate::new(as_path(name).as_ref()))
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
