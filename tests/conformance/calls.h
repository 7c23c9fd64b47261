/* SPDX-License-Identifier: MIT */
/*
 * tests/conformance/calls.h - the library calls beyond create-or-open, as
 * data: ocdir_mkdirat, ocdir_mkpath, the setup calls, prepare with publish
 * or discard, and ocdir_openat2's options. Every argument a binding passes
 * (mode, flags, resolve, options, the setup step, created) changes the
 * outcome of at least one case, so a binding that drops or swaps one fails
 * a case. conformance --calls runs it against the library; --print-calls
 * writes it for the bindings (build/tests/calls.tsv; columns in
 * bindings/README.md).
 *
 * setup, path, fd_is, after, need: as in cases.h (run as for that table:
 * umask 022, the case directory as dirfd).
 * call:   open (ocdir_openat2), mkdir (ocdir_mkdirat), mkpath,
 *         open-setup (ocdir_openat2_setup), mkpath-setup,
 *         prepare-publish, prepare-discard.
 * action: what the caller does:
 *   -            setup calls: a setup step that does nothing
 *   chmod:MODE   setup calls: fchmod every directory it is given to MODE;
 *                prepare: fchmod the prepared directory before publish/discard
 *   leafchmod:MODE  setup calls: only the leaf
 *   fail:ERRNO   setup calls: fail the leaf's setup with ERRNO
 *   fill         prepare-discard: a file f, a directory sub, a file sub/g
 *   plant:P      prepare-publish: mkdir P after prepare; err is publish's,
 *                and the still valid handle is discarded before `after`
 * err:    the call's errno (for prepare-*: prepare's, or publish's with plant:).
 * created: -1 unchecked, else created / leaf_created / mkdirat's return.
 * calls:  "LEAF/INTER", how often the setup step ran with and without
 *         OCDIR_SETUP_LEAF; "-" unchecked.
 */
#ifndef OCDIR_CONFORMANCE_CALLS_H
#define OCDIR_CONFORMANCE_CALLS_H

struct call_case {
	const char *name;
	const char *call;
	const char *setup;
	const char *path;
	int flags;
	unsigned long long mode;
	unsigned long long resolve;
	unsigned long long options;
	const char *action;
	int err;
	const char *fd_is;
	int created;
	const char *after;
	const char *calls;
	unsigned int need;
};

#define O_NOCLOEXEC_OPT	1ULL	/* OCDIR_NO_CLOEXEC */
#define O_FAST_OPT	2ULL	/* OCDIR_FAST_EMULATION */
#define O_STAGE_OPT	8ULL	/* OCDIR_ALWAYS_STAGE */

