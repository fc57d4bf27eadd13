#!/bin/sh
# The 2-core parallel yardstick: two `floor -p` walking the two halves of `big` at once.
# Usage: bench/two-floors.sh BIG
big=${1:-big}
(for i in 01 02 03 04 05 06 07 08 09 10 11 12; do floor -p "$big/c$i"; done) &
for i in 13 14 15 16 17 18 19 20 21 22 23 24; do floor -p "$big/c$i"; done
wait
