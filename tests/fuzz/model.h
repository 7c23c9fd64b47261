/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/model.h - the reference model of docs/semantics.md section 3
 * that the differential fuzzer compares the kernel and the library against.
 *
 * The model is one plain function, fz_model(): it takes a description of the
 * filesystem before the call (a list of objects below the case directory C,
 * plus what the fuzzer measured about the filesystem and the mounts around
 * C) and the call, and says what the call must return and what must exist
 * afterwards. It never touches the filesystem.
 */
#ifndef OCDIR_FUZZ_MODEL_H
#define OCDIR_FUZZ_MODEL_H

#include <limits.h>
#include <stdint.h>

#define FZ_REL_MAX	512		/* a path relative to C */
#define FZ_MAX_ENTRIES	16
#define FZ_MAX_ANCESTORS 32

/* Object types of the pre-state. */
enum fz_type { FT_NONE, FT_DIR, FT_REG, FT_FIFO, FT_SOCK, FT_CHR, FT_LNK };

/* Default ACLs the fuzzer can put on a parent (system.posix_acl_default). */
enum fz_acl {
	FZ_ACL_NONE,
	FZ_ACL_MIN,	/* u::rwx g::r-x o::---               */
	FZ_ACL_EXT,	/* u::rwx u:1234:rwx g::r-x m::rwx o::--x */
};

/* One object below C. */
struct fz_entry {
	char path[FZ_REL_MAX];	/* relative to C, e.g. "P/d2" */
	int type;		/* enum fz_type */
	unsigned int perm;	/* 07777 bits */
	unsigned int uid, gid;
	char link[PATH_MAX];	/* symlink text */
	int acl;		/* enum fz_acl, directories only */
	int ro_mount;		/* a read-only bind mount of itself */
};

/* What the fuzzer measured about the place it runs in. */
struct fz_env {
	char cdir[PATH_MAX];	/* absolute, symlink-free path of C */
	char fstype[64];	/* from /proc/self/mountinfo */
	int odirect_dirs;	/* open(dir, O_DIRECT) works on this fs */
	int odirect_root;	/* ... and on "/" (another fs, e.g. the guest's 9p root) */
	int odirect_early;	/* the kernel refuses O_CREAT|O_DIRECTORY|O_DIRECT
				 * before the walk (the series since 0012's fix) */
	int nonotify_stripped;	/* openat2 ignores FZ_O_NONOTIFY (6.12; 7.3
				 * answers EINVAL) */
	unsigned int perm_mask;	/* bits a mkdir here can keep (9p: server side) */
	int protected_symlinks;	/* fs.protected_symlinks */
	int no_noreplace;	/* renameat2(RENAME_NOREPLACE) refused (9p, FUSE) */
	/* "/" and each directory down to C: name and mount id */
	int nanc;
	char anc_name[FZ_MAX_ANCESTORS][NAME_MAX + 1];
	uint64_t anc_mnt[FZ_MAX_ANCESTORS];
	uint64_t proc_mnt;	/* mount id of /proc (0: not mounted) */
};

/* Whose semantics the model applies. */
enum fz_sem {
	FZ_SEM_KERNEL_OPENAT,	/* raw openat(2), patched kernel, this fs */
	FZ_SEM_KERNEL_OPENAT2,	/* raw openat2(2) */
	FZ_SEM_LIB_OPENAT,	/* ocdir_openat(): rule 13 completed */
	FZ_SEM_LIB_OPENAT2,	/* ocdir_openat2() */
};

struct fz_call {
	int sem;		/* enum fz_sem */
	uint64_t flags, mode, resolve, options;
	unsigned int umask;
	unsigned int uid, gid;	/* fsuid/fsgid of the caller, no supplementary groups */
	const char *dirfd_rel;	/* "" for C itself, else relative to C */
	const char *path;	/* "DIRFD" stands for the dirfd's number */
	int nofile;		/* no free descriptor (RLIMIT_NOFILE) */
};

struct fz_expect {
	int err;		/* 0: a descriptor */
	char opened[PATH_MAX];	/* absolute path of the directory it must be */
	int created;		/* a directory was made by this call */
	struct fz_entry made;	/* ... and this is it (also when err != 0 and kept) */
	int made_kept;		/* made stays although err != 0 (kernel, O_DIRECT) */
};

/* snprintf that may truncate: every buffer here is sized for its use. */
__attribute__((format(printf, 3, 4)))
void fmt(char *buf, size_t size, const char *f, ...);

int fz_model(const struct fz_env *env, const struct fz_entry *pre, int npre,
	     const struct fz_call *call, struct fz_expect *out);

/* Raw open(2) flag values that the C library may hide or not define. */
#define FZ_O_LARGEFILE	0100000
#define FZ_O_TMPFILE_BIT 020000000	/* __O_TMPFILE */
#define FZ_O_NONOTIFY	0x2000000	/* __FMODE_NONOTIFY: openat2 strips it up to
					 * 6.13, refuses it later (env) */
#define FZ_VALID_OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | \
	O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_ASYNC | O_DIRECT | \
	FZ_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | \
	O_PATH | FZ_O_TMPFILE_BIT)
#define FZ_O_PATH_FLAGS	(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

#define FZ_RESOLVE_NO_XDEV	0x01
#define FZ_RESOLVE_NO_MAGICLINKS 0x02
#define FZ_RESOLVE_NO_SYMLINKS	0x04
#define FZ_RESOLVE_BENEATH	0x08
#define FZ_RESOLVE_IN_ROOT	0x10
#define FZ_RESOLVE_CACHED	0x20

#endif /* OCDIR_FUZZ_MODEL_H */
