/* SPDX-License-Identifier: MIT */
/*
 * lib/emulate.c - create-or-open a directory in userspace with the errno
 * values of the native kernel call (SPEC section 2, rules 3-10).
 *
 * A new directory is made inside a private staging directory next to the
 * target, opened there, and only then renamed onto the final name with
 * RENAME_NOREPLACE: the descriptor is provably the directory we made, and
 * the name never shows a half-made directory. See docs/library.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define OC_RACE_RETRIES 8

int oc_is_dot_name(const char *last)
{
	return !strcmp(last, ".") || !strcmp(last, "..") || !strcmp(last, "/");
}

/*
 * Split `path` into the directory to look the last component up in and the
 * last component, trailing slashes dropped. "/" (or "//") gives last "/"
 * and no parent; "name" gives parent "./.", "a/b" parent "a/.". Both
 * strings are malloc'ed.
 */
int oc_split_path(const char *path, char **parent, char **last)
{
	size_t len = strlen(path), cut;

	*parent = NULL;
	*last = NULL;
	if (!len)
		return -ENOENT;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 1 && path[0] == '/') {
		*last = strdup("/");
		return *last ? 0 : -ENOMEM;
	}
	cut = len;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	*last = strndup(path + cut, len - cut);
	/*
	 * The parent ends in "/." so that its own last component is walked as
	 * an interior one, as in the full path: the kernel checks
	 * fs.protected_symlinks only for a trailing symlink.
	 */
	*parent = malloc(cut + 4);
	if (*parent) {
		memcpy(*parent, path, cut);
		memcpy(*parent + cut, cut ? "." : "./.", cut ? 2 : 4);
	}
	if (!*last || !*parent) {
		free(*last);
		free(*parent);
		*last = *parent = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void stage_name(char *buf, size_t size)
{
	unsigned long long rnd;
	struct timespec ts;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rnd = (unsigned long long)ts.tv_nsec * 2654435761ULL ^
		      (unsigned long long)ts.tv_sec;
	}
	snprintf(buf, size, ".ocdir-stage.%d.%016llx", (int)getpid(), rnd);
}

/*
 * Already 0700 with no access ACL (the usual umask case)? Then a chmod
 * would only risk losing an inherited setgid bit for nothing: chmod(2)
 * clears it when the caller is not in the directory's group.
 */
static int stage_is_private(int fd, const struct stat *st)
{
	if ((st->st_mode & 0777) != 0700)
		return 0;
	if (fgetxattr(fd, "system.posix_acl_access", NULL, 0) >= 0)
		return 0;
	return errno == ENODATA || errno == ENOTSUP;
}

/*
 * Make the private staging directory in parentfd. Someone who can write to
 * the parent may swap it between mkdirat and openat, so the opened directory
 * must be ours (owner) and is then made 0700 through the descriptor, which
 * also empties the ACL mask. A swapped-in impostor is left alone and a new
 * name is tried.
 */
int oc_stage_create(int parentfd, int *stagefd, char *name, size_t size)
{
	struct stat st;
	int i, fd, r;

	for (i = 0; i < OC_RACE_RETRIES; i++) {
		stage_name(name, size);
		if (mkdirat(parentfd, name, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		fd = oc_openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd == -EACCES)	/* umask took the owner's bits */
			fd = oc_openat(parentfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP)
			continue;
		if (fd < 0) {
			unlinkat(parentfd, name, AT_REMOVEDIR);
			return fd;
		}
		if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != oc_fsuid()) {
			close(fd);
			continue;
		}
		r = 0;
		if (!stage_is_private(fd, &st)) {
			/* Keep setgid: the new directory must inherit it from here. */
			mode_t m = 0700 | (st.st_mode & S_ISGID);

			r = fchmod(fd, m);
			if (r < 0 && errno == EBADF) {	/* O_PATH: go through /proc */
				char proc[64];

				snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
				r = chmod(proc, m);
			}
		}
		if (r < 0) {
			r = -errno;
			close(fd);
			unlinkat(parentfd, name, AT_REMOVEDIR);
			return r;
		}
		*stagefd = fd;
		return 0;
	}
	return -EAGAIN;
}

