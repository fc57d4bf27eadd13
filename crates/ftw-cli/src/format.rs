//! `ftw find --format TEMPLATE` (a small `find -printf`) and `-l` (a line like `ls -l`):
//! each entry written by a template, with only the metadata the template asks for.

use crate::term::Names as Shown;
use ftw::sys::{FileType, Metadata, StatMask};
use ftw::walk::Entry;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    /// `%p`
    Path,
    /// `%f`
    Name,
    /// `%h`
    Dir,
    /// `%d`
    Depth,
    /// `%y`
    Type,
    /// `%s`
    Size,
    /// `%m`
    ModeOctal,
    /// `%M`
    ModeSymbolic,
    /// `%n`
    Links,
    /// `%u`, `%U`
    User(bool),
    /// `%g`, `%G`
    Group(bool),
    /// `%t`
    Mtime,
    /// `%T@`
    MtimeEpoch,
    /// `%Tk`, `%Ak`, `%Ck`: part `k` of the time of the last modification, access or
    /// change of status (find's letters: strftime's, `@`, `+`).
    TimePart(Time, u8),
    /// `%l`
    Target,
    /// `%P`: the path below the root (empty for a root).
    Below,
    /// `%i`
    Inode,
    /// `%k`: the space allocated, in 1 KiB blocks.
    Kilobytes,
}

/// Which of a file's times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Time {
    Modified,
    Accessed,
    Changed,
}

/// How a directive is laid out: find's (C's `%-W.Ps`, on the text the directive makes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Layout {
    /// `-`: padded on the right.
    left: bool,
    /// `#`: the alternate form (an octal mode with a leading 0).
    alternate: bool,
    /// `0`, `+`, ` `: for the directives find writes as integers (`%d`, `%m`), zeros
    /// to the width, a sign, a space for a sign.
    zero: bool,
    plus: bool,
    space: bool,
    /// At least this many bytes.
    width: usize,
    /// At most this many bytes of the text.
    precision: Option<usize>,
}

impl Layout {
    /// Writes `n` as C's printf writes an integer (`%d`, or `%o` for `octal`) with
    /// these flags, width and precision, as find writes `%d` and `%m`.
    fn integer(&self, out: &mut Vec<u8>, n: u64, octal: bool) {
        let mut digits = if octal {
            format!("{n:o}")
        } else {
            n.to_string()
        };
        match self.precision {
            // A precision is the least number of digits; 0 with 0 writes none.
            Some(0) if n == 0 => digits.clear(),
            Some(p) if p > digits.len() => digits.insert_str(0, &"0".repeat(p - digits.len())),
            _ => {}
        }
        if octal && self.alternate && !digits.starts_with('0') {
            digits.insert(0, '0');
        }
        let sign = match (octal, self.plus, self.space) {
            (false, true, _) => "+",
            (false, false, true) => " ",
            _ => "",
        };
        let len = sign.len() + digits.len();
        let pad = self.width.saturating_sub(len);
        if self.left {
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(digits.as_bytes());
            out.resize(out.len() + pad, b' ');
        } else if self.zero && self.precision.is_none() {
            out.extend_from_slice(sign.as_bytes());
            out.resize(out.len() + pad, b'0');
            out.extend_from_slice(digits.as_bytes());
        } else {
            out.resize(out.len() + pad, b' ');
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(digits.as_bytes());
        }
    }

    /// Lays out what was written to `out` from `start`.
    fn apply(&self, out: &mut Vec<u8>, start: usize) {
        if let Some(p) = self.precision {
            out.truncate(start + p.min(out.len() - start));
        }
        let len = out.len() - start;
        if len < self.width {
            let pad = self.width - len;
            if self.left {
                out.resize(out.len() + pad, b' ');
            } else {
                out.splice(start..start, std::iter::repeat_n(b' ', pad));
            }
        }
    }
}

/// The letters `%T` takes (GNU find's).
const TIME_PARTS: &[u8] = b"@+aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZ%";

/// A compiled template; or the `-l` line.
#[derive(Clone, Debug)]
pub struct Format {
    pieces: Vec<(Piece, Layout)>,
    long: bool,
    mask: Option<StatMask>,
}

