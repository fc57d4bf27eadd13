//! Hard links counted once: the set of (device, inode) pairs counted.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A hasher for (device, inode) pairs: a multiply and a rotation per word, not SipHash
/// (the keys come from the file system, not from an adversary choosing collisions
/// through a network).
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

type IdSet = HashSet<(u64, u64), std::hash::BuildHasherDefault<IdHasher>>;
type IdMap<V> = HashMap<(u64, u64), V, std::hash::BuildHasherDefault<IdHasher>>;

/// The (device, inode) pairs counted, in shards so that workers rarely wait, with a
/// bitmap in front: a pair whose bit is clear was never counted, which an atomic load
/// tells without taking a lock (most files of most trees have one link, never enter
/// the set, and so are looked up for nothing but a bit).
pub(super) struct Seen {
    shards: Vec<Mutex<IdSet>>,
    bits: Vec<AtomicU64>,
}

/// Bits in [`Seen::bits`] (128 KiB).
const SEEN_BITS: u64 = 1 << 20;

impl Seen {
    pub(super) fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(IdSet::default())).collect(),
            bits: (0..SEEN_BITS / 64).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub(super) fn hash(dev: u64, ino: u64) -> u64 {
        (ino ^ dev.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    fn shard(&self, h: u64) -> std::sync::MutexGuard<'_, IdSet> {
        self.shards[(h >> 58) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The word and bit of a hash in the bitmap.
    fn bit(&self, h: u64) -> (&AtomicU64, u64) {
        let i = (h >> 20) % SEEN_BITS;
        (&self.bits[(i / 64) as usize], 1 << (i % 64))
    }

    /// Records a file; `false` if it was counted already.
    pub(super) fn insert(&self, dev: u64, ino: u64) -> bool {
        let h = Seen::hash(dev, ino);
        let (word, bit) = self.bit(h);
        if word.load(Relaxed) & bit == 0 {
            word.fetch_or(bit, Relaxed);
        }
        self.shard(h).insert((dev, ino))
    }

    /// Whether a file was counted already. (Its bit is set before it enters the set:
    /// a look at the moment between finds it absent, and the caller then asks the
    /// system and [`Seen::insert`], which answers right.)
    pub(super) fn contains(&self, dev: u64, ino: u64) -> bool {
        let h = Seen::hash(dev, ino);
        let (word, bit) = self.bit(h);
        word.load(Relaxed) & bit != 0 && self.shard(h).contains(&(dev, ino))
    }
}

/// What a file that may be met again was found to be, by (device, inode), for a count
/// in du's order (where each name waits for its turn): a further name met needs no
/// `statx`. Its sizes are kept in small entries (a tree of hard-linked copies looks
/// each name up), its time in a map of its own, only when one is asked for.
pub(super) struct Met {
    sizes: Vec<Mutex<IdMap<Sizes>>>,
    times: Vec<Mutex<IdMap<super::Stamp>>>,
}

/// A file met: its type, totals and time.
#[derive(Clone, Copy)]
pub(super) struct MetFile {
    pub(super) file_type: crate::sys::FileType,
    pub(super) total: super::Totals,
    pub(super) latest: Option<super::Stamp>,
}

/// A [`MetFile`]'s type and sizes (a file counts one inode).
#[derive(Clone, Copy)]
struct Sizes {
    bytes: u64,
    apparent: u64,
    file_type: crate::sys::FileType,
}

fn shards<V>() -> Vec<Mutex<IdMap<V>>> {
    (0..64).map(|_| Mutex::new(IdMap::default())).collect()
}

fn shard<V>(of: &[Mutex<IdMap<V>>], dev: u64, ino: u64) -> std::sync::MutexGuard<'_, IdMap<V>> {
    of[(Seen::hash(dev, ino) >> 58) as usize]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl Met {
    pub(super) fn new() -> Met {
        Met {
            sizes: shards(),
            times: shards(),
        }
    }

    pub(super) fn insert(&self, dev: u64, ino: u64, file: MetFile) {
        let sizes = Sizes {
            bytes: file.total.bytes,
            apparent: file.total.apparent,
            file_type: file.file_type,
        };
        // The time first: whoever finds the sizes finds it too.
        if let Some(t) = file.latest {
            shard(&self.times, dev, ino).insert((dev, ino), t);
        }
        shard(&self.sizes, dev, ino).insert((dev, ino), sizes);
    }

    /// What was found of a file met before; `with_time`: its time is asked for.
    pub(super) fn get(&self, dev: u64, ino: u64, with_time: bool) -> Option<MetFile> {
        let s = *shard(&self.sizes, dev, ino).get(&(dev, ino))?;
        let latest = with_time
            .then(|| shard(&self.times, dev, ino).get(&(dev, ino)).copied())
            .flatten();
        Some(MetFile {
            file_type: s.file_type,
            total: super::Totals {
                bytes: s.bytes,
                apparent: s.apparent,
                inodes: 1,
            },
            latest,
        })
    }
}
