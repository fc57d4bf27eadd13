//! Ignore files with git's semantics, compiled once per directory as the walk enters it
//! and shared with everything below it.
//!
//! See [`Ignore`] for which files count and how.

use super::git_config::GitConfig;
use super::git_index::Index;
use super::matcher::{Matcher, Subject, Verdict};
use crate::sys::Dir;
use crate::walk::{DirEvent, Entry};
use rustc_hash::{FxHashMap, FxHashSet};
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What an [`Ignore`] honours.
#[derive(Clone, Debug)]
pub struct IgnoreOptions {
    files: bool,
    require_git: bool,
    hidden: bool,
    extra: Vec<PathBuf>,
}

impl Default for IgnoreOptions {
    fn default() -> IgnoreOptions {
        IgnoreOptions {
            files: true,
            require_git: true,
            hidden: true,
            extra: Vec::new(),
        }
    }
}

impl IgnoreOptions {
    /// Honour ignore files found in the tree (`.gitignore`, `.ignore`, `.ftwignore`) and
    /// git's own (on by default).
    pub fn ignore_files(mut self, yes: bool) -> Self {
        self.files = yes;
        self
    }

    /// Use `.gitignore` files only inside a git work tree (on by default, as git).
    pub fn require_git(mut self, yes: bool) -> Self {
        self.require_git = yes;
        self
    }

    /// Keep names that start with a dot (on by default); off, they are ignored.
    pub fn hidden(mut self, yes: bool) -> Self {
        self.hidden = yes;
        self
    }

    /// Also honour `path`, a file in gitignore syntax, relative to each root.
    pub fn ignore_file(mut self, path: PathBuf) -> Self {
        self.extra.push(path);
        self
    }
}

/// A problem with an ignore file: its path and what is wrong (the walk goes on).
#[derive(Debug, Clone)]
pub struct IgnoreError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

/// Ignore rules for walks: ignore files with git's semantics, compiled once per
/// directory as the walk enters it and shared with everything below it.
///
/// Which files count, highest precedence first, in each directory: `.ftwignore`,
/// `.ignore`, and inside a git work tree `.gitignore`; a deeper directory's rules come
/// before its parent's. Then, for a work tree, the `.gitignore` files of the
/// directories between its top and the walk's root, `.git/info/exclude`, and git's
/// excludes file (`core.excludesFile`, from git's configuration files as git reads
/// them, the repository's `.git/config` last; by default `$XDG_CONFIG_HOME/git/ignore`
/// or `~/.config/git/ignore`); last, files given by the caller
/// ([`IgnoreOptions::ignore_file`]), relative to the roots. With `core.ignoreCase`, the
/// rules match without regard to case.
///
/// As `git ls-files --cached --others --exclude-standard` lists a work tree:
///
/// - a file git tracks is kept even where a rule ignores it, and an ignored directory
///   is entered where git tracks paths below it, for those paths only (the index,
///   `.git/index`, is read the first time a rule ignores something, once per
///   repository, and only its paths);
/// - a git repository nested in the work tree (a directory holding a `.git` that is a
///   repository, a submodule's included) is kept but not entered: it is one entry, as
///   git shows it;
/// - `.git` itself is left out.
///
/// A root outside any work tree (with repositories below it) walks each repository it
/// meets as a work tree of its own: only its own git rules count in it (its
/// `.gitignore` files and `info/exclude`), not those around it (`.ignore` and
/// `.ftwignore` files still do). A `.git` file (a submodule's, `gitdir: PATH`) makes a
/// work tree's top too, its `info/exclude` read from PATH. Whether a directory holds an
/// ignore file is read from its listing, so a directory without any costs nothing.
///
/// An ignore file is compiled once per content (the same rules in many directories
/// share one matcher, which takes paths relative to its file's directory); a file of
/// simple rules is compiled into hash lookups.
///
/// ```
/// use ftw::filter::{Ignore, IgnoreOptions};
/// use ftw::walk::{Control, DirEvent, Entry, Error, Visitor, WalkBuilder};
/// use std::sync::Arc;
///
/// struct List<'a> {
///     ignore: &'a Ignore,
///     found: Vec<Vec<u8>>,
///     scratch: Vec<u8>,
/// }
/// impl Visitor for List<'_> {
///     type State = Arc<ftw::filter::Rules>;
///     fn enter(&mut self, d: &DirEvent<'_>, parent: Option<&Self::State>) -> Self::State {
///         self.ignore.enter(d, parent, &mut |e| eprintln!("{e:?}"))
///     }
///     fn entry(&mut self, item: Result<&Entry<'_>, Error>, dir: Option<&Self::State>) -> Control {
///         let e = item.unwrap();
///         if let Some(rules) = dir {
///             if self.ignore.is_ignored(rules, e, &mut self.scratch) {
///                 return Control::Skip; // an ignored directory is not opened
///             }
///         }
///         self.found.push(e.name().to_vec());
///         Control::Continue
///     }
///     fn leave(&mut self, _: &DirEvent<'_>, _: Self::State, _: Option<&Self::State>) {}
/// }
///
/// let tmp = tempfile::tempdir()?;
/// std::fs::write(tmp.path().join(".ignore"), "*.log\nbuild/\n")?;
/// std::fs::create_dir(tmp.path().join("build"))?;
/// std::fs::write(tmp.path().join("build/out"), "")?;
/// std::fs::write(tmp.path().join("a.log"), "")?;
/// std::fs::write(tmp.path().join("main.c"), "")?;
/// let ignore = Ignore::new(IgnoreOptions::default());
/// let mut v = List { ignore: &ignore, found: Vec::new(), scratch: Vec::new() };
/// WalkBuilder::new(tmp.path()).min_depth(1).build().visit_events(&mut v);
/// v.found.sort();
/// assert_eq!(v.found, vec![b".ignore".to_vec(), b"main.c".to_vec()]);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Ignore {
    opts: IgnoreOptions,
    /// git's settings from the system's and the user's files.
    config: GitConfig,
    /// The excludes file of those settings: for rules outside any work tree (when
    /// `.gitignore` files count there too).
    global: Option<Arc<Matcher>>,
    /// Ignore files compiled so far, by their content: the same rules in many
    /// directories are compiled once (a matcher takes paths relative to its file's
    /// directory, so one serves them all).
    cache: Mutex<Cache>,
}

