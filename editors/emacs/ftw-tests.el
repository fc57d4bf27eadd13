;;; ftw-tests.el --- ERT tests for ftw.el  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run with editors/emacs/run-tests.sh, which sets FTW_PROGRAM to the
;; ftw binary to test.  `ftw-directory-files-recursively' is compared
;; with the built-in `directory-files-recursively' on an awkward tree
;; (a name with a newline, spaces, UTF-8, links, hidden files), and
;; `project-files' of ftw projects with project.el's own find-based
;; listing and with what must and must not be listed.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'ftw)

(defvar ftw-tests-program (or (getenv "FTW_PROGRAM") "ftw")
  "The ftw binary under test.")

(defvar ftw-tests-calls nil
  "The file that the wrapper around ftw appends to at each call.")

(defmacro ftw-tests-with-tree (var &rest body)
  "Make a tree in a temporary directory, bind VAR to its name, and run BODY.
The wrapper around ftw (which records its calls in
`ftw-tests-calls') is `ftw-program' in BODY."
  (declare (indent 1))
  `(let* ((,var (file-name-as-directory (make-temp-file "ftw-tests" t)))
          (ftw-tests-calls (expand-file-name "calls" (make-temp-file "ftw-calls" t)))
          (ftw-program (ftw-tests-wrapper ,var))
          (file-name-coding-system 'utf-8))
     (unwind-protect
         (progn (ftw-tests-make-tree ,var) ,@body)
       (delete-directory ,var t)
       (delete-directory (file-name-directory ftw-tests-calls) t))))

(defun ftw-tests-wrapper (tmp)
  "Write a script in TMP's parent that records its calls and runs ftw."
  (let ((script (concat (directory-file-name tmp) "-ftw")))
    (with-temp-file script
      (insert "#!/bin/sh\necho \"$*\" >> " (shell-quote-argument ftw-tests-calls)
              "\nexec " (shell-quote-argument (expand-file-name ftw-tests-program))
              " \"$@\"\n"))
    (set-file-modes script #o755)
    script))

(defun ftw-tests-calls ()
  "How many times ftw was run in this test."
  (if (file-exists-p ftw-tests-calls)
      (with-temp-buffer
        (insert-file-contents ftw-tests-calls)
        (count-lines (point-min) (point-max)))
    0))

(defun ftw-tests-make-tree (root)
  "Make the test tree under ROOT."
  (let ((default-directory root))
    (dolist (d '("a" "sub/deep/deeper" "sub/Deep" "empty" ".hdir" ".git/objects"
                 "node_modules/pkg" "dir with spaces" "ünïcode-dir"))
      (make-directory d t))
    (dolist (f '("a.txt" "a-b" "a/in-a" "A.TXT" "b c.txt" "new\nline.txt"
                 "héllo wörld.txt" "日本語.el" ".hidden" ".hdir/x" ".git/HEAD"
                 ".git/objects/ab" "x.o" "sub/g.o" "sub/a" "sub.txt"
                 "sub/deep/f.el" "sub/deep/deeper/z" "sub/Deep/Y"
                 "node_modules/pkg/index.js" "dir with spaces/new\nline too"
                 "ünïcode-dir/ß" "foo.elc" ".#lock" "backup~"))
      (write-region "x" nil f nil 'silent))
    (make-symbolic-link "sub" "link-to-sub")
    (make-symbolic-link "a.txt" "link-to-file")
    (make-symbolic-link "nowhere" "dangling")
    (make-symbolic-link "../a" "sub/up-link")))

(defconst ftw-tests-regexps
  '("" "\\.txt\\'" "a" "\\`[^.]" "e" "line")
  "The REGEXPs tried.")

