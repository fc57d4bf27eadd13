# Wall-clock comparison on a real Windows host (none is available where ftw is built;
# wine's timings say nothing about Windows). Run from the repository's root in
# PowerShell 5.1 or 7, with Rust installed (x86_64-pc-windows-msvc or -gnu):
#
#   powershell -ExecutionPolicy Bypass -File bench\windows.ps1 [-Tree DIR] [-Runs 5]
#
# Without -Tree it makes a tree of 200 directories of 500 files (100,200 entries)
# under $env:TEMP\ftw-bench (kept for later runs). It builds ftw and the std-way
# walker (crates/ftw/examples/std_walk.rs: read_dir and a symlink_metadata per entry)
# in release, then times, warm cache (one untimed run first), the median of -Runs:
#   ftw find -j 1, ftw find (parallel), ftw du -s, std_walk,
#   and for reference cmd /c dir /s /b and Get-ChildItem -Recurse -Force.
# Record the table it prints in BENCHMARKS.md ("Windows") with the machine, the
# Windows version, the file system (NTFS, ReFS, Dev Drive) and whether Defender's
# real-time scanning was on (it adds to every open).
param(
    [string]$Tree = "",
    [int]$Runs = 5
)
$ErrorActionPreference = "Stop"

cargo build --release -p ftw-cli
cargo build --release -p ftw --example std_walk
$ftw = (Resolve-Path "target\release\ftw.exe").Path
$std = (Resolve-Path "target\release\examples\std_walk.exe").Path

if ($Tree -eq "") {
    $Tree = Join-Path $env:TEMP "ftw-bench"
    if (-not (Test-Path $Tree)) {
        Write-Host "making $Tree (200 x 500 files)"
        foreach ($d in 0..199) {
            $dir = Join-Path $Tree ("d{0:D3}" -f $d)
            New-Item -ItemType Directory -Path $dir -Force | Out-Null
            foreach ($f in 0..499) {
                [System.IO.File]::WriteAllBytes((Join-Path $dir ("f{0:D3}.txt" -f $f)), [byte[]](1..($f % 64)))
            }
        }
    }
}

$cases = [ordered]@{
    "ftw find -j 1"                  = { & $ftw find -j 1 $Tree | Out-Null }
    "ftw find"                       = { & $ftw find $Tree | Out-Null }
    "ftw du -s"                      = { & $ftw du -s $Tree | Out-Null }
    "std read_dir + symlink_metadata" = { & $std $Tree 2>$null | Out-Null }
    "cmd /c dir /s /b"               = { cmd /c dir /s /b $Tree | Out-Null }
    "Get-ChildItem -Recurse -Force"  = { Get-ChildItem -Recurse -Force $Tree | Out-Null }
}

$count = (& $ftw find $Tree | Measure-Object -Line).Lines
Write-Host "`n$Tree : $count entries, median of $Runs warm runs`n"
Write-Host ("{0,-34} {1,10} {2,8}" -f "command", "seconds", "ratio")
$first = $null
foreach ($name in $cases.Keys) {
    & $cases[$name]   # warm-up
    $times = foreach ($i in 1..$Runs) { (Measure-Command $cases[$name]).TotalSeconds }
    $median = ($times | Sort-Object)[[int][math]::Floor($Runs / 2)]
    if ($null -eq $first) { $first = $median }
    Write-Host ("{0,-34} {1,10:N3} {2,8:N2}" -f $name, $median, ($median / $first))
}
