//! Name patterns: regular expressions (bytes), globs and fixed strings, compiled into one
//! regular expression matched once per entry.

use crate::walk::Entry;
use regex::bytes::{Regex, RegexBuilder};
use std::fmt;

/// How a pattern is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternKind {
    /// A regular expression (the `regex` crate's syntax), found anywhere in the name.
    Regex,
    /// A glob (`*`, `?`, `[...]`, `{a,b}`), matching the whole name.
    Glob,
    /// A fixed string, found anywhere in the name.
    Fixed,
}

/// Whether letters' case matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Case {
    /// Case matters only in a pattern holding an upper-case letter.
    #[default]
    Smart,
    /// Case always matters.
    Sensitive,
    /// Case never matters.
    Insensitive,
}

/// A pattern that does not compile: the pattern and what is wrong with it.
#[derive(Debug, Clone)]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong, as the parser says it (pointing at the place).
    pub reason: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid pattern '{}': {}", self.pattern, self.reason)
    }
}

impl std::error::Error for PatternError {}

/// What is wrong with the regular expression `pattern`, on one line: the parser's
/// complaint and the character it points at (the regex crate's own message draws a
/// caret under the pattern, over several lines).
fn regex_reason(pattern: &str, e: &regex::Error) -> String {
    let at = |kind: &dyn fmt::Display, span: &regex_syntax::ast::Span| {
        format!("{kind} (at character {})", span.start.column)
    };
    match regex_syntax::Parser::new().parse(pattern) {
        Err(regex_syntax::Error::Parse(p)) => at(p.kind(), p.span()),
        Err(regex_syntax::Error::Translate(t)) => at(t.kind(), t.span()),
        _ => one_line(&e.to_string()),
    }
}

/// A message of several lines made one.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Any of several patterns, matched against an entry's name (or its whole path).
///
/// ```
/// use ftw::filter::{Case, PatternKind, Patterns};
///
/// let p = Patterns::new(
///     &[(PatternKind::Glob, "*.rs".into()), (PatternKind::Regex, "^Make".into())],
///     Case::Smart,
///     false,
/// )?;
/// assert!(p.is_match(b"MAIN.RS"));      // all lower case: case does not matter
/// assert!(p.is_match(b"Makefile"));
/// assert!(!p.is_match(b"makefile"));    // an upper-case letter: case matters
/// # Ok::<(), ftw::filter::PatternError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Patterns {
    re: Regex,
    full_path: bool,
}

impl Patterns {
    /// Compiles `patterns`; an entry matches if any of them does. With `full_path`, they
    /// are matched against the whole path (a glob's `*` then stops at `/`).
    ///
    /// # Errors
    ///
    /// A [`PatternError`] for the first pattern that does not compile (an invalid regular
    /// expression or glob), or when they are too many or too large together for the regex
    /// engine's limits.
    pub fn new(
        patterns: &[(PatternKind, String)],
        case: Case,
        full_path: bool,
    ) -> Result<Patterns, PatternError> {
        let mut parts = Vec::with_capacity(patterns.len());
        for (kind, pattern) in patterns {
            let insensitive = match case {
                Case::Sensitive => false,
                Case::Insensitive => true,
                Case::Smart => !match kind {
                    PatternKind::Regex => regex_has_upper(pattern),
                    // In a glob or a fixed string every letter stands for itself (`\W`
                    // in a glob is a W).
                    PatternKind::Glob | PatternKind::Fixed => {
                        pattern.chars().any(char::is_uppercase)
                    }
                },
            };
            let err = |reason: String| PatternError {
                pattern: pattern.clone(),
                reason,
            };
            let source = match kind {
                PatternKind::Regex => {
                    // Compiled alone first, so that an error points into the pattern as
                    // written.
                    RegexBuilder::new(pattern)
                        .build()
                        .map_err(|e| err(regex_reason(pattern, &e)))?;
                    pattern.clone()
                }
                PatternKind::Fixed => regex::escape(pattern),
                PatternKind::Glob => globset::GlobBuilder::new(pattern)
                    .literal_separator(full_path)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| err(e.kind().to_string()))?
                    .regex()
                    .to_string(),
            };
            let flags = if insensitive { "(?i)" } else { "" };
            parts.push(format!("(?:{flags}{source})"));
        }
        let re = RegexBuilder::new(&parts.join("|"))
            .build()
            .map_err(|e| PatternError {
                pattern: patterns
                    .iter()
                    .map(|(_, p)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                reason: one_line(&e.to_string()),
            })?;
        Ok(Patterns { re, full_path })
    }

    /// Whether `subject` (a name, or a path with `full_path`) matches.
    pub fn is_match(&self, subject: &[u8]) -> bool {
        self.re.is_match(subject)
    }

    /// Whether the entry matches: its name, or its path (built in `scratch`).
    pub fn matches(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        if self.full_path {
            scratch.clear();
            e.write_path(scratch);
            self.re.is_match(scratch)
        } else {
            self.re.is_match(e.name())
        }
    }
}

