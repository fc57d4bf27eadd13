//! Rules that decide, directory by directory, which entries a walk keeps: made for each
//! directory as the walk enters it, from its parent's, and asked about each of its
//! entries before the entry is reported or, if a directory, opened. git's ignore rules
//! are such rules ([`crate::filter::Ignore`], set by
//! [`WalkBuilder::git_ignore`](super::WalkBuilder::git_ignore)).
//!
//! The walk knows them only through [`Gate`], so that `walk` does not depend on
//! `filter` (which depends on `walk`). The serial walk keeps each directory's rules in
//! its frame (so that the pull iterator honours them too); the parallel walk runs its
//! visitors behind [`Gated`].

use super::event::{DirEvent, Visitor};
use super::{Control, Entry, Error};
use std::any::Any;
use std::sync::Arc;

/// One directory's rules, as the [`Gate`] that made them knows them.
pub(crate) type DirRules = Arc<dyn Any + Send + Sync>;

/// Rules made per directory, deciding which of its entries the walk keeps.
pub(crate) trait Gate: Send + Sync {
    /// The rules of the directory `d` being entered (`parent`: its parent's; `None` for
    /// a root). What keeps them from being whole (an ignore file that cannot be read)
    /// is told to `errors`, and the walk reports it.
    fn enter(
        &self,
        d: &DirEvent<'_>,
        parent: Option<&DirRules>,
        errors: &mut dyn FnMut(Error),
    ) -> DirRules;

    /// Whether the walk keeps `e`, an entry of the directory whose rules are `dir`: an
    /// entry not kept is neither reported nor, if a directory, opened. `scratch` is a
    /// buffer for its path.
    fn keeps(&self, dir: &DirRules, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool;
}

/// A visitor behind a [`Gate`]: each directory's rules are made as it is entered and
/// kept beside the visitor's own state; entries they do not keep are not seen (and not
/// opened), and what kept the rules from being whole is seen as an error.
pub(crate) struct Gated<'g, V> {
    inner: V,
    gate: &'g dyn Gate,
    scratch: Vec<u8>,
    /// The visitor said to stop while seeing an error made on entering.
    stop: bool,
}

impl<'g, V> Gated<'g, V> {
    pub(crate) fn new(inner: V, gate: &'g dyn Gate) -> Gated<'g, V> {
        Gated {
            inner,
            gate,
            scratch: Vec::new(),
            stop: false,
        }
    }
}

impl<V: Visitor> Visitor for Gated<'_, V> {
    type State = (DirRules, V::State);

    fn enter(&mut self, d: &DirEvent<'_>, parent: Option<&Self::State>) -> Self::State {
        let mut errors = Vec::new();
        let rules = self
            .gate
            .enter(d, parent.map(|p| &p.0), &mut |e| errors.push(e));
        let state = self.inner.enter(d, parent.map(|p| &p.1));
        for e in errors {
            if self.inner.entry(Err(e), Some(&state)) == Control::Stop {
                self.stop = true;
            }
        }
        (rules, state)
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&Self::State>) -> Control {
        if self.stop {
            return Control::Stop;
        }
        if let (Ok(e), Some((rules, _))) = (&item, dir) {
            if !self.gate.keeps(rules, e, &mut self.scratch) {
                return Control::Skip;
            }
        }
        self.inner.entry(item, dir.map(|d| &d.1))
    }

    fn leave(&mut self, d: &DirEvent<'_>, state: Self::State, parent: Option<&Self::State>) {
        self.inner.leave(d, state.1, parent.map(|p| &p.1));
    }

    fn wants_handles(&self) -> bool {
        self.inner.wants_handles()
    }
}
