#!/usr/bin/env bash
# tests/kernel/export-series.sh - kernel/export-series, no guest, no build:
#   - refuses (exit 3) without a git identity, and without a base commit
#     while none is recorded in the script;
#   - exports kernel/patches-7.3 as the runner: 0000 cover letter, one mail
#     per patch, the man-pages mail; From: and the only Signed-off-by: are
#     the runner's (the files' placeholder identity gone); base-commit:;
#     To:/Cc: with linux-api, linux-fsdevel and the maintainers; the
#     man-pages mail In-Reply-To the cover letter, To: linux-man;
#   - every kernel mail passes checkpatch.pl --strict, run here again from
#     the tree the export used;
#   - a series with a checkpatch problem (a commit message line over 75
#     columns) fails the export (exit 1) with a FAIL: line.
# One PASS:/FAIL:/SKIP: line per check.  Run by tests/suites/05-tree.
set -u
cd "$(dirname "$0")/../.." || exit 1
pass() { echo "PASS: export-series: $1"; }
fail() { echo "FAIL: export-series: $1: $2"; }
skip() { echo "SKIP: export-series: $1: $2"; }

if [[ ! -r /usr/src/linux-source-7.3.tar.xz ]]; then
	skip "kernel/export-series" "no /usr/src/linux-source-7.3.tar.xz (make deps installs linux-source-7.3)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ocdir-export-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
base=0123456789abcdef0123456789abcdef01234567
name="Test Poster" email=poster@ocdir-test.invalid
me="$name <$email>"
# The runner's identity comes from this file alone (no system config; the
# checkout's own .git/config is checked below).
printf '[user]\n\tname = %s\n\temail = %s\n' "$name" "$email" >"$tmp/gitconfig"
: >"$tmp/no-gitconfig"
as() { # gitconfig file, command...
	local cfg=$1
	shift
	GIT_CONFIG_GLOBAL=$cfg GIT_CONFIG_NOSYSTEM=1 "$@"
}

# ---- refusals ----
if [[ -n $(git config --local user.name 2>/dev/null) || -n $(git config --local user.email 2>/dev/null) ]]; then
	skip "refuses without a git identity" "this checkout's .git/config sets one"
else
	out=$(as "$tmp/no-gitconfig" kernel/export-series -o "$tmp/none" --base-commit $base 2>&1)
	rc=$?
	if [[ $rc -eq 3 && $out == *"no git identity"* ]]; then
		pass "refuses without a git identity (exit 3: $(head -n 1 <<<"$out" | cut -c1-90)...)"
	else
		fail "refuses without a git identity" "exit $rc: $(head -n 2 <<<"$out" | tr '\n' ' ')"
	fi
fi
if grep -q '^BASE_COMMIT_V7_3=$' kernel/export-series; then
	out=$(as "$tmp/gitconfig" kernel/export-series -o "$tmp/none" 2>&1)
	rc=$?
	if [[ $rc -eq 3 && $out == *"--base-commit"* ]]; then
		pass "refuses without a base commit while v7.3's is not recorded (exit 3)"
	else
		fail "refuses without a base commit" "exit $rc: $(head -n 2 <<<"$out" | tr '\n' ' ')"
	fi
	rm -rf "$tmp/none"
fi

# ---- the export ----
out=$(as "$tmp/gitconfig" kernel/export-series -o "$tmp/out" --base-commit $base 2>&1)
rc=$?
printf '%s\n' "$out" >"$tmp/export.log"
if [[ $rc -eq 0 ]]; then
	pass "kernel/export-series exports kernel/patches-7.3 ($(tail -n 1 <<<"$out"))"
else
	fail "kernel/export-series exports kernel/patches-7.3" "exit $rc: $(grep -E '^FAIL|export-series:' <<<"$out" | head -n 3 | tr '\n' ' ')"
