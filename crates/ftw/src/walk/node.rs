//! A directory in a walk, as every walker handles it.

use crate::sys::Dir;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory handle shared by the jobs of its subdirectories; counted against the
/// walk's handle budget while it lives.
pub(crate) struct Handle {
    pub(crate) dir: Dir,
    open: Arc<AtomicUsize>,
}

impl Handle {
    /// Shares `dir` if fewer than `limit` handles are shared now (`force`: regardless).
    pub(crate) fn share(
        dir: Dir,
        open: &Arc<AtomicUsize>,
        limit: usize,
        force: bool,
    ) -> Result<Arc<Handle>, Dir> {
        if open.fetch_add(1, Ordering::Relaxed) < limit || force {
            Ok(Arc::new(Handle {
                dir,
                open: open.clone(),
            }))
        } else {
            open.fetch_sub(1, Ordering::Relaxed);
            Err(dir)
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}
