;;; emacs.el --- Timings of ftw.el inside Emacs, for bench/emacs.sh  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by bench/emacs.sh, one Emacs per measurement (so that its peak
;; memory is that measurement's): (ftw-bench-one TREE WHAT) times one
;; call with `benchmark-run' and prints a line
;;   WHAT TREE seconds GCs GC-seconds names VmHWM-KiB
;; and (ftw-bench-same TREE) checks that each pair gives the same list.

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
      ('project-find (project--files-in-directory root (ftw-bench--ignores root)))
      ('project-ftw (project-files (cons 'ftw root))))))

(defun ftw-bench-one (tree what)
  "Time WHAT on TREE once and print the line (see the commentary)."
  (garbage-collect)
  (let* ((n 0)
         (r (benchmark-run 1 (setq n (length (ftw-bench--call tree what))))))
    (princ (format "%s %s %.3f %d %.3f %d %d\n" what tree (nth 0 r) (nth 1 r) (nth 2 r)
                   n (ftw-bench--hwm)))))

(defun ftw-bench-same (tree)
  "Print whether each built-in and ftw pair gives the same list on TREE."
  (dolist (pair '((dfr-builtin . dfr-ftw) (dfr-re-builtin . dfr-re-ftw)
                  (dfr-follow-builtin . dfr-follow-ftw) (project-find . project-ftw)))
    (let ((a (ftw-bench--call tree (car pair)))
          (b (ftw-bench--call tree (cdr pair))))
      (princ (format "same %s %s %s %d\n" (cdr pair) tree (if (equal a b) "yes" "NO")
                     (length a))))))

(provide 'emacs)

;;; emacs.el ends here
