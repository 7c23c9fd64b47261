/* SPDX-License-Identifier: MIT */
/*
 * lib/emulate.c - create-or-open a directory in userspace with the errno
 * values of the native kernel call (docs/semantics.md section 3, rules 3-10).
 *
 * A new directory is made inside a private staging directory next to the
 * target, opened there, and only then renamed onto the final name with
 * RENAME_NOREPLACE: the descriptor is provably the directory we made, and
 * the name never shows a half-made directory. See docs/library.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

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

/* A name nobody can guess: PREFIX.RANDOM (64 bits). */
void oc_random_name(char *buf, size_t size, const char *prefix)
{
	unsigned long long rnd;
	struct timespec ts;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rnd = (unsigned long long)ts.tv_nsec * 2654435761ULL ^
		      (unsigned long long)ts.tv_sec;
	}
	snprintf(buf, size, "%s.%016llx", prefix, rnd);
}

int oc_same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Which owner does this filesystem show for what the caller creates? Most
 * show the caller's fsuid; NFS with root_squash, vfat or cifs with uid=,
 * sshfs and bindfs --force-user show another one. Learned from a file made
 * through a descriptor: an O_TMPFILE (no name at all), or where the
 * filesystem has none, an exclusive file with a random name, removed again
 * only while that name still leads to it.
 */
static int owner_shown(int dirfd, uid_t *uid)
{
	struct stat st, byname;
	char name[64];
	int fd;

	fd = oc_openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (fstat(fd, &st) < 0)
			st.st_uid = oc_fsuid();
		close(fd);
		*uid = st.st_uid;
		return 0;
	}
	oc_random_name(name, sizeof(name), ".ocdir-owner");
	fd = oc_openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	if (fstatat(dirfd, name, &byname, AT_SYMLINK_NOFOLLOW) == 0 &&
	    oc_same_inode(&st, &byname))
		unlinkat(dirfd, name, 0);
	close(fd);
	*uid = st.st_uid;
	return 0;
}

/*
 * Does st show the owner this filesystem (that of dirfd) gives what the
 * caller creates?
 */
static int owned_by_caller(int dirfd, const struct stat *st)
{
	uid_t shown;

	if (st->st_uid == oc_fsuid())
		return 1;
	return owner_shown(dirfd, &shown) == 0 && shown == st->st_uid;
}

/* What stage_is_ours() says of a directory. */
enum { STAGE_NOT_OURS, STAGE_OURS, STAGE_EXTRA_BITS, STAGE_UNPROVEN };

/* The longest default ACL compared: 255 entries (4 + 8 * 255 bytes). */
#define OC_ACL_MAX 2048

/*
 * What a directory our mkdirat makes in a parent must show, read before
 * it is made: born no earlier than t0, and the group, setgid bit and
 * default ACL that the parent hands to every new directory.
 */
struct stage_expect {
	struct timespec t0;
	int sync;		/* statx flags: a server's times are asked for afresh */
	struct stat parent;
	ssize_t acl_len;	/* the parent's default ACL; 0: none */
	char acl[OC_ACL_MAX];
};

static int server_decides_modes(int dirfd);
static int made_lately(int fd, const struct stat *st);

/*
 * Before anything is made in parentfd: t0 is the time no earlier than
 * which what we make is born. On a local filesystem the coarse clock the
 * kernel stamps inodes with; where a server keeps the times, the parent's
 * own mtime as the server shows it (its clock, not ours): whatever was in
 * the parent before has a birth time no later than the parent's last change.
 */
static int stage_expect_read(int parentfd, struct stage_expect *ex)
{
	struct statx sx;

	if (fstat(parentfd, &ex->parent) < 0)
		return -errno;
	ex->sync = AT_STATX_SYNC_AS_STAT;
	if (server_decides_modes(parentfd)) {
		ex->sync = AT_STATX_FORCE_SYNC;
		if (statx(parentfd, "", AT_EMPTY_PATH | ex->sync, STATX_MTIME, &sx) < 0)
			return -errno;
		ex->t0.tv_sec = sx.stx_mtime.tv_sec;
		ex->t0.tv_nsec = sx.stx_mtime.tv_nsec;
	} else {
		clock_gettime(CLOCK_REALTIME_COARSE, &ex->t0);
	}
	ex->acl_len = oc_default_acl(parentfd, ex->acl, sizeof(ex->acl));
	if (ex->acl_len >= 0)
		return 0;
	/* Out of descriptors or memory: the call's error. */
	if (ex->acl_len == -EMFILE || ex->acl_len == -ENFILE || ex->acl_len == -ENOMEM)
		return (int)ex->acl_len;
	/* Too long to compare (ERANGE), or no way to read it: nothing can match it. */
	return -EOPNOTSUPP;
}

/*
 * Was a directory with birth time b born at t0 or later? Compared at the
 * resolution the filesystem stored b with: one that keeps whole seconds
 * or hundredths of a second stores zeros below them, and t0 is cut to the
 * same.
 */
static int born_since(const struct statx_timestamp *b, const struct timespec *t0)
{
	long unit = 1, t0_nsec = t0->tv_nsec;

	while (unit < 1000000000L && b->tv_nsec % (unit * 10) == 0)
		unit *= 10;
	t0_nsec -= t0_nsec % unit;
	return b->tv_sec > t0->tv_sec ||
	       (b->tv_sec == t0->tv_sec && (long)b->tv_nsec >= t0_nsec);
}

