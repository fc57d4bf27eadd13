//! Copying where ftw has no native way (Windows, and every target but Linux): the same
//! API as on Linux, on `std::fs`, each call resolving the entry's path from its
//! directory's. Correct, not fast, and not free of races; what the system has no
//! notion of (owners, devices, extended attributes on Windows) is `Unsupported`.

use super::{DataCopy, Dir, FileTimes, FileType, Metadata, Reflink, StatMask};
use std::ffi::CStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// An open file that is not a directory (here: std's, and its path).
#[derive(Debug)]
pub struct File {
    file: fs::File,
    path: PathBuf,
}

fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what}: not supported here"),
    )
}

fn system_time((secs, nanos): (i64, u32)) -> std::time::SystemTime {
    let epoch = std::time::UNIX_EPOCH;
    if secs >= 0 {
        epoch + std::time::Duration::new(secs as u64, nanos)
    } else {
        epoch - std::time::Duration::new(secs.unsigned_abs(), 0)
            + std::time::Duration::new(0, nanos)
    }
}

fn std_times(t: &FileTimes) -> fs::FileTimes {
    fs::FileTimes::new()
        .set_accessed(system_time(t.accessed))
        .set_modified(system_time(t.modified))
}

fn metadata(m: &fs::Metadata) -> Metadata {
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
            // Not told by std: none known.
            attributes: super::Attributes::default(),
        }
    }
    #[cfg(not(unix))]
    {
        let t = |t: io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()))
        };
        let (mtime, mtime_nsec) = t(m.modified());
        let (atime, atime_nsec) = t(m.accessed());
        let file_type = if m.is_dir() {
            FileType::Dir
        } else if m.is_symlink() {
            FileType::Symlink
        } else {
            FileType::File
        };
        Metadata {
            file_type: Some(file_type),
            size: m.len(),
            blocks: m.len().div_ceil(512),
            nlink: 1,
            mode: if m.permissions().readonly() {
                0o444
            } else {
                0o666
            },
            mtime,
            mtime_nsec,
            atime,
            atime_nsec,
            ..Metadata::default()
        }
    }
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7777))
    }
    #[cfg(not(unix))]
    {
        let mut p = fs::metadata(path)?.permissions();
        p.set_readonly(mode & 0o200 == 0);
        fs::set_permissions(path, p)
    }
}

