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
;; same names, in the same order), with the tree listed by
;; "ftw find -0".  When ftw is missing, DIR is remote (or has another
;; file name handler), or ftw reports an error that the built-in
;; function would signal, it calls the built-in function.
;;
;; `ftw-project-mode' adds `ftw-project-try' to the end of
;; `project-find-functions', so that a directory that is not under
;; version control is a project of type (ftw . ROOT), whose
;; `project-files' are listed by ftw, leaving out what
;; `project-ignores' names (by default `vc-directory-exclusion-list'
;; and `grep-find-ignored-files').  With `ftw-project-use-for-vc',
;; VC projects are listed by ftw too.
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
`project-files' of a (vc . ROOT) project then runs \"ftw find\"
with --ignore (so that it leaves out what Git ignores, as
\"git ls-files\" does) instead of the VC backend."
  :type 'boolean)

(defcustom ftw-project-markers '(".ftwproject" ".project")
  "Files whose presence marks the root of an ftw project.
`ftw-project-try' looks for them in the directory and its parents;
the nearest directory holding one is the project's root.  Without
one, the directory itself is the root."
  :type '(repeat string))

(defconst ftw--batch 256
  "How many directories one ftw process lists at most, level by level.")

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

(defun ftw--run (program args &optional stderr)
  "Run PROGRAM with ARGS, and return (STATUS . NAMES).
NAMES are the NUL-terminated names it printed, decoded with the
coding system of file names.  Standard error goes to the file
STDERR, or is discarded if STDERR is nil."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (let* ((coding-system-for-read 'binary)
           (coding-system-for-write 'binary)
           (default-directory "/")
           (status (apply #'call-process program nil (list t stderr) nil
                          (mapcar #'ftw--encode args)))
           (coding (ftw--coding))
           (names (split-string (buffer-string) "\0" t)))
      ;; Each name decoded on its own, as Emacs decodes a file name: one all
      ;; ASCII stays the unibyte string it is.
      (cons status
            (if coding
                (mapcar (lambda (n) (decode-coding-string n coding t)) names)
              names)))))

(defun ftw--decode-records (names coding)
  "Decode with CODING the NAMES that hold a byte that is not ASCII.
NAMES were just read from the current buffer, the output of
\"ftw find --lisp\": one name a line after the first.  The others
stay the unibyte strings they are, as Emacs leaves a file name
that is all ASCII.  Return NAMES, changed in place."
  (when coding
    (let ((line-start (progn (goto-char (point-min)) (forward-line 1) (point)))
          (n 0)
          (cell names)
          (at 0))
      (while (progn (skip-chars-forward "\0-\177") (not (eobp)))
        (let ((bol (line-beginning-position)))
          (setq n (+ n (count-lines line-start bol))
                line-start bol
                cell (nthcdr (- n at) cell)
                at n)
          (when cell
            (setcar cell (decode-coding-string (car cell) coding t)))
          (forward-line 1)))))
  names)

(defun ftw--read-list (program args dir &optional decode reader)
  "Run PROGRAM with ARGS in DIR, and read the Lisp list it prints.
ARGS ask for \"ftw find --lisp\"; the output goes through a
temporary file, read whole into a unibyte buffer.  Return
\(STATUS NAMES ERRORS): NAMES the unibyte strings read (those with
a byte that is not ASCII decoded with the coding system of file
names if DECODE is non-nil), or the symbol `unreadable'; ERRORS
what ftw wrote on standard error.  With READER, NAMES is what it
returns, called with no argument in that buffer, at its start.
NAMES is `carriage-return' if the output holds one and the coding
system of file names could take it for the end of a line."
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
                 (names 'unreadable))
            (insert-file-contents-literally out)
            (goto-char (point-min))
            (cond
             ((not (memq status '(0 1))))
             ((and decode coding (not (eq (coding-system-eol-type coding) 0))
                   (search-forward "\r" nil t))
              (setq names 'carriage-return))
             (reader
              (setq names (condition-case nil (funcall reader)
                            (end-of-file 'unreadable)
                            (invalid-read-syntax 'unreadable))))
             ((looking-at "(")
              (setq names (condition-case nil (read (current-buffer))
                            (error 'unreadable)))
              (when (and decode (listp names))
                (ftw--decode-records names coding))))
            (erase-buffer)
            (insert-file-contents-literally err)
            (list status names (buffer-string))))
      (delete-file out)
      (delete-file err))))

(defun ftw--read-groups (regexp prefix-of coding)
  "Read the groups of \"ftw find --lisp --group\" from point on.
Return the names whose last component matches REGEXP: each the
prefix that the function PREFIX-OF makes of its group's directory
name (as ftw printed it, unibyte) and that component, decoded with
CODING where its line has a byte that is not ASCII."
  (let ((result nil)
        (buffer (current-buffer)))
    (while (progn (skip-chars-forward " \n") (not (eobp)))
      (let* ((ascii (save-excursion
                      (skip-chars-forward "\0-\177" (line-end-position))
                      (eolp)))
             (group (read buffer))
             (prefix (funcall prefix-of (car group) ascii)))
        (dolist (leaf (cdr group))
          (unless ascii
            (setq leaf (decode-coding-string leaf coding t)))
          (when (string-match regexp leaf)
            (push (concat prefix leaf) result)))))
    (nreverse result)))

(defun ftw--local-directory-p (dir)
  "Non-nil if DIR (absolute) is a local directory without a file name handler."
  (and (not (file-remote-p dir))
       (not (find-file-name-handler dir 'file-name-all-completions))))

;;; ftw-directory-files-recursively

(defun ftw--prefix (root)
  "The prefix of the names ftw prints under ROOT (a directory file name)."
  (if (string-suffix-p "/" root) root (concat root "/")))

(defun ftw--walk (program root roots follow max-depth children)
  "List ROOTS under ROOT with PROGRAM, filling the hash table CHILDREN.
ROOT is the local absolute directory file name the walk starts
from, ROOTS the directories (relative to it, \"\" for ROOT) to
list.  FOLLOW non-nil follows symbolic links; MAX-DEPTH limits
the depth if non-nil.  CHILDREN maps the relative name of each
directory listed to its entries: names as
`file-name-all-completions' gives them (a directory, or a link to
one, with a slash at the end).  Return non-nil if ftw reported
no error."
  (let* ((prefix (ftw--prefix root))
         (plen (length prefix))
         (common (append '("find" "-0")
                         (and follow '("-L"))
                         (and max-depth (list "-d" (number-to-string max-depth)))))
         (ok t))
    (while roots
      (let ((paths (mapcar (lambda (rel) (if (string-empty-p rel) root (concat prefix rel)))
                           (seq-take roots ftw--batch))))
        (setq roots (nthcdr ftw--batch roots))
        ;; Two walks with disjoint types: what may be a directory (a
        ;; directory, or a symbolic link, to be asked about), and the rest.
        (dolist (kind '(("-t" "d" "-t" "l")
                        ("-t" "f" "-t" "s" "-t" "p" "-t" "b" "-t" "c")))
          (let* ((maybe-dir (equal (cadr kind) "d"))
                 (res (ftw--run program (append common kind (cons "--" paths)))))
            (unless (eq (car res) 0) (setq ok nil))
            (dolist (path (cdr res))
              (when (and (> (length path) plen) (string-prefix-p prefix path))
                (let* ((slash (string-match "/[^/]*\\'" path plen))
                       (parent (if slash (substring path plen slash) ""))
                       (name (substring path (if slash (1+ slash) plen))))
                  (when (and maybe-dir (file-directory-p path))
                    (setq name (concat name "/")))
                  (push name (gethash parent children)))))))))
    ok))

(defun ftw--assemble (children rel dir regexp include-directories)
  "The result of `directory-files-recursively' for the directory REL.
REL is relative to the walk's root, DIR is its name as the result
gives it.  CHILDREN is the table that `ftw--walk' filled; REGEXP
and INCLUDE-DIRECTORIES are as for `directory-files-recursively'.
This follows the built-in function step by step: each directory's
names sorted with `string<', the contents of each subdirectory,
then the subdirectory itself, before the directory's files."
  (let ((result nil)
        (files nil))
    (dolist (file (sort (gethash rel children) #'string<))
      (if (directory-name-p file)
          (let* ((leaf (substring file 0 (1- (length file))))
                 (full-file (concat dir "/" leaf)))
            (setq result
                  (nconc result
                         (ftw--assemble children
                                        (if (string-empty-p rel) leaf
                                          (concat rel "/" leaf))
                                        full-file regexp include-directories)))
            (when (and include-directories (string-match regexp leaf))
              (setq result (nconc result (list full-file)))))
        (when (string-match regexp file)
          (push (concat dir "/" file) files))))
    (nconc result (nreverse files))))

(defun ftw--descend (program root children follow predicate given)
  "Walk ROOT level by level with PROGRAM, asking PREDICATE about each directory.
Fill CHILDREN as `ftw--walk' does.  FOLLOW non-nil follows symbolic
links to directories.  GIVEN is the name of ROOT as the result
gives it (PREDICATE is called with names made from it).  Return
non-nil if ftw reported no error."
  (let ((level '(""))
        (prefix (ftw--prefix root))
        (ok t))
    (while level
      (unless (ftw--walk program root level follow 1 children)
        (setq ok nil))
      (let ((next nil))
        (dolist (rel level)
          (dolist (file (sort (copy-sequence (gethash rel children)) #'string<))
            (when (directory-name-p file)
              (let* ((leaf (substring file 0 (1- (length file))))
                     (sub (if (string-empty-p rel) leaf (concat rel "/" leaf))))
                (when (and (or follow (not (file-symlink-p (concat prefix sub))))
                           (funcall predicate (concat given "/" sub)))
                  (push sub next))))))
        (setq level (nreverse next))))
    ok))

(defun ftw--utf-8-p (coding)
  "Return non-nil if CODING is UTF-8, as \"ftw find --order\" assumes.
Its end of lines does not matter."
  (and coding (coding-system-p coding)
       (eq (coding-system-base coding) 'utf-8)))

(defun ftw--keep-matching (names regexp)
  "Keep in NAMES those whose last component matches REGEXP; destructive."
  (let* ((file-name-handler-alist nil)
         (head (cons nil names))
         (prev head))
    (while (cdr prev)
      (if (string-match regexp (file-name-nondirectory (cadr prev)))
          (setq prev (cdr prev))
        (setcdr prev (cddr prev))))
    (cdr head)))

(defun ftw--all (program given root regexp include-directories predicate follow)
  "`ftw-directory-files-recursively' in one run of PROGRAM, or `fallback'.
GIVEN is DIR as the result spells it (without a final slash),
ROOT its local absolute name; REGEXP, INCLUDE-DIRECTORIES and
FOLLOW as for `directory-files-recursively', PREDICATE nil or t.
ftw prints the names in the order of the result (\"--order
emacs\"), as a Lisp list (\"--lisp\"), leaving the directories
out unless INCLUDE-DIRECTORIES (\"--no-dirs\"); what is left to do
here is to decode the names that are not ASCII and match REGEXP.
With a REGEXP other than \"\", ftw prints a list per run of names
of one directory (\"--group\"): the names are read a directory at
a time, matched as they are, and only those that match are joined
to their directory's name.
Return `fallback' where the result could differ from the built-in
function's: ftw's errors (unless PREDICATE is t and none is a loop
of links), a carriage return that decoding could change; and
`in-lisp' where file names are not decoded as UTF-8 (ftw's order
is not `string<''s then)."
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
         (group (not (equal regexp "")))
         (plen (length (ftw--prefix (ftw--encode root))))
         (args (append '("find" "--order" "emacs" "--lisp")
                       (and group '("--group"))
                       (and follow '("-L"))
                       (and (not include-directories) '("--no-dirs"))
                       (list "--" (if direct given root))))
         (prefix-of
          (if direct
              (lambda (d ascii) (if ascii d (decode-coding-string d coding t)))
            (let ((given-slash (concat given "/")))
              (lambda (d _)
                (concat given-slash
                        (decode-coding-string (substring d plen) coding t)))))))
    (if (not (ftw--utf-8-p coding))
        'in-lisp
      (pcase-let ((`(,status ,names ,errors)
                   (ftw--read-list program args (if (and direct cwd) cwd "/")
                                   (or direct group)
                                   (and group
                                        (lambda ()
                                          (ftw--read-groups regexp prefix-of coding))))))
        (cond
         ((or (not (listp names))
              (not (or (eq status 0)
                       (and (eq status 1) (eq predicate t)
                            (not (string-match-p "file system loop" errors)))))
              ;; A carriage return that the coding system could take for
              ;; the end of a line, decoding the name alone.
              (and (not (or direct group))
                   (not (eq (coding-system-eol-type coding) 0))
                   (cl-some (lambda (n) (string-search "\r" n)) names)))
          'fallback)
         ((or direct group) names)
         (t
          (let ((prefix (concat given "/"))
                (result nil))
            (dolist (n names)
              (push (concat prefix (decode-coding-string (substring n plen) coding t))
                    result))
            (nreverse result))))))))

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

The tree is listed by \"ftw find -0\" (`ftw-program'); REGEXP is
matched in Lisp against each name, as the built-in function does.
When PREDICATE is a function, the tree is listed level by level,
one ftw process per level (for up to `ftw--batch' directories),
so that PREDICATE decides before a directory is opened; PREDICATE
is then called with the same names as by the built-in function,
but level by level rather than depth first.

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
      (let* (;; Fewer collections while the many names are made.
             (gc-cons-threshold (max gc-cons-threshold (* 64 1024 1024)))
             (all (if (functionp predicate)
                      'by-levels
                    (ftw--all program given root regexp include-directories
                              predicate follow-symlinks))))
        (if (listp all)
            all
          (let* ((children (make-hash-table :test #'equal))
                 (ok (and (not (eq all 'fallback))
                          (if (functionp predicate)
                              (ftw--descend program root children follow-symlinks
                                            predicate given)
                            (ftw--walk program root '("") follow-symlinks nil
                                       children)))))
            (if (or ok (and (eq predicate t) (not (eq all 'fallback))))
                (ftw--assemble children "" given regexp include-directories)
              (directory-files-recursively dir regexp include-directories predicate
                                           follow-symlinks))))))))

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
`project-ignores'; GITIGNORE non-nil adds --ignore."
  (append '("find" "--order" "paths" "--lisp" "-t" "f")
          (and gitignore '("--ignore"))
          (mapcan (lambda (g) (list "-E" g)) (ftw--exclude-globs ignores root))
          (list "--" root)))

(defun ftw--project-files (project dirs gitignore)
  "List the files of PROJECT in DIRS with ftw, or return `fallback'.
DIRS defaults to the root of PROJECT.  GITIGNORE is t to pass
--ignore, `auto' to pass it in a Git work tree if
`ftw-use-gitignore' says so.  Return `fallback' when ftw cannot be
found or a directory is remote."
  (let ((program (ftw--executable))
        (dirs (or dirs (list (project-root project)))))
    (if (not (and program
                  (cl-every (lambda (d) (ftw--local-directory-p (expand-file-name d)))
                            dirs)))
        'fallback
      (mapcan
       (lambda (dir)
         (let* ((root (directory-file-name (expand-file-name dir)))
                (args (ftw--project-args
                       root (ftw--ignores project dir)
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
ftw is then given --ignore, which it needs to have; otherwise the
VC backend lists the files."
  (let ((files (if ftw-project-use-for-vc
                   (ftw--project-files project dirs t)
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
