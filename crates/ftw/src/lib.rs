//! ftw: file tree walking through directory handles.
//!
//! - [`sys`]: the only module that talks to the kernel (`openat`, `getdents64`, `statx`,
//!   `unlinkat` on Linux; `std::fs` elsewhere).
//! - [`walk`]: traversal of whole trees, serial, sorted or parallel, with a bounded
//!   number of open handles and no recursion; a visitor sees each entry, and with
//!   [`walk::Visitor`] each directory entered and left, with a state of its own and the
//!   handles to work relative to (the base of removal and disk usage).
//! - [`filter`]: what a walk reports (name patterns, types, extensions, sizes, times)
//!   and where it goes (exclusion globs: an excluded directory is never opened).
//! - [`remove`]: removal of whole trees ([`remove_tree`], [`remove_dir_contents`]),
//!   relative to directory handles, serial or parallel, safe against symbolic links put
//!   in place of directories while it runs.
//! - [`usage`]: disk usage ([`disk_usage`]): totals per directory, hard links counted
//!   once, one `statx` per file.
//!
//! ```
//! let tmp = tempfile::tempdir()?;
//! std::fs::write(tmp.path().join("hello"), b"world")?;
//! let names: Vec<_> = ftw::walk::WalkBuilder::new(tmp.path())
//!     .min_depth(1)
//!     .build()
//!     .map(|e| e.unwrap().into_path())
//!     .collect();
//! assert_eq!(names, vec![tmp.path().join("hello")]);
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod filter;
pub mod remove;
pub mod sys;
mod tree_error;
pub mod usage;
pub mod walk;

pub use remove::{RemoveOptions, remove_dir_all, remove_dir_contents, remove_tree};
pub use tree_error::TreeError;
pub use usage::{
    DiskUsage, Listed, Totals, UsageNode, UsageOptions, UsageProgress, dir_size, disk_usage,
};
pub use walk::{DirEntry, WalkBuilder};

/// The examples of the project's README, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
