/* SPDX-License-Identifier: MIT */
/*
 * tests/conformance/cases.h - THE table: every behaviour of
 * docs/semantics.md section 3 that a test can observe from userspace, as
 * data. conformance.c runs it against one backend per invocation.
 *
 * setup:  space-separated operations, run as root if we are root, in a
 *         fresh case directory (everything is then chowned to the test uid):
 *           d:P[=MODE]   mkdir P (chmod MODE)     f:P  regular file
 *           p:P          fifo                     l:P>T symlink P -> T
 *           o:P=UID      lchown P to UID          m:P   mkdir P, mount tmpfs
 *           chain:N      s1 -> s2 -> ... -> sN -> d   (d must exist)
 * path:   %D is replaced by the case directory's absolute path.
 * fd_is:  on success the fd must be this (path relative to the case dir).
 * created: -1 not checked, else the expected `created` (checked for the
 *         ocdir_openat2 API).
 * after:  space-separated checks once the call is done:
 *           D:P directory   F:P regular file   L:P symlink   -:P absent
 *           E:P empty dir   M:P=MODE  (mode & 07777 of directory P)
 * Every case also checks: a directory fd, O_RDONLY, O_CLOEXEC, no fd
 * leaked, no ".ocdir-stage.*" left anywhere in the case directory.
 */
#ifndef OCDIR_CONFORMANCE_CASES_H
#define OCDIR_CONFORMANCE_CASES_H

#define AT	0	/* open-style call: ocdir_openat / openat(2) */
#define AT2	1	/* how-style call: ocdir_openat2 / openat2(2) */

#define NEED_ROOT	0x1	/* runs only as uid 0 */
#define NEED_USER	0x2	/* runs only as a non-root uid */
#define NEED_MOUNT	0x4	/* needs the tmpfs mount of an "m:" setup */
#define NEED_ROOT_SETUP	0x8	/* setup chowns to other uids: needs root */
#define NEED_PROT_LINKS	0x10	/* fs.protected_symlinks is on */
#define NEED_NOREPLACE	0x20	/* calls.h: publishes by RENAME_NOREPLACE */

#define R_BENEATH	0x08ULL
#define R_IN_ROOT	0x10ULL
#define R_NO_SYMLINKS	0x04ULL
#define R_NO_MAGIC	0x02ULL
#define R_NO_XDEV	0x01ULL

#define OK	0

struct conf_case {
	const char *name;
	const char *setup;
	const char *path;
	int api;
	int flags;
	unsigned long long mode;
	unsigned long long resolve;
	int err;
	const char *fd_is;
	int created;
	const char *after;
	unsigned int need;
};

