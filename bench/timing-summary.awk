# bench/timing-summary.awk - medians and within-repetition ratios of the
# untraced profile_loop runs that bench/profile-guest
# writes ("1T rep=R MODE threads=.. parents=P ... ns_per_op=X ns_per_call=Y").
# Ratios are taken inside one repetition, then the median over repetitions,
# as ocdir_bench does.  -v where=... says where it ran.  Plain POSIX awk
# (the guest runs the host's mawk).
function field(name,   i) {
	for (i = 1; i <= NF; i++)
		if (index($i, name "=") == 1)
			return substr($i, length(name) + 2)
	return ""
}
function median(list,   n, v, i, j, x) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++) {
		x = v[i] + 0
		for (j = i - 1; j >= 1 && v[j] + 0 > x; j--)
			v[j + 1] = v[j]
		v[j + 1] = x
	}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
	rep = field("rep"); mode = $3; p = field("parents")
	if ($1 == "1T") {
		t1[rep, mode] = field("ns_per_call"); reps1[rep] = 1
	} else {
		op2[rep, p, mode] = field("ns_per_op"); call2[rep, p, mode] = field("ns_per_call")
		reps2[rep] = 1
	}
}
function ratio1(num, den,   r, l) {
	l = ""
	for (r in reps1)
		if ((r, num) in t1 && (r, den) in t1)
			l = l " " t1[r, num] / t1[r, den]
	return l == "" ? "n/a" : sprintf("%.3f", median(l))
}
END {
	printf "untraced, %s, 1 thread: median time per call over repetitions\n", where
	split("mkdirat native careful open creat excl", modes, " ")
	for (m = 1; m <= 6; m++) {
		l = ""
		for (r in reps1)
			if ((r, modes[m]) in t1)
				l = l " " t1[r, modes[m]]
		if (l != "")
			printf "  %-8s %7.2f us\n", modes[m], median(l) / 1000
	}
	printf "  (b)/(a) native/mkdirat        %s\n", ratio1("native", "mkdirat")
	printf "  (c)/(b) careful/native        %s\n", ratio1("careful", "native")
	printf "  (c)/(a) careful/mkdirat       %s\n", ratio1("careful", "mkdirat")
	printf "  (f1)/(a) open/mkdirat         %s\n", ratio1("open", "mkdirat")
	printf "  (f2)/(f1) creat/open          %s\n", ratio1("creat", "open")
	printf "  (b) with O_EXCL / (a)         %s\n", ratio1("excl", "mkdirat")
	printf "  (b) with O_EXCL / (b)         %s\n", ratio1("excl", "native")
	l = ""
	for (r in reps1)
		if ((r, "native") in t1 && (r, "open") in t1)
			l = l " " (t1[r, "native"] - t1[r, "mkdirat"]) / t1[r, "open"]
	if (l != "")
		printf "  ((b)-(a))/(f1)                %.3f  (what (b) costs more than (a), in opens of an existing directory)\n", median(l)
	print ""
	if (!length(reps2))
		exit
	print "untraced, tmpfs, 2 threads: wall-clock time per operation (both threads' operations / window) and per call"
	for (p = 1; p <= 2; p++)
		for (m = 1; m <= 2; m++) {
			lo = ""; lc = ""
			for (r in reps2) {
				lo = lo " " op2[r, p, modes[m]]; lc = lc " " call2[r, p, modes[m]]
			}
			printf "  %-19s %-8s %7.2f us/op  %7.2f us/call\n", p == 1 ? "shared parent" : "separate parents",
				modes[m], median(lo) / 1000, median(lc) / 1000
		}
	for (p = 1; p <= 2; p++) {
		l = ""
		for (r in reps2)
			l = l " " op2[r, p, "native"] / op2[r, p, "mkdirat"]
		printf "  (b)/(a), %-17s %.3f\n", p == 1 ? "shared parent" : "separate parents", median(l)
	}
	for (m = 1; m <= 2; m++) {
		l = ""
		for (r in reps2)
			l = l " " op2[r, 1, modes[m]] / op2[r, 2, modes[m]]
		printf "  shared/separate parents, %-8s %.3f\n", modes[m], median(l)
	}
}
