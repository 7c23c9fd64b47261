/* SPDX-License-Identifier: MIT */
/*
 * lib/prepare.c - prepare a directory out of sight, then publish it at its
 * name in one rename, or throw it away. The directory lives in a private
 * staging directory next to its destination until then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

struct ocdir_prepared {
	int parentfd;		/* O_PATH: the destination's parent */
	int stagefd;		/* the staging directory */
	char stagename[64];
	char *name;		/* the destination's last component */
};

static int oc_result(int r)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

static void prepared_free(struct ocdir_prepared *p)
{
	free(p->name);
	free(p);
}

/*
 * The staging part of ocdir_prepare, for p->name in p->parentfd (both set
 * by the caller): fail early if the name exists, make the private staging
 * directory, make the new directory in it and open it. Returns the
 * descriptor, or -errno with the staging directory removed again.
 */
static int prepare_at(struct ocdir_prepared *p, const struct oc_req *req)
{
	int fd, r, lost_setgid;
	struct stat st;
	mode_t made;

	if (oc_is_dot_name(p->name))
		return -EEXIST;
	/* Fail early; publishing checks again, atomically. */
	if (fstatat(p->parentfd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
	r = oc_stage_create(p->parentfd, &p->stagefd, p->stagename,
			    sizeof(p->stagename), &lost_setgid, &made);
	if (r)
		return r;
	/*
	 * The staging directory cannot pass on the parent's setgid bit (our
	 * chmod cleared it): publishing would show a directory mkdir(2)
	 * would not have made.
	 */
	if (lost_setgid) {
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
		return -EOPNOTSUPP;
	}
	fd = oc_mkdir_open(p->stagefd, p->name, req->mode,
			   (req->flags & ~O_EXCL) | req->cloexec, NULL, 1);
	if (fd < 0)
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
	return fd;
}

OC_EXPORT int ocdir_prepare(int dirfd, const char *path,
			    const struct ocdir_how *how, size_t size,
			    struct ocdir_prepared **prepared)
{
	const int allowed = O_EXCL | O_CREAT | O_DIRECTORY | O_CLOEXEC |
			    O_NOATIME | O_NONBLOCK | OC_O_LARGEFILE;
	struct ocdir_prepared *p;
	char *parent = NULL, *last = NULL;
	struct oc_req req;
	int r, fd;

	if (!prepared)
		return oc_result(-EFAULT);
	r = oc_check_how(path, how, size, OC_HOW_OPENAT2, &req);
	if (r)
		return oc_result(r);
	if (how->flags & ~(uint64_t)allowed)
		return oc_result(-EINVAL);
	r = oc_split_path(path, &parent, &last);
	if (r)
		return oc_result(r);
	if (oc_is_dot_name(last)) {
		r = -EEXIST;
		goto out_names;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto out_names;
	}
	p->name = last;
	last = NULL;
	p->parentfd = oc_scoped_open(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				     req.resolve);
	if (p->parentfd < 0) {
		r = p->parentfd;
		goto out_free;
	}
	fd = prepare_at(p, &req);
	if (fd < 0) {
		r = fd;
		goto out_parent;
	}
	*prepared = p;
	free(parent);
	return fd;

out_parent:
	close(p->parentfd);
out_free:
	prepared_free(p);
out_names:
	free(parent);
	free(last);
	return oc_result(r);
}

/*
 * Moving a directory to another parent needs write permission on it (its
 * ".." changes). If the caller took that away from its own directory, lend
 * it for the rename and give it back, through an O_PATH descriptor.
 */
static int publish_rename(struct ocdir_prepared *p)
{
	struct stat st;
	int fd, r;

	fd = oc_openat(p->stagefd, p->name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if ((st.st_mode & S_IWUSR) || st.st_uid != oc_fsuid() ||
	    oc_chmod_fd(fd, (st.st_mode & 07777) | S_IWUSR) < 0) {
		close(fd);
		return oc_renameat2(p->stagefd, p->name, p->parentfd, p->name,
				    RENAME_NOREPLACE);
	}
	r = oc_renameat2(p->stagefd, p->name, p->parentfd, p->name,
			 RENAME_NOREPLACE);
	/* Give it back; if that fails the caller can still fix it via its fd. */
	oc_chmod_fd(fd, st.st_mode & 07777);
	close(fd);
	return r;
}

OC_EXPORT int ocdir_publish(struct ocdir_prepared *p)
{
	int r;

	if (!p)
		return oc_result(-EFAULT);
	r = publish_rename(p);
	if (r < 0)
		return oc_result(r);
	oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
	close(p->parentfd);
	prepared_free(p);
	return 0;
}

/* One directory on the way down from the prepared one: how to come back. */
struct level {
	dev_t dev;
	ino_t ino;
	char *name;		/* its name in the level above */
};

/*
 * Find the next entry of dir to remove and remove it if it is not a
 * non-empty directory. Returns 1 with *sub set to a descriptor of a
 * non-empty subdirectory (named *subname, malloc'ed) to go down into, 0
 * when dir is empty, or -errno (EBUSY for another mount, as rmdir of a
 * mount point).
 */
static int clear_step(DIR *dir, dev_t dev, int *sub, char **subname)
{
	int fd = dirfd(dir);
	struct dirent *de;
	struct stat st;

	rewinddir(dir);
	while ((errno = 0, de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(fd, de->d_name, 0) < 0)
				return -errno;
			continue;
		}
		if (st.st_dev != dev)
			return -EBUSY;
		if (unlinkat(fd, de->d_name, AT_REMOVEDIR) == 0)
			continue;
		if (errno != ENOTEMPTY && errno != EEXIST)
			return -errno;
		*sub = oc_openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (*sub < 0)
			return *sub;
		*subname = strdup(de->d_name);
		if (!*subname) {
			close(*sub);
			return -ENOMEM;
		}
		return 1;
	}
	return -errno;	/* 0 at the end of the directory */
}

/*
 * Remove the directory `name` in stagefd and everything below it, without
 * following symlinks and without entering other mounts. Iterative, with at
 * most two descriptors of its own open at a time: a level is left through
 * its ".." (checked against the device and inode it was entered from) and
 * its scan starts again, so a tree of any depth fits under a small
 * RLIMIT_NOFILE. Stops at the first entry it cannot remove; what was
 * removed stays removed, and a later call carries on.
 */
static int remove_tree(int stagefd, const char *name)
{
	struct level *stack = NULL, *grown;
	size_t depth = 0, cap = 0, i;
	int fd, sub = -1, up, r;
	char *subname = NULL;
	struct stat st, upst;
	DIR *dir = NULL;
	dev_t dev;

	if (unlinkat(stagefd, name, AT_REMOVEDIR) == 0)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	if (fstat(stagefd, &st) < 0)
		return -errno;
	dev = st.st_dev;
	fd = oc_openat(stagefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	for (;;) {
		if (!dir && !(dir = fdopendir(fd))) {
			r = -errno;
			close(fd);
			break;
		}
		r = clear_step(dir, dev, &sub, &subname);
		if (r < 0)
			break;
		if (r == 1) {	/* down */
			if (depth == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(stack, cap * sizeof(*stack));
				if (!grown) {
					r = -ENOMEM;
					close(sub);
					free(subname);
					break;
				}
				stack = grown;
			}
			if (fstat(dirfd(dir), &st) < 0) {
				r = -errno;
				close(sub);
				free(subname);
				break;
			}
			stack[depth++] = (struct level){ st.st_dev, st.st_ino, subname };
			closedir(dir);
			dir = NULL;
			fd = sub;
			continue;
		}
		if (!depth)	/* the prepared directory itself is empty now */
			break;
		/* up: through "..", which must be the level we came from */
		depth--;
		up = oc_openat(dirfd(dir), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
		if (up < 0 || fstat(up, &upst) < 0 ||
		    upst.st_dev != stack[depth].dev || upst.st_ino != stack[depth].ino) {
			r = up < 0 ? up : -ESTALE;
			if (up >= 0)
				close(up);
			free(stack[depth].name);
			break;
		}
		closedir(dir);
		dir = NULL;
		r = unlinkat(up, stack[depth].name, AT_REMOVEDIR) < 0 ? -errno : 0;
		free(stack[depth].name);
		fd = up;
		if (r < 0) {
			close(fd);
			break;
		}
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < depth; i++)
		free(stack[i].name);
	free(stack);
	if (r < 0)
		return r;
	return unlinkat(stagefd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

OC_EXPORT int ocdir_discard(struct ocdir_prepared *p)
{
	int r;

	if (!p)
		return 0;
	/* Keep p for a retry: the caller may free descriptors and call again. */
	r = remove_tree(p->stagefd, p->name);
	if (r < 0)
		return oc_result(r);
	/* Moved away by someone else (it is empty): say so, it stays there. */
	r = oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
	close(p->parentfd);
	prepared_free(p);
	return oc_result(r);
}

/* ---- create with a setup step: ocdir_openat2_setup, ocdir_mkpath_setup ---- */

/*
 * Remove the directory behind fd, just made at `name` in the parent it was
 * made in, with whatever setup put in it: only while that name still
 * leads to it. The parent is found through fd's "..", so the caller's
 * scoping is not needed again.
 */
static void remove_made(int fd, const char *name)
{
	struct stat byfd, byname;
	int up;

	up = oc_openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (up < 0)
		return;
	if (fstat(fd, &byfd) == 0 &&
	    fstatat(up, name, &byname, AT_SYMLINK_NOFOLLOW) == 0 &&
	    oc_same_inode(&byfd, &byname))
		remove_tree(up, name);
	close(up);
}

/*
 * Create-or-open `path` at its name, owner-only, and set up what this call
 * made. Used where nobody else can write the parent (then this is as
 * strong as staging), for a name that turned out to exist, and with
 * OCDIR_ALLOW_WEAK_EMULATION where staging cannot run.
 */
static int setup_at_name(int dirfd, const char *path, const char *last,
			 const char *shown, const struct oc_req *req,
			 ocdir_setup_fn setup, void *arg, int *created)
{
	struct oc_req own = *req;
	int fd, made = 0, r;

	own.mode &= S_IRWXU;
	fd = oc_create_or_open_path(dirfd, path, &own, &made);
	if (fd < 0 || !made) {
		*created = 0;
		return fd;
	}
	if (fcntl(fd, F_GETFL) & O_PATH) {
		/* made by oc_create_or_open_path's O_PATH retry: setup reads */
		int rd = oc_openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);

		if (rd < 0) {
			remove_made(fd, last);
			close(fd);
			return rd;
		}
		close(fd);
		fd = rd;
	}
	r = setup(fd, shown, OCDIR_SETUP_LEAF, arg);
	if (r < 0) {
		remove_made(fd, last);
		close(fd);
		return r > -4096 ? r : -EIO;
	}
	*created = 1;
	return fd;
}

/*
 * Staging in a shared parent: make it hidden, set it up, publish it. An
 * existing name gives -EEXIST; a filesystem or LSM that refuses the
 * publishing rename gives -EOPNOTSUPP. Nothing is left behind on failure.
 */
static int setup_staged(int parentfd, const char *last, const char *shown,
			const struct oc_req *req, ocdir_setup_fn setup, void *arg)
{
	struct oc_req own = *req;
	struct ocdir_prepared *p;
	int fd, r;

	own.mode &= S_IRWXU;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->name = strdup(last);
	p->parentfd = fcntl(parentfd, F_DUPFD_CLOEXEC, 3);
	if (!p->name || p->parentfd < 0) {
		r = p->name ? -errno : -ENOMEM;
		prepared_free(p);
		return r;
	}
	fd = prepare_at(p, &own);
	if (fd < 0) {
		close(p->parentfd);
		prepared_free(p);
		return fd;
	}
	r = setup(fd, shown, OCDIR_SETUP_LEAF, arg);
	if (r < 0) {
		r = r > -4096 ? r : -EIO;
	} else {
		r = publish_rename(p);
		/* No RENAME_NOREPLACE here, or an LSM refused the rename. */
		if (r == -EINVAL || r == -ENOSYS || r == -EXDEV)
			r = -EOPNOTSUPP;
	}
	if (r == 0) {
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
	} else {
		close(fd);
		fd = r;
		remove_tree(p->stagefd, p->name);
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
	}
	close(p->parentfd);
	prepared_free(p);
	return fd;
}

int oc_create_setup(int dirfd, const char *path, const char *shown,
		    const struct oc_req *req, ocdir_setup_fn setup, void *arg,
		    int *created)
{
	char *parent = NULL, *last = NULL;
	int parentfd, fd, made = 0;
	struct stat st;

	if (!setup)
		return oc_create_or_open(dirfd, path, req, created);
	fd = oc_split_path(path, &parent, &last);
	if (fd)
		return fd;
	parentfd = oc_scoped_open(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				  req->resolve);
	if (parentfd < 0) {
		fd = parentfd;
		goto out;
	}
	if (fstat(parentfd, &st) < 0) {
		fd = -errno;
	} else if (oc_parent_is_private(&st) && !req->always_stage) {
		fd = setup_at_name(dirfd, path, last, shown, req, setup, arg, &made);
	} else {
		fd = setup_staged(parentfd, last, shown, req, setup, arg);
		if (fd >= 0)
			made = 1;
		else if (fd == -EEXIST && !(req->flags & O_EXCL))
			fd = setup_at_name(dirfd, path, last, shown, req, setup, arg, &made);
		else if (fd == -EOPNOTSUPP && req->allow_weak && !req->always_stage)
			fd = setup_at_name(dirfd, path, last, shown, req, setup, arg, &made);
	}
	close(parentfd);
	if (fd >= 0 && created)
		*created = made;
out:
	free(parent);
	free(last);
	return fd;
}

OC_EXPORT int ocdir_openat2_setup(int dirfd, const char *path,
				  const struct ocdir_how *how, size_t size,
				  ocdir_setup_fn setup, void *arg, int *created)
{
	struct oc_req req;
	int r, made = 0;

	r = oc_check_how(path, how, size, OC_HOW_OPENAT2, &req);
	if (r)
		return oc_result(r);
	r = oc_create_setup(dirfd, path, path, &req, setup, arg, &made);
	if (r >= 0 && created)
		*created = made;
	return oc_result(r);
}
