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
#include <stdio.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452	/* the same number on every architecture */
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#define OC_PROC_ROOT_INO 1

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

gid_t oc_fsgid(void)
{
	return (gid_t)setfsgid((gid_t)-1);
}

/*
 * fchmodat2(2) (Linux 6.6) changes the mode of what an O_PATH descriptor
 * refers to. Only its absence is remembered (ENOSYS cannot turn into
 * success; a seccomp filter's EPERM is not taken as absence).
 */
static int fchmodat2_missing;

/*
 * The directory /proc/thread-self/fd of a real procfs, for the kernels
 * without fchmodat2: "/proc" must be the root inode of a procfs mount and
 * "thread-self/fd" must be on that same mount, so an overmounted /proc or
 * a bind mount over the fd directory is refused (-EOPNOTSUPP).
 */
static int proc_fd_dir(void)
{
	uint64_t root_mnt, fd_mnt;
	struct statfs sfs;
	struct stat st;
	int procfd, fddir, r;

	procfd = oc_openat(AT_FDCWD, "/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (procfd < 0)
		return -EOPNOTSUPP;
	if (fstatfs(procfd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC ||
	    fstat(procfd, &st) < 0 || st.st_ino != OC_PROC_ROOT_INO ||
	    oc_mount_id(procfd, &root_mnt) < 0) {
		close(procfd);
		return -EOPNOTSUPP;
	}
	fddir = oc_openat(procfd, "thread-self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	close(procfd);
	if (fddir < 0)
		return -EOPNOTSUPP;
	r = fstatfs(fddir, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC ||
	    oc_mount_id(fddir, &fd_mnt) < 0 || fd_mnt != root_mnt;
	if (r) {
		close(fddir);
		return -EOPNOTSUPP;
	}
	return fddir;
}

/*
 * Change the mode of the inode fd refers to, never of a name: fchmod(2)
 * for an ordinary descriptor; fchmodat2(fd, "", AT_EMPTY_PATH) for an
 * O_PATH one; before Linux 6.6 the descriptor's entry in a verified
 * procfs. -EOPNOTSUPP when none of these is available.
 */
int oc_chmod_fd(int fd, mode_t mode)
{
	char name[16];
	int fddir, r;

	if (fchmod(fd, mode) == 0)
		return 0;
	if (errno != EBADF)	/* EBADF: an O_PATH descriptor */
		return -errno;
	if (!__atomic_load_n(&fchmodat2_missing, __ATOMIC_RELAXED)) {
		r = (int)oc_ret(syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH));
		if (r != -ENOSYS)
			return r;
		__atomic_store_n(&fchmodat2_missing, 1, __ATOMIC_RELAXED);
	}
	fddir = proc_fd_dir();
	if (fddir < 0)
		return fddir;
	snprintf(name, sizeof(name), "%d", fd);
	r = fchmodat(fddir, name, mode, 0) < 0 ? -errno : 0;
	close(fddir);
	return r;
}

/*
 * F_CREATED_QUERY (Linux 6.12): did the open that made fd create its
 * inode? 1 or 0, or -EINVAL on kernels without it.
 */
int oc_created_query(int fd)
{
	return (int)oc_ret(fcntl(fd, OC_F_CREATED_QUERY));
}

/* getxattrat(2), Linux 6.13: the same number on every architecture. */
#ifndef SYS_getxattrat
#define SYS_getxattrat 464
#endif

struct oc_xattr_args {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

#define OC_ACL_DEFAULT "system.posix_acl_default"

/*
 * The default ACL of the directory fd refers to (an O_PATH descriptor
 * too), as the kernel stores it in the xattr: its length, 0 when it has
 * none (or the filesystem has no ACLs), or -errno. What a directory made
 * in it inherits as its own default ACL. For an O_PATH descriptor: the
 * directory opened for reading through it, else getxattrat(2) (6.13),
 * else the descriptor's entry in a verified procfs.
 */
ssize_t oc_default_acl(int fd, char *buf, size_t size)
{
	struct oc_xattr_args args = { (uint64_t)(uintptr_t)buf, (uint32_t)size, 0 };
	char path[48];
	ssize_t n;
	int rfd;

	n = fgetxattr(fd, OC_ACL_DEFAULT, buf, size);
	if (n < 0 && errno == EBADF) {	/* O_PATH */
		rfd = oc_openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
		if (rfd >= 0) {
			n = fgetxattr(rfd, OC_ACL_DEFAULT, buf, size);
			close(rfd);
		} else if (rfd != -EACCES) {
			return rfd;	/* EMFILE and the like: the call's own error */
		} else {
			/* Not readable: by the descriptor itself, then by procfs. */
			n = syscall(SYS_getxattrat, fd, "", AT_EMPTY_PATH, OC_ACL_DEFAULT,
				    &args, sizeof(args));
			if (n < 0 && (errno == ENOSYS || errno == EBADF || errno == EINVAL)) {
				rfd = proc_fd_dir();
				if (rfd < 0)
					return rfd;
				close(rfd);
				snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
				n = getxattr(path, OC_ACL_DEFAULT, buf, size);
			}
		}
	}
	if (n < 0)
		return errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
	return n;
}
