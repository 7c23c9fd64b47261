# tests/cli/cases.sh - the cases of the ocdir command, sourced by
# tests/suites/60-cli and run once per backend setting. Every case runs the
# command in a fresh scratch directory with OCDIR_CLI_CHECK_FDS=1 (so any
# descriptor left open at exit shows up in stderr and fails the case) and
# compares exit status, stdout and stderr exactly. Failing cases also check
# that the scratch directory's listing is unchanged: nothing left behind.
#
# Needs: OCDIR (the command), LABEL (prefix of case names), SCRATCH (a
# directory to make scratch directories in).

umask 022
export OCDIR_CLI_CHECK_FDS=1

case_no=0
# Fresh, empty scratch directory; cd into it.
fresh() {
	case_no=$((case_no + 1))
	T=$SCRATCH/$LABEL-$case_no
	rm -rf "$T"
	mkdir -p "$T"
	cd "$T" || exit 1
}

pass() { echo "PASS: $LABEL$1"; }
fail() { echo "FAIL: $LABEL$1: $2"; }

# Listing of the scratch directory, hidden names (staging dirs) included.
listing() { (cd "$T" && find . -mindepth 1 -printf '%p %y %m %u %g\n' | sort); }

# run ARGS...: sets rc, out, err.
# openat2(2) answers EAGAIN to a scoped ".." lookup when any rename or mount
# happened meanwhile anywhere on the system, and asks the caller to retry;
# libocdir does not retry yet (reported), so on a busy machine the cases
# with ".." under --beneath/--in-root would fail at random. Retry those
# here, a few times, and say so; no case expects EAGAIN.
run() {
	local o e try
	o=$(mktemp) e=$(mktemp)
	for try in 1 2 3 4 5; do
		"$OCDIR" "$@" >"$o" 2>"$e"
		rc=$?
		grep -q 'Resource temporarily unavailable' "$e" || break
		echo "# retry $try: EAGAIN from a scoped lookup: ocdir $*"
	done
	out=$(cat "$o") err=$(cat "$e")
	rm -f "$o" "$e"
}

# expect NAME RC STDOUT STDERR -- ARGS...: one case, exact comparison.
expect() {
	local name=$1 want_rc=$2 want_out=$3 want_err=$4
	shift 5
	run "$@"
	if [[ $rc -ne $want_rc ]]; then
		fail "$name" "exit $rc, expected $want_rc; stderr: $err"
	elif [[ $out != "$want_out" ]]; then
		fail "$name" "stdout '$out', expected '$want_out'"
	elif [[ $err != "$want_err" ]]; then
		fail "$name" "stderr '$err', expected '$want_err'"
	else
		pass "$name"
	fi
}

# expect_clean NAME RC STDERR -- ARGS...: a failure that must leave the
# scratch directory exactly as it was.
expect_clean() {
	local name=$1 want_rc=$2 want_err=$3 before after
	shift 4
	before=$(listing)
	run "$@"
	after=$(listing)
	if [[ $rc -ne $want_rc ]]; then
		fail "$name" "exit $rc, expected $want_rc; stderr: $err"
	elif [[ $err != "$want_err" ]]; then
		fail "$name" "stderr '$err', expected '$want_err'"
	elif [[ $before != "$after" ]]; then
		fail "$name" "left something behind: $(diff <(echo "$before") <(echo "$after") | grep '^>' | tr '\n' ' ')"
	else
		pass "$name"
	fi
}

# check NAME CONDITION-COMMAND... : pass when the command succeeds.
check() {
	local name=$1
	shift
	if "$@"; then
		pass "$name"
	else
		fail "$name" "check failed: $*"
	fi
}

mode_of() { stat -c %a "$1"; }
owner_of() { stat -c %u:%g "$1"; }
is_mode() { [[ -d $1 && $(mode_of "$1") == "$2" ]] || { echo "# $1: mode $(mode_of "$1" 2>&1), want $2"; return 1; }; }

usage_tail="Try 'ocdir --help' for more information."
backend=$("$OCDIR" --probe | cut -d: -f1)

