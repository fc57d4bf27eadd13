//! One way to run a walk: [`WalkBuilder::run`] chooses the serial walk (sorted, or one
//! thread) or the parallel one from the builder's options, and keeps the directories'
//! handles where the visitor works through them. A job (a listing, a removal, a count
//! of disk usage) writes one [`Visitor`] and makes one call.

use super::event::Visitor;
use super::parallel::{ParallelVisitor, Plain};
use super::{WalkBuilder, WalkStats};

impl WalkBuilder {
    /// Runs the walk with events (see [`Visitor`]), on as many threads as the builder
    /// says ([`WalkBuilder::threads`]): a sorted walk ([`WalkBuilder::sort`]) or one of
    /// one thread calls `make_visitor` once and reports to that visitor in the walk's
    /// order (a sorted walk reads ahead on the other threads); otherwise each worker
    /// makes its own, and entries come in no fixed order. Where a visitor says it works
    /// through its entries' directory handles ([`Visitor::wants_handles`]), the serial
    /// walk keeps them (a parallel walk always gives them). Returns what the walk's
    /// threads were.
    ///
    /// ```
    /// use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// /// Counts the entries it sees.
    /// struct Count<'a>(&'a AtomicUsize);
    /// impl Visitor for Count<'_> {
    ///     type State = ();
    ///     fn enter(&mut self, _: &DirEvent<'_>, _: Option<&()>) {}
    ///     fn entry(&mut self, e: Result<&Entry<'_>, Error>, _: Option<&()>) -> Control {
    ///         e.expect("readable");
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///         Control::Continue
    ///     }
    ///     fn leave(&mut self, _: &DirEvent<'_>, _: (), _: Option<&()>) {}
    /// }
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("a/b"))?;
    /// std::fs::write(tmp.path().join("a/f"), b"")?;
    /// for threads in [1, 2] {
    ///     let n = AtomicUsize::new(0);
    ///     WalkBuilder::new(tmp.path()).min_depth(1).threads(threads).run(|| Count(&n));
    ///     assert_eq!(n.into_inner(), 3);
    /// }
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn run<V, M>(mut self, make_visitor: M) -> WalkStats
    where
        V: Visitor + Send,
        V::State: Send + Sync,
        M: Fn() -> V + Sync,
    {
        if !self.opts.sort && self.opts.threads != 1 {
            return self.build_parallel().visit_events(make_visitor);
        }
        let mut visitor = make_visitor();
        if visitor.wants_handles() {
            self.opts.keep_handles = true;
        }
        let mut walk = self.build();
        walk.visit_events(&mut visitor);
        walk.into_stats()
    }

    /// [`WalkBuilder::run`] for visitors of entries alone ([`ParallelVisitor`]: a
    /// closure `FnMut(Result<&Entry, Error>) -> Control + Send` is one).
    ///
    /// ```
    /// use ftw::walk::{Control, Entry, Error, WalkBuilder};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::create_dir_all(tmp.path().join("a/b"))?;
    /// let n = AtomicUsize::new(0);
    /// WalkBuilder::new(tmp.path()).sort(true).run_entries(|| {
    ///     |item: Result<&Entry<'_>, Error>| {
    ///         item.expect("readable");
    ///         n.fetch_add(1, Ordering::Relaxed);
    ///         Control::Continue
    ///     }
    /// });
    /// assert_eq!(n.into_inner(), 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn run_entries<V, M>(self, make_visitor: M) -> WalkStats
    where
        V: ParallelVisitor,
        M: Fn() -> V + Sync,
    {
        self.run(|| Plain(make_visitor()))
    }
}
