#!/bin/sh
# tests/race/netfs-race.sh SECONDS ROUNDS [FS...] - in a guest booted with
# vm/run --netfs (vm/netfs-up): tests/race/netfs_race on each network
# filesystem (or only the FS named: nfs4, nfs3, smb), client A (the
# victim) on the -b mount, client B (the attacker) on the other, the
# server's own directory to check against:
#   native x {dir, symlink}: 0 wrong fds, 0 wrong "created" (FAIL if any)
#   naive x {dir, symlink} (mkdirat, then openat by name): must be caught
#          (FAIL if never). On NFS bare, within a second. On SMB (cifs)
#          with a 100 ms pause between its two calls (netfs_race -w): B
#          needs three round trips after the server made the directory
#          and A's openat is the next request, so the bare sequence was
#          caught only in round 237 to 5514 of a run (2026-12-07), and not
#          in 1000 rounds (60 s) on the debug kernel: a short run would
#          not always reach the window. With the pause the first round
#          shows that the check sees the wrong fd.
# Client B waits for the name to appear in the server's own directory
# (netfs_race -i) before it moves it: it then hits the moment after the
# server made A's directory, and spends no time on misses.
# Each native variant runs ROUNDS rounds or SECONDS seconds, whichever ends
# first; a naive one stops at its first catch, or after SECONDS. Every
# 2000 rounds the guest drops its page, dentry and inode caches (netfs_race
# -D: on NFSv3 of an ext4 the clients' stale inodes share the fileids ext4
# reuses, and the rounds slow down by half in 10^4 rounds without it).
# Prints PASS, FAIL or SKIP lines; exits 1 if any FAIL. Called by
# tests/suites/80-race and tests/race/torture.
secs=${1:?seconds} rounds=${2:?rounds}
shift 2
only=" $* "
bin=${OCDIR_NETFS_RACE_BIN:-build/race/netfs_race}
srv=/run/ocdir/netfs/srv
mounts=/run/ocdir/netfs/mounts
st=$(cat /run/ocdir/netfs/status 2>/dev/null)
if [ "$st" != ok ]; then
	echo "FAIL: netfs race: the guest's NFS and SMB servers are not up: $st"
	exit 1
fi
# Each FS named must be one vm/netfs-up mounted (its list is the only one).
for f; do
	if ! cut -d' ' -f1 "$mounts" | grep -qxF -- "$f"; then
		echo "netfs-race.sh: unknown filesystem '$f' (the guest's: $(cut -d' ' -f1 "$mounts" | paste -sd' '))" >&2
		exit 2
	fi
done
rc=0 ran=0
# vm/netfs-up's list: NAME, the export under $srv, the clients' type.
while read -r fs back type <&3; do
	case $only in "  " | *" $fs "*) ran=$((ran + 1)) ;; *) continue ;; esac
	d=race.$$
	if ! mkdir "/mnt/$fs/$d" || ! chmod 0777 "/mnt/$fs/$d"; then
		echo "FAIL: netfs race $fs: cannot make /mnt/$fs/$d"
		rc=1
		continue
	fi
	for v in native:dir native:symlink naive:dir naive:symlink; do
		victim=${v%%:*} plant=${v#*:}
		n=$rounds extra="-i -D 2000"
		[ "$victim" = naive ] && n=1000000 extra="-i -e"
		[ "$victim/$type" = naive/cifs ] && extra="$extra -w 100000"
		"$bin" -a "/mnt/$fs-b/$d" -b "/mnt/$fs/$d" -s "$srv/$back/$d" \
			-v "$victim" -p "$plant" -n "$n" -t "$secs" $extra \
			-l "netfs $fs $victim $plant"
		r=$?
		[ $r -eq 0 ] || [ $r -eq 77 ] || rc=1
	done
	rm -rf "/mnt/$fs/$d"
done 3<"$mounts"
if [ $ran -eq 0 ]; then
	echo "FAIL: netfs race: vm/netfs-up mounted no network filesystem"
	rc=1
fi
exit $rc
