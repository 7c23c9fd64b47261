#!/bin/sh
# tests/kernel/audit-watch.sh AUDITCTL AUDIT_CALLS - run as root in a guest
# with the patched kernel (tests/kernel/selftests): does an audit
# watch with perm=w see an O_CREAT|O_DIRECTORY creation as it sees
# mkdirat(2)?  One watch per call (audit_calls.c), a read-only open and an
# O_PATH open (which creates nothing) as the controls that must not match.  Without auditd the records go to the kernel
# log, where the SYSCALL records (type=1300) are looked for by key; the
# rule changes log the key too, as type=1305.
set -u
auditctl=$1 calls=$2
creators="mkdirat openat openat2 open"

dir=$(mktemp -d /tmp/audit-watch.XXXXXX) || exit 1
for n in $creators readonly opath; do
	mkdir "$dir/$n" || exit 1
done
mkdir "$dir/readonly/sub" "$dir/opath/sub" || exit 1
# kauditd prints through printk_ratelimit(): let every record through.  A
# zero interval switches the limit off on every version; a larger burst is
# not enough, because since 6.16 a new burst only takes effect when the
# current interval ends, and the boot-time audit record may have started one
# with the old burst of 10 (a CI run lost the mkdirat record that way).
echo 0 >/proc/sys/kernel/printk_ratelimit
if ! "$auditctl" -e 1 >/dev/null 2>&1; then
	echo "SKIP: audit: auditctl -e 1 failed (no CONFIG_AUDITSYSCALL?)"
	exit 77
fi
for n in $creators readonly opath; do
	"$auditctl" -w "$dir/$n" -p w -k "ocdir-$n" || exit 1
done
# a new process, forked after audit was enabled, is audited
"$calls" "$dir" | sed 's/^\(PASS\|FAIL\|SKIP\): /&the call itself: /'
# kauditd prints the records from its own thread: wait until the last
# creator's record is in the log (or 30 s, under TCG on a busy host), then
# one second more for a wrong record of the two controls made after it
tries=0
while [ $tries -lt 30 ]; do
	sleep 1
	dmesg | grep -q 'type=1300 .*key="ocdir-open"' && break
	tries=$((tries + 1))
done
sleep 1
log=$(dmesg)
audit_status=$("$auditctl" -s 2>&1 | tr '\n' ' ')
"$auditctl" -D >/dev/null 2>&1

if ! echo "$log" | grep -q 'type=1300 .*key="ocdir-mkdirat"'; then
	echo "FAIL: audit: the mkdirat reference left no record (audit not working here?)"
	echo "# auditctl -s: $audit_status"
	echo "$log" | grep -E 'audit|suppressed' | tail -n 20 | sed 's/^/# dmesg: /'
	exit 1
fi
echo "PASS: audit: a perm=w watch sees mkdirat (the reference)"
status=0
for n in openat openat2 open; do
	if echo "$log" | grep -q "type=1300 .*key=\"ocdir-$n\""; then
		echo "PASS: audit: a perm=w watch sees $n(O_CREAT|O_DIRECTORY) as it sees mkdirat"
	else
		echo "FAIL: audit: a perm=w watch misses $n(O_CREAT|O_DIRECTORY): no record with key ocdir-$n"
		status=1
	fi
done
if echo "$log" | grep -q 'type=1300 .*key="ocdir-readonly"'; then
	echo "FAIL: audit: a read-only O_DIRECTORY open matched a perm=w watch"
	status=1
else
	echo "PASS: audit: a read-only O_DIRECTORY open does not match a perm=w watch"
fi
if echo "$log" | grep -q 'type=1300 .*key="ocdir-opath"'; then
	echo "FAIL: audit: O_PATH|O_CREAT|O_DIRECTORY (which creates nothing) matched a perm=w watch"
	status=1
else
	echo "PASS: audit: O_PATH|O_CREAT|O_DIRECTORY, which creates nothing, does not match a perm=w watch"
fi
rm -rf "$dir"
exit $status
