//! Every target but Linux: the same API on `std::fs`. A [`Dir`] remembers its path and
//! each call resolves a path from it; correct, not fast, and not free of races.

use super::{FileType, Metadata, RawEntry, StatMask, is_dot};
use std::ffi::{CStr, CString, OsStr};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// An open directory (here: its path, checked to be a directory when opened).
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
}

/// A reusable buffer for [`Dir::read_entries`].
pub struct DirBuf {
    names: Vec<(CString, FileType, u64)>,
}

impl DirBuf {
    /// A new buffer.
    pub fn new() -> DirBuf {
        DirBuf { names: Vec::new() }
    }

    /// A new buffer (the size is only a hint here).
    pub fn with_capacity(_size: usize) -> DirBuf {
        DirBuf::new()
    }
}

impl Default for DirBuf {
    fn default() -> Self {
        DirBuf::new()
    }
}

fn name_path(name: &CStr) -> std::borrow::Cow<'_, Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(Path::new(OsStr::from_bytes(name.to_bytes())))
    }
    #[cfg(not(unix))]
    {
        std::borrow::Cow::Owned(std::path::PathBuf::from(super::bytes_to_os(
            name.to_bytes(),
        )))
    }
}

fn os_bytes(name: &OsStr) -> Vec<u8> {
    super::os_to_bytes(name)
}

fn type_of(t: fs::FileType) -> FileType {
    if t.is_dir() {
        FileType::Dir
    } else if t.is_file() {
        FileType::File
    } else if t.is_symlink() {
        FileType::Symlink
    } else {
        FileType::Unknown
    }
}

fn meta(m: fs::Metadata) -> Metadata {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Metadata {
            file_type: Some(FileType::from_mode(m.mode())),
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            blocks: m.blocks(),
            nlink: m.nlink(),
            mode: m.mode(),
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: m.rdev(),
            atime: m.atime(),
            atime_nsec: m.atime_nsec() as u32,
            ctime: m.ctime(),
            ctime_nsec: m.ctime_nsec() as u32,
            attributes: super::Attributes::default(),
        }
    }
    #[cfg(not(unix))]
    {
        Metadata {
            file_type: Some(type_of(m.file_type())),
            size: m.len(),
            blocks: m.len().div_ceil(512),
            nlink: 1,
            mtime: m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64),
            ..Metadata::default()
        }
    }
}

/// Opens `path` as a directory. Errors have the kinds the Linux backend's errno gives
/// (the walk tells them apart by kind): anything else than a directory, a link not
/// followed included, is `NotADirectory`.
fn open_checked(path: PathBuf, follow: bool) -> io::Result<Dir> {
    let m = if follow {
        fs::metadata(&path)?
    } else {
        fs::symlink_metadata(&path)?
    };
    if !m.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "Not a directory",
        ));
    }
    Ok(Dir { path })
}

impl Dir {
    /// The path of the entry `name` of this directory.
    pub(super) fn entry(&self, name: &CStr) -> io::Result<PathBuf> {
        Ok(self.path.join(name_path(name)))
    }

    /// This directory's own path.
    pub(super) fn own_path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Opens the directory at `path`, following a symbolic link there.
    ///
    /// # Errors
    ///
    /// The system's error when `path` cannot be opened as a directory: it does not exist
    /// (`NotFound`), is not a directory (`NotADirectory`), or may not be read
    /// (`PermissionDenied`).
    pub fn open(path: &Path) -> io::Result<Dir> {
        open_checked(path.to_path_buf(), true)
    }

    /// Opens the directory at `path` only to work relative to it: here as
    /// [`Dir::open`], which asks no permission of it.
    ///
    /// # Errors
    ///
    /// As [`Dir::open`].
    pub fn open_search_only(path: &Path) -> io::Result<Dir> {
        Dir::open(path)
    }

