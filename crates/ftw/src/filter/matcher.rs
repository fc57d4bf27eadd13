//! One ignore file's rules, compiled for matching.
//!
//! Most ignore files hold only simple rules: a literal name (`node_modules`, `build/`), an
//! extension or a literal ending (`*.map`, `*.d.ts`), a literal path anchored to the file's
//! directory (`/build`, `docs/api`), each of them possibly negated (`!index.d.ts`) or for
//! directories only (`name/`). Such a file is compiled into hash lookups: building it
//! costs a few allocations rather than a glob set, and matching a name costs a lookup or
//! two. A file with any other rule (wildcards elsewhere, `**`, classes, escapes, braces)
//! is compiled whole by the `ignore` crate, whose matcher then decides every rule of that
//! file, as before. Both give git's answer: the last rule of the file that matches decides.

use ::ignore::Match;
use ::ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustc_hash::FxHashMap;
use std::path::Path;

/// What a file's rules say of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// No rule matches: the next file decides.
    None,
    /// Ignored.
    Ignore,
    /// Re-included by a negated rule (`!pattern`).
    Keep,
}

/// The entry a matcher is asked about.
pub(super) struct Subject<'a> {
    /// Its name.
    pub name: &'a [u8],
    /// Whether it is a directory (rules ending in `/` apply to directories only).
    pub is_dir: bool,
}

impl<'a> Subject<'a> {
    pub fn new(name: &'a [u8], is_dir: bool) -> Subject<'a> {
        Subject { name, is_dir }
    }
}

/// A simple rule: where it is in its file (the last match wins), whether it is negated,
/// whether it applies to directories only.
#[derive(Clone, Copy, Debug)]
struct Rule {
    index: u32,
    keep: bool,
    dir_only: bool,
}

impl Rule {
    fn applies(&self, is_dir: bool) -> bool {
        !self.dir_only || is_dir
    }
}

/// Rules keyed by a literal (a name, an extension, a path): a hash lookup, skipped when
/// no key has the length asked about.
#[derive(Debug, Default)]
struct Lookup {
    rules: FxHashMap<Box<[u8]>, Vec<Rule>>,
    /// Bit `min(len, 63)` set for each key's length.
    lens: u64,
}

fn len_bit(len: usize) -> u64 {
    1 << len.min(63)
}

impl Lookup {
    fn add(&mut self, key: &[u8], rule: Rule) {
        self.lens |= len_bit(key.len());
        self.rules.entry(key.into()).or_default().push(rule);
    }

