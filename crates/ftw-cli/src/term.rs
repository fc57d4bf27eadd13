//! The terminal rules, written once for every command: how a name is shown on a
//! terminal (escaped), in a message (always escaped), and in colour (`--color`,
//! `NO_COLOR`, `LS_COLORS`).
//!
//! The escaping style: a name's printable characters as they are; `\n`, `\t`, `\r` for
//! those controls; `\\` for a backslash (so that an escape in a name cannot pass for
//! one made here); `\xNN` for every other control byte (ESC is `\x1b`, DEL `\x7f`, the
//! C1 controls `\xc2\x9b`...) and for each byte that is not UTF-8 (on Windows a
//! backslash is shown as it is: it is the separator there, in no name); `\u{202e}` for the
//! bidirectional controls, which would turn the rest of a line around, and `\u{2028}`,
//! `\u{2029}` for the line and paragraph separators. In a message an empty path is
//! shown as `''`.

use clap::{Args, ValueEnum};
use ftw::sys::{FileType, StatMask};
use ftw::walk::Entry;
use lscolors::{Indicator, LsColors};
use std::io::IsTerminal;

/// Whether `b` is shown as it is: printable ASCII other than the backslash (on Windows,
/// the backslash too). A name of such bytes alone (the common case) is copied without a
/// second look.
#[inline]
fn plain_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && (b != b'\\' || cfg!(windows))
}

/// Appends `name` escaped (see the module's documentation).
pub fn escape_into(name: &[u8], out: &mut Vec<u8>) {
    if name.iter().all(|&b| plain_byte(b)) {
        out.extend_from_slice(name);
        return;
    }
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.extend_from_slice(b"\\n"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\\' if !cfg!(windows) => out.extend_from_slice(b"\\\\"),
                // Bidirectional controls (a name's U+202E would turn the rest of its
                // line around on the screen) and the line and paragraph separators
                // (one name, one line): as \u{...}.
                c if unsafe_format_char(c) => {
                    out.extend_from_slice(format!("\\u{{{:x}}}", u32::from(c)).as_bytes())
                }
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        hex(b, out);
                    }
                }
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        for &b in chunk.invalid() {
            hex(b, out);
        }
    }
}

