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

OC_EXPORT int ocdir_prepare(int dirfd, const char *path,
			    const struct ocdir_how *how, size_t size,
			    struct ocdir_prepared **prepared)
{
	const int allowed = O_EXCL | O_CREAT | O_DIRECTORY | O_CLOEXEC |
			    O_NOATIME | O_NONBLOCK | OC_O_LARGEFILE;
	struct ocdir_prepared *p;
	char *parent = NULL, *last = NULL;
	struct oc_req req;
	struct stat st;
	int r, fd, lost_setgid;

	if (!path || !prepared)
		return oc_result(-EFAULT);
	r = oc_check_how(how, size, 1, &req);
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
	/* Fail early; publishing checks again, atomically. */
	if (fstatat(p->parentfd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		r = -EEXIST;
		goto out_parent;
	}
	if (errno != ENOENT) {
		r = -errno;
		goto out_parent;
	}
	r = oc_stage_create(p->parentfd, &p->stagefd, p->stagename,
			    sizeof(p->stagename), &lost_setgid);
	if (r)
		goto out_parent;
	/*
	 * The staging directory cannot pass on the parent's setgid bit (our
	 * chmod cleared it): publishing would show a directory mkdir(2)
	 * would not have made.
	 */
	if (lost_setgid) {
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
		r = -EOPNOTSUPP;
		goto out_parent;
	}
	fd = oc_mkdir_open(p->stagefd, p->name, req.mode,
			   (req.flags & ~O_EXCL) | req.cloexec, NULL, 1);
	if (fd < 0) {
		r = fd;
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
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

/*
 * Remove everything below dirfd/name without following symlinks and without
 * entering other mounts (dev differs: EBUSY, as rmdir of a mount point).
 */
static int remove_tree(int dirfd, const char *name, dev_t dev)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd, r = 0, r2;

	if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	fd = oc_openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_dev != dev) {
		close(fd);
		return -EBUSY;
	}
	dir = fdopendir(fd);
	if (!dir) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = r ? r : -errno;
			continue;
		}
		if (S_ISDIR(st.st_mode))
			r2 = remove_tree(fd, de->d_name, dev);
		else
			r2 = unlinkat(fd, de->d_name, 0) < 0 ? -errno : 0;
		if (r2 && !r)
			r = r2;
	}
	closedir(dir);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && !r)
		r = -errno;
	return r;
}

OC_EXPORT int ocdir_discard(struct ocdir_prepared *p)
{
	struct stat st;
	int r;

	if (!p)
		return 0;
	r = fstat(p->stagefd, &st) < 0 ? -errno : 0;
	if (!r)
		r = remove_tree(p->stagefd, p->name, st.st_dev);
	oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
	close(p->parentfd);
	prepared_free(p);
	return oc_result(r);
}