const HELP: &str = "%p path, %P path below the root, %f name, %h directory, %d depth, \
                    %y type, %s size, %k KiB allocated, %i inode, %m and %M mode, \
                    %n links, %u/%U owner, %g/%G group, %t and %Tk modification time \
                    (k: @, +, or a strftime letter), %Ak access time, %Ck status \
                    change time, %l link target, %%; a width and \
                    flags as find's (%-10f, %8s, %.3p, %#m); \\n \\t \\0 \\\\";

impl Format {
    /// Compiles a `find -printf`-like template: the directives in [`HELP`].
    pub fn parse(template: &str) -> Result<Format, String> {
        let bytes = template.as_bytes();
        let mut pieces = Vec::new();
        let mut text = Vec::new();
        let mut i = 0;
        let bad = |at: usize, what: &str| {
            format!(
                "invalid --format '{template}': {what} at byte {} (directives: {HELP})",
                at + 1
            )
        };
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\\' {
                let esc = match bytes.get(i + 1) {
                    Some(b'n') => b'\n',
                    Some(b't') => b'\t',
                    Some(b'0') => 0,
                    Some(b'\\') => b'\\',
                    _ => return Err(bad(i, "an unknown escape")),
                };
                text.push(esc);
                i += 2;
                continue;
            }
            if b != b'%' {
                text.push(b);
                i += 1;
                continue;
            }
            if bytes.get(i + 1) == Some(&b'%') {
                text.push(b'%');
                i += 2;
                continue;
            }
            // Flags, a width, a precision (as find's -printf takes them).
            let at = i;
            let mut layout = Layout::default();
            i += 1;
            // find's flags are '-', '+', ' ' and '#'; a '0' is the start of the width
            // (as C's printf then reads it, a flag): '%0-5d' is the directive '%-',
            // unknown, where find writes the text as it is.
            while let Some(&f) = bytes.get(i).filter(|b| b"-+ #".contains(b)) {
                layout.left |= f == b'-';
                layout.alternate |= f == b'#';
                layout.plus |= f == b'+';
                layout.space |= f == b' ';
                i += 1;
            }
            layout.zero = bytes.get(i) == Some(&b'0');
            // A width or precision beyond C's int is refused, as find fails on it
            // ("Value too large"), never read as 0 nor written out as gigabytes.
            let number = |i: &mut usize| {
                let from = *i;
                while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
                    *i += 1;
                }
                match &template[from..*i] {
                    "" => Ok(0),
                    digits => digits
                        .parse::<i32>()
                        .map(|n| n as usize)
                        .map_err(|_| bad(at, "a width or precision too large")),
                }
            };
            layout.width = number(&mut i)?;
            if bytes.get(i) == Some(&b'.') {
                i += 1;
                layout.precision = Some(number(&mut i)?);
            }
            // The directive is read from `i - 1` on, as if it followed the '%' there.
            i -= 1;
            let (piece, len) = match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(b'p'), _) => (Piece::Path, 2),
                (Some(b'f'), _) => (Piece::Name, 2),
                (Some(b'h'), _) => (Piece::Dir, 2),
                (Some(b'd'), _) => (Piece::Depth, 2),
                (Some(b'y'), _) => (Piece::Type, 2),
                (Some(b's'), _) => (Piece::Size, 2),
                (Some(b'm'), _) => (Piece::ModeOctal, 2),
                (Some(b'M'), _) => (Piece::ModeSymbolic, 2),
                (Some(b'n'), _) => (Piece::Links, 2),
                (Some(b'u'), _) => (Piece::User(true), 2),
                (Some(b'U'), _) => (Piece::User(false), 2),
                (Some(b'g'), _) => (Piece::Group(true), 2),
                (Some(b'G'), _) => (Piece::Group(false), 2),
                (Some(b't'), _) => (Piece::Mtime, 2),
                (Some(b'T'), Some(b'@')) => (Piece::MtimeEpoch, 3),
                (Some(&c @ (b'T' | b'A' | b'C')), Some(&k)) if TIME_PARTS.contains(&k) => {
                    let which = match c {
                        b'T' => Time::Modified,
                        b'A' => Time::Accessed,
                        _ => Time::Changed,
                    };
                    (Piece::TimePart(which, k), 3)
                }
                (Some(b'T' | b'A' | b'C'), _) => {
                    return Err(bad(at, "an unknown time part after %T, %A or %C"));
                }
                (Some(b'l'), _) => (Piece::Target, 2),
                (Some(b'P'), _) => (Piece::Below, 2),
                (Some(b'i'), _) => (Piece::Inode, 2),
                (Some(b'k'), _) => (Piece::Kilobytes, 2),
                _ => return Err(bad(at, "an unknown directive")),
            };
            if !text.is_empty() {
                pieces.push((Piece::Text(std::mem::take(&mut text)), Layout::default()));
            }
            pieces.push((piece, layout));
            i += len;
        }
        if !text.is_empty() {
            pieces.push((Piece::Text(text), Layout::default()));
        }
        #[cfg(windows)]
        if pieces
            .iter()
            .any(|(p, _)| matches!(p, Piece::TimePart(Time::Accessed | Time::Changed, _)))
        {
            crate::msg::not_on_windows(
                "%A, %C: ftw does not read these times on Windows: 0 is shown",
            );
        }
        #[cfg(windows)]
        if pieces
            .iter()
            .any(|(p, _)| matches!(p, Piece::User(_) | Piece::Group(_)))
        {
            crate::msg::not_on_windows(
                "%u, %U, %g, %G: Windows files have no user and group ids: '-' is shown for %u and %g, 0 for %U and %G",
            );
        }
        Ok(Format::new(pieces, false))
    }

    /// The `-l` line: mode, links, owner, group, size, modification time, path, and a
    /// link's target.
    pub fn long() -> Format {
        let pieces = vec![
            Piece::ModeSymbolic,
            Piece::Links,
            Piece::User(true),
            Piece::Group(true),
            Piece::Size,
            Piece::Mtime,
            Piece::Path,
        ];
        let pieces = pieces.into_iter().map(|p| (p, Layout::default())).collect();
        Format::new(pieces, true)
    }

    fn new(pieces: Vec<(Piece, Layout)>, long: bool) -> Format {
        let mut mask: Option<StatMask> = None;
        let mut add = |m: StatMask| mask = Some(mask.map_or(m, |old| old | m));
        for (p, _) in &pieces {
            match p {
                Piece::Size => add(StatMask::SIZE),
                Piece::ModeOctal | Piece::ModeSymbolic => add(StatMask::MODE),
                Piece::Links => add(StatMask::NLINK),
                Piece::User(_) | Piece::Group(_) => add(StatMask::OWNER),
                Piece::Mtime | Piece::MtimeEpoch | Piece::TimePart(Time::Modified, _) => {
                    add(StatMask::MTIME)
                }
                Piece::TimePart(_, _) => add(StatMask::TIMES),
                Piece::Inode => add(StatMask::ID),
                Piece::Kilobytes => add(StatMask::BLOCKS),
                _ => {}
            }
        }
        Format { pieces, long, mask }
    }

    /// The metadata fields the template shows; `TYPE` for none.
    pub fn mask(&self) -> StatMask {
        self.mask.unwrap_or(StatMask::TYPE)
    }

    /// Whether the template needs metadata (the walk then keeps its handles).
    pub fn needs_metadata(&self) -> bool {
        self.mask.is_some()
    }

    /// Appends the entry as the template says (without an end of record).
    /// Names and paths are written as `names` says (escaped on a terminal; `%p`
    /// coloured when names are). `Err`, with nothing written, when the metadata the
    /// template shows cannot be had: no made-up zeros in its place.
    pub fn write(&self, e: &Entry<'_>, out: &mut Vec<u8>, names: &Shown) -> std::io::Result<()> {
        let m = match self.mask {
            Some(mask) => e.metadata(mask)?,
            None => Metadata::default(),
        };
        let mut first = true;
        for (p, layout) in &self.pieces {
            if self.long && !std::mem::take(&mut first) {
                out.push(b' ');
            }
            let start = out.len();
            match p {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Path if names.raw() => e.write_path(out),
                Piece::Path => names.entry(e, out),
                Piece::Name => names.text(name_of(e), out),
                Piece::Dir => names.text(dir_of(e), out),
                // find writes these two as integers, the others as text.
                Piece::Depth => layout.integer(out, e.depth() as u64, false),
                Piece::ModeOctal => layout.integer(out, u64::from(m.mode & 0o7777), true),
                Piece::Type => out.push(type_letter(e.file_type())),
                Piece::Size if self.long && is_device(e.file_type()) => {
                    // As ls: the device's numbers, not its size.
                    let (major, minor) = major_minor(m.rdev);
                    out.extend_from_slice(format!("{:>8}", format!("{major}, {minor}")).as_bytes())
                }
                Piece::Size => push_num(out, m.size, if self.long { 8 } else { 0 }),
                Piece::ModeSymbolic => symbolic_mode(out, e.file_type(), m.mode),
                Piece::Links => push_num(out, m.nlink, if self.long { 2 } else { 0 }),
                Piece::User(name) => owner(out, m.uid, *name, users(), self.long),
                Piece::Group(name) => owner(out, m.gid, *name, groups(), self.long),
                Piece::Mtime => {
                    let t = if self.long { ls_time(&m) } else { ctime(&m) };
                    out.extend_from_slice(t.as_bytes());
                }
                Piece::MtimeEpoch => {
                    out.extend_from_slice(format!("{}.{:09}0", m.mtime, m.mtime_nsec).as_bytes())
                }
                Piece::TimePart(which, k) => {
                    let (secs, nsec) = match which {
                        Time::Modified => (m.mtime, m.mtime_nsec),
                        Time::Accessed => (m.atime, m.atime_nsec),
                        Time::Changed => (m.ctime, m.ctime_nsec),
                    };
                    time_part(out, secs, nsec, *k)
                }
                Piece::Target => names.text(&link_target(e), out),
                Piece::Below => names.text(&below_root(e), out),
                Piece::Inode => push_num(out, m.ino, 0),
                Piece::Kilobytes => push_num(out, m.blocks.div_ceil(2), 0),
            }
            let integer = matches!(p, Piece::Depth | Piece::ModeOctal);
            if *layout != Layout::default() && !integer {
                layout.apply(out, start);
            }
        }
        if self.long && e.file_type() == FileType::Symlink {
            out.extend_from_slice(b" -> ");
            names.text(&link_target(e), out);
        }
        Ok(())
    }
}

