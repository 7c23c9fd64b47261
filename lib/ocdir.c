/* SPDX-License-Identifier: MIT */
/*
 * lib/ocdir.c - the public create-or-open calls: argument checks, the
 * choice between the native kernel call and the emulation, and the one
 * place where -errno becomes -1 + errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define OC_VALID_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | \
			O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_ASYNC | \
			O_DIRECT | OC_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | \
			O_NOATIME | O_CLOEXEC | O_PATH | OC_O_TMPFILE)

static int oc_result(int r)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/*
 * Check a request (path and how; path NULL is EFAULT, as for every call)
 * in the order the kernel's build_open_flags() does, so that a request
 * with two faults gets the same errno from both backends.
 */
int oc_check_how(const char *path, const struct ocdir_how *how, size_t size,
		 int checks, struct oc_req *req)
{
	uint64_t flags;
	size_t i;

	if (!path || !how)
		return -EFAULT;
	if (size < OCDIR_HOW_SIZE_VER0)
		return -EINVAL;
	/* As openat2(2): nobody needs more than a page of zeros. */
	if (size > OC_HOW_SIZE_MAX)
		return -E2BIG;
	/* A newer caller's fields we do not know must be unused. */
	for (i = sizeof(*how); i < size; i++)
		if (((const unsigned char *)how)[i])
			return -E2BIG;
	flags = how->flags;
	if (flags & ~(uint64_t)(unsigned int)OC_VALID_FLAGS)
		return -EINVAL;
	if (how->resolve & ~OC_RESOLVE_ALL)
		return -EINVAL;
	if ((how->resolve & OC_RESOLVE_SCOPED) == OC_RESOLVE_SCOPED)
		return -EINVAL;
	if ((checks & OC_HOW_OPENAT2) && (how->mode & ~(uint64_t)07777))
		return -EINVAL;
	if (how->options & ~(OCDIR_NO_CLOEXEC | OCDIR_FAST_EMULATION |
			     OCDIR_ALLOW_WEAK_EMULATION | OCDIR_ALWAYS_STAGE))
		return -EINVAL;
	/*
	 * O_PATH never creates (openat2 rejects O_PATH|O_CREAT). mkpath takes
	 * it as "no readable descriptor needed": see oc_create_or_open_path.
	 */
	req->path_only = 0;
	if ((flags & O_PATH) && (checks & OC_HOW_PATH_OK)) {
		flags &= ~(uint64_t)O_PATH;
		req->path_only = 1;
	}
	if (flags & O_PATH)
		return -EINVAL;
	/* Rule 6: O_CREAT|O_TMPFILE once created regular files. */
	if (flags & OC_O_TMPFILE)
		return -EINVAL;
	/*
	 * A directory fd has no use for O_DIRECT, and most filesystems would
	 * refuse it only after the directory was made: the patched kernel
	 * refuses O_CREAT|O_DIRECTORY|O_DIRECT before the walk, and so does
	 * every backend here, whatever the kernel.
	 */
	if (flags & O_DIRECT)
		return -EINVAL;
	/* Rule 5: a directory is never opened for writing. */
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return -ENOTDIR;
	req->flags = (int)(flags & ~(uint64_t)(O_CREAT | O_DIRECTORY | O_CLOEXEC));
	req->mode = (mode_t)(how->mode & (S_IRWXU | S_IRWXG | S_IRWXO | S_ISVTX));
	req->resolve = how->resolve;
	req->allow_weak = !!(how->options & OCDIR_ALLOW_WEAK_EMULATION);
	req->always_stage = !!(how->options & OCDIR_ALWAYS_STAGE);
	req->no_create = 0;
	if (how->options & OCDIR_NO_CLOEXEC)
		req->cloexec = (int)(flags & O_CLOEXEC);
	else
		req->cloexec = O_CLOEXEC;
	return 0;
}

static int native_call(int dirfd, const char *path, const struct oc_req *req,
		       int flags)
{
	if (req->resolve)
		return oc_openat2_retry(dirfd, path, (unsigned int)flags,
					req->mode, req->resolve);
	return oc_openat(dirfd, path, flags, req->mode);
}

/*
 * Whether the kernel created the directory: F_CREATED_QUERY (6.12) asks
 * the one descriptor. Without it, O_EXCL first tells; an EEXIST there
 * (symlink, existing directory, ".") is followed by the call without
 * O_EXCL, which gives the answer rules 3-9 ask for (a directory removed
 * and made again by someone else between the two is reported as 0).
 */