fi
n_series=$(grep -c '^0' kernel/patches-7.3/series)
n_man=$(ls kernel/man-pages/*.patch | wc -l)
mails=("$tmp"/out/*.patch)
cover=$tmp/out/0000-cover-letter.patch
if [[ -f $cover && ${#mails[@]} -eq $((1 + n_series + n_man)) ]]; then
	pass "the cover letter, $n_series patch mails and $n_man man-pages mail"
else
	fail "the cover letter, $n_series patch mails and $n_man man-pages mail" "got: $(cd "$tmp/out" 2>/dev/null && ls | tr '\n' ' ')"
fi
# Headers, unfolded.
headers() { awk '/^$/ { exit } { if (/^[ \t]/) { sub(/^[ \t]+/, " "); h = h $0 } else { if (h != "") print h; h = $0 } } END { if (h != "") print h }' "$1"; }
bad=
for f in "${mails[@]}"; do
	b=$(basename "$f")
	from=$(headers "$f" | sed -n 's/^From: //p')
	[[ $from == "$me" ]] || bad="$bad $b(From: $from)"
	[[ $b == 0000-* ]] && continue
	sobs=$(grep '^Signed-off-by: ' "$f")
	[[ $sobs == "Signed-off-by: $me" ]] || bad="$bad $b(Signed-off-by: $(tr '\n' ';' <<<"$sobs"))"
done
if grep -l 'ocdir@example\.org' "${mails[@]}" >/dev/null 2>&1; then
	bad="$bad placeholder-identity-left"
fi
if [[ -z $bad ]]; then
	pass "From: and the one Signed-off-by: of every mail are the runner's ($me); no placeholder identity left"
else
	fail "From: and Signed-off-by: are the runner's" "$bad"
fi
if grep -qx "base-commit: $base" "$cover" 2>/dev/null; then
	pass "the cover letter ends with base-commit: $base"
else
	fail "the cover letter has base-commit:" "$(grep base-commit "$cover" 2>/dev/null)"
fi
h=$(headers "$cover" 2>/dev/null)
missing=
for a in linux-api@vger.kernel.org linux-fsdevel@vger.kernel.org viro@zeniv.linux.org.uk brauner@kernel.org \
	miklos@szeredi.hu v9fs@lists.linux.dev io-uring@vger.kernel.org audit@vger.kernel.org linux-kselftest@vger.kernel.org; do
	grep -qiE "^(To|Cc):.*$a" <<<"$h" || missing="$missing $a"
done
if [[ -z $missing ]]; then
	pass "To:/Cc: name linux-api, linux-fsdevel and the maintainers of the files the series touches"
else
	fail "To:/Cc: name the lists and maintainers" "missing:$missing"
fi
man=$(ls "$tmp"/out/man-pages-*.patch 2>/dev/null | head -n 1)
msgid=$(sed -n 's/^Message-Id: //Ip' "$cover" 2>/dev/null | head -n 1)
mh=$(headers "${man:-/dev/null}")
if [[ -n $msgid ]] && grep -qxF "In-Reply-To: $msgid" <<<"$mh" && grep -qE '^To:.*linux-man@vger\.kernel\.org' <<<"$mh" &&
	grep -qE '^To:.*alx@kernel\.org' <<<"$mh"; then
	pass "the man-pages mail replies to the cover letter ($msgid), To: the man-pages maintainer and linux-man"
else
	fail "the man-pages mail is in the thread, To: linux-man" "$(grep -E '^(In-Reply-To|To):' <<<"$mh" | tr '\n' ' ')"
fi

# checkpatch --strict once more, from the tree the export used.
cache=${OCDIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ocdir}
tree=$(ls -d "$cache"/export/linux-7.3-* 2>/dev/null | head -n 1)
if [[ -z $tree || ! -f $tree/scripts/checkpatch.pl ]]; then
	fail "checkpatch --strict on the exported mails" "no tree under $cache/export"
else
	for f in "${mails[@]}"; do
		b=$(basename "$f")
		[[ $b == man-pages-* ]] && continue
		if r=$(cd "$tree" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl --strict --color=never "$f" 2>&1); then
			pass "checkpatch --strict: $b: $(grep -m1 '^total:' <<<"$r")"
		else
			fail "checkpatch --strict: $b" "$(grep -E -m3 '^(total|ERROR|WARNING|CHECK)' <<<"$r" | tr '\n' ' ')"
		fi
	done
fi

# ---- a broken variant: one patch whose message has a line over 75 columns ----
bs=$tmp/broken/patches-7.3
mkdir -p "$bs"
cp kernel/patches-7.3/0000-*.patch "$bs/"
p1=$(grep -m1 '^0' kernel/patches-7.3/series)
awk '!done && /^$/ && hdr_done { print; print "This line of the commit message is much longer than the seventy-five columns checkpatch allows."; done = 1; next }
	/^$/ { hdr_done = 1 } { print }' "kernel/patches-7.3/$p1" >"$bs/$p1"
echo "$p1" >"$bs/series"
out=$(as "$tmp/gitconfig" kernel/export-series --series "$bs" -o "$tmp/broken-out" --base-commit $base 2>&1)
rc=$?
if [[ $rc -eq 1 ]] && grep -q "^FAIL: $p1 checkpatch --strict" <<<"$out"; then
	pass "a patch with a commit message line over 75 columns fails the export (exit 1, $(grep -m1 "^FAIL: " <<<"$out" | cut -d: -f3- | cut -c1-60))"
else
	fail "a patch with a checkpatch warning fails the export" "exit $rc: $(grep -E '^(FAIL|PASS)' <<<"$out" | head -n 3 | tr '\n' ' ')"
fi
exit 0
