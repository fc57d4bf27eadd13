//! How many directory handles a walk may hold, and how its threads share them: the one
//! place for that arithmetic (the serial walk, the parallel walk, the sorted walk's
//! read-ahead and the command line's help all ask here).

/// A walk's handle budget: the most directory handles it keeps open at once.
///
/// By default ([`Budget::from_limit`]) it is the soft open-file limit (`ulimit -n`)
/// less a reserve of 16 for the program, halved, between 4 and 1024. The budget caps
/// the threads too: each worker of a parallel walk holds up to two handles of its own.
///
/// ```
/// use ftw::walk::Budget;
///
/// let b = Budget::new(12);
/// assert_eq!(b.handles(), 12);
/// assert_eq!(b.max_threads(), 3);
/// assert_eq!(Budget::new(1024).max_io_threads(), 32);
/// assert!((4..=1024).contains(&Budget::from_limit().handles()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    handles: usize,
}

/// Workers growing past one per core stop at this many, however large the budget: a
/// cold disk is kept busy by 32 requests in flight.
const IO_THREADS: usize = 32;

/// How a sorted walk that reads ahead splits its budget (see [`Budget::sorted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SortedShare {
    /// Handles the walker's own frames may hold.
    pub(crate) walker: usize,
    /// Handles the read-ahead may hold: one per worker while it reads, the root's, and
    /// the rest shared with queued subdirectories.
    pub(crate) ahead: usize,
    /// The most read-ahead workers that fit in `ahead`.
    pub(crate) max_workers: usize,
}

impl SortedShare {
    /// Of the read-ahead's handles, those it may share with queued subdirectories when
    /// it runs at most `workers`: each worker holds the one it reads, the root's is one
    /// more.
    pub(crate) fn ahead_shared(self, workers: usize) -> usize {
        self.ahead.saturating_sub(workers + 1)
    }
}

impl Budget {
    /// A budget of `handles` (at least 2).
    pub fn new(handles: usize) -> Budget {
        Budget {
            handles: handles.max(2),
        }
    }

    /// The default: the soft `RLIMIT_NOFILE` less 16, halved, between 4 and 1024 (1024
    /// where there is no limit).
    pub fn from_limit() -> Budget {
        let handles = match crate::sys::fd_limit() {
            Some(n) => (n.saturating_sub(16) / 2).clamp(4, 1024) as usize,
            None => 1024,
        };
        Budget { handles }
    }

    /// The number of handles.
    pub fn handles(self) -> usize {
        self.handles
    }

    /// The most workers a parallel walk runs under this budget, whatever it is asked
    /// for: a quarter of the budget (each worker holds up to two handles of its own, and
    /// the rest are kept for directories waiting to be read).
    pub fn max_threads(self) -> usize {
        (self.handles / 4).max(1)
    }

    /// The most workers the default thread count grows to while they wait on the disk:
    /// [`Budget::max_threads`], and at most 32.
    pub fn max_io_threads(self) -> usize {
        self.max_threads().min(IO_THREADS)
    }

    /// Handles a parallel walk of at most `threads` workers may share with directories
    /// waiting to be read (or, when a walk keeps handles, keep until they are left):
    /// the budget less two per worker (the directory it reads, and one on its way
    /// there) and one more, at least 1.
    pub(crate) fn parallel_keep(self, threads: usize) -> usize {
        self.handles.saturating_sub(2 * threads + 1).max(1)
    }

    /// Handles a parallel walk may share when the directory shared has a single
    /// subdirectory: one more a worker than [`Budget::parallel_keep`], so that a chain
    /// is opened one level at a time even when other directories hold the shares. The
    /// walk may then hold up to one handle a worker beyond the budget: the default
    /// budget is half the open-file limit, and a worker's a quarter of the budget at
    /// most ([`Budget::max_threads`]), so it stays well under the limit.
    pub(crate) fn parallel_single(self, threads: usize) -> usize {
        self.parallel_keep(threads) + threads
    }

    /// How a sorted walk with `threads` reading threads (the walker among them) splits
    /// the budget: half for the walker's frames (at least 3), the other half for the
    /// read-ahead, in which each worker holds the directory it reads and the root's
    /// handle is one more.
    pub(crate) fn sorted(self) -> SortedShare {
        let walker = (self.handles / 2).max(3);
        let ahead = self.handles.saturating_sub(walker);
        SortedShare {
            walker,
            ahead,
            max_workers: ahead.saturating_sub(1) / 2,
        }
    }

    /// The most read-ahead workers the default thread count grows to.
    pub(crate) fn sorted_io_workers(self) -> usize {
        self.sorted().max_workers.min(IO_THREADS - 1)
    }

    /// What the budget means, in words for a command's help.
    ///
    /// ```
    /// let text = ftw::walk::Budget::new(100).describe();
    /// assert!(text.contains("here 100"));
    /// ```
    pub fn describe(self) -> String {
        format!(
            "Open directory handles stay under a budget: the soft open-file limit\n\
             (ulimit -n) less 16, halved, between 4 and 1024; here {}. Deeper or wider trees are\n\
             no problem: a directory whose handle was closed is reopened from its nearest\n\
             open ancestor. Threads grow to at most {} here; -j is capped at {}.",
            self.handles,
            self.max_io_threads(),
            self.max_threads()
        )
    }
}

impl Default for Budget {
    /// [`Budget::from_limit`].
    fn default() -> Budget {
        Budget::from_limit()
    }
}