(defun ftw-tests-compare (dir regexp include predicate follow)
  "Check that ftw and the built-in function agree on these arguments.
DIR, REGEXP, INCLUDE, PREDICATE and FOLLOW are the arguments of
`directory-files-recursively'."
  (let ((ours (ftw-directory-files-recursively dir regexp include predicate follow))
        (theirs (directory-files-recursively dir regexp include predicate follow)))
    (should (equal (list dir regexp include predicate follow ours)
                   (list dir regexp include predicate follow theirs)))))

(ert-deftest ftw-tests-program-works ()
  "The binary under test is there and the wrapper runs it."
  (ftw-tests-with-tree root
    (should (ftw--executable))
    (should (equal (car (ftw--read-list ftw-program (list "find" "--order" "paths" "--lisp" root) "/")) 0))
    (should (= (ftw-tests-calls) 1))))

(ert-deftest ftw-tests-same-as-built-in ()
  "Same list (order included) as `directory-files-recursively'."
  (ftw-tests-with-tree root
    (dolist (regexp ftw-tests-regexps)
      (dolist (include '(nil t))
        (dolist (follow '(nil t))
          (dolist (predicate '(nil t))
            (ftw-tests-compare root regexp include predicate follow)))))
    ;; ftw did the listing (one walk per call), it was no fallback.
    (should (= (ftw-tests-calls) (* (length ftw-tests-regexps) 8)))))

(ert-deftest ftw-tests-predicate ()
  "A PREDICATE function decides which directories are entered."
  (ftw-tests-with-tree root
    (let* ((seen-ours (list nil)) (seen-theirs (list nil))
           (pred (lambda (seen)
                   (lambda (d) (push d (car seen))
                     (not (string-match-p "/\\(deep\\|node_modules\\)\\'" d)))))
           (ours (ftw-directory-files-recursively root "" t (funcall pred seen-ours)))
           (theirs (directory-files-recursively root "" t (funcall pred seen-theirs))))
      (should (equal ours theirs))
      (should-not (member (concat root "sub/deep/f.el") ours))
      (should (member (concat root "sub/deep") ours))
      ;; Asked about the same directories (level by level, not depth first).
      (should (car seen-ours))
      (should (equal (sort (car seen-ours) #'string<) (sort (car seen-theirs) #'string<)))
      (should (> (ftw-tests-calls) 0)))
    (dolist (follow '(nil t))
      (dolist (regexp ftw-tests-regexps)
        (ftw-tests-compare root regexp t #'always follow)))))

(ert-deftest ftw-tests-odd-names ()
  "Names with a newline, spaces and UTF-8 come back exactly."
  (ftw-tests-with-tree root
    (let ((files (ftw-directory-files-recursively root "")))
      (dolist (f '("new\nline.txt" "héllo wörld.txt" "日本語.el"
                   "dir with spaces/new\nline too" "ünïcode-dir/ß" ".hidden"
                   "link-to-file" "dangling"))
        (should (member (concat root f) files)))
      (should (multibyte-string-p (car (member (concat root "日本語.el") files))))
      ;; A link to a directory is neither a file nor entered without FOLLOW.
      (should-not (member (concat root "link-to-sub") files))
      (should-not (member (concat root "link-to-sub/a") files))
      (should (member (concat root "link-to-sub/a")
                      (ftw-directory-files-recursively root "" nil nil t))))))

(ert-deftest ftw-tests-dir-forms ()
  "Relative DIR, a final slash, a subdirectory: names begin with DIR as given."
  (ftw-tests-with-tree root
    (let ((default-directory (file-name-directory (directory-file-name root)))
          (rel (file-name-nondirectory (directory-file-name root))))
      (dolist (dir (list rel (concat rel "/") (concat rel "/sub")
                         (concat rel "/link-to-sub") (directory-file-name root)))
        (ftw-tests-compare dir "" t nil nil))
      (should (string-prefix-p (concat rel "/")
                               (car (ftw-directory-files-recursively rel "")))))))

(ert-deftest ftw-tests-errors-like-built-in ()
  "A missing DIR, or a file, signals as the built-in function does."
  (ftw-tests-with-tree root
    (dolist (dir (list (concat root "missing") (concat root "a.txt")))
      (should (equal (should-error (ftw-directory-files-recursively dir ""))
                     (should-error (directory-files-recursively dir "")))))))

(ert-deftest ftw-tests-fallback-without-ftw ()
  "Without ftw, the built-in function gives the result."
  (ftw-tests-with-tree root
    (let ((ftw-program (concat root "no-such-ftw")))
      (should-not (ftw--executable))
      (should (equal (ftw-directory-files-recursively root "" t)
                     (directory-files-recursively root "" t)))
      (let ((files (project-files (cons 'ftw root))))
        (should (member (concat root "new\nline.txt") files))
        (should-not (member (concat root "x.o") files)))
      (should (= (ftw-tests-calls) 0)))))

(defun ftw-tests-find-listing (root)
  "What project.el's own find-based listing gives for the ftw project at ROOT."
  (let ((project (cons 'ftw root)))
    (sort (project--files-in-directory root (ftw--ignores project root))
          #'string<)))

(ert-deftest ftw-tests-project-files ()
  "An ftw project lists its files with ftw, leaving out the ignored ones."
  (ftw-tests-with-tree root
    (let* ((project (cons 'ftw root))
           (files (project-files project)))
      (should (> (ftw-tests-calls) 0))
      (dolist (f '("a.txt" "new\nline.txt" "héllo wörld.txt" "sub/deep/f.el"
                   ".hidden" "dir with spaces/new\nline too" "ünïcode-dir/ß"))
        (should (member (concat root f) files)))
      ;; vc-directory-exclusion-list, grep-find-ignored-files, and what is no file.
      (dolist (f '(".git/HEAD" ".git/objects/ab" "x.o" "sub/g.o" "foo.elc" ".#lock"
                   "backup~" "sub" "link-to-file" "dangling" "link-to-sub/a"))
        (should-not (member (concat root f) files)))
      (should (equal files (sort (copy-sequence files) #'string<)))
      ;; The same as project.el's find-based listing with the same ignores.
      (should (equal files (ftw-tests-find-listing root)))
      ;; DIRS.
      (should (equal (project-files project (list (concat root "sub")))
                     (list (concat root "sub/Deep/Y") (concat root "sub/a")
                           (concat root "sub/deep/deeper/z")
                           (concat root "sub/deep/f.el")))))))

(ert-deftest ftw-tests-project-files-sorted ()
  "`project-files' comes sorted by ftw: no sort in Lisp, the same list."
  (ftw-tests-with-tree root
    (let ((project (cons 'ftw root)))
      (cl-letf (((symbol-function 'sort)
                 (lambda (&rest _) (error "No sort expected"))))
        (setq project (project-files project)))
      (should (equal project (ftw-tests-find-listing root))))))

(ert-deftest ftw-tests-project-ignores ()
  "Rooted, directory and user patterns of `project-ignores' are honoured."
  (ftw-tests-with-tree root
    (let ((grep-find-ignored-files (list "*.el" (cons #'always "*.js")
                                         (cons #'ignore "a-b")))
          (vc-directory-exclusion-list '("deeper" ".git")))
      (cl-letf (((symbol-function 'project-ignores)
                 (lambda (_p _d)
                   (append '("./sub/Deep/" "./a" "hdir")
                           (mapcar (lambda (d) (concat d "/"))
                                   vc-directory-exclusion-list)
                           grep-find-ignored-files))))
        (let ((files (project-files (cons 'ftw root))))
          (should (member (concat root "a-b") files))
          (should (member (concat root "a.txt") files))
          (should (member (concat root ".hdir/x") files))
          (dolist (f '("日本語.el" "sub/deep/f.el" "node_modules/pkg/index.js"
                       "sub/Deep/Y" "a/in-a" "sub/deep/deeper/z" ".git/HEAD"))
            (should-not (member (concat root f) files)))
          (should (member (concat root "sub/a") files)))))))

(ert-deftest ftw-tests-project-try ()
  "The root is the nearest directory with a marker, or the directory."
  (ftw-tests-with-tree root
    (should (equal (ftw-project-try (concat root "sub/deep"))
                   (cons 'ftw (concat root "sub/deep/"))))
    (write-region "" nil (concat root "sub/.project") nil 'silent)
    (should (equal (ftw-project-try (concat root "sub/deep/deeper"))
                   (cons 'ftw (concat root "sub/"))))
    (should (equal (project-root (ftw-project-try (concat root "sub")))
                   (concat root "sub/")))
    (let ((project-find-functions (list #'ignore)))
      (ftw-project-mode 1)
      (unwind-protect
          (progn
            (should (equal (car (last project-find-functions)) #'ftw-project-try))
            (should (equal (project-current nil (concat root "sub/deep"))
                           (cons 'ftw (concat root "sub/")))))
        (ftw-project-mode -1))
      (should-not (memq #'ftw-project-try project-find-functions)))))

(ert-deftest ftw-tests-gitignore-option ()
  "--ignore is passed only when asked for, and in a Git work tree."
  (ftw-tests-with-tree root
    (should-not (member "--ignore" (ftw--project-args root nil nil)))
    (should (member "--ignore" (ftw--project-args root nil t)))
    (let ((ftw-program (concat root "no-such-ftw")))
      ;; Off by default: the VC backend lists VC projects.
      (should-not ftw-project-use-for-vc)
      (should-not ftw-use-gitignore))
    (let ((ftw-use-gitignore t)
          (args nil))
      (cl-letf (((symbol-function 'ftw--read-list)
                 (lambda (_program a _dir &optional _decode) (setq args a) (list 0 nil ""))))
        (project-files (cons 'ftw root))
        (should (member "--ignore" args))
        (project-files (cons 'ftw (concat root "sub/")))
        (should (member "--ignore" args))
        (let ((ftw-use-gitignore nil))
          (project-files (cons 'ftw root))
          (should-not (member "--ignore" args)))
        (let ((ftw-project-use-for-vc t))
          (setq args nil)
          (project-files (cons 'vc root))
          (should (member "--ignore" args)))))))

;;; A Git work tree: ftw --ignore against the VC backend (git ls-files)

(defconst ftw-tests-git-script
  "set -e
git init -q
mkdir -p src build logs docs sub/deep sub/only-here 'with space' ünï empty
printf '*.o\\n/build\\nlogs/\\n*.log\\n!keep.log\\n*.d.ts\\n!index.d.ts\\n' > .gitignore
printf '*.tmp\\n/only-here\\n' > sub/.gitignore
printf '*.secret\\n' > .git/info/exclude
touch src/a.c src/a.o build/out logs/x.log keep.log other.log docs/index.d.ts \\
  docs/x.d.ts sub/deep/f.tmp sub/deep/g.c sub/only-here/h sub/x.tmp a.secret \\
  'with space/f g' ünï/ß 'new
line' src/forced.o untracked.c sub/deep/untracked.tmp
ln -s src link-src
ln -s a.c src/link-file
ln -s nowhere dangling
git add .gitignore sub/.gitignore src/a.c keep.log docs 'with space' ünï link-src
git add -f src/forced.o
"
  "Shell commands that make a Git work tree in the working directory.")

(ert-deftest ftw-tests-vc-git ()
  "With `ftw-project-use-for-vc', a Git project's files are git's, listed by ftw."
  (skip-unless (executable-find "git"))
  (ftw-tests-with-tree tmp
    (let ((root (file-name-as-directory (expand-file-name "repo" tmp)))
          (process-environment (cons "GIT_CONFIG_NOSYSTEM=1" process-environment)))
      (make-directory root)
      (let ((default-directory root))
        (should (eq 0 (call-process "sh" nil nil nil "-c" ftw-tests-git-script))))
      (let ((project (project-current nil root)))
        (should (eq (car project) 'vc))
        (dolist (vc-ignores '(nil ("*.c" "./docs/" "deep/")))
          (let* ((project-vc-ignores vc-ignores)
                 (before (ftw-tests-calls))
                 (theirs (let ((ftw-project-use-for-vc nil))
                           (sort (project-files project) #'string<)))
                 (ours (let ((ftw-project-use-for-vc t))
                         (project-files project))))
            (should (= (ftw-tests-calls) (1+ before)))
            (should (equal ours theirs))
            (should (equal ours (sort (copy-sequence ours) #'string<)))
            (unless vc-ignores
              ;; Tracked though ignored, untracked, links, a negation, odd names.
              (dolist (f '("src/forced.o" "untracked.c" "link-src" "src/link-file"
                           "dangling" "keep.log" "docs/index.d.ts" "with space/f g"
                           "ünï/ß" "new\nline" "sub/deep/g.c" ".gitignore"))
                (should (member (concat root f) ours)))
              (dolist (f '("src/a.o" "build/out" "logs/x.log" "other.log" "docs/x.d.ts"
                           "sub/deep/f.tmp" "sub/only-here/h" "a.secret" ".git/HEAD"
                           "sub/deep/untracked.tmp" "link-src/a.c"))
                (should-not (member (concat root f) ours))))))))))

;;; Odd names, links, unreadable directories: every argument

(defconst ftw-tests-odd-script
  "set -e
mkdir -p a/z sub/deep 'dir with space' ./-dash .hid 'a b' é 'n
l' d$(printf '\\377') d$(printf '\\303')x
touch a-b a.b a0 A a/z/f 'a b/c' ./-lead loneé rawĀ 'sp ace' 'new
line' 'cr\rx' .dot é/ü 日本 'n
l/in' sub/deep/f.el sub/x.el \
  \"$(printf 'raw\\377')\" \"$(printf 'lone\\303')\" \"$(printf 'latin\\351.el')\" \
  \"d$(printf '\\377')/in\" \"d$(printf '\\303')x/in.el\" \"$(printf 'ov\\300\\200')\" \
  \"$(printf 'sur\\355\\240\\200')\" \"$(printf 'big\\364\\220\\200\\200')\" 'q\"uote' 'back\\\\slash'
ln -s a link-a
ln -s sub/deep link-deep
ln -s a.b link-file
ln -s nowhere dangling
ln -s ../sub a/up
mkdir -p locked/in nox/sub
touch locked/f nox/g nox/sub/h
ln -s ../a nox/la
chmod 000 locked
chmod 600 nox
"
  "Shell commands that make the odd tree in the working directory.")

(defmacro ftw-tests-with-odd-tree (var &rest body)
  "Make the odd tree in a temporary directory, bind VAR to it, run BODY."
  (declare (indent 1))
  `(let* ((,var (file-name-as-directory (make-temp-file "ftw-odd" t)))
          (ftw-tests-calls (expand-file-name "calls" (make-temp-file "ftw-calls" t)))
          (ftw-program (ftw-tests-wrapper ,var)))
     (unwind-protect
         (progn
           (let ((default-directory ,var))
             (should (eq 0 (call-process "sh" nil nil nil "-c" ftw-tests-odd-script))))
           ,@body)
       (call-process "chmod" nil nil nil "-R" "u+rwx" ,var)
       (delete-directory ,var t)
       (delete-directory (file-name-directory ftw-tests-calls) t))))

(defun ftw-tests-outcome (fn &rest args)
  "The value of FN applied to ARGS with the multibyteness of each name, or its error."
  (condition-case err
      (let ((v (apply fn args)))
        (list 'ok v (mapcar #'multibyte-string-p v)))
    (error (list 'error err))))

(defun ftw-tests-same (dir regexp include predicate follow)
  "Whether ftw and the built-in give the same outcome; the arguments as theirs."
  (let ((ours (ftw-tests-outcome #'ftw-directory-files-recursively
                                 dir regexp include predicate follow))
        (theirs (ftw-tests-outcome #'directory-files-recursively
                                   dir regexp include predicate follow)))
    (should (equal (list dir regexp include predicate follow ours)
                   (list dir regexp include predicate follow theirs)))
    ours))

(defconst ftw-tests-odd-regexps
  '("" "\\.el\\'" "\\`[^.]" "^a" "[^[:ascii:]]" "\n" "\\`-" "x" "\\bin\\b")
  "The REGEXPs tried on the odd tree.")

(defun ftw-tests-skip-deep (dir)
  "A PREDICATE: enter no directory named deep or z."
  (not (string-match-p "/\\(deep\\|z\\)\\'" dir)))

(ert-deftest ftw-tests-odd-every-argument ()
  "Every argument combination on odd names, links and unreadable directories."
  (ftw-tests-with-odd-tree root
    (let ((file-name-coding-system nil)
          (default-file-name-coding-system 'utf-8-unix)
          (case-fold-search nil))
      (dolist (dir (list root (directory-file-name root)))
        (dolist (regexp ftw-tests-odd-regexps)
          (dolist (include '(nil t))
            (dolist (predicate (list nil t #'ftw-tests-skip-deep))
              (dolist (follow '(nil t))
                (ftw-tests-same dir regexp include predicate follow))))))
      ;; Names that are not UTF-8 came back as Emacs decodes them.
      (let ((all (ftw-directory-files-recursively root "" t t t)))
        (should (member (concat root (decode-coding-string "raw\377" 'utf-8-unix)) all))
        (should (member (concat root "日本") all))
        (should (member (concat root "new\nline") all))
        (should (member (concat root "-lead") all))
        (should (member (concat root "link-a/z/f") all))))))

(defun ftw-tests-no-fallback (fn)
  "Call FN with the built-in `directory-files-recursively' made to fail."
  (cl-letf (((symbol-function 'directory-files-recursively)
             (lambda (&rest _) (error "Fell back to the built-in function"))))
    (funcall fn)))

(defconst ftw-tests-predicates
  (list #'ftw-tests-skip-deep #'ignore #'always
        (lambda (d) (string-match-p "\\`[[:ascii:]]*\\'" (file-name-nondirectory d)))
        (lambda (d) (not (string-match-p "[\n ]" d)))
        (lambda (d) (not (string-match-p "/\\(link-a\\|sub\\)\\'" d))))
  "PREDICATE functions tried on the odd tree.")

(ert-deftest ftw-tests-predicates-unreadable ()
  "PREDICATE functions on the odd tree: the same names, the same directories asked.
Where PREDICATE keeps out the directories that cannot be read,
ftw lists the tree (no fallback to the built-in function); where
it lets them in, the outcome is the built-in function's (an
error, unless run as root)."
  (ftw-tests-with-odd-tree root
    (let ((file-name-coding-system nil)
          (default-file-name-coding-system 'utf-8-unix))
      (dolist (pred ftw-tests-predicates)
        (let ((pred* (lambda (d)
                       (and (not (string-match-p "/\\(locked\\|nox\\)\\'" d))
                            (funcall pred d)))))
          (dolist (follow '(nil t))
            (dolist (include '(nil t))
              (dolist (regexp '("" "\\.el\\'" "[^[:ascii:]]"))
                (let* ((asked-ours nil)
                       (asked-theirs nil)
                       (before (ftw-tests-calls))
                       (ours (ftw-tests-no-fallback
                              (lambda ()
                                (ftw-tests-outcome
                                 #'ftw-directory-files-recursively root regexp include
                                 (lambda (d) (push d asked-ours) (funcall pred* d))
                                 follow))))
                       (theirs (ftw-tests-outcome
                                #'directory-files-recursively root regexp include
                                (lambda (d) (push d asked-theirs) (funcall pred* d))
                                follow)))
                  (should (equal (list pred regexp include follow ours)
                                 (list pred regexp include follow theirs)))
                  (should (eq (car ours) 'ok))
                  (should (> (ftw-tests-calls) before))
                  (should (equal (sort asked-ours #'string<)
                                 (sort asked-theirs #'string<))))))))
        (dolist (follow '(nil t))
          (ftw-tests-same root "" t pred follow))))))

(ert-deftest ftw-tests-odd-one-run ()
  "Without PREDICATE function, one ftw run per call, no fallback."
  (ftw-tests-with-odd-tree root
    (let ((file-name-coding-system nil)
          (default-file-name-coding-system 'utf-8-unix))
      ;; Without the unreadable directories: no error to fall back on.
      (call-process "chmod" nil nil nil "-R" "u+rwx" root)
      (delete-directory (concat root "locked") t)
      (delete-directory (concat root "nox") t)
      (let ((n 0))
        (dolist (regexp '("" "\\.el\\'"))
          (dolist (include '(nil t))
            (dolist (predicate '(nil t))
              (dolist (follow '(nil t))
                (ftw-tests-same root regexp include predicate follow)
                (setq n (1+ n))
                (should (= (ftw-tests-calls) n))))))
        ;; A DIR spelt otherwise (relative, with ~-free dots): the same.
        (let ((default-directory root))
          (ftw-tests-same "sub/../a" "" t nil nil)
          (ftw-tests-same "./sub" "" t nil nil)
          (ftw-tests-same "sub" "\\.el\\'" nil nil nil))
        ;; A multibyte DIR: every name multibyte.
        (ftw-tests-same (string-to-multibyte (directory-file-name root)) "" t nil nil)))))

(ert-deftest ftw-tests-chunks ()
  "ftw's output read a few bytes at a time: the same names."
  (ftw-tests-with-odd-tree root
    (call-process "chmod" nil nil nil "-R" "u+rwx" root)
    (let ((file-name-coding-system nil)
          (default-file-name-coding-system 'utf-8-unix)
          (whole (ftw-directory-files-recursively root "" t))
          (files (project-files (cons 'ftw root))))
      (should (> (length whole) 40))
      ;; Shorter than a line (read on to its end), a few lines, about one.
      (dolist (chunk '(1 7 100 300))
        (let ((ftw--chunk chunk))
          (should (equal (ftw-directory-files-recursively root "" t) whole))
          (should (equal (project-files (cons 'ftw root)) files))
          (dolist (regexp '("\\.el\\'" "\\`[^.]" "[^[:ascii:]]"))
            (dolist (include '(nil t))
              (ftw-tests-same root regexp include nil t))))))))

(ert-deftest ftw-tests-case-fold ()
  "REGEXP is matched as in the caller's buffer (its `case-fold-search')."
  (ftw-tests-with-odd-tree root
    (call-process "chmod" nil nil nil "-R" "u+rwx" root)
    (dolist (fold '(nil t))
      (with-temp-buffer
        (setq-local case-fold-search fold)
        (let ((ours (ftw-tests-same root "\\`a" t nil nil)))
          (should (eq (and (member (concat root "A") (cadr ours)) t) fold)))))))

(ert-deftest ftw-tests-unreadable ()
  "Unreadable directories: left out with PREDICATE t, an error otherwise."
  (skip-unless (not (zerop (user-uid))))
  (ftw-tests-with-odd-tree root
    (let ((file-name-coding-system nil)
          (default-file-name-coding-system 'utf-8-unix))
      (dolist (include '(nil t))
        (dolist (follow '(nil t))
          (let ((before (ftw-tests-calls))
                (ours (ftw-tests-same root "" include t follow)))
            ;; ftw's listing stands: no fallback to the built-in function.
            (should (eq (car ours) 'ok))
            (should (= (ftw-tests-calls) (1+ before)))
            (should-not (member (concat root "locked/f") (cadr ours)))
            (should (member (concat root "nox/g") (cadr ours))))
          (should (eq (car (ftw-tests-same root "" include nil follow)) 'error)))))))

(ert-deftest ftw-tests-other-codings ()
  "File names decoded otherwise than as UTF-8: still the same."
  (ftw-tests-with-odd-tree root
    (call-process "chmod" nil nil nil "-R" "u+rwx" root)
    (dolist (coding '(latin-1 utf-8 utf-8-dos))
      (let ((file-name-coding-system coding))
        (dolist (include '(nil t))
          (ftw-tests-same root "" include nil nil)
          (ftw-tests-same root "\\.el\\'" include t t)
          (ftw-tests-same root "" include #'ftw-tests-skip-deep t))))))

(ert-deftest ftw-tests-order-of-paths ()
  "\"ftw find --order paths\" gives the order `string<' gives the paths."
  (ftw-tests-with-odd-tree root
    (call-process "chmod" nil nil nil "-R" "u+rwx" root)
    (let* ((file-name-coding-system 'utf-8-unix)
           (res (ftw--read-list ftw-program
                                (list "find" "--order" "paths" "--lisp"
                                      (directory-file-name root))
                                "/" t))
           (names (nth 1 res)))
      (should (eq (car res) 0))
      (should (> (length names) 30))
      (should (equal names (sort (copy-sequence names) #'string<))))))

(provide 'ftw-tests)

;;; ftw-tests.el ends here