    /// Opens the directory at `path`, failing if it is a symbolic link.
    ///
    /// # Errors
    ///
    /// As [`Dir::open`], and an error when the last component of `path` is a symbolic link
    /// (or on Windows a junction), which is not followed.
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        open_checked(path.to_path_buf(), false)
    }

    /// Opens the subdirectory `name`, not following a symbolic link.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened as a directory: it does not exist
    /// (`NotFound`), is not a directory, is a symbolic link (or on Windows a junction),
    /// which is not followed, or may not be read (`PermissionDenied`).
    pub fn open_at(&self, name: &CStr) -> io::Result<Dir> {
        open_checked(self.path.join(name_path(name)), false)
    }

    /// Opens the subdirectory `name`, following a symbolic link.
    ///
    /// # Errors
    ///
    /// The system's error when `name`, or what it leads to, cannot be opened as a
    /// directory: it does not exist (`NotFound`, a dangling link too), is not a directory,
    /// or may not be read (`PermissionDenied`).
    pub fn open_at_follow(&self, name: &CStr) -> io::Result<Dir> {
        open_checked(self.path.join(name_path(name)), true)
    }

    /// A second handle to the same directory.
    ///
    /// # Errors
    ///
    /// The system's error when no handle can be made (too many open: `EMFILE` on Unix).
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            path: self.path.clone(),
        })
    }

    /// Opens the directory at the relative path `rel` below this one.
    ///
    /// # Errors
    ///
    /// As [`Dir::open_at`] (or, with `follow`, [`Dir::open_at_follow`]) for the first
    /// component that cannot be opened: one that does not exist, is not a directory, or
    /// without `follow` is a symbolic link; `InvalidInput` for a path with no component.
    pub fn open_beneath(&self, rel: &CStr, follow: bool) -> io::Result<Dir> {
        if follow {
            return open_checked(self.path.join(name_path(rel)), true);
        }
        // One component at a time, so that no link on the way is followed.
        let mut cur = Dir {
            path: self.path.clone(),
        };
        for comp in rel
            .to_bytes()
            .split(|&b| b == b'/')
            .filter(|c| !c.is_empty())
        {
            let name =
                CString::new(comp).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            cur = cur.open_at(&name)?;
        }
        Ok(cur)
    }

    /// Reads the directory's entries as [`Dir::read_entries`] does; on this system always
    /// every one of them, whatever `at_least`, so it gives `Ok(false)` (the end). On
    /// Linux a huge directory is read in parts.
    ///
    /// # Errors
    ///
    /// As [`Dir::read_entries`].
    pub fn read_some_entries<F>(&self, buf: &mut DirBuf, at_least: usize, f: F) -> io::Result<bool>
    where
        F: FnMut(RawEntry<'_>),
    {
        // Read whole here: the listing is not read in parts on this system.
        let _ = at_least;
        self.read_entries(buf, f).map(|()| false)
    }

    /// Reads every entry of the directory (but `.` and `..`), calling `f` for each.
    ///
    /// # Errors
    ///
    /// The system's error when the directory cannot be read (an I/O error, a directory
    /// removed meanwhile, a handle that may not read it); some entries may have been given
    /// to `f` before it.
    pub fn read_entries<F>(&self, buf: &mut DirBuf, mut f: F) -> io::Result<()>
    where
        F: FnMut(RawEntry<'_>),
    {
        buf.names.clear();
        for e in fs::read_dir(&self.path)? {
            let e = e?;
            let name = os_bytes(&e.file_name());
            if is_dot(&name) {
                continue;
            }
            let t = e.file_type().map(type_of).unwrap_or(FileType::Unknown);
            #[cfg(unix)]
            let ino = std::os::unix::fs::DirEntryExt::ino(&e);
            #[cfg(not(unix))]
            let ino = 0;
            let name =
                CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            buf.names.push((name, t, ino));
        }
        for (name, file_type, ino) in &buf.names {
            f(RawEntry {
                name,
                file_type: *file_type,
                ino: *ino,
                #[cfg(windows)]
                meta: None,
            });
        }
        Ok(())
    }

    /// Whether this process may read, write and search the entry `name`: where the
    /// system does not say, whether its owner may (on Unix; elsewhere, yes).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn may_change_at(&self, name: &CStr) -> io::Result<bool> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let m = fs::symlink_metadata(self.path.join(name_path(name)))?;
            Ok(m.permissions().mode() & 0o700 == 0o700)
        }
        #[cfg(not(unix))]
        {
            let _ = name;
            Ok(true)
        }
    }

    /// Whether this process may remove entries of this directory: not told here (yes);
    /// the removal itself says.
    ///
    /// # Errors
    ///
    /// None here.
    pub fn may_write(&self) -> io::Result<()> {
        Ok(())
    }

    /// Whether the entry `name` is the root of a mount: not told here (`false`); the
    /// device of its metadata tells another file system.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn is_mount_root_at(&self, _name: &CStr) -> io::Result<bool> {
        Ok(false)
    }

    /// Metadata of the entry `name`; with `follow`, a symbolic link is followed.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist (`NotFound`;
    /// with `follow`, a dangling link too), or this directory may not be searched
    /// (`PermissionDenied`).
    pub fn stat_at(&self, name: &CStr, _mask: StatMask, follow: bool) -> io::Result<Metadata> {
        let p = self.path.join(name_path(name));
        let m = if follow {
            fs::metadata(p)?
        } else {
            fs::symlink_metadata(p)?
        };
        Ok(meta(m))
    }

    /// Metadata of this directory itself.
    ///
    /// # Errors
    ///
    /// The system's error when the handle's metadata cannot be read (an I/O error of the
    /// file system).
    pub fn stat(&self, _mask: StatMask) -> io::Result<Metadata> {
        Ok(meta(fs::metadata(&self.path)?))
    }

    /// Whether directory entries are known to give the inode numbers `stat` gives:
    /// never assumed here.
    pub fn entry_inodes_exact(&self) -> bool {
        false
    }

    /// Removes the non-directory entry `name`.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be removed: it does not exist (`NotFound`), is
    /// a directory, or this directory is not writable (`PermissionDenied`).
    pub fn unlink_at(&self, name: &CStr) -> io::Result<()> {
        fs::remove_file(self.path.join(name_path(name)))
    }

    /// Removes the empty subdirectory `name`.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be removed: it does not exist (`NotFound`), is
    /// not empty (`DirectoryNotEmpty`), is not a directory (`NotADirectory`), or this
    /// directory is not writable (`PermissionDenied`).
    pub fn remove_dir_at(&self, name: &CStr) -> io::Result<()> {
        fs::remove_dir(self.path.join(name_path(name)))
    }

    /// Reads the whole regular file `name` of this directory.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or read: it does not exist
    /// (`NotFound`), is a symbolic link (not followed) or a directory, or may not be read
    /// (`PermissionDenied`).
    pub fn read_file_at(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let path = self.path.join(name_path(name));
        if fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(io::Error::other("a symbolic link"));
        }
        fs::read(path)
    }

    /// The target of the symbolic link `name` of this directory, as bytes.
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be read as a link: it does not exist
    /// (`NotFound`), or is not a symbolic link (`InvalidInput` on Unix).
    pub fn read_link_at(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let target = fs::read_link(self.path.join(name_path(name)))?;
        Ok(super::os_to_bytes(target.as_os_str()))
    }

    /// Sets this directory's permission bits (on Unix; elsewhere, `mode` without owner
    /// write makes it read-only).
    ///
    /// # Errors
    ///
    /// The system's error when the mode may not be changed: not the owner
    /// (`PermissionDenied`), a read-only file system.
    pub fn set_permissions(&self, mode: u32) -> io::Result<()> {
        #[cfg(unix)]
        let perms = {
            use std::os::unix::fs::PermissionsExt;
            fs::Permissions::from_mode(mode & 0o7777)
        };
        #[cfg(not(unix))]
        let perms = {
            let mut p = fs::metadata(&self.path)?.permissions();
            p.set_readonly(mode & 0o200 == 0);
            p
        };
        fs::set_permissions(&self.path, perms)
    }

    /// Sets the permission bits of the subdirectory `name` (on Unix; elsewhere it is
    /// not supported). A link there is not followed, though a name swapped for a link
    /// between the check and the change is (this fallback works by path).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or its mode changed: it does not
    /// exist (`NotFound`), is not a directory (`NotADirectory`), is a symbolic link, or may
    /// not be changed (`PermissionDenied`).
    pub fn set_dir_permissions_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let path = self.path.join(name_path(name));
            if !fs::symlink_metadata(&path)?.is_dir() {
                return Err(io::Error::from(io::ErrorKind::NotADirectory));
            }
            fs::set_permissions(&path, fs::Permissions::from_mode(mode & 0o7777))
        }
        #[cfg(not(unix))]
        {
            let _ = (name, mode);
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }
}