/* Does the directory fd (readable) hold nothing but "." and ".."? */
static int dir_is_empty(int fd)
{
	union {
		struct oc_dirent64 de;
		char buf[512];
	} u;
	const struct oc_dirent64 *de;
	long n, off;

	while ((n = syscall(SYS_getdents64, fd, u.buf, sizeof(u.buf))) > 0) {
		for (off = 0; off < n; off += de->d_reclen) {
			de = (const struct oc_dirent64 *)(u.buf + off);
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				return 0;
		}
	}
	return n == 0;
}

/*
 * Has a directory that shows st the group and setgid bit that a parent
 * that shows pst gives a new directory: its group and setgid bit if it
 * is setgid, else the caller's group (or the parent's, as the grpid
 * mount option gives) and no setgid bit?
 */
static int group_as_handed(const struct stat *st, const struct stat *pst)
{
	if (pst->st_mode & S_ISGID)
		return (st->st_mode & S_ISGID) && st->st_gid == pst->st_gid;
	return !(st->st_mode & S_ISGID) &&
	       (st->st_gid == pst->st_gid || st->st_gid == oc_fsgid());
}

/*
 * What a readable descriptor of a new staging directory shows inside: the
 * parent's default ACL, and no entry.
 */
static int stage_inside_ok(int fd, const struct stage_expect *ex)
{
	char acl[OC_ACL_MAX];
	ssize_t n = oc_default_acl(fd, acl, sizeof(acl));

	if (n != ex->acl_len || (n > 0 && memcmp(acl, ex->acl, (size_t)n)))
		return 0;
	return dir_is_empty(fd);
}

/*
 * Is fd, just opened at `name` in parentfd, the staging directory our
 * mkdirat made there? Someone who can write to the parent may have put
 * another directory at the name in between (an exchange needs no
 * permission on the directory it brings), so it is judged by identity,
 * never by ownership alone, before anything is done to it:
 *   - the name still leads to it, and its owner is the one this
 *     filesystem shows for what we create;
 *   - it is new: born at ex->t0 or later (statx birth time). Where the
 *     filesystem has no birth time nothing is proven: STAGE_UNPROVEN;
 *   - it has the group, setgid bit and default ACL a new directory gets
 *     in this parent (no set-user-ID or sticky bit);
 *   - it is empty, by getdents (a link count only shows that it has no
 *     subdirectories). An O_PATH fd, which the umask leaves us when it
 *     took the owner's read bit, is looked into (ACL, entries) only once
 *     the chmod that its proven birth allows has made it readable;
 *   - it has no permission bit beyond the 0700 it was made with and the
 *     group and other bits in `server_bits` (the umask and a default ACL
 *     only take bits away; with an ACL the group bits are its mask).
 * STAGE_EXTRA_BITS: all of that but the last, group or other bits
 * `server_bits` does not have.
 */
static int stage_is_ours(int parentfd, const char *name, int fd, int readable,
			 struct stat *st, const struct stage_expect *ex, mode_t server_bits)
{
	const struct stat *pst = &ex->parent;
	struct stat byname, now;
	struct statx sx;

