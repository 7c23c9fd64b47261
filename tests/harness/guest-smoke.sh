#!/bin/bash
# guest-smoke.sh KERNEL VERSION-PREFIX ERA - run inside the guest by
# tests/suites/10-harness: is this the kernel we asked for, with the
# filesystems docs/harness.md promises?
kernel=$1 version=$2 era=$3
check() { # name, then a command that must succeed
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "PASS: $kernel: $name"; else echo "FAIL: $kernel: $name: '$*' failed"; fi
}
# statfs() on 9p reports the host filesystem's type, so ask the mount table.
fstype() { [[ $(awk -v mp="$1" '$2 == mp { t = $3 } END { print t }' /proc/mounts) == "$2" ]]; }

release=$(uname -r)
if [[ $release == "$version".* ]]; then
	echo "PASS: $kernel: uname -r is $release"
else
	echo "FAIL: $kernel: uname -r is $release, expected $version.*"
fi
check "/tmp is tmpfs" fstype /tmp tmpfs
check "/mnt/ext4 is ext4" fstype /mnt/ext4 ext4
check "/mnt/9p is 9p" fstype /mnt/9p 9p
check "/mnt/ext4 is writable" touch /mnt/ext4/smoke
check "/mnt/9p is writable" touch /mnt/9p/smoke
check "the working directory is writable" touch "$PWD/.vm-smoke" && rm -f "$PWD/.vm-smoke"
check "the host's /usr is visible" test -x /usr/bin/env
check "the host's root is read-only" bash -c '! touch /usr/.ocdir-smoke'
# The probe names the era; name the kernel too where they differ (debug).
"$(dirname "$0")/../../build/tests/creat_dir_probe" "$era" /tmp |
	sed "s/^\(PASS\|FAIL\|SKIP\): $era:/\1: $kernel (a $era kernel):/"