# ---- information ----
fresh
run --probe
want_rc=0
[[ $backend == emulated ]] && want_rc=2
if [[ $rc -eq $want_rc && $out =~ ^(native|emulated):\ (probe:|forced\ by\ OCDIR_FORCE_EMULATION=1) && -z $err ]]; then
	pass "--probe prints the backend and why, exit $rc ($out)"
else
	fail "--probe prints the backend and why" "exit $rc, stdout '$out', stderr '$err'"
fi
if [[ ${OCDIR_FORCE_EMULATION:-} == 1 ]]; then
	check "--probe says emulated when forced" test "$out" = "emulated: forced by OCDIR_FORCE_EMULATION=1"
fi
run --help
check "--help: usage on stdout, exit 0" test $rc -eq 0 -a -z "$err" -a "${out%%$'\n'*}" = "Usage: ocdir [OPTION]... DIRECTORY..."
expect "--version" 0 "ocdir $(sed -n 's/^#define OCDIR_VERSION_STRING[[:space:]]*"\(.*\)"/\1/p' "$top/include/ocdir.h")" "" -- --version

# Output that cannot be written is an error, as for GNU mkdir (coreutils'
# close_stdout): exit 1 and "write error" with the reason, --help and
# --version included; GNU mkdir's own answer is checked where it is here.
for form in "--help >/dev/full" "--version >/dev/full" "--version >&-" "-v w >/dev/full"; do
	fresh
	case $form in
	*'>&-') want="ocdir: write error: Bad file descriptor" ;;
	*) want="ocdir: write error: No space left on device" ;;
	esac
	err=$(eval "\"\$OCDIR\" $form" 2>&1)
	rc=$?
	if [[ $rc -eq 1 && $err == "$want" ]]; then
		pass "ocdir $form: exit 1, '$want'"
	else
		fail "ocdir $form" "exit $rc, stderr '$err', expected 1, '$want'"
	fi
	if [[ $form != -v* ]] && mkdir --version 2>/dev/null | grep -q 'GNU coreutils'; then
		gerr=$(eval "mkdir $form" 2>&1)
		grc=$?
		check "GNU mkdir $form says the same (exit $grc)" \
			test $grc -eq 1 -a "ocdir: ${gerr#mkdir: }" = "$want"
	fi
done

# ---- usage errors: exit 1 and a pointer to --help, nothing created ----
fresh
expect_clean "no operand" 1 "ocdir: missing operand"$'\n'"$usage_tail" -- 
expect_clean "unknown long option" 1 "ocdir: unrecognized option '--frobnicate'"$'\n'"$usage_tail" -- --frobnicate d
expect_clean "unknown short option" 1 "ocdir: invalid option -- 'z'"$'\n'"$usage_tail" -- -z d
expect_clean "-m without argument" 1 "ocdir: option requires an argument -- 'm'"$'\n'"$usage_tail" -- -m
expect_clean "--mode without argument" 1 "ocdir: option '--mode' requires an argument"$'\n'"$usage_tail" -- --mode
# getopt_long's own words, as GNU mkdir's
expect_clean "--parents=x" 1 "ocdir: option '--parents' doesn't allow an argument"$'\n'"$usage_tail" -- --parents=x d
expect_clean "--p is ambiguous" 1 "ocdir: option '--p' is ambiguous; possibilities: '--parents' '--publish' '--probe'"$'\n'"$usage_tail" -- --p d
expect_clean "--m without argument names --mode" 1 "ocdir: option '--mode' requires an argument"$'\n'"$usage_tail" -- --m
expect_clean "--help=x" 1 "ocdir: option '--help' doesn't allow an argument"$'\n'"$usage_tail" -- --help=x
expect_clean "--beneath and --in-root together" 1 "ocdir: --beneath and --in-root may be given only once, together or not"$'\n'"$usage_tail" -- --beneath . --in-root . d