impl Dir {
    /// Makes the directory `name` in this one with the permission bits `mode` (on
    /// Unix; less the umask).
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`), this directory may not be
    /// written (`PermissionDenied`), no space.
    pub fn make_dir_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        #[cfg(unix)]
        let b = {
            let mut b = fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut b, mode & 0o7777);
            b
        };
        #[cfg(not(unix))]
        let b = {
            let _ = mode;
            fs::DirBuilder::new()
        };
        b.create(self.entry(name)?)
    }

    /// Makes the regular file `name` and opens it for writing: never a file that was
    /// there.
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`), this directory may not be
    /// written (`PermissionDenied`), no space.
    pub fn create_file_at(&self, name: &CStr, mode: u32) -> io::Result<File> {
        let path = self.entry(name)?;
        let mut o = fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, mode & 0o7777);
        #[cfg(not(unix))]
        let _ = mode;
        Ok(File {
            file: o.open(&path)?,
            path,
        })
    }

    /// Opens the existing regular file `name` for writing, emptied; a link there is
    /// refused (checked before the open: by path, not free of races).
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), is a link or a directory,
    /// or may not be written (`PermissionDenied`).
    pub fn open_file_write_at(&self, name: &CStr) -> io::Result<File> {
        let path = self.entry(name)?;
        if fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a symbolic link",
            ));
        }
        let file = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)?;
        Ok(File { file, path })
    }

    /// Opens the file `name` for reading; a link there is refused unless `follow`.
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), is a link and `follow` is
    /// not set, or may not be read (`PermissionDenied`).
    pub fn open_file_at(&self, name: &CStr, follow: bool) -> io::Result<File> {
        let path = self.entry(name)?;
        if !follow && fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a symbolic link",
            ));
        }
        Ok(File {
            file: fs::File::open(&path)?,
            path,
        })
    }

    /// Makes the symbolic link `name` leading to `target` (on Windows, a file link,
    /// which takes the privilege to make links).
    ///
    /// # Errors
    ///
    /// The system's error: `name` exists (`AlreadyExists`), no privilege.
    pub fn symlink_at(&self, target: &CStr, name: &CStr) -> io::Result<()> {
        let target = PathBuf::from(super::bytes_to_os(target.to_bytes()));
        let path = self.entry(name)?;
        #[cfg(unix)]
        return std::os::unix::fs::symlink(target, path);
        #[cfg(windows)]
        return std::os::windows::fs::symlink_file(target, path);
        #[cfg(not(any(unix, windows)))]
        {
            let _ = (target, path);
            Err(unsupported("symbolic links"))
        }
    }

    /// Makes `to_name` in `to` another name of the file `name` of this directory (a link
    /// there is followed only with `follow`, where the system lets it choose).
    ///
    /// # Errors
    ///
    /// The system's error: `to_name` exists (`AlreadyExists`), `name` does not
    /// (`NotFound`), different volumes.
    pub fn hard_link_at(
        &self,
        name: &CStr,
        to: &Dir,
        to_name: &CStr,
        follow: bool,
    ) -> io::Result<()> {
        let mut from = self.entry(name)?;
        if follow {
            from = fs::canonicalize(from)?;
        }
        fs::hard_link(from, to.entry(to_name)?)
    }

    /// Makes a fifo, socket or device: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn make_node_at(&self, name: &CStr, mode: u32, rdev: u64) -> io::Result<()> {
        let _ = (name, mode, rdev);
        Err(unsupported("fifos and devices"))
    }

    /// Sets the owner and group of the entry `name`, a link's own (`lchown`, on Unix;
    /// elsewhere there are no owners: `Unsupported`).
    ///
    /// # Errors
    ///
    /// The system's error: not allowed (`EPERM`); `Unsupported` off Unix.
    pub fn set_owner_at(&self, name: &CStr, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        #[cfg(unix)]
        return std::os::unix::fs::lchown(self.entry(name)?, uid, gid);
        #[cfg(not(unix))]
        {
            let _ = (name, uid, gid);
            Err(unsupported("owners"))
        }
    }

    /// Sets the times of the entry `name` (a link's own are not set here: `Unsupported`).
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), may not be written.
    pub fn set_times_at(&self, name: &CStr, times: &FileTimes) -> io::Result<()> {
        let path = self.entry(name)?;
        if fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(unsupported("the times of a symbolic link"));
        }
        fs::File::options()
            .write(true)
            .open(path)?
            .set_times(std_times(times))
    }

    /// Sets the permission bits of the entry `name` (not a link).
    ///
    /// # Errors
    ///
    /// The system's error: `name` does not exist (`NotFound`), is a link.
    pub fn set_mode_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        let path = self.entry(name)?;
        if fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a symbolic link",
            ));
        }
        set_mode(&path, mode)
    }

    /// Sets this directory's owner and group (on Unix; elsewhere `Unsupported`).
    ///
    /// # Errors
    ///
    /// The system's error: not allowed (`EPERM`); `Unsupported` off Unix.
    pub fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        #[cfg(unix)]
        return std::os::unix::fs::chown(self.own_path(), uid, gid);
        #[cfg(not(unix))]
        {
            let _ = (uid, gid);
            Err(unsupported("owners"))
        }
    }

    /// Sets this directory's times.
    ///
    /// # Errors
    ///
    /// The system's error: the directory may not be opened for it.
    pub fn set_times(&self, times: &FileTimes) -> io::Result<()> {
        let mut o = fs::File::options();
        o.write(true);
        #[cfg(windows)]
        {
            // FILE_FLAG_BACKUP_SEMANTICS: a directory opens only with it.
            std::os::windows::fs::OpenOptionsExt::custom_flags(&mut o, 0x0200_0000);
        }
        #[cfg(unix)]
        o.write(false).read(true);
        o.open(self.own_path())?.set_times(std_times(times))
    }

    /// Extended attributes of this directory: none here.
    ///
    /// # Errors
    ///
    /// None: an empty list.
    pub fn xattr_names(&self) -> io::Result<Vec<u8>> {
        Ok(Vec::new())
    }

    /// An extended attribute: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn xattr(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let _ = name;
        Err(unsupported("extended attributes"))
    }

    /// Sets an extended attribute: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn set_xattr(&self, name: &CStr, value: &[u8]) -> io::Result<()> {
        let _ = (name, value);
        Err(unsupported("extended attributes"))
    }

    /// Opens the directory at `path`, names separated by `/`, below this one, one name
    /// at a time, never following a link (each name opened as [`Dir::open_at`] opens
    /// it); `..` and absolute paths are refused.
    ///
    /// # Errors
    ///
    /// As [`Dir::open_at`] for each name; `InvalidInput` for `..` or an absolute path.
    pub fn open_dir_beneath(&self, path: &CStr) -> io::Result<Dir> {
        super::open_by_names(self, path, Dir::open_at)
    }

    /// Extended attributes of the entry `name`: none here.
    ///
    /// # Errors
    ///
    /// None: an empty list.
    pub fn xattr_names_at(&self, name: &CStr, follow: bool) -> io::Result<Vec<u8>> {
        let _ = (name, follow);
        Ok(Vec::new())
    }

    /// An extended attribute of the entry `name`: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn xattr_at(&self, name: &CStr, attr: &CStr, follow: bool) -> io::Result<Vec<u8>> {
        let _ = (name, attr, follow);
        Err(unsupported("extended attributes"))
    }

    /// Sets an extended attribute of the entry `name`: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn set_xattr_at(&self, name: &CStr, attr: &CStr, value: &[u8]) -> io::Result<()> {
        let _ = (name, attr, value);
        Err(unsupported("extended attributes"))
    }
}