/// Whether `c` is a bidirectional control (U+061C, U+200E, U+200F, U+202A..U+202E,
/// U+2066..U+2069) or the line or paragraph separator (U+2028, U+2029): characters
/// that are not controls to Unicode but move or break a line on the screen.
pub fn unsafe_format_char(c: char) -> bool {
    matches!(
        c,
        '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

fn hex(b: u8, out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[
        b'\\',
        b'x',
        DIGITS[usize::from(b >> 4)],
        DIGITS[usize::from(b & 15)],
    ]);
}

/// `name` escaped, as a string (always valid UTF-8).
pub fn escape(name: &[u8]) -> String {
    let mut out = Vec::with_capacity(name.len());
    escape_into(name, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A path as a message shows it: escaped, and `''` when empty.
pub fn quote(path: &[u8]) -> String {
    if path.is_empty() {
        "''".into()
    } else {
        escape(path)
    }
}

/// When to colour names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum When {
    /// When standard output is a terminal and NO_COLOR is unset or empty.
    Auto,
    /// Always (NO_COLOR does not matter).
    Always,
    /// Never.
    Never,
}

/// The `--color` option, shared by the commands that print names.
#[derive(Args, Clone, Debug)]
pub struct ColorArg {
    /// Colour names by LS_COLORS (ls's default palette when it is unset): auto (on a
    /// terminal, unless NO_COLOR is set to something), always, never.
    #[arg(long = "color", value_name = "WHEN", default_value = "auto")]
    pub color: When,
}

impl When {
    /// Whether to colour, standard output being a terminal or not (no-color.org: a
    /// non-empty NO_COLOR turns off colours that the user did not ask for).
    pub fn colors(self, terminal: bool) -> bool {
        match self {
            When::Always => true,
            When::Never => false,
            When::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// How names are written to standard output: as they are (piped, without colours),
/// escaped (on a terminal), coloured or both.
pub struct Names {
    escape: bool,
    colors: Option<Colors>,
}

impl Names {
    /// The rules for standard output: escaped on a terminal, coloured as `when` says.
    pub fn stdout(when: When) -> Names {
        let terminal = std::io::stdout().is_terminal();
        Names::new(terminal, when.colors(terminal))
    }

    /// Names escaped or not, coloured (by `LS_COLORS`) or not.
    pub fn new(escape: bool, color: bool) -> Names {
        Names {
            escape,
            colors: color.then(Colors::from_env),
        }
    }

    /// Whether names are written as their bytes, without colours: the fast path.
    #[inline]
    pub fn raw(&self) -> bool {
        !self.escape && self.colors.is_none()
    }

    /// Whether colouring may ask for an entry's metadata (the walk then keeps its
    /// directories' handles).
    pub fn needs_metadata(&self) -> bool {
        self.colors
            .as_ref()
            .is_some_and(|c| c.file_mode || c.dir_mode || c.orphans)
    }

    /// The fields of an entry's own metadata that colouring reads (its mode, its link
    /// count); `TYPE` for none.
    pub fn metadata_mask(&self) -> StatMask {
        match &self.colors {
            Some(c) if (c.file_mode || c.dir_mode) && c.nlink => StatMask::MODE | StatMask::NLINK,
            Some(c) if c.file_mode || c.dir_mode => StatMask::MODE,
            _ => StatMask::TYPE,
        }
    }

    /// Appends bytes of a name or path, escaped on a terminal.
    #[inline]
    pub fn text(&self, bytes: &[u8], out: &mut Vec<u8>) {
        if self.escape {
            escape_into(bytes, out);
        } else {
            out.extend_from_slice(bytes);
        }
    }

    /// Appends an entry's path: its directories in the directory colour, its name in
    /// its own (asking for its metadata only where `LS_COLORS` needs it).
    pub fn entry(&self, e: &Entry<'_>, out: &mut Vec<u8>) {
        let Some(c) = &self.colors else {
            if self.escape {
                let start = out.len();
                e.write_path(out);
                if !out[start..].iter().all(|&b| plain_byte(b)) {
                    let path = out.split_off(start);
                    escape_into(&path, out);
                }
            } else {
                e.write_path(out);
            }
            return;
        };
        let parent = e.parent_path();
        if !parent.is_empty() {
            let painted = c.start(out, c.dir());
            self.text(parent, out);
            if !parent.ends_with(b"/") {
                out.push(b'/');
            }
            c.end(out, painted);
        }
        let painted = c.start(out, c.for_entry(e));
        self.text(e.name(), out);
        c.end(out, painted);
    }

    /// Appends a path whose type is known (from the directory entry: nothing is asked
    /// of the file system, which may no longer have it): `ftw rm -v`, `ftw du`.
    pub fn path(&self, path: &[u8], file_type: FileType, out: &mut Vec<u8>) {
        let Some(c) = &self.colors else {
            self.text(path, out);
            return;
        };
        let cut = path
            .iter()
            .rposition(|&b| b == b'/')
            .filter(|&i| i + 1 < path.len())
            .map_or(0, |i| i + 1);
        let (parent, name) = path.split_at(cut);
        if !parent.is_empty() {
            let painted = c.start(out, c.dir());
            self.text(parent, out);
            c.end(out, painted);
        }
        self.name(name, file_type, out);
    }

    /// Appends `text` (a name already escaped and fitted: the tree view) in the colour
    /// of its type.
    pub fn paint(&self, text: &str, file_type: FileType, name: &[u8], out: &mut Vec<u8>) {
        let style = self
            .colors
            .as_ref()
            .and_then(|c| c.for_type(name, file_type));
        match (&self.colors, style) {
            (Some(c), style) => {
                let painted = c.start(out, style);
                out.extend_from_slice(text.as_bytes());
                c.end(out, painted);
            }
            (None, _) => out.extend_from_slice(text.as_bytes()),
        }
    }

    /// Appends a name coloured by its type alone (no metadata asked for).
    pub fn name(&self, name: &[u8], file_type: FileType, out: &mut Vec<u8>) {
        let Some(c) = &self.colors else {
            self.text(name, out);
            return;
        };
        let painted = c.start(out, c.for_type(name, file_type));
        self.text(name, out);
        c.end(out, painted);
    }
}

/// The escape sequences of `LS_COLORS` (the crate `lscolors` reads it, with `ls`'s
/// default palette underneath), rendered once.
struct Colors {
    ls: LsColors,
    /// Tells this palette's suffix styles from another's in [`SUFFIXES`].
    generation: usize,
    /// Each indicator's sequence, `None` where it has no colour.
    dir: Option<Vec<u8>>,
    link: Option<Vec<u8>>,
    orphan: Option<Vec<u8>>,
    file: Option<Vec<u8>>,
    exec: Option<Vec<u8>>,
    setuid: Option<Vec<u8>>,
    setgid: Option<Vec<u8>>,
    many_links: Option<Vec<u8>>,
    sticky_other_writable: Option<Vec<u8>>,
    other_writable: Option<Vec<u8>>,
    sticky: Option<Vec<u8>>,
    fifo: Option<Vec<u8>>,
    socket: Option<Vec<u8>>,
    block: Option<Vec<u8>>,
    char: Option<Vec<u8>>,
    /// Whether a regular file's colour needs its mode (or link count): `su`, `sg`,
    /// `ex` or `mh` is coloured.
    file_mode: bool,
    /// Whether a directory's needs its mode: `tw`, `ow` or `st` is coloured.
    dir_mode: bool,
    /// Whether a link's needs to know if its target is there: `or` is coloured.
    orphans: bool,
    /// Whether `mh` is coloured (the link count is asked for too).
    nlink: bool,
}

const RESET: &[u8] = b"\x1b[0m";

impl Colors {
    /// From `LS_COLORS`, or `ls`'s default palette when it is unset or empty.
    fn from_env() -> Colors {
        let ls = std::env::var("LS_COLORS")
            .ok()
            .filter(|s| !s.is_empty())
            .map_or_else(LsColors::default, |s| LsColors::from_string(&s));
        Colors::new(ls)
    }

    fn new(ls: LsColors) -> Colors {
        let seq = |i: Indicator| {
            ls.style_for_indicator(i)
                .map(|s| s.to_nu_ansi_term_style().prefix().to_string().into_bytes())
                .filter(|s| !s.is_empty())
        };
        // Coloured, as `ls` says it: given, and not as plain as "00".
        let colored = |i: Indicator| ls.has_explicit_style_for(i);
        static GENERATION: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        Colors {
            generation: GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            dir: seq(Indicator::Directory),
            link: seq(Indicator::SymbolicLink),
            orphan: seq(Indicator::OrphanedSymbolicLink),
            file: seq(Indicator::RegularFile),
            exec: seq(Indicator::ExecutableFile),
            setuid: seq(Indicator::Setuid),
            setgid: seq(Indicator::Setgid),
            many_links: seq(Indicator::MultipleHardLinks),
            sticky_other_writable: seq(Indicator::StickyAndOtherWritable),
            other_writable: seq(Indicator::OtherWritable),
            sticky: seq(Indicator::Sticky),
            fifo: seq(Indicator::FIFO),
            socket: seq(Indicator::Socket),
            block: seq(Indicator::BlockDevice),
            char: seq(Indicator::CharacterDevice),
            file_mode: colored(Indicator::Setuid)
                || colored(Indicator::Setgid)
                || colored(Indicator::ExecutableFile)
                || colored(Indicator::MultipleHardLinks),
            dir_mode: colored(Indicator::StickyAndOtherWritable)
                || colored(Indicator::OtherWritable)
                || colored(Indicator::Sticky),
            orphans: colored(Indicator::OrphanedSymbolicLink),
            nlink: colored(Indicator::MultipleHardLinks),
            ls,
        }
    }

    /// Writes the sequence that starts `paint`, if any; says whether it wrote one (and
    /// [`Colors::end`] must reset).
    #[inline]
    fn start(&self, out: &mut Vec<u8>, paint: Option<Paint<'_>>) -> bool {
        match paint {
            None => false,
            Some(Paint::Seq(s)) => {
                out.extend_from_slice(s);
                true
            }
            Some(Paint::Suffix(style)) => self.suffix_seq(style, out),
        }
    }

    /// Resets the colour after a name, if [`Colors::start`] set one.
    #[inline]
    fn end(&self, out: &mut Vec<u8>, painted: bool) {
        if painted {
            out.extend_from_slice(RESET);
        }
    }

    /// A directory's paint (`di`).
    fn dir(&self) -> Option<Paint<'_>> {
        self.dir.as_deref().map(Paint::Seq)
    }

    /// A regular file's colour by its name's suffix (`*.tar=...`), else `fi`'s.
    fn by_suffix(&self, name: &[u8]) -> Option<Paint<'_>> {
        // The suffix is looked for in the name's UTF-8 tail (after any byte that is not).
        let tail = match name.utf8_chunks().last() {
            Some(c) if c.invalid().is_empty() => c.valid(),
            _ => "",
        };
        if !tail.is_empty() {
            if let Some(style) = self.ls.style_for_str(tail) {
                return Some(Paint::Suffix(style));
            }
        }
        self.file.as_deref().map(Paint::Seq)
    }

    /// Writes the sequence of a suffix's style, rendered once per thread and kept while
    /// this palette is the one in use (a few: one per distinct style met), so that
    /// nothing is allocated and no lock is taken per entry. False if the style is
    /// plain (nothing written).
    fn suffix_seq(&self, style: &lscolors::Style, out: &mut Vec<u8>) -> bool {
        SUFFIXES.with_borrow_mut(|(generation, seen)| {
            if *generation != self.generation {
                *generation = self.generation;
                seen.clear();
            }
            let key = style as *const lscolors::Style as usize;
            let seq = seen.entry(key).or_insert_with(|| {
                let s = style.to_nu_ansi_term_style().prefix().to_string();
                s.into_bytes().into_boxed_slice()
            });
            out.extend_from_slice(seq);
            !seq.is_empty()
        })
    }

    /// The colour of an entry of the walk: from its type, and where `LS_COLORS` asks
    /// for more, from its mode, link count or target.
    fn for_entry(&self, e: &Entry<'_>) -> Option<Paint<'_>> {
        match e.file_type() {
            FileType::File if self.file_mode => {
                let mask = if self.nlink {
                    StatMask::MODE | StatMask::NLINK
                } else {
                    StatMask::MODE
                };
                if let Ok(m) = e.metadata(mask) {
                    if self.setuid.is_some() && m.mode & 0o4000 != 0 {
                        return self.setuid.as_deref().map(Paint::Seq);
                    }
                    if self.setgid.is_some() && m.mode & 0o2000 != 0 {
                        return self.setgid.as_deref().map(Paint::Seq);
                    }
                    if self.exec.is_some() && m.mode & 0o111 != 0 {
                        return self.exec.as_deref().map(Paint::Seq);
                    }
                    if self.many_links.is_some() && m.nlink > 1 {
                        return self.many_links.as_deref().map(Paint::Seq);
                    }
                }
                self.by_suffix(e.name())
            }
            FileType::Dir if self.dir_mode => {
                if let Ok(m) = e.metadata(StatMask::MODE) {
                    if self.sticky_other_writable.is_some() && m.mode & 0o1002 == 0o1002 {
                        return self.sticky_other_writable.as_deref().map(Paint::Seq);
                    }
                    if self.other_writable.is_some() && m.mode & 0o002 != 0 {
                        return self.other_writable.as_deref().map(Paint::Seq);
                    }
                    if self.sticky.is_some() && m.mode & 0o1000 != 0 {
                        return self.sticky.as_deref().map(Paint::Seq);
                    }
                }
                self.dir()
            }
            FileType::Symlink if self.orphans => {
                let seq = if target_exists(e) {
                    &self.link
                } else {
                    &self.orphan
                };
                seq.as_deref().map(Paint::Seq)
            }
            t => self.for_type(e.name(), t),
        }
    }

    /// The colour told by the type alone.
    fn for_type(&self, name: &[u8], file_type: FileType) -> Option<Paint<'_>> {
        let seq = match file_type {
            FileType::File => return self.by_suffix(name),
            FileType::Dir => &self.dir,
            FileType::Symlink => &self.link,
            FileType::Fifo => &self.fifo,
            FileType::Socket => &self.socket,
            FileType::BlockDevice => &self.block,
            FileType::CharDevice => &self.char,
            FileType::Unknown => return None,
        };
        seq.as_deref().map(Paint::Seq)
    }
}

/// What a name is painted with: an indicator's sequence, or the style of its suffix
/// (rendered by [`Colors::suffix_seq`]).
#[derive(Clone, Copy)]
enum Paint<'a> {
    Seq(&'a [u8]),
    Suffix(&'a lscolors::Style),
}

/// Rendered suffix styles, by the style's address in the palette whose generation is
/// the first field.
type Rendered = (usize, std::collections::HashMap<usize, Box<[u8]>>);

thread_local! {
    /// Each thread's rendered suffix styles ([`Colors::suffix_seq`]).
    static SUFFIXES: std::cell::RefCell<Rendered> = std::cell::RefCell::default();
}

/// A word as a shell reads it back: bare when it holds nothing special, else quoted.
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./+,:=@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Whether a link not followed leads somewhere (what `LS_COLORS`'s `or` asks).
fn target_exists(e: &Entry<'_>) -> bool {
    match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.stat_at(name, StatMask::TYPE, true).is_ok(),
        _ => ftw::sys::stat_path(&e.path(), StatMask::TYPE, true).is_ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_escaped() {
        assert_eq!(escape(b"plain name.rs"), "plain name.rs");
        assert_eq!(escape(b"a\nb"), "a\\nb");
        assert_eq!(escape(b"\x1b[31mred"), "\\x1b[31mred");
        assert_eq!(escape(b"caf\xc3\xa9 \xff"), "café \\xff");
        assert_eq!(escape("\u{9b}".as_bytes()), "\\xc2\\x9b");
        // A backslash is doubled, but on Windows, where it is the separator.
        let bs = if cfg!(windows) { "a\\x1b" } else { "a\\\\x1b" };
        assert_eq!(escape(b"a\\x1b"), bs);
        assert_eq!(escape(b"del\x7f"), "del\\x7f");
        assert_eq!(escape("\u{202e}txt".as_bytes()), "\\u{202e}txt");
        assert_eq!(
            escape("a\u{2028}b\u{2029}".as_bytes()),
            "a\\u{2028}b\\u{2029}"
        );
        assert_eq!(quote(b""), "''");
    }

    #[test]
    fn colours_follow_ls_colors() {
        let c = Colors::new(LsColors::from_string("di=01;34:ln=36:ex=32:*.tar=31:mh=00"));
        let seq = |name: &[u8], t| {
            let mut out = Vec::new();
            c.start(&mut out, c.for_type(name, t));
            out
        };
        assert_eq!(seq(b"x", FileType::Dir), b"\x1b[1;34m");
        assert_eq!(seq(b"x", FileType::Symlink), b"\x1b[36m");
        assert_eq!(seq(b"a.tar", FileType::File), b"\x1b[31m");
        assert_eq!(
            seq(b"a.tar", FileType::File),
            b"\x1b[31m",
            "again, from the cache"
        );
        assert!(c.file_mode, "ex is coloured: files need their mode");
        assert!(!c.nlink, "mh=00 is not a colour");
        let plain = Colors::new(LsColors::from_string("ex=00:su=00:sg=00:tw=00:ow=00:st=00"));
        assert!(!plain.file_mode && !plain.dir_mode);
    }
}
