//! `ftw find --order paths|emacs`: the whole tree read first (on every thread), then
//! printed in an order that needs all of a directory's entries, and its
//! subdirectories' too, before anything of it is printed.
//!
//! - `paths`: the order of the whole paths compared as strings (what `sort` of the
//!   paths gives in Emacs, and, for UTF-8 names, `LC_ALL=C sort`): a directory's
//!   contents come where the paths that begin with its name and a '/' sort, which is not
//!   always right after it (`a`, `a-b`, `a/z`).
//! - `emacs`: the order of Emacs's `directory-files-recursively`: in each directory, its
//!   subdirectories first, each one's contents then the subdirectory itself, then the
//!   other entries; a symbolic link to a directory counts as one (it is entered only
//!   with -L), as `file-name-all-completions` marks it.
//!
//! Names are compared as Emacs's `string<` compares them once decoded from UTF-8: by
//! code point, a byte that is not part of a sequence Emacs decodes (invalid, overlong, a
//! surrogate) after every character; a directory's name with a '/' after it.

use crate::msg::walk_error;
use crate::output::{Closed, Output};
use crate::select::Select;
use ftw::sys::{FileType, StatMask};
use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
use std::cmp::Ordering as Cmp;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

/// The orders `--order` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// As the whole paths sort as strings (directories' contents where "NAME/" sorts)
    Paths,
    /// As Emacs's directory-files-recursively: subdirectories first, each one's
    /// contents before it, then the other entries; links to directories count as
    /// directories
    Emacs,
}

/// How each path is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// The bytes, then this byte.
    Ended(u8),
    /// An Emacs Lisp string on a line of its own: `"`, the bytes with `"` and `\`
    /// escaped and a newline written `\n`, `"`; the whole a list, `(` first and `)`
    /// last.
    Lisp,
    /// Emacs Lisp lists, one a line, one per run of entries of a directory: the
    /// directory's path and a '/', then the names, each a string as in `Lisp`.
    LispGroups,
}

/// Appends `bytes` to `buf` as the inside of an Emacs Lisp string.
fn quote(buf: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'"' | b'\\' => buf.extend_from_slice(&[b'\\', b]),
            b'\n' => buf.extend_from_slice(b"\\n"),
            _ => buf.push(b),
        }
    }
}

/// One entry of a directory, its name in the directory's arena.
struct Child {
    start: u32,
    len: u32,
    /// A directory, or a link to one (`emacs`) / a directory that was entered (`paths`).
    dir: bool,
    /// Chosen by the filters.
    print: bool,
    /// Its name is all ASCII (compared as bytes).
    ascii: bool,
}

/// A directory read: its entries, and the subdirectories entered with what they hold.
#[derive(Default)]
pub struct Node {
    names: Vec<u8>,
    children: Vec<Child>,
    subs: Vec<(Box<[u8]>, Node)>,
}

impl Node {
    fn name(&self, c: &Child) -> &[u8] {
        &self.names[c.start as usize..(c.start + c.len) as usize]
    }
}

/// Emacs's utf-8 decoder, one character at a time: the code of the character at the
/// start of `s` and its length in bytes; a byte it does not decode is 0x3FFF00 + byte
/// (Emacs's raw-byte characters).
fn emacs_char(s: &[u8]) -> (u32, usize) {
    let c1 = s[0] as u32;
    let raw = (if c1 < 0x80 { c1 } else { 0x3F_FF00 + c1 }, 1);
    if c1 < 0x80 {
        return raw;
    }
    let more = |i: usize| s.get(i).map(|&b| b as u32).filter(|b| b & 0xC0 == 0x80);
    let Some(c2) = more(1) else { return raw };
    if c1 & 0xE0 == 0xC0 {
        let c = ((c1 & 0x1F) << 6) | (c2 & 0x3F);
        return if c < 0x80 { raw } else { (c, 2) };
    }
    let Some(c3) = more(2) else { return raw };
    if c1 & 0xF0 == 0xE0 {
        let c = ((c1 & 0xF) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F);
        return if c < 0x800 || (0xD800..0xE000).contains(&c) {
            raw
        } else {
            (c, 3)
        };
    }
    let Some(c4) = more(3) else { return raw };
    if c1 & 0xF8 == 0xF0 {
        let c = ((c1 & 0x7) << 18) | ((c2 & 0x3F) << 12) | ((c3 & 0x3F) << 6) | (c4 & 0x3F);
        return if c < 0x1_0000 { raw } else { (c, 4) };
    }
    let Some(c5) = more(4) else { return raw };
    if c1 & 0xFC == 0xF8 {
        let c = ((c1 & 0x3) << 24)
            | ((c2 & 0x3F) << 18)
            | ((c3 & 0x3F) << 12)
            | ((c4 & 0x3F) << 6)
            | (c5 & 0x3F);
        return if !(0x20_0000..=0x3F_FFFF).contains(&c) {
            raw
        } else {
            (c, 5)
        };
    }
    raw
}