/// Metadata of the file at `path`; with `follow`, a symbolic link there is followed.
///
/// # Errors
///
/// The system's error when `path` cannot be asked about: it does not exist (`NotFound`;
/// with `follow`, a dangling link too), a component is not a directory or may not be
/// searched; `InvalidInput` for a path with a NUL byte.
pub fn stat_path(path: &Path, _mask: StatMask, follow: bool) -> io::Result<Metadata> {
    let m = if follow {
        fs::metadata(path)?
    } else {
        fs::symlink_metadata(path)?
    };
    Ok(meta(m))
}

/// The effective user id of this process: not known here (`std` does not tell it).
pub fn effective_uid() -> Option<u32> {
    None
}

/// The limit on open file descriptors, where the system has one.
pub fn fd_limit() -> Option<u64> {
    None
}

/// How many file descriptors this process has open, where the system lists them in
/// `/proc/self/fd` (less the one that reads the list); `None` elsewhere.
pub(crate) fn open_fds() -> Option<usize> {
    let n = std::fs::read_dir("/proc/self/fd").ok()?.count();
    Some(n.saturating_sub(1))
}

/// The address space this process may still map under a limit: no such limit here.
pub fn address_space_room() -> Option<u64> {
    None
}

/// CPU time used by this process, where the system tells it (here: never).
pub fn process_cpu_time() -> std::time::Duration {
    std::time::Duration::ZERO
}