impl File {
    /// Metadata of the open file.
    ///
    /// # Errors
    ///
    /// The system's error (an I/O error of the file system).
    pub fn stat(&self, _mask: StatMask) -> io::Result<Metadata> {
        Ok(metadata(&self.file.metadata()?))
    }

    /// Sets the permission bits (Windows: the read-only attribute, from the owner's
    /// write bit).
    ///
    /// # Errors
    ///
    /// The system's error: not the owner, a read-only file system.
    pub fn set_permissions(&self, mode: u32) -> io::Result<()> {
        set_mode(&self.path, mode)
    }

    /// Sets the owner and group (Unix only).
    ///
    /// # Errors
    ///
    /// The system's error: not allowed (`EPERM`); `Unsupported` off Unix.
    pub fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        #[cfg(unix)]
        return std::os::unix::fs::fchown(&self.file, uid, gid);
        #[cfg(not(unix))]
        {
            let _ = (uid, gid);
            Err(unsupported("owners"))
        }
    }

    /// Sets the times.
    ///
    /// # Errors
    ///
    /// The system's error: not the owner, a read-only file system.
    pub fn set_times(&self, times: &FileTimes) -> io::Result<()> {
        self.file.set_times(std_times(times))
    }

    /// Sets the size.
    ///
    /// # Errors
    ///
    /// The system's error: no space.
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    /// Extended attributes: none here.
    ///
    /// # Errors
    ///
    /// None: an empty list.
    pub fn xattr_names(&self) -> io::Result<Vec<u8>> {
        Ok(Vec::new())
    }

    /// An extended attribute: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn xattr(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let _ = name;
        Err(unsupported("extended attributes"))
    }

    /// Sets an extended attribute: not here.
    ///
    /// # Errors
    ///
    /// `Unsupported`.
    pub fn set_xattr(&self, name: &CStr, value: &[u8]) -> io::Result<()> {
        let _ = (name, value);
        Err(unsupported("extended attributes"))
    }
}

/// Shares the blocks of `src` with `dst`: not here.
///
/// # Errors
///
/// `Unsupported`.
pub fn reflink(src: &File, dst: &File) -> io::Result<()> {
    let _ = (src, dst);
    Err(unsupported("--reflink"))
}

/// Copies the data of `src` into the empty file `dst` (`std::io::copy`); holes are not
/// kept and blocks not shared here ([`Reflink::Always`] is `Unsupported`).
///
/// # Errors
///
/// The system's error for a read or a write, or `Unsupported` for
/// [`Reflink::Always`].
pub fn copy_data(
    src: &File,
    dst: &File,
    size: u64,
    blocks: u64,
    how: &DataCopy,
) -> io::Result<u64> {
    let _ = (size, blocks);
    if how.reflink == Reflink::Always {
        return Err(unsupported("--reflink=always"));
    }
    io::copy(&mut &src.file, &mut &dst.file)
}

/// [`copy_data`], adding the bytes it copied to `moved` once done.
///
/// # Errors
///
/// As [`copy_data`].
pub fn copy_data_counted(
    src: &File,
    dst: &File,
    size: u64,
    blocks: u64,
    how: &DataCopy,
    moved: &std::sync::atomic::AtomicU64,
) -> io::Result<u64> {
    let n = copy_data(src, dst, size, blocks, how)?;
    moved.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    Ok(n)
}

/// The file mode creation mask: where the system does not tell it without changing
/// it, the usual 022 (none on Windows).
pub fn umask() -> u32 {
    if cfg!(unix) {
        let from_proc = fs::read_to_string("/proc/self/status").ok().and_then(|s| {
            let v = s.lines().find_map(|l| l.strip_prefix("Umask:"))?;
            u32::from_str_radix(v.trim(), 8).ok()
        });
        from_proc.unwrap_or(0o022)
    } else {
        0
    }
}
