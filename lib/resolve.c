/* SPDX-License-Identifier: MIT */
/*
 * lib/resolve.c - scoped lookups: openat2(2) RESOLVE_* where the kernel has
 * it and lets us call it, else a userspace resolver that walks one component
 * at a time through O_PATH descriptors and gives the same answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

#define O_WALK (O_PATH | O_NOFOLLOW | O_CLOEXEC)

struct ident {
	dev_t dev;
	ino_t ino;
};

struct walk {
	int cur;		/* O_PATH descriptor of the directory reached */
	int rootfd;		/* caller's root (scoped) - not ours to close */
	uint64_t resolve;
	int links;
	int scoped;
	int root_set;		/* the kernel's nd->root is set (see jump_root) */
	struct ident root;
	struct ident *stack;	/* directories between root and cur (scoped) */
	size_t depth, cap;
};

/*
 * The target of the symlink linkfd (an O_PATH fd), NUL-terminated in buf;
 * returns its length or -errno.
 */
ssize_t oc_read_link(int linkfd, char *buf, size_t size)
{
	ssize_t n = readlinkat(linkfd, "", buf, size);

	if (n < 0)
		return -errno;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return n;
}

/*
 * Proc's ordinary symlinks ("self", "thread-self", "mounts", "net", ...)
 * point at "<pid>..." or "self/..."; the magic ones (fd/N, exe, cwd, root,
 * ns/..., map_files) read as absolute paths or "type:[id]" strings.
 *
 * The filesystem is asked of the link's directory, not of the link: a FUSE
 * server answers statfs on a link by following it itself (bindfs does),
 * and a single-threaded one deadlocks when the link leads back into its
 * own mount. A symlink is always on its directory's filesystem.
 */
