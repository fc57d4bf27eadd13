//! An entry's metadata for what is shown of it (`-l`, `--format`, colours): asked
//! relative to its directory's handle where there is one, with only the fields needed.

use ftw::sys::{FileType, Metadata, StatMask};
use ftw::walk::Entry;

/// The entry's own metadata (a followed link's target's), relative to its directory's
/// handle where there is one.
pub fn metadata(e: &Entry<'_>, mask: StatMask) -> Option<Metadata> {
    let follow = e.path_is_symlink() && e.file_type() != FileType::Symlink;
    match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.stat_at(name, mask, follow).ok(),
        _ => ftw::sys::stat_path(&e.path(), mask, follow || e.depth() == 0).ok(),
    }
}

/// Whether a link not followed leads somewhere (what `LS_COLORS`'s `or` asks).
pub fn target_exists(e: &Entry<'_>) -> bool {
    match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.stat_at(name, StatMask::TYPE, true).is_ok(),
        _ => ftw::sys::stat_path(&e.path(), StatMask::TYPE, true).is_ok(),
    }
}
