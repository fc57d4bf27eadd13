//! Settings that no user sets: the crate's tests change them to reach states that a
//! real tree reaches only rarely (a file system without `d_type`, a slow disk, a
//! read-ahead that breaks, no thread to be had). In a build that is not the crate's
//! tests, [`Hooks`] holds nothing and each setting is a constant, so the walk carries
//! none of them.

#[cfg(test)]
use std::time::Duration;

/// The tests' settings of a walk (see the module's documentation).
#[cfg(test)]
#[derive(Clone, Debug)]
pub(crate) struct Hooks {
    /// Treat every `d_type` as unknown, as some file systems report it.
    pub(crate) forget_types: bool,
    /// How far a sorted walk reads ahead: directories, and entries held.
    pub(crate) ahead_window: (usize, usize),
    /// A pause before each directory a parallel walk or a read-ahead reads, as if the
    /// disk were slow.
    pub(crate) read_delay: Duration,
    /// Whether the read-ahead's workers share the handles of the directories they read
    /// with their subdirectories (off: every read below the root's entries opens its
    /// parent by path).
    pub(crate) ahead_share: bool,
    /// Called with the path below the root of each directory read ahead (its name alone
    /// past the read-ahead's longest path), before it is opened: it may change the tree,
    /// or panic as a broken read would.
    pub(crate) ahead_fault: Option<Fault>,
    /// Read-ahead workers past this many cannot be started, as when the system has no
    /// more threads to give.
    pub(crate) ahead_spawn_limit: usize,
    /// How many entries of a directory a parallel walk reads at a time (see
    /// [`super::listing::PART`]).
    pub(crate) part: usize,
}

/// The settings of a walk outside the crate's tests: none.
#[cfg(not(test))]
#[derive(Clone, Debug)]
pub(crate) struct Hooks;

/// A test's call into the read-ahead (see [`Hooks::ahead_fault`]).
#[cfg(test)]
#[derive(Clone)]
pub(crate) struct Fault(pub(crate) std::sync::Arc<FaultFn>);

/// What a [`Fault`] calls, with the path of a directory.
#[cfg(test)]
pub(crate) type FaultFn = dyn Fn(&[u8]) + Send + Sync;

#[cfg(test)]
impl std::fmt::Debug for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fault")
    }
}

#[cfg(test)]
impl Hooks {
    /// The settings of a walk as used: as if there were no hooks.
    pub(crate) fn new() -> Hooks {
        Hooks {
            forget_types: false,
            ahead_window: super::ahead::WINDOW,
            read_delay: Duration::ZERO,
            ahead_share: true,
            ahead_fault: None,
            ahead_spawn_limit: usize::MAX,
            part: super::listing::PART,
        }
    }
}

#[cfg(test)]
impl Hooks {
    /// Whether every `d_type` is taken as unknown.
    pub(crate) fn forget_types(&self) -> bool {
        self.forget_types
    }

    /// How far a sorted walk reads ahead: directories, and entries held.
    pub(crate) fn ahead_window(&self) -> (usize, usize) {
        self.ahead_window
    }

    /// Whether read-ahead workers share their handles with their subdirectories.
    pub(crate) fn ahead_share(&self) -> bool {
        self.ahead_share
    }

    /// Read-ahead workers that may be started.
    pub(crate) fn ahead_spawn_limit(&self) -> usize {
        self.ahead_spawn_limit
    }

    /// How many entries of a directory a parallel walk reads at a time.
    pub(crate) fn part(&self) -> usize {
        self.part
    }

    /// Calls the test's fault, if any, with the path of a directory read ahead, which
    /// `write` puts in `path`.
    pub(crate) fn ahead_fault(&self, path: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
        if let Some(fault) = &self.ahead_fault {
            write(path);
            (fault.0)(path);
        }
    }

    /// Pauses before reading a directory, as a slow disk would.
    pub(crate) fn pause(&self) {
        if !self.read_delay.is_zero() {
            std::thread::sleep(self.read_delay);
        }
    }
}

#[cfg(not(test))]
impl Hooks {
    #[inline(always)]
    pub(crate) fn new() -> Hooks {
        Hooks
    }

    #[inline(always)]
    pub(crate) fn forget_types(&self) -> bool {
        false
    }

    #[inline(always)]
    pub(crate) fn ahead_window(&self) -> (usize, usize) {
        super::ahead::WINDOW
    }

    #[inline(always)]
    pub(crate) fn ahead_share(&self) -> bool {
        true
    }

    #[inline(always)]
    pub(crate) fn ahead_spawn_limit(&self) -> usize {
        usize::MAX
    }

    #[inline(always)]
    pub(crate) fn part(&self) -> usize {
        super::listing::PART
    }

    #[inline(always)]
    pub(crate) fn ahead_fault(&self, _: &mut Vec<u8>, _: impl FnOnce(&mut Vec<u8>)) {}

    #[inline(always)]
    pub(crate) fn pause(&self) {}
}
