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
pub(super) fn hold(buf: &mut Vec<u8>, l: &Listed<'_>) {
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

/// What a node's files of deferred count added when their turn came: to its total,
/// to its own (`du -S`), and their latest times.
#[derive(Clone, Copy, Default)]
pub(super) struct Adjust {
    pub(super) total: Totals,
    pub(super) own: Totals,
    pub(super) latest: Option<Stamp>,
    pub(super) own_latest: Option<Stamp>,
}

impl Adjust {
    fn apply(&self, l: &Listed<'_>) -> (Totals, Totals, Option<Stamp>, Option<Stamp>) {
        (
            l.total + self.total,
            l.own + self.own,
            l.latest.max(self.latest),
            l.own_latest.max(self.own_latest),
        )
    }
}

/// Tells `l` to `out`, with what `adj` adds to it.
fn tell_adjusted(l: &Listed<'_>, adj: Option<&Adjust>, out: &mut dyn Out) {
    match adj {
        Some(a) => {
            let (total, own, latest, own_latest) = a.apply(l);
            out.tell(&Listed {
                total,
                own,
                latest,
                own_latest,
                ..*l
            });
        }
        None => out.tell(l),
    }
}

/// Where told lines go, and who says whether a file met again is met for the first
/// time in du's order (the set of files counted).
pub(super) trait Out {
    fn tell(&mut self, l: &Listed<'_>);
    fn first(&mut self, dev: u64, ino: u64) -> bool;
}

/// A file whose count waits for its turn in du's order: a name of a file with several
/// links (or, where every file is remembered, any file), counted only if no name of it
/// came before.
pub(super) struct Deferred {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) total: Totals,
    pub(super) latest: Option<Stamp>,
    /// In its node's directory itself (its own), not below.
    pub(super) own: bool,
    /// Its line, packed, if it has one (`du -a`).
    pub(super) line: Option<Vec<u8>>,
}

/// Tells the line held in `buf` at `at`, and moves `at` past it.
fn tell_held(buf: &[u8], at: &mut usize, adj: Option<&Adjust>, out: &mut dyn Out) {
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
    let l = Listed {
        path,
        depth,
        file_type: TYPES[usize::from(kind & 0x3f)],
        total,
        own,
        latest,
        own_latest,
    };
    tell_adjusted(&l, adj, out);
}

enum Item {
    /// So many lines held in the node's buffer.
    Lines(usize),
    /// The node's own line, held in its buffer, told with its [`Adjust`].
    Own,
    /// A file counted in its turn.
    Deferred(Box<Deferred>),
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
    /// What its deferred files, and its subdirectories', added.
    adj: Adjust,
}

impl Node {
    /// A deferred file's turn: counted, and its line told, if no name of it came
    /// before.
    fn resolve(&mut self, d: &Deferred, out: &mut dyn Out) {
        if !out.first(d.dev, d.ino) {
            return;
        }
        self.adj.total += d.total;
        self.adj.latest = self.adj.latest.max(d.latest);
        if d.own {
            self.adj.own += d.total;
            self.adj.own_latest = self.adj.own_latest.max(d.latest);
        }
        if let Some(line) = &d.line {
            tell_held(line, &mut 0, None, out);
        }
    }

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
    /// The root's [`Adjust`], once it is told.
    root_adj: Option<Adjust>,
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
    fn line(&mut self, id: NodeId, l: &Listed<'_>, out: &mut dyn Out) {
        if self.cursor == Some(id) && self.nodes[id].items.is_empty() {
            out.tell(l);
        } else {
            self.nodes[id].push_line(l);
        }
    }

    /// A deferred file of `id`: counted now if the cursor is there with nothing before.
    fn deferred(&mut self, id: NodeId, d: Deferred, out: &mut dyn Out) {
        if self.cursor == Some(id) && self.nodes[id].items.is_empty() {
            self.nodes[id].resolve(&d, out);
        } else {
            self.nodes[id].items.push_back(Item::Deferred(Box::new(d)));
        }
    }

    /// Tells what can be told from the cursor on.
    fn drain(&mut self, out: &mut dyn Out) {
        while let Some(c) = self.cursor {
            let node = &mut self.nodes[c];
            match node.items.pop_front() {
                Some(Item::Own) => {
                    let adj = node.adj;
                    tell_held(&node.held, &mut node.read, Some(&adj), out);
                }
                Some(Item::Deferred(d)) => node.resolve(&d, out),
                Some(Item::Lines(n)) => {
                    tell_held(&node.held, &mut node.read, None, out);
                    if n > 1 {
                        node.items.push_front(Item::Lines(n - 1));
                    } else if node.read == node.held.len() {
                        node.held.clear();
                        node.read = 0;
                    }
                }
                Some(Item::Child(id)) => self.cursor = Some(id),
                None if node.done => {
                    let adj = node.adj;
                    self.cursor = node.parent;
                    *node = Node::default();
                    self.free.push(c);
                    match self.cursor {
                        // A subdirectory's adds are its parent's, below it.
                        Some(p) => {
                            let up = &mut self.nodes[p].adj;
                            up.total += adj.total;
                            up.latest = up.latest.max(adj.latest);
                        }
                        None => self.root_adj = Some(adj),
                    }
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
    pub(super) fn line(&self, id: NodeId, l: &Listed<'_>, out: &mut dyn Out) {
        self.lock().line(id, l, out);
    }

    /// Files of `id` (or below it) counted in their turn, in its listing's order.
    pub(super) fn deferred(
        &self,
        id: NodeId,
        files: impl IntoIterator<Item = Deferred>,
        out: &mut dyn Out,
    ) {
        let mut inner = self.lock();
        for d in files {
            inner.deferred(id, d, out);
        }
    }

    /// What the last root's deferred files added to it, once it was told.
    pub(super) fn root_adjust(&self) -> Option<Adjust> {
        self.lock().root_adj.take()
    }

    /// Node `id` is done, its own line `l` last (if it has one): what it tells is
    /// complete. Its reserved subdirectories never entered tell nothing.
    pub(super) fn close(&self, id: NodeId, l: Option<&Listed<'_>>, out: &mut dyn Out) {
        let mut inner = self.lock();
        if let Some(l) = l {
            if inner.cursor == Some(id) && inner.nodes[id].items.is_empty() {
                let adj = inner.nodes[id].adj;
                tell_adjusted(l, Some(&adj), out);
            } else {
                let node = &mut inner.nodes[id];
                hold(&mut node.held, l);
                node.items.push_back(Item::Own);
            }
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
        inner.drain(out);
    }

    /// Subdirectory `name` of `parent` could not be entered and tells `l` alone, at
    /// its place if one was reserved.
    pub(super) fn alone(&self, parent: NodeId, name: &[u8], l: &Listed<'_>, out: &mut dyn Out) {
        let mut inner = self.lock();
        match inner.unclaimed.remove(&(parent, name.into())) {
            Some(id) => {
                inner.nodes[id].name = None;
                inner.nodes[id].push_line(l);
                inner.nodes[id].done = true;
                inner.drain(out);
            }
            None => inner.line(parent, l, out),
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

    /// Told lines: by path, and whole; a file is met for the first time unless its
    /// inode is 9.
    #[derive(Default)]
    struct Lines(Vec<String>, Vec<Told>);

    /// A line told, whole.
    type Told = (
        Vec<u8>,
        usize,
        FileType,
        Totals,
        Totals,
        Option<Stamp>,
        Option<Stamp>,
    );

    impl Out for Lines {
        fn tell(&mut self, l: &Listed<'_>) {
            self.0.push(String::from_utf8_lossy(l.path).into_owned());
            self.1.push((
                l.path.to_vec(),
                l.depth,
                l.file_type,
                l.total,
                l.own,
                l.latest,
                l.own_latest,
            ));
        }
        fn first(&mut self, _: u64, ino: u64) -> bool {
            ino != 9
        }
    }

    #[test]
    fn lines_come_in_listing_order_whoever_finishes_first() {
        let order = Order::default();
        let mut out = Lines::default();
        let r = order.root();
        order.reserve(r, b"a");
        order.line(r, &l("f"), &mut out);
        order.reserve(r, b"b");
        order.reserve(r, b"never");
        let b = order.claim(r, b"b");
        order.close(b, Some(&l("b")), &mut out);
        let a = order.claim(r, b"a");
        order.reserve(a, b"x");
        order.alone(a, b"x", &l("a/x"), &mut out);
        order.close(a, Some(&l("a")), &mut out);
        order.close(r, Some(&l(".")), &mut out);
        assert_eq!(out.0, ["a/x", "a", "f", "b", "."]);
        // Every node given back: the next root starts afresh.
        assert!(order.lock().unclaimed.is_empty());
    }

    #[test]
    fn held_lines_come_back_whole() {
        let mut buf = Vec::new();
        let big = Totals {
            bytes: u64::MAX,
            apparent: 1 << 40,
            inodes: 3,
        };
        let t = |secs, nsec| Some(Stamp { secs, nsec });
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
        hold(
            &mut buf,
            &Listed {
                own: big,
                latest: t(-5, 999_999_999),
                own_latest: t(i64::MAX, 1),
                ..odd
            },
        );
        let (mut at, mut out) = (0, Lines::default());
        while at < buf.len() {
            tell_held(&buf, &mut at, None, &mut out);
        }
        let p = odd.path.to_vec();
        assert_eq!(
            out.1,
            [
                (
                    p.clone(),
                    300,
                    FileType::Fifo,
                    big,
                    Totals::default(),
                    None,
                    None
                ),
                (
                    p,
                    300,
                    FileType::Fifo,
                    big,
                    big,
                    t(-5, 999_999_999),
                    t(i64::MAX, 1)
                ),
            ]
        );
    }

    #[test]
    fn a_file_met_twice_counts_where_du_order_meets_it_first() {
        let order = Order::default();
        let mut out = Lines::default();
        let one = Totals {
            bytes: 10,
            apparent: 1,
            inodes: 1,
        };
        let file = |ino, own| Deferred {
            dev: 1,
            ino,
            total: one,
            latest: None,
            own,
            line: None,
        };
        let r = order.root();
        order.reserve(r, b"a");
        order.reserve(r, b"b");
        // b is done first, a comes first: each file counts in its turn (9 stands for a
        // file counted already, which counts nowhere).
        let b = order.claim(r, b"b");
        order.deferred(b, [file(5, true)], &mut out);
        order.deferred(b, [file(9, true)], &mut out);
        order.close(b, Some(&l("b")), &mut out);
        let a = order.claim(r, b"a");
        order.deferred(a, [file(6, true)], &mut out);
        order.close(a, Some(&l("a")), &mut out);
        order.deferred(r, [file(7, true)], &mut out);
        order.close(r, Some(&l(".")), &mut out);
        let shown: Vec<_> = out
            .1
            .iter()
            .map(|o| (o.0.clone(), o.3.bytes, o.4.bytes))
            .collect();
        assert_eq!(
            shown,
            [
                (b"a".to_vec(), 10, 10),
                (b"b".to_vec(), 10, 10),
                (b".".to_vec(), 30, 10)
            ]
        );
        assert_eq!(order.root_adjust().map(|a| a.total.bytes), Some(30));
    }
}