/// Matchers by the content of their file (`None`: it holds no rule).
type Compiled = FxHashMap<Box<[u8]>, Option<Arc<Matcher>>>;

/// Compiled ignore files by content, up to [`Cache::MAX_BYTES`] of content in all.
#[derive(Debug, Default)]
struct Cache {
    /// Matched with regard to case, and without (`core.ignoreCase`).
    compiled: [Compiled; 2],
    bytes: usize,
}

impl Cache {
    const MAX_BYTES: usize = 1 << 20;
    const MAX_FILE: usize = 16 << 10;
}

/// A directory's rules, and through its parent those of its ancestors: made by
/// [`Ignore::enter`], shared by the walk below the directory.
#[derive(Debug)]
pub struct Rules {
    /// The matchers that apply to this directory's entries, highest precedence first:
    /// this directory's, then its parent's, up to the root. Each is given with where
    /// paths relative to its file start in an entry's path (its directory's path and a
    /// slash), and whether it is git's (a `.gitignore`, an `info/exclude`: those of a
    /// work tree around a work tree nested in the walk do not count in it, and are
    /// left out below such a tree's top). Empty when this directory adds nothing: then
    /// `same_as` has it.
    chain: Vec<Link>,
    /// The nearest ancestor that holds this directory's chain, when it adds nothing.
    same_as: Option<Arc<Rules>>,
    /// Where the innermost work tree found below the walk's root (outside any work
    /// tree) above the entries starts in their paths, if any: git's rules from above it
    /// no longer count.
    nested: Option<usize>,
    /// The git repository whose work tree holds the entries, if any.
    repo: Option<Arc<Repo>>,
    /// Which entries are kept whatever the rules say, or not looked at.
    only: Only,
    /// The work tree's rules above the walk's root, if the root is in one.
    tree: Option<Arc<Tree>>,
    /// Whether `.gitignore` files count here.
    git: bool,
    /// Whether any matcher is in the chain (else only the hidden rule applies).
    any: bool,
}