	/* One statx for what fstat would say and the birth time. */
	if (statx(fd, "", AT_EMPTY_PATH | ex->sync, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		return STAGE_NOT_OURS;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	if (!S_ISDIR(st->st_mode) || (st->st_mode & (S_ISUID | S_ISVTX)))
		return STAGE_NOT_OURS;
	if (fstatat(parentfd, name, &byname, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !oc_same_inode(st, &byname) || !owned_by_caller(parentfd, st))
		return STAGE_NOT_OURS;
	if (!(sx.stx_mask & STATX_BTIME))
		return STAGE_UNPROVEN;
	/* Born before the call, or made by this process in the same tick. */
	if (!born_since(&sx.stx_btime, &ex->t0) || made_lately(fd, st))
		return STAGE_NOT_OURS;
	/*
	 * The parent's setgid bit passes on its group and itself; else ours.
	 * Its owner may change the parent meanwhile: what it shows now will
	 * do as well as what it showed before the mkdirat.
	 */
	if (!group_as_handed(st, pst) &&
	    (fstat(parentfd, &now) < 0 || !group_as_handed(st, &now)))
		return STAGE_NOT_OURS;
	if (readable && !stage_inside_ok(fd, ex))
		return STAGE_NOT_OURS;
	if (st->st_mode & ~server_bits & (S_IRWXG | S_IRWXO))
		return STAGE_EXTRA_BITS;
	return STAGE_OURS;
}

/*
 * Does a server (another machine, another process) decide the modes of
 * what is made in dirfd? On a local filesystem mkdirat's mode is an upper
 * bound: nothing adds bits to it.
 */
static int server_decides_modes(int dirfd)
{
	static const unsigned long remote[] = {
		0x6969,		/* NFS */
		0xfe534d42,	/* SMB2 (cifs) */
		0xff534d42,	/* CIFS */
		0x517b,		/* SMB */
		0x65735546,	/* FUSE */
		0x01021997,	/* 9P */
		0x00c36400,	/* Ceph */
		0x5346414f,	/* AFS (kAFS) */
		0x6b414653,	/* AFS (OpenAFS) */
		0x73757245,	/* Coda */
	};
	struct statfs sfs;
	size_t i;

	if (fstatfs(dirfd, &sfs) < 0)
		return 0;
	for (i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((unsigned long)sfs.f_type == remote[i])
			return 1;
	return 0;
}

/*
 * The group and other permission bits this filesystem gives a directory
 * made with mode 0700 in parentfd, or 0. A server may add bits the request
 * did not ask for (an SMB server through an ACL the parent passes on):
 * then our staging directory has them too, and only bits that a directory
 * of ours made there for this look also has are taken as the server's.
 *
 * Only where a server decides modes: elsewhere extra bits mean the
 * directory is not one we just made. The look could be fooled like the
 * staging directory: someone who can write the parent exchanges it with
 * an old directory of ours that has such bits, which we would then take
 * for the server's, accept such another one as our staging directory and
 * chmod it. So the look must be new to prove anything: born (the
 * server's birth time) no earlier than the parent's last change before we
 * made it; *proven says whether it was. The look is an empty directory of
 * a random name, removed at its name or, if a swapper moved it after we
 * opened it, where a name in the parent leads to it (oc_stage_remove()).
 * -EAGAIN: a swapper took it before it could be opened as ours, or out of
 * the parent; it is left there.
 */
static int server_added_bits(int parentfd, mode_t *bits, int *proven)
{
	struct statx before, look;
	struct stat st, byname;
	char name[64];
	int fd;

	*bits = 0;
	*proven = 0;
	if (!server_decides_modes(parentfd) ||
	    statx(parentfd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_MTIME, &before) < 0 ||
	    !(before.stx_mask & STATX_MTIME))
		return 0;
	oc_random_name(name, sizeof(name), ".ocdir-mode");
	if (mkdirat(parentfd, name, 0700) < 0)
		return 0;
	fd = oc_openat(parentfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP)
		return -EAGAIN;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_nlink > 2 ||
	    !owned_by_caller(parentfd, &st)) {
		close(fd);	/* not ours to remove */
		return -EAGAIN;
	}
	if (fstatat(parentfd, name, &byname, AT_SYMLINK_NOFOLLOW) == 0 &&
	    oc_same_inode(&st, &byname)) {
		*bits = st.st_mode & (S_IRWXG | S_IRWXO);
		*proven = statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_BTIME,
				&look) == 0 && (look.stx_mask & STATX_BTIME) &&
			  (look.stx_btime.tv_sec > before.stx_mtime.tv_sec ||
			   (look.stx_btime.tv_sec == before.stx_mtime.tv_sec &&
			    look.stx_btime.tv_nsec >= before.stx_mtime.tv_nsec));
		/*
		 * As in rmdir_if_ours(), a swap just now can only cost an
		 * empty directory.
		 */
		if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0) {
			close(fd);
			return 0;
		}
	}
	/* Moved after the open: looked for in the parent. */
	return oc_stage_remove(parentfd, fd, name) == -ENOENT ? -EAGAIN : 0;
}

/*
 * Make the private staging directory in parentfd and open it. A directory
 * that is not provably ours (see stage_is_ours()) is left alone, never
 * changed, and the name looked at again. Ours is made 0700 through its
 * descriptor if the umask took owner bits away or the server added group
 * or other bits; *unusable says why staging cannot run with it (the
 * caller removes it): OC_STAGE_LOST_SETGID, that chmod (by a caller
 * outside the directory's group) cleared the setgid bit it inherited from
 * the parent, which only our own chmod can do; OC_STAGE_NOT_PRIVATE, the
 * server kept bits that let others in; OC_STAGE_NOT_PROVEN, no birth time
 * tells it from an old directory exchanged in (it is not changed).
 * *made_mode is its mode as mkdirat made it (0700 less the umask or what a
 * default ACL allows the owner), which a new directory in it also gets.
 */
int oc_stage_create(int parentfd, int *stagefd, char *name, size_t size,
		    int *unusable, mode_t *made_mode)
{
	mode_t server_bits = 0;
	struct stage_expect ex;
	struct stat st;
	int i, fd, rfd, r, had_setgid, readable, made = 0, looked = 0, proven = 0;

	*unusable = 0;
	r = stage_expect_read(parentfd, &ex);
	if (r)
		return r;
	for (i = 0; i < OC_RACE_RETRIES; i++) {
		/*
		 * After a look that found something else at our name, look at
		 * the same name again rather than make another directory: a
		 * swap is usually undone, and each abandoned name is an empty
		 * directory of ours left wherever the swapper put it.
		 */
		if (made) {
			sched_yield();
		} else {
			oc_random_name(name, size, ".ocdir-stage");
			if (mkdirat(parentfd, name, 0700) < 0) {
				if (errno == EEXIST)
					continue;
				return -errno;
			}
			made = 1;
		}
		fd = oc_openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		readable = fd != -EACCES;
		if (!readable)	/* the umask took the owner's bits */
			fd = oc_openat(parentfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		/* Moved away (and maybe replaced): look again. */
		if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP)
			continue;
		if (fd < 0) {
			unlinkat(parentfd, name, AT_REMOVEDIR);
			return fd;
		}
		r = stage_is_ours(parentfd, name, fd, readable, &st, &ex, server_bits);
		/*
		 * Bits our own 0700 did not ask for: the server's doing if a
		 * directory made for the look gets them too. One look a call:
		 * a swapper that makes us look again gains nothing, and each
		 * look is a directory it could keep.
		 */
		if (r == STAGE_EXTRA_BITS && !looked) {
			looked = 1;
			r = server_added_bits(parentfd, &server_bits, &proven);
			if (r < 0) {
				/*
				 * The look was lost to a swapper, and so is this
				 * call: the look is the one directory it leaves.
				 */
				oc_stage_remove(parentfd, fd, name);
				return r;
			}
			r = stage_is_ours(parentfd, name, fd, readable, &st, &ex, server_bits);
		}
		/*
		 * No birth time here: nothing tells our directory from an old
		 * one exchanged in, so none is taken. The caller removes it
		 * where the name leads to it (an empty directory, which
		 * whoever can write this parent could remove anyway).
		 */
		if (r == STAGE_UNPROVEN) {
			*unusable = OC_STAGE_NOT_PROVEN;
			*stagefd = fd;
			return 0;
		}
		if (r != STAGE_OURS) {
			close(fd);
			continue;
		}
		*made_mode = st.st_mode & 07777;
		/*
		 * The server's bits, by all it shows, but a look that cannot
		 * be told new (no birth time) proves nothing: no chmod, not
		 * private. The caller removes it (where the name leads to it).
		 */
		if (server_bits && !proven) {
			*unusable = OC_STAGE_NOT_PRIVATE;
			*stagefd = fd;
			return 0;
		}
		if ((st.st_mode & 0777) != 0700) {
			had_setgid = st.st_mode & S_ISGID;
			r = oc_chmod_fd(fd, 0700 | (st.st_mode & S_ISGID));
			if (r < 0) {
				oc_stage_remove(parentfd, fd, name);
				return r;
			}
			if (fstat(fd, &st) < 0 || (st.st_mode & (S_IRWXG | S_IRWXO)))
				*unusable = OC_STAGE_NOT_PRIVATE;
			else if (had_setgid && !(st.st_mode & S_ISGID))
				*unusable = OC_STAGE_LOST_SETGID;
		}
		/*
		 * Opened O_PATH (the umask took the owner's read bit): proven
		 * new, now ours to read; stage_is_ours() could not look inside.
		 */
		if (!readable) {
			rfd = oc_openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
			if (rfd < 0 || !stage_inside_ok(rfd, &ex)) {
				if (rfd >= 0)
					close(rfd);
				oc_stage_remove(parentfd, fd, name);
				return rfd < 0 ? rfd : -EAGAIN;
			}
			close(fd);
			fd = rfd;
		}
		*stagefd = fd;
		return 0;
	}
	return -EAGAIN;
}

/*
 * Was the staging directory removed (by someone who can write the shared
 * parent: it is empty until the new directory is made in it)? Then a
 * mkdirat in it says ENOENT, which is no missing component of the
 * caller's path: the caller makes another one.
 */
int oc_stage_gone(int stagefd)
{
	struct stat st;

	return fstat(stagefd, &st) == 0 && st.st_nlink == 0;
}

/*
 * rmdir the entry `name` of parentfd if it leads to the directory `st`
 * describes. 1 when that directory is gone (its link count, read through
 * stagefd, is 0), 0 when it was not there or is still there, -errno on a
 * real failure.
 */
static int rmdir_if_ours(int parentfd, const char *name, int stagefd,
			 const struct stat *st)
{
	struct stat byname, after;

	if (fstatat(parentfd, name, &byname, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !oc_same_inode(st, &byname))
		return 0;
	/*
	 * An exchange between the check and the rmdir can make it remove
	 * another empty directory: only one that whoever can write this
	 * (shared, non-sticky) parent could remove anyway.
	 */
	if (unlinkat(parentfd, name, AT_REMOVEDIR) < 0)
		return errno == ENOENT || errno == ENOTEMPTY || errno == EEXIST ||
		       errno == ENOTDIR ? 0 : -errno;
	return fstat(stagefd, &after) == 0 && after.st_nlink == 0;
}

/*
 * Where did someone who can write the parent move our staging directory?
 * Look for its inode among the parent's entries (the parent is shared,
 * hence usually readable) and remove it there. 1 when it is gone.
 */
static int stage_find_remove(int parentfd, int stagefd, const struct stat *st)
{
	struct dirent *de;
	int fd, r = 0;
	DIR *dir;

	fd = oc_openat(parentfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	while (r == 0 && (de = readdir(dir)))
		if (de->d_ino == st->st_ino && strcmp(de->d_name, ".") &&
		    strcmp(de->d_name, ".."))
			r = rmdir_if_ours(parentfd, de->d_name, stagefd, st);
	closedir(dir);
	return r;
}

/*
 * Close the staging directory and remove it. Someone who can write the
 * parent can move it away or swap its name at any moment: it is removed
 * only where a name leads to it (its own name, else any entry of the
 * parent with its inode), a few times over. -ENOENT when it is nowhere in
 * the parent any more (moved out: it is then theirs to keep).
 */
int oc_stage_remove(int parentfd, int stagefd, const char *name)
{
	struct stat st;
	int i, r = -ENOENT;

	if (fstat(stagefd, &st) < 0) {
		r = -errno;
		goto out;
	}
	/*
	 * Its own name first, giving a swap the time to be undone: removing
	 * it from the name it was swapped to would strand whatever the
	 * swapper put in its place. Then its own name and, failing that, any
	 * name in the parent, a few times: a swapper that is preempted while
	 * it holds the swap, or swaps back while the parent is read (readdir
	 * then sees the inode at neither name), is outlasted.
	 */
	for (i = 0; i < 2 * OC_RACE_RETRIES; i++) {
		r = rmdir_if_ours(parentfd, name, stagefd, &st);
		if (r == 0 && i >= OC_RACE_RETRIES)
			r = stage_find_remove(parentfd, stagefd, &st);
		if (r != 0)
			break;
		if (fstat(stagefd, &st) == 0 && st.st_nlink == 0) {
			r = 1;	/* removed meanwhile, by whom it may concern */
			break;
		}
		sched_yield();
	}
	r = r > 0 ? 0 : r < 0 ? r : -ENOENT;
out:
	close(stagefd);
	return r;
}

/*
 * mkdirat, then open the new directory with O_NOFOLLOW. After the mkdirat
 * nothing is done by name but the open and, on failure, the rmdir: every
 * mode change goes through a descriptor.
 *
 * The native call needs no permission on the new directory itself; here
 * the owner may lack read permission (to open it) or, with keep_lent,
 * write permission (to rename it to another parent, which updates its
 * ".."). Such permission is lent through a descriptor (O_PATH when the
 * directory cannot be opened yet) and given back: at once if keep_lent is
 * NULL, else by the caller after its rename (*keep_lent is then the mode
 * to restore, or (mode_t)-1 if none was lent).
 *
 * trusted: nobody else can move or replace entries of dirfd (a private
 * parent, our staging directory). Elsewhere permission is lent only to a
 * directory the caller owns (as this filesystem shows owners: see
 * owned_by_caller()), and a directory that is not the caller's is
 * answered with -EEXIST ("look at the name again") and left alone.
 *
 * A chmod by a caller outside the directory's group (without CAP_FSETID)
 * clears the setgid bit the directory inherited, and nothing unprivileged
 * can set it again. With keep_lent NULL such a loss fails the call with
 * EACCES (the owner may not read the directory: there is no way to open
 * it and keep its mode); with keep_lent the caller sees it in the fd's
 * mode.
 */
int oc_mkdir_open(int dirfd, const char *name, mode_t mode, int oflags,
		  mode_t *keep_lent, int trusted)
{
	mode_t need = keep_lent ? S_IRUSR | S_IWUSR : S_IRUSR, orig;
	int fd, pathfd, r;
	struct stat st;

	if (keep_lent)
		*keep_lent = (mode_t)-1;
	if (mkdirat(dirfd, name, mode) < 0)
		return -errno;
	oflags |= O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
	fd = oc_openat(dirfd, name, oflags, 0);
	if (fd >= 0) {
		if (!keep_lent)
			return fd;
		/* Staged: the rename to the parent needs the owner's write bit. */
		if (fstat(fd, &st) < 0) {
			r = -errno;
			goto fail_fd;
		}
		if ((st.st_mode & need) == need)
			return fd;
		r = oc_chmod_fd(fd, (st.st_mode & 07777) | need);
		if (r < 0)
			goto fail_fd;
		*keep_lent = st.st_mode & 07777;
		return fd;
	}
	if (fd != -EACCES) {
		r = fd;
		goto fail_name;
	}
	/* The owner may not read it: lend that through an O_PATH descriptor. */
	pathfd = oc_openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (pathfd < 0) {
		r = pathfd;
		goto fail_name;
	}
	if (fstat(pathfd, &st) < 0) {
		r = -errno;
		close(pathfd);
		goto fail_name;
	}
	if (!trusted && !owned_by_caller(dirfd, &st)) {
		close(pathfd);
		return -EEXIST;	/* not provably ours: nothing to undo by name */
	}
	orig = st.st_mode & 07777;
	/* and search permission: "." is looked up in it to open it */
	r = oc_chmod_fd(pathfd, orig | need | S_IXUSR);
	if (r == 0) {
		fd = oc_openat(pathfd, ".", oflags, 0);
		if (fd < 0)
			oc_chmod_fd(pathfd, orig);
	}
	close(pathfd);
	if (r < 0)
		goto fail_name;
	if (fd < 0) {
		r = fd;
		goto fail_name;
	}
	if (keep_lent) {
		*keep_lent = orig;
		return fd;
	}
	r = oc_chmod_fd(fd, orig);
	if (r == 0 && (orig & S_ISGID) && (fstat(fd, &st) < 0 || !(st.st_mode & S_ISGID)))
		r = -EACCES;
	if (r == 0)
		return fd;
fail_fd:
	close(fd);
fail_name:
	unlinkat(dirfd, name, AT_REMOVEDIR);
	return r;
}

/*
 * The directories this process made lately in shared parents: a staging
 * directory is never one of them. A birth time cannot tell a directory
 * made in the same clock tick before the call (the previous call's,
 * exchanged into the staging name by someone who can write the parent)
 * from the one just made; for this library's own, in this process, this
 * can. Device and inode find a candidate; the file handle (which holds
 * the inode's generation) tells a reused inode number from the same inode.
 */
#define OC_MADE_LATELY 64
struct made_dir {
	dev_t dev;
	ino_t ino;
	unsigned int handle_bytes;	/* 0: the filesystem gives no handle */
	unsigned char handle[40];
};
static struct {
	pthread_mutex_t lock;
	unsigned int next;
	struct made_dir made[OC_MADE_LATELY];
} lately = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* fd's device, inode and file handle (handle_bytes 0 where there is none). */
static int made_dir_of(int fd, const struct stat *st, struct made_dir *m)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(m->handle)];
	} u;
	int mount_id;

	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->handle_bytes = 0;
	u.fh.handle_bytes = sizeof(m->handle);
	if (name_to_handle_at(fd, "", &u.fh, &mount_id, AT_EMPTY_PATH) == 0) {
		m->handle_bytes = u.fh.handle_bytes;
		memcpy(m->handle, u.fh.f_handle, u.fh.handle_bytes);
	}
	return 0;
}