static int native_open(int dirfd, const char *path, const struct oc_req *req,
		       int *created)
{
	int flags = req->flags | O_CREAT | O_DIRECTORY | req->cloexec;
	int fd, r;

	if (!created)
		return native_call(dirfd, path, req, flags);
	if (oc_config()->created_query) {
		fd = native_call(dirfd, path, req, flags);
		if (fd < 0)
			return fd;
		r = oc_created_query(fd);
		if (r < 0) {
			close(fd);
			return r;
		}
		*created = r;
		return fd;
	}
	fd = native_call(dirfd, path, req, flags | O_EXCL);
	if (fd >= 0) {
		*created = 1;
		return fd;
	}
	if (fd != -EEXIST || (flags & O_EXCL))
		return fd;
	fd = native_call(dirfd, path, req, flags);
	if (fd >= 0)
		*created = 0;
	return fd;
}

int oc_create_or_open(int dirfd, const char *path, const struct oc_req *req,
		      int *created)
{
	const struct oc_config *c = oc_config();
	int r;

	if (c->native && !(req->resolve && (c->force_resolver || oc_openat2_missing()))) {
		r = native_open(dirfd, path, req, created);
		/*
		 * The kernel creates on every filesystem (rule 13).  ENOSYS/EPERM
		 * (seccomp) and a persistent EAGAIN: the emulation.
		 */
		if (!(req->resolve && (r == -ENOSYS || r == -EPERM || r == -EAGAIN)))
			return r;
		if (req->resolve && r == -ENOSYS)
			oc_set_openat2_missing();
	}
	return oc_emulate(dirfd, path, req, created);
}

/*
 * oc_create_or_open() for callers that need no readable descriptor
 * (ocdir_mkdirat, ocdir_mkpath with O_PATH): an existing directory the
 * caller may search but not read (0711 and someone else's) is accepted, as
 * mkdir -p accepts it. The emulation opens it O_PATH, by the same rules
 * (a directory, the sticky rule, trailing symlinks); a directory the call
 * creates is opened as usual.
 */
int oc_create_or_open_path(int dirfd, const char *path,
			   const struct oc_req *req, int *created)
{
	struct oc_req pathreq = *req;
	int r = oc_create_or_open(dirfd, path, req, created);

	if (r != -EACCES || !req->path_only)
		return r;
	pathreq.flags |= O_PATH;
	return oc_emulate(dirfd, path, &pathreq, created);
}

OC_EXPORT int ocdir_openat2(int dirfd, const char *path,
			    const struct ocdir_how *how, size_t size,
			    int *created)
{
	struct oc_req req;
	int r, made = 0;

	r = oc_check_how(path, how, size, OC_HOW_OPENAT2, &req);
	if (r)
		return oc_result(r);
	/* Without a created pointer the native backend needs only one call. */
	r = oc_create_or_open(dirfd, path, &req, created ? &made : NULL);
	if (r >= 0 && created)
		*created = made;
	return oc_result(oc_test_swap_after(dirfd, path, r));
}

OC_EXPORT int ocdir_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	struct ocdir_how how = {
		.flags = (unsigned int)flags,
		.mode = mode & 07777,	/* open(2) ignores the rest */
	};
	struct oc_req req;
	int r;

	r = oc_check_how(path, &how, sizeof(how), 0, &req);
	if (r)
		return oc_result(r);
	r = oc_create_or_open(dirfd, path, &req, NULL);
	return oc_result(oc_test_swap_after(dirfd, path, r));
}

/* ---- create, no descriptor ---- */

OC_EXPORT int ocdir_mkdirat(int dirfd, const char *path,
			    const struct ocdir_how *how, size_t size)
{
	struct oc_req req;
	int r, made = 0;

	r = oc_check_how(path, how, size, OC_HOW_OPENAT2, &req);
	if (r)
		return oc_result(r);
	req.path_only = 1;	/* no descriptor is handed out */
	/*
	 * Nothing is done to the new directory after mkdir(2) made it, so
	 * there is no window to protect: unscoped, the system call is the
	 * whole job. Only a name that exists needs the rules of
	 * ocdir_openat2 (a directory, the sticky rule, a trailing symlink).
	 */
	if (!req.resolve && *path) {
		if (mkdirat(dirfd, path, req.mode) == 0)
			return 1;
		if (errno != EEXIST || (req.flags & O_EXCL))
			return oc_result(-errno);
	}
	r = oc_create_or_open_path(dirfd, path, &req, &made);
	if (r < 0)
		return oc_result(r);
	close(r);
	return made;
}