/// Whether a regular expression holds an upper-case letter that stands for itself: a
/// literal, alone or in a class (`[A-Z]`), not a letter of an escape (`\W`, `\S`,
/// `\B`), of a class name (`\p{Greek}`, `[[:upper:]]`) or of a flag. A pattern that
/// does not parse is looked at as text (its error is reported anyway).
fn regex_has_upper(pattern: &str) -> bool {
    use regex_syntax::ast::{Ast, ClassSet, ClassSetItem};
    fn ast(a: &Ast) -> bool {
        match a {
            Ast::Literal(l) => l.c.is_uppercase(),
            Ast::ClassBracketed(c) => set(&c.kind),
            Ast::Repetition(r) => ast(&r.ast),
            Ast::Group(g) => ast(&g.ast),
            Ast::Alternation(alt) => alt.asts.iter().any(ast),
            Ast::Concat(c) => c.asts.iter().any(ast),
            Ast::Empty(_)
            | Ast::Flags(_)
            | Ast::Dot(_)
            | Ast::Assertion(_)
            | Ast::ClassUnicode(_)
            | Ast::ClassPerl(_) => false,
        }
    }
    fn set(s: &ClassSet) -> bool {
        match s {
            ClassSet::Item(i) => item(i),
            ClassSet::BinaryOp(op) => set(&op.lhs) || set(&op.rhs),
        }
    }
    fn item(i: &ClassSetItem) -> bool {
        match i {
            ClassSetItem::Literal(l) => l.c.is_uppercase(),
            ClassSetItem::Range(r) => r.start.c.is_uppercase() || r.end.c.is_uppercase(),
            ClassSetItem::Bracketed(b) => set(&b.kind),
            ClassSetItem::Union(u) => u.items.iter().any(item),
            ClassSetItem::Empty(_)
            | ClassSetItem::Ascii(_)
            | ClassSetItem::Unicode(_)
            | ClassSetItem::Perl(_) => false,
        }
    }
    match regex_syntax::ast::parse::Parser::new().parse(pattern) {
        Ok(a) => ast(&a),
        Err(_) => pattern.chars().any(char::is_uppercase),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(kind: PatternKind, p: &str, case: Case) -> Patterns {
        Patterns::new(&[(kind, p.into())], case, false).unwrap()
    }

    #[test]
    fn a_bad_pattern_is_told_on_one_line_with_the_place() {
        let bad = |kind, p: &str| {
            let Err(e) = Patterns::new(&[(kind, p.into())], Case::Smart, false) else {
                panic!("{p}: a bad pattern");
            };
            assert_eq!(e.pattern, p);
            e.to_string()
        };
        assert_eq!(
            bad(PatternKind::Regex, "ab["),
            "invalid pattern 'ab[': unclosed character class (at character 3)"
        );
        assert_eq!(
            bad(PatternKind::Regex, "x\\p{Nope}"),
            "invalid pattern 'x\\p{Nope}': Unicode property not found (at character 2)"
        );
        for (kind, p) in [(PatternKind::Regex, "a{2,1}"), (PatternKind::Glob, "[")] {
            let e = bad(kind, p);
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn kinds_and_case() {
        let g = one(PatternKind::Glob, "*.[ch]", Case::Smart);
        assert!(g.is_match(b"x.c") && g.is_match(b"X.H") && !g.is_match(b"x.cc"));
        let f = one(PatternKind::Fixed, "a.b", Case::Smart);
        assert!(f.is_match(b"xa.by") && !f.is_match(b"axb"));
        let r = one(PatternKind::Regex, "a.b", Case::Sensitive);
        assert!(r.is_match(b"axb") && !r.is_match(b"AXB"));
        let i = one(PatternKind::Regex, "Foo", Case::Insensitive);
        assert!(i.is_match(b"foo"));
        // Names need not be UTF-8.
        let b = one(PatternKind::Glob, "bad*", Case::Smart);
        assert!(b.is_match(b"bad\xff\xfe"));
        let path = Patterns::new(
            &[(PatternKind::Glob, "*/src/*.rs".into())],
            Case::Smart,
            true,
        )
        .unwrap();
        assert!(path.is_match(b"./src/lib.rs") && !path.is_match(b"./src/a/lib.rs"));
    }

    #[test]
    fn smart_case_counts_only_upper_case_letters_that_stand_for_themselves() {
        // Escapes and class names: still insensitive.
        for (p, name) in [
            (r"\Wfoo", "-FOO"),
            (r"\Sfoo", "XFOO"),
            (r"\Dfoo", "XFOO"),
            (r"\Boo", "FOO"),
            (r"\P{Greek}foo", "-FOO"),
            (r"[[:upper:]]foo", "XFOO"),
            (r"(?-u:\W)foo", "-FOO"),
        ] {
            assert!(!regex_has_upper(p), "{p}");
            let r = one(PatternKind::Regex, p, Case::Smart);
            assert!(r.is_match(name.as_bytes()), "{p} on {name}");
        }
        // Upper-case literals, in classes too: sensitive.
        for p in [r"\WFoo", r"[A-Z]oo", r"F\.oo", r"[^a-cX]"] {
            assert!(regex_has_upper(p), "{p}");
        }
        let r = one(PatternKind::Regex, r"\WFoo", Case::Smart);
        assert!(r.is_match(b"-Foo") && !r.is_match(b"-FOO") && !r.is_match(b"-foo"));
        let r = one(PatternKind::Regex, "[A-C]x", Case::Smart);
        assert!(r.is_match(b"Bx") && !r.is_match(b"bx"));
        // In a glob, `\W` is a W.
        let g = one(PatternKind::Glob, r"\Wx", Case::Smart);
        assert!(g.is_match(b"Wx") && !g.is_match(b"wx"));
    }

    #[test]
    fn errors_name_the_pattern() {
        let e =
            Patterns::new(&[(PatternKind::Regex, "a(b".into())], Case::Smart, false).unwrap_err();
        assert_eq!(e.pattern, "a(b");
        assert!(e.reason.contains("unclosed group"), "{}", e.reason);
        let e =
            Patterns::new(&[(PatternKind::Glob, "[ab".into())], Case::Smart, false).unwrap_err();
        assert!(e.reason.contains("unclosed"), "{}", e.reason);
    }
}