# ---- creating and opening ----
fresh
expect "create one directory" 0 "" "" -- a
check "it is a directory with 0777 minus umask" is_mode a 755
expect "an existing directory is fine" 0 "" "" -- a
expect "-v says created, as mkdir -v" 0 "ocdir: created directory 'b'" "" -- -v b
expect "-v says nothing of an existing directory" 0 "" "" -- -v b
expect "--verbose (long form)" 0 "ocdir: created directory 'c'" "" -- --verbose c
expect "-v quotes names as mkdir -v" 0 "ocdir: created directory 'q'\$'\\n''x'"$'\n'"ocdir: created directory \"q'y\"" "" -- -v $'q\nx' "q'y"
expect_clean "--exclusive on an existing directory" 1 "ocdir: cannot create directory 'a': File exists" -- --exclusive a
expect "--exclusive on a new name" 0 "" "" -- --exclusive e
expect "trailing slashes" 0 "" "" -- t//
check "trailing slashes create the directory" test -d t
expect "several operands" 0 "" "" -- m1 m2 m3
check "several operands: all created" test -d m1 -a -d m2 -a -d m3

fresh
expect_clean "missing parent without -p" 1 "ocdir: cannot create directory 'x/y': No such file or directory" -- x/y
expect "-p creates the parents" 0 "ocdir: created directory 'x'"$'\n'"ocdir: created directory 'x/y'"$'\n'"ocdir: created directory 'x/y/z'" "" -- -pv x/y/z
check "-p: every level is a directory" test -d x -a -d x/y -a -d x/y/z
expect "-p on an existing path" 0 "" "" -- -pv x/y/z
expect "--parents (long form) with trailing slash" 0 "" "" -- --parents p/q/
check "--parents: created" test -d p/q
expect "-p --exclusive on an existing leaf" 1 "" "ocdir: cannot create directory 'x/y/z': File exists" -- -p --exclusive x/y/z

fresh
run ok1 missing/x ok2
check "one failing operand does not stop the others" test $rc -eq 1 -a -d ok1 -a -d ok2 -a ! -e missing
check "... and names the failing one" test "$err" = "ocdir: cannot create directory 'missing/x': No such file or directory"

