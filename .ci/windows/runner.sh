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
server=/usr/lib/wine/wineserver64
[[ -x $server ]] || server=wineserver
# Wine's server and its own processes (services.exe, winedevice.exe, explorer.exe)
# start with the first program run in a prefix, and they keep that program's standard
# error: a fault of theirs ("wine: Unhandled page fault ... starting debugger") would
# be read as the program's own output. So where no server runs for this prefix, one is
# started that outlives its programs by two minutes, and its processes are brought up
# by a program whose output goes nowhere, before the program asked for runs.
running=
for comm in /proc/[0-9]*/comm; do
  { read -r name <"$comm"; } 2>/dev/null && [[ $name == wineserver* ]] || continue
  if grep -qx "WINEPREFIX=$WINEPREFIX" < <(tr '\0' '\n' 2>/dev/null <"${comm%/comm}/environ"); then
    running=1
  fi
done
if [[ -z $running ]]; then
  "$server" -p120 >/dev/null 2>&1 || true
  "$wine" cmd /c exit >/dev/null 2>&1 </dev/null || true
fi
exec "$wine" "$@"