/// The target of a link not followed (a followed link is its target, as `find -L`'s
/// `%l` says: empty).
fn link_target(e: &Entry<'_>) -> Vec<u8> {
    if !e.path_is_symlink() || e.file_type() != FileType::Symlink {
        return Vec::new();
    }
    match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.read_link_at(name).unwrap_or_default(),
        _ => std::fs::read_link(e.path())
            .map(|t| t.into_os_string().into_encoded_bytes())
            .unwrap_or_default(),
    }
}

/// find's `%P`: the path below the root, the last `depth` components of the path (names
/// hold no separator, whatever the root's path holds); empty for a root.
fn below_root(e: &Entry<'_>) -> Vec<u8> {
    if e.depth() == 0 {
        return Vec::new();
    }
    let mut path = Vec::new();
    e.write_path(&mut path);
    let is_sep = |b: u8| b == b'/' || (cfg!(windows) && b == b'\\');
    let mut seen = 0;
    for i in (0..path.len()).rev() {
        if is_sep(path[i]) {
            seen += 1;
            if seen == e.depth() {
                return path.split_off(i + 1);
            }
        }
    }
    path
}

/// find's `%Tk`: part `k` of a time, in the local time zone; `@` the seconds since
/// the epoch, `+` date and time; the seconds of `S`, `T`, `X` and `+` carry ten
/// digits of fraction, as find writes them.
fn time_part(out: &mut Vec<u8>, secs: i64, nsec: u32, k: u8) {
    let fraction = format!("{nsec:09}0");
    if k == b'@' {
        out.extend_from_slice(format!("{secs}.{fraction}").as_bytes());
        return;
    }
    let Some(z) = jiff::Timestamp::new(secs, nsec as i32)
        .ok()
        .map(|t| t.to_zoned(jiff::tz::TimeZone::system()))
    else {
        out.extend_from_slice(secs.to_string().as_bytes());
        return;
    };
    let text = match k {
        b'+' => format!("{}.{fraction}", z.strftime("%Y-%m-%d+%H:%M:%S")),
        b'S' => format!("{}.{fraction}", z.strftime("%S")),
        b'T' | b'X' => format!("{}.{fraction}", z.strftime("%H:%M:%S")),
        b'c' => z.strftime("%a %b %e %H:%M:%S %Y").to_string(),
        b'D' | b'x' => z.strftime("%m/%d/%y").to_string(),
        b'r' => z.strftime("%I:%M:%S %p").to_string(),
        k => z.strftime(&format!("%{}", k as char)).to_string(),
    };
    out.extend_from_slice(text.as_bytes());
}

