//! The walk's order, as the read-ahead keeps it: each directory's place (its [`Key`]),
//! the groups of subdirectories queued together, and the stack they wait on, the group
//! holding the directory wanted soonest on top.

use super::slots::SlotId;
use super::{AheadInfo, MAX_REL, Root, State};
use super::{Slot, Slots};
use crate::walk::gate::{DirRules, Gate};
use crate::walk::listing::{Item, Listing};
use crate::walk::node::Handle;
use crate::walk::step::{self, Place};
use crate::walk::{Entry, Filter, Options};
use std::cmp::Ordering;
use std::ffi::CStr;
use std::sync::Arc;

/// A directory's place in the walk's order: its index in its parent's listing (a root's:
/// its rank among the roots) below its parent's place. Keys compare as the lists of
/// indexes from the root down would, a directory after its ancestors; each holds one
/// index, whatever the depth.
pub(super) struct KeyNode {
    parent: Option<Key>,
    index: u32,
    depth: u32,
}

pub(super) type Key = Arc<KeyNode>;

impl KeyNode {
    /// The key of the `rank`th root.
    pub(super) fn root(rank: u32) -> Key {
        Arc::new(KeyNode {
            parent: None,
            index: rank,
            depth: 0,
        })
    }

    /// The key of the `index`th entry of the directory whose key is `parent`.
    pub(super) fn child(parent: &Key, index: usize) -> Key {
        Arc::new(KeyNode {
            parent: Some(parent.clone()),
            index: index as u32,
            depth: parent.depth + 1,
        })
    }
}

impl Drop for KeyNode {
    /// Lets go of the ancestors one at a time, not by recursion: the last key of a deep
    /// chain may be the only one holding it.
    fn drop(&mut self) {
        let mut next = self.parent.take();
        while let Some(node) = next {
            next = Arc::into_inner(node).and_then(|mut n| n.parent.take());
        }
    }
}

/// Compares two places in the walk's order: levelled to the same depth (a directory
/// comes after its ancestors), then walked up to their nearest common ancestor, where
/// the highest index that differs decides. Two keys made apart for the same directory
/// compare equal.
pub(super) fn cmp_keys(a: &KeyNode, b: &KeyNode) -> Ordering {
    let (mut a, mut b) = (a, b);
    let mut ord = a.depth.cmp(&b.depth);
    while a.depth > b.depth {
        a = a
            .parent
            .as_deref()
            .expect("a key deeper than 0 has a parent");
    }
    while b.depth > a.depth {
        b = b
            .parent
            .as_deref()
            .expect("a key deeper than 0 has a parent");
    }
    while !std::ptr::eq(a, b) {
        if a.index != b.index {
            ord = a.index.cmp(&b.index);
        }
        match (&a.parent, &b.parent) {
            (Some(pa), Some(pb)) => (a, b) = (pa, pb),
            _ => break,
        }
    }
    ord
}

/// The subdirectories of one directory, queued together.
pub(super) struct Group {
    /// The directory's path below the root, ending with `/` (empty for the root), while
    /// short enough for its children to be opened by it ([`MAX_REL`]); past that, they
    /// are opened through `dir` alone. So a group holds no more than `MAX_REL` bytes of
    /// path, however deep it lies.
    pub(super) rel: Option<Vec<u8>>,
    /// The children's names, each followed by a NUL.
    names: Vec<u8>,
    pub(super) children: Vec<Child>,
    /// The directory's handle, where one is shared.
    pub(super) dir: Option<Arc<Handle>>,
    /// The directory's (device, inode): opened again by its path, it must be the same.
    pub(super) id: Option<(u64, u64)>,
    /// The children's depth.
    pub(super) depth: usize,
    pub(super) root: Arc<Root>,
    /// The directory's rules, beside a gate: those its children's are made from.
    pub(super) rules: Option<DirRules>,
}

pub(super) struct Child {
    /// Where the name starts in the group's `names`.
    name: u32,
    /// The child's index in its directory's listing.
    pub(super) index: u32,
    pub(super) key: Key,
    pub(super) slot: SlotId,
}

impl Group {
    pub(super) fn name(&self, c: &Child) -> &CStr {
        CStr::from_bytes_until_nul(&self.names[c.name as usize..]).expect("NUL-terminated")
    }

    /// Whether this is the root's group (its children open from the root's handle).
    pub(super) fn at_root(&self) -> bool {
        self.rel.as_ref().is_some_and(|r| r.is_empty())
    }