/// Which of a directory's entries its rules decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Only {
    /// All: the rules decide (and the index, of those they ignore).
    Rules,
    /// An ignored directory entered for the paths git tracks below it: those alone.
    Tracked,
    /// A repository nested in the work tree: none (it is one entry, as git shows it).
    Nothing,
}

/// A git repository whose work tree the walk is in.
#[derive(Debug)]
struct Repo {
    git_dir: PathBuf,
    /// Its excludes file (`core.excludesFile`), compiled.
    excludes: Option<Arc<Matcher>>,
    /// `core.ignoreCase`.
    icase: bool,
    /// The length of its object ids (20, or 32 for SHA-256).
    hash_len: usize,
    /// An entry's path relative to the work tree's top is `prefix` followed by the
    /// entry's path from `rel_start` on.
    prefix: Vec<u8>,
    rel_start: usize,
    /// The index file to read (`GIT_INDEX_FILE` for the root's repository).
    index_file: PathBuf,
    /// The index's paths, read the first time a rule ignores an entry.
    index: OnceLock<Option<Index>>,
    /// The paths (as the walk makes them) of the ignored directories kept for what git
    /// tracks below them.
    tracked_dirs: Mutex<FxHashSet<Box<[u8]>>>,
    any_tracked_dir: AtomicBool,
}

impl Repo {
    fn index(&self) -> Option<&Index> {
        self.index
            .get_or_init(|| Index::read(&self.index_file, self.hash_len))
            .as_ref()
    }

    /// Whether the ignored entry `e` is kept for git's index: tracked, or a directory
    /// with tracked paths below it (it is then noted, to be entered for them alone).
    /// `scratch` holds the entry's path.
    fn tracks(&self, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        let Some(index) = self.index() else {
            return false;
        };
        scratch.clear();
        e.write_path(scratch);
        let end = scratch.len();
        scratch.extend_from_slice(&self.prefix);
        scratch.extend_from_within(self.rel_start.min(end)..end);
        let rel = &scratch[end..];
        if index.contains(rel) {
            return true;
        }
        if e.is_dir() && index.has_below(rel) {
            let mut dirs = self.tracked_dirs.lock().unwrap_or_else(|e| e.into_inner());
            dirs.insert(scratch[..end].into());
            self.any_tracked_dir.store(true, Ordering::Release);
            return true;
        }
        false
    }

    /// Whether the directory at `path`, being entered, was kept for the paths git
    /// tracks below it. Asked as often as it is entered (a sorted walk's read-ahead may
    /// make its rules, then the walker again): the answer stays.
    fn tracked_dir(&self, path: &[u8]) -> bool {
        self.any_tracked_dir.load(Ordering::Acquire)
            && self
                .tracked_dirs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(path)
    }
}

/// One ignore file in a [`Rules`] chain.
#[derive(Debug, Clone)]
struct Link {
    matcher: Arc<Matcher>,
    rel_start: usize,
    git: bool,
}

/// What holds for a whole root: the rules from above it (a work tree's top down to the
/// root's parent, `info/exclude`, the caller's files), each with the path of the root
/// relative to where the rules apply.
#[derive(Debug, Default)]
struct Tree {
    /// Matchers with the prefix that makes a path below the root relative to them,
    /// deepest first, and whether they are git's (`.gitignore`, `info/exclude`).
    above: Vec<(Matcher, Vec<u8>, bool)>,
    /// Where paths below the root start in an entry's path.
    root_rel_start: usize,
}

impl Rules {
    /// The matchers that apply to this directory's entries, highest precedence first.
    fn chain(&self) -> &[Link] {
        match &self.same_as {
            Some(r) => &r.chain,
            None => &self.chain,
        }
    }
}

impl Ignore {
    /// Rules for walks, with git's global excludes file read now.
    pub fn new(opts: IgnoreOptions) -> Ignore {
        let config = if opts.files {
            GitConfig::user()
        } else {
            GitConfig::default()
        };
        // Only outside work trees, where .gitignore files count only when asked to.
        let global = if opts.files && !opts.require_git {
            compile_excludes(&config.with_repo(None), None)
        } else {
            None
        };
        Ignore {
            opts,
            config,
            global,
            cache: Mutex::default(),
        }
    }

