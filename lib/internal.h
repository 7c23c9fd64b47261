/* SPDX-License-Identifier: MIT */
/*
 * lib/internal.h - what the parts of libocdir share. Nothing here is
 * exported (see lib/ocdir.map). Every helper returns a descriptor, 0 or a
 * positive count on success and -errno on failure; errno is set only by the
 * public functions in lib/ocdir.c and lib/prepare.c.
 */
#ifndef OCDIR_INTERNAL_H
#define OCDIR_INTERNAL_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ocdir.h"

#define OC_EXPORT __attribute__((visibility("default")))

/* The kernel's values; glibc defines O_LARGEFILE as 0 on 64-bit targets. */
#define OC_O_LARGEFILE	0100000
#define OC_O_TMPFILE	020000000

/* The largest `size` a call reads, as openat2(2): a page. */
#define OC_HOW_SIZE_MAX	4096

#define OC_RESOLVE_ALL	(OCDIR_RESOLVE_NO_XDEV | OCDIR_RESOLVE_NO_MAGICLINKS | \
			 OCDIR_RESOLVE_NO_SYMLINKS | OCDIR_RESOLVE_BENEATH | \
			 OCDIR_RESOLVE_IN_ROOT)
#define OC_RESOLVE_SCOPED (OCDIR_RESOLVE_BENEATH | OCDIR_RESOLVE_IN_ROOT)

/* fcntl(2): F_LINUX_SPECIFIC_BASE + 4, Linux 6.12 */
#define OC_F_CREATED_QUERY 1028

/* As the kernel counts them (MAXSYMLINKS). */
#define OC_MAX_SYMLINKS	40

/* What getdents64(2) fills in (struct linux_dirent64). */
struct oc_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A validated request: open flags without O_CREAT/O_DIRECTORY/O_CLOEXEC. */
struct oc_req {
	int flags;		/* O_EXCL, O_NOFOLLOW, O_NONBLOCK, ... */
	mode_t mode;		/* already reduced to 0777 | S_ISVTX */
	uint64_t resolve;	/* OCDIR_RESOLVE_* */
	int cloexec;		/* O_CLOEXEC or 0 */
	int allow_weak;		/* OCDIR_ALLOW_WEAK_EMULATION */
	int always_stage;	/* OCDIR_ALWAYS_STAGE */
	int path_only;		/* O_PATH given (mkpath, mkdirat): see oc_create_or_open_path */
	int no_create;		/* open only: an absent last component is -ENOENT */
};

/* lib/syscall.c: raw system calls */
int oc_openat(int dirfd, const char *path, int flags, mode_t mode);
int oc_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
	       uint64_t resolve);
int oc_openat2_retry(int dirfd, const char *path, uint64_t flags,
		     uint64_t mode, uint64_t resolve);
int oc_renameat2(int olddirfd, const char *oldpath, int newdirfd,
		 const char *newpath, unsigned int flags);
int oc_mount_id(int fd, uint64_t *id);
uid_t oc_fsuid(void);
gid_t oc_fsgid(void);
ssize_t oc_default_acl(int fd, char *buf, size_t size);
int oc_chmod_fd(int fd, mode_t mode);
int oc_created_query(int fd);

/* lib/probe.c: the once-per-process decisions */
struct oc_config {
	int native;		/* the kernel creates with O_CREAT|O_DIRECTORY */
	int created_query;	/* ... and answers F_CREATED_QUERY (6.12+) */
	int force_resolver;	/* OCDIR_FORCE_RESOLVER=1 */
	int no_noreplace;	/* OCDIR_TEST_NO_NOREPLACE=1: pretend EINVAL */
	const char *reason;
};
const struct oc_config *oc_config(void);

/*
 * The fd-identity test hook (make test-hooks; never in a release build):
 * with OCDIR_TEST_SWAP_AFTER=1 at call time, a call about to hand out a
 * descriptor to dirfd/path first moves that name to "path.ocdir-test-moved"
 * and makes a fresh empty directory at path. A wrapper that re-opens by
 * name then gets the fresh one, in every run. Returns fd unchanged.
 */
#ifdef OCDIR_TEST_HOOKS
int oc_test_swap_after(int dirfd, const char *path, int fd);
#else
static inline int oc_test_swap_after(int dirfd, const char *path, int fd)
{
	(void)dirfd;
	(void)path;
	return fd;
}
#endif
int oc_openat2_missing(void);
void oc_set_openat2_missing(void);

/* lib/resolve.c: scoped lookups */
int oc_scoped_open(int rootfd, const char *path, int oflags, uint64_t resolve);
int oc_resolver_open(int rootfd, const char *path, int oflags,
		     uint64_t resolve);
ssize_t oc_read_link(int linkfd, char *buf, size_t size);
int oc_is_magic_link(int dirfd, const char *target);
int oc_may_follow(int dirfd, int linkfd);

/* lib/emulate.c: create-or-open done in userspace */
int oc_emulate(int dirfd, const char *path, const struct oc_req *req,
	       int *created);
#define OC_RACE_RETRIES 8
int oc_split_path(const char *path, char **parent, char **last);
int oc_is_dot_name(const char *last);
void oc_random_name(char *buf, size_t size, const char *prefix);
#define OC_STAGE_LOST_SETGID 1	/* oc_stage_create's *unusable */
#define OC_STAGE_NOT_PRIVATE 2
#define OC_STAGE_NOT_PROVEN 3	/* no birth time: not provably new */
int oc_stage_create(int parentfd, int *stagefd, char *stagename, size_t size,
		    int *unusable, mode_t *made_mode);
int oc_stage_remove(int parentfd, int stagefd, const char *stagename);
int oc_mkdir_open(int dirfd, const char *name, mode_t mode, int oflags,
		  mode_t *keep_lent, int trusted);
int oc_same_inode(const struct stat *a, const struct stat *b);
int oc_sticky_denied(const struct stat *parent, const struct stat *dir);
int oc_parent_is_private(const struct stat *parent);
int oc_stage_gone(int stagefd);
void oc_note_made(int fd);
int oc_create_weak(int parentfd, const char *last, const struct oc_req *req,
		   int oflags);

/* lib/prepare.c: create with a setup step before the directory is usable */
int oc_create_setup(int dirfd, const char *path, const char *shown,
		    const struct oc_req *req, ocdir_setup_fn setup, void *arg,
		    int *created);

/* lib/ocdir.c */
#define OC_HOW_OPENAT2	1	/* mode bits outside 07777: EINVAL, as openat2 */
#define OC_HOW_PATH_OK	2	/* O_PATH accepted: req->path_only */
int oc_check_how(const char *path, const struct ocdir_how *how, size_t size,
		 int checks, struct oc_req *req);
int oc_create_or_open(int dirfd, const char *path, const struct oc_req *req,
		      int *created);
int oc_create_or_open_path(int dirfd, const char *path,
			   const struct oc_req *req, int *created);

#endif /* OCDIR_INTERNAL_H */