    /// The path below the root of the `c`th child, into `out`; its name alone when the
    /// group's path was not kept.
    pub(super) fn child_rel(&self, c: usize, out: &mut Vec<u8>) {
        out.clear();
        if let Some(rel) = &self.rel {
            out.extend_from_slice(rel);
        }
        out.extend_from_slice(self.name(&self.children[c]).to_bytes());
    }
}

/// A group waiting on the stack, and the next of its children to hand out.
pub(super) struct Waiting {
    pub(super) group: Arc<Group>,
    pub(super) next: usize,
}

impl Waiting {
    /// Orders by the next child to hand out (the key of the whole rest of the group).
    fn cmp_next(&self, o: &Waiting) -> Ordering {
        cmp_keys(
            &self.group.children[self.next].key,
            &o.group.children[o.next].key,
        )
    }
}

/// Makes the group of the subdirectories listed in `list`, the listing of the
/// directory whose path below the root is `rel` (`None`: too long to keep), key `key`
/// and identity `id`, without the lock; `None` when there is nothing to queue. Without
/// a shared handle (`dir`), a worker opens a child from its parent opened by path and
/// checked against `id`: with the path unknown, nothing is queued, and with the
/// identity unknown, only the root's children (opened from the root's handle).
/// Beside a gate, the directory's `rules` (made already) leave out what they do not
/// keep, and its children's paths must be known, to make their rules.
#[allow(clippy::too_many_arguments)]
pub(super) fn prepare(
    opts: &Options,
    filter: Option<&Filter>,
    gate: Option<(&dyn Gate, Option<&DirRules>)>,
    root: &Arc<Root>,
    rel: Option<&[u8]>,
    depth: usize,
    list: &Listing,
    key: &Key,
    id: Option<(u64, u64)>,
    dir: Option<Arc<Handle>>,
) -> Option<Group> {
    if depth + 1 >= opts.max_depth {
        return None;
    }
    let gate = match gate {
        None => None,
        // Its rules are not known, or its children's paths would not be kept.
        Some((_, None)) => return None,
        Some(_) if rel.is_none_or(|r| r.len() >= MAX_REL) => return None,
        Some((gate, Some(rules))) => Some((gate, rules)),
    };
    // The length of the group's path: the directory's and a `/`, none for the root.
    let rel_len = rel.map(|r| r.len() + usize::from(!r.is_empty()));
    if dir.is_none() && (rel_len.is_none() || id.is_none() && rel_len != Some(0)) {
        return None;
    }
    // What the walker will enter, as it decides it (the visitor's word aside).
    let enters = |item: &Item| {
        !list.is_error(item)
            && step::enters(opts, item.file_type, depth + 1, list.id(item), root.dev)
    };
    let (count, bytes) = list
        .items
        .iter()
        .filter(|item| enters(item))
        .fold((0, 0), |(n, b), item| {
            (n + 1, b + list.c_name(item).to_bytes_with_nul().len())
        });
    if count == 0 {
        return None;
    }
    // The filter sees each subdirectory as the walker will show it: with its full path.
    let parent = match (filter.is_some() || gate.is_some(), rel) {
        (false, _) => None,
        (true, None) => return None,
        (true, Some(rel)) => Some(root.path_of(rel)),
    };
    let mut scratch = Vec::new();
    let mut names = Vec::with_capacity(bytes);
    let mut children = Vec::with_capacity(count);
    for (i, item) in list.items.iter().enumerate() {
        if !enters(item) {
            continue;
        }
        let name = list.c_name(item).to_bytes_with_nul();
        if dir.is_none() && rel_len.is_none_or(|len| len + name.len() > MAX_REL) {
            continue;
        }
        if let Some(parent) = &parent {
            let at = Place {
                parent,
                depth: depth + 1,
                dir: dir.as_deref().map(|h| &h.dir),
                root_dev: root.dev,
            };
            let e = Entry::listed(&at, list, item, item.file_type, item.followed_link);
            // As the walker asks: the filter, then the gate.
            if filter.is_some_and(|keep| !keep(&e))
                || gate.is_some_and(|(gate, rules)| !gate.keeps(rules, &e, &mut scratch))
            {
                continue;
            }
        }
        children.push(Child {
            name: names.len() as u32,
            index: i as u32,
            key: KeyNode::child(key, i),
            slot: SlotId::NONE,
        });
        names.extend_from_slice(name);
    }
    if children.is_empty() {
        return None;
    }
    let group_rel = rel.filter(|r| r.len() < MAX_REL).map(|r| {
        let mut v = Vec::with_capacity(r.len() + 1);
        v.extend_from_slice(r);
        if !r.is_empty() {
            v.push(b'/');
        }
        v
    });
    Some(Group {
        rel: group_rel,
        names,
        children,
        dir,
        id,
        depth: depth + 1,
        root: root.clone(),
        rules: gate.map(|(_, rules)| rules.clone()),
    })
}