fn name_of<'a>(e: &Entry<'a>) -> &'a [u8] {
    if e.depth() > 0 {
        return e.name();
    }
    root_parts(e.name()).0
}

fn dir_of<'a>(e: &Entry<'a>) -> &'a [u8] {
    if e.depth() > 0 {
        let p = e.parent_path();
        // The parent as the walk built it, less a trailing slash but for "/".
        return if p.len() > 1 && p.ends_with(b"/") {
            &p[..p.len() - 1]
        } else {
            p
        };
    }
    root_parts(e.name()).1
}

/// A root's `%f` and `%h` as GNU find writes them: the last component with one slash
/// if the root ends with any (`a/b//`: `b/`); before it, the directories less their
/// trailing slashes (`a`; none for `/tmp`, `/` for `//tmp`), or where there are none,
/// the root up to its last slash (`q/`: `q`) or `.`. `/` alone is `/` and nothing.
fn root_parts(n: &[u8]) -> (&[u8], &[u8]) {
    let Some(last) = n.iter().rposition(|&b| b != b'/') else {
        let dir: &[u8] = if n.len() > 1 { b"/" } else { b"" };
        return (&n[..n.len().min(1)], dir);
    };
    let end = (last + 2).min(n.len());
    match n[..last].iter().rposition(|&b| b == b'/') {
        None => {
            let dir = match n.iter().rposition(|&b| b == b'/') {
                Some(i) => &n[..i],
                None => b".",
            };
            (&n[..end], dir)
        }
        Some(slash) => {
            let dir = &n[..=slash];
            let dir = match dir.iter().rposition(|&b| b != b'/') {
                Some(i) => &dir[..=i],
                // Only slashes: one for two or more, as find says it.
                None if dir.len() > 1 => b"/",
                None => b"",
            };
            (&n[slash + 1..end], dir)
        }
    }
}