/* ---- mkdir -p ---- */

struct level {
	int created;
	const char *name;	/* points into the component copy */
	struct stat self;	/* created only: the directory made */
	struct stat parent;	/* created only: the directory it was made in */
};

/*
 * The directory level d was made in, found again from the start of the
 * walk as the walk found it (scoped: by its prefix from dirfd; unscoped:
 * a level at a time from startfd), as an O_PATH descriptor, or -errno.
 * The caller checks it against what it recorded: whatever this finds,
 * nothing is removed that is not the directory the call made.
 */
static int mkpath_reach_parent(const struct level *lv, size_t d, int startfd,
			       int scoped, int absolute, uint64_t resolve)
{
	const int flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	size_t i, len = 2;
	char *prefix;
	int cur, next;

	if (!scoped) {
		cur = oc_openat(startfd, ".", flags, 0);
		for (i = 0; i < d && cur >= 0; i++) {
			next = oc_scoped_open(cur, lv[i].name, flags, resolve);
			close(cur);
			cur = next;
		}
		return cur;
	}
	for (i = 0; i < d; i++)
		len += strlen(lv[i].name) + 1;
	prefix = malloc(len);
	if (!prefix)
		return -ENOMEM;
	strcpy(prefix, absolute ? "/" : "");
	for (i = 0; i < d; i++) {
		if (i)
			strcat(prefix, "/");
		strcat(prefix, lv[i].name);
	}
	if (!*prefix)
		strcpy(prefix, ".");
	cur = oc_scoped_open(startfd, prefix, flags, resolve);
	free(prefix);
	return cur;
}

/* Remove level d from parent, if parent and the name still are what it was. */
static void mkpath_remove(const struct level *l, int parent)
{
	struct stat st;

	if (fstat(parent, &st) == 0 && oc_same_inode(&st, &l->parent) &&
	    fstatat(parent, l->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    oc_same_inode(&st, &l->self))
		unlinkat(parent, l->name, AT_REMOVEDIR);
}

/*
 * Remove what this call created, deepest first, while still empty and at
 * the name where it was made. No descriptor per level is held: from
 * deepfd (the deepest level made, at index d) each parent is reached
 * through "..", which must be the directory the level was made in, and a
 * level is removed only while its name there still leads to it; that
 * chain ends at the first level above that this call did not make.
 * Levels made before a ".." ("n1/../n2/x": n1) are not on that chain:
 * each such one is reached again from the start of the walk
 * (mkpath_reach_parent()), checked the same way. Three descriptors of its
 * own at the most.
 */
static void mkpath_rollback(const struct level *lv, size_t d, int deepfd,
			    int startfd, int scoped, int absolute, uint64_t resolve)
{
	struct stat st;
	int cur = deepfd, up;

	for (;;) {
		up = oc_openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		if (cur != deepfd)
			close(cur);
		if (up < 0)
			break;
		if (fstat(up, &st) < 0 || !oc_same_inode(&st, &lv[d].parent)) {
			close(up);
			break;
		}
		mkpath_remove(&lv[d], up);
		if (!d || !lv[d - 1].created) {
			close(up);
			break;
		}
		cur = up;
		d--;
	}
	/* Made before a "..", each from its parent found again: d is done. */
	while (d--) {
		if (!lv[d].created)
			continue;
		up = mkpath_reach_parent(lv, d, startfd, scoped, absolute, resolve);
		if (up < 0)
			continue;
		mkpath_remove(&lv[d], up);
		close(up);
	}
}

/*
 * mkdir -p gives the intermediate directories it makes u+wx whatever the
 * umask, so that it can go on below them. Through the descriptor.
 */
static int add_owner_wx(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR))
		return 0;
	return oc_chmod_fd(fd, (st.st_mode & 07777) | S_IWUSR | S_IXUSR);
}

/*
 * Rule 10 for an existing level that mkpath passes through. mkpath would
 * have made it had it been absent, so it is "created or opened" as the
 * leaf is: another user's directory in a sticky, world- or group-writable
 * parent is refused there as at the leaf (-EACCES), else a directory
 * planted in /tmp, and anything planted inside it, would be accepted one
 * level up from the leaf. The level's parent is the one its ".." shows
 * (where a symlink led, across a mount); the walk's own start (startfd,
 * AT_FDCWD for the working directory) is the caller's choice and is never
 * refused. Returns 0 or -errno.
 */