    /// The repository whose git directory is `git_dir` and work tree's top `top`, its
    /// entries' paths relative to the top made as [`Repo::prefix`] says.
    fn repo(
        &self,
        git_dir: PathBuf,
        top: &Path,
        prefix: Vec<u8>,
        rel_start: usize,
        index_file: Option<PathBuf>,
    ) -> Repo {
        let config = self.config.with_repo(Some(&git_dir));
        Repo {
            excludes: compile_excludes(&config, Some(top)),
            icase: config.ignore_case,
            hash_len: if config.sha256 { 32 } else { 20 },
            prefix,
            rel_start,
            index_file: index_file.unwrap_or_else(|| git_dir.join("index")),
            git_dir,
            index: OnceLock::new(),
            tracked_dirs: Mutex::default(),
            any_tracked_dir: AtomicBool::new(false),
        }
    }

    /// The rules of the directory being entered: its parent's (`None` for a root, whose
    /// surroundings are then looked at: a git work tree above it, the caller's files),
    /// and its own ignore files. `errors` is told of ignore files that cannot be read.
    pub fn enter(
        &self,
        d: &DirEvent<'_>,
        parent: Option<&Arc<Rules>>,
        errors: &mut dyn FnMut(IgnoreError),
    ) -> Arc<Rules> {
        let path = d.path();
        let rel_start = path.len() + usize::from(!path.ends_with(b"/"));
        let (tree, mut git, mut repo) = match parent {
            Some(p) => (p.tree.clone(), p.git, p.repo.clone()),
            None => {
                let (tree, git, repo) = self.root_tree(path, rel_start, errors);
                (Some(Arc::new(tree)), git, repo.map(Arc::new))
            }
        };
        // A work tree's top (or a nested one) turns .gitignore files on below it.
        let has_git = self.opts.files && d.has_entry(b".git") == Some(true);
        if let Some(p) = parent {
            // A repository nested in the work tree: one entry, not entered, as git sees
            // it. Below an ignored directory entered for what git tracks there: that
            // alone.
            let nested = has_git
                && p.repo.is_some()
                && is_repository(&crate::walk::bytes_to_path(path.to_vec()).join(".git"));
            let taken = !nested && p.repo.as_ref().is_some_and(|r| r.tracked_dir(path));
            let only = if nested {
                Some(Only::Nothing)
            } else if taken || p.only == Only::Tracked {
                Some(Only::Tracked)
            } else {
                None
            };
            if let Some(only) = only {
                return Arc::new(Rules {
                    chain: Vec::new(),
                    same_as: None,
                    nested: p.nested,
                    repo,
                    only,
                    tree,
                    git,
                    any: false,
                });
            }
        }
        git |= has_git;
        // A work tree met below a root outside any: git's rules from around it do not
        // count in it; its own info/exclude does.
        let new_top = has_git && parent.is_some_and(|p| p.repo.is_none());
        let nested_top = new_top.then(|| {
            let top = crate::walk::bytes_to_path(path.to_vec());
            let r = self.repo(git_dir(&top), &top, Vec::new(), rel_start, None);
            let exclude = compile_path(
                &super::git_config::common_dir(&r.git_dir).join("info/exclude"),
                r.icase,
            )
            .ok()
            .flatten()
            .map(Arc::new);
            repo = Some(Arc::new(r));
            exclude
        });
        if !self.opts.require_git {
            git = true;
        }
        let icase = repo.as_ref().is_some_and(|r| r.icase);
        let mut own = Vec::new();
        if self.opts.files {
            let names: [(&CStr, bool); 3] = [
                (c".ftwignore", true),
                (c".ignore", true),
                (c".gitignore", git),
            ];
            for (name, wanted) in names {
                if !wanted || d.has_entry(name.to_bytes()) == Some(false) {
                    continue;
                }
                let Some(dir) = d.dir() else { continue };
                match self.compile_at(dir, name, icase) {
                    Ok(Some(g)) => own.push((g, name == c".gitignore")),
                    Ok(None) => {}
                    Err(reason) => errors(IgnoreError {
                        path: crate::walk::bytes_to_path(
                            [path, &b"/"[..rel_start - path.len()], name.to_bytes()].concat(),
                        ),
                        reason,
                    }),
                }
            }
        }
        let is_nested_top = nested_top.is_some();
        let exclude = nested_top.flatten();
        let above = parent.map_or(&[][..], |p| p.chain());
        let (chain, same_as) = match parent {
            Some(p) if own.is_empty() && !is_nested_top => (
                Vec::new(),
                Some(p.same_as.clone().unwrap_or_else(|| p.clone())),
            ),
            _ => {
                let mut links =
                    Vec::with_capacity(own.len() + usize::from(exclude.is_some()) + above.len());
                links.extend(own.into_iter().map(|(matcher, git)| Link {
                    matcher,
                    rel_start,
                    git,
                }));
                links.extend(exclude.map(|matcher| Link {
                    matcher,
                    rel_start,
                    git: true,
                }));
                // Below a nested work tree's top, git's rules from around it are gone.
                links.extend(above.iter().filter(|l| !is_nested_top || !l.git).cloned());
                (links, None)
            }
        };
        let nested = if is_nested_top {
            Some(rel_start)
        } else {
            parent.and_then(|p| p.nested)
        };
        let excludes = match &repo {
            Some(r) => r.excludes.is_some(),
            None => git && self.global.is_some(),
        };
        let any = !chain.is_empty()
            || same_as.as_ref().is_some_and(|r| !r.chain.is_empty())
            || tree.as_ref().is_some_and(|t| !t.above.is_empty())
            || excludes;
        Arc::new(Rules {
            chain,
            same_as,
            nested,
            repo,
            only: Only::Rules,
            tree,
            git,
            any,
        })
    }

