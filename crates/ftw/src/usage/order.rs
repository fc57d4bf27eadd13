//! du's order out of a parallel count: each directory after its contents, the entries
//! of a directory in the order its listing gave them, whatever worker finished first.
//!
//! Each directory whose line is told has a *node* here, holding what is to be told
//! from it in order: lines, and a place for each subdirectory to tell, reserved when
//! its directory's worker meets it (in listing order) and claimed by the subdirectory
//! when it is entered. One node, the *cursor*, is where the told output stands: what
//! reaches it is told at once; what reaches another node waits there until the cursor
//! comes (after everything before it was told). So only what waits on an earlier
//! sibling is held, never the tree.

use super::{Listed, Stamp, Totals};
use crate::sys::FileType;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// A node's number.
pub(super) type NodeId = usize;

/// The types a held line may have, by their number in it.
const TYPES: [FileType; 8] = [
    FileType::File,
    FileType::Dir,
    FileType::Symlink,
    FileType::BlockDevice,
    FileType::CharDevice,
    FileType::Fifo,
    FileType::Socket,
    FileType::Unknown,
];

fn put(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn get(buf: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Holds line `l` at the end of `buf`, packed (a few bytes and its path: a tree's
/// worth of `du -a` lines may wait on one slow directory).
fn hold(buf: &mut Vec<u8>, l: &Listed<'_>) {
    put(buf, l.path.len() as u64);
    buf.extend_from_slice(l.path);
    put(buf, l.depth as u64);
    let kind = TYPES.iter().position(|&t| t == l.file_type).unwrap_or(7);
    let same = l.own == l.total;
    let times = l.latest.is_some() || l.own_latest.is_some();
    buf.push(kind as u8 | if same { 0x80 } else { 0 } | if times { 0x40 } else { 0 });
    let both = [l.total, l.own];
    for t in &both[..if same { 1 } else { 2 }] {
        put(buf, t.bytes);
        put(buf, t.apparent);
        put(buf, t.inodes);
    }
    if times {
        for t in [l.latest, l.own_latest] {
            let t = t.unwrap_or_default();
            // Zigzag: times before the epoch are negative.
            put(buf, ((t.secs << 1) ^ (t.secs >> 63)) as u64);
            put(buf, u64::from(t.nsec));
        }
    }
}

/// Tells the line held in `buf` at `at`, and moves `at` past it.
fn tell_held(buf: &[u8], at: &mut usize, tell: &mut dyn FnMut(&Listed<'_>)) {
    let len = get(buf, at) as usize;
    let path = &buf[*at..*at + len];
    *at += len;
    let depth = get(buf, at) as usize;
    let kind = buf[*at];
    *at += 1;
    let mut totals = || Totals {
        bytes: get(buf, at),
        apparent: get(buf, at),
        inodes: get(buf, at),
    };
    let total = totals();
    let own = if kind & 0x80 != 0 { total } else { totals() };
    let mut time = || {
        (kind & 0x40 != 0).then(|| {
            let z = get(buf, at);
            Stamp {
                secs: (z >> 1) as i64 ^ -((z & 1) as i64),
                nsec: get(buf, at) as u32,
            }
        })
    };
    let latest = time();
    let own_latest = time();
    tell(&Listed {
        path,
        depth,
        file_type: TYPES[usize::from(kind & 0x3f)],
        total,
        own,
        latest,
        own_latest,
    });
}

enum Item {
    /// So many lines held in the node's buffer.
    Lines(usize),
    /// A subdirectory's place: everything it tells.
    Child(NodeId),
}

#[derive(Default)]
struct Node {
    parent: Option<NodeId>,
    items: VecDeque<Item>,
    /// The lines held, packed, and where the next to tell starts.
    held: Vec<u8>,
    read: usize,
    /// Subdirectories reserved here, claimed or not.
    reserved: Vec<NodeId>,
    /// While reserved and not claimed, its name.
    name: Option<Box<[u8]>>,
    /// Everything it will tell is in `items`.
    done: bool,
}

impl Node {
    fn push_line(&mut self, l: &Listed<'_>) {
        hold(&mut self.held, l);
        match self.items.back_mut() {
            Some(Item::Lines(n)) => *n += 1,
            _ => self.items.push_back(Item::Lines(1)),
        }
    }
}

#[derive(Default)]
struct Inner {
    nodes: Vec<Node>,
    free: Vec<NodeId>,
    /// Subdirectories reserved and not yet claimed, by parent and name.
    unclaimed: HashMap<(NodeId, Box<[u8]>), NodeId>,
    cursor: Option<NodeId>,
}

impl Inner {
    fn node(&mut self, parent: Option<NodeId>) -> NodeId {
        let node = Node {
            parent,
            ..Node::default()
        };
        match self.free.pop() {
            Some(id) => {
                self.nodes[id] = node;
                id
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    /// A line from `id`: told now if the cursor is there with nothing before it.
    fn line(&mut self, id: NodeId, l: &Listed<'_>, tell: &mut dyn FnMut(&Listed<'_>)) {
        if self.cursor == Some(id) && self.nodes[id].items.is_empty() {
            tell(l);
        } else {
            self.nodes[id].push_line(l);
        }
    }

    /// Tells what can be told from the cursor on.
    fn drain(&mut self, tell: &mut dyn FnMut(&Listed<'_>)) {
        while let Some(c) = self.cursor {
            let node = &mut self.nodes[c];
            match node.items.pop_front() {
                Some(Item::Lines(n)) => {
                    tell_held(&node.held, &mut node.read, tell);
                    if n > 1 {
                        node.items.push_front(Item::Lines(n - 1));
                    } else if node.read == node.held.len() {
                        node.held.clear();
                        node.read = 0;
                    }
                }
                Some(Item::Child(id)) => self.cursor = Some(id),
                None if node.done => {
                    self.cursor = node.parent;
                    *node = Node::default();
                    self.free.push(c);
                }
                None => break,
            }
        }
    }
}

/// The nodes of one root's count (see the [module](self)), behind one lock.
#[derive(Default)]
pub(super) struct Order(Mutex<Inner>);

impl Order {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A root's node, where the output starts.
    pub(super) fn root(&self) -> NodeId {
        let mut inner = self.lock();
        *inner = Inner::default();
        let id = inner.node(None);
        inner.cursor = Some(id);
        id
    }

    /// Reserves the place of subdirectory `name` of `parent`, met now in its listing.
    pub(super) fn reserve(&self, parent: NodeId, name: &[u8]) {
        let mut inner = self.lock();
        let id = inner.node(Some(parent));
        inner.nodes[parent].items.push_back(Item::Child(id));
        inner.nodes[parent].reserved.push(id);
        inner.nodes[id].name = Some(name.into());
        inner.unclaimed.insert((parent, name.into()), id);
    }

    /// The node of subdirectory `name` of `parent`, now entered: its reserved place, or
    /// (were none reserved) one at the end of what `parent` tells so far.
    pub(super) fn claim(&self, parent: NodeId, name: &[u8]) -> NodeId {
        let mut inner = self.lock();
        if let Some(id) = inner.unclaimed.remove(&(parent, name.into())) {
            inner.nodes[id].name = None;
            return id;
        }
        let id = inner.node(Some(parent));
        inner.nodes[parent].items.push_back(Item::Child(id));
        id
    }

    /// A line of `id` (a file of it), in its listing's order.
    pub(super) fn line(&self, id: NodeId, l: &Listed<'_>, tell: &mut dyn FnMut(&Listed<'_>)) {
        self.lock().line(id, l, tell);
    }

    /// Node `id` is done, its own line `l` last (if it has one): what it tells is
    /// complete. Its reserved subdirectories never entered tell nothing.
    pub(super) fn close(
        &self,
        id: NodeId,
        l: Option<&Listed<'_>>,
        tell: &mut dyn FnMut(&Listed<'_>),
    ) {
        let mut inner = self.lock();
        if let Some(l) = l {
            inner.line(id, l, tell);
        }
        let reserved = std::mem::take(&mut inner.nodes[id].reserved);
        for r in reserved {
            if inner.nodes[r].parent != Some(id) {
                continue; // given back, and given again elsewhere
            }
            if let Some(name) = inner.nodes[r].name.take() {
                inner.unclaimed.remove(&(id, name));
                inner.nodes[r].done = true;
            }
        }
        inner.nodes[id].done = true;
        inner.drain(tell);
    }

    /// Subdirectory `name` of `parent` could not be entered and tells `l` alone, at
    /// its place if one was reserved.
    pub(super) fn alone(
        &self,
        parent: NodeId,
        name: &[u8],
        l: &Listed<'_>,
        tell: &mut dyn FnMut(&Listed<'_>),
    ) {
        let mut inner = self.lock();
        match inner.unclaimed.remove(&(parent, name.into())) {
            Some(id) => {
                inner.nodes[id].name = None;
                inner.nodes[id].push_line(l);
                inner.nodes[id].done = true;
                inner.drain(tell);
            }
            None => inner.line(parent, l, tell),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(path: &str) -> Listed<'_> {
        Listed {
            path: path.as_bytes(),
            depth: 0,
            file_type: FileType::Dir,
            total: Totals::default(),
            own: Totals::default(),
            latest: None,
            own_latest: None,
        }
    }

    #[test]
    fn lines_come_in_listing_order_whoever_finishes_first() {
        let order = Order::default();
        let mut out: Vec<String> = Vec::new();
        let mut tell = |x: &Listed<'_>| out.push(String::from_utf8(x.path.to_vec()).unwrap());
        let r = order.root();
        order.reserve(r, b"a");
        order.line(r, &l("f"), &mut tell);
        order.reserve(r, b"b");
        order.reserve(r, b"never");
        let b = order.claim(r, b"b");
        order.close(b, Some(&l("b")), &mut tell);
        let a = order.claim(r, b"a");
        order.reserve(a, b"x");
        order.alone(a, b"x", &l("a/x"), &mut tell);
        order.close(a, Some(&l("a")), &mut tell);
        order.close(r, Some(&l(".")), &mut tell);
        assert_eq!(out, ["a/x", "a", "f", "b", "."]);
        let mut buf = Vec::new();
        let big = Totals {
            bytes: u64::MAX,
            apparent: 1 << 40,
            inodes: 3,
        };
        let odd = Listed {
            path: b"x\xff\ny",
            depth: 300,
            file_type: FileType::Fifo,
            total: big,
            own: Totals::default(),
            latest: None,
            own_latest: None,
        };
        hold(&mut buf, &odd);
        let t = |secs, nsec| Some(Stamp { secs, nsec });
        hold(
            &mut buf,
            &Listed {
                own: big,
                latest: t(-5, 999_999_999),
                own_latest: t(i64::MAX, 1),
                ..odd
            },
        );
        let (mut at, mut back) = (0, Vec::new());
        while at < buf.len() {
            tell_held(&buf, &mut at, &mut |x| {
                back.push((x.path.to_vec(), x.depth, x.file_type, x.total, x.own))
            });
        }
        let want = (odd.path.to_vec(), 300, FileType::Fifo, big);
        assert_eq!(
            back,
            [
                (want.0.clone(), want.1, want.2, want.3, Totals::default()),
                (want.0, want.1, want.2, want.3, big)
            ]
        );
        // Every node given back: the next root starts afresh.
        assert!(order.lock().unclaimed.is_empty());
    }
}
