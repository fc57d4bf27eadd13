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
