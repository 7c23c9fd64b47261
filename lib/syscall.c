/* SPDX-License-Identifier: MIT */
/*
 * lib/syscall.c - raw system calls, each returning -errno on failure.
 * <linux/stat.h> is used here (and only here) because glibc's struct statx
 * has no name for stx_mnt_id yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

static long oc_ret(long r)
{
	return r < 0 ? -errno : r;
}

int oc_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return (int)oc_ret(syscall(SYS_openat, dirfd, path, flags, mode));
}

int oc_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
	       uint64_t resolve)
{
	struct open_how how = {
		.flags = flags,
		.mode = mode,
		.resolve = resolve,
	};

	return (int)oc_ret(syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));
}

/*
 * openat2 with RESOLVE_BENEATH or RESOLVE_IN_ROOT answers EAGAIN when a ".."
 * raced with any rename or mount change on the system, not only in our
 * tree; such a retry is cheap and almost always succeeds.
 */
int oc_openat2_retry(int dirfd, const char *path, uint64_t flags,
		     uint64_t mode, uint64_t resolve)
{
	int i, r = -EAGAIN;

	for (i = 0; i < 64 && r == -EAGAIN; i++)
		r = oc_openat2(dirfd, path, flags, mode, resolve);
	return r;
}

int oc_renameat2(int olddirfd, const char *oldpath, int newdirfd,
		 const char *newpath, unsigned int flags)
{
	/* The test hook stands for filesystems without RENAME_NOREPLACE. */
	if ((flags & 1) && oc_config()->no_noreplace)
		return -EINVAL;
	return (int)oc_ret(syscall(SYS_renameat2, olddirfd, oldpath, newdirfd,
				   newpath, flags));
}

/*
 * The mount a descriptor is on. STATX_MNT_ID needs 5.8; before that the
 * device number stands in, which cannot tell bind mounts of one filesystem
 * apart (documented as a weaker RESOLVE_NO_XDEV in docs/library.md).
 */
int oc_mount_id(int fd, uint64_t *id)
{
	struct statx sx;
	long r;

	r = syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		    STATX_MNT_ID, &sx);
	if (r < 0)
		return -errno;
	if (sx.stx_mask & STATX_MNT_ID)
		*id = sx.stx_mnt_id;
	else
		*id = ((uint64_t)sx.stx_dev_major << 32 | sx.stx_dev_minor) |
		      1ULL << 63;
	return 0;
}

/* setfsuid() with an invalid id changes nothing and returns the current one. */
uid_t oc_fsuid(void)
{
	return (uid_t)setfsuid((uid_t)-1);
}