int oc_is_magic_link(int dirfd, const char *target)
{
	struct statfs sfs;

	if (fstatfs(dirfd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
		return 0;
	if (target[0] >= '0' && target[0] <= '9')
		return 0;
	if (strcmp(target, "self") == 0 || strncmp(target, "self/", 5) == 0)
		return 0;
	return 1;
}

/*
 * fs.protected_symlinks, which the kernel applies when it follows a
 * trailing link and the emulation must apply when it follows one by its
 * text: in a sticky, world-writable directory only links owned by the
 * follower or by the directory's owner are followed. The kernel records the
 * parent's mode for the last component only, so interior links are not
 * checked, and the resolver does not check them either. An unreadable
 * sysctl counts as on.
 */
int oc_may_follow(int dirfd, int linkfd)
{
	struct stat dir, link;
	char c = '1';
	int fd;

	if (fstat(linkfd, &link) < 0 || fstat(dirfd, &dir) < 0)
		return -errno;
	if (link.st_uid == oc_fsuid() || !(dir.st_mode & S_ISVTX) ||
	    !(dir.st_mode & S_IWOTH) || dir.st_uid == link.st_uid)
		return 0;
	fd = oc_openat(AT_FDCWD, "/proc/sys/fs/protected_symlinks", O_RDONLY | O_CLOEXEC, 0);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '1';
		close(fd);
	}
	return c == '0' ? 0 : -EACCES;
}

static int ident_of(int fd, struct ident *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* EXDEV when RESOLVE_NO_XDEV is set and the two descriptors' mounts differ. */
static int check_xdev(const struct walk *w, int from, int to)
{
	uint64_t a, b;
	int r;

	if (!(w->resolve & OCDIR_RESOLVE_NO_XDEV))
		return 0;
	r = oc_mount_id(from, &a);
	if (!r)
		r = oc_mount_id(to, &b);
	if (r)
		return r;
	return a == b ? 0 : -EXDEV;
}

static void set_cur(struct walk *w, int fd)
{
	close(w->cur);
	w->cur = fd;
}

/* An absolute path or absolute symlink: back to the root, if allowed. */
static int jump_root(struct walk *w, int initial)
{
	int fd, r;

	if (w->resolve & OCDIR_RESOLVE_BENEATH)
		return -EXDEV;
	if (w->resolve & OCDIR_RESOLVE_IN_ROOT)
		fd = oc_openat(w->rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	else
		fd = oc_openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	/*
	 * The kernel allows an absolute starting point, not an absolute link
	 * that leaves the root's mount; and before anything set its root (a
	 * relative walk without IN_ROOT), every absolute link counts as a
	 * crossing under NO_XDEV.
	 */
	r = 0;
	if (!initial && (w->resolve & OCDIR_RESOLVE_NO_XDEV))
		r = w->root_set ? check_xdev(w, w->cur, fd) : -EXDEV;
	w->root_set = 1;
	if (r) {
		close(fd);
		return r;
	}
	set_cur(w, fd);
	w->depth = 0;
	return 0;
}

static int push(struct walk *w, int fd)
{
	if (!w->scoped)
		return 0;
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct ident *s = realloc(w->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->stack = s;
		w->cap = cap;
	}
	return ident_of(fd, &w->stack[w->depth++]);
}

/*
 * "..": stays at the root under IN_ROOT, EXDEV under BENEATH. Elsewhere the
 * parent is opened and must be the directory we came through: if a rename
 * moved us, it is not, and the walk fails with EXDEV as the kernel's does.
 */
static int step_dotdot(struct walk *w)
{
	struct ident want, got = { 0, 0 };
	int fd, r;

	w->root_set = 1;	/* handle_dots() sets the kernel's root here */
	if (w->scoped && w->depth == 0) {
		if (w->resolve & OCDIR_RESOLVE_BENEATH)
			return -EXDEV;
		return 0;
	}
	fd = oc_openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	r = check_xdev(w, w->cur, fd);
	if (!r && w->scoped) {
		want = w->depth >= 2 ? w->stack[w->depth - 2] : w->root;
		r = ident_of(fd, &got);
		if (!r && (got.dev != want.dev || got.ino != want.ino))
			r = -EXDEV;
	}
	if (r) {
		close(fd);
		return r;
	}
	if (w->scoped)
		w->depth--;
	set_cur(w, fd);
	return 0;
}

/*
 * Walk `path` from the start of *w. Returns an O_PATH descriptor of the
 * last component: a directory, or (only as the last component without a
 * trailing slash) a non-directory or an unfollowed symlink.
 */
static int walk_path(struct walk *w, const char *path, int nofollow_last)
{
	char *rest, *p, name[PATH_MAX + 1];
	char target[PATH_MAX];
	struct stat st;
	int r, fd;

	rest = strdup(path);
	if (!rest)
		return -ENOMEM;
	p = rest;
	if (*p == '/') {
		r = jump_root(w, 1);
		if (r)
			goto out;
	}
	for (;;) {
		size_t len;
		const char *q;
		int last, trailing;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p) {
			r = w->cur;
			w->cur = -1;
			goto out;
		}
		len = strcspn(p, "/");
		/* Too long: the kernel lets the filesystem say so, after the
		 * search permission check on the directory. */
		if (len > PATH_MAX) {
			r = -ENAMETOOLONG;
			goto out;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		trailing = *p == '/';
		for (q = p; *q == '/'; q++)
			;
		last = !*q;

		/*
		 * The kernel checks search permission on the directory for "."
		 * and for ".." at the root too; an O_PATH lookup of "." does.
		 */
		if (strcmp(name, ".") == 0 ||
		    (strcmp(name, "..") == 0 && w->scoped && w->depth == 0)) {
			fd = oc_openat(w->cur, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
			if (fd < 0) {
				r = fd;
				goto out;
			}
			close(fd);
			if (strcmp(name, ".") == 0)
				continue;
		}
		if (strcmp(name, "..") == 0) {
			r = step_dotdot(w);
			if (r)
				goto out;
			continue;
		}
		fd = oc_openat(w->cur, name, O_WALK, 0);
		if (fd < 0) {
			r = fd;
			goto out;
		}
		if (fstat(fd, &st) < 0) {
			r = -errno;
			close(fd);
			goto out;
		}
		if (S_ISLNK(st.st_mode) && (!last || trailing || !nofollow_last)) {
			char *next;

			if (w->resolve & OCDIR_RESOLVE_NO_SYMLINKS) {
				close(fd);
				r = -ELOOP;
				goto out;
			}
			n = oc_read_link(fd, target, sizeof(target));
			if (n < 0) {
				r = (int)n;
				close(fd);
				goto out;
			}
			if (oc_is_magic_link(w->cur, target)) {
				close(fd);
				if (w->resolve & OCDIR_RESOLVE_NO_MAGICLINKS) {
					r = -ELOOP;
					goto out;
				}
				if (w->scoped) {
					r = -EXDEV;
					goto out;
				}
				/* Only the kernel can follow it; it does, here. */
				fd = oc_openat(w->cur, name, O_PATH | O_CLOEXEC, 0);
				if (fd < 0) {
					r = fd;
					goto out;
				}
				r = check_xdev(w, w->cur, fd);
				if (!r && fstat(fd, &st) < 0)
					r = -errno;
				if (!r && !S_ISDIR(st.st_mode) && (!last || trailing))
					r = -ENOTDIR;
				if (r) {
					close(fd);
					goto out;
				}
				if (!S_ISDIR(st.st_mode)) {
					set_cur(w, -1);
					r = fd;
					goto out;
				}
				set_cur(w, fd);
				continue;
			}
			close(fd);
			if (++w->links > OC_MAX_SYMLINKS) {
				r = -ELOOP;
				goto out;
			}
			if (n == 0) {
				r = -ENOENT;
				goto out;
			}
			next = malloc((size_t)n + strlen(p) + 1);
			if (!next) {
				r = -ENOMEM;
				goto out;
			}
			memcpy(next, target, (size_t)n);
			strcpy(next + n, p);
			free(rest);
			rest = p = next;
			if (*p == '/') {
				r = jump_root(w, 0);
				if (r)
					goto out;
			}
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			r = check_xdev(w, w->cur, fd);
			if (!r)
				r = push(w, fd);
			if (r) {
				close(fd);
				goto out;
			}
			set_cur(w, fd);
			continue;
		}
		if (!last || trailing) {
			close(fd);
			r = -ENOTDIR;
			goto out;
		}
		r = fd;
		goto out;
	}
out:
	free(rest);
	return r;
}

/*
 * The userspace resolver. oflags must contain O_DIRECTORY or O_PATH: the
 * result is reopened through "." of the O_PATH descriptor, which only works
 * for directories.
 */
int oc_resolver_open(int rootfd, const char *path, int oflags, uint64_t resolve)
{
	struct walk w = { .rootfd = rootfd, .resolve = resolve };
	int fd, r;

	if (!*path)
		return -ENOENT;
	w.scoped = !!(resolve & OC_RESOLVE_SCOPED);
	w.root_set = !!(resolve & OCDIR_RESOLVE_IN_ROOT);
	w.cur = oc_openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (w.cur < 0)
		return w.cur;
	r = ident_of(w.cur, &w.root);
	if (r) {
		close(w.cur);
		return r;
	}
	fd = walk_path(&w, path, !!(oflags & O_NOFOLLOW));
	if (w.cur >= 0)
		close(w.cur);
	free(w.stack);
	if (fd < 0)
		return fd;
	if (oflags & O_PATH) {
		struct stat st;

		r = 0;
		if ((oflags & O_DIRECTORY) && fstat(fd, &st) == 0 &&
		    !S_ISDIR(st.st_mode))
			r = -ENOTDIR;
		if (r) {
			close(fd);
			return r;
		}
		return fd;
	}
	r = oc_openat(fd, ".", (oflags & ~O_NOFOLLOW) | O_DIRECTORY, 0);
	close(fd);
	return r;
}

int oc_scoped_open(int rootfd, const char *path, int oflags, uint64_t resolve)
{
	int r;

	if (!resolve)
		return oc_openat(rootfd, path, oflags, 0);
	if (!oc_config()->force_resolver && !oc_openat2_missing()) {
		r = oc_openat2_retry(rootfd, path, (unsigned int)oflags, 0, resolve);
		/*
		 * A seccomp filter may answer ENOSYS or EPERM; neither says
		 * anything about the path. A busy system can keep a ".." in
		 * EAGAIN: the resolver does not have that failure mode.
		 */
		if (r != -ENOSYS && r != -EPERM && r != -EAGAIN)
			return r;
		if (r == -ENOSYS)
			oc_set_openat2_missing();
	}
	return oc_resolver_open(rootfd, path, oflags, resolve);
}
