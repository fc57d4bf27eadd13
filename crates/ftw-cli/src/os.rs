//! The one place where the command converts between the system's strings (`OsStr`:
//! arguments, paths) and the bytes ftw works with: on Unix exactly the bytes; on
//! Windows UTF-8, an unpaired surrogate written as the text `\u{d800}`
//! (`ftw::sys::os_to_bytes`, which reads back what it writes).

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};

/// The bytes of `s`.
pub fn bytes(s: &OsStr) -> Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(s.as_bytes())
    }
    #[cfg(not(unix))]
    {
        Cow::Owned(ftw::sys::os_to_bytes(s))
    }
}

/// `b` as a system string.
pub fn os(b: &[u8]) -> Cow<'_, OsStr> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(OsStr::from_bytes(b))
    }
    #[cfg(not(unix))]
    {
        Cow::Owned(ftw::sys::bytes_to_os(b))
    }
}

/// `v` as an owned system string.
pub fn os_string(v: Vec<u8>) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(v)
    }
    #[cfg(not(unix))]
    {
        ftw::sys::bytes_to_os(&v)
    }
}

/// Warns, once per message, that an option asks for what Windows does not have; the
/// run goes on (what it asks for never matches, or shows 0).
#[cfg(windows)]
pub fn not_on_windows(what: &str) {
    use std::sync::Mutex;
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|s| s == what) {
        said.push(what.to_string());
        crate::msg::warn(what);
    }
}

/// The `-t` types that mean nothing on Windows, with why.
#[cfg(windows)]
pub fn note_type(t: &str) {
    match t {
        "s" | "p" | "b" | "c" => not_on_windows(&format!(
            "-t {t}: Windows directories hold no sockets, pipes or devices: nothing matches"
        )),
        "x" => not_on_windows("-t x: Windows files have no executable bit: nothing matches"),
        _ => {}
    }
}
