//! Where the read-ahead tracks each queued directory, from queued to taken by the walker:
//! one slot per directory, named by a [`SlotId`] that is never mistaken for an older use
//! of the same slot.

use super::Ready;
use std::io;

/// Where a queued directory's read is tracked: an index into the slots and the
/// generation of that slot, so a slot used again is never mistaken for an older one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct SlotId {
    index: u32,
    generation: u32,
}

impl SlotId {
    /// No slot: the directory was not queued.
    pub(super) const NONE: SlotId = SlotId {
        index: u32::MAX,
        generation: 0,
    };
}

/// Where a queued directory's read stands; `G` is what a queued directory waits in (its
/// group of siblings: see `order`).
pub(super) enum Slot<G> {
    Free,
    /// Waiting for a worker: its group, and its place among the group's children.
    Queued(G, u32),
    Running,
    /// Read, waiting for the walker; an error is one to report for the directory (a
    /// read that failed is forgotten instead, and the walker reads it itself).
    Done(io::Result<Ready>),
    /// The walker took it before any worker started it.
    Claimed,
    /// The walker will not enter it while a worker reads it: the worker drops it.
    Discarded,
}

pub(super) struct SlotEntry<G> {
    generation: u32,
    pub(super) slot: Slot<G>,
}

/// The directories queued and not yet taken by the walker, by [`SlotId`].
pub(super) struct Slots<G> {
    pub(super) entries: Vec<SlotEntry<G>>,
    free: Vec<u32>,
}

impl<G> Default for Slots<G> {
    fn default() -> Self {
        Slots {
            entries: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<G> Slots<G> {
    pub(super) fn insert(&mut self, slot: Slot<G>) -> SlotId {
        match self.free.pop() {
            Some(i) => {
                let e = &mut self.entries[i as usize];
                e.slot = slot;
                SlotId {
                    index: i,
                    generation: e.generation,
                }
            }
            None => {
                self.entries.push(SlotEntry {
                    generation: 0,
                    slot,
                });
                SlotId {
                    index: (self.entries.len() - 1) as u32,
                    generation: 0,
                }
            }
        }
    }

    pub(super) fn entry(&self, id: SlotId) -> Option<&SlotEntry<G>> {
        let e = self.entries.get(id.index as usize)?;
        (e.generation == id.generation && !matches!(e.slot, Slot::Free)).then_some(e)
    }

    pub(super) fn get_mut(&mut self, id: SlotId) -> Option<&mut Slot<G>> {
        let e = self.entries.get_mut(id.index as usize)?;
        (e.generation == id.generation && !matches!(e.slot, Slot::Free)).then_some(&mut e.slot)
    }

    pub(super) fn remove(&mut self, id: SlotId) -> Option<Slot<G>> {
        self.entry(id)?;
        let e = &mut self.entries[id.index as usize];
        e.generation = e.generation.wrapping_add(1);
        self.free.push(id.index);
        Some(std::mem::replace(&mut e.slot, Slot::Free))
    }
}
