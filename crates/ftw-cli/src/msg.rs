//! Messages on standard error: `ftw: PATH: reason` for what failed, `ftw: warning:` for
//! what the run went on without; both wipe a progress line first.

use crate::progress;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Reports `ftw: PATH: reason` on standard error, the path's bytes as they are.
pub fn report(path: &[u8], reason: &str) {
    let mut line = Vec::with_capacity(path.len() + reason.len() + 16);
    line.extend_from_slice(progress::before_message());
    line.extend_from_slice(b"ftw: ");
    line.extend_from_slice(path);
    line.extend_from_slice(b": ");
    line.extend_from_slice(reason.as_bytes());
    line.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&line);
}

/// Reports `ftw: warning: MESSAGE` on standard error: something the run went on without,
/// which does not change the exit status.
pub fn warn(message: &str) {
    let mut line = progress::before_message().to_vec();
    line.extend_from_slice(format!("ftw: warning: {message}\n").as_bytes());
    let _ = std::io::stderr().lock().write_all(&line);
}

/// Reports a walk's error (and sets `failed`): a root named like a pattern that is not
/// there also says how to match names.
pub fn walk_error(err: &ftw::walk::Error, failed: &AtomicBool) {
    failed.store(true, Ordering::Relaxed);
    let path = &*crate::os::bytes(err.path().as_os_str());
    let mut reason = err.reason();
    // 'ftw find foo' for a name foo that is not there: say how to look for names.
    if err.depth() == 0
        && err.io_error().kind() == std::io::ErrorKind::NotFound
        && !path.contains(&b'/')
    {
        reason.push_str(&format!(
            " (to match names: ftw find -n {})",
            String::from_utf8_lossy(path)
        ));
    }
    report(path, &reason);
}
