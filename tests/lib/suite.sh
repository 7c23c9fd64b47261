# tests/lib/suite.sh - sourced by the suites in tests/suites/ (bash).

# in_this_run KIND WHAT: succeed if this run tests the KIND kernel; if not,
# print "SKIP: WHAT: ..." with the reason and fail.  tests/run --kernels
# "K1 K2 ..." (make check, make check-lts) exports that list as
# OCDIR_KERNELS; a suite run without it (tests/run SUITE) tests every
# kernel it knows.
in_this_run() {
	[[ -z ${OCDIR_KERNELS:-} || " $OCDIR_KERNELS " == *" $1 "* ]] && return 0
	echo "SKIP: $2: the $1 kernel is not among this run's kernels ($OCDIR_KERNELS; docs/harness.md says which target runs it)"
	return 1
}