static int level_sticky_check(int fd, int startfd)
{
	struct stat d, p, s;

	if (fstat(fd, &d) < 0)
		return -errno;
	if (d.st_uid == oc_fsuid())
		return 0;	/* the common case: one fstat */
	if (fstatat(fd, "..", &p, 0) < 0)
		return -errno;	/* no search permission in it: so would the next step */
	if (!oc_sticky_denied(&p, &d))
		return 0;
	if (fstatat(startfd, "", &s, AT_EMPTY_PATH) == 0 && oc_same_inode(&s, &d))
		return 0;
	return -EACCES;
}

/*
 * Hand an intermediate level this call made to the caller's setup, with
 * the part of the caller's path that names it (the component copy has the
 * path's offsets).
 */
static int announce(int fd, const char *path, const struct level *l,
		    const char *copy, ocdir_setup_fn setup, void *arg)
{
	char *shown = strndup(path, (size_t)(l->name - copy) + strlen(l->name));
	int r;

	if (!shown)
		return -ENOMEM;
	r = setup(fd, shown, 0, arg);
	free(shown);
	return r > -4096 ? r : -EIO;
}

/*
 * Make the leaf with the caller's setup. Its name for messages is the
 * caller's path, but where "." components follow the leaf ("x/.", "x/./")
 * only the part up to it, as mkdir -pv names it.
 */
static int setup_leaf(int at, const char *name, const char *path,
		      const struct level *l, const char *copy,
		      const struct oc_req *req, ocdir_setup_fn setup, void *arg,
		      int *made)
{
	size_t end = (size_t)(l->name - copy) + strlen(l->name);
	char *shown;
	int fd;

	if (!path[end + strspn(path + end, "/")])
		return oc_create_setup(at, name, path, req, setup, arg, made);
	shown = strndup(path, end);
	if (!shown)
		return -ENOMEM;
	fd = oc_create_setup(at, name, shown, req, setup, arg, made);
	free(shown);
	return fd;
}

/*
 * mkdir -p, one level at a time from the one above. Bounded descriptors:
 * the level just reached, the one above it (while the next is looked up)
 * and the deepest level this call made (for mkpath_rollback()), whatever
 * the depth.
 */