    /// The rules from above a root: the work tree holding it (its `.gitignore`,
    /// `.ignore` and `.ftwignore` files down to the root's parent, and
    /// `.git/info/exclude`), then the caller's files; whether `.gitignore` files count,
    /// and the repository, if the root is in a work tree.
    fn root_tree(
        &self,
        root: &[u8],
        rel_start: usize,
        errors: &mut dyn FnMut(IgnoreError),
    ) -> (Tree, bool, Option<Repo>) {
        let mut tree = Tree {
            above: Vec::new(),
            root_rel_start: rel_start,
        };
        let mut git = false;
        let mut repo = None;
        let root_path = crate::walk::bytes_to_path(root.to_vec());
        if self.opts.files {
            // `chain`: the root's ancestors, nearest first, each with the root's path
            // relative to it: up to the top of its work tree, or without one, to the
            // file system's root.
            let (top, chain) = ancestors(&root_path);
            git = top.is_some();
            repo = top.map(|(top, top_prefix)| {
                let index_file = std::env::var_os("GIT_INDEX_FILE")
                    .filter(|f| !f.is_empty())
                    .map(PathBuf::from);
                self.repo(git_dir(&top), &top, top_prefix, rel_start, index_file)
            });
            let icase = repo.as_ref().is_some_and(|r| r.icase);
            let gitignore = git || !self.opts.require_git;
            for (dir, prefix) in &chain {
                for (name, wanted, is_git) in [
                    (".ftwignore", true, false),
                    (".ignore", true, false),
                    (".gitignore", gitignore, true),
                ] {
                    let file = dir.join(name);
                    if wanted && file.is_file() {
                        match compile_path(&file, icase) {
                            Ok(None) => {}
                            Ok(Some(g)) => tree.above.push((g, prefix.clone(), is_git)),
                            Err(reason) => errors(IgnoreError { path: file, reason }),
                        }
                    }
                }
            }
            if let Some(r) = &repo {
                let exclude = super::git_config::common_dir(&r.git_dir).join("info/exclude");
                if exclude.is_file() {
                    // git init's, all comments, costs nothing per entry.
                    if let Ok(Some(g)) = compile_path(&exclude, icase) {
                        tree.above.push((g, r.prefix.clone(), true));
                    }
                }
            }
        }
        for file in &self.opts.extra {
            match compile_path(file, false) {
                Ok(None) => {}
                Ok(Some(g)) => tree.above.push((g, Vec::new(), false)),
                Err(reason) => errors(IgnoreError {
                    path: file.clone(),
                    reason,
                }),
            }
        }
        (tree, git, repo)
    }

