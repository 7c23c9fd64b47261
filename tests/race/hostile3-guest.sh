#!/bin/sh
# tests/race/hostile3-guest.sh ROUNDS SECONDS DIR... - issue 39's attackers
# where the native backend stages too (setup, prepare, discard, a hand-off
# in a private parent), run in a guest (tests/suites/80-race: patched-7.3,
# tmpfs and ext4). Each result line is tagged with its directory.
rounds=$1 secs=$2
shift 2
h3=build/race/hostile3
rc=0
for d in "$@"; do
	"$h3" -q -n "$rounds" -t "$secs" -d "$d" -v "$("$h3" -l native)" >/tmp/hostile3.out 2>&1 || rc=1
	sed "s#^\(PASS\|FAIL\|SKIP\): #&$d #" /tmp/hostile3.out
done
exit $rc