# ---- modes ----
fresh
for spec in "700:700" "0750:750" "0:0" "1777:1777" "2750:2750" "u=rwx,g=,o=:700" \
	    "g-w,o=:750" "a+X:777" "u=rwx,go=rx:755" "=x:111" "-w:577" "o=u:777" \
	    "a=r,u+w:644" "go-rwx:700" "u=rwx,g=u,o=:770" "+t:1755" "o+t:1755" "a+t:1755" "o-x,+t:1754" "g-s:755" "g+s:2777" "u=rwx,g=rx,o=t:1750" "a-x,u+x:766"; do
	m=${spec%%:*} want=${spec#*:}
	d=d$case_no-$(echo "$m" | tr -c 'a-zA-Z0-9\n' '_')
	expect "-m '$m' runs" 0 "" "" -- -m "$m" "$d"
	check "-m '$m' gives $want (umask 022)" is_mode "$d" "$want"
	case_no=$((case_no + 1))
done
expect "--mode=700 (long form)" 0 "" "" -- --mode=700 long
check "--mode=700 gives 700" is_mode long 700
mkdir keep && chmod 705 keep
expect "-m on an existing directory warns" 0 "" "ocdir: warning: 'keep' exists: its mode 0705 is left as it is (-m 0700 applies to directories this call creates; --apply-existing changes it)" -- -v -m 700 keep
check "-m leaves an existing directory's mode alone" is_mode keep 705
expect "-m on an existing directory with that mode: no warning" 0 "" "" -- -m 705 keep
expect "--apply-existing -m changes it" 0 "" "" -- --apply-existing -m 750 keep
check "--apply-existing -m: 750" is_mode keep 750
expect "-p -m: mode of the leaf" 0 "ocdir: created directory 'pm'"$'\n'"ocdir: created directory 'pm/a'"$'\n'"ocdir: created directory 'pm/a/b'" "" -- -pv -m 700 pm/a/b
check "-p -m: leaf gets the mode" is_mode pm/a/b 700
check "-p -m: parents get 0777 minus umask" is_mode pm/a 755

fresh
for bad in xyz 8 99999 17777 u+q "u+rwx," "" "a=rwx,,g-w" "ug" "0x1ff" "u+r g+w" "t"; do
	expect_clean "invalid mode '$bad'" 1 "ocdir: invalid mode '$bad'" -- -m "$bad" new
done

# ---- owner, group, xattrs ----
fresh
if [[ $(id -u) -eq 0 ]]; then
	expect "-o/-g numeric" 0 "" "" -- -o 1234 -g 4321 num
	check "-o/-g numeric: owner 1234:4321" test "$(owner_of num)" = 1234:4321
	expect "-o nobody -g nogroup (names)" 0 "" "" -- -o nobody -g nogroup named
	check "names resolved to $(id -u nobody):$(getent group nogroup | cut -d: -f3)" \
		test "$(owner_of named)" = "$(id -u nobody):$(getent group nogroup | cut -d: -f3)"
	expect "--owner=+42 --group=+43 (forced numeric)" 0 "" "" -- --owner=+42 --group=+43 plus
	check "+N is a number" test "$(owner_of plus)" = 42:43
	expect "-o only" 0 "" "" -- -o 1234 onlyo
	check "-o only leaves the group" test "$(owner_of onlyo)" = 1234:0
	expect "-o with -m 2750: mode survives chown" 0 "" "" -- -o 1234 -g 4321 -m 2750 om
	check "-o -m 2750: 2750 and 1234:4321" test "$(stat -c %a:%u:%g om)" = 2750:1234:4321
	mkdir own && chown 7:7 own
	expect "-o on an existing directory warns" 0 "" "ocdir: warning: 'own' exists: its owner 7 is left as it is (--apply-existing changes it)" -- -o 1234 own
	check "-o leaves an existing directory's owner alone" test "$(owner_of own)" = 7:7
	expect "--apply-existing -o -g" 0 "" "" -- --apply-existing -o 1234 -g 4321 own
	check "--apply-existing -o -g: 1234:4321" test "$(owner_of own)" = 1234:4321
else
	echo "SKIP: $LABEL-o/-g: needs root"
fi
expect_clean "unknown user" 1 "ocdir: invalid user 'no_such_user_ocdir'" -- -o no_such_user_ocdir new
expect_clean "unknown group" 1 "ocdir: invalid group 'no_such_group_ocdir'" -- -g no_such_group_ocdir new
expect_clean "empty user" 1 "ocdir: invalid user ''" -- -o "" new
expect_clean "uid -1 is not an id" 1 "ocdir: invalid user '4294967295'" -- -o 4294967295 new
expect_clean "negative gid" 1 "ocdir: invalid group '-5'" -- -g -5 new

fresh
if setfattr -n user.ocdir_probe -v 1 . 2>/dev/null; then
	expect "--xattr twice" 0 "" "" -- --xattr user.a=1 --xattr user.b= xa
	check "--xattr: user.a=1" test "$(getfattr --only-values -n user.a xa 2>/dev/null)" = 1
	check "--xattr: user.b is empty but present" eval "getfattr -n user.b xa >/dev/null 2>&1"
	expect "--xattr with '=' in the value" 0 "" "" -- --xattr user.c=k=v xc
	check "--xattr: value keeps its '='" test "$(getfattr --only-values -n user.c xc 2>/dev/null)" = k=v
else
	echo "SKIP: $LABEL--xattr: the scratch filesystem has no user xattrs"
fi
expect_clean "--xattr without '='" 1 "ocdir: invalid xattr 'user.a': expected NAME=VALUE" -- --xattr user.a new
expect_clean "--xattr with an empty name" 1 "ocdir: invalid xattr '=v': expected NAME=VALUE" -- --xattr =v new
expect_clean "xattr that cannot be set: nothing left" 1 \
	"ocdir: cannot set attribute 'bogus.name' of 'new': Operation not supported" -- --xattr bogus.name=v new
expect_clean "xattr failure with -m and -o: nothing left" 1 \
	"ocdir: cannot set attribute 'bogus.name' of 'new': Operation not supported" -- -m 700 -o 0 --xattr bogus.name=v new
mkdir -p pp
expect_clean "-p: a failing leaf leaves no leaf" 1 \
	"ocdir: cannot set attribute 'bogus.x' of 'pp/leaf': Operation not supported" -- -p --xattr bogus.x=1 pp/leaf
expect_clean "-p: a failing leaf removes the parents this call made" 1 \
	"ocdir: cannot set attribute 'bogus.x' of 'n1/n2/n3/leaf': Operation not supported" -- -p --xattr bogus.x=1 n1/n2/n3/leaf
long=$(printf 'n%.0s' {1..256})
expect_clean "-p -m: a failing middle level removes the parents this call made" 1 \
	"ocdir: cannot create directory 'n1/$long': File name too long" -- -p -m 700 "n1/$long/leaf"
mkdir -p old
expect_clean "-p -m: an existing parent is never removed" 1 \
	"ocdir: cannot set attribute 'bogus.x' of 'old/n2/leaf': Operation not supported" -- -p -m 700 --xattr bogus.x=1 old/n2/leaf
expect "an operand failing with -m does not stop the next" 1 "" \
	"ocdir: cannot create directory 'pp/leaf/x/y': No such file or directory" -- -m 700 pp/leaf/x/y next
check "... the next operand was created with its mode" is_mode next 700

fresh
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
	chmod 1777 "$T"
	before=$(listing)
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$OCDIR" -o 0 -m 700 nochown 2>&1)
	rc=$?
	if [[ $rc -eq 1 && $out == "ocdir: cannot change owner of 'nochown': Operation not permitted" &&
	      $(listing) == "$before" ]]; then
		pass "chown refused (as nobody): message, exit 1, nothing left"
	else
		fail "chown refused (as nobody)" "exit $rc, output '$out', listing $(listing | tr '\n' ' ')"
	fi
else
	echo "SKIP: $LABEL-chown refused: needs root and setpriv to become nobody"
fi

# ---- the sticky-directory rule, at the leaf and at every level of -p ----
# Another user's directory in a sticky, world-writable parent (as in /tmp)
# is refused wherever ocdir would have made it had it been absent: the
# operand, and with -p every level (else planting st/x and st/x/s would
# hand `ocdir -p st/x/s` the planted s). Refused for root too.
fresh
if [[ $(id -u) -eq 0 ]]; then
	sticky_msg="exists in a sticky directory that others can write to, and belongs neither to you nor to that directory's owner (someone else may have put it there)"
	mkdir -m 1777 st && mkdir st/x st/x/s st/own && chown 65534:65534 st/x st/x/s
	expect_clean "sticky rule: the operand" 1 \
		"ocdir: cannot open directory 'st/x': refused: it $sticky_msg" -- st/x
	expect_clean "sticky rule: -p, the leaf" 1 \
		"ocdir: cannot open directory 'st/x': refused: it $sticky_msg" -- -p st/x
	expect_clean "sticky rule: -p, an intermediate level" 1 \
		"ocdir: cannot create directory 'st/x/sub': refused: 'st/x' $sticky_msg" -- -p st/x/sub
	expect_clean "sticky rule: -p, planted two levels deep" 1 \
		"ocdir: cannot create directory 'st/x/s': refused: 'st/x' $sticky_msg" -- -p st/x/s
	expect_clean "sticky rule: -pv -m, an intermediate level" 1 \
		"ocdir: cannot create directory 'st/x/sub/leaf': refused: 'st/x' $sticky_msg" -- -pv -m 700 st/x/sub/leaf
	expect_clean "sticky rule: -p --beneath, an intermediate level" 1 \
		"ocdir: cannot create directory 'x/sub': refused: 'x' $sticky_msg" -- --beneath st -p x/sub
	expect "sticky rule: -p through the caller's own level" 0 "" "" -- -p st/own/sub
	check "... st/own/sub made" test -d st/own/sub
	# Without -p only the operand is created-or-opened: st/x is walked, as by open(2).
	expect "sticky rule: without -p a walked level is not the operand" 0 "" "" -- st/x/one
	check "... st/x/one made" test -d st/x/one
	# Starting inside (cd, --beneath ROOT) is the caller's choice of directory.
	expect "sticky rule: --beneath the planted directory" 0 "" "" -- --beneath st/x -p two/three
	check "... st/x/two/three made" test -d st/x/two/three
else
	echo "SKIP: $LABEL-sticky rule: needs root to make another user's directory"
fi

# ---- --publish ----
fresh
expect "--publish a new directory" 0 "ocdir: created directory 'pub'" "" -- -v --publish pub
check "--publish: it is there" test -d pub
expect_clean "--publish an existing name" 1 "ocdir: cannot create directory 'pub': File exists" -- --publish pub
if [[ $(id -u) -eq 0 ]]; then
	expect "--publish with -m and -o" 0 "" "" -- --publish -m 750 -o 1234 pub2
	check "--publish: attributes applied" test "$(stat -c %a:%u pub2)" = 750:1234
fi
expect "--publish -p" 0 "" "" -- --publish -p pa/pb/pc
check "--publish -p: created" test -d pa/pb/pc
check "no staging directory left after all this" test -z "$(find . -name '.ocdir-stage*')"

# ---- --beneath and --in-root ----
fresh
mkdir -p R/in R/abs && ln -s /tmp R/out && ln -s ../.. R/up && ln -s /abs R/absln && ln -s /nowhere R/dangle && touch R/file
expect "--beneath ROOT creates below ROOT" 0 "" "" -- --beneath R sub
check "--beneath: R/sub exists" test -d R/sub -a ! -e sub
expect "--beneath -p" 0 "" "" -- --beneath R -p in/a/b
check "--beneath -p: R/in/a/b" test -d R/in/a/b
expect_clean "--beneath: .. escapes" 1 "ocdir: cannot create directory '../esc': it leads outside 'R' (--beneath): Invalid cross-device link" -- --beneath R ../esc
expect_clean "--beneath: absolute path" 1 "ocdir: cannot create directory '/esc': it leads outside 'R' (--beneath): Invalid cross-device link" -- --beneath R /esc
expect_clean "--beneath: symlink out" 1 "ocdir: cannot create directory 'out/esc': it leads outside 'R' (--beneath): Invalid cross-device link" -- --beneath R out/esc
expect_clean "--beneath -p: symlink out" 1 "ocdir: cannot create directory 'up/esc': it leads outside 'R' (--beneath): Invalid cross-device link" -- --beneath R -p up/esc
expect_clean "--beneath -m: .. escapes" 1 "ocdir: cannot create directory '../esc': it leads outside 'R' (--beneath): Invalid cross-device link" -- --beneath R -m 700 ../esc
expect_clean "--in-root: a dangling symlink is not created through" 1 "ocdir: cannot create directory 'dangle': File exists" -- --in-root R -p dangle/x
mkdir -p R/lv && touch R/lv/f
expect_clean "--in-root -p: the level that failed, looked up in ROOT" 1 "ocdir: cannot create directory '/lv/f': Not a directory" -- --in-root R -p /lv/f/x/y
expect_clean "--beneath -p -m: symlink leaf out" 1 "ocdir: cannot create directory 'in/../out': it leads outside 'R' (--beneath): Invalid cross-device link" -- --beneath R -p -m 700 in/../out
expect "--in-root: absolute path stays inside" 0 "" "" -- --in-root R /abs2
check "--in-root: R/abs2" test -d R/abs2 -a ! -e /abs2
expect "--in-root: .. stops at ROOT" 0 "" "" -- --in-root R ../../up2
check "--in-root: R/up2" test -d R/up2
expect "--in-root -p: absolute symlink starts at ROOT" 0 "" "" -- --in-root R -p absln/x
check "--in-root: R/abs/x" test -d R/abs/x -a ! -e /abs
expect "--in-root -m" 0 "" "" -- --in-root R -m 700 /inm
check "--in-root -m: R/inm 700" is_mode R/inm 700
expect_clean "missing ROOT" 1 "ocdir: cannot open root directory 'nonexistent': No such file or directory" -- --beneath nonexistent d
expect_clean "missing ROOT (--in-root)" 1 "ocdir: cannot open root directory 'nonexistent': No such file or directory" -- --in-root nonexistent d
expect_clean "ROOT is a file" 1 "ocdir: cannot open root directory 'R/file': Not a directory" -- --beneath R/file d

# ---- bad operands: message, exit 1, nothing left ----
fresh
touch f && ln -s nowhere dangling && ln -s f filelink
long=$(printf 'n%.0s' {1..256})
deep=$(printf 'd/%.0s' {1..2100})
for opts in "" "-p" "-m 700" "-p -m 700" "--publish"; do
	# shellcheck disable=SC2086
	{
	expect_clean "empty name [$opts]" 1 "ocdir: cannot create directory '': No such file or directory" -- $opts ""
	expect_clean "component too long [$opts]" 1 "ocdir: cannot create directory '$long': File name too long" -- $opts "$long"
	[[ $opts == *-p* ]] ||
		expect_clean "path too long [$opts]" 1 "ocdir: cannot create directory '$deep': File name too long" -- $opts "$deep"
	# with -p the level that failed, as mkdir -p names it
	below=f/sub; [[ " $opts " == *" -p "* ]] && below=f
	expect_clean "below a file [$opts]" 1 "ocdir: cannot create directory '$below': Not a directory" -- $opts f/sub
	expect_clean "dangling symlink [$opts]" 1 "ocdir: cannot create directory 'dangling': File exists" -- $opts dangling
	}
done
# With -p a path over PATH_MAX is walked a level at a time, as mkdir -p
# walks it; scoped, every level is looked up by its whole prefix: refused.
# 20 levels of 250 bytes (the call holds a descriptor per level).
deep2=$(for i in {1..20}; do printf 'e%.0s' {1..250}; printf /; done)
deep2=${deep2%/}
for opts in "-p" "-p -m 700"; do
	# shellcheck disable=SC2086
	expect "path over PATH_MAX [$opts]: made, as by mkdir -p" 0 "" "" -- $opts "$deep2"
	check "path over PATH_MAX [$opts]: 20 levels" test "$(cd "$T" && find "${deep2%%/*}" -type d | wc -l)" -eq 20
	rm -rf "${T:?}/${deep2%%/*}"
done
expect_clean "path too long [--beneath . -p]" 1 "ocdir: cannot create directory '$deep2': File name too long" -- --beneath . -p "$deep2"
for opts in "" "-p" "-m 700" "-p -m 700"; do
	# shellcheck disable=SC2086
	{
	expect_clean "a file in the way [$opts]" 1 "ocdir: cannot create directory 'f': Not a directory" -- $opts f
	expect_clean "a symlink to a file in the way [$opts]" 1 "ocdir: cannot create directory 'filelink': Not a directory" -- $opts filelink
	}
done
expect_clean "a file in the way --exclusive" 1 "ocdir: cannot create directory 'f': File exists" -- --exclusive f
expect_clean "a file in the way --publish" 1 "ocdir: cannot create directory 'f': File exists" -- --publish f

# ---- descriptors ----
fresh
exec 7</dev/null
expect "inherited fd 7 is not counted; none leaked on a mixed run" 1 "ocdir: created directory 'ok'" \
	"ocdir: cannot create directory 'no/such': No such file or directory" -- -v ok no/such
exec 7<&-
expect "no fd leaked with every attribute path" 0 "" "" -- -p -m 700 --xattr user.z=1 a/b c d/e/f --publish g
expect_clean "no fd leaked on prepare failure" 1 "ocdir: cannot create directory 'nope/x': No such file or directory" -- -m 700 nope/x
