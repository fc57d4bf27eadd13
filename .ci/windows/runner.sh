#!/usr/bin/env bash
# Cargo's runner for x86_64-pc-windows-gnu: runs a Windows test binary or program
# under wine, e.g.
#   CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$PWD/.ci/windows/runner.sh \
#     cargo test --target x86_64-pc-windows-gnu -p ftw
# It builds the bcryptprimitives.dll stand-in (see bcryptprimitives.c) and puts it
# on WINEPATH, uses a wine prefix of its own (WINEPREFIX, default
# ${TMPDIR:-/tmp}/ftw-wine) and silences wine's debug channels.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dll="$("$here/build.sh")"
export WINEPREFIX="${WINEPREFIX:-${TMPDIR:-/tmp}/ftw-wine}"
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
export WINEPATH="Z:$(dirname "$dll" | tr / '\\')${WINEPATH:+;$WINEPATH}"
wine=/usr/lib/wine/wine64
[[ -x $wine ]] || wine=wine
exec "$wine" "$@"