static const struct conf_case conf_cases[] = {
/* rule 1: absent name */
{ "absent-created", "", "new", AT2, 0, 0755, 0, OK, "new", 1, "D:new M:new=0755 E:new", 0 },
{ "absent-created-openat", "", "new", AT, 0, 0700, 0, OK, "new", 1, "D:new M:new=0700", 0 },
{ "absent-excl-created", "", "new", AT2, O_EXCL, 0755, 0, OK, "new", 1, "D:new", 0 },
{ "absent-in-subdir", "d:a d:a/b", "a/b/new", AT2, 0, 0755, 0, OK, "a/b/new", 1, "D:a/b/new", 0 },
{ "absent-absolute-path", "", "%D/new", AT2, 0, 0755, 0, OK, "new", 1, "D:new", 0 },
{ "absent-mode-0-usable", "", "new", AT2, 0, 0, 0, OK, "new", 1, "D:new M:new=0000", 0 },
{ "absent-nonblock-noatime", "", "new", AT2, O_NONBLOCK | O_NOATIME, 0755, 0, OK, "new", 1, "D:new", 0 },
{ "missing-parent", "", "nodir/new", AT2, 0, 0755, 0, ENOENT, NULL, -1, "-:nodir", 0 },
{ "file-as-parent", "f:f", "f/new", AT2, 0, 0755, 0, ENOTDIR, NULL, -1, "F:f", 0 },
{ "empty-path", "", "", AT2, 0, 0755, 0, ENOENT, NULL, -1, "", 0 },
{ "name-too-long", "",
  "n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789"
  "n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789"
  "n123456789n123456789n123456789n123456789n123456789n123456",
  AT2, 0, 0755, 0, ENAMETOOLONG, NULL, -1, "", 0 },
{ "readonly-parent-root", "d:ro=0555", "ro/new", AT2, 0, 0755, 0, OK, "ro/new", 1, "D:ro/new", NEED_ROOT },
{ "readonly-parent-user", "d:ro=0555", "ro/new", AT2, 0, 0755, 0, EACCES, NULL, -1, "-:ro/new E:ro", NEED_USER },
{ "unsearchable-parent-user", "d:ns=0600", "ns/new", AT2, 0, 0755, 0, EACCES, NULL, -1, "", NEED_USER },
/* rule 2: mode */
{ "mode-setuid-setgid-dropped", "", "new", AT2, 0, 06755, 0, OK, "new", 1, "M:new=0755", 0 },
{ "mode-sticky-kept-umask-applied", "", "new", AT2, 0, 01777, 0, OK, "new", 1, "M:new=1755", 0 },
{ "mode-setgid-inherited", "d:sg=2775", "sg/new", AT2, 0, 0755, 0, OK, "sg/new", 1, "M:sg/new=2755", 0 },
{ "mode-openat2-bad-bits", "", "new", AT2, 0, 0170755, 0, EINVAL, NULL, -1, "-:new", 0 },
{ "mode-openat-extra-bits-ignored", "", "new", AT, 0, 0170755, 0, OK, "new", 1, "M:new=0755", 0 },
/* rule 3: existing directory */
{ "existing-dir-opened", "d:a", "a", AT2, 0, 0755, 0, OK, "a", 0, "D:a", 0 },
{ "existing-dir-openat", "d:a", "a", AT, 0, 0755, 0, OK, "a", -1, "D:a", 0 },
{ "existing-dir-mode-untouched", "d:a=0711", "a", AT2, 0, 0755, 0, OK, "a", 0, "M:a=0711", 0 },
{ "existing-dir-excl", "d:a", "a", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "D:a", 0 },
/* rule 4: existing non-directory */
{ "existing-file", "f:f", "f", AT2, 0, 0755, 0, ENOTDIR, NULL, -1, "F:f", 0 },
{ "existing-file-excl", "f:f", "f", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "F:f", 0 },
{ "existing-fifo", "p:p", "p", AT2, O_NONBLOCK, 0755, 0, ENOTDIR, NULL, -1, "", 0 },
{ "existing-fifo-excl", "p:p", "p", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "", 0 },
/* rule 5: write access, before any walk */
{ "wronly-absent", "", "new", AT2, O_WRONLY, 0755, 0, ENOTDIR, NULL, -1, "-:new", 0 },
{ "rdwr-absent", "", "new", AT2, O_RDWR, 0755, 0, ENOTDIR, NULL, -1, "-:new", 0 },
{ "accmode3-absent", "", "new", AT, 3, 0755, 0, ENOTDIR, NULL, -1, "-:new", 0 },
{ "trunc-absent", "", "new", AT2, O_TRUNC, 0755, 0, ENOTDIR, NULL, -1, "-:new", 0 },
{ "wronly-existing-dir", "d:a", "a", AT, O_WRONLY, 0755, 0, ENOTDIR, NULL, -1, "E:a", 0 },
{ "rdwr-before-walk", "", "nodir/new", AT2, O_RDWR, 0755, 0, ENOTDIR, NULL, -1, "-:nodir", 0 },
/* rule 6 and flag checks */
{ "tmpfile-with-creat", "", ".", AT2, O_TMPFILE | O_RDWR, 0600, 0, EINVAL, NULL, -1, "", 0 },
{ "path-with-creat-openat2", "", "new", AT2, O_PATH, 0, 0, EINVAL, NULL, -1, "-:new", 0 },
{ "unknown-resolve-bit", "", "new", AT2, 0, 0755, 0x1000, EINVAL, NULL, -1, "-:new", 0 },
{ "beneath-and-in-root", "", "new", AT2, 0, 0755, R_BENEATH | R_IN_ROOT, EINVAL, NULL, -1, "-:new", 0 },
/* rule 7: trailing slashes */
{ "trailing-slash-created", "", "new/", AT2, 0, 0755, 0, OK, "new", 1, "D:new", 0 },
{ "trailing-slashes-created", "", "new//", AT2, 0, 0755, 0, OK, "new", 1, "D:new", 0 },
{ "trailing-slash-existing", "d:a", "a/", AT2, 0, 0755, 0, OK, "a", 0, "", 0 },
{ "trailing-slash-file", "f:f", "f/", AT2, 0, 0755, 0, ENOTDIR, NULL, -1, "F:f", 0 },
/* rule 8: ".", ".." and "/" */
{ "dot", "", ".", AT2, 0, 0755, 0, OK, ".", 0, "", 0 },
{ "dot-excl", "", ".", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "", 0 },
{ "dotdot", "d:a", "a/..", AT2, 0, 0755, 0, OK, ".", 0, "", 0 },
{ "dotdot-excl", "d:a", "a/..", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "", 0 },
{ "subdir-dot", "d:a", "a/.", AT, 0, 0755, 0, OK, "a", -1, "", 0 },
{ "root", "", "/", AT2, 0, 0755, 0, OK, "/", 0, "", 0 },
{ "root-excl", "", "//", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "", 0 },
{ "dot-missing-parent", "", "nodir/.", AT2, 0, 0755, 0, ENOENT, NULL, -1, "-:nodir", 0 },
/* rule 9: symlinks */
{ "symlink-to-dir", "d:a l:l>a", "l", AT2, 0, 0755, 0, OK, "a", 0, "L:l", 0 },
{ "symlink-to-dir-nofollow", "d:a l:l>a", "l", AT2, O_NOFOLLOW, 0755, 0, ENOTDIR, NULL, -1, "L:l", 0 },
{ "symlink-to-dir-excl", "d:a l:l>a", "l", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "L:l", 0 },
{ "symlink-dangling", "l:l>target", "l", AT2, 0, 0755, 0, EEXIST, NULL, -1, "L:l -:target", 0 },
{ "symlink-dangling-openat", "l:l>target", "l", AT, 0, 0755, 0, EEXIST, NULL, -1, "L:l -:target", 0 },
{ "symlink-dangling-excl", "l:l>target", "l", AT2, O_EXCL, 0755, 0, EEXIST, NULL, -1, "-:target", 0 },
{ "symlink-dangling-nofollow", "l:l>target", "l", AT2, O_NOFOLLOW, 0755, 0, ENOTDIR, NULL, -1, "-:target", 0 },
{ "symlink-chain-dangling", "l:l>m l:m>target", "l", AT2, 0, 0755, 0, EEXIST, NULL, -1, "-:target", 0 },
{ "symlink-dangling-absolute", "l:l>%D/target", "l", AT2, 0, 0755, 0, EEXIST, NULL, -1, "-:target", 0 },
{ "symlink-to-file", "f:f l:l>f", "l", AT2, 0, 0755, 0, ENOTDIR, NULL, -1, "F:f", 0 },
{ "symlink-loop", "l:l1>l2 l:l2>l1", "l1", AT2, 0, 0755, 0, ELOOP, NULL, -1, "", 0 },
{ "symlink-to-dotdot", "d:a l:a/up>..", "a/up", AT2, 0, 0755, 0, OK, ".", 0, "", 0 },
{ "interior-symlink", "d:a l:l>a", "l/new", AT2, 0, 0755, 0, OK, "a/new", 1, "D:a/new", 0 },
{ "interior-symlink-dangling", "l:l>nodir", "l/new", AT2, 0, 0755, 0, ENOENT, NULL, -1, "-:nodir", 0 },
{ "symlinks-40", "d:d chain:40", "s1", AT2, 0, 0755, 0, OK, "d", 0, "", 0 },
{ "symlinks-41", "d:d chain:41", "s1", AT2, 0, 0755, 0, ELOOP, NULL, -1, "", 0 },
{ "symlinks-41-interior", "d:d chain:41", "s1/new", AT2, 0, 0755, 0, ELOOP, NULL, -1, "-:d/new", 0 },
{ "magic-link-cwd", "", "/proc/self/cwd/new", AT2, 0, 0755, 0, OK, "new", 1, "D:new", 0 },
{ "magic-link-cwd-trailing", "", "/proc/self/cwd", AT2, 0, 0755, 0, OK, ".", 0, "", 0 },
{ "trailing-slash-symlink-nofollow", "d:a l:l>a", "l/", AT2, O_NOFOLLOW, 0755, 0, OK, "a", 0, "L:l", 0 },
{ "trailing-slash-dangling-nofollow", "l:l>target", "l/", AT2, O_NOFOLLOW, 0755, 0, EEXIST, NULL, -1, "-:target", 0 },
{ "root-excl-noatime", "", "/", AT2, O_EXCL | O_NOATIME, 0755, 0, EEXIST, NULL, -1, "", 0 },
/* rule 10: sticky parents */
{ "sticky-others-dir", "d:st=1777 d:st/x o:st/x=4242 o:st=0", "st/x", AT2, 0, 0755, 0, EACCES, NULL, -1, "D:st/x", NEED_ROOT_SETUP },
{ "sticky-group-writable", "d:st=1775 d:st/x o:st/x=4242 o:st=0", "st/x", AT2, 0, 0755, 0, EACCES, NULL, -1, "D:st/x", NEED_ROOT_SETUP },
{ "sticky-parent-owners-dir", "d:st=1777 d:st/x o:st/x=4242 o:st=4242", "st/x", AT2, 0, 0755, 0, OK, "st/x", 0, "", NEED_ROOT_SETUP },
{ "sticky-own-dir", "d:st=1777 d:st/x o:st=4242", "st/x", AT2, 0, 0755, 0, OK, "st/x", 0, "", NEED_ROOT_SETUP },
{ "sticky-not-writable-others", "d:st=1755 d:st/x o:st/x=4242 o:st=0", "st/x", AT2, 0, 0755, 0, OK, "st/x", 0, "", NEED_ROOT_SETUP },
{ "sticky-create-new", "d:st=1777 o:st=4242", "st/new", AT2, 0, 0755, 0, OK, "st/new", 1, "D:st/new", NEED_ROOT_SETUP },
/* fs.protected_symlinks: the kernel checks only the trailing link (the
 * parent's mode is recorded for the last component only); so must we. */
{ "protected-symlink-trailing", "d:a d:st=1777 l:st/l>../a o:st/l=4242 o:st=0", "st/l", AT2, 0, 0755, 0, EACCES, NULL, -1, "", NEED_ROOT_SETUP | NEED_PROT_LINKS },
{ "protected-symlink-interior", "d:a d:st=1777 l:st/l>../a o:st/l=4242 o:st=0", "st/l/new", AT2, 0, 0755, 0, OK, "a/new", 1, "D:a/new", NEED_ROOT_SETUP | NEED_PROT_LINKS },
{ "protected-symlink-interior-scoped", "d:a d:st=1777 l:st/l>../a o:st/l=4242 o:st=0", "st/l/new", AT2, 0, 0755, R_BENEATH, OK, "a/new", 1, "D:a/new", NEED_ROOT_SETUP | NEED_PROT_LINKS },
{ "protected-symlink-owner-ok", "d:a d:st=1777 l:st/l>../a o:st=0", "st/l", AT2, 0, 0755, 0, OK, "a", 0, "", 0 },
/* rule 11: scoping */
{ "beneath-created", "d:a", "a/new", AT2, 0, 0755, R_BENEATH, OK, "a/new", 1, "D:a/new", 0 },
{ "beneath-dotdot-inside", "d:a", "a/../new", AT2, 0, 0755, R_BENEATH, OK, "new", 1, "D:new", 0 },
{ "beneath-dotdot-escape", "", "../esc-beneath", AT2, 0, 0755, R_BENEATH, EXDEV, NULL, -1, "-:../esc-beneath", 0 },
{ "beneath-absolute", "", "%D/new", AT2, 0, 0755, R_BENEATH, EXDEV, NULL, -1, "-:new", 0 },
{ "beneath-absolute-symlink", "d:a l:l>%D/a", "l/new", AT2, 0, 0755, R_BENEATH, EXDEV, NULL, -1, "-:a/new", 0 },
{ "beneath-symlink-escape", "l:l>..", "l/esc-beneath-l", AT2, 0, 0755, R_BENEATH, EXDEV, NULL, -1, "-:../esc-beneath-l", 0 },
{ "beneath-trailing-symlink-escape", "l:l>../esc-beneath-t", "l", AT2, 0, 0755, R_BENEATH, EXDEV, NULL, -1, "-:../esc-beneath-t", 0 },
{ "beneath-dot", "", ".", AT2, 0, 0755, R_BENEATH, OK, ".", 0, "", 0 },
{ "beneath-dotdot-final", "", "..", AT2, 0, 0755, R_BENEATH, EXDEV, NULL, -1, "", 0 },
{ "in-root-dotdot-clamped", "", "../../new", AT2, 0, 0755, R_IN_ROOT, OK, "new", 1, "D:new", 0 },
{ "in-root-absolute", "", "/new", AT2, 0, 0755, R_IN_ROOT, OK, "new", 1, "D:new", 0 },
{ "in-root-slash", "", "/", AT2, 0, 0755, R_IN_ROOT, OK, ".", 0, "", 0 },
{ "in-root-absolute-symlink", "d:a l:l>/a", "l/new", AT2, 0, 0755, R_IN_ROOT, OK, "a/new", 1, "D:a/new", 0 },
{ "in-root-trailing-absolute-symlink", "d:a l:l>/a", "l", AT2, 0, 0755, R_IN_ROOT, OK, "a", 0, "", 0 },
{ "in-root-dangling-absolute-symlink", "l:l>/ocdir-in-root-dangling", "l", AT2, 0, 0755, R_IN_ROOT, EEXIST, NULL, -1, "-:ocdir-in-root-dangling -:/ocdir-in-root-dangling", 0 },
{ "in-root-symlink-dotdot", "l:l>../../..", "l/new", AT2, 0, 0755, R_IN_ROOT, OK, "new", 1, "D:new", 0 },
{ "no-symlinks-interior", "d:a l:l>a", "l/new", AT2, 0, 0755, R_NO_SYMLINKS, ELOOP, NULL, -1, "-:a/new", 0 },
{ "no-symlinks-trailing", "d:a l:l>a", "l", AT2, 0, 0755, R_NO_SYMLINKS, ELOOP, NULL, -1, "", 0 },
{ "no-symlinks-plain", "d:a", "a/new", AT2, 0, 0755, R_NO_SYMLINKS, OK, "a/new", 1, "D:a/new", 0 },
{ "no-magiclinks-interior", "", "/proc/self/cwd/new", AT2, 0, 0755, R_NO_MAGIC, ELOOP, NULL, -1, "-:new", 0 },
{ "no-magiclinks-trailing", "", "/proc/self/cwd", AT2, 0, 0755, R_NO_MAGIC, ELOOP, NULL, -1, "", 0 },
{ "no-magiclinks-plain-symlink", "d:a l:l>a", "l/new", AT2, 0, 0755, R_NO_MAGIC, OK, "a/new", 1, "D:a/new", 0 },
{ "no-xdev-absolute-symlink-interior", "d:a l:l>%D/a", "l/new", AT2, 0, 0755, R_NO_XDEV, EXDEV, NULL, -1, "-:a/new", 0 },
{ "no-xdev-absolute-symlink-trailing", "d:a l:l>%D/a", "l", AT2, 0, 0755, R_NO_XDEV, EXDEV, NULL, -1, "", 0 },
{ "no-xdev-plain", "d:a", "a/new", AT2, 0, 0755, R_NO_XDEV, OK, "a/new", 1, "D:a/new", 0 },
{ "no-xdev-into-mount", "m:mnt", "mnt/new", AT2, 0, 0755, R_NO_XDEV, EXDEV, NULL, -1, "-:mnt/new", NEED_MOUNT },
{ "no-xdev-mountpoint-final", "m:mnt", "mnt", AT2, 0, 0755, R_NO_XDEV, EXDEV, NULL, -1, "", NEED_MOUNT },
{ "no-xdev-dotdot-out-of-mount", "m:mnt", "mnt/../new", AT2, 0, 0755, R_NO_XDEV, EXDEV, NULL, -1, "-:new", NEED_MOUNT },
{ "mount-crossed-without-no-xdev", "m:mnt", "mnt/new", AT2, 0, 0755, 0, OK, "mnt/new", 1, "D:mnt/new", NEED_MOUNT },
{ "beneath-into-mount", "m:mnt", "mnt/new", AT2, 0, 0755, R_BENEATH, OK, "mnt/new", 1, "D:mnt/new", NEED_MOUNT },
};

#endif /* OCDIR_CONFORMANCE_CASES_H */