/// The characters of `name` as Emacs decodes it, and a '/' after them if `slash`.
fn chars(name: &[u8], slash: bool) -> impl Iterator<Item = u32> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i < name.len() {
            let (c, n) = emacs_char(&name[i..]);
            i += n;
            Some(c)
        } else {
            None
        }
    })
    .chain(slash.then_some(b'/' as u32))
}

/// Compares two names as Emacs's `string<` compares them decoded (see the module's
/// comment), each with a '/' after it if it is a directory's.
pub fn compare(
    a: &[u8],
    a_slash: bool,
    a_ascii: bool,
    b: &[u8],
    b_slash: bool,
    b_ascii: bool,
) -> Cmp {
    if a_ascii && b_ascii {
        let a = a.iter().copied().chain(a_slash.then_some(b'/'));
        return a.cmp(b.iter().copied().chain(b_slash.then_some(b'/')));
    }
    chars(a, a_slash).cmp(chars(b, b_slash))
}

/// Adds an entry to a directory's node.
fn push(dir: &Mutex<Node>, name: &[u8], is_dir: bool, print: bool) {
    let mut node = dir.lock().unwrap_or_else(|p| p.into_inner());
    let start = node.names.len() as u32;
    node.names.extend_from_slice(name);
    node.children.push(Child {
        start,
        len: name.len() as u32,
        dir: is_dir,
        print,
        ascii: name.is_ascii(),
    });
}

/// Whether the error about `path` (named `name` in the directory of node `dir`) is
/// an entry the walk could not give: a symbolic link whose target cannot be had, or
/// one that cannot even be looked at (its directory cannot be searched) and is not
/// already there (a directory that could not be opened is).
fn lost(path: &Path, name: &[u8], dir: &Mutex<Node>) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_symlink() && std::fs::metadata(path).is_err(),
        Err(e) => {
            e.kind() == std::io::ErrorKind::PermissionDenied && {
                let node = dir.lock().unwrap_or_else(|p| p.into_inner());
                !node.children.iter().any(|c| node.name(c) == name)
            }
        }
    }
}

/// The visitor: fills each directory's node, and hands it to its parent's on leaving.
struct Collect<'a> {
    order: Order,
    select: &'a Select,
    scratch: Vec<u8>,
    failed: &'a AtomicBool,
    root: &'a Mutex<Option<Node>>,
}

impl Visitor for Collect<'_> {
    type State = Mutex<Node>;

    fn enter(&mut self, _: &DirEvent<'_>, _: Option<&Mutex<Node>>) -> Mutex<Node> {
        Mutex::new(Node::default())
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&Mutex<Node>>) -> Control {
        let e = match item {
            Ok(e) => e,
            Err(err) => {
                // An entry whose type cannot be had (with -L, a link whose target
                // cannot: dangling, unreachable, a loop of links; in a directory that
                // can be read but not searched, any that needs a stat) is listed as a
                // link that dangles is: not a directory, as Emacs sees it.
                if let Some(dir) = dir {
                    let path = crate::os::bytes(err.path().as_os_str()).into_owned();
                    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(&[]);
                    if err.depth() > 0
                        && err.loop_ancestor().is_none()
                        && lost(err.path(), name, dir)
                    {
                        push(dir, name, false, self.select.takes_all());
                        return Control::Continue;
                    }
                }
                walk_error(&err, self.failed);
                return Control::Continue;
            }
        };
        let Some(dir) = dir else {
            // A root: never printed.
            return Control::Continue;
        };
        let (print, control) = self.select.decide(&mut { *e }, &mut self.scratch);
        let is_dir = e.is_dir()
            || (self.order == Order::Emacs
                && e.file_type() == FileType::Symlink
                && match (e.dir(), e.c_name()) {
                    (Some(d), Some(name)) => d
                        .stat_at(name, StatMask::TYPE, true)
                        .is_ok_and(|m| m.file_type == Some(FileType::Dir)),
                    _ => std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()),
                });
        push(dir, e.name(), is_dir, print);
        control
    }

    fn leave(&mut self, d: &DirEvent<'_>, state: Mutex<Node>, parent: Option<&Mutex<Node>>) {
        let node = state.into_inner().unwrap_or_else(|p| p.into_inner());
        match (parent, d.c_name()) {
            (Some(p), Some(name)) => {
                let name = name.to_bytes().to_vec().into_boxed_slice();
                p.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .subs
                    .push((name, node));
            }
            _ => *self.root.lock().unwrap_or_else(|p| p.into_inner()) = Some(node),
        }
    }

    fn wants_handles(&self) -> bool {
        true
    }
}

