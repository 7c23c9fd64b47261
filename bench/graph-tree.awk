# bench/graph-tree.awk - a function_graph trace (ftrace, funcgraph-tail on)
# as one call tree: for every call path, the calls per operation, the mean
# duration of one call and the time per operation, with what is left to
# the function itself and to untraced callees ("self").  An operation is one
# call of a depth-0 function (the system call entry).  Durations include the
# hooks of the traced callees: compare with the "outer" pass.
# Plain POSIX awk (the guest runs the host's mawk).
# The path of a call at depth, registered when it is first seen (at its
# entry for a call with traced callees), so that parents sort before
# children.
function pathof(cpu, depth, name,   path, parent, d) {
	path = ""
	for (d = 0; d < depth; d++)
		path = path (d ? "/" : "") stack[cpu, d]
	parent = path
	path = (depth ? path "/" : "") name
	if (!(path in sortkey)) {
		nkeys++
		sortkey[path] = ((parent in sortkey) ? sortkey[parent] : "") sprintf("%05d", nkeys)
		keys[nkeys] = path
		depthof[path] = depth
		nameof[path] = name
		parentof[path] = parent
	}
	return path
}
function record(cpu, depth, name, dur,   path) {
	path = pathof(cpu, depth, name)
	count[path]++
	total[path] += dur
}
/\[LOST|LOST [0-9]* EVENTS/ { lost++ }
!/\|/ || /^#/ { next }
{
	bar = index($0, "|")
	left = substr($0, 1, bar - 1)
	right = substr($0, bar + 1)
	if (!match(left, /^ *[0-9]+\)/))
		next
	cpu = substr(left, RSTART, RLENGTH) + 0
	dur = 0
	if (match(left, /[0-9]+\.[0-9]+ us/))
		dur = substr(left, RSTART, RLENGTH - 3) + 0
	match(right, /^ */)
	depth = int((RLENGTH - 2) / 2)
	body = substr(right, RLENGTH + 1)
	if (body ~ /^[A-Za-z0-9_.]+\(\) \{/) {
		name = body
		sub(/\(.*/, "", name)
		stack[cpu, depth] = name
		pathof(cpu, depth, name)
	} else if (body ~ /^\}/) {
		name = stack[cpu, depth]
		if (match(body, /\/\* [A-Za-z0-9_.]+ \*\//))
			name = substr(body, RSTART + 3, RLENGTH - 6)
		if (name != stack[cpu, depth])
			next	# a call that started elsewhere (migration) or before the trace
		record(cpu, depth, name, dur)
	} else if (body ~ /^[A-Za-z0-9_.]+\(\);/) {
		name = body
		sub(/\(.*/, "", name)
		record(cpu, depth, name, dur)
	}
}
END {
	# insertion sort of the paths by their sort keys: the tree in the order
	# in which calls were first seen
	for (i = 2; i <= nkeys; i++) {
		x = keys[i]
		for (j = i - 1; j >= 1 && sortkey[keys[j]] > sortkey[x]; j--)
			keys[j + 1] = keys[j]
		keys[j + 1] = x
	}
	for (i = 1; i <= nkeys; i++)
		if (parentof[keys[i]] != "")
			childsum[parentof[keys[i]]] += total[keys[i]]
	roots = 0
	for (i = 1; i <= nkeys; i++)
		if (!depthof[keys[i]])
			roots += count[keys[i]]
	if (!roots) {
		print "no complete traced calls"
		exit
	}
	printf "%d operations (depth-0 calls)%s; times in us\n", roots, lost ? ", EVENTS LOST: some calls missing" : ""
	printf "%-58s %9s %9s %9s %9s\n", "call path", "calls/op", "us/call", "us/op", "self/op"
	for (i = 1; i <= nkeys; i++) {
		k = keys[i]
		if (!count[k])
			continue
		ind = ""
		for (d = 0; d < depthof[k]; d++)
			ind = ind "  "
		printf "%-58s %9.2f %9.2f %9.2f %9.2f\n", ind nameof[k], count[k] / roots,
			total[k] / count[k], total[k] / roots, (total[k] - childsum[k]) / roots
	}
}
