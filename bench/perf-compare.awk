# bench/perf-compare.awk - the parts of two perf-parts.awk reports side by
# side:
#   awk [-v ta=US -v tb=US] -f bench/perf-compare.awk A.txt B.txt
# Each part as a share of its own call's samples, then in microseconds:
# share times ta (tb), the untraced time of one call of A (B) measured
# elsewhere, or else share times the samples' own time per call.  Shares
# are what a profile under TCG gives reliably: the sampling itself slows
# the calls down, and not every call alike (the totals of (a) and (b) moved
# by 20 % between profile runs while each part's share moved by 1-3 points).
# The RCU-walk exit is folded into the lookup of the last component, since
# (a) leaves RCU walk after the parent's walk and (b) in its failed lockless
# lookup of the name.  Plain POSIX awk.
FNR == 1 { file++ }
/^samples: / {
	split($0, w, "= ")
	total[file] = w[2] + 0
	next
}
/^part of the system call/ { inparts = 1; next }
inparts && /^$/ { inparts = 0; next }
inparts {
	name = substr($0, 1, 52)
	sub(/ +$/, "", name)
	if (name == "leave RCU walk (try_to_unlazy)" || name == "last component: lookup, new dentry")
		name = "last component: lookup, new dentry, leave RCU walk"
	pct[file, name] += $(NF - 1) + 0
	if (!(name in seen)) { seen[name] = 1; names[++n] = name }
}
END {
	t[1] = ta ? ta : total[1]
	t[2] = tb ? tb : total[2]
	printf "time per call: A %.2f us, B %.2f us (%s)\n", t[1], t[2],
		ta ? "untraced, given" : "from the samples"
	printf "%-52s %6s %6s %7s %7s %7s %8s\n", "part", "A %", "B %", "A us", "B us", "B-A us", "% of A"
	for (i = 1; i <= n; i++) {
		x = pct[1, names[i]] * t[1] / 100; y = pct[2, names[i]] * t[2] / 100
		printf "%-52s %6.1f %6.1f %7.2f %7.2f %7.2f %7.1f%%\n", names[i], pct[1, names[i]],
			pct[2, names[i]], x, y, y - x, 100 * (y - x) / t[1]
	}
	printf "%-52s %6s %6s %7.2f %7.2f %7.2f %7.1f%%\n", "the whole call", "", "", t[1], t[2],
		t[2] - t[1], 100 * (t[2] - t[1]) / t[1]
	printf "B/A by samples inside the system call: %.3f\n", total[2] / total[1]
}