/// Walks the tree of `b` (one root) and returns what it holds (`None` when the root
/// could not be read: reported).
pub fn collect(b: WalkBuilder, order: Order, select: &Select, failed: &AtomicBool) -> Option<Node> {
    let root = Mutex::new(None);
    b.keep_handles(true).run(|| Collect {
        order,
        select,
        scratch: Vec::new(),
        failed,
        root: &root,
    });
    root.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Writes what `node` holds, below the path `prefix` (the root's path and a '/').
pub struct Printer<'a> {
    pub order: Order,
    pub style: Style,
    /// Print the directories (and, in `emacs` order, links to directories).
    pub dirs: bool,
    /// Write a '/' after a directory's name (and, in `emacs` order, a link to one's).
    pub mark_dirs: bool,
    pub out: &'a mut Output,
    /// Entries still to print (`--max-results`).
    pub left: u64,
    /// `LispGroups`: the directory whose list is open.
    pub group: Option<Vec<u8>>,
}

impl Printer<'_> {
    /// Starts the output (a Lisp list's parenthesis).
    pub fn begin(&mut self) -> Result<(), Closed> {
        if self.style == Style::Lisp {
            self.out.buf().extend_from_slice(b"(\n");
        }
        Ok(())
    }

    /// Ends the output.
    pub fn end(&mut self) -> Result<(), Closed> {
        if self.style == Style::Lisp || self.group.take().is_some() {
            self.out.buf().extend_from_slice(b")\n");
        }
        self.out.flush()
    }

    fn write(&mut self, prefix: &[u8], name: &[u8], dir: bool) -> Result<bool, Closed> {
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        let mark: &[u8] = if dir && self.mark_dirs { b"/" } else { b"" };
        let buf = self.out.buf();
        match self.style {
            Style::Ended(end) => {
                buf.extend_from_slice(prefix);
                buf.extend_from_slice(name);
                buf.extend_from_slice(mark);
                buf.push(end);
            }
            Style::Lisp => {
                buf.push(b'"');
                quote(buf, prefix);
                quote(buf, name);
                buf.extend_from_slice(mark);
                buf.extend_from_slice(b"\"\n");
            }
            Style::LispGroups => {
                if self.group.as_deref() != Some(prefix) {
                    if self.group.is_some() {
                        buf.extend_from_slice(b")\n");
                    }
                    buf.extend_from_slice(b"(\"");
                    quote(buf, prefix);
                    buf.push(b'"');
                    self.group = Some(prefix.to_vec());
                }
                buf.extend_from_slice(b" \"");
                quote(buf, name);
                buf.extend_from_slice(mark);
                buf.push(b'"');
            }
        }
        self.out.end_record()?;
        Ok(true)
    }

    /// Writes `node`'s entries and what is below them; false once `--max-results` is
    /// reached.
    pub fn print(&mut self, node: &mut Node, prefix: &mut Vec<u8>) -> Result<bool, Closed> {
        let order = self.order;
        let mut idx: Vec<usize> = (0..node.children.len()).collect();
        {
            let n = &*node;
            // In `paths` order a directory sorts by its name (it is printed there) and
            // its contents by its name and a '/'; in `emacs` order both by the latter.
            idx.sort_unstable_by(|&i, &j| {
                let (a, b) = (&n.children[i], &n.children[j]);
                compare(
                    n.name(a),
                    a.dir && order == Order::Emacs,
                    a.ascii,
                    n.name(b),
                    b.dir && order == Order::Emacs,
                    b.ascii,
                )
            });
        }
        let mut subs = std::mem::take(&mut node.subs);
        subs.sort_unstable_by(|a, b| {
            compare(&a.0, true, a.0.is_ascii(), &b.0, true, b.0.is_ascii())
        });
        match order {
            Order::Emacs => {
                let mut subs = subs.into_iter().peekable();
                for &i in &idx {
                    let c = &node.children[i];
                    if !c.dir {
                        continue;
                    }
                    let name = node.name(c);
                    // The subdirectory's contents (if it was entered), then itself.
                    if subs.peek().is_some_and(|(s, _)| **s == *name) {
                        let (_, mut sub) = subs.next().expect("peeked");
                        let len = prefix.len();
                        prefix.extend_from_slice(name);
                        prefix.push(b'/');
                        let more = self.print(&mut sub, prefix)?;
                        prefix.truncate(len);
                        if !more {
                            return Ok(false);
                        }
                    }
                    if c.print && self.dirs && !self.write(prefix, name, true)? {
                        return Ok(false);
                    }
                }
                for &i in &idx {
                    let c = &node.children[i];
                    if !c.dir && c.print && !self.write(prefix, node.name(c), false)? {
                        return Ok(false);
                    }
                }
            }
            Order::Paths => {
                // The entries (by name) and the entered directories' contents (by name
                // and '/'), merged.
                let mut subs = subs.into_iter().peekable();
                let mut entries = idx.iter().peekable();
                loop {
                    let take_sub = match (entries.peek(), subs.peek()) {
                        (None, None) => break,
                        (Some(_), None) => false,
                        (None, Some(_)) => true,
                        (Some(&&i), Some((s, _))) => {
                            let c = &node.children[i];
                            compare(node.name(c), false, c.ascii, s, true, s.is_ascii())
                                == Cmp::Greater
                        }
                    };
                    if take_sub {
                        let (name, mut sub) = subs.next().expect("peeked");
                        let len = prefix.len();
                        prefix.extend_from_slice(&name);
                        prefix.push(b'/');
                        let more = self.print(&mut sub, prefix)?;
                        prefix.truncate(len);
                        if !more {
                            return Ok(false);
                        }
                    } else {
                        let c = &node.children[*entries.next().expect("peeked")];
                        if c.print
                            && (self.dirs || !c.dir)
                            && !self.write(prefix, node.name(c), c.dir)?
                        {
                            return Ok(false);
                        }
                    }
                }
            }
        }
        Ok(true)
    }
}

