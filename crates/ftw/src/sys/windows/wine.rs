//! Wine's workarounds: whether the process runs under wine, and the name the system
//! gives an open file (`FileNameInfo`), by which a directory opened and an entry given
//! the classic disposition are checked to be the ones named (wine opens a Unix symbolic
//! link as what it leads to, whatever the flags).

use super::info::query_info;
use super::paths::open_path;
#[cfg(test)]
use super::seam;
use super::{DIR_ACCESS, Dir};
use std::ffi::OsString;
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};
use std::path::Path;
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{self as wf, GetLastError};
use windows_sys::Win32::Storage::FileSystem as fs;

/// What wine calls an open directory (see [`Dir::own_name`]).
#[derive(Clone, Debug)]
pub(super) struct WineName {
    name: Named,
    /// Whether `name` is the directory's and no other's: wine leaves trailing dots and
    /// spaces out of its names (`d.` is `d`), so that another directory may have it.
    pub(super) exact: bool,
}

/// The name the system gives an open file (`FileNameInfo`: its path on its volume).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Named {
    /// The system has none (wine past `PATH_MAX`).
    Nameless,
    /// It would not say (another error).
    Unknown,
    Name(Vec<u16>),
}

/// Whether this process runs under wine (its ntdll exports `wine_get_version`). Wine 8
/// shows a Unix symbolic link as a reparse point of no tag when listing, but opens it as
/// what it leads to whatever the flags (`FILE_OPEN_REPARSE_POINT`, `OBJ_DONT_REPARSE`),
/// and its classic disposition then removes that: there, each directory opened and
/// each entry removed is checked to be the one named (see [`Dir::check_named`]).
pub(super) fn under_wine() -> bool {
    static WINE: OnceLock<bool> = OnceLock::new();
    *WINE.get_or_init(|| {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
        let ntdll: Vec<u16> = "ntdll.dll\0".encode_utf16().collect();
        // SAFETY: both strings are NUL-terminated and live for the calls; ntdll is
        // loaded in every process, and the module handle is not freed (nor owned).
        unsafe {
            let module = GetModuleHandleW(ntdll.as_ptr());
            !module.is_null()
                && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
        }
    })
}

/// The name the system gives the file of an open handle (`FileNameInfo`: its path on
/// its volume, `\dir\name`). [`Named::Nameless`] when it answers "invalid handle":
/// wine has no name for a file whose Unix path is longer than `PATH_MAX` (4,096 bytes
/// on Linux), and removes a file at the close of its last handle by that name: given
/// the classic disposition, such a file says yes and stays.
fn file_name(h: BorrowedHandle<'_>) -> Named {
    count!(name_queries);
    let mut buf = vec![0u32; 130];
    loop {
        // SAFETY: `buf` is a live, writable, 4-byte aligned buffer of the size given,
        // where a FILE_NAME_INFO (two u32-aligned fields) and a name fit; `h` is open.
        let ok = unsafe {
            fs::GetFileInformationByHandleEx(
                h.as_raw_handle(),
                fs::FileNameInfo,
                buf.as_mut_ptr().cast(),
                (buf.len() * 4) as u32,
            )
        };
        // SAFETY: reads this thread's last-error value.
        let e = if ok == 0 {
            unsafe { GetLastError() }
        } else {
            0
        };
        let len = buf[0] as usize / 2;
        match e {
            0 if len <= (buf.len() - 1) * 2 => {
                let units = buf[1..].iter().flat_map(|w| [*w as u16, (*w >> 16) as u16]);
                return Named::Name(units.take(len).collect());
            }
            wf::ERROR_MORE_DATA if len > (buf.len() - 1) * 2 && buf.len() < 1 << 16 => {
                buf.resize(len.div_ceil(2) + 1, 0);
            }
            wf::ERROR_INVALID_HANDLE => return Named::Nameless,
            _ => return Named::Unknown,
        }
    }
}