static const struct call_case call_cases[] = {
/* ocdir_openat2's options */
{ "open-options-none", "open", "", "new", 0, 0750, 0, 0, "-", OK, "new", 1, "D:new M:new=0750", "-", 0 },
{ "open-no-cloexec", "open", "", "new", 0, 0750, 0, O_NOCLOEXEC_OPT, "-", OK, "new", 1, "D:new", "-", 0 },
{ "open-no-cloexec-asked", "open", "", "new", O_CLOEXEC, 0750, 0, O_NOCLOEXEC_OPT, "-", OK, "new", 1, "D:new", "-", 0 },
{ "open-always-stage", "open", "", "new", 0, 0705, 0, O_STAGE_OPT, "-", OK, "new", 1, "M:new=0705 E:new", "-", NEED_NOREPLACE },
{ "open-fast-emulation", "open", "", "new", 0, 0711, 0, O_FAST_OPT, "-", OK, "new", 1, "M:new=0711", "-", 0 },
{ "open-unknown-option", "open", "", "new", 0, 0755, 0, 0x100, "-", EINVAL, "-", -1, "-:new", "-", 0 },
{ "open-beneath-escape", "open", "d:a", "a/../../x", 0, 0755, R_BENEATH, 0, "-", EXDEV, "-", -1, "", "-", 0 },
{ "open-no-symlinks", "open", "d:t l:s>t", "s/new", 0, 0755, R_NO_SYMLINKS, 0, "-", ELOOP, "-", -1, "-:t/new", "-", 0 },
{ "open-in-root-absolute", "open", "d:a", "/a/new", 0, 0755, R_IN_ROOT, 0, "-", OK, "a/new", 1, "D:a/new", "-", 0 },
{ "open-excl-existing", "open", "d:a", "a", O_EXCL, 0755, 0, 0, "-", EEXIST, "-", -1, "D:a", "-", 0 },
{ "open-nofollow-symlink", "open", "d:t l:s>t", "s", O_NOFOLLOW, 0755, 0, 0, "-", ENOTDIR, "-", -1, "L:s", "-", 0 },
/* ocdir_mkdirat: no descriptor, created as the return value */
{ "mkdir-created", "mkdir", "", "new", 0, 0750, 0, 0, "-", OK, "-", 1, "D:new M:new=0750 E:new", "-", 0 },
{ "mkdir-mode-other", "mkdir", "", "new", 0, 0701, 0, 0, "-", OK, "-", 1, "M:new=0701", "-", 0 },
{ "mkdir-existing", "mkdir", "d:a=0711", "a", 0, 0750, 0, 0, "-", OK, "-", 0, "M:a=0711", "-", 0 },
{ "mkdir-excl-existing", "mkdir", "d:a", "a", O_EXCL, 0750, 0, 0, "-", EEXIST, "-", -1, "D:a", "-", 0 },
{ "mkdir-file", "mkdir", "f:f", "f", 0, 0750, 0, 0, "-", ENOTDIR, "-", -1, "F:f", "-", 0 },
{ "mkdir-missing-parent", "mkdir", "", "nodir/new", 0, 0750, 0, 0, "-", ENOENT, "-", -1, "-:nodir", "-", 0 },
{ "mkdir-beneath-escape", "mkdir", "d:a", "a/../../x", 0, 0755, R_BENEATH, 0, "-", EXDEV, "-", -1, "", "-", 0 },
{ "mkdir-beneath", "mkdir", "d:a", "a/new", 0, 0750, R_BENEATH, 0, "-", OK, "-", 1, "M:a/new=0750", "-", 0 },
{ "mkdir-no-symlinks", "mkdir", "d:t l:s>t", "s/new", 0, 0755, R_NO_SYMLINKS, 0, "-", ELOOP, "-", -1, "-:t/new", "-", 0 },
{ "mkdir-unknown-option", "mkdir", "", "new", 0, 0755, 0, 0x100, "-", EINVAL, "-", -1, "-:new", "-", 0 },
{ "mkdir-write-access", "mkdir", "", "new", O_WRONLY, 0755, 0, 0, "-", ENOTDIR, "-", -1, "-:new", "-", 0 },
/* ocdir_mkpath */
{ "mkpath-created", "mkpath", "", "a/b/c", 0, 0750, 0, 0, "-", OK, "a/b/c", 1, "M:a=0755 M:a/b=0755 M:a/b/c=0750 E:a/b/c", "-", 0 },
{ "mkpath-some-exist", "mkpath", "d:a=0711", "a/b/c", 0, 0701, 0, 0, "-", OK, "a/b/c", 1, "M:a=0711 M:a/b=0755 M:a/b/c=0701", "-", 0 },
{ "mkpath-existing", "mkpath", "d:a d:a/b=0711", "a/b", 0, 0750, 0, 0, "-", OK, "a/b", 0, "M:a/b=0711", "-", 0 },
{ "mkpath-excl-existing", "mkpath", "d:a d:a/b", "a/b", O_EXCL, 0750, 0, 0, "-", EEXIST, "-", -1, "E:a/b", "-", 0 },
{ "mkpath-file-on-the-way", "mkpath", "f:f", "f/b/c", 0, 0750, 0, 0, "-", ENOTDIR, "-", -1, "F:f", "-", 0 },
{ "mkpath-beneath-escape", "mkpath", "d:a", "a/../../x/y", 0, 0750, R_BENEATH, 0, "-", EXDEV, "-", -1, "E:a", "-", 0 },
{ "mkpath-beneath", "mkpath", "d:a", "a/b/c", 0, 0750, R_BENEATH, 0, "-", OK, "a/b/c", 1, "M:a/b/c=0750", "-", 0 },
{ "mkpath-no-symlinks", "mkpath", "d:t l:s>t", "s/x/y", 0, 0750, R_NO_SYMLINKS, 0, "-", ELOOP, "-", -1, "E:t", "-", 0 },
{ "mkpath-symlink-followed", "mkpath", "d:t l:s>t", "s/x/y", 0, 0750, 0, 0, "-", OK, "t/x/y", 1, "M:t/x/y=0750", "-", 0 },
{ "mkpath-unknown-option", "mkpath", "", "a/b", 0, 0755, 0, 0x100, "-", EINVAL, "-", -1, "-:a", "-", 0 },
{ "mkpath-no-cloexec", "mkpath", "", "a/b", 0, 0755, 0, O_NOCLOEXEC_OPT, "-", OK, "a/b", 1, "D:a/b", "-", 0 },
/* ocdir_openat2_setup */
{ "open-setup-chmod", "open-setup", "", "new", 0, 0700, 0, 0, "chmod:0751", OK, "new", 1, "M:new=0751 E:new", "1/0", 0 },
{ "open-setup-nothing", "open-setup", "", "new", 0, 0750, 0, 0, "-", OK, "new", 1, "D:new", "1/0", 0 },
{ "open-setup-fails", "open-setup", "", "new", 0, 0750, 0, 0, "fail:1", EPERM, "-", -1, "-:new", "1/0", 0 },
{ "open-setup-fails-other", "open-setup", "", "new", 0, 0750, 0, 0, "fail:28", ENOSPC, "-", -1, "-:new", "1/0", 0 },
{ "open-setup-existing", "open-setup", "d:a=0711", "a", 0, 0700, 0, 0, "chmod:0750", OK, "a", 0, "M:a=0711", "0/0", 0 },
{ "open-setup-excl-existing", "open-setup", "d:a", "a", O_EXCL, 0700, 0, 0, "chmod:0750", EEXIST, "-", -1, "D:a", "0/0", 0 },
{ "open-setup-always-stage", "open-setup", "", "new", 0, 0700, 0, O_STAGE_OPT, "chmod:0705", OK, "new", 1, "M:new=0705", "1/0", NEED_NOREPLACE },
{ "open-setup-beneath", "open-setup", "d:a", "a/new", 0, 0700, R_BENEATH, 0, "chmod:0750", OK, "a/new", 1, "M:a/new=0750", "1/0", 0 },
{ "open-setup-beneath-escape", "open-setup", "d:a", "a/../../x", 0, 0700, R_BENEATH, 0, "chmod:0750", EXDEV, "-", -1, "", "0/0", 0 },
{ "open-setup-unknown-option", "open-setup", "", "new", 0, 0700, 0, 0x100, "chmod:0750", EINVAL, "-", -1, "-:new", "0/0", 0 },
{ "open-setup-no-cloexec", "open-setup", "", "new", 0, 0700, 0, O_NOCLOEXEC_OPT, "chmod:0750", OK, "new", 1, "M:new=0750", "1/0", 0 },
/* ocdir_mkpath_setup */
{ "mkpath-setup-chmod", "mkpath-setup", "", "a/b/c", 0, 0700, 0, 0, "chmod:0751", OK, "a/b/c", 1, "M:a=0751 M:a/b=0751 M:a/b/c=0751", "1/2", 0 },
{ "mkpath-setup-leafchmod", "mkpath-setup", "", "a/b/c", 0, 0700, 0, 0, "leafchmod:0750", OK, "a/b/c", 1, "M:a=0755 M:a/b=0755 M:a/b/c=0750", "1/2", 0 },
{ "mkpath-setup-some-exist", "mkpath-setup", "d:a", "a/b/c", 0, 0700, 0, 0, "chmod:0711", OK, "a/b/c", 1, "M:a=0755 M:a/b=0711 M:a/b/c=0711", "1/1", 0 },
{ "mkpath-setup-fails", "mkpath-setup", "", "a/b/c", 0, 0700, 0, 0, "fail:13", EACCES, "-", -1, "-:a", "1/2", 0 },
{ "mkpath-setup-fails-keeps-old", "mkpath-setup", "d:a", "a/b/c", 0, 0700, 0, 0, "fail:13", EACCES, "-", -1, "E:a", "1/1", 0 },
{ "mkpath-setup-existing", "mkpath-setup", "d:a d:a/b", "a/b", 0, 0700, 0, 0, "chmod:0750", OK, "a/b", 0, "M:a/b=0755", "0/0", 0 },
{ "mkpath-setup-excl-existing", "mkpath-setup", "d:a d:a/b", "a/b", O_EXCL, 0700, 0, 0, "chmod:0750", EEXIST, "-", -1, "M:a/b=0755", "0/0", 0 },
{ "mkpath-setup-beneath-escape", "mkpath-setup", "d:a", "a/../../x/y", 0, 0700, R_BENEATH, 0, "chmod:0750", EXDEV, "-", -1, "E:a", "0/0", 0 },
{ "mkpath-setup-no-symlinks", "mkpath-setup", "d:t l:s>t", "s/x", 0, 0700, R_NO_SYMLINKS, 0, "chmod:0750", ELOOP, "-", -1, "E:t", "0/0", 0 },
/* ocdir_prepare, then ocdir_publish or ocdir_discard */
{ "prepare-publish", "prepare-publish", "", "new", 0, 0750, 0, 0, "chmod:0705", OK, "new", -1, "M:new=0705 E:new", "-", NEED_NOREPLACE },
{ "prepare-publish-mode", "prepare-publish", "", "new", 0, 0751, 0, 0, "-", OK, "new", -1, "M:new=0751", "-", NEED_NOREPLACE },
{ "prepare-publish-in-subdir", "prepare-publish", "d:a", "a/new", 0, 0750, 0, 0, "-", OK, "a/new", -1, "M:a/new=0750", "-", NEED_NOREPLACE },
{ "prepare-publish-beneath", "prepare-publish", "d:a", "a/new", 0, 0750, R_BENEATH, 0, "-", OK, "a/new", -1, "D:a/new", "-", NEED_NOREPLACE },
{ "prepare-beneath-escape", "prepare-publish", "d:a", "a/../../x", 0, 0750, R_BENEATH, 0, "-", EXDEV, "-", -1, "", "-", 0 },
{ "prepare-existing", "prepare-publish", "d:a=0711", "a", 0, 0750, 0, 0, "-", EEXIST, "-", -1, "M:a=0711 E:a", "-", 0 },
{ "prepare-dot", "prepare-publish", "", ".", 0, 0750, 0, 0, "-", EEXIST, "-", -1, "", "-", 0 },
{ "prepare-missing-parent", "prepare-publish", "", "nodir/new", 0, 0750, 0, 0, "-", ENOENT, "-", -1, "-:nodir", "-", 0 },
{ "prepare-flag-refused", "prepare-publish", "", "new", O_NOFOLLOW, 0750, 0, 0, "-", EINVAL, "-", -1, "-:new", "-", 0 },
{ "prepare-unknown-option", "prepare-publish", "", "new", 0, 0750, 0, 0x100, "-", EINVAL, "-", -1, "-:new", "-", 0 },
{ "prepare-publish-planted", "prepare-publish", "", "new", 0, 0750, 0, 0, "plant:new", EEXIST, "-", -1, "E:new", "-", NEED_NOREPLACE },
{ "prepare-discard", "prepare-discard", "", "new", 0, 0750, 0, 0, "-", OK, "-", -1, "-:new", "-", 0 },
{ "prepare-discard-filled", "prepare-discard", "", "new", 0, 0750, 0, 0, "fill", OK, "-", -1, "-:new", "-", 0 },
{ "prepare-discard-chmodded", "prepare-discard", "d:a", "a/new", 0, 0750, 0, 0, "chmod:0500", OK, "-", -1, "-:a/new E:a", "-", 0 },
};

#endif