    /// Whether `e`, an entry of the directory whose rules are `rules`, is ignored (an
    /// ignored directory is then best not opened). `scratch` holds the entry's path.
    pub fn is_ignored(&self, rules: &Rules, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        match rules.only {
            Only::Rules => {}
            Only::Nothing => return true,
            Only::Tracked => return !rules.repo.as_ref().is_some_and(|r| r.tracks(e, scratch)),
        }
        let name = e.name();
        if !self.opts.hidden && name.first() == Some(&b'.') {
            return true;
        }
        if rules.git && self.opts.files && name == b".git" {
            return true;
        }
        if !rules.any || !self.ruled_out(rules, e, scratch) {
            return false;
        }
        // Ignored by a rule: kept all the same where git tracks it.
        !rules.repo.as_ref().is_some_and(|r| r.tracks(e, scratch))
    }

    /// Whether the rules ignore `e` (see [`Ignore::is_ignored`]).
    fn ruled_out(&self, rules: &Rules, e: &Entry<'_>, scratch: &mut Vec<u8>) -> bool {
        let name = e.name();
        // The entry's path is written in `scratch` only when a rule needs it: a rule
        // of its own directory sees its name, and most ignore files have no rule
        // with a path of the length asked about.
        let parent = e.parent_path();
        let end =
            parent.len() + usize::from(!parent.is_empty() && !parent.ends_with(b"/")) + name.len();
        let own_start = end - name.len();
        let mut built = false;
        let mut build = |scratch: &mut Vec<u8>| {
            if !std::mem::replace(&mut built, true) {
                scratch.clear();
                e.write_path(scratch);
            }
        };
        let subject = Subject::new(name, e.is_dir());
        // A file of simple rules whose name rules said nothing of the entry at a deeper
        // level: the same content at a level above (the same compiled matcher) has only
        // its path rules to try.
        let mut names_said_nothing: *const Matcher = std::ptr::null();
        for link in rules.chain() {
            let g = &*link.matcher;
            let start = link.rel_start.min(end);
            let names = !std::ptr::eq(g, names_said_nothing);
            let rel = if start == own_start {
                Some(name)
            } else if g.wants_path(end - start) {
                build(scratch);
                Some(&scratch[start..end])
            } else if !names {
                // Said nothing of the name below, and has no rule for the path.
                continue;
            } else {
                None
            };
            match g.matched(&subject, rel, names) {
                Verdict::Ignore => return true,
                Verdict::Keep => return false,
                Verdict::None => names_said_nothing = g,
            }
        }
        let nested = rules.nested;
        let Some(tree) = &rules.tree else {
            return false;
        };
        let excludes = match &rules.repo {
            Some(r) => r.excludes.as_deref(),
            None if rules.git => self.global.as_deref(),
            None => None,
        };
        if tree.above.is_empty() && excludes.is_none() {
            return false;
        }
        build(scratch);
        // The paths relative to the rules above the root are made after the entry's own
        // path, in the same buffer: no allocation per entry.
        let below_root = tree.root_rel_start.min(end)..end;
        for (g, prefix, _) in tree.above.iter().filter(|a| !a.2 || nested.is_none()) {
            scratch.truncate(end);
            scratch.extend_from_slice(prefix);
            scratch.extend_from_within(below_root.clone());
            match g.matched(&subject, Some(&scratch[end..]), true) {
                Verdict::Ignore => return true,
                Verdict::Keep => return false,
                Verdict::None => {}
            }
        }
        if let Some(g) = excludes {
            // Relative to the top of the work tree.
            scratch.truncate(end);
            match &rules.repo {
                Some(r) => {
                    scratch.extend_from_slice(&r.prefix);
                    scratch.extend_from_within(r.rel_start.min(end)..end);
                }
                None => scratch.extend_from_within(below_root),
            }
            if g.matched(&subject, Some(&scratch[end..]), true) == Verdict::Ignore {
                return true;
            }
        }
        false
    }
}