    /// The last rule for `key` that applies.
    #[inline]
    fn last(&self, key: &[u8], is_dir: bool) -> Option<Rule> {
        if self.lens & len_bit(key.len()) == 0 {
            return None;
        }
        let rules = self.rules.get(key)?;
        rules.iter().rev().find(|r| r.applies(is_dir)).copied()
    }
}

/// A file of simple rules only.
#[derive(Debug, Default)]
pub(super) struct Simple {
    /// Literal names (`node_modules`, `build/`), matched at any depth.
    names: Lookup,
    /// `*.EXT`, EXT without a dot: by the bytes after the name's last dot.
    exts: Lookup,
    /// `*SUFFIX` otherwise (`*.d.ts`, `*~`, `*`), in the file's order.
    suffixes: Vec<(Box<[u8]>, Rule)>,
    /// Literal paths anchored to the file's directory (`/build`, `docs/api`).
    paths: Lookup,
    rules: u32,
}

impl Simple {
    /// The simple rules of `text`, or `None` if it holds any other kind.
    fn parse(text: &str) -> Option<Simple> {
        let mut s = Simple::default();
        for line in text.lines() {
            if line.starts_with('#') {
                continue;
            }
            // An escape (of a trailing space, a leading '#' or '!', a wildcard): the
            // general matcher.
            if line.contains('\\') {
                return None;
            }
            let line = line.trim_end_matches(' ');
            if line.is_empty() {
                continue;
            }
            let (keep, line) = match line.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            let (anchored, line) = match line.strip_prefix('/') {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            if line.is_empty() {
                // `!` or `/` alone: no rule (git agrees).
                continue;
            }
            let (dir_only, body) = match line.strip_suffix('/') {
                Some(rest) => (true, rest.as_bytes()),
                None => (false, line.as_bytes()),
            };
            let rule = Rule {
                index: s.rules,
                keep,
                dir_only,
            };
            let is_meta = |b: &u8| matches!(b, b'*' | b'?' | b'[' | b']' | b'{' | b'}');
            if body.is_empty() || body.split(|&b| b == b'/').any(<[u8]>::is_empty) {
                // `//`, `a//b`, `a//`: left to the general matcher.
                return None;
            }
            if !body.iter().any(is_meta) {
                if anchored || body.contains(&b'/') {
                    s.paths.add(body, rule);
                } else {
                    s.names.add(body, rule);
                }
            } else {
                let rest = body.strip_prefix(b"*")?;
                if anchored || rest.iter().any(|b| is_meta(b) || *b == b'/') {
                    return None;
                }
                match rest.strip_prefix(b".") {
                    Some(ext) if !ext.is_empty() && !ext.contains(&b'.') => s.exts.add(ext, rule),
                    _ => s.suffixes.push((rest.into(), rule)),
                }
            }
            s.rules += 1;
        }
        Some(s)
    }

    /// The last rule that matches the entry, `rel` being its path relative to the file's
    /// directory (`None`: no path rule has its length), `names` whether to try the
    /// rules of names, extensions and endings.
    #[inline]
    fn matched(&self, s: &Subject<'_>, rel: Option<&[u8]>, names: bool) -> Verdict {
        let mut best: Option<Rule> = None;
        let mut consider = |r: Option<Rule>| {
            if let Some(r) = r {
                if best.is_none_or(|b| r.index > b.index) {
                    best = Some(r);
                }
            }
        };
        if names {
            consider(self.names.last(s.name, s.is_dir));
            if self.exts.lens != 0 {
                // The last dot is looked for only as far back as the longest extension.
                let longest = 63 - self.exts.lens.leading_zeros() as usize;
                let from = if longest == 63 {
                    0
                } else {
                    s.name.len().saturating_sub(longest + 1)
                };
                if let Some(dot) = s.name[from..].iter().rposition(|&b| b == b'.') {
                    consider(self.exts.last(&s.name[from + dot + 1..], s.is_dir));
                }
            }
            consider(
                self.suffixes
                    .iter()
                    .rev()
                    .find(|(x, r)| r.applies(s.is_dir) && s.name.ends_with(x))
                    .map(|(_, r)| *r),
            );
        }
        if let Some(rel) = rel {
            consider(self.paths.last(rel, s.is_dir));
        }
        match best {
            None => Verdict::None,
            Some(r) if r.keep => Verdict::Keep,
            Some(_) => Verdict::Ignore,
        }
    }
}

/// One file's rules: see the [module](self).
#[derive(Debug)]
pub(super) enum Matcher {
    Simple(Simple),
    Full(Gitignore),
}

impl Matcher {
    /// Compiles gitignore lines; `from` names the file in the `ignore` crate's matcher;
    /// `icase`: matched without regard to case (git's `core.ignoreCase`). `None` when
    /// the file holds no rule (comments, blank lines).
    pub fn compile(bytes: &[u8], from: &Path, icase: bool) -> Result<Option<Matcher>, String> {
        // A byte order mark at the start is not part of the first rule (git skips it too).
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        // A file that is not UTF-8 goes to the general matcher (which reads it lossily),
        // as do rules matched without regard to case.
        if let (Ok(text), false) = (std::str::from_utf8(bytes), icase) {
            if let Some(s) = Simple::parse(text) {
                return Ok((s.rules > 0).then_some(Matcher::Simple(s)));
            }
        }
        let g = compile_full(bytes, from, icase)?;
        Ok((!g.is_empty()).then_some(Matcher::Full(g)))
    }

