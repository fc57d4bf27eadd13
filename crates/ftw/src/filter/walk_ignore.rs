//! git-ignore-aware walking as an option of the builder: [`WalkBuilder::git_ignore`] and
//! [`WalkBuilder::ignore_rules`]. [`Ignore`] is the walk's [`Gate`]: each directory's
//! [`Rules`] are made as the walk enters it, and each entry is asked about before it is
//! reported or opened, by every walker (serial, sorted, parallel, the pull iterator).

use super::ignores::{Ignore, IgnoreError, IgnoreOptions, Rules};
use crate::walk::{DirEvent, DirRules, Entry, Error, Gate, WalkBuilder};
use std::sync::Arc;

impl WalkBuilder {
    /// Leave out what git leaves out, as `git ls-files --cached --others
    /// --exclude-standard` lists a work tree (and as the `ignore` crate's
    /// `WalkBuilder::git_ignore` does): `.gitignore` files (inside a git work tree),
    /// `.git/info/exclude`, git's excludes file (`core.excludesFile`), and `.ignore` and
    /// `.ftwignore` files; the `.git` directories; a git repository nested in the work
    /// tree is reported but not entered; files git tracks are kept even where a rule
    /// ignores them. See [`Ignore`] for the details, and [`WalkBuilder::ignore_rules`]
    /// for other settings. An ignored directory is never opened. The roots are always
    /// reported. An ignore file that cannot be read is reported as an error
    /// ([`Error::is_ignore_file`]), and the walk goes on without its rules.
    ///
    /// It holds for every way to run the walk: the iterator, [`Walk::visit`],
    /// [`WalkBuilder::run`], [`ParallelWalk::visit`]. A sorted walk with it does not read
    /// ahead ([`WalkBuilder::threads`]): a directory's rules are known only once the
    /// walker enters it. Where no directory holds an ignore file it costs no system call.
    ///
    /// [`Walk::visit`]: crate::walk::Walk::visit
    /// [`ParallelWalk::visit`]: crate::walk::ParallelWalk::visit
    ///
    /// ```
    /// use ftw::WalkBuilder;
    ///
    /// let tmp = tempfile::tempdir()?;
    /// let repo = tmp.path();
    /// std::fs::create_dir_all(repo.join(".git"))?; // a work tree's top
    /// std::fs::write(repo.join(".gitignore"), "*.log\ntarget/\n")?;
    /// std::fs::create_dir(repo.join("target"))?;
    /// std::fs::write(repo.join("target/big"), "")?;
    /// std::fs::write(repo.join("a.log"), "")?;
    /// std::fs::write(repo.join("main.rs"), "")?;
    ///
    /// let mut names = Vec::new();
    /// for entry in WalkBuilder::new(repo).min_depth(1).sort(true).git_ignore(true) {
    ///     names.push(entry?.path().strip_prefix(repo).unwrap().to_owned());
    /// }
    /// assert_eq!(names, [".gitignore", "main.rs"].map(std::path::PathBuf::from));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn git_ignore(self, yes: bool) -> Self {
        if yes {
            self.ignore_rules(Ignore::new(IgnoreOptions::default()))
        } else {
            WalkBuilder { gate: None, ..self }
        }
    }

    /// Leave out what `rules` ignore (see [`WalkBuilder::git_ignore`]), with the
    /// settings they were made with: hidden names, `.gitignore` files outside work
    /// trees, files of rules given by the caller ([`IgnoreOptions`]).
    ///
    /// ```
    /// use ftw::filter::{Ignore, IgnoreOptions};
    /// use ftw::walk::{Control, WalkBuilder};
    /// use std::sync::Mutex;
    ///
    /// let tmp = tempfile::tempdir()?;
    /// std::fs::write(tmp.path().join(".ignore"), "*.o\n")?;
    /// std::fs::write(tmp.path().join("a.o"), "")?;
    /// std::fs::write(tmp.path().join("a.c"), "")?;
    ///
    /// for threads in [1, 2] {
    ///     let names = Mutex::new(Vec::new());
    ///     WalkBuilder::new(tmp.path())
    ///         .min_depth(1)
    ///         .threads(threads)
    ///         .ignore_rules(Ignore::new(IgnoreOptions::default().hidden(false)))
    ///         .run_entries(|| {
    ///             |item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>| {
    ///                 names.lock().unwrap().push(item.unwrap().name().to_vec());
    ///                 Control::Continue
    ///             }
    ///         });
    ///     assert_eq!(names.into_inner().unwrap(), vec![b"a.c".to_vec()]);
    /// }
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn ignore_rules(self, rules: Ignore) -> Self {
        WalkBuilder {
            gate: Some(Arc::new(rules)),
            ..self
        }
    }
}

impl Gate for Ignore {
    fn enter(
        &self,
        d: &DirEvent<'_>,
        parent: Option<&DirRules>,
        errors: &mut dyn FnMut(Error),
    ) -> DirRules {
        let parent = parent.and_then(|p| p.clone().downcast::<Rules>().ok());
        let depth = d.depth() + 1;
        Ignore::enter(self, d, parent.as_ref(), &mut |e: IgnoreError| {
            errors(Error::ignore_file(e.path, depth, e.reason))
        })
    }

    #[inline]
    fn keeps(&self, dir: &DirRules, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        match dir.downcast_ref::<Rules>() {
            Some(rules) => !self.is_ignored(rules, e, scratch),
            None => true,
        }
    }
}