/// The git directory of the work tree whose top is `top`: `top/.git`, or where a `.git`
/// file (a submodule's, a linked worktree's) points.
fn git_dir(top: &Path) -> PathBuf {
    let dot_git = top.join(".git");
    match std::fs::read(&dot_git) {
        Ok(link) => git_dir_of_link(&link).map_or(dot_git, |d| top.join(d)),
        Err(_) => dot_git,
    }
}

/// The path in a `.git` file (`gitdir: PATH`), relative to the file's directory unless
/// absolute.
fn git_dir_of_link(link: &[u8]) -> Option<PathBuf> {
    let rest = link.strip_prefix(b"gitdir:")?;
    let path = rest.trim_ascii();
    (!path.is_empty()).then(|| crate::walk::bytes_to_path(path.to_vec()))
}

/// Directories above a root, each with the root's path relative to it.
type Ancestors = Vec<(PathBuf, Vec<u8>)>;

/// The directories above `root`, nearest first, each with the root's path relative to
/// it (ending in `/`): up to the top of the git work tree holding the root, and then
/// that top with the root's path relative to it; without a work tree, up to the file
/// system's root. The search stops below `GIT_CEILING_DIRECTORIES`.
fn ancestors(root: &Path) -> (Option<(PathBuf, Vec<u8>)>, Ancestors) {
    let Ok(root) = std::fs::canonicalize(root) else {
        return (None, Vec::new());
    };
    let ceilings: Vec<PathBuf> = std::env::var_os("GIT_CEILING_DIRECTORIES")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| p.is_absolute())
                .collect()
        })
        .unwrap_or_default();
    let mut dir = root.clone();
    let mut chain = Vec::new();
    loop {
        if dir.join(".git").exists() {
            let prefix = relative_prefix(&dir, &root).unwrap_or_default();
            return (Some((dir, prefix)), chain);
        }
        let Some(parent) = dir.parent().map(Path::to_path_buf) else {
            return (None, chain);
        };
        if ceilings.contains(&parent) {
            return (None, chain);
        }
        dir = parent;
        if let Some(prefix) = relative_prefix(&dir, &root) {
            chain.push((dir.clone(), prefix));
        }
    }
}

/// `path` relative to `dir`, ending in `/` (empty when they are the same).
fn relative_prefix(dir: &Path, path: &Path) -> Option<Vec<u8>> {
    let rel = path.strip_prefix(dir).ok()?;
    let mut v = rel.as_os_str().as_encoded_bytes().to_vec();
    if !v.is_empty() {
        v.push(b'/');
    }
    Some(v)
}

impl Ignore {
    /// Compiles the ignore file `name` of `dir`, or finds it compiled already (the same
    /// content elsewhere); `None` if it holds no rule.
    fn compile_at(
        &self,
        dir: &Dir,
        name: &CStr,
        icase: bool,
    ) -> Result<Option<Arc<Matcher>>, String> {
        let bytes = match dir.read_file_at(name) {
            Ok(b) => b,
            // Gone since the listing, or a directory: nothing to honour (git says nothing
            // either).
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::IsADirectory
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(crate::walk::describe(&e)),
        };
        let cacheable = bytes.len() <= Cache::MAX_FILE;
        if cacheable {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(m) = cache.compiled[usize::from(icase)].get(bytes.as_slice()) {
                return Ok(m.clone());
            }
        }
        // Compiled outside the lock; another worker may compile the same content at the
        // same time, and the first one in is kept.
        let m = Matcher::compile(&bytes, Path::new(""), icase)?.map(Arc::new);
        if cacheable {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.bytes + bytes.len() <= Cache::MAX_BYTES {
                cache.bytes += bytes.len();
                cache.compiled[usize::from(icase)]
                    .entry(bytes.into())
                    .or_insert_with(|| m.clone());
            }
        }
        Ok(m)
    }
}

fn compile_path(path: &Path, icase: bool) -> Result<Option<Matcher>, String> {
    let bytes = std::fs::read(path).map_err(|e| crate::walk::describe(&e))?;
    Matcher::compile(&bytes, path, icase)
}

