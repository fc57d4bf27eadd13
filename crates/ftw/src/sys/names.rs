//! Windows names (UTF-16, not necessarily valid) as the UTF-8 bytes ftw works with,
//! and back. Safe code, shared by the native backend and the portable one on Windows.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};

/// UTF-8 bytes (as ftw has names) to UTF-16, undoing [`os_to_bytes`]'s escape.
pub(crate) fn wide(bytes: &[u8], out: &mut Vec<u16>) -> io::Result<()> {
    let s = std::str::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "not a valid name"))?;
    let mut rest = s;
    while let Some(i) = rest.find("\\u{") {
        out.extend(rest[..i].encode_utf16());
        let tail = &rest[i..];
        match surrogate_escape(tail) {
            Some(unit) => {
                out.push(unit);
                rest = &tail[8..];
            }
            None => {
                out.push(u16::from(b'\\'));
                rest = &tail[1..];
            }
        }
    }
    out.extend(rest.encode_utf16());
    Ok(())
}

/// The surrogate escaped at the start of `s` (`\u{d800}`: exactly four lower-case hex
/// digits in `d800..=dfff`).
fn surrogate_escape(s: &str) -> Option<u16> {
    let b = s.as_bytes();
    if b.len() < 8 || &b[..3] != b"\\u{" || b[7] != b'}' {
        return None;
    }
    let hex = &s[3..7];
    if !hex
        .bytes()
        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    {
        return None;
    }
    let unit = u16::from_str_radix(hex, 16).ok()?;
    (0xd800..=0xdfff).contains(&unit).then_some(unit)
}

/// UTF-16 to UTF-8 bytes, appended to `out`: an unpaired surrogate is written as the
/// text `\u{d800}` (see [`os_to_bytes`]).
pub(crate) fn push_utf8(units: impl IntoIterator<Item = u16>, out: &mut Vec<u8>) {
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
            Err(e) => {
                use std::io::Write;
                let _ = write!(out, "\\u{{{:04x}}}", e.unpaired_surrogate());
            }
        }
    }
}

/// A Windows string (a name or a path) as the UTF-8 bytes ftw works with and prints.
/// Names on Windows are UTF-16 and need not be valid: an unpaired surrogate (U+D800 to
/// U+DFFF alone) is written as the ASCII text `\u{d800}` (four lower-case hex digits),
/// the one escape. In a name it is unambiguous, since `\` cannot occur in a Windows
/// file name, so a name from a listing opens the same file again ([`bytes_to_os`]
/// reads the escape back). In a whole path `\` is also the separator: a component
/// spelled `u{d800}` after a `\` would be read as the surrogate; ftw joins the paths it
/// makes with `/`, so only a path given so could be misread.
pub(crate) fn os_to_bytes(s: &OsStr) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    push_utf8(s.encode_wide(), &mut out);
    out
}

/// The inverse of [`os_to_bytes`]; bytes that are not UTF-8 are replaced (U+FFFD).
pub(crate) fn bytes_to_os(b: &[u8]) -> OsString {
    let mut w = Vec::with_capacity(b.len());
    if wide(b, &mut w).is_err() {
        w.clear();
        w.extend(String::from_utf8_lossy(b).encode_utf16());
    }
    OsString::from_wide(&w)
}