void oc_stage_remove(int parentfd, int stagefd, const char *name)
{
	close(stagefd);
	unlinkat(parentfd, name, AT_REMOVEDIR);
}

/*
 * mkdirat + open with O_NOFOLLOW. The native call needs no permission on
 * the new directory itself; here the owner may lack read permission (to
 * open it) or write permission (to rename it to another parent, which
 * updates its ".."). Such permission is lent through a chmod and given
 * back: at once if keep_lent is NULL, else by the caller after its rename
 * (*keep_lent is then the mode to restore, or (mode_t)-1 if none was lent).
 * If the open fails the new directory is removed again.
 *
 * A chmod by a caller outside the directory's group (without CAP_FSETID)
 * clears the setgid bit the directory inherited (setattr_prepare()), and
 * nothing unprivileged can set it again. So lending is never allowed to
 * cost that bit: with keep_lent NULL such a directory is removed and the
 * call fails with EACCES (its owner may not read it: there is no way to
 * open it and keep its mode); with keep_lent the caller learns it from
 * the fd's mode and can make the directory elsewhere without lending.
 */
int oc_mkdir_open(int dirfd, const char *name, mode_t mode, int oflags,
		  mode_t *keep_lent)
{
	mode_t need = keep_lent ? S_IRUSR | S_IWUSR : S_IRUSR, orig = (mode_t)-1;
	int fd, saved;
	struct stat st;

	if (keep_lent)
		*keep_lent = (mode_t)-1;
	if (mkdirat(dirfd, name, mode) < 0)
		return -errno;
	oflags |= O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
	/* Decided by the mode, not by euid 0: root may lack CAP_DAC_OVERRIDE. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_uid == oc_fsuid() &&
	    (st.st_mode & need) != need) {
		if (fchmodat(dirfd, name, (st.st_mode & 07777) | need, 0) == 0)
			orig = st.st_mode & 07777;
	}
	fd = oc_openat(dirfd, name, oflags, 0);
	if (fd >= 0 && orig != (mode_t)-1) {
		if (keep_lent) {
			*keep_lent = orig;
		} else if (fchmod(fd, orig) < 0) {
			saved = -errno;
			close(fd);
			fd = saved;
		} else if ((orig & S_ISGID) &&
			   (fstat(fd, &st) < 0 || !(st.st_mode & S_ISGID))) {
			close(fd);
			fd = -EACCES;
		}
	}
	if (fd < 0)
		unlinkat(dirfd, name, AT_REMOVEDIR);
	return fd;
}

/*
 * Where RENAME_NOREPLACE is refused: mkdirat + openat(O_NOFOLLOW), then
 * check that the name still leads to the directory we opened and that it is
 * ours. Weaker: between the two calls the name can be swapped for another
 * directory of ours, and the new directory is visible before it is opened.
 * -EEXIST tells the caller to look at the name again.
 */
static int create_weak(int parentfd, const char *last, const struct oc_req *req,
		       int oflags)
{
	struct stat byfd, byname;
	int fd;

	fd = oc_mkdir_open(parentfd, last, req->mode, oflags, NULL);
	if (fd < 0)
		return fd;
	if (fstat(fd, &byfd) < 0 || byfd.st_uid != oc_fsuid() ||
	    fstatat(parentfd, last, &byname, AT_SYMLINK_NOFOLLOW) < 0 ||
	    byname.st_dev != byfd.st_dev || byname.st_ino != byfd.st_ino) {
		close(fd);
		return -EEXIST;
	}
	return fd;
}

/*
 * Whether only the caller and root can move or replace what the caller
 * makes in this parent: it belongs to one of them, and nobody else may
 * write to it, or it is sticky (then only its owner and the entry's owner
 * may rename or remove an entry). Group write counts as "somebody else":
 * with an access ACL the group bits are its mask, which bounds every
 * named entry. There create_weak() cannot be fooled, since a swap needs
 * write access to the parent.
 */
static int parent_is_private(const struct stat *parent)
{
	uid_t me = oc_fsuid();

	if (parent->st_uid != me && parent->st_uid != 0)
		return 0;
	return !(parent->st_mode & (S_IWGRP | S_IWOTH)) || (parent->st_mode & S_ISVTX);
}

/* Absent name: make it in staging, open it, rename it into place. */
static int create_staged(int parentfd, const char *last, const struct oc_req *req,
			 int oflags)
{
	char stagename[64];
	int stagefd, fd, r;
	struct stat st, pst;
	int have_pst = fstat(parentfd, &pst) == 0;
	mode_t lent;

	/* the faster path where nobody else could swap the new directory */
	if (req->fast && have_pst && parent_is_private(&pst))
		return create_weak(parentfd, last, req, oflags);
	r = oc_stage_create(parentfd, &stagefd, stagename, sizeof(stagename));
	if (r)
		return r;
	/*
	 * The staging directory must carry the parent's setgid bit on to the
	 * new directory. If making it usable took a chmod (a umask without
	 * owner bits, an access ACL) by a caller outside the parent's group,
	 * that chmod cleared the bit: create in the parent itself instead.
	 */
	if (have_pst && (pst.st_mode & S_ISGID) &&
	    fstat(stagefd, &st) == 0 && !(st.st_mode & S_ISGID)) {
		oc_stage_remove(parentfd, stagefd, stagename);
		return create_weak(parentfd, last, req, oflags);
	}
	fd = oc_mkdir_open(stagefd, last, req->mode, oflags, &lent);
	if (fd < 0) {
		oc_stage_remove(parentfd, stagefd, stagename);
		return fd;
	}
	/*
	 * Lending permission cost the inherited setgid bit (a chmod by a
	 * caller outside the group clears it) and giving it back cannot
	 * restore it. The mkdirat + openat path keeps it: it lends nothing
	 * when the owner may read the directory, and fails with EACCES
	 * (nothing left) when it may not (see oc_mkdir_open()).
	 */
	if (lent != (mode_t)-1 && (lent & S_ISGID) &&
	    fstat(fd, &st) == 0 && !(st.st_mode & S_ISGID)) {
		close(fd);
		unlinkat(stagefd, last, AT_REMOVEDIR);
		oc_stage_remove(parentfd, stagefd, stagename);
		return create_weak(parentfd, last, req, oflags);
	}
	r = oc_renameat2(stagefd, last, parentfd, last, RENAME_NOREPLACE);
	if (r == 0 && lent != (mode_t)-1 && fchmod(fd, lent) < 0) {
		/* Published but with the wrong mode: take it back. */
		r = -errno;
		if (oc_renameat2(parentfd, last, stagefd, last, RENAME_NOREPLACE) < 0) {
			close(fd);
			oc_stage_remove(parentfd, stagefd, stagename);
			return r;
		}
	}
	if (r < 0) {
		unlinkat(stagefd, last, AT_REMOVEDIR);
		close(fd);
		oc_stage_remove(parentfd, stagefd, stagename);
		if (r == -EINVAL || r == -ENOSYS)
			return create_weak(parentfd, last, req, oflags);
		return r;
	}
	oc_stage_remove(parentfd, stagefd, stagename);
	return fd;
}

/*
 * Rule 10: a pre-existing directory in a sticky, world- or group-writable
 * parent opens only for the parent's owner's or the caller's directories.
 */
static int sticky_denied(int parentfd, int fd)
{
	struct stat p, d;

	if (fstat(parentfd, &p) < 0 || fstat(fd, &d) < 0)
		return 0;
	if (!(p.st_mode & S_ISVTX) || !(p.st_mode & (S_IWOTH | S_IWGRP)))
		return 0;
	return d.st_uid != p.st_uid && d.st_uid != oc_fsuid();
}

static char *join_link(const char *parent, const char *target)
{
	size_t pl, tl = strlen(target);
	char *s;

	if (target[0] == '/' || !parent)
		return strdup(target);
	pl = strlen(parent);
	s = malloc(pl + tl + 2);
	if (!s)
		return NULL;
	memcpy(s, parent, pl);
	s[pl] = '/';
	memcpy(s + pl + 1, target, tl + 1);
	return s;
}

static int emulate_at(int dirfd, const char *path, const struct oc_req *req,
		      int *created, int via_link, int *links);

/*
 * Does the walk to the parent meet ".."? The kernel's handle_dots() sets
 * the walk's root there (set_root()), which decides how RESOLVE_NO_XDEV
 * treats a later absolute symlink (see follow_last()).
 */
static int has_dotdot(const char *p)
{
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 1;
		p += n;
		while (*p == '/')
			p++;
	}
	return 0;
}

