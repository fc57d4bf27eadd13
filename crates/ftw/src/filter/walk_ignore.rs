//! Walks run through [`Ignore`] rules: [`visit_ignoring`] (serial or sorted) and
//! [`visit_parallel_ignoring`], the callback walks of [`Walk::visit`] and
//! [`ParallelWalk::visit`] with the rules in front.

use super::ignores::{Ignore, IgnoreError, Rules};
use crate::walk::WalkStats;
use crate::walk::{
    Control, DirEvent, Entry, Error, ParallelVisitor, ParallelWalk, Visitor, Walk, WalkBuilder,
};
use std::sync::Arc;

/// What sees the entries that the rules let through.
trait See {
    fn see(&mut self, item: Result<&Entry<'_>, Error>) -> Control;
}

/// A serial walk's callback (which need not be `Send`).
struct Serial<F>(F);

impl<F: FnMut(Result<&Entry<'_>, Error>) -> Control> See for Serial<F> {
    fn see(&mut self, item: Result<&Entry<'_>, Error>) -> Control {
        (self.0)(item)
    }
}

/// A parallel walk's visitor.
struct Parallel<V>(V);

impl<V: ParallelVisitor> See for Parallel<V> {
    fn see(&mut self, item: Result<&Entry<'_>, Error>) -> Control {
        self.0.visit(item)
    }
}

/// A visitor with ignore rules in front: each directory's rules are made as the walk
/// enters it, ignored entries are not seen, and ignored directories not opened.
struct WithIgnore<'a, S, E> {
    inner: S,
    ignore: &'a Ignore,
    on_error: E,
    scratch: Vec<u8>,
}

impl<S: See, E: FnMut(IgnoreError)> Visitor for WithIgnore<'_, S, E> {
    type State = Arc<Rules>;

    fn enter(&mut self, d: &DirEvent<'_>, parent: Option<&Arc<Rules>>) -> Arc<Rules> {
        self.ignore.enter(d, parent, &mut self.on_error)
    }

    fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&Arc<Rules>>) -> Control {
        if let (Ok(e), Some(rules)) = (&item, dir) {
            if self.ignore.is_ignored(rules, e, &mut self.scratch) {
                return Control::Skip;
            }
        }
        self.inner.see(item)
    }

    fn leave(&mut self, _: &DirEvent<'_>, _: Arc<Rules>, _: Option<&Arc<Rules>>) {}
}

/// Runs `walk` (serial or sorted) as [`Walk::visit`] does, through `ignore`'s rules: an
/// entry they ignore is not given to `f`, and a directory they ignore is not opened.
/// The roots themselves are always given. An ignore file that cannot be read or parsed
/// is told to `on_error`, and the walk goes on without it.
///
/// ```
/// use ftw::filter::{Ignore, IgnoreOptions, visit_ignoring};
/// use ftw::walk::{Control, WalkBuilder};
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::write(tmp.path().join(".ignore"), "*.log\nbuild/\n")?;
/// std::fs::create_dir(tmp.path().join("build"))?;
/// std::fs::write(tmp.path().join("build/out"), "")?;
/// std::fs::write(tmp.path().join("a.log"), "")?;
/// std::fs::write(tmp.path().join("main.c"), "")?;
///
/// let ignore = Ignore::new(IgnoreOptions::default().hidden(false));
/// let mut walk = WalkBuilder::new(tmp.path()).min_depth(1).sort(true).build();
/// let mut names = Vec::new();
/// visit_ignoring(&mut walk, &ignore, |e| panic!("{e:?}"), |item| {
///     names.push(item.unwrap().name().to_vec());
///     Control::Continue
/// });
/// assert_eq!(names, vec![b"main.c".to_vec()]); // .ignore is hidden, build not opened
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn visit_ignoring<F, E>(walk: &mut Walk, ignore: &Ignore, on_error: E, f: F)
where
    F: FnMut(Result<&Entry<'_>, Error>) -> Control,
    E: FnMut(IgnoreError),
{
    walk.visit_events(&mut WithIgnore {
        inner: Serial(f),
        ignore,
        on_error,
        scratch: Vec::new(),
    });
}

/// Runs `walk` as [`ParallelWalk::visit`] does, through `ignore`'s rules (see
/// [`visit_ignoring`]); `on_error` may be called from any worker.
///
/// ```
/// use ftw::filter::{Ignore, IgnoreOptions, visit_parallel_ignoring};
/// use ftw::walk::{Control, WalkBuilder};
/// use std::sync::Mutex;
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::write(tmp.path().join(".ignore"), "target/\n")?;
/// std::fs::create_dir(tmp.path().join("target"))?;
/// std::fs::write(tmp.path().join("target/big"), "")?;
/// std::fs::write(tmp.path().join("lib.rs"), "")?;
///
/// let ignore = Ignore::new(IgnoreOptions::default());
/// let names = Mutex::new(Vec::new());
/// let walk = WalkBuilder::new(tmp.path()).min_depth(1).threads(2).build_parallel();
/// visit_parallel_ignoring(walk, &ignore, |e| panic!("{e:?}"), || {
///     |item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>| {
///         names.lock().unwrap().push(item.unwrap().name().to_vec());
///         Control::Continue
///     }
/// });
/// let mut names = names.into_inner().unwrap();
/// names.sort();
/// assert_eq!(names, vec![b".ignore".to_vec(), b"lib.rs".to_vec()]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn visit_parallel_ignoring<V, M, E>(
    walk: ParallelWalk,
    ignore: &Ignore,
    on_error: E,
    make: M,
) -> WalkStats
where
    V: ParallelVisitor,
    M: Fn() -> V + Sync,
    E: Fn(IgnoreError) + Sync,
{
    let on_error = &on_error;
    walk.visit_events(|| WithIgnore {
        inner: Parallel(make()),
        ignore,
        on_error,
        scratch: Vec::new(),
    })
}

/// Runs the walk `b` as [`WalkBuilder::run`] does (serial when sorted or on one thread,
/// else parallel), each visitor made by `make` behind `ignore`'s rules (see
/// [`visit_ignoring`]); `on_error` may be called from any worker.
///
/// ```
/// use ftw::filter::{Ignore, IgnoreOptions, run_ignoring};
/// use ftw::walk::{Control, WalkBuilder};
/// use std::sync::Mutex;
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::write(tmp.path().join(".ignore"), "*.o\n")?;
/// std::fs::write(tmp.path().join("a.o"), "")?;
/// std::fs::write(tmp.path().join("a.c"), "")?;
///
/// let ignore = Ignore::new(IgnoreOptions::default().hidden(false));
/// for threads in [1, 2] {
///     let names = Mutex::new(Vec::new());
///     let b = WalkBuilder::new(tmp.path()).min_depth(1).threads(threads);
///     run_ignoring(b, &ignore, |e| panic!("{e:?}"), || {
///         |item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>| {
///             names.lock().unwrap().push(item.unwrap().name().to_vec());
///             Control::Continue
///         }
///     });
///     assert_eq!(names.into_inner().unwrap(), vec![b"a.c".to_vec()]);
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn run_ignoring<V, M, E>(b: WalkBuilder, ignore: &Ignore, on_error: E, make: M) -> WalkStats
where
    V: ParallelVisitor,
    M: Fn() -> V + Sync,
    E: Fn(IgnoreError) + Sync,
{
    let on_error = &on_error;
    b.run(|| WithIgnore {
        inner: Parallel(make()),
        ignore,
        on_error,
        scratch: Vec::new(),
    })
}
