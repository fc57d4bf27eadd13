//! Directories that are their own ancestors: a bind mount of a directory below itself
//! (`mount --bind a a/b`) shows `a` again at `a/b`, with `a`'s device and inode. du
//! neither counts nor enters such a directory (fts finds the cycle), and says nothing
//! of it when it is a mount point, as it is here.
//!
//! Each directory being counted has its identity in [`Live`] (in shards, so that
//! workers rarely wait) and a [`Lineage`], its identity linked to its parent's. Only a
//! directory whose identity is live already has its ancestors looked at, so a tree
//! without such a mount costs a set's insert and remove a directory, whatever its depth.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A directory's (device, inode).
pub(super) type Id = (u64, u64);

/// A directory being counted and its ancestors, by their identities.
pub(super) struct Lineage {
    id: Id,
    up: Option<Arc<Lineage>>,
}

impl Lineage {
    /// The lineage of a directory of identity `id` below `up`.
    pub(super) fn new(id: Id, up: Option<Arc<Lineage>>) -> Arc<Lineage> {
        Arc::new(Lineage { id, up })
    }

    /// The directory's identity.
    pub(super) fn id(&self) -> Id {
        self.id
    }

    /// Whether `id` is that of this directory or one of its ancestors.
    pub(super) fn holds(&self, id: Id) -> bool {
        let mut at = Some(self);
        while let Some(l) = at {
            if l.id == id {
                return true;
            }
            at = l.up.as_deref();
        }
        false
    }
}

impl Drop for Lineage {
    /// Without recursion, however deep the chain let go of at once.
    fn drop(&mut self) {
        let mut up = self.up.take();
        while let Some(l) = up.and_then(Arc::into_inner) {
            let mut l = l;
            up = l.up.take();
        }
    }
}

/// The identities of the directories being counted, each with how many times.
pub(super) struct Live(Vec<Mutex<HashMap<Id, u32>>>);

impl Live {
    pub(super) fn new() -> Live {
        Live((0..64).map(|_| Mutex::new(HashMap::new())).collect())
    }

    fn shard(&self, id: Id) -> std::sync::MutexGuard<'_, HashMap<Id, u32>> {
        let h = (id.1 ^ id.0.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0[(h >> 58) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a directory entered; whether one of the same identity was being counted.
    pub(super) fn enter(&self, id: Id) -> bool {
        let mut shard = self.shard(id);
        let n = shard.entry(id).or_insert(0);
        *n += 1;
        *n > 1
    }

    /// Takes back a directory left.
    pub(super) fn leave(&self, id: Id) {
        let mut shard = self.shard(id);
        if let Some(n) = shard.get_mut(&id) {
            *n -= 1;
            if *n == 0 {
                shard.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_found_among_its_ancestors_only() {
        let root = Lineage::new((1, 1), None);
        let a = Lineage::new((1, 2), Some(root.clone()));
        let b = Lineage::new((1, 3), Some(a.clone()));
        assert!(b.holds((1, 1)) && b.holds((1, 2)) && !b.holds((1, 4)));
        let live = Live::new();
        assert!(!live.enter((1, 2)));
        assert!(live.enter((1, 2)));
        live.leave((1, 2));
        live.leave((1, 2));
        assert!(!live.enter((1, 2)));
        // A chain deep enough to overflow a recursive drop, let go of from its end.
        let mut deep = root;
        for i in 0..200_000 {
            deep = Lineage::new((2, i), Some(deep));
        }
        drop((a, b));
        drop(deep);
    }
}