void oc_note_made(int fd)
{
	struct made_dir m;
	struct stat st;

	if (fstat(fd, &st) < 0 || made_dir_of(fd, &st, &m) < 0)
		return;
	pthread_mutex_lock(&lately.lock);
	lately.made[lately.next++ % OC_MADE_LATELY] = m;
	pthread_mutex_unlock(&lately.lock);
}

/*
 * Is fd (showing st) one of the directories noted by oc_note_made()? An
 * inode number comes back after its directory is removed: every entry
 * with it is compared by file handle, which tells the two apart.
 */
static int made_lately(int fd, const struct stat *st)
{
	struct made_dir m;
	unsigned int i, n;
	int found = 0, have_handle = 0;

	pthread_mutex_lock(&lately.lock);
	n = lately.next < OC_MADE_LATELY ? lately.next : OC_MADE_LATELY;
	for (i = 0; i < n && !found; i++) {
		const struct made_dir *e = &lately.made[i];

		if (e->dev != st->st_dev || e->ino != st->st_ino)
			continue;
		if (!have_handle) {
			made_dir_of(fd, st, &m);
			have_handle = 1;
		}
		found = !m.handle_bytes || !e->handle_bytes ||
			(m.handle_bytes == e->handle_bytes &&
			 !memcmp(m.handle, e->handle, m.handle_bytes));
	}
	pthread_mutex_unlock(&lately.lock);
	return found;
}


