#!/usr/bin/env bash
# Byte-compile ftw.el (warnings are errors) and run its ERT tests with the given ftw.
# Usage: editors/emacs/run-tests.sh [FTW-BINARY]   (or FTW_PROGRAM=... ; default: ftw)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export FTW_PROGRAM="${1:-${FTW_PROGRAM:-ftw}}"
emacs="${EMACS:-emacs}"
# Names are UTF-8 on disk.
export LANG=C.UTF-8 LC_ALL=C.UTF-8

# Work on copies, so that no .elc is left next to the sources.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/ftw.el" "$here/ftw-tests.el" "$work/"

"$emacs" --batch -Q -L "$work" \
  --eval '(setq byte-compile-error-on-warn t)' \
  -f batch-byte-compile "$work/ftw.el"

# checkdoc: any warning fails.
"$emacs" --batch -Q -L "$work" --eval '
(progn
  (require (quote checkdoc))
  (let ((problems nil))
    (advice-add (quote checkdoc-create-error) :before
                (lambda (text &rest _) (push text problems)))
    (setq checkdoc-diagnostic-buffer "*checkdoc*")
    (checkdoc-file (expand-file-name "ftw.el" (car load-path)))
    (when problems
      (message "checkdoc: %s" (mapconcat (function identity) problems "\n"))
      (kill-emacs 1))))'

cd "$work"
"$emacs" --batch -Q -L "$work" -l ftw-tests.el -f ert-run-tests-batch-and-exit

# Unreadable directories mean nothing to root: run that test as nobody too.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$work"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$work" \
    "$emacs" --batch -Q -L "$work" -l ftw-tests.el \
    --eval '(ert-run-tests-batch-and-exit "unreadable")'
fi
