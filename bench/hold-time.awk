# bench/hold-time.awk - how long one system call holds the parent's i_rwsem:
# from the return of down_write() to the call of up_write(), in a
# function_graph trace with funcgraph-abstime on whose filter holds only the
# system call entries, down_write and up_write (so that no hook runs inside
# the critical section).  One vCPU: the lines of one call are consecutive.
# Timestamps have microsecond resolution: the mean over many calls is the
# figure; percentiles are given as a check.  Plain POSIX awk.
function sortnum(v, n,   i, j, x) {
	for (i = 2; i <= n; i++) {
		x = v[i]
		for (j = i - 1; j >= 1 && v[j] > x; j--)
			v[j + 1] = v[j]
		v[j + 1] = x
	}
}
!/\|/ || /^#/ { next }
{
	if (!match($0, /^ *[0-9]+\.[0-9]+/))
		next
	ts = substr($0, RSTART, RLENGTH) * 1e6	# us
	rest = substr($0, RLENGTH + 1)
	bar = index(rest, "|")			# after the timestamp
	rest = substr(rest, bar + 1)
	bar = index(rest, "|")			# after the duration
	left = substr(rest, 1, bar - 1)
	body = substr(rest, bar + 1)
	sub(/^ */, "", body)
	dur = 0
	if (match(left, /[0-9]+\.[0-9]+ us/))
		dur = substr(left, RSTART, RLENGTH - 3) + 0
	if (body ~ /^down_write\(\);/) {
		held = ts + dur
	} else if (body ~ /^up_write\(\);/ && held != "") {
		h[++n] = ts - held
		sum += ts - held
		held = ""
	} else if (body ~ /^\} \/\* __x64_sys_/) {
		calls++
		callsum += dur
	}
}
END {
	if (!n) {
		print "no down_write/up_write pairs found"
		exit
	}
	sortnum(h, n)
	printf "%d critical sections in %d calls; held from down_write() to up_write(): mean %.2f us\n",
		n, calls, sum / n
	printf "percentiles: 10%% %.0f, 25%% %.0f, 50%% %.0f, 75%% %.0f, 90%% %.0f us\n", h[int(n * 0.1) + 1],
		h[int(n * 0.25) + 1], h[int(n * 0.5) + 1], h[int(n * 0.75) + 1], h[int(n * 0.9) + 1]
	if (calls)
		printf "mean duration of the traced system call (4 hooks): %.2f us; share under the lock: %.0f%%\n",
			callsum / calls, 100 * sum / callsum
}