/// The prefix of the paths below `root`: the root as given and a '/' (none added after
/// one that ends with '/').
pub fn prefix(root: &Path) -> Vec<u8> {
    let mut p = crate::os::bytes(root.as_os_str()).into_owned();
    if !p.ends_with(b"/") {
        p.push(b'/');
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(a: &[u8], ad: bool, b: &[u8], bd: bool) -> Cmp {
        compare(a, ad, a.is_ascii(), b, bd, b.is_ascii())
    }

    #[test]
    fn names_compare_as_emacs_string_lessp_after_decoding() {
        // A directory's name with a '/' after it.
        assert_eq!(cmp(b"a", true, b"a-b", true), Cmp::Greater);
        assert_eq!(cmp(b"a", false, b"a-b", false), Cmp::Less);
        assert_eq!(cmp(b"ab", false, b"a", true), Cmp::Greater);
        // A raw byte after every character; a lone lead byte is raw.
        assert_eq!(cmp(b"\xc3", false, "é".as_bytes(), false), Cmp::Greater);
        assert_eq!(
            cmp(b"\xff", false, "\u{10ffff}".as_bytes(), false),
            Cmp::Greater
        );
        // Emacs decodes 4-byte sequences up to 0x1FFFFF, rejects surrogates.
        assert_eq!(emacs_char(b"\xf4\x90\x80\x80"), (0x11_0000, 4));
        assert_eq!(emacs_char(b"\xed\xa0\x80"), (0x3F_FFED, 1));
        assert_eq!(emacs_char(b"\xf8\x88\x80\x80\x80"), (0x20_0000, 5));
        assert_eq!(emacs_char(b"\xf8\x87\xbf\xbf\xbf"), (0x3F_FFF8, 1));
        assert_eq!(emacs_char(b"\xc0\x80"), (0x3F_FFC0, 1));
        assert_eq!(emacs_char(b"\xe0\x80\x80"), (0x3F_FFE0, 1));
        assert_eq!(emacs_char("é".as_bytes()), (0xE9, 2));
        assert_eq!(cmp(b"x", false, b"x", false), Cmp::Equal);
        assert_eq!(cmp(b"x", true, b"x", true), Cmp::Equal);
    }
}