static int mkpath(int dirfd, const char *path, const struct oc_req *leafreq,
		  ocdir_setup_fn setup, void *arg, int *leaf_created)
{
	struct oc_req midreq = *leafreq;
	int scoped = !!(leafreq->resolve & OC_RESOLVE_SCOPED);
	size_t len = strlen(path), ncomp = 0, i, deep = 0;
	char *copy = NULL, *prefix = NULL, *p, *save = NULL;
	struct level *lv = NULL;
	int startfd = dirfd, ownstart = -1, fd = 0, made, below_new = 0;
	int cur = -1, deepfd = -1, r;
	struct oc_req midexcl;

	if (!len)
		return -ENOENT;
	/*
	 * Unscoped, each level is reached from the one before by its own
	 * name, so the whole path may be longer than PATH_MAX, as mkdir -p
	 * allows; scoped, each level is looked up from dirfd by its prefix.
	 */
	if (scoped && len >= PATH_MAX)
		return -ENAMETOOLONG;
	midreq.flags &= ~(O_EXCL | O_NOFOLLOW);
	midreq.mode = 0777;
	midreq.cloexec = O_CLOEXEC;
	midexcl = midreq;
	midexcl.flags |= O_EXCL;

	copy = strdup(path);
	prefix = malloc(len + 1);
	lv = calloc(len / 2 + 1, sizeof(*lv));
	if (!copy || !prefix || !lv) {
		fd = -ENOMEM;
		goto out;
	}
	/* Cut into components; "." is a no-op and is skipped. */
	for (p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save))
		if (strcmp(p, "."))
			lv[ncomp++] = (struct level){ .name = p };
	if (!ncomp) {	/* ".", "/", "./" ...: the existing start */
		/* by a short name: unscoped, path may be longer than PATH_MAX */
		fd = oc_create_or_open_path(dirfd, path[0] == '/' ? "/" : ".",
					    leafreq, &made);
		if (fd >= 0 && leaf_created)
			*leaf_created = made;
		goto out;
	}
	if (!scoped && path[0] == '/') {
		ownstart = oc_openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		if (ownstart < 0) {
			fd = ownstart;
			goto out;
		}
		startfd = ownstart;
	}
	prefix[0] = '\0';
	if (path[0] == '/')
		strcpy(prefix, "/");
	for (i = 0; i < ncomp; i++) {
		const struct oc_req *req = i + 1 == ncomp ? leafreq : &midreq;
		int at = scoped ? dirfd : (cur >= 0 ? cur : startfd);
		const char *name = lv[i].name;

		if (scoped) {
			/* Each level is looked up from dirfd, under the scoping. */
			if (i)
				strcat(prefix, "/");
			strcat(prefix, lv[i].name);
			name = prefix;
		}
		made = 0;
		if (req == leafreq && setup) {
			fd = setup_leaf(at, name, path, &lv[i], copy, req, setup, arg,
					&made);
		} else if (req == &midreq && below_new) {
			/*
			 * Below a directory this call made the level is new,
			 * unless someone was quick. Natively one exclusive
			 * call says which, with no F_CREATED_QUERY after it.
			 */
			if (oc_config()->native) {
				fd = oc_create_or_open(at, name, &midexcl, NULL);
				made = fd >= 0;
				if (fd == -EEXIST)
					fd = oc_create_or_open(at, name, req, &made);
			} else {
				fd = oc_create_or_open(at, name, req, &made);
			}
		} else {
			fd = -ENOENT;
			/* An existing level only needs search permission, not read. */
			if (req == &midreq)
				fd = oc_scoped_open(at, name, O_PATH | O_DIRECTORY | O_CLOEXEC,
						    req->resolve);
			/* Rule 10 as at the leaf ("..": an ancestor, already passed). */
			if (fd >= 0 && strcmp(lv[i].name, "..")) {
				r = level_sticky_check(fd, scoped ? dirfd : startfd);
				if (r < 0) {
					close(fd);
					fd = r;
					goto fail;
				}
			}
			if (fd == -ENOENT)
				fd = oc_create_or_open_path(at, name, req, &made);
		}
		if (fd < 0)
			goto fail;
		/*
		 * A level this call made, and the directory it was made in
		 * (the level above; scoped too, whose prefix was looked up
		 * the same way), for the rollback.
		 */
		if (made && (fstat(fd, &lv[i].self) < 0 ||
			     fstatat(cur >= 0 ? cur : at, "", &lv[i].parent,
				     AT_EMPTY_PATH) < 0)) {
			r = -errno;
			close(fd);
			fd = r;
			goto fail;
		}
		lv[i].created = made;
		if (cur >= 0 && cur != deepfd)
			close(cur);
		cur = fd;
		if (made) {
			if (deepfd >= 0)
				close(deepfd);
			deepfd = fd;
			deep = i;
		}
		if (made && req == &midreq) {
			r = add_owner_wx(fd);
			if (!r && setup)
				r = announce(fd, path, &lv[i], copy, setup, arg);
			if (r < 0) {
				fd = r;
				goto fail;
			}
		}
		below_new |= made;
	}
	if (leaf_created)
		*leaf_created = lv[ncomp - 1].created;
	fd = cur;	/* the caller's now */
	cur = -1;
	if (deepfd == fd)
		deepfd = -1;
	goto out;
fail:
	/* Free what is not needed first: the rollback may need two descriptors. */
	if (cur >= 0 && cur != deepfd)
		close(cur);
	cur = -1;
	if (deepfd >= 0)
		mkpath_rollback(lv, deep, deepfd, scoped ? dirfd : startfd, scoped,
				path[0] == '/', leafreq->resolve);
out:
	if (cur >= 0 && cur != deepfd)
		close(cur);
	if (deepfd >= 0)
		close(deepfd);
	if (ownstart >= 0)
		close(ownstart);
	free(lv);
	free(prefix);
	free(copy);
	return fd;
}

OC_EXPORT int ocdir_mkpath_setup(int dirfd, const char *path,
				 const struct ocdir_how *how, size_t size,
				 ocdir_setup_fn setup, void *arg,
				 int *leaf_created)
{
	struct oc_req req;
	int r;

	r = oc_check_how(path, how, size, OC_HOW_OPENAT2 | OC_HOW_PATH_OK, &req);
	if (r)
		return oc_result(r);
	r = mkpath(dirfd, path, &req, setup, arg, leaf_created);
	return oc_result(oc_test_swap_after(dirfd, path, r));
}

/* ocdir_mkpath_setup without a setup step: one body for both. */
OC_EXPORT int ocdir_mkpath(int dirfd, const char *path,
			   const struct ocdir_how *how, size_t size,
			   int *leaf_created)
{
	return ocdir_mkpath_setup(dirfd, path, how, size, NULL, NULL,
				  leaf_created);
}
