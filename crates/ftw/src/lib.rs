//! ftw: file tree walking through directory handles.
//!
//! The common tasks are one call each:
//!
//! - [`WalkBuilder`]: `for entry in WalkBuilder::new(path)` walks a tree, as walkdir's
//!   `WalkDir` does, yielding a [`DirEntry`] for each entry (or a [`walk::Error`] for
//!   what could not be read: the walk goes on).
//! - [`dir_size`]: a tree's size, as `du -sb` gives it (coreutils 9.2 and later): the apparent sizes of its files
//!   and links, each hard-linked file counted once.
//! - [`remove_dir_all`]: a drop-in for [`std::fs::remove_dir_all`], in parallel and safe
//!   against symbolic links put in place of directories while it runs.
//! - [`copy_dir_all`]: a tree copied as `cp -R` copies it (`copy_tree` with
//!   [`CopyOptions::archive`] for what `cp -a` keeps), in parallel, relative to
//!   directory handles on both sides.
//!
//! ```
//! use ftw::WalkBuilder;
//!
//! # let tmp = tempfile::tempdir()?;
//! # let root = tmp.path().join("tree");
//! # std::fs::create_dir_all(root.join("src"))?;
//! # std::fs::write(root.join("src/main.rs"), b"fn main() {}\n")?;
//! # std::fs::write(root.join("README"), b"hello\n")?;
//! let mut files = 0;
//! for entry in WalkBuilder::new(&root) {
//!     let entry = entry?; // the error of one path, with that path
//!     if !entry.is_dir() {
//!         files += 1;
//!     }
//! }
//! assert_eq!(files, 2);
//! assert_eq!(ftw::dir_size(&root)?, 19); // 13 + 6 bytes
//! ftw::remove_dir_all(&root)?;
//! assert!(!root.exists());
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Each has a version with options, and the whole-tree operations say more than a
//! `Result` (errors with their paths, counts):
//!
//! - [`sys`]: the only module that talks to the kernel (`openat`, `getdents64`, `statx`,
//!   `unlinkat` on Linux; `std::fs` elsewhere).
//! - [`walk`]: traversal of whole trees, serial, sorted or parallel, with a bounded
//!   number of open handles and no recursion; a visitor sees each entry, and with
//!   [`walk::Visitor`] each directory entered and left, with a state of its own and the
//!   handles to work relative to (the base of removal and disk usage).
//! - [`filter`]: what a walk reports (name patterns, types, extensions, sizes, times),
//!   where it goes (exclusion globs: an excluded directory is never opened), and ignore
//!   files with git's rules ([`filter::Ignore`], honoured by a walk with
//!   [`WalkBuilder::git_ignore`]).
//! - [`remove`]: removal of whole trees ([`remove_tree`], [`remove_dir_contents`]),
//!   relative to directory handles, serial or parallel, safe against symbolic links put
//!   in place of directories while it runs; what it did in a [`remove::Summary`], made a
//!   `Result` by [`remove::Summary::into_result`].
//! - [`copy`]: copies of whole trees ([`copy_tree`], [`copy_dir_all`]), as exact as
//!   `cp -a` with [`CopyOptions::archive`], relative to directory handles on both
//!   sides, serial or parallel, hard links kept across sources ([`copy::copy_trees`]).
//! - [`usage`]: disk usage ([`disk_usage`]): totals per directory, hard links counted
//!   once, one `statx` per file.
//!
//! A whole-tree operation goes on past an error; as one error, its errors are a
//! [`TreeError`]: the first, and how many there were.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod copy;
pub mod filter;
pub mod remove;
pub mod sys;
mod tree_error;
pub mod usage;
pub mod walk;

pub use copy::{CopyOptions, copy_dir_all, copy_tree};
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