/* The last component is a symlink and may be followed: follow it by text. */
static int follow_last(int dirfd, int parentfd, const char *parent,
		       const char *last, const struct oc_req *req, int *created,
		       int oflags, int *links, int trailing_slash, int root_set)
{
	char target[PATH_MAX], *next;
	ssize_t n;
	int fd, r;

	fd = oc_openat(parentfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	/*
	 * The kernel's order (pick_link()): the link count, then
	 * fs.protected_symlinks for a trailing link, then RESOLVE_NO_SYMLINKS.
	 */
	r = ++*links > OC_MAX_SYMLINKS ? -ELOOP : oc_may_follow(parentfd, fd);
	if (!r && (req->resolve & OCDIR_RESOLVE_NO_SYMLINKS))
		r = -ELOOP;
	if (r) {
		close(fd);
		return r;
	}
	n = oc_read_link(fd, target, sizeof(target));
	if (n < 0) {
		close(fd);
		return (int)n;
	}
	if (oc_is_magic_link(parentfd, target)) {
		close(fd);
		if (req->resolve & OCDIR_RESOLVE_NO_MAGICLINKS)
			return -ELOOP;
		if (req->resolve & OC_RESOLVE_SCOPED)
			return -EXDEV;
		/* Only the kernel can follow it; nothing is created through it. */
		r = oc_scoped_open(parentfd, last, O_RDONLY | O_DIRECTORY | oflags,
				   req->resolve);
		if (r == -ENOENT)
			r = -EEXIST;
		if (r >= 0 && created)
			*created = 0;
		return r;
	}
	close(fd);
	if (n == 0)
		return -ENOENT;
	/*
	 * An absolute link jumps to the root: under NO_XDEV that is a crossing
	 * unless the root is already set (IN_ROOT, an absolute path, or a ".."
	 * on the way) and on the link's mount, as in the kernel's
	 * nd_jump_root().
	 */
	if (target[0] == '/' && (req->resolve & OCDIR_RESOLVE_NO_XDEV) &&
	    !(req->resolve & OC_RESOLVE_SCOPED) && !root_set)
		return -EXDEV;
	if (target[0] == '/' && (req->resolve & OCDIR_RESOLVE_NO_XDEV) &&
	    !(req->resolve & OCDIR_RESOLVE_BENEATH)) {
		uint64_t here, there;
		int rootfd = req->resolve & OCDIR_RESOLVE_IN_ROOT ? dirfd : AT_FDCWD;

		fd = oc_openat(rootfd, req->resolve & OCDIR_RESOLVE_IN_ROOT ? "." : "/",
			       O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		if (fd < 0)
			return fd;
		r = oc_mount_id(parentfd, &here);
		if (!r)
			r = oc_mount_id(fd, &there);
		close(fd);
		if (r)
			return r;
		if (here != there)
			return -EXDEV;
	}
	/* Keep the trailing slash: the whole chain is followed then. */
	if (trailing_slash && (size_t)n + 1 < sizeof(target)) {
		target[n] = '/';
		target[n + 1] = '\0';
	}
	next = join_link(parent, target);
	if (!next)
		return -ENOMEM;
	r = emulate_at(dirfd, next, req, created, 1, links);
	free(next);
	return r;
}

static int emulate_at(int dirfd, const char *path, const struct oc_req *req,
		      int *created, int via_link, int *links)
{
	int oflags = (req->flags & ~(O_EXCL | O_NOFOLLOW)) | req->cloexec;
	int excl = !!(req->flags & O_EXCL);
	char *parent, *last;
	int parentfd, pathfd, fd, i, r, trailing_slash;
	struct stat st;

	r = oc_split_path(path, &parent, &last);
	if (r)
		return r;
	trailing_slash = path[strlen(path) - 1] == '/';

	/*
	 * Rule 8: ".", ".." and "/" exist by definition; nothing is made.
	 * With O_EXCL only the walk may fail: nothing is opened for real, so
	 * flags such as O_NOATIME or O_DIRECT cannot turn EEXIST into another
	 * error.
	 */
	if (oc_is_dot_name(last)) {
		fd = oc_scoped_open(dirfd, path,
				    excl ? O_PATH | O_DIRECTORY | O_CLOEXEC :
					   O_RDONLY | O_DIRECTORY | oflags,
				    req->resolve);
		if (fd >= 0 && excl) {
			close(fd);
			fd = -EEXIST;
		}
		if (fd >= 0 && created)
			*created = 0;
		goto out_free;
	}

	parentfd = oc_scoped_open(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				  req->resolve);
	if (parentfd < 0) {
		fd = parentfd;
		goto out_free;
	}
	fd = -EAGAIN;
	for (i = 0; i < OC_RACE_RETRIES; i++) {
		if (fstatat(parentfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT) {
				fd = -errno;
				break;
			}
			/* Rule 9: never create through a symlink. */
			if (via_link) {
				fd = -EEXIST;
				break;
			}
			fd = create_staged(parentfd, last, req, oflags);
			if (fd == -EEXIST && !excl)
				continue;	/* someone else made it: open theirs */
			if (fd >= 0 && created)
				*created = 1;
			break;
		}
		if (excl) {
			fd = -EEXIST;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			/* A trailing slash makes the kernel follow it regardless. */
			if ((req->flags & O_NOFOLLOW) && !trailing_slash) {
				fd = -ENOTDIR;
				break;
			}
			fd = follow_last(dirfd, parentfd, parent, last, req,
					 created, oflags, links, trailing_slash,
					 path[0] == '/' || has_dotdot(parent));
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			fd = -ENOTDIR;
			break;
		}
		/*
		 * Pin it with O_PATH first: rule 10 is checked before the open
		 * proper, as the kernel does, so that e.g. O_DIRECT or O_NOATIME
		 * cannot answer in its place.
		 */
		pathfd = oc_scoped_open(parentfd, last,
					O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
					req->resolve);
		/* Removed or replaced since the fstatat: look again. */
		if (pathfd == -ENOENT || pathfd == -ENOTDIR) {
			fd = -EAGAIN;
			continue;
		}
		if (pathfd < 0) {
			fd = pathfd;
			break;
		}
		if (sticky_denied(parentfd, pathfd))
			fd = -EACCES;
		else
			fd = oc_openat(pathfd, ".", O_RDONLY | O_DIRECTORY | oflags, 0);
		close(pathfd);
		if (fd >= 0 && created)
			*created = 0;
		break;
	}
	close(parentfd);
out_free:
	free(parent);
	free(last);
	return fd;
}

int oc_emulate(int dirfd, const char *path, const struct oc_req *req,
	       int *created)
{
	int links = 0;

	return emulate_at(dirfd, path, req, created, 0, &links);
}