/// The excludes file that `config` names, compiled, if it holds rules (`top`: the work
/// tree's top, which a relative path is relative to).
fn compile_excludes(config: &GitConfig, top: Option<&Path>) -> Option<Arc<Matcher>> {
    let path = config.excludes_path(top).filter(|p| p.is_file())?;
    compile_path(&path, config.ignore_case)
        .ok()
        .flatten()
        .map(Arc::new)
}

/// Whether `dot_git` (a directory's `.git`) makes the directory a repository, as git
/// tells (`is_git_directory`): a git directory, or a file naming one (`gitdir: PATH`),
/// with a `HEAD`, and `objects` and `refs` (in its common directory, for a worktree's).
fn is_repository(dot_git: &Path) -> bool {
    let dir = match std::fs::read(dot_git) {
        Ok(link) => match (git_dir_of_link(&link), dot_git.parent()) {
            (Some(d), Some(top)) => top.join(d),
            _ => return false,
        },
        Err(_) => dot_git.to_path_buf(),
    };
    let head = std::fs::read(dir.join("HEAD")).unwrap_or_default();
    let head = head.trim_ascii();
    let valid_head =
        head.starts_with(b"ref:") || head.len() >= 40 && head.iter().all(u8::is_ascii_hexdigit);
    if !valid_head {
        return false;
    }
    let common = match std::fs::read(dir.join("commondir")) {
        Ok(c) => dir.join(crate::walk::bytes_to_path(c.trim_ascii().to_vec())),
        Err(_) => dir,
    };
    common.join("objects").is_dir() && common.join("refs").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(rules: &[u8], path: &str, is_dir: bool) -> bool {
        let name = path.rsplit('/').next().unwrap().as_bytes();
        Matcher::compile(rules, Path::new(""), false)
            .unwrap()
            .unwrap()
            .matched(&Subject::new(name, is_dir), Some(path.as_bytes()), true)
            == Verdict::Ignore
    }

    /// The rules of each directory entered, by its path.
    fn rules_of(root: &Path, opts: IgnoreOptions) -> Vec<(Vec<u8>, Arc<Rules>)> {
        use crate::walk::{Control, Error, Visitor, WalkBuilder};
        struct V<'a>(&'a Ignore, Vec<(Vec<u8>, Arc<Rules>)>);
        impl Visitor for V<'_> {
            type State = Arc<Rules>;
            fn enter(&mut self, d: &DirEvent<'_>, parent: Option<&Arc<Rules>>) -> Arc<Rules> {
                let r = self.0.enter(d, parent, &mut |e| panic!("{e:?}"));
                self.1.push((d.path().to_vec(), r.clone()));
                r
            }
            fn entry(&mut self, _: Result<&Entry<'_>, Error>, _: Option<&Arc<Rules>>) -> Control {
                Control::Continue
            }
            fn leave(&mut self, _: &DirEvent<'_>, _: Arc<Rules>, _: Option<&Arc<Rules>>) {}
        }
        let ignore = Ignore::new(opts);
        let mut v = V(&ignore, Vec::new());
        WalkBuilder::new(root)
            .threads(1)
            .build()
            .visit_events(&mut v);
        v.1
    }

    #[test]
    fn files_without_rules_cost_nothing_per_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path();
        std::fs::create_dir_all(top.join(".git/info")).unwrap();
        std::fs::create_dir_all(top.join("sub")).unwrap();
        // What git init writes: comments only.
        std::fs::write(top.join(".git/info/exclude"), "# git ls-files --others\n").unwrap();
        std::fs::write(top.join(".ignore"), "# nothing\n\n").unwrap();
        let extra = top.join("extra");
        std::fs::write(&extra, "# nothing either\n").unwrap();
        for root in [top.to_path_buf(), top.join("sub")] {
            for (dir, rules) in rules_of(&root, IgnoreOptions::default().ignore_file(extra.clone()))
            {
                assert!(!rules.any, "{}", String::from_utf8_lossy(&dir));
            }
        }
    }

    #[test]
    fn a_byte_order_mark_and_crlf_are_not_part_of_the_rules() {
        assert!(ignored(b"\xef\xbb\xbf*.log\r\nfoo\r\n", "a.log", false));
        assert!(ignored(b"\xef\xbb\xbf*.log\r\nfoo\r\n", "foo", false));
    }
}
