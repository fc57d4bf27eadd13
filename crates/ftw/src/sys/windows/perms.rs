//! Permissions: Windows has no Unix modes; the read-only attribute stands for the
//! owner's write bit.

use super::Dir;
use std::ffi::{CStr, OsString};
use std::io;
use std::os::windows::ffi::OsStringExt;

impl Dir {
    /// Whether this process may read, write and search the entry `name`: Windows has no
    /// Unix modes to change (yes).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be asked about: it does not exist
    /// (`NotFound`), or this directory may not be searched.
    pub fn may_change_at(&self, _name: &CStr) -> io::Result<bool> {
        Ok(true)
    }

    /// Whether this process may remove entries of this directory: Windows has no Unix
    /// modes to ask (yes); the removal itself says.
    ///
    /// # Errors
    ///
    /// None here.
    pub fn may_write(&self) -> io::Result<()> {
        Ok(())
    }

    /// Sets this directory's read-only attribute: set when `mode` has no owner write.
    ///
    /// # Errors
    ///
    /// The system's error when the mode may not be changed: not the owner
    /// (`PermissionDenied`), a read-only file system.
    pub fn set_permissions(&self, mode: u32) -> io::Result<()> {
        let path = OsString::from_wide(&self.path);
        let mut p = std::fs::metadata(&path)?.permissions();
        p.set_readonly(mode & 0o200 == 0);
        std::fs::set_permissions(&path, p)
    }

    /// Unix permission bits of a subdirectory: nothing to set on Windows, where a
    /// directory's attributes do not keep its entries (`Unsupported`).
    ///
    /// # Errors
    ///
    /// The system's error when `name` cannot be opened or its mode changed: it does not
    /// exist (`NotFound`), is not a directory (`NotADirectory`), is a symbolic link, or may
    /// not be changed (`PermissionDenied`).
    pub fn set_dir_permissions_at(&self, name: &CStr, mode: u32) -> io::Result<()> {
        let _ = (name, mode);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}