fn type_letter(t: FileType) -> u8 {
    match t {
        FileType::File => b'f',
        FileType::Dir => b'd',
        FileType::Symlink => b'l',
        FileType::BlockDevice => b'b',
        FileType::CharDevice => b'c',
        FileType::Fifo => b'p',
        FileType::Socket => b's',
        FileType::Unknown => b'U',
    }
}

fn is_device(t: FileType) -> bool {
    matches!(t, FileType::BlockDevice | FileType::CharDevice)
}

/// A device number's major and minor numbers (glibc's encoding of `dev_t`).
#[cfg(target_os = "linux")]
fn major_minor(rdev: u64) -> (u64, u64) {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (major, minor)
}

/// A device number's major and minor numbers (the BSDs' and macOS's encoding).
#[cfg(not(target_os = "linux"))]
fn major_minor(rdev: u64) -> (u64, u64) {
    ((rdev >> 24) & 0xff, rdev & 0xff_ffff)
}

fn push_num(out: &mut Vec<u8>, n: u64, width: usize) {
    out.extend_from_slice(format!("{n:>width$}").as_bytes());
}

/// `drwxr-xr-x`, as ls writes it (setuid/setgid/sticky as s/S and t/T).
fn symbolic_mode(out: &mut Vec<u8>, t: FileType, mode: u32) {
    out.push(match t {
        FileType::File | FileType::Unknown => b'-',
        other => type_letter(other),
    });
    let bits = [
        (0o400, b'r'),
        (0o200, b'w'),
        (0o100, b'x'),
        (0o040, b'r'),
        (0o020, b'w'),
        (0o010, b'x'),
        (0o004, b'r'),
        (0o002, b'w'),
        (0o001, b'x'),
    ];
    let start = out.len();
    for (bit, c) in bits {
        out.push(if mode & bit != 0 { c } else { b'-' });
    }
    let special = [(0o4000, 2, b's'), (0o2000, 5, b's'), (0o1000, 8, b't')];
    for (bit, at, c) in special {
        if mode & bit != 0 {
            let x = out[start + at] == b'x';
            out[start + at] = if x { c } else { c.to_ascii_uppercase() };
        }
    }
}

