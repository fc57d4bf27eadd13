;;; ftw.el --- List directory trees with ftw  -*- lexical-binding: t; -*-

;; Author: the ftw authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: files, tools
;; URL: https://github.com/ftw-rs/ftw

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Front end for ftw (file tree walk), a fast `find' replacement.
;;
;; `ftw-directory-files-recursively' is a drop-in for
;; `directory-files-recursively': same arguments, same result (the
;; same names, in the same order), with the tree listed by ftw in
;; the result's order (level by level with a PREDICATE function).  When ftw is missing, DIR is
;; remote (or has another file name handler), or ftw reports an
;; error that the built-in function would signal, it calls the
;; built-in function.
;;
;; `ftw-project-mode' adds `ftw-project-try' to the end of
;; `project-find-functions', so that a directory that is not under
;; version control is a project of type (ftw . ROOT), whose
;; `project-files' are listed by ftw, leaving out what
;; `project-ignores' names (by default `vc-directory-exclusion-list'
;; and `grep-find-ignored-files').  With `ftw-project-use-for-vc',
;; VC projects in Git work trees are listed by ftw too ("ftw find
;; --ignore": the files that "git ls-files" lists).
;;
;;   (require 'ftw)
;;   (ftw-project-mode 1)
;;   (ftw-directory-files-recursively "~/src" "\\.el\\'")

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'project)

(defvar grep-find-ignored-files)

(defgroup ftw nil
  "List directory trees with ftw, a fast `find' replacement."
  :group 'files
  :prefix "ftw-")

(defcustom ftw-program "ftw"
  "The ftw executable: an absolute file name, or a name to look up.
A name is looked up in the variable `exec-path'.  When the
executable cannot be found, the functions of this package fall
back to the built-in ones."
  :type 'string)

(defcustom ftw-use-gitignore nil
  "Non-nil means pass --ignore to ftw when listing a project in a Git work tree.
ftw then leaves out what the .gitignore files (and the other Git
exclusion files) ignore, as \"git ls-files\" would."
  :type 'boolean)

(defcustom ftw-project-use-for-vc nil
  "Non-nil means list the files of VC projects with ftw too.
`project-files' of a (vc . ROOT) project in a Git work tree then
runs \"ftw find\" with --ignore instead of the VC backend's \"git
ls-files -c -o --exclude-standard\": the same files (regular files
and symbolic links, what Git ignores left out unless Git tracks
it, and `project-vc-ignores'), sorted."
  :type 'boolean)

(defcustom ftw-project-markers '(".ftwproject" ".project")
  "Files whose presence marks the root of an ftw project.
`ftw-project-try' looks for them in the directory and its parents;
the nearest directory holding one is the project's root.  Without
one, the directory itself is the root."
  :type '(repeat string))

(defconst ftw--batch (* 64 1024)
  "How many bytes of directory names one ftw process lists at most.
With a PREDICATE function, the tree is listed level by level.")

;;; Running ftw

(defun ftw--executable ()
  "The absolute name of the ftw executable, or nil if there is none."
  (and (stringp ftw-program)
       (not (string-empty-p ftw-program))
       (let ((default-directory "/"))
         (executable-find ftw-program))))

(defun ftw--coding ()
  "The coding system of file names."
  (or file-name-coding-system default-file-name-coding-system))

(defun ftw--encode (name)
  "Encode the file NAME for a process argument."
  (let ((coding (ftw--coding)))
    (if (and coding (multibyte-string-p name))
        (encode-coding-string name coding)
      name)))

;; ftw's output is read a run of lines at a time (`ftw--chunk' bytes or
;; so), not whole: the buffer that holds it stays small while the
;; names read from it add up, and Emacs's peak memory is about the
;; names' (the output of a large tree is larger than its list).
(defvar ftw--chunk (* 64 1024)
  "How many bytes of ftw's output are read into a buffer at a time.")

(defun ftw--read-chunks (file fn)
  "Call FN on the lines of FILE a run at a time; return its lists joined.
The current buffer (unibyte) holds one run, emptied before the
next: whole lines, about `ftw--chunk' bytes (more where one line
is longer), with point at its start.  FN is called with two
arguments, non-nil if the run is FILE's first, and non-nil if it
is its last; for an empty FILE, once, on an empty buffer.  The
lists that it returns are joined, not copied."
  (let* ((size (or (file-attribute-size (file-attributes file)) 0))
         (pos 0)
         (head (list nil))
         (tail head))
    (while (progn
             (erase-buffer)
             (let ((end (min size (+ pos ftw--chunk)))
                   (first (= pos 0)))
               (insert-file-contents-literally file nil pos end)
               ;; Whole lines only: read on until there is a newline.
               (while (and (< end size)
                           (progn (goto-char (point-max))
                                  (not (search-backward "\n" nil t))))
                 (setq end (min size (+ end ftw--chunk)))
                 (goto-char (point-max))
                 (insert-file-contents-literally file nil (+ pos (buffer-size)) end))
               (when (< end size)
                 (goto-char (point-max))
                 (skip-chars-backward "^\n")
                 (delete-region (point) (point-max)))
               (setq pos (+ pos (buffer-size)))
               (goto-char (point-min))
               (setcdr tail (funcall fn first (>= pos size)))
               (setq tail (last tail))
               (< pos size))))
    (cdr head)))

(defun ftw--strip-list (first last)
  "Remove the list's parentheses from a run of \"ftw find --lisp\"'s output.
The current buffer holds the run; FIRST and LAST say whether it is
the output's first and last (see `ftw--read-chunks'): the
parentheses are on lines of their own there.  Leave point at the
start; throw `unreadable' to `ftw--stop' where they are not there."
  (when first
    (unless (looking-at "(\n") (throw 'ftw--stop 'unreadable))
    (delete-char 2))
  (when last
    (goto-char (point-max))
    (unless (and (> (buffer-size) 1)
                 (string= (buffer-substring (- (point) 2) (point)) ")\n"))
      (throw 'ftw--stop 'unreadable))
    (delete-char -2))
  (goto-char (point-min)))

(defun ftw--read-names (regexp under coding)
  "Read the names in the current buffer (those whose last part matches REGEXP).
The buffer holds one Lisp string a line, a path as \"ftw find
--lisp\" prints it; REGEXP nil or \"\" takes every name.  UNDER nil
means the paths are the names to return; otherwise it is (PREFIX
. LENGTH): a name is PREFIX and what follows the first LENGTH bytes
of the path.  The path, or what follows them, is decoded with
CODING (if non-nil) where it has a byte that is not ASCII.
A line of ASCII without a backslash (an escape), the most, is
taken where it lies in the buffer: its last component matched
there, narrowed to it (so that \\=`, \\=', ^ and $ match at its
ends, as `string-match' on the component alone), the name made
with `buffer-substring' only if it matches (no string made in
vain, and no `read').  The other lines are read with `read'."
  (let ((result nil)
        (buffer (current-buffer))
        (regexp (and (not (equal regexp "")) regexp))
        (file-name-handler-alist nil)
        ;; The start of the next line with a byte that is not ASCII, or a
        ;; backslash.
        (special (save-excursion (skip-chars-forward "\0-[]-\177")
                                 (line-beginning-position)))
        (bol (point))
        (eol nil))
    (while (not (eobp))
      (skip-chars-forward "^\n")
      (setq eol (point))
      (if (= bol special)
          (let* ((raw (progn (goto-char bol) (read buffer)))
                 (name (cond
                        (under
                         (concat (car under)
                                 (let ((rest (substring raw (cdr under))))
                                   (if coding (decode-coding-string rest coding t)
                                     rest))))
                        (coding (decode-coding-string raw coding t))
                        (t raw))))
            (when (or (not regexp)
                      (string-match regexp (file-name-nondirectory name)))
              (push name result))
            (goto-char eol)
            (unless (eobp) (forward-char 1))
            (setq special (save-excursion (skip-chars-forward "\0-[]-\177")
                                          (line-beginning-position))))
        (when (or (not regexp)
                  (progn
                    (skip-chars-backward "^/" bol)
                    (narrow-to-region (point) (1- eol))
                    (prog1 (re-search-forward regexp nil t)
                      (widen))))
          (push (if under
                    (concat (car under)
                            (buffer-substring-no-properties
                             (+ bol 1 (cdr under)) (1- eol)))
                  (buffer-substring-no-properties (1+ bol) (1- eol)))
                result))
        (goto-char eol)
        (unless (eobp) (forward-char 1)))
      (setq bol (point)))
    (nreverse result)))

(defun ftw--read-list (program args dir &optional decode reader groups)
  "Run PROGRAM with ARGS in DIR, and read the Lisp list it prints.
ARGS ask for \"ftw find --lisp\"; the output goes through a
temporary file, read a run of lines at a time into a unibyte
buffer (see `ftw--read-chunks').  Return \(STATUS NAMES ERRORS):
NAMES the unibyte strings read (those with a byte that is not
ASCII decoded with the coding system of file names if DECODE is
non-nil), or the symbol `unreadable'; ERRORS what ftw wrote on
standard error.  With READER, NAMES is the lists it returns
joined, called with no argument in the buffer of each run, at its
start, the run's lines of names only (the list's parentheses
removed), or with GROUPS non-nil the run's lines as they are (the
output of \"--group\", a list a line).  NAMES is `carriage-return'
if DECODE is non-nil, the output holds one and the coding system
of file names could take it for the end of a line."
  (let ((out (make-temp-file "ftw-out"))
        (err (make-temp-file "ftw-err"))
        (coding (ftw--coding))
        ;; `string-match' as in the caller's buffer.
        (tables (list case-fold-search (current-case-table) (syntax-table)
                      (category-table))))
    (unwind-protect
        (with-temp-buffer
          (set-buffer-multibyte nil)
          (pcase-let ((`(,fold ,case ,syntax ,category) tables))
            (setq case-fold-search fold)
            (set-case-table case)
            (set-syntax-table syntax)
            (set-category-table category))
          (let* ((coding-system-for-read 'binary)
                 (coding-system-for-write 'binary)
                 (default-directory dir)
                 (status (apply #'call-process program nil
                                (list (list :file out) err) nil
                                (mapcar #'ftw--encode args)))
                 (cr (and decode coding
                          (not (eq (coding-system-eol-type coding) 0))))
                 (names
                  (if (not (memq status '(0 1)))
                      'unreadable
                    (catch 'ftw--stop
                      (ftw--read-chunks
                       out
                       (lambda (first last)
                         (when (and cr (search-forward "\r" nil t))
                           (throw 'ftw--stop 'carriage-return))
                         (goto-char (point-min))
                         (unless groups (ftw--strip-list first last))
                         (condition-case nil
                             (if reader
                                 (funcall reader)
                               (ftw--read-names nil nil (and decode coding)))
                           ((end-of-file invalid-read-syntax)
                            (throw 'ftw--stop 'unreadable)))))))))
            (erase-buffer)
            (insert-file-contents-literally err)
            (list status names (buffer-string))))
      (delete-file out)
      (delete-file err))))

(defun ftw--local-directory-p (dir)
  "Non-nil if DIR (absolute) is a local directory without a file name handler."
  (and (not (file-remote-p dir))
       (not (find-file-name-handler dir 'file-name-all-completions))))

;;; ftw-directory-files-recursively

(defun ftw--prefix (root)
  "The prefix of the names ftw prints under ROOT (a directory file name)."
  (if (string-suffix-p "/" root) root (concat root "/")))

(defun ftw--group-p (path prefix)
  "Non-nil if PREFIX is what ftw prints before the names under PATH."
  (let* ((path (ftw--encode path))
         (n (length path)))
    (and (= (length prefix) (if (string-suffix-p "/" path) n (1+ n)))
         (eq t (compare-strings prefix 0 n path 0 nil)))))

(defun ftw--node (names full coding regexp)
  "The node of a directory named FULL in the result, whose entries are NAMES.
NAMES are as ftw prints them (\"--mark-dirs\": the directories
first, with a slash after them), raw; they are decoded with
CODING.  The node is (DIRS . FILES): FILES the names in the
result of the other entries whose name matches REGEXP (made here,
once: what the result holds), DIRS a list of (MATCH FULL-NAME
. NODE) for each directory (or link to one): MATCH non-nil if its
name matches REGEXP, NODE nil until it is listed."
  (let ((dirs nil)
        (files nil))
    (while (and names (string-suffix-p "/" (car names)))
      (let ((leaf (decode-coding-string (substring (pop names) 0 -1) coding t)))
        (push (cons (and (string-match regexp leaf) t)
                    (cons (concat full "/" leaf) nil))
              dirs)))
    (dolist (name names)
      (let ((leaf (decode-coding-string name coding t)))
        (when (string-match regexp leaf)
          (push (concat full "/" leaf) files))))
    (cons (nreverse dirs) (nreverse files))))

(defun ftw--list-level (program level follow predicate coding regexp)
  "List the directories of LEVEL with PROGRAM, and ask PREDICATE about their own.
LEVEL is a list of (PATH . ITEM): PATH a local absolute directory
name, ITEM its (MATCH FULL-NAME . NODE) (see `ftw--node'), whose
NODE is set here (see `ftw--node' for CODING and REGEXP).  FOLLOW
non-nil follows symbolic links; only then is PREDICATE asked about
a link to a directory.  One run of
\"ftw find --order emacs --lisp --group --mark-dirs -d 1\" for up
to `ftw--batch' bytes of paths: a list a line for each path that
has entries, in the order of the paths.  Return (OK . NEXT): NEXT
the next level, the directories that PREDICATE let in, in order;
OK nil if ftw reported an error."
  (let ((ok t)
        (next nil))
    (while (and ok level)
      (let ((batch nil)
            (bytes 0))
        (while (and level (or (null batch) (< bytes ftw--batch)))
          (setq bytes (+ bytes (string-bytes (caar level)) 1))
          (push (pop level) batch))
        (setq batch (nreverse batch))
        (let* ((pending batch)
               (stray nil)
               (res
                (ftw--read-list
                 program
                 (append '("find" "-j1" "--order" "emacs" "--lisp" "--group"
                           "--mark-dirs" "-d" "1")
                         (and follow '("-L"))
                         (cons "--" (mapcar #'car batch)))
                 "/" t
                 ;; Each group made into its directory's node as it is read:
                 ;; the raw names of a run at a time, not of the batch.
                 (lambda ()
                   (let ((buffer (current-buffer)))
                     (while (progn (skip-chars-forward " \n") (not (eobp)))
                       (let ((group (read buffer)))
                         ;; Paths before it have no entries.
                         (while (and pending
                                     (not (ftw--group-p (caar pending) (car group))))
                           (pop pending))
                         (if (not pending)
                             (setq stray t)
                           (let ((item (cdr (pop pending))))
                             (setcdr (cdr item)
                                     (ftw--node (cdr group) (cadr item)
                                                coding regexp))))))
                     nil))
                 t)))
          ;; An error, or output that could not be read (or that decoding
          ;; could change: a carriage return): not listed.
          (if (not (and (eq (car res) 0) (listp (cadr res)) (not stray)))
              (setq ok nil)
            (dolist (job batch)
              (let* ((path (car job))
                     (item (cdr job))
                     (full (cadr item)))
                (unless (cddr item)
                  (setcdr (cdr item) (list nil)))
                (dolist (d (car (cddr item)))
                  (when (and (or follow (not (file-symlink-p (cadr d))))
                             (funcall predicate (cadr d)))
                    (push (cons (if (eq path full)
                                    (cadr d)
                                  (concat path "/" (substring (cadr d) (1+ (length full)))))
                                d)
                          next)))))))))
    (cons ok (nreverse next))))

(defun ftw--levels (program root given follow predicate coding regexp)
  "List the tree ROOT level by level with PROGRAM, asking PREDICATE.
ROOT is the local absolute directory file name listed, GIVEN its
name as the result spells it; PREDICATE is called with the names
made from it, for each directory that `directory-files-recursively'
would ask it about (a symbolic link only if FOLLOW), and a
directory is listed only if it says so.  One ftw run a level (see
`ftw--list-level'); CODING and REGEXP as for `ftw--node'.  Return
the node of ROOT (see `ftw--node'), or nil if ftw reported an
error."
  (let* ((top (list nil (if (string= given root) root given)))
         (level (list (cons root top)))
         (ok t))
    (while (and ok level)
      (let ((listed (ftw--list-level program level follow predicate coding
                                     regexp)))
        (setq ok (car listed)
              level (cdr listed))))
    (and ok (cddr top))))

(defun ftw--assemble (node include-directories tail)
  "Add the names `directory-files-recursively' gives for NODE after TAIL.
NODE is a directory's node (see `ftw--node'), INCLUDE-DIRECTORIES
as for `directory-files-recursively'; TAIL the last cons of the
result so far.  Return the new last cons.  As the built-in
function: for each directory in order, its contents (if it was
listed), then itself (if it matches); then the other entries (the
node's list of them, joined as it is: no new cons).  NODE is
emptied as it goes: what is done with is left to the collector."
  (while (car node)
    (let ((d (pop (car node))))
      (setq tail (ftw--assemble (cddr d) include-directories tail))
      (when (and include-directories (car d))
        (setcdr tail (list (cadr d)))
        (setq tail (cdr tail)))))
  (when (cdr node)
    (setcdr tail (cdr node))
    (setcdr node nil)
    (setq tail (last tail)))
  tail)

(defun ftw--utf-8-p (coding)
  "Return non-nil if CODING is UTF-8, as \"ftw find --order\" assumes.
Its end of lines does not matter."
  (and coding (coding-system-p coding)
       (eq (coding-system-base coding) 'utf-8)))

(defun ftw--all (program given root regexp include-directories predicate follow)
  "`ftw-directory-files-recursively' in one run of PROGRAM, or `fallback'.
GIVEN is DIR as the result spells it (without a final slash),
ROOT its local absolute name; REGEXP, INCLUDE-DIRECTORIES and
FOLLOW as for `directory-files-recursively', PREDICATE nil or t.
ftw prints the names in the order of the result (\"--order
emacs\"), as a Lisp list (\"--lisp\"), leaving the directories
out unless INCLUDE-DIRECTORIES (\"--no-dirs\"); what is left to do
here is to decode the names that are not ASCII and match REGEXP.
Where ftw prints GIVEN itself (see below) and REGEXP is \"\", the
list is read as it is; otherwise each line is matched in the
buffer and only the names that match are made (see
`ftw--read-names').
Return `fallback' where the result could differ from the built-in
function's: ftw's errors (unless PREDICATE is t and none is a loop
of links), a carriage return that decoding could change."
  (let* ((coding (ftw--coding))
         (cwd (and (not (file-name-absolute-p given))
                   (file-name-as-directory (expand-file-name default-directory))))
         ;; ftw prints GIVEN itself where it names ROOT plainly: ASCII,
         ;; unibyte (a multibyte DIR makes every name multibyte), with no
         ;; ~, . or .. for the system to read otherwise.
         (direct (and (not (multibyte-string-p given))
                      (string-match-p "\\`[\0-\177]+\\'" given)
                      (not (string-suffix-p "/" given))
                      (string= root (if cwd (concat cwd given) given))
                      (or (not cwd) (ftw--local-directory-p cwd))))
         (under (and (not direct)
                     (cons (concat given "/")
                           (length (ftw--prefix (ftw--encode root))))))
         (args (append '("find" "--order" "emacs" "--lisp")
                       (and follow '("-L"))
                       (and (not include-directories) '("--no-dirs"))
                       (list "--" (if direct given root)))))
    (pcase-let ((`(,status ,names ,errors)
                 (ftw--read-list program args (if (and direct cwd) cwd "/") t
                                 (lambda ()
                                   (ftw--read-names regexp under coding)))))
      (if (or (not (listp names))
              (not (or (eq status 0)
                       (and (eq status 1) (eq predicate t)
                            (not (string-match-p "file system loop" errors))))))
          'fallback
        names))))

;;;###autoload
(defun ftw-directory-files-recursively (dir regexp &optional include-directories
                                            predicate follow-symlinks)
  "Return the files under DIR whose names match REGEXP, listed by ftw.
A drop-in for `directory-files-recursively', which see for DIR,
REGEXP, INCLUDE-DIRECTORIES, PREDICATE and FOLLOW-SYMLINKS: the
result is the same list, in the same order (depth first: the
contents of each subdirectory, then the subdirectory itself if
INCLUDE-DIRECTORIES, before the files of the directory, each
directory's names sorted with `string<'), and names begin with
DIR as given (without its final slash).

With PREDICATE nil or t, the tree is listed by one run of \"ftw
find --order emacs --lisp\" (`ftw-program'), which prints the
names in the order of the result; REGEXP is matched in Lisp
against the last component of each, as the built-in function
does.  With another PREDICATE, the tree is listed level by level
\(an ftw run a level, for up to `ftw--batch' bytes of directory
names), so that PREDICATE decides before a directory is opened:
it is called with the same names as by the built-in function, for
the same directories, but a level at a time rather than depth
first.  Where file names are not decoded as UTF-8, the built-in
function lists the tree.

The built-in function is called instead when ftw cannot be found,
when DIR is not a readable local directory (it signals the same
error) or has a file name handler (such as a remote one), and when
ftw reports an error (such as an unreadable subdirectory),
unless PREDICATE is t (then, as for the built-in function, what cannot be
read is left out)."
  (let* ((program (ftw--executable))
         (given (directory-file-name dir))
         (root (directory-file-name (expand-file-name dir))))
    (if (not (and program
                  (ftw--local-directory-p root)
                  (file-directory-p root)
                  (file-readable-p root)
                  (file-executable-p root)))
        (directory-files-recursively dir regexp include-directories predicate
                                     follow-symlinks)
      (let* ((coding (ftw--coding))
             (all (cond
                   ;; ftw's order is `string<''s where names are UTF-8.
                   ((not (ftw--utf-8-p coding)) 'fallback)
                   ((memq predicate '(nil t))
                    (let (;; Fewer collections while the names are made: few
                          ;; are made in vain.
                          (gc-cons-threshold (max gc-cons-threshold
                                                  (* 64 1024 1024))))
                      (ftw--all program given root regexp include-directories
                                predicate follow-symlinks)))
                   (t
                    (let ((node (ftw--levels program root given follow-symlinks
                                             predicate coding regexp)))
                      (if node
                          (let ((head (list nil)))
                            (ftw--assemble node include-directories head)
                            (cdr head))
                        'fallback))))))
        (if (listp all)
            all
          (directory-files-recursively dir regexp include-directories predicate
                                       follow-symlinks))))))

;;; project.el backend

;;;###autoload
(defun ftw-project-try (dir)
  "Return an ftw project for DIR, for `project-find-functions'.
Its root is the nearest directory, DIR or one of its parents, that
holds one of `ftw-project-markers', or else DIR itself.  The value
is (ftw . ROOT), ROOT an absolute directory name."
  (let* ((dir (expand-file-name dir))
         (root (or (cl-some (lambda (m) (locate-dominating-file dir m))
                            ftw-project-markers)
                   dir)))
    (cons 'ftw (file-name-as-directory (expand-file-name root)))))

(cl-defmethod project-root ((project (head ftw)))
  "The root directory of the ftw PROJECT."
  (cdr project))

(defun ftw--glob-quote (string)
  "Quote the glob characters in STRING with backslashes."
  (replace-regexp-in-string "[][*?{}\\\\]" "\\\\\\&" string))

(defun ftw--exclude-globs (patterns root)
  "Return the exclusion globs for ftw that stand for PATTERNS.
PATTERNS are as `project-ignores' returns them.  A pattern
starting with \"./\" is rooted at ROOT, the local directory file
name given to ftw; one ending with a slash is for directories, but
ftw applies it to files too."
  (delq nil
        (mapcar (lambda (p)
                  (let ((p (string-trim-right p "/+")))
                    (cond ((string-empty-p p) nil)
                          ((string-prefix-p "./" p)
                           (concat (ftw--glob-quote (ftw--prefix root))
                                   (substring p 2)))
                          (t p))))
                patterns)))

(defun ftw--ignores (project dir)
  "The patterns to leave out of DIR in PROJECT, for `project-ignores'.
The entries of `grep-find-ignored-files' that are (CONDITION . PATTERN)
are turned into PATTERN when CONDITION, called with DIR, returns
non-nil."
  (delq nil
        (mapcar (lambda (p)
                  (cond ((stringp p) p)
                        ((and (consp p) (functionp (car p)) (stringp (cdr p))
                              (funcall (car p) dir))
                         (cdr p))))
                (project-ignores project dir))))

(defun ftw--git-work-tree-p (dir)
  "Non-nil if DIR is in a Git work tree."
  (locate-dominating-file dir ".git"))

(defun ftw--project-args (root ignores gitignore)
  "The arguments of ftw to list the files under ROOT.
ROOT is a local directory file name, IGNORES the patterns of
`project-ignores'; GITIGNORE non-nil adds --ignore, and `vc' lists
symbolic links too, as \"git ls-files\" does."
  (append '("find" "--order" "paths" "--lisp" "-t" "f")
          (and (eq gitignore 'vc) '("-t" "l"))
          (and gitignore '("--ignore"))
          (mapcan (lambda (g) (list "-E" g)) (ftw--exclude-globs ignores root))
          (list "--" root)))

(defun ftw--vc-ignores (dir)
  "The value of `project-vc-ignores' in DIR (its directory-local value)."
  (if (fboundp 'project--value-in-dir)
      (project--value-in-dir 'project-vc-ignores dir)
    (bound-and-true-p project-vc-ignores)))

(defun ftw--project-files (project dirs gitignore)
  "List the files of PROJECT in DIRS with ftw, or return `fallback'.
DIRS defaults to the root of PROJECT.  GITIGNORE is t to pass
--ignore, `auto' to pass it in a Git work tree if
`ftw-use-gitignore' says so, and `vc' to list what \"git ls-files
-c -o --exclude-standard\" lists, as the VC backend of project.el
does: --ignore, symbolic links too, and `project-vc-ignores' left
out (not the rest of `project-ignores').  Return `fallback' when ftw
cannot be found or a directory is remote, or, for `vc', not in a
Git work tree."
  (let ((program (ftw--executable))
        (dirs (or dirs (list (project-root project))))
        ;; Fewer collections while the names are made: none is made in vain.
        (gc-cons-threshold (max gc-cons-threshold (* 64 1024 1024))))
    (if (not (and program
                  (cl-every (lambda (d)
                              (let ((d (expand-file-name d)))
                                (and (ftw--local-directory-p d)
                                     (or (not (eq gitignore 'vc))
                                         (ftw--git-work-tree-p d)))))
                            dirs)))
        'fallback
      (mapcan
       (lambda (dir)
         (let* ((root (directory-file-name (expand-file-name dir)))
                (args (ftw--project-args
                       root
                       (if (eq gitignore 'vc)
                           (ftw--vc-ignores dir)
                         (ftw--ignores project dir))
                       (if (eq gitignore 'auto)
                           (and ftw-use-gitignore (ftw--git-work-tree-p root) t)
                         gitignore)))
                (res (ftw--read-list program args "/" t))
                (status (nth 0 res))
                (names (nth 1 res))
                (errors (string-trim (nth 2 res))))
           (unless (and (memq status '(0 1)) (listp names))
             (error "Listing with ftw failed (%s): %s" status errors))
           (when (eq status 1)
             (message "Errors from ftw listing %s: %s" dir
                      (car (split-string errors "\n" t))))
           ;; ftw sorts them as `string<' sorts the names decoded from UTF-8.
           (if (ftw--utf-8-p (ftw--coding))
               names
             (sort names #'string<))))
       dirs))))

(cl-defmethod project-files ((project (head ftw)) &optional dirs)
  "The files of the ftw PROJECT in DIRS (or its root), listed by ftw.
What `project-ignores' returns is left out (names with
\"ftw find -E\"); in a Git work tree, what Git ignores too if
`ftw-use-gitignore' is non-nil.  Without ftw, or for remote
directories, the generic implementation lists the files."
  (let ((files (ftw--project-files project dirs 'auto)))
    (if (eq files 'fallback) (cl-call-next-method) files)))

(cl-defmethod project-files :around ((project (head vc)) &optional dirs)
  "List the files of the VC PROJECT in DIRS with ftw if `ftw-project-use-for-vc'.
ftw is then given --ignore and lists what \"git ls-files\" lists
for the VC backend (the same files, sorted; see
`ftw--project-files'); in a directory that is not in a Git work
tree, or without ftw, the VC backend lists the files."
  (let ((files (if ftw-project-use-for-vc
                   (ftw--project-files project dirs 'vc)
                 'fallback)))
    (if (eq files 'fallback) (cl-call-next-method) files)))

;;;###autoload
(define-minor-mode ftw-project-mode
  "Make the directories that are not in another project ftw projects.
This adds `ftw-project-try' to the end of `project-find-functions',
so that `project-current' finds a project of type (ftw . ROOT)
where no VC project is, whose `project-files' ftw lists."
  :global t
  :group 'ftw
  (if ftw-project-mode
      (add-hook 'project-find-functions #'ftw-project-try 90)
    (remove-hook 'project-find-functions #'ftw-project-try)))

(provide 'ftw)

;;; ftw.el ends here
