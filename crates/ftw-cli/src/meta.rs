//! An entry's metadata for what is shown of it (`-l`, `--format`, colours): from its
//! directory's listing where that told it (Windows), else asked relative to its
//! directory's handle where there is one, with only the fields needed.

use ftw::sys::{FileType, Metadata, StatMask};
use ftw::walk::Entry;

/// The entry's own metadata (a followed link's target's): as its directory's listing
/// gave it, where that holds the fields of `mask` (Windows: no call), else relative to
/// its directory's handle where there is one.
pub fn metadata(e: &Entry<'_>, mask: StatMask) -> std::io::Result<Metadata> {
    let follow = e.path_is_symlink() && e.file_type() != FileType::Symlink;
    if !follow && ftw::sys::listing_answers(mask) {
        if let Some(m) = e.listed_metadata() {
            return Ok(m);
        }
    }
    match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.stat_at(name, mask, follow),
        _ => ftw::sys::stat_path(&e.path(), mask, follow || e.depth() == 0),
    }
}

/// Whether a link not followed leads somewhere (what `LS_COLORS`'s `or` asks).
pub fn target_exists(e: &Entry<'_>) -> bool {
    match (e.dir(), e.c_name()) {
        (Some(dir), Some(name)) => dir.stat_at(name, StatMask::TYPE, true).is_ok(),
        _ => ftw::sys::stat_path(&e.path(), StatMask::TYPE, true).is_ok(),
    }
}
