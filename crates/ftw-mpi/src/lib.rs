//! ftw's distributed mode: a walk's directory jobs shared across the ranks of an MPI
//! job (`mpirun -n N ftw find --mpi PATH...`, and the same for `du` and `rm`).
//!
//! Built only with the `mpi` feature (which needs an MPI and libclang); without it
//! this crate is empty, so that a workspace build needs no MPI.
//!
//! # How the work is split
//!
//! The unit of work is a **directory job** ([`Job`]): the index of its root, its path
//! (the root as given, then the names below it), its depth and its (device, inode) as
//! seen by the rank that found it. Rank 0 starts with one job per root; whoever runs a
//! job lists that one directory (the library's serial walker, one level deep, started
//! at the job's depth: [`ftw::walk::WalkBuilder::root_depth`]), prints what the filters
//! keep, and makes a job of each subdirectory to enter.
//!
//! Each rank runs a pool of worker threads over its own queue of jobs (the newest
//! first: depth first, few open handles) and one thread, the caller's, that makes
//! every MPI call (rsmpi's communicators are not `Send` under Open MPI). When a rank's
//! queue is empty and a worker is idle, it asks one rank chosen at random for work
//! (one request at a time); the asked rank answers at once, whatever its workers are
//! doing, with the older half of its queue (the jobs nearest the roots, which hold the
//! most work) in one message of length-prefixed records, or with nothing. A job run
//! on the rank that found it opens its directory from its parent's handle, kept while
//! jobs wait on it (within a budget of handles); a job that moved opens it below its
//! root's handle without following any link (`openat2` with `RESOLVE_NO_SYMLINKS`, or
//! one component at a time with `O_NOFOLLOW`), and either way the directory opened is
//! checked to be the one listed, by (device, inode): a directory swapped for another
//! (or for a link) is reported, never entered.
//!
//! # Termination
//!
//! Rank 0 counts waves (Mattern's four counters): it asks every rank whether it is idle
//! (no job queued or running, no output held) and how many work-carrying messages (jobs
//! and output) it sent and received; when two waves in a row find every rank idle and
//! the same totals, sent equal to received, nothing is left anywhere nor in flight, and
//! rank 0 says so. Each rank then answers the requests for work still in flight (with
//! nothing) until a non-blocking barrier shows that every rank has had its answer.
//! A wave costs 2 (N − 1) small messages; a steal, two.
//!
//! # Output
//!
//! Unsorted, each worker's records (whole ones) go to its rank's MPI thread, which
//! sends what it has to rank 0 in one message per round; rank 0 writes them as they
//! come. Sorted, each rank keeps its records with their key (the root's index, then the
//! path's names), sorts them at the end, and rank 0 merges the N sorted streams, asking
//! each rank for its next 64 KiB as it needs them: the output is the single process's
//! byte for byte, and no rank holds more than its own share of the listing.
//!
//! The exit status is the highest of all ranks' (an all-reduce), and every rank exits
//! with it.
//!
//! # What a command adds: data, notes, a finish
//!
//! A job carries the [`Work`]'s own bytes ([`Job::data`]), sent with it when it moves.
//! A job may send *notes* to another rank's [`Work::note`] ([`Ctx::note`]): the worker
//! hands them to its MPI thread with its other results before it counts as idle, the
//! thread sends them in one message per rank and round, and they are counted with the
//! jobs and output in the termination waves, so every note is delivered before the walk
//! ends. In a sorted walk, [`Work::finish`] then adds each rank's last records (what its
//! notes decided) before the merge; `write` is given each record's key, so that rank 0
//! can combine records of equal keys, which come one after another.
//!
//! `ftw du --mpi` is built on these (see `crates/ftw-cli/src/du_mpi.rs` for the details):
//! each entry's key is its place in du's order (its root, then the position of each name
//! in its directory's listing, a directory's own line after everything below it), each
//! job records its directory's own totals at its place, and rank 0 reads the records in
//! du's order and adds each directory's subdirectories to it with one running sum per
//! depth, so totals go up the tree without any message between ranks during the walk.
//! Each name of a file with several links is a note to the rank that its (device, inode)
//! hashes to, which keeps the name with the smallest place (du's first) and, at the
//! finish, records the file's totals there: counted once, where du counts it, whatever
//! rank found which name when. Directories below the depth printed add their totals into
//! one record per printed ancestor on the rank that counted them, so that `-s` on a
//! huge tree holds a few records per rank, not one per directory.
//!
//! A note is handled as a small job is: [`Work::note`] is given a [`Ctx`] too, through
//! which it may push jobs, send further notes and write output (on the MPI thread, what
//! it left there is handed on before any wave is answered, so the waves count it).
//!
//! `ftw rm --mpi` (see `crates/ftw-cli/src/rm_mpi.rs`) removes with these: each job
//! unlinks its directory's files through the handle it opened, and a directory is
//! removed through its parent's handle once its contents are gone, by **completion
//! counts**: the rank that ran a directory's job holds it (under a token carried in its
//! subdirectories' jobs' data, with the count of those not yet done and its handle, a
//! [`Held`] within the ranks' budget, else opened again below its root and checked);
//! each subdirectory, once done, sends a note to the rank holding its parent, which
//! removes it there (`unlinkat` with `AT_REMOVEDIR` relative to the parent's handle) and
//! counts it; the last one done makes the parent done in turn. Chosen over removing
//! level by level, deepest first, which would remember every directory of the tree
//! until the walk is over, reopen each parent from its root, and take one collective
//! step per level (3,000 for a 3,000-level chain) with every rank waiting at each:
//! here a rank remembers only the directories whose contents are still being removed,
//! each directory goes as soon as it is empty, and no rank waits for another. A
//! directory that is not the one listed when its job opens it (swapped for a link,
//! replaced, gone) is never entered ([`Replaced`]): its parent, found not empty when it
//! is removed, is read again, a bounded number of times.
//!
//! No message of a phase is taken by another: the walk's loop takes every tag but only
//! while the walk runs (notes included, all delivered before it ends); after it, the
//! drain takes requests for work alone, and the merge its own pull and chunk tags.

#[cfg(feature = "mpi")]
mod engine;
#[cfg(feature = "mpi")]
mod job;

#[cfg(feature = "mpi")]
pub use engine::{Ctx, Mpi, Options, Stats, Work};
#[cfg(feature = "mpi")]
pub use job::{Held, Job, Replaced};
