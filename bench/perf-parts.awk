# bench/perf-parts.awk - where perf's cpu-clock samples inside one system
# call fall.  Input: `perf script -F ip,sym` of a `perf record -g` (one call
# chain per sample, leaf first, blank line between samples).  Variables:
# where (guest or host), mode (profile_loop's MODE), ops (operations
# recorded), period_ns (CPU time per sample), loop (profile_loop's own
# output), only (mkdirat or openat: count only that system call).
#
# A sample counts for the system call whose entry (__x64_sys_mkdirat,
# __x64_sys_openat or what they call) is in its chain; samples of the clean-up (close, rmdir),
# of user space and of the system call entry/exit code are left out.  Going
# from that entry toward the leaf, the first function that names a part
# (table below) decides the part; functions not in the table are passed
# through (do_sys_openat2, path_openat, filename_create, ...).  Samples that
# meet no named function count as "other"; their leaves are listed.
BEGIN {
	# __x64_sys_openat ends in a tail call (jmp do_sys_open), so it is not
	# on the stack: the first of these from the root is the entry.
	# only=mkdirat or only=openat: one recording may hold both calls,
	# interleaved; each report takes its own.
	if (only != "openat")
		entries["__x64_sys_mkdirat"] = entries["do_mkdirat"] = 1
	if (only != "mkdirat")
		entries["__x64_sys_openat"] = entries["do_sys_open"] = entries["do_sys_openat2"] = 1
	split("getname getname_flags", a, " "); for (i in a) part[a[i]] = "getname: copy the path in"
	part["putname"] = "putname"
	split("path_init link_path_walk", a, " "); for (i in a) part[a[i]] = "path walk to the parent"
	split("complete_walk try_to_unlazy", a, " "); for (i in a) part[a[i]] = "leave RCU walk (try_to_unlazy)"
	split("lookup_fast __d_lookup_rcu lookup_one_qstr_excl d_lookup __d_lookup d_alloc_parallel d_alloc simple_lookup lookup_dcache step_into __lookup_slow", a, " ")
	for (i in a) part[a[i]] = "last component: lookup, new dentry"
	split("down_write up_write down_write_nested rwsem_down_write_slowpath down_read up_read", a, " ")
	for (i in a) part[a[i]] = "parent i_rwsem"
	split("mnt_want_write mnt_drop_write", a, " "); for (i in a) part[a[i]] = "mnt_want_write/mnt_drop_write"
	split("inode_permission may_open generic_permission", a, " "); for (i in a) part[a[i]] = "permission checks"
	part["vfs_mkdir"] = "vfs_mkdir (tmpfs inode, offset map, fsnotify_mkdir)"
	part["alloc_empty_file"] = "alloc_empty_file (struct file)"
	split("vfs_open do_dentry_open", a, " "); for (i in a) part[a[i]] = "vfs_open/do_dentry_open"
	split("fsnotify __fsnotify_parent", a, " "); for (i in a) part[a[i]] = "fsnotify"
	split("get_unused_fd_flags alloc_fd", a, " "); for (i in a) part[a[i]] = "fd: alloc_fd"
	part["fd_install"] = "fd: fd_install"
	split("terminate_walk dput mntput path_put", a, " "); for (i in a) part[a[i]] = "end of walk: dput, path_put"
	# functions whose share is shown whole, wherever they are in the chain
	nk = split("vfs_mkdir link_path_walk alloc_empty_file do_dentry_open fsnotify __fsnotify_parent " \
		"try_to_unlazy complete_walk lookup_fast d_alloc_parallel d_alloc lookup_one_qstr_excl " \
		"alloc_fd fd_install dput kmem_cache_alloc_noprof kmem_cache_alloc_lru_noprof kmem_cache_free " \
		"_raw_spin_lock queued_spin_lock_slowpath", key, " ")
	# where the CPU time of waiting for a lock goes: a sample whose leaf is
	# one of these counts for the first function above them that is not
	split("queued_spin_lock_slowpath native_queued_spin_lock_slowpath rwsem_spin_on_owner " \
		"rwsem_down_write_slowpath rwsem_optimistic_spin osq_lock __mutex_lock_slowpath", a, " ")
	for (i in a) waitfn[a[i]] = 1
	split("_raw_spin_lock _raw_spin_lock_irq _raw_spin_lock_irqsave down_write down_write_killable " \
		"rwsem_down_write_slowpath rwsem_optimistic_spin osq_lock lockref_get lockref_get_not_dead " \
		"lockref_put_return mutex_lock __mutex_lock_slowpath", a, " ")
	for (i in a) lockfn[a[i]] = 1
	n = 0
}
function flush(   i, j, entry, p, seen) {
	if (n == 0)
		return
	total++
	entry = 0
	for (i = n; i >= 1; i--)
		if (chain[i] in entries) {
			entry = i
			break
		}
	if (!entry) {
		n = 0
		return
	}
	insys++
	p = ""
	for (i = entry - 1; i >= 1; i--)
		if (chain[i] in part) {
			p = part[chain[i]]
			break
		}
	if (p == "") {
		p = "other: the call's own functions, inlined helpers"
		other[chain[1]]++
	}
	parts[p]++
	leaf[chain[1]]++
	if (chain[1] in waitfn) {
		for (i = 2; i < entry && (chain[i] in lockfn || chain[i] in waitfn); i++)
			;
		waiter[chain[1] " <- " chain[i]]++
	}
	for (j = 1; j <= nk; j++)
		for (i = entry - 1; i >= 1; i--)
			if (chain[i] == key[j]) {
				incl[key[j]]++
				break
			}
	n = 0
}
/^[ \t]*$/ { flush(); next }
# "getname_flags.part.0" is getname_flags: drop what the compiler appended
{ sym = $2; sub(/\..*/, "", sym); chain[++n] = sym }
# Print the n largest entries of arr (n = 0: all of them), largest first,
# by repeated selection (mawk has no asort): pad, the name in a column of
# width, samples, share, us per operation, then unit.
function top(arr, n, pad, width, unit,    k, f, best, bv, seen) {
	for (k = 0; n == 0 || k < n; k++) {
		best = ""; bv = -1
		for (f in arr)
			if (!(f in seen) && arr[f] > bv) { best = f; bv = arr[f] }
		if (best == "")
			break
		seen[best] = 1
		printf "%s%-" width "s %8d %5.1f%% %9.2f%s\n", pad, best, bv, 100 * bv / insys, us(bv), unit
	}
}
function us(s) { return s * period_ns / ops / 1000 }
END {
	flush()
	printf "perf record -e cpu-clock -c %d -g (%s), mode %s, %d operations\n", period_ns, where, mode, ops
	printf "profile_loop while recorded: %s\n", loop
	printf "samples: %d in all, %d inside the system call = %.2f us per operation\n", total, insys, us(insys)
	print ""
	printf "%-52s %8s %6s %9s\n", "part of the system call", "samples", "%", "us/op"
	top(parts, 0, "", 52, "")
	print ""
	print "\"other\" by leaf function, top 10:"
	top(other, 10, "  ", 40, " us/op")
	print ""
	print "inclusive (the function anywhere below the system call entry):"
	for (j = 1; j <= nk; j++)
		if (incl[key[j]])
			printf "  %-40s %8d %5.1f%% %9.2f us/op\n", key[j], incl[key[j]], 100 * incl[key[j]] / insys, us(incl[key[j]])
	print ""
	print "waiting for locks (leaf is a lock slow path), by the function that takes the lock:"
	top(waiter, 10, "  ", 52, " us/op")
	print ""
	print "self (leaf function of the sample), top 15:"
	top(leaf, 15, "  ", 40, " us/op")
}
