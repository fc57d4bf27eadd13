;;; emacs.el --- Timings of ftw.el inside Emacs, for bench/emacs.sh  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by bench/emacs.sh, one Emacs per measurement (so that its peak
;; memory is that measurement's): (ftw-bench-one TREE WHAT) times one
;; call with `benchmark-run' and prints a line
;;   WHAT TREE seconds GCs GC-seconds names VmHWM-KiB CPU-seconds
;; (CPU: this Emacs's and its children's, user and system, during the
;; call), and (ftw-bench-same TREE PAIRS) checks that each pair gives
;; the same list.

;;; Code:

(require 'ftw)
(require 'project)
(require 'grep)

(defun ftw-bench--hwm ()
  "The peak resident memory of this Emacs, in KiB."
  (with-temp-buffer
    (insert-file-contents "/proc/self/status")
    (and (re-search-forward "^VmHWM:[ \t]*\\([0-9]+\\)" nil t)
         (string-to-number (match-string 1)))))

(defun ftw-bench--cpu ()
  "The CPU seconds of this Emacs and its children that it waited for."
  (let ((a (process-attributes (emacs-pid))))
    (apply #'+ (mapcar (lambda (k) (float-time (or (alist-get k a) 0)))
                       '(utime stime cutime cstime)))))

(defun ftw-bench--ignores (root)
  "The ignores of the ftw project at ROOT: Emacs's defaults."
  (ftw--ignores (cons 'ftw root) root))

(defun ftw-bench--call (tree what)
  "Run the call WHAT on TREE and return its list."
  (let ((root (file-name-as-directory tree)))
    (pcase what
      ('dfr-builtin (directory-files-recursively tree ""))
      ('dfr-ftw (ftw-directory-files-recursively tree ""))
      ('dfr-re-builtin (directory-files-recursively tree "\\.js\\'" t))
      ('dfr-re-ftw (ftw-directory-files-recursively tree "\\.js\\'" t))
      ('dfr-follow-builtin (directory-files-recursively tree "" t t t))
      ('dfr-follow-ftw (ftw-directory-files-recursively tree "" t t t))
      ('dfr-pred-builtin (directory-files-recursively tree "" t #'always))
      ('dfr-pred-ftw (ftw-directory-files-recursively tree "" t #'always))
      ('project-find (project--files-in-directory root (ftw-bench--ignores root)))
      ('project-ftw (project-files (cons 'ftw root)))
      ;; The VC backend (git ls-files) of a Git work tree, and ftw --ignore.
      ('project-vc (let ((ftw-project-use-for-vc nil))
                     (project-files (project-current nil root))))
      ('project-vc-ftw (let ((ftw-project-use-for-vc t))
                         (project-files (project-current nil root)))))))

(defun ftw-bench-one (tree what)
  "Time WHAT on TREE once and print the line (see the commentary)."
  (garbage-collect)
  (let* ((n 0)
         (cpu (ftw-bench--cpu))
         (r (benchmark-run 1 (setq n (length (ftw-bench--call tree what))))))
    (princ (format "%s %s %.3f %d %.3f %d %d %.3f\n" what tree (nth 0 r) (nth 1 r) (nth 2 r)
                   n (ftw-bench--hwm) (- (ftw-bench--cpu) cpu)))))

(defun ftw-bench-same (tree pairs)
  "Print whether each pair of PAIRS (BUILT-IN . FTW) gives the same list on TREE.
The VC backend's list is sorted first (git's order is not `string<''s)."
  (dolist (pair pairs)
    (let ((a (ftw-bench--call tree (car pair)))
          (b (ftw-bench--call tree (cdr pair))))
      (when (eq (car pair) 'project-vc)
        (setq a (sort a #'string<)))
      (princ (format "same %s %s %s %d\n" (cdr pair) tree (if (equal a b) "yes" "NO")
                     (length a))))))

(provide 'emacs)

;;; emacs.el ends here