    /// Whether [`Matcher::matched`] needs the path of an entry whose path relative to
    /// the file's directory has `len` bytes.
    #[inline]
    pub fn wants_path(&self, len: usize) -> bool {
        match self {
            Matcher::Simple(simple) => simple.paths.lens & len_bit(len) != 0,
            Matcher::Full(_) => true,
        }
    }

    /// What the rules say of the entry `s`, whose path relative to the file's directory
    /// is `rel`, which may be `None` where [`Matcher::wants_path`] says it is not
    /// needed. Without `names`, the caller knows that the rules of names, extensions
    /// and endings of this file of simple rules say nothing of the entry.
    #[inline]
    pub fn matched(&self, s: &Subject<'_>, rel: Option<&[u8]>, names: bool) -> Verdict {
        match self {
            Matcher::Simple(simple) => simple.matched(s, rel, names),
            Matcher::Full(g) => match g.matched(as_path(rel.unwrap_or(s.name)), s.is_dir) {
                Match::None => Verdict::None,
                Match::Ignore(_) => Verdict::Ignore,
                Match::Whitelist(_) => Verdict::Keep,
            },
        }
    }
}

/// Compiles gitignore lines with the `ignore` crate. The matcher's root is `/`, so that
/// no relative path given to it is ever taken as starting with its root: paths are made
/// relative by the caller.
pub(super) fn compile_full(bytes: &[u8], from: &Path, icase: bool) -> Result<Gitignore, String> {
    let mut b = GitignoreBuilder::new("/");
    b.case_insensitive(icase).map_err(|e| e.to_string())?;
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    for line in text.lines() {
        // A line git cannot read either is skipped, as git does.
        let _ = b.add_line(Some(from.to_path_buf()), line);
    }
    b.build().map_err(|e| e.to_string())
}

#[cfg(unix)]
pub(super) fn as_path(bytes: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
pub(super) fn as_path(bytes: &[u8]) -> &Path {
    Path::new(std::str::from_utf8(bytes).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(rules: &str, rel: &str, is_dir: bool) -> Verdict {
        let g = compile_full(rules.as_bytes(), Path::new(""), false).unwrap();
        Matcher::Full(g).matched(
            &Subject::new(name_of(rel), is_dir),
            Some(rel.as_bytes()),
            true,
        )
    }

    fn name_of(rel: &str) -> &[u8] {
        rel.rsplit('/').next().unwrap().as_bytes()
    }

    fn compiled(rules: &str, rel: &str, is_dir: bool) -> Verdict {
        match Matcher::compile(rules.as_bytes(), Path::new(""), false).unwrap() {
            None => Verdict::None,
            Some(m) => {
                let s = Subject::new(name_of(rel), is_dir);
                let full = m.matched(&s, Some(rel.as_bytes()), true);
                // The path is asked for whenever a path rule could match.
                if !m.wants_path(rel.len()) {
                    assert_eq!(full, m.matched(&s, None, true), "{rules:?} {rel}");
                }
                // Names said nothing: the path rules alone give the same answer.
                if m.matched(&s, None, true) == Verdict::None {
                    assert_eq!(full, m.matched(&s, Some(rel.as_bytes()), false));
                }
                full
            }
        }
    }

    #[test]
    fn simple_rules_are_recognised_and_others_are_not() {
        let simple = [
            "*.map\n*.d.ts\n!index.d.ts\n__tests__/\n/build\n",
            "node_modules\n# comment\n\n  \n!keep\ntrail   \n",
            "docs/api\n/a/b/\n*\n*~\n!/x\n",
        ];
        for s in simple {
            let m = Matcher::compile(s.as_bytes(), Path::new(""), false).unwrap();
            assert!(matches!(m, Some(Matcher::Simple(_))), "{s:?}");
        }
        let complex = [
            "a*b\n",
            "/*.o\n",
            "**/cache\n",
            "docs/**\n",
            "[ab]1\n",
            "x?\n",
            "\\#hash\n",
            "trail\\ \n",
            "{a,b}\n",
            "*.o\na//b\n",
            "*/x\n",
        ];
        for s in complex {
            let m = Matcher::compile(s.as_bytes(), Path::new(""), false).unwrap();
            assert!(matches!(m, Some(Matcher::Full(_))), "{s:?}");
        }
        assert!(
            Matcher::compile(b"# only\n\n!\n/\n", Path::new(""), false)
                .unwrap()
                .is_none()
        );
    }

    /// The simple matcher says what the `ignore` crate's says, for files of simple rules
    /// drawn at random (each with negations, directory-only and anchored rules) and paths
    /// made of the same names.
    #[test]
    fn simple_rules_match_as_the_general_matcher_does() {
        const RULES: &[&str] = &[
            "*.map",
            "*.d.ts",
            "!index.d.ts",
            "__tests__/",
            "/build",
            "build/",
            "!build",
            "node_modules",
            "!node_modules/",
            "a/b",
            "/a/b/",
            "!a",
            "*~",
            "*",
            "!*.rs",
            "lib.rs",
            "/lib.rs",
            "!/a",
            "x.d.ts",
            ".map",
            "*.",
            "map",
            "b/",
            "trail  ",
        ];
        const NAMES: &[&str] = &[
            "a",
            "b",
            "build",
            "x.map",
            ".map",
            "map",
            "index.d.ts",
            "x.d.ts",
            "d.ts",
            "__tests__",
            "node_modules",
            "lib.rs",
            "main.rs",
            "f~",
            "x.",
            "trail",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut compared = 0;
        for _ in 0..400 {
            let n = 1 + next() % 7;
            let rules: Vec<&str> = (0..n)
                .map(|_| RULES[(next() % RULES.len() as u64) as usize])
                .collect();
            let text = rules.join("\n") + "\n";
            for _ in 0..30 {
                let depth = 1 + next() % 3;
                let rel: Vec<&str> = (0..depth)
                    .map(|_| NAMES[(next() % NAMES.len() as u64) as usize])
                    .collect();
                let rel = rel.join("/");
                for is_dir in [false, true] {
                    assert_eq!(
                        compiled(&text, &rel, is_dir),
                        full(&text, &rel, is_dir),
                        "rules {rules:?}, path {rel}, dir {is_dir}"
                    );
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 400 * 30 * 2);
    }

    #[test]
    fn the_last_matching_rule_decides() {
        let rules = "*.d.ts\n!index.d.ts\n/build\nbuild/\n!build\n";
        assert_eq!(compiled(rules, "x.d.ts", false), Verdict::Ignore);
        assert_eq!(compiled(rules, "index.d.ts", false), Verdict::Keep);
        assert_eq!(compiled(rules, "a/index.d.ts", false), Verdict::Keep);
        // `!build` is last: kept, file or directory, here or deeper.
        assert_eq!(compiled(rules, "build", true), Verdict::Keep);
        assert_eq!(compiled(rules, "a/build", false), Verdict::Keep);
        let rules = "!build\nbuild/\n";
        assert_eq!(compiled(rules, "a/build", true), Verdict::Ignore);
        assert_eq!(compiled(rules, "a/build", false), Verdict::Keep);
        // Anchored: only right below the file's directory.
        assert_eq!(compiled("/build\n", "build", false), Verdict::Ignore);
        assert_eq!(compiled("/build\n", "a/build", false), Verdict::None);
        assert_eq!(compiled("a/b\n", "a/b", false), Verdict::Ignore);
        assert_eq!(compiled("a/b\n", "x/a/b", false), Verdict::None);
    }
}
