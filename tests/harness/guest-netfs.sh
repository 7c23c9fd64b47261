#!/bin/bash
# tests/harness/guest-netfs.sh - in a guest booted with vm/run --netfs: the
# NFS and SMB servers are up, each pair of mounts is two clients of one
# tree, and the server's own directory holds what a client made (same
# inode number). Prints PASS/FAIL lines.
srv=/run/ocdir/netfs/srv
st=$(cat /run/ocdir/netfs/status 2>/dev/null || echo "no status file")
if [[ $st != ok ]]; then
	echo "FAIL: netfs: the servers did not come up: $st"
	tail -n 5 /run/ocdir/netfs/log 2>/dev/null | sed 's/^/# /'
	exit 1
fi
echo "PASS: netfs: the servers and the six mounts are up"
rc=0
# vm/netfs-up's list: NAME, the export under $srv, the clients' type.
while read -r name back type <&3; do
	a=/mnt/$name b=/mnt/$name-b
	if ! grep -q "^[^ ]* $a $type " /proc/mounts || ! grep -q "^[^ ]* $b $type " /proc/mounts; then
		echo "FAIL: netfs $name: $a and $b are not both $type mounts"
		rc=1
		continue
	fi
	d=smoke.$$
	if ! mkdir "$a/$d"; then
		echo "FAIL: netfs $name: mkdir through $a failed"
		rc=1
		continue
	fi
	ia=$(stat -c %i "$a/$d") ib=$(stat -c %i "$b/$d" 2>/dev/null) is=$(stat -c %i "$srv/$back/$d" 2>/dev/null)
	if [[ $ia == "$ib" && $ia == "$is" ]]; then
		echo "PASS: netfs $name: a directory made through one client is the server's and the other client's (inode $ia)"
	else
		echo "FAIL: netfs $name: inode $ia through $a, '$ib' through $b, '$is' on the server"
		rc=1
	fi
	rmdir "$a/$d"
done 3</run/ocdir/netfs/mounts
exit $rc