/*
 * Whether only the caller and root can move or replace what the caller
 * makes in this parent: it belongs to one of them, and nobody else may
 * write to it, or it is sticky (then only its owner and the entry's owner
 * may rename or remove an entry). Group write counts as "somebody else":
 * with an access ACL the group bits are its mask, which bounds every
 * named entry. There mkdirat + openat cannot be fooled, since a swap needs
 * write access to the parent.
 */
int oc_parent_is_private(const struct stat *parent)
{
	if (!(!(parent->st_mode & (S_IWGRP | S_IWOTH)) || (parent->st_mode & S_ISVTX)))
		return 0;
	/* root's needs no look at our fsuid (a system call) */
	return parent->st_uid == 0 || parent->st_uid == oc_fsuid();
}

/*
 * Where the staging design cannot run in a shared parent (no
 * RENAME_NOREPLACE, the rename refused by an LSM, a setgid bit the staging
 * directory would lose): mkdirat + openat(O_NOFOLLOW) in the parent, then
 * check that the name still leads to the directory we opened and that it
 * is ours. Only with OCDIR_ALLOW_WEAK_EMULATION: between the two calls the
 * name can be swapped for another directory of the caller's, and the new
 * directory is visible before it is opened. -EEXIST tells the caller to
 * look at the name again.
 */