/// The error for an entry that the system opened as another file: under wine, a Unix
/// symbolic link (see [`under_wine`]).
pub(super) fn opened_elsewhere() -> io::Error {
    io::Error::other(
        "not removed: the system opens another file by this name (under wine, a Unix \
         symbolic link is opened as what it leads to, which would be removed in its place)",
    )
}

impl Dir {
    /// What wine calls this open directory (see [`file_name`]), asked once. For a
    /// directory opened by path, the name is exact when the directory it names, opened
    /// by it, is this one (the same file id); a subdirectory's is set when it is
    /// opened ([`Dir::named_child`]).
    fn own_name(&self) -> &WineName {
        self.name.get_or_init(|| {
            let name = file_name(self.handle.as_handle());
            let exact = match &name {
                Named::Name(n) => {
                    let mut p: Vec<u16> = self.path.iter().take(6).copied().collect();
                    p.extend_from_slice(n);
                    let id = |h: BorrowedHandle<'_>| {
                        // SAFETY: FileIdInfo's record is a FILE_ID_INFO.
                        unsafe { query_info::<fs::FILE_ID_INFO>(h, fs::FileIdInfo) }
                            .ok()
                            .map(|i| (i.VolumeSerialNumber, i.FileId.Identifier))
                    };
                    let again = open_path(Path::new(&OsString::from_wide(&p)), DIR_ACCESS, true);
                    let mine = id(self.handle.as_handle());
                    again.is_ok_and(|f| mine.is_some() && id(f.as_handle()) == mine)
                }
                _ => false,
            };
            WineName { name, exact }
        })
    }

    /// What wine calls `h`, opened as this directory's entry `w`: `Err` if the system
    /// names another file (a Unix symbolic link's target). The name is exact where this
    /// directory's is and it is this directory's name, `\\` and `w`, `w` ending in no
    /// dot or space (which wine would leave out). Where the names cannot be compared
    /// (not exact, or not known), the entry's is taken as it is, not exact; except that
    /// an entry with a name below a directory with none (past wine's `PATH_MAX`, a
    /// longer path) is another file.
    pub(super) fn named_child(&self, h: BorrowedHandle<'_>, w: &[u16]) -> Result<WineName, ()> {
        let got = file_name(h);
        let dir = self.own_name();
        let exact = match (&dir.name, &got) {
            (Named::Name(d), Named::Name(n)) if dir.exact => {
                let bs = u16::from(b'\\');
                let mut want = d.clone();
                if want.last() != Some(&bs) {
                    want.push(bs);
                }
                want.extend_from_slice(w);
                let clean =
                    !matches!(w.last(), Some(&u) if u == u16::from(b'.') || u == u16::from(b' '));
                if *n == want && clean {
                    true
                } else if clean {
                    return Err(());
                } else {
                    false
                }
            }
            (Named::Nameless, Named::Name(_)) => return Err(()),
            _ => false,
        };
        Ok(WineName { name: got, exact })
    }

    /// Whether `h`, opened for deletion as this directory's entry `w`, can be given the
    /// classic disposition, which removes by the name the system has for the file: it
    /// must have one (see [`file_name`]) and, under wine, be the entry's, exactly.
    pub(super) fn check_named(&self, h: BorrowedHandle<'_>, w: &[u16]) -> io::Result<()> {
        let named = if under_wine() {
            let n = self.named_child(h, w).map_err(|()| opened_elsewhere())?;
            if !n.exact && n.name != Named::Nameless {
                return Err(io::Error::other(
                    "not removed: under wine, whose names leave out a name's trailing dots \
                     and spaces (here or in a directory above), it cannot be told from a \
                     Unix symbolic link's target, which would be removed in its place",
                ));
            }
            n.name
        } else {
            file_name(h)
        };
        if named == Named::Nameless {
            return Err(io::Error::other(
                "not removed: the system has no name for it to remove it by (under wine: \
                 its Unix path is longer than PATH_MAX)",
            ));
        }
        Ok(())
    }
}
