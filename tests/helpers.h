/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers.h - the scaffolding every ocdir test program shares.
 *
 * Result protocol (counted by tests/run, on the host and through vm/run):
 *   PASS: <name>
 *   FAIL: <name>: <reason>
 *   SKIP: <name>: <reason>
 * one line per case on stdout; the program exits 0 when nothing failed,
 * 1 when something did, and 77 when it could not run at all (after printing
 * a SKIP line that says why).
 */
#ifndef OCDIR_TESTS_HELPERS_H
#define OCDIR_TESTS_HELPERS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

struct t_counts {
	unsigned int passed, failed, skipped;
};

/* One set of counters per test program; tests are single-threaded drivers. */
static struct t_counts t_counts;

static inline void t_vreport(const char *tag, const char *name,
			     const char *fmt, va_list ap)
{
	printf("%s: %s", tag, name);
	if (fmt && *fmt) {
		fputs(": ", stdout);
		vprintf(fmt, ap);
	}
	putchar('\n');
	fflush(stdout);
}

static inline void t_pass(const char *name)
{
	t_counts.passed++;
	printf("PASS: %s\n", name);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline void t_fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	t_counts.failed++;
	va_start(ap, fmt);
	t_vreport("FAIL", name, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static inline void t_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	t_counts.skipped++;
	va_start(ap, fmt);
	t_vreport("SKIP", name, fmt, ap);
	va_end(ap);
}

/* Report a case from a boolean; the reason is only formatted on failure. */
#define T_CHECK(name, cond, ...)				\
	do {							\
		if (cond)					\
			t_pass(name);				\
		else						\
			t_fail(name, __VA_ARGS__);		\
	} while (0)

/* Exit status for main(): fail beats pass, and all-skipped is a skip. */
static inline int t_exit_status(void)
{
	if (t_counts.failed)
		return T_EXIT_FAIL;
	if (!t_counts.passed && t_counts.skipped)
		return T_EXIT_SKIP;
	return T_EXIT_PASS;
}

/* errno names make failure lines readable without a lookup table. */
static inline const char *t_errname(int err)
{
	switch (err) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EXDEV: return "EXDEV";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ENFILE: return "ENFILE";
	case EMFILE: return "EMFILE";
	case ENOSPC: return "ENOSPC";
	case EROFS: return "EROFS";
	case EMLINK: return "EMLINK";
	case ERANGE: return "ERANGE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOSYS: return "ENOSYS";
	case ENOTEMPTY: return "ENOTEMPTY";
	case ELOOP: return "ELOOP";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EDQUOT: return "EDQUOT";
	default: return "E?";
	}
}

/* Number of open fds, to check that a call leaked none. */
static inline int t_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the fd of the opendir() itself */
}

/*
 * Nest `levels` directories named "d" below the directory `dirfd` (left
 * open), for trees deeper than the descriptor limit or PATH_MAX: each
 * level is made and opened from the one above, so two descriptors at the
 * most are open whatever the depth. Returns how many levels were made;
 * fewer than asked if a mkdirat() or openat() failed.
 */
static inline int t_make_nested_dirs(int dirfd, int levels)
{
	int cur = dup(dirfd), next, i;

	for (i = 0; i < levels && cur >= 0; i++) {
		if (mkdirat(cur, "d", 0700) < 0)
			break;
		next = openat(cur, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur >= 0)
		close(cur);
	return i;
}

/*
 * Does this kernel create directories with O_CREAT|O_DIRECTORY?  The
 * side-effect-free probe of docs/semantics.md section 4: "." always
 * exists, so no kernel creates anything.
 * Returns 1, or 0 with the probe's errno in *err when err is not NULL.
 */
static inline int t_kernel_creates_dirs(int dirfd, int *err)
{
	int fd = openat(dirfd, ".", O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0) {
		if (err)
			*err = errno;
		return 0;
	}
	close(fd);
	return 1;
}

/*
 * One read of the inotify descriptor `in` (non-blocking): fn(event, ctx)
 * for each event read. Returns how many calls returned nonzero, or -1
 * when nothing was queued.
 */
static inline int t_each_inotify_event(int in,
				       int (*fn)(const struct inotify_event *ev, void *ctx),
				       void *ctx)
{
	union {
		struct inotify_event ev;
		char buf[8192];
	} u;
	ssize_t len, off;
	int hits = 0;

	len = read(in, u.buf, sizeof(u.buf));
	if (len <= 0)
		return -1;
	for (off = 0; off < len;) {
		const struct inotify_event *ev = (const struct inotify_event *)(u.buf + off);

		hits += fn(ev, ctx) != 0;
		off += (ssize_t)(sizeof(*ev) + ev->len);
	}
	return hits;
}

/*
 * How a creation was made, from the IN_CREATE events on its parent read
 * from the inotify descriptor `in` (non-blocking): the emulation's staged
 * path makes a ".ocdir-stage.*" directory first; the kernel, and the
 * emulation's mkdirat + openat path, only the directory itself.
 */
enum t_path_taken { T_PATH_UNSEEN, T_PATH_DIRECT, T_PATH_STAGED };

static inline int t_note_path_taken(const struct inotify_event *ev, void *ctx)
{
	enum t_path_taken *path = ctx;

	if (ev->len && !strncmp(ev->name, ".ocdir-stage.", 13))
		*path = T_PATH_STAGED;
	else if ((ev->mask & IN_ISDIR) && *path == T_PATH_UNSEEN)
		*path = T_PATH_DIRECT;
	return 0;
}

static inline enum t_path_taken t_read_path_taken(int in)
{
	enum t_path_taken path = T_PATH_UNSEEN;

	while (t_each_inotify_event(in, t_note_path_taken, &path) >= 0)
		;
	return path;
}

/*
 * Make system call `nr` fail with `err` in this process and its children
 * from now on (a seccomp filter, as container runtimes install them), so
 * that a fallback can be tested on a kernel that has the call. Returns 0,
 * or -1 with errno.
 */
static inline int t_block_syscall(long nr, int err)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
#if defined(__x86_64__)
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
#elif defined(__aarch64__)
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
#else
		BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(code) / sizeof(code[0]),
		.filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#endif /* OCDIR_TESTS_HELPERS_H */