int oc_create_weak(int parentfd, const char *last, const struct oc_req *req,
		   int oflags)
{
	struct stat byfd, byname;
	int fd;

	if (!req->allow_weak)
		return -EOPNOTSUPP;
	fd = oc_mkdir_open(parentfd, last, req->mode, oflags, NULL, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &byfd) < 0 || !owned_by_caller(parentfd, &byfd) ||
	    fstatat(parentfd, last, &byname, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !oc_same_inode(&byfd, &byname)) {
		close(fd);
		return -EEXIST;
	}
	oc_note_made(fd);
	return fd;
}

/*
 * Staging would cost the new directory (of mode `mode`) the setgid bit it
 * inherits. If its owner may not even read it, no way of making it keeps
 * that bit (opening it needs a lent chmod): EACCES, as in a private
 * parent. Otherwise only creating in place would, which is the weak
 * fallback.
 */
static int setgid_lost(int parentfd, const char *last, const struct oc_req *req,
		       int oflags, mode_t mode)
{
	if (!(mode & S_IRUSR))
		return -EACCES;
	return oc_create_weak(parentfd, last, req, oflags);
}

/*
 * Absent name in a shared parent: make it in staging, open it, rename it
 * into place.
 */
static int create_staged(int parentfd, const char *last, const struct oc_req *req,
			 int oflags)
{
	char stagename[64];
	int stagefd, fd, r, unusable, tries = 0;
	struct stat st;
	mode_t lent, made;

again:
	r = oc_stage_create(parentfd, &stagefd, stagename, sizeof(stagename),
			    &unusable, &made);
	if (r)
		return r;
	/*
	 * Making the staging directory usable took a chmod that cleared the
	 * setgid bit the new directory must inherit from the parent, or the
	 * server would not let it be private.
	 */
	if (unusable) {
		oc_stage_remove(parentfd, stagefd, stagename);
		if (unusable != OC_STAGE_LOST_SETGID)
			return oc_create_weak(parentfd, last, req, oflags);
		return setgid_lost(parentfd, last, req, oflags, req->mode & made);
	}
	fd = oc_mkdir_open(stagefd, last, req->mode, oflags, &lent, 1);
	if (fd < 0) {
		int gone = fd == -ENOENT && oc_stage_gone(stagefd);

		oc_stage_remove(parentfd, stagefd, stagename);
		/* Someone removed the empty staging directory: another one. */
		if (gone && ++tries < OC_RACE_RETRIES)
			goto again;
		return gone ? -EAGAIN : fd;
	}
	/* Lending the write bit for the rename cost the inherited setgid bit. */
	if (lent != (mode_t)-1 && (lent & S_ISGID) &&
	    fstat(fd, &st) == 0 && !(st.st_mode & S_ISGID)) {
		close(fd);
		unlinkat(stagefd, last, AT_REMOVEDIR);
		oc_stage_remove(parentfd, stagefd, stagename);
		return setgid_lost(parentfd, last, req, oflags, lent);
	}
	r = oc_renameat2(stagefd, last, parentfd, last, RENAME_NOREPLACE);
	if (r == 0 && lent != (mode_t)-1) {
		r = oc_chmod_fd(fd, lent);
		/* Published but with the wrong mode: take it back. */
		if (r < 0 && oc_renameat2(parentfd, last, stagefd, last, RENAME_NOREPLACE) < 0) {
			close(fd);
			oc_stage_remove(parentfd, stagefd, stagename);
			return r;
		}
	}
	if (r < 0) {
		unlinkat(stagefd, last, AT_REMOVEDIR);
		close(fd);
		oc_stage_remove(parentfd, stagefd, stagename);
		/*
		 * EINVAL/ENOSYS: no RENAME_NOREPLACE here. EXDEV within one
		 * directory: an LSM refused it (Landlock without REFER).
		 */
		if (r == -EINVAL || r == -ENOSYS || r == -EXDEV)
			return oc_create_weak(parentfd, last, req, oflags);
		return r;
	}
	oc_stage_remove(parentfd, stagefd, stagename);
	oc_note_made(fd);
	return fd;
}