type Names = HashMap<u32, String>;

/// Ids to names from an `/etc/passwd`-like file (name:x:id:...).
fn read_names(path: &str) -> Names {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            let id = f.nth(1)?.parse().ok()?;
            Some((id, name.to_string()))
        })
        .collect()
}

fn users() -> &'static Names {
    static U: OnceLock<Names> = OnceLock::new();
    U.get_or_init(|| read_names("/etc/passwd"))
}

fn groups() -> &'static Names {
    static G: OnceLock<Names> = OnceLock::new();
    G.get_or_init(|| read_names("/etc/group"))
}

fn owner(out: &mut Vec<u8>, id: u32, name: bool, names: &Names, pad: bool) {
    let s = match names.get(&id) {
        // Windows files have no user and group ids, and no /etc/passwd names them
        // (read as \etc\passwd of the current drive, it could name the wrong ones).
        _ if cfg!(windows) && name => "-".to_string(),
        Some(n) if name => n.clone(),
        _ => id.to_string(),
    };
    let width = if pad { 8 } else { 0 };
    out.extend_from_slice(format!("{s:<width$}").as_bytes());
}

fn zoned(m: &Metadata) -> Option<jiff::Zoned> {
    let ts = jiff::Timestamp::new(m.mtime, m.mtime_nsec as i32).ok()?;
    Some(ts.to_zoned(jiff::tz::TimeZone::system()))
}

/// find's `%t`: `Thu Dec  3 04:39:08.1076713340 2026`.
fn ctime(m: &Metadata) -> String {
    match zoned(m) {
        Some(z) => format!(
            "{}.{:09}0 {}",
            z.strftime("%a %b %e %H:%M:%S"),
            m.mtime_nsec,
            z.year()
        ),
        None => m.mtime.to_string(),
    }
}

/// ls's time: `Dec  3 04:39` within six months of now, `Dec  3  2025` otherwise.
fn ls_time(m: &Metadata) -> String {
    let Some(z) = zoned(m) else {
        return m.mtime.to_string();
    };
    let now = jiff::Timestamp::now().as_second();
    let six_months = 15_778_476; // 365.2425 days / 2
    if m.mtime > now - six_months && m.mtime <= now + 60 {
        z.strftime("%b %e %H:%M").to_string()
    } else {
        z.strftime("%b %e  %Y").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_and_errors_point() {
        assert!(Format::parse("%p %s\\n").unwrap().needs_metadata());
        assert!(!Format::parse("%p %f %h %y\\0").unwrap().needs_metadata());
        let e = Format::parse("%p %q").unwrap_err();
        assert!(e.contains("'%p %q'") && e.contains("byte 4"), "{e}");
        assert!(Format::parse("x\\z").is_err());
        // '0' starts the width: after it, '-' is a directive of its own, unknown.
        assert!(Format::parse("%0-5d").is_err() && Format::parse("%0+5d").is_err());
        assert!(Format::parse("%-05d %+05d % 05d %#05m").is_ok());
        // A width or precision beyond C's int, as find refuses it.
        for t in ["%2147483648d", "%99999999999999999999s", "%.99999999999p"] {
            let e = Format::parse(t).unwrap_err();
            assert!(e.contains("too large"), "{t}: {e}");
        }
        assert!(Format::parse("%2147483647d").is_ok());
    }

    #[test]
    fn modes_as_ls_writes_them() {
        let mut out = Vec::new();
        symbolic_mode(&mut out, FileType::Dir, 0o1777);
        assert_eq!(out, b"drwxrwxrwt");
        out.clear();
        symbolic_mode(&mut out, FileType::File, 0o4644);
        assert_eq!(out, b"-rwSr--r--");
        out.clear();
        symbolic_mode(&mut out, FileType::Symlink, 0o777);
        assert_eq!(out, b"lrwxrwxrwx");
    }
}