/// Queues a group made by [`prepare`] (under the lock), and records its children's
/// slots in `info`, for a listing of `len` entries.
pub(super) fn push_group(st: &mut State, mut group: Group, info: &mut AheadInfo, len: usize) {
    info.slots.clear();
    info.slots.resize(len, SlotId::NONE);
    for c in &mut group.children {
        c.slot = st.slots.insert(Slot::Claimed);
        info.slots[c.index as usize] = c.slot;
    }
    let group = Arc::new(group);
    for (i, c) in group.children.iter().enumerate() {
        if let Some(slot) = st.slots.get_mut(c.slot) {
            *slot = Slot::Queued(group.clone(), i as u32);
        }
    }
    let new = Waiting { group, next: 0 };
    // Reads finish nearly in order: the new group almost always goes on top. Each group
    // passed on the way down is first moved past the children the walker claimed (their
    // subdirectories may be this very group).
    let mut at = st.stack.len();
    while at > 0 {
        let State {
            stack,
            slots,
            trash,
            ..
        } = &mut *st;
        if !skip_claimed(slots, &mut stack[at - 1]) {
            trash.push(stack.remove(at - 1).group);
        } else if stack[at - 1].cmp_next(&new) == Ordering::Greater {
            break;
        }
        at -= 1;
    }
    st.stack.insert(at, new);
    #[cfg(test)]
    check_order(st);
}

/// Checks (in tests) that the stack is in the walk's order, each group by the first of
/// its children still queued: the top group holds the directory wanted soonest.
#[cfg(test)]
fn check_order(st: &State) {
    let next = |w: &Waiting| -> Option<Key> {
        let c = w.group.children[w.next..].iter().find(|c| {
            matches!(
                st.slots.entry(c.slot).map(|e| &e.slot),
                Some(Slot::Queued(..))
            )
        })?;
        Some(c.key.clone())
    };
    let keys: Vec<_> = st.stack.iter().filter_map(next).collect();
    assert!(
        keys.windows(2)
            .all(|w| cmp_keys(&w[0], &w[1]) == Ordering::Greater),
        "read-ahead stack out of order"
    );
}

/// Moves a waiting group past the children the walker claimed (it reads them itself;
/// their own subdirectories come before the group's next child in the walk's order);
/// says whether a child is left to hand out.
pub(super) fn skip_claimed(slots: &mut Slots, w: &mut Waiting) -> bool {
    while let Some(c) = w.group.children.get(w.next) {
        // A child not handed out yet is queued, or claimed by the walker.
        if let Some(Slot::Queued(..)) = slots.get_mut(c.slot) {
            return true;
        }
        slots.remove(c.slot);
        w.next += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of the path of indexes `path` below a root of rank 1, made from `base`
    /// (the root's key) node by node.
    fn key(base: &Key, path: &[usize]) -> Key {
        path.iter()
            .fold(base.clone(), |k, &i| KeyNode::child(&k, i))
    }

    #[test]
    fn keys_compare_as_their_index_lists() {
        let root = KeyNode::root(1);
        let paths: &[&[usize]] = &[&[], &[0], &[0, 0], &[0, 5, 1], &[1], &[1, 0], &[2], &[10]];
        for a in paths {
            for b in paths {
                // Made apart, as the walker and a worker may make them.
                let (ka, kb) = (key(&root, a), key(&root, b));
                assert_eq!(cmp_keys(&ka, &kb), a.cmp(b), "{a:?} vs {b:?}");
                // Sharing a prefix.
                let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
                let base = key(&root, &a[..common]);
                let (ka, kb) = (key(&base, &a[common..]), key(&base, &b[common..]));
                assert_eq!(cmp_keys(&ka, &kb), a.cmp(b), "{a:?} vs {b:?} (shared)");
            }
        }
        let other_root = KeyNode::root(2);
        assert_eq!(
            cmp_keys(&key(&root, &[9, 9]), &key(&other_root, &[0])),
            Ordering::Less
        );
    }

    #[test]
    fn a_deep_chain_of_keys_is_dropped_on_a_small_stack() {
        // Dropped by recursion, a million nodes would need far more than 64 KiB.
        std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(|| {
                let mut k = KeyNode::root(1);
                for _ in 0..1_000_000 {
                    k = KeyNode::child(&k, 0);
                }
                assert_eq!(k.depth, 1_000_000);
                drop(k);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