/*
 * Rule 10: a pre-existing directory in a sticky, world- or group-writable
 * parent opens only for the parent's owner's or the caller's directories.
 */
int oc_sticky_denied(const struct stat *parent, const struct stat *dir)
{
	if (!(parent->st_mode & S_ISVTX) || !(parent->st_mode & (S_IWOTH | S_IWGRP)))
		return 0;
	return dir->st_uid != parent->st_uid && dir->st_uid != oc_fsuid();
}

static int sticky_denied(int parentfd, int fd)
{
	struct stat p, d;

	if (fstat(parentfd, &p) < 0 || fstat(fd, &d) < 0)
		return 0;
	return oc_sticky_denied(&p, &d);
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

/*
 * The last component is a symlink and may be followed. Returns 0 with
 * *next set to the path to look at instead (the caller goes round its
 * loop: no recursion, one buffer on the heap), or a descriptor or -errno
 * when the link is answered here.
 */
static int follow_last(int dirfd, int parentfd, const char *parent,
		       const char *last, const struct oc_req *req, int *created,
		       int oflags, int *links, int trailing_slash, int root_set,
		       char **next)
{
	char *target;
	ssize_t n;
	int fd, r;

	fd = oc_openat(parentfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	/* The link went away since the fstatat: -EAGAIN, "look again". */
	if (fd < 0)
		return fd == -ENOENT ? -EAGAIN : fd;
	/*
	 * The kernel's order (pick_link()): the link count, then
	 * fs.protected_symlinks for a trailing link, then RESOLVE_NO_SYMLINKS.
	 */
	r = ++*links > OC_MAX_SYMLINKS ? -ELOOP : oc_may_follow(parentfd, fd);
	if (!r && (req->resolve & OCDIR_RESOLVE_NO_SYMLINKS))
		r = -ELOOP;
	target = r ? NULL : malloc(PATH_MAX);
	if (!r && !target)
		r = -ENOMEM;
	if (r) {
		close(fd);
		return r;
	}
	n = oc_read_link(fd, target, PATH_MAX);
	close(fd);
	if (n < 0) {
		/* replaced by something that is no symlink: look again */
		if (n == -ENOENT)
			--*links;
		r = n == -ENOENT ? -EAGAIN : (int)n;
		goto out;
	}
	if (oc_is_magic_link(parentfd, target)) {
		if (req->resolve & OCDIR_RESOLVE_NO_MAGICLINKS) {
			r = -ELOOP;
			goto out;
		}
		if (req->resolve & OC_RESOLVE_SCOPED) {
			r = -EXDEV;
			goto out;
		}
		/* Only the kernel can follow it; nothing is created through it. */
		r = oc_scoped_open(parentfd, last, O_RDONLY | O_DIRECTORY | oflags,
				   req->resolve);
		if (r == -ENOENT)
			r = -EEXIST;
		if (r >= 0 && created)
			*created = 0;
		goto out;
	}
	if (n == 0) {
		r = -ENOENT;
		goto out;
	}
	/*
	 * An absolute link jumps to the root: under NO_XDEV that is a crossing
	 * unless the root is already set (IN_ROOT, an absolute path, or a ".."
	 * on the way) and on the link's mount, as in the kernel's
	 * nd_jump_root().
	 */
	if (target[0] == '/' && (req->resolve & OCDIR_RESOLVE_NO_XDEV) &&
	    !(req->resolve & OC_RESOLVE_SCOPED) && !root_set) {
		r = -EXDEV;
		goto out;
	}
	if (target[0] == '/' && (req->resolve & OCDIR_RESOLVE_NO_XDEV) &&
	    !(req->resolve & OCDIR_RESOLVE_BENEATH)) {
		uint64_t here, there;
		int rootfd = req->resolve & OCDIR_RESOLVE_IN_ROOT ? dirfd : AT_FDCWD;

		fd = oc_openat(rootfd, req->resolve & OCDIR_RESOLVE_IN_ROOT ? "." : "/",
			       O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		if (fd < 0) {
			r = fd;
			goto out;
		}
		r = oc_mount_id(parentfd, &here);
		if (!r)
			r = oc_mount_id(fd, &there);
		close(fd);
		if (!r && here != there)
			r = -EXDEV;
		if (r)
			goto out;
	}
	/* Keep the trailing slash: the whole chain is followed then. */
	if (trailing_slash && (size_t)n + 1 < PATH_MAX) {
		target[n] = '/';
		target[n + 1] = '\0';
	}
	*next = join_link(parent, target);
	r = *next ? 0 : -ENOMEM;
out:
	free(target);
	return r;
}

/*
 * One look at `path`: create or open its last component, or ask the caller
 * (through *next) to look at a trailing symlink's target instead.
 */
static int emulate_step(int dirfd, const char *path, const struct oc_req *req,
			int *created, int via_link, int *links, char **next)
{
	int oflags = (req->flags & ~(O_EXCL | O_NOFOLLOW)) | req->cloexec;
	int excl = !!(req->flags & O_EXCL);
	char *parent, *last;
	int parentfd, pathfd, fd, i, r, trailing_slash, bare, private;
	struct stat st, pst;

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

	/*
	 * A bare name needs no walk: dirfd is the parent. Not AT_FDCWD (the
	 * helpers below fstat the parent's descriptor), and not with O_EXCL:
	 * then opening the parent is the call's first use of a descriptor,
	 * where the kernel answers EMFILE (without O_EXCL open_own_existing()
	 * was that).
	 */
	bare = !req->resolve && !via_link && !strchr(path, '/') && !excl && dirfd >= 0;
	if (bare)
		parentfd = dirfd;
	else
		parentfd = oc_scoped_open(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
					  req->resolve);
	if (parentfd < 0 && !bare) {
		fd = parentfd;
		goto out_free;
	}
	if (fstat(parentfd, &pst) < 0) {
		fd = -errno;
		goto out_close;
	}
	private = oc_parent_is_private(&pst);
	/* Lost races end in EAGAIN, as the header says. */
	fd = -EAGAIN;
	for (i = 0; i < OC_RACE_RETRIES; i++) {
		/*
		 * In a private parent the mkdirat itself is the lookup: it
		 * answers EEXIST for any existing name before any other error.
		 */
		if (private && !via_link && i == 0 && !req->no_create) {
			fd = oc_mkdir_open(parentfd, last, req->mode, oflags, NULL, 1);
			if (fd != -EEXIST) {
				if (fd >= 0 && created)
					*created = 1;
				break;
			}
		}
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
			if (req->no_create) {
				fd = -ENOENT;
				break;
			}
			fd = private ? oc_mkdir_open(parentfd, last, req->mode, oflags, NULL, 1) :
				       create_staged(parentfd, last, req, oflags);
			if (fd == -EEXIST && !excl) {
				fd = -EAGAIN;
				continue;	/* someone else made it: open theirs */
			}
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
					 path[0] == '/' || has_dotdot(parent), next);
			/* The link changed under us: look at the name again. */
			if (fd == -EAGAIN && !*next)
				continue;
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
		if (sticky_denied(parentfd, pathfd)) {
			fd = -EACCES;
		} else if (oflags & O_PATH) {
			/* the pin is the answer (needs no search permission in it) */
			fd = pathfd;
			pathfd = -1;
			if (!(oflags & O_CLOEXEC))
				fcntl(fd, F_SETFD, 0);
		} else {
			fd = oc_openat(pathfd, ".", O_RDONLY | O_DIRECTORY | oflags, 0);
		}
		if (pathfd >= 0)
			close(pathfd);
		if (fd >= 0 && created)
			*created = 0;
		break;
	}
out_close:
	if (!bare)
		close(parentfd);
out_free:
	free(parent);
	free(last);
	return fd;
}

/*
 * Most calls find a directory that exists already and is the caller's
 * own: then one open answers them, with no rule of ours to apply (rule
 * 10 never refuses the caller's own directory). Anything else (absent,
 * a symlink, somebody else's directory, an error) takes the full way,
 * which gives the errno of the kernel's order. Returns -ENOENT for "take
 * the full way".
 */
static int open_own_existing(int dirfd, const char *path, const struct oc_req *req,
			     int oflags)
{
	struct stat st;
	int fd;

	fd = oc_scoped_open(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | oflags,
			    req->resolve);
	/* The kernel takes the descriptor before it walks: EMFILE comes first. */
	if (fd == -EMFILE || fd == -ENFILE)
		return fd;
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) == 0 && st.st_uid == oc_fsuid())
		return fd;
	close(fd);
	return -ENOENT;
}

int oc_emulate(int dirfd, const char *path, const struct oc_req *req,
	       int *created)
{
	int oflags = (req->flags & ~(O_EXCL | O_NOFOLLOW)) | req->cloexec;
	char *followed = NULL, *next;
	int links = 0, fd;

	if (!(req->flags & O_EXCL) && *path) {
		fd = open_own_existing(dirfd, path, req, oflags);
		if (fd == -EMFILE || fd == -ENFILE)
			return fd;
		if (fd >= 0) {
			if (created)
				*created = 0;
			return fd;
		}
	}
	/* Trailing symlinks are followed here, in a loop: bounded stack. */
	for (;;) {
		next = NULL;
		fd = emulate_step(dirfd, followed ? followed : path, req, created,
				  !!followed, &links, &next);
		free(followed);
		if (!next)
			return fd;
		followed = next;
	}
}
