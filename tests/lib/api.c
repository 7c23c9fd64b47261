/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/api.c - libocdir calls beyond the conformance table: argument
 * checks of the how-struct, O_CLOEXEC opt-out, mkpath (leaf fd, created
 * flag, rollback), prepare/publish/discard, EMFILE at every step leaving
 * nothing behind, ocdir_mkdirat(), and threads racing for one name.
 *
 *   lib-api [DIR]     runs once per library mode (default and emulated).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../helpers.h"
#include "ocdir.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#define SYS_fchmodat2_NR SYS_fchmodat2

static char base[2048];
static const char *mode_name;
static char tname[256];

static const char *N(const char *what)
{
	snprintf(tname, sizeof(tname), "%s:%s", mode_name, what);
	return tname;
}

/* N() of "WHAT-SUFFIX" */
static const char *N2(const char *what, const char *suffix)
{
	static char both[128];

	snprintf(both, sizeof(both), "%s-%s", what, suffix);
	return N(both);
}

static int exists(int dirfd, const char *path)
{
	struct stat st;

	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int is_dir(int dirfd, const char *path)
{
	struct stat st;

	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static int same_inode(int fd, int dirfd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstatat(dirfd, path, &b, 0) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* No ".ocdir-stage.*" directly in dirfd. */
static int stage_left(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), found = 0;
	struct dirent *de;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d)
		return 1;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, ".ocdir-stage.", 13))
			found = 1;
	closedir(d);
	return found;
}

static void test_how_checks(int dfd)
{
	struct { struct ocdir_how how; uint64_t extra; } big = {
		.how = { .mode = 0755 }, .extra = 0,
	};
	struct ocdir_how how = { .mode = 0755 };
	int fd;

	fd = ocdir_openat2(dfd, "h1", &big.how, sizeof(big), NULL);
	T_CHECK(N("how-larger-zero-tail"), fd >= 0, "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	big.extra = 1;
	fd = ocdir_openat2(dfd, "h2", &big.how, sizeof(big), NULL);
	T_CHECK(N("how-larger-nonzero-tail-e2big"), fd < 0 && errno == E2BIG && !exists(dfd, "h2"),
		"fd %d errno %s", fd, t_errname(errno));
	fd = ocdir_openat2(dfd, "h3", &how, 16, NULL);
	T_CHECK(N("how-too-small-einval"), fd < 0 && errno == EINVAL, "errno %s", t_errname(errno));
	fd = ocdir_openat2(dfd, NULL, &how, sizeof(how), NULL);
	T_CHECK(N("null-path-efault"), fd < 0 && errno == EFAULT, "errno %s", t_errname(errno));
	fd = ocdir_openat2(dfd, "h4", NULL, sizeof(how), NULL);
	T_CHECK(N("null-how-efault"), fd < 0 && errno == EFAULT, "errno %s", t_errname(errno));
	how.options = 1ULL << 20;
	fd = ocdir_openat2(dfd, "h5", &how, sizeof(how), NULL);
	T_CHECK(N("unknown-option-einval"), fd < 0 && errno == EINVAL && !exists(dfd, "h5"),
		"errno %s", t_errname(errno));
	how.options = 0;
	how.flags = 1ULL << 40;
	fd = ocdir_openat2(dfd, "h6", &how, sizeof(how), NULL);
	T_CHECK(N("high-flag-bit-einval"), fd < 0 && errno == EINVAL, "errno %s", t_errname(errno));
	fd = ocdir_openat2(-1, "h7", &(struct ocdir_how){ .mode = 0755 }, sizeof(how), NULL);
	T_CHECK(N("bad-dirfd-ebadf"), fd < 0 && errno == EBADF, "errno %s", t_errname(errno));
}

/*
 * A bare name relative to AT_FDCWD: the emulation has no parent
 * descriptor of the caller's there, and rule 9 (a dangling symlink is
 * EEXIST) and rule 10 must hold all the same.
 */
static void test_cwd_bare_names(int dfd)
{
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	mkdirat(dfd, "cwd", 0755);
	(void)!symlinkat("missing", dfd, "cwd/dangling");
	(void)!symlinkat(".", dfd, "cwd/dot");
	if (cwd < 0 || fchdir(dfd) < 0 || chdir("cwd") < 0) {
		t_fail(N("cwd-bare-names"), "chdir: %s", strerror(errno));
		return;
	}
	fd = ocdir_openat(AT_FDCWD, "dangling", 0, 0755);
	T_CHECK(N("cwd-dangling-symlink-eexist"), fd < 0 && errno == EEXIST, "fd %d errno %s",
		fd, t_errname(errno));
	fd = ocdir_openat(AT_FDCWD, "dot", 0, 0755);
	T_CHECK(N("cwd-symlink-to-dir-opens"), fd >= 0, "errno %s", t_errname(errno));
	if (fd >= 0)
		close(fd);
	fd = ocdir_openat(AT_FDCWD, "new", 0, 0755);
	T_CHECK(N("cwd-new"), fd >= 0 && is_dir(dfd, "cwd/new"), "errno %s", t_errname(errno));
	if (fd >= 0)
		close(fd);
	if (fchdir(cwd) < 0)
		t_fail(N("cwd-back"), "%s", strerror(errno));
	close(cwd);
}

/*
 * ocdir_mkdirat(): 1 for a new directory, 0 for an existing one, the
 * refusals of ocdir_openat2 for what it would not open, nothing left open.
 */
static void test_mkdirat(int dfd)
{
	struct ocdir_how how = { .mode = 0750 };
	struct stat st;
	int r, fds = t_count_fds(), fd;

	mkdirat(dfd, "mk", 0755);
	r = ocdir_mkdirat(dfd, "mk/new", &how, sizeof(how));
	T_CHECK(N("mkdirat-new"), r == 1 && is_dir(dfd, "mk/new") &&
		fstatat(dfd, "mk/new", &st, 0) == 0 && (st.st_mode & 07777) == 0750,
		"r %d errno %s mode %o", r, t_errname(errno), (unsigned)st.st_mode);
	r = ocdir_mkdirat(dfd, "mk/new/", &how, sizeof(how));
	T_CHECK(N("mkdirat-existing"), r == 0, "r %d errno %s", r, t_errname(errno));
	fd = openat(dfd, "mk/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/file", &how, sizeof(how));
	T_CHECK(N("mkdirat-file-enotdir"), r == -1 && errno == ENOTDIR, "r %d errno %s",
		r, t_errname(errno));
	(void)!symlinkat("new", dfd, "mk/link");
	r = ocdir_mkdirat(dfd, "mk/link", &how, sizeof(how));
	T_CHECK(N("mkdirat-symlink-followed"), r == 0, "r %d errno %s", r, t_errname(errno));
	how.flags = O_NOFOLLOW;
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/link", &how, sizeof(how));
	T_CHECK(N("mkdirat-nofollow"), r == -1 && (errno == ENOTDIR || errno == ELOOP),
		"r %d errno %s", r, t_errname(errno));
	how.flags = O_EXCL;
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/new", &how, sizeof(how));
	T_CHECK(N("mkdirat-excl-eexist"), r == -1 && errno == EEXIST, "r %d errno %s",
		r, t_errname(errno));
	(void)!symlinkat("missing", dfd, "mk/dangling");
	how.flags = 0;
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/dangling", &how, sizeof(how));
	T_CHECK(N("mkdirat-dangling-eexist"), r == -1 && errno == EEXIST &&
		!exists(dfd, "mk/missing"), "r %d errno %s", r, t_errname(errno));
	how.flags = O_WRONLY;
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/wronly", &how, sizeof(how));
	T_CHECK(N("mkdirat-wronly-nothing-made"), r == -1 && errno == ENOTDIR &&
		!exists(dfd, "mk/wronly"), "r %d errno %s", r, t_errname(errno));
	how.flags = 0;
	how.resolve = OCDIR_RESOLVE_BENEATH;
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/../../escape", &how, sizeof(how));
	T_CHECK(N("mkdirat-beneath-exdev"), r == -1 && errno == EXDEV, "r %d errno %s",
		r, t_errname(errno));
	r = ocdir_mkdirat(dfd, "mk/scoped", &how, sizeof(how));
	T_CHECK(N("mkdirat-beneath-new"), r == 1 && is_dir(dfd, "mk/scoped"), "r %d errno %s",
		r, t_errname(errno));
	errno = 0;
	r = ocdir_mkdirat(dfd, "mk/x", NULL, sizeof(how));
	T_CHECK(N("mkdirat-null-how"), r == -1 && errno == EFAULT && !exists(dfd, "mk/x"),
		"r %d errno %s", r, t_errname(errno));
	errno = 0;
	r = ocdir_mkdirat(dfd, NULL, &how, sizeof(how));
	T_CHECK(N("mkdirat-null-path"), r == -1 && errno == EFAULT, "r %d errno %s",
		r, t_errname(errno));
	T_CHECK(N("mkdirat-no-fd-left"), t_count_fds() == fds && !stage_left(dfd),
		"fds %d -> %d", fds, t_count_fds());
}

/*
 * Unscoped, ocdir_mkpath walks a path longer than PATH_MAX a level at a
 * time, as mkdir -p does; scoped it refuses it with ENAMETOOLONG. 20
 * levels of 250 bytes: 5020 bytes, and only 20 descriptors held.
 */
static void test_mkpath_long(int dfd)
{
	struct ocdir_how how = { .mode = 0755 };
	size_t n = 20, len = 251, i;
	char *path = malloc(n * len + 1);
	int fd, made = 0;

	if (!path) {
		t_fail(N("mkpath-long"), "malloc");
		return;
	}
	for (i = 0; i < n; i++) {
		memset(path + i * len, 'L', len - 1);
		path[i * len + len - 1] = '/';
	}
	path[n * len - 1] = '\0';
	fd = ocdir_mkpath(dfd, path, &how, sizeof(how), &made);
	T_CHECK(N("mkpath-over-path-max"), fd >= 0 && made, "fd %d errno %s", fd,
		t_errname(errno));
	if (fd >= 0)
		close(fd);
	how.resolve = OCDIR_RESOLVE_BENEATH;
	errno = 0;
	fd = ocdir_mkpath(dfd, path, &how, sizeof(how), &made);
	T_CHECK(N("mkpath-over-path-max-scoped"), fd == -1 && errno == ENAMETOOLONG,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	/* only "." and "/" (the start itself), longer than PATH_MAX */
	for (i = 0; i + 2 < n * len; i += 2)
		memcpy(path + i, "./", 2);
	path[i] = '\0';
	how.resolve = 0;
	fd = ocdir_mkpath(dfd, path, &how, sizeof(how), &made);
	T_CHECK(N("mkpath-dots-over-path-max"), fd >= 0 && !made && same_inode(fd, dfd, "."),
		"fd %d made %d errno %s", fd, made, t_errname(errno));
	if (fd >= 0)
		close(fd);
	free(path);
}

/*
 * An existing directory the caller may search but not read: ocdir_mkdirat
 * and ocdir_mkpath with O_PATH accept it (as mkdir -p does), ocdir_mkpath
 * without O_PATH cannot open it (EACCES). Run as uid 65534 when root,
 * since root reads every directory.
 */
static void test_unreadable_existing(int dfd)
{
	struct ocdir_how how = { .mode = 0755 }, path_how = { .flags = O_PATH, .mode = 0755 };
	int status, fd;
	pid_t pid;

	mkdirat(dfd, "unr", 0755);
	mkdirat(dfd, "unr/d", 0711);
	if (fchmodat(dfd, "unr/d", 0311, 0) < 0) {
		t_fail(N("unreadable-setup"), "%s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int r, bad = 0;

		if (geteuid() == 0 && (fchownat(dfd, "unr/d", 65534, 65534, 0) < 0 ||
				       setgid(65534) < 0 || setuid(65534) < 0))
			_exit(2);
		r = ocdir_mkdirat(dfd, "unr/d", &how, sizeof(how));
		if (r != 0) {
			printf("# mkdirat: %d %s\n", r, t_errname(errno));
			bad |= 4;
		}
		fd = ocdir_mkpath(dfd, "unr/d", &path_how, sizeof(path_how), NULL);
		if (fd < 0) {
			printf("# mkpath O_PATH: %s\n", t_errname(errno));
			bad |= 8;
		}
		if (fd >= 0)
			close(fd);
		fd = ocdir_mkpath(dfd, "unr/d", &how, sizeof(how), NULL);
		if (!(fd == -1 && errno == EACCES)) {
			printf("# mkpath: fd %d %s\n", fd, t_errname(errno));
			bad |= 16;
		}
		if (fd >= 0)
			close(fd);
		fflush(stdout);
		_exit(bad);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		t_fail(N("unreadable-child"), "child died");
		return;
	}
	status = WEXITSTATUS(status);
	T_CHECK(N("unreadable-existing-mkdirat-accepts"), status != 2 && !(status & 4),
		"status %d", status);
	T_CHECK(N("unreadable-existing-mkpath-o-path-accepts"), status != 2 && !(status & 8),
		"status %d", status);
	T_CHECK(N("unreadable-existing-mkpath-eacces"), status != 2 && !(status & 16),
		"status %d", status);
	errno = 0;
	path_how.flags = O_PATH;
	fd = ocdir_openat2(dfd, "unr/x", &path_how, sizeof(path_how), NULL);
	T_CHECK(N("openat2-o-path-einval"), fd == -1 && errno == EINVAL && !exists(dfd, "unr/x"),
		"fd %d errno %s", fd, t_errname(errno));
}

static void test_cloexec(int dfd)
{
	struct ocdir_how how = { .mode = 0755, .options = OCDIR_NO_CLOEXEC };
	int fd;

	fd = ocdir_openat2(dfd, "c1", &how, sizeof(how), NULL);
	T_CHECK(N("no-cloexec-opt-out"), fd >= 0 && !(fcntl(fd, F_GETFD) & FD_CLOEXEC),
		"fd %d", fd);
	if (fd >= 0)
		close(fd);
	how.flags = O_CLOEXEC;
	fd = ocdir_openat2(dfd, "c1", &how, sizeof(how), NULL);
	T_CHECK(N("no-cloexec-with-o-cloexec"), fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
		"fd %d", fd);
	if (fd >= 0)
		close(fd);
	fd = ocdir_openat(dfd, "c2", 0, 0755);
	T_CHECK(N("cloexec-default"), fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "fd %d", fd);
	if (fd >= 0)
		close(fd);
}

static void test_fast(int dfd)
{
	struct ocdir_how how = { .mode = 0700, .options = OCDIR_FAST_EMULATION };
	int fd, made = -1;

	fd = ocdir_openat2(dfd, "fast", &how, sizeof(how), &made);
	T_CHECK(N("fast-emulation-creates"), fd >= 0 && made == 1 && same_inode(fd, dfd, "fast") &&
		!stage_left(dfd), "fd %d made %d", fd, made);
	if (fd >= 0)
		close(fd);
	fd = ocdir_openat2(dfd, "fast", &how, sizeof(how), &made);
	T_CHECK(N("fast-emulation-opens"), fd >= 0 && made == 0, "fd %d made %d", fd, made);
	if (fd >= 0)
		close(fd);
	how.flags = O_EXCL;
	fd = ocdir_openat2(dfd, "fast", &how, sizeof(how), &made);
	T_CHECK(N("fast-emulation-excl"), fd < 0 && errno == EEXIST, "fd %d", fd);
}

/*
 * Makes dir (mode exactly `mode`) in dfd and creates "d" in it with the
 * given options; says which way the emulation took (inotify on dir).
 */
static enum t_path_taken path_in(int dfd, const char *dir, mode_t mode, uint64_t options,
				 int *made, int *err)
{
	struct ocdir_how how = { .mode = 0700, .options = options };
	enum t_path_taken path = T_PATH_UNSEEN;
	int in, pfd, fd;
	char proc[64];

	*made = -1;
	*err = 0;
	if (mkdirat(dfd, dir, 0700) < 0 || fchmodat(dfd, dir, mode, 0) < 0)
		return path;
	pfd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if (pfd >= 0 && in >= 0 && inotify_add_watch(in, proc, IN_CREATE) >= 0) {
		fd = ocdir_openat2(pfd, "d", &how, sizeof(how), made);
		if (fd >= 0) {
			path = t_read_path_taken(in);
			close(fd);
		} else {
			*err = errno;
		}
	}
	if (in >= 0)
		close(in);
	if (pfd >= 0)
		close(pfd);
	return path;
}

/*
 * Which way the emulation creates: in place where nobody else could swap
 * the new directory (a parent of the caller's or root's that only they may
 * write to, or a sticky one), else through the staging directory. Where
 * staging cannot run (the weak mode: RENAME_NOREPLACE refused) a shared
 * parent gets EOPNOTSUPP and nothing, unless the caller opts in to the
 * weaker in-place fallback.
 */
static void test_path_by_parent(int dfd, int weak)
{
	enum t_path_taken path;
	int made, err;

	if (ocdir_backend(NULL) != OCDIR_BACKEND_EMULATED) {
		t_skip(N("private-parent-in-place"), "the native backend has one path");
		t_skip(N("sticky-parent-in-place"), "the native backend has one path");
		t_skip(N("shared-parent-stages"), "the native backend has one path");
		return;
	}
	path = path_in(dfd, "pp-private", 0755, 0, &made, &err);
	T_CHECK(N("private-parent-in-place"), path == T_PATH_DIRECT && made == 1,
		"path %d made %d err %s", path, made, t_errname(err));
	path = path_in(dfd, "pp-sticky", 01777, 0, &made, &err);
	T_CHECK(N("sticky-parent-in-place"), path == T_PATH_DIRECT && made == 1,
		"path %d made %d err %s", path, made, t_errname(err));
	path = path_in(dfd, "pp-shared", 0777, 0, &made, &err);
	if (!weak) {
		T_CHECK(N("shared-parent-stages"), path == T_PATH_STAGED && made == 1,
			"path %d made %d err %s", path, made, t_errname(err));
		return;
	}
	T_CHECK(N("shared-parent-no-noreplace-eopnotsupp"),
		path == T_PATH_UNSEEN && err == EOPNOTSUPP && !exists(dfd, "pp-shared/d") &&
		!stage_left(dfd), "path %d err %s", path, t_errname(err));
	path = path_in(dfd, "pp-shared-weak", 0777, OCDIR_ALLOW_WEAK_EMULATION, &made, &err);
	/* The staging directory is tried first: only the rename shows the refusal. */
	T_CHECK(N("shared-parent-allow-weak-in-place"), path != T_PATH_UNSEEN && made == 1 &&
		!stage_left(dfd), "path %d made %d err %s", path, made, t_errname(err));
}

static int noop_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	(void)fd, (void)path, (void)flags, (void)arg;
	return 0;
}

static void test_mkpath(int dfd)
{
	struct ocdir_how how = { .mode = 0700 };
	int fd, made = -1, fd2;
	char abs[4096];

	fd = ocdir_mkpath(dfd, "p1/p2/p3", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-creates-all"), fd >= 0 && made == 1 && is_dir(dfd, "p1/p2/p3") &&
		same_inode(fd, dfd, "p1/p2/p3"), "fd %d made %d", fd, made);
	if (fd >= 0)
		close(fd);
	fd = ocdir_mkpath(dfd, "p1/p2/p3/", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-existing-leaf"), fd >= 0 && made == 0, "fd %d made %d", fd, made);
	if (fd >= 0)
		close(fd);
	fd = ocdir_mkpath(dfd, "p1//./p2/p4", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-existing-intermediates"), fd >= 0 && made == 1 &&
		same_inode(fd, dfd, "p1/p2/p4"), "fd %d made %d", fd, made);
	if (fd >= 0)
		close(fd);
	how.flags = O_EXCL;
	fd = ocdir_mkpath(dfd, "p1/p2/p3", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-excl-leaf-exists"), fd < 0 && errno == EEXIST, "errno %s", t_errname(errno));
	how.flags = 0;
	fd2 = openat(dfd, "pf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd2 >= 0)
		close(fd2);
	fd = ocdir_mkpath(dfd, "pf/x/y", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-file-in-the-way"), fd < 0 && errno == ENOTDIR && !exists(dfd, "pf/x"),
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	fd = ocdir_mkpath(dfd, "r1/r2/"
			  "x123456789x123456789x123456789x123456789x123456789x123456789"
			  "x123456789x123456789x123456789x123456789x123456789x123456789"
			  "x123456789x123456789x123456789x123456789x123456789x123456789"
			  "x123456789x123456789x123456789x123456789x123456789x123456789"
			  "x1234567890123456", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-rollback"), fd < 0 && errno == ENAMETOOLONG && !exists(dfd, "r1"),
		"fd %d errno %s, r1 %s", fd, t_errname(errno), exists(dfd, "r1") ? "left" : "gone");
	/*
	 * A level made before a ".." is not on the way back up from the
	 * deepest one: it must go too ("n1" of n1/../n2/LONG), scoped or not,
	 * and with a setup step.
	 */
	{
		static const char *const shapes[] = {
			"n1/../n2/", "n3/n4/../../n5/", "n6/../n7/n8/../n9/",
		};
		static const char long_name[] =
			"x123456789x123456789x123456789x123456789x123456789x123456789"
			"x123456789x123456789x123456789x123456789x123456789x123456789"
			"x123456789x123456789x123456789x123456789x123456789x123456789"
			"x123456789x123456789x123456789x123456789x123456789x123456789"
			"x1234567890123456";
		static const char *const names[] = {
			"n1", "n2", "n3", "n5", "n6", "n7", "n9",
		};
		static const char *const kinds[] = { "plain", "beneath", "setup" };
		char p[512], what[64];
		size_t k, m;
		int v, left, err;

		for (v = 0; v < 3; v++) {
			how.resolve = v == 1 ? OCDIR_RESOLVE_BENEATH : 0;
			for (k = 0; k < sizeof(shapes) / sizeof(*shapes); k++) {
				snprintf(p, sizeof(p), "%s%s", shapes[k], long_name);
				fd = v == 2 ? ocdir_mkpath_setup(dfd, p, &how, sizeof(how),
								 noop_setup, NULL, &made)
					    : ocdir_mkpath(dfd, p, &how, sizeof(how), &made);
				err = errno;
				for (m = 0, left = -1; m < sizeof(names) / sizeof(*names); m++)
					if (exists(dfd, names[m]))
						left = (int)m;
				snprintf(what, sizeof(what), "mkpath-rollback-across-dotdot-%s-%zu",
					 kinds[v], k);
				T_CHECK(N(what), fd < 0 && err == ENAMETOOLONG && left < 0,
					"%s: fd %d errno %s, %s left", shapes[k], fd,
					t_errname(err), left < 0 ? "nothing" : names[left]);
				if (fd >= 0)
					close(fd);
				for (m = 0; m < sizeof(names) / sizeof(*names); m++)
					unlinkat(dfd, names[m], AT_REMOVEDIR);
			}
		}
		how.resolve = 0;
	}
	fd2 = openat(dfd, "s1", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd2 >= 0)
		close(fd2);
	fd = ocdir_mkpath(dfd, "s0/s1x/../../s1/y", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-nondir-intermediate"), fd < 0 && errno == ENOTDIR &&
		!exists(dfd, "s0"), "fd %d errno %s", fd, t_errname(errno));
	if (symlinkat("p1", dfd, "plink") == 0) {
		fd = ocdir_mkpath(dfd, "plink/p5", &how, sizeof(how), &made);
		T_CHECK(N("mkpath-through-symlink"), fd >= 0 && made == 1 &&
			same_inode(fd, dfd, "p1/p5"), "fd %d", fd);
		if (fd >= 0)
			close(fd);
	}
	snprintf(abs, sizeof(abs), "%s/t1/t2", base);
	fd = ocdir_mkpath(AT_FDCWD, abs, &how, sizeof(how), &made);
	T_CHECK(N("mkpath-absolute"), fd >= 0 && same_inode(fd, dfd, "t1/t2"), "fd %d", fd);
	if (fd >= 0)
		close(fd);
	how.resolve = OCDIR_RESOLVE_BENEATH;
	fd = ocdir_mkpath(dfd, "u1/../../u-escape", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-beneath-escape"), fd < 0 && errno == EXDEV && !exists(dfd, "u1") &&
		!exists(dfd, "../u-escape"), "fd %d errno %s", fd, t_errname(errno));
	how.resolve = OCDIR_RESOLVE_IN_ROOT;
	fd = ocdir_mkpath(dfd, "/../v1/v2", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-in-root"), fd >= 0 && same_inode(fd, dfd, "v1/v2"), "fd %d errno %s",
		fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	T_CHECK(N("mkpath-no-stage-left"), !stage_left(dfd), "staging directory left");
}

/*
 * Rule 10 at every level ocdir_mkpath creates-or-opens: a directory of
 * another user, planted in a sticky world-writable parent, is refused
 * (EACCES) as the leaf and as an intermediate alike, even for root: the
 * call would have made it there had it been absent. Planting "x" and
 * "x/s" must not get a caller of mkpath("stk/x/s") onto the attacker's
 * "s". ocdir_openat2 walks its intermediates as any open does (only the
 * last component is created-or-opened), and a walk that starts inside
 * the planted directory accepts it as the caller's choice.
 */
static int sticky_setup_fn(int fd, const char *path, unsigned int flags, void *arg)
{
	(void)fd, (void)path, (void)flags, (void)arg;
	return 0;
}

static void test_mkpath_sticky_levels(int dfd)
{
	/* "weak" (no RENAME_NOREPLACE) would refuse the shared parents: allowed */
	const uint64_t w = OCDIR_ALLOW_WEAK_EMULATION;
	struct ocdir_how how = { .mode = 0755, .options = w };
	struct ocdir_how path_how = { .flags = O_PATH, .mode = 0755, .options = w };
	struct ocdir_how beneath = { .mode = 0755, .resolve = OCDIR_RESOLVE_BENEATH, .options = w };
	int fd, xfd, made;

	if (geteuid() != 0) {
		t_skip(N("mkpath-sticky-levels"), "needs root to plant another user's directory");
		return;
	}
	if (mkdirat(dfd, "stk", 0) < 0 || fchmodat(dfd, "stk", 01777, 0) < 0 ||
	    mkdirat(dfd, "stk/x", 0755) < 0 || mkdirat(dfd, "stk/x/s", 0755) < 0 ||
	    fchownat(dfd, "stk/x", 65534, 65534, 0) < 0 ||
	    fchownat(dfd, "stk/x/s", 65534, 65534, 0) < 0 ||
	    mkdirat(dfd, "stk/own", 0755) < 0 ||
	    mkdirat(dfd, "stk2", 0) < 0 || fchmodat(dfd, "stk2", 01777, 0) < 0 ||
	    mkdirat(dfd, "stk2/y", 0755) < 0 ||
	    fchownat(dfd, "stk2", 65534, 65534, 0) < 0 ||
	    fchownat(dfd, "stk2/y", 65534, 65534, 0) < 0) {
		t_fail(N("mkpath-sticky-setup"), "%s", strerror(errno));
		return;
	}
	errno = 0;
	fd = ocdir_mkpath(dfd, "stk/x", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-sticky-leaf-eacces"), fd == -1 && errno == EACCES,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = ocdir_mkpath(dfd, "stk/x/new", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-sticky-intermediate-eacces"), fd == -1 && errno == EACCES &&
		!exists(dfd, "stk/x/new"), "fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = ocdir_mkpath(dfd, "stk/x/s", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-sticky-planted-two-levels-eacces"), fd == -1 && errno == EACCES,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = ocdir_mkpath(dfd, "stk/x/new", &path_how, sizeof(path_how), &made);
	T_CHECK(N("mkpath-o-path-sticky-intermediate-eacces"), fd == -1 && errno == EACCES &&
		!exists(dfd, "stk/x/new"), "fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = ocdir_mkpath_setup(dfd, "stk/x/new", &how, sizeof(how), sticky_setup_fn, NULL,
				&made);
	T_CHECK(N("mkpath-setup-sticky-intermediate-eacces"), fd == -1 && errno == EACCES &&
		!exists(dfd, "stk/x/new"), "fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = ocdir_mkpath(dfd, "stk/x/new", &beneath, sizeof(beneath), &made);
	T_CHECK(N("mkpath-beneath-sticky-intermediate-eacces"), fd == -1 && errno == EACCES &&
		!exists(dfd, "stk/x/new"), "fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	/* The caller's own level and the sticky parent owner's level pass. */
	fd = ocdir_mkpath(dfd, "stk/own/new", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-sticky-own-intermediate"), fd >= 0 && made == 1,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	fd = ocdir_mkpath(dfd, "stk2/y/new", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-sticky-parent-owners-intermediate"), fd >= 0 && made == 1,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	/* Not a mkpath level: ocdir_openat2's walk, and a walk started inside. */
	fd = ocdir_openat2(dfd, "stk/x/o2", &how, sizeof(how), &made);
	T_CHECK(N("openat2-sticky-intermediate-walked"), fd >= 0 && made == 1,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	xfd = openat(dfd, "stk/x", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = xfd < 0 ? -1 : ocdir_mkpath(xfd, "m2/m3", &how, sizeof(how), &made);
	T_CHECK(N("mkpath-starts-in-planted-dir"), fd >= 0 && made == 1,
		"fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	if (xfd >= 0)
		close(xfd);
}

/* ---- ocdir_openat2_setup / ocdir_mkpath_setup ---- */

/* What a setup callback saw, and what it should answer. */
struct setup_seen {
	int parentfd;		/* the leaf's parent, to look for its name */
	const char *leaf;	/* the leaf's name in parentfd */
	int calls, leaf_calls;
	int name_visible;	/* the leaf's name existed during setup */
	mode_t mode;		/* the leaf's mode during setup */
	char paths[256];	/* every path seen, ';'-separated */
	int fail;		/* return this (negative) from the leaf call */
	int add_file;		/* put a file in the leaf before failing */
};

static int record_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	struct setup_seen *s = arg;
	struct stat st;

	s->calls++;
	strncat(s->paths, path, sizeof(s->paths) - strlen(s->paths) - 2);
	strcat(s->paths, flags & OCDIR_SETUP_LEAF ? "!;" : ";");
	if (!(flags & OCDIR_SETUP_LEAF))
		return 0;
	s->leaf_calls++;
	if (fstat(fd, &st) == 0)
		s->mode = st.st_mode & 07777;
	s->name_visible = exists(s->parentfd, s->leaf);
	if (s->add_file) {
		int f = openat(fd, "inside", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

		if (f >= 0)
			close(f);
	}
	if (s->fail)
		return s->fail;
	return fchmod(fd, 0750) ? -errno : 0;
}

/* Make directory `name` of mode `mode` in dfd and open it. */
static int make_parent(int dfd, const char *name, mode_t mode)
{
	if (mkdirat(dfd, name, 0700) < 0 || fchmodat(dfd, name, mode, 0) < 0)
		return -1;
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void test_setup(int dfd, int weak)
{
	struct ocdir_how how = { .mode = 0777 };
	struct setup_seen seen;
	int pfd, fd, made;
	struct stat st;

	/* A private parent: made at its name, owner-only until set up. */
	pfd = make_parent(dfd, "su-private", 0755);
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "d" };
	made = -1;
	fd = ocdir_openat2_setup(pfd, "d", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("setup-private-once-owner-only"), fd >= 0 && made == 1 && seen.calls == 1 &&
		seen.leaf_calls == 1 && seen.mode == 0700 && !strcmp(seen.paths, "d!;") &&
		fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0750,
		"fd %d made %d calls %d mode %o paths %s errno %s", fd, made, seen.calls,
		(unsigned)seen.mode, seen.paths, t_errname(errno));
	if (fd >= 0)
		close(fd);
	/* An existing directory: opened, not set up. */
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "d" };
	fd = ocdir_openat2_setup(pfd, "d", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("setup-existing-not-called"), fd >= 0 && made == 0 && seen.calls == 0,
		"fd %d made %d calls %d", fd, made, seen.calls);
	if (fd >= 0)
		close(fd);
	how.flags = O_EXCL;
	fd = ocdir_openat2_setup(pfd, "d", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("setup-existing-excl-eexist"), fd < 0 && errno == EEXIST && seen.calls == 0,
		"fd %d errno %s", fd, t_errname(errno));
	how.flags = 0;
	/* A failing setup: its errno, and nothing left, contents included. */
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "f", .fail = -ENOTSUP, .add_file = 1 };
	fd = ocdir_openat2_setup(pfd, "f", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("setup-fails-private-nothing-left"), fd < 0 && errno == ENOTSUP &&
		seen.leaf_calls == 1 && !exists(pfd, "f"), "fd %d errno %s", fd, t_errname(errno));
	/* OCDIR_ALWAYS_STAGE: hidden during setup even in a private parent. */
	how.options = OCDIR_ALWAYS_STAGE;
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "s" };
	fd = ocdir_openat2_setup(pfd, "s", &how, sizeof(how), record_setup, &seen, &made);
	if (weak)
		T_CHECK(N("setup-always-stage-no-noreplace-eopnotsupp"), fd < 0 &&
			errno == EOPNOTSUPP && !exists(pfd, "s") && !stage_left(pfd),
			"fd %d errno %s", fd, t_errname(errno));
	else
		T_CHECK(N("setup-always-stage-hidden"), fd >= 0 && made == 1 &&
			!seen.name_visible && same_inode(fd, pfd, "s") && !stage_left(pfd),
			"fd %d made %d visible %d errno %s", fd, made, seen.name_visible,
			t_errname(errno));
	if (fd >= 0)
		close(fd);
	how.options = 0;
	close(pfd);

	/* A shared parent: staged, hidden during setup, or EOPNOTSUPP. */
	pfd = make_parent(dfd, "su-shared", 0777);
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "d" };
	fd = ocdir_openat2_setup(pfd, "d", &how, sizeof(how), record_setup, &seen, &made);
	if (weak) {
		/* Refused before setup runs (issue 39): setup is called once, or never. */
		T_CHECK(N("setup-shared-no-noreplace-eopnotsupp"), fd < 0 &&
			errno == EOPNOTSUPP && seen.leaf_calls == 0 && !exists(pfd, "d") &&
			!stage_left(pfd), "fd %d errno %s calls %d", fd, t_errname(errno),
			seen.leaf_calls);
		how.options = OCDIR_ALLOW_WEAK_EMULATION;
		seen = (struct setup_seen){ .parentfd = pfd, .leaf = "w" };
		fd = ocdir_openat2_setup(pfd, "w", &how, sizeof(how), record_setup, &seen, &made);
		T_CHECK(N("setup-shared-allow-weak-at-name"), fd >= 0 && made == 1 &&
			same_inode(fd, pfd, "w") && !stage_left(pfd),
			"fd %d made %d errno %s", fd, made, t_errname(errno));
		how.options = 0;
	} else {
		T_CHECK(N("setup-shared-hidden-then-published"), fd >= 0 && made == 1 &&
			!seen.name_visible && seen.mode == 0700 && same_inode(fd, pfd, "d") &&
			fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0750 && !stage_left(pfd),
			"fd %d made %d visible %d mode %o errno %s", fd, made, seen.name_visible,
			(unsigned)seen.mode, t_errname(errno));
	}
	if (fd >= 0)
		close(fd);
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "g", .fail = -EPERM, .add_file = 1 };
	fd = ocdir_openat2_setup(pfd, "g", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("setup-fails-shared-nothing-left"), fd < 0 &&
		errno == (weak ? EOPNOTSUPP : EPERM) && !exists(pfd, "g") && !stage_left(pfd),
		"fd %d errno %s", fd, t_errname(errno));
	close(pfd);

	/* mkpath: each new level announced top down, the leaf set up last. */
	pfd = make_parent(dfd, "su-path", 0755);
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "a/b/c" };
	fd = ocdir_mkpath_setup(pfd, "a/b/c", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("mkpath-setup-announces-levels"), fd >= 0 && made == 1 &&
		!strcmp(seen.paths, "a;a/b;a/b/c!;") && same_inode(fd, pfd, "a/b/c"),
		"fd %d made %d paths %s errno %s", fd, made, seen.paths, t_errname(errno));
	if (fd >= 0)
		close(fd);
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "a/x/y" };
	fd = ocdir_mkpath_setup(pfd, "a/x/y", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("mkpath-setup-existing-level-not-announced"), fd >= 0 &&
		!strcmp(seen.paths, "a/x;a/x/y!;"), "paths %s errno %s", seen.paths,
		t_errname(errno));
	if (fd >= 0)
		close(fd);
	seen = (struct setup_seen){ .parentfd = pfd, .leaf = "n1/n2/n3", .fail = -EDQUOT };
	fd = ocdir_mkpath_setup(pfd, "n1/n2/n3", &how, sizeof(how), record_setup, &seen, &made);
	T_CHECK(N("mkpath-setup-fails-levels-removed"), fd < 0 && errno == EDQUOT &&
		!exists(pfd, "n1") && !stage_left(pfd), "fd %d errno %s", fd, t_errname(errno));
	/* umask 0277: the levels get u+wx (0700) as with mkdir -p; the leaf its mode. */
	umask(0277);
	fd = ocdir_mkpath(pfd, "u1/u2/u3", &how, sizeof(how), &made);
	umask(022);
	T_CHECK(N("mkpath-umask-0277-levels-u+wx"), fd >= 0 && made == 1 &&
		fstatat(pfd, "u1/u2", &st, 0) == 0 && (st.st_mode & 07777) == 0700 &&
		fstatat(pfd, "u1/u2/u3", &st, 0) == 0 && (st.st_mode & 07777) == 0500,
		"fd %d errno %s mode %o", fd, t_errname(errno), (unsigned)(st.st_mode & 07777));
	if (fd >= 0)
		close(fd);
	close(pfd);
}

static void test_prepare(int dfd)
{
	struct ocdir_how how = { .mode = 0750 };
	struct ocdir_prepared *p = NULL;
	int fd, f, inner;

	fd = ocdir_prepare(dfd, "pub", &how, sizeof(how), &p);
	if (fd < 0) {
		t_fail(N("prepare"), "%s", strerror(errno));
		return;
	}
	if (getenv("OCDIR_TEST_NO_NOREPLACE")) {
		/* Documented: no non-atomic fallback for publishing. */
		T_CHECK(N("publish-einval-without-noreplace"), ocdir_publish(p) < 0 &&
			errno == EINVAL && !exists(dfd, "pub"), "errno %s", t_errname(errno));
		T_CHECK(N("discard-after-failed-publish"), ocdir_discard(p) == 0 &&
			!stage_left(dfd), "errno %s", t_errname(errno));
		close(fd);
		return;
	}
	T_CHECK(N("prepare-invisible"), !exists(dfd, "pub"), "pub visible before publish");
	f = openat(fd, "file", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (f >= 0)
		close(f);
	fchmod(fd, 0500);	/* publish must still work (rename needs u+w) */
	T_CHECK(N("publish"), ocdir_publish(p) == 0, "%s", strerror(errno));
	T_CHECK(N("publish-visible-with-contents"), is_dir(dfd, "pub") && exists(dfd, "pub/file") &&
		same_inode(fd, dfd, "pub") && !stage_left(dfd), "not published as prepared");
	{
		struct stat st;

		T_CHECK(N("publish-keeps-mode"), fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0500,
			"mode %04o", (unsigned)(st.st_mode & 07777));
	}
	fchmod(fd, 0755);
	close(fd);

	p = NULL;
	fd = ocdir_prepare(dfd, "pub", &how, sizeof(how), &p);
	T_CHECK(N("prepare-name-exists"), fd < 0 && errno == EEXIST && !p, "fd %d", fd);
	fd = ocdir_prepare(dfd, ".", &how, sizeof(how), &p);
	T_CHECK(N("prepare-dot"), fd < 0 && errno == EEXIST, "fd %d", fd);

	fd = ocdir_prepare(dfd, "late", &how, sizeof(how), &p);
	if (fd < 0) {
		t_fail(N("prepare-late"), "%s", strerror(errno));
		return;
	}
	mkdirat(dfd, "late", 0700);	/* someone else takes the name meanwhile */
	mkdirat(dfd, "keep", 0700);
	inner = openat(fd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	mkdirat(fd, "sub", 0700);
	f = openat(fd, "sub/file", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (f >= 0)
		close(f);
	(void)!symlinkat("../../keep", fd, "sub/link");
	T_CHECK(N("publish-name-taken"), ocdir_publish(p) < 0 && errno == EEXIST &&
		is_dir(dfd, "late") && !exists(dfd, "late/sub"), "errno %s", t_errname(errno));
	T_CHECK(N("discard-removes-tree"), ocdir_discard(p) == 0 && !stage_left(dfd) &&
		is_dir(dfd, "keep") && is_dir(dfd, "late"), "errno %s", t_errname(errno));
	if (inner >= 0)
		close(inner);
	close(fd);
	T_CHECK(N("discard-null"), ocdir_discard(NULL) == 0, "nonzero");
}

/*
 * ocdir_discard() with far more levels than descriptors: 1100 levels
 * under RLIMIT_NOFILE 64 (a recursive removal needs one descriptor per
 * level). A failure (EMFILE here, before the limit is raised again) keeps
 * `prepared` valid for a retry.
 */
static void test_discard_deep(int dfd)
{
	struct ocdir_how how = { .mode = 0700 };
	struct ocdir_prepared *p = NULL;
	struct rlimit old, low = { 64, 64 };
	int fd, i, r, err, retry_err = 0;

	fd = ocdir_prepare(dfd, "deep", &how, sizeof(how), &p);
	if (fd < 0) {
		t_fail(N("discard-deep"), "prepare: %s", strerror(errno));
		return;
	}
	i = t_make_nested_dirs(fd, 1100);
	getrlimit(RLIMIT_NOFILE, &old);
	/* Every descriptor below 64 taken but 1: the first open fails. */
	int fill[64], nfill = 0;
	while (nfill < 64 && (fill[nfill] = dup(0)) >= 0 && fill[nfill] < 63)
		nfill++;
	if (nfill < 64 && fill[nfill] >= 0)
		nfill++;
	setrlimit(RLIMIT_NOFILE, &low);
	r = ocdir_discard(p);
	retry_err = errno;
	while (nfill > 0)
		close(fill[--nfill]);
	T_CHECK(N("discard-emfile-keeps-prepared"), r < 0 && retry_err == EMFILE,
		"r %d errno %s", r, t_errname(retry_err));
	r = r < 0 ? ocdir_discard(p) : 0;
	err = errno;
	setrlimit(RLIMIT_NOFILE, &old);
	T_CHECK(N("discard-1100-levels-64-fds"), r == 0 && !exists(dfd, "deep") && !stage_left(dfd),
		"i %d r %d errno %s", i, r, t_errname(err));
	close(fd);
}

/*
 * Issue 39: once the tree is gone ocdir_discard() says 0 and frees the
 * handle, also where the empty staging directory cannot be removed (here
 * the parent's owner, the caller, made the parent 0555): errno names the
 * leftover. f246af7 freed the handle and said -1 (EACCES), and a caller
 * that retried, as its header said it may, ran on freed memory (the san/
 * build of this test: AddressSanitizer's heap-use-after-free).
 */
static void test_discard_leftover(int dfd)
{
	struct ocdir_how how = { .mode = 0700 };
	struct ocdir_prepared *p = NULL;
	int sub, fd, f, r, err, left;
	struct dirent *de;
	DIR *d;

	if (geteuid()) {
		t_skip(N("discard-leftover"), "needs root (a caller of uid 1000 through setfsuid)");
		return;
	}
	if (mkdirat(dfd, "dl", 0777) || fchownat(dfd, "dl", 1000, 1000, 0) ||
	    fchmodat(dfd, "dl", 0777, 0) ||
	    (sub = openat(dfd, "dl", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		t_fail(N("discard-leftover"), "setup: %s", strerror(errno));
		return;
	}
	setfsgid(1000);
	setfsuid(1000);
	fd = ocdir_prepare(sub, "x", &how, sizeof(how), &p);
	err = errno;
	if (fd >= 0) {
		f = openat(fd, "file", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (f >= 0)
			close(f);
		fchmod(sub, 0555);
		errno = 0;
		r = ocdir_discard(p);
		err = errno;
		if (r < 0)	/* a binding's retry: must never touch freed memory */
			ocdir_discard(p);
		fchmod(sub, 0777);
	}
	setfsuid(0);
	setfsgid(0);
	if (fd < 0) {
		t_fail(N("discard-leftover"), "prepare: %s", strerror(err));
	} else {
		left = stage_left(sub);
		T_CHECK(N("discard-leftover-frees-once"), r == 0 && err == EACCES && left &&
			!exists(sub, "x"), "r %d errno %s, staging directory %s, tree %s", r,
			t_errname(err), left ? "left" : "gone", exists(sub, "x") ? "left" : "gone");
		close(fd);
	}
	d = fdopendir(sub);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	if (d)
		closedir(d);
	unlinkat(dfd, "dl", AT_REMOVEDIR);
}

static int fail_leaf(int fd, const char *path, unsigned int flags, void *arg)
{
	(void)fd;
	(void)path;
	(void)arg;
	return flags & OCDIR_SETUP_LEAF ? -EDQUOT : 0;
}

/*
 * ocdir_mkpath() and ocdir_mkpath_setup() with far more levels than
 * descriptors (issue 26): 1100 levels under RLIMIT_NOFILE 64. Before, the
 * call held one descriptor per level (EMFILE); a failed leaf setup rolls
 * back all 1100 levels it made.
 */
static void test_mkpath_deep(int dfd)
{
	struct ocdir_how how = { .mode = 0700 };
	struct rlimit old, low = { 64, 64 };
	size_t levels = 1100, i;
	char *path = malloc(levels * 2 + 8);
	int fd, made = -1, err, fd2, err2;

	if (!path)
		return;
	strcpy(path, "mkdeep");
	for (i = 0; i < levels; i++)
		strcat(path + strlen(path), "/d");
	getrlimit(RLIMIT_NOFILE, &old);
	if (old.rlim_cur < low.rlim_cur)
		low = old;
	setrlimit(RLIMIT_NOFILE, &low);
	fd = ocdir_mkpath(dfd, path, &how, sizeof(how), &made);
	err = errno;
	path[0] = 'n';	/* "nkdeep/...": a second tree */
	fd2 = ocdir_mkpath_setup(dfd, path, &how, sizeof(how), fail_leaf, NULL, NULL);
	err2 = errno;
	setrlimit(RLIMIT_NOFILE, &old);
	T_CHECK(N("mkpath-1100-levels-64-fds"), fd >= 0 && made == 1,
		"fd %d errno %s made %d", fd, t_errname(err), made);
	T_CHECK(N("mkpath-setup-1100-levels-rollback-64-fds"),
		fd2 < 0 && err2 == EDQUOT && !exists(dfd, "nkdeep"),
		"fd %d errno %s, nkdeep %s", fd2, t_errname(err2),
		exists(dfd, "nkdeep") ? "left" : "gone");
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	free(path);
}

/*
 * Someone who can write the parent renames the staging directory away
 * (onto the destination name, say) before the discard: publishing fails
 * with EEXIST, and the discard finds the staging directory by its inode
 * and removes it there, leaving nothing.
 */
static void test_discard_moved_stage(int dfd)
{
	struct ocdir_how how = { .mode = 0700 };
	struct ocdir_prepared *p = NULL;
	char stage[256] = "";
	struct dirent *de;
	DIR *d;
	int fd, r, err;

	fd = ocdir_prepare(dfd, "moved", &how, sizeof(how), &p);
	if (fd < 0) {
		t_fail(N("discard-moved-stage"), "prepare: %s", strerror(errno));
		return;
	}
	d = fdopendir(dup(dfd));
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, ".ocdir-stage.", 13))
			snprintf(stage, sizeof(stage), "%s", de->d_name);
	if (d)
		closedir(d);
	renameat(dfd, stage, dfd, "moved");
	T_CHECK(N("publish-after-stage-moved-eexist"), ocdir_publish(p) < 0 && errno == EEXIST,
		"errno %s", t_errname(errno));
	r = ocdir_discard(p);
	err = errno;
	T_CHECK(N("discard-after-stage-moved-removes-it"), r == 0 && !exists(dfd, "moved") &&
		!stage_left(dfd), "r %d errno %s", r, t_errname(err));
	unlinkat(dfd, "moved", AT_REMOVEDIR);
	close(fd);
}

/*
 * One run of test_no_proc(), in a child: /proc hidden (a tmpfs over it, in
 * a mount namespace of its own) or not, fchmodat2(2) blocked (ENOSYS, a
 * seccomp filter) or not, as uid 65534 in a directory of its own (root
 * would need no lent permission: CAP_DAC_OVERRIDE opens anything).
 */
static int no_proc_child(int dfd, int hide_proc, int block_fchmodat2, int have_fchmodat2)
{
	struct ocdir_how how = { .mode = 0 };
	char dir[64], path[128];
	int fd, pfd, works = !(hide_proc && (block_fchmodat2 || !have_fchmodat2));
	struct stat st;
	const char *what = hide_proc ? (block_fchmodat2 ? "no-proc-no-fchmodat2" : "no-proc") :
				       "procfs-fallback";

	snprintf(dir, sizeof(dir), "np-%d%d", hide_proc, block_fchmodat2);
	snprintf(path, sizeof(path), "%s/shared", dir);
	if (mkdirat(dfd, dir, 0755) < 0 || mkdirat(dfd, path, 0777) < 0 ||
	    fchmodat(dfd, path, 0777, 0) < 0 || fchownat(dfd, dir, 65534, 65534, 0) < 0 ||
	    fchownat(dfd, path, 65534, 65534, 0) < 0 ||
	    (pfd = openat(dfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		t_fail(N(what), "setup: %s", strerror(errno));
		return 0;
	}
	if (hide_proc && (unshare(CLONE_NEWNS) < 0 ||
			  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
			  mount("none", "/proc", "tmpfs", 0, "size=1m") < 0)) {
		t_skip(N(what), "cannot hide /proc: %s", strerror(errno));
		return 1;
	}
	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
		t_fail(N(what), "setresuid: %s", strerror(errno));
		return 0;
	}
	if (block_fchmodat2 && t_block_syscall(SYS_fchmodat2_NR, ENOSYS) < 0) {
		t_skip(N(what), "seccomp: %s", strerror(errno));
		return 1;
	}
	/* in place: mode 0, so the owner must be lent u+rx through O_PATH */
	umask(0);
	fd = ocdir_openat2(pfd, "private", &how, sizeof(how), NULL);
	if (works)
		T_CHECK(N2(what, "unreadable-mode"), fd >= 0 && fstat(fd, &st) == 0 &&
			(st.st_mode & 07777) == 0, "fd %d errno %s", fd, t_errname(errno));
	else
		T_CHECK(N2(what, "unreadable-mode-eopnotsupp"), fd < 0 && errno == EOPNOTSUPP &&
			!exists(pfd, "private"), "fd %d errno %s", fd, t_errname(errno));
	if (fd >= 0)
		close(fd);
	/* staging under umask 0777: the staging directory needs u+rwx back */
	umask(0777);
	how.mode = 0755;
	fd = ocdir_openat2(pfd, "shared/d", &how, sizeof(how), NULL);
	if (works)
		T_CHECK(N2(what, "staging-umask-0777"), fd >= 0 && !stage_left(pfd),
			"fd %d errno %s", fd, t_errname(errno));
	else
		T_CHECK(N2(what, "staging-umask-0777-eopnotsupp"), fd < 0 && errno == EOPNOTSUPP &&
			!exists(pfd, "shared/d") && !stage_left(pfd), "fd %d errno %s", fd,
			t_errname(errno));
	if (fd >= 0)
		close(fd);
	return 1;
}

/*
 * Nothing by name, and no /proc where fchmodat2(2) exists (early boot,
 * sandboxes): a directory its owner may not read, and a staging directory
 * a umask left without owner bits, both get their mode through an O_PATH
 * descriptor. Without fchmodat2 (blocked, or a kernel before 6.6) a
 * real, verified procfs is used, and without both the call fails with
 * EOPNOTSUPP and leaves nothing. Root only (mount namespace, uid switch);
 * the emulation only.
 */
static void test_no_proc(int dfd)
{
	static const int runs[3][2] = { { 1, 0 }, { 1, 1 }, { 0, 1 } };
	int status, i, have_fchmodat2;
	pid_t pid;

	/* Linux before 6.6 (the legacy guest) has no fchmodat2: ENOSYS. */
	have_fchmodat2 = syscall(SYS_fchmodat2_NR, -1, "", 0, 0) == 0 || errno != ENOSYS;
	if (geteuid() != 0 || ocdir_backend(NULL) != OCDIR_BACKEND_EMULATED) {
		t_skip(N("no-proc"), "needs root and the emulation");
		return;
	}
	for (i = 0; i < 3; i++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			no_proc_child(dfd, runs[i][0], runs[i][1], have_fchmodat2);
			fflush(stdout);
			_exit(t_exit_status());
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
			t_fail(N("no-proc"), "child died");
		else if (WEXITSTATUS(status) == T_EXIT_FAIL)
			t_fail(N("no-proc"), "see above");
	}
}

/*
 * Lower RLIMIT_NOFILE step by step so that each descriptor the call needs
 * in turn is the one that fails: every failure must be EMFILE and leave
 * neither the name nor a staging directory behind.
 */
static void test_emfile(int dfd)
{
	struct ocdir_how how = { .mode = 0755 };
	struct rlimit old, lim;
	int k, fd, err, fails = 0, bad = 0, lowest;
	char what[128] = "";

	getrlimit(RLIMIT_NOFILE, &old);
	/* The limit caps fd numbers: below the lowest free one all are used. */
	lowest = dup(0);
	if (lowest >= 0)
		close(lowest);
	for (k = 0; k < 12; k++) {
		lim = old;
		lim.rlim_cur = (rlim_t)(lowest + k);
		setrlimit(RLIMIT_NOFILE, &lim);
		fd = ocdir_openat2(dfd, "em", &how, sizeof(how), NULL);
		err = errno;
		setrlimit(RLIMIT_NOFILE, &old);
		if (fd >= 0) {
			close(fd);
			unlinkat(dfd, "em", AT_REMOVEDIR);
			continue;
		}
		fails++;
		if (err != EMFILE || exists(dfd, "em") || stage_left(dfd)) {
			bad++;
			snprintf(what, sizeof(what), "limit +%d: %s, em %s", k, t_errname(err),
				 exists(dfd, "em") ? "left" : "absent");
		}
	}
	T_CHECK(N("emfile-leaves-nothing"), fails > 0 && !bad, "%d failures, %d bad (%s)",
		fails, bad, what);
}

#define RACERS 8
#define ROUNDS 100

static pthread_barrier_t race_start;
static int race_dfd, race_excl;
static int race_fd[RACERS], race_made[RACERS], race_err[RACERS];

static void *racer(void *arg)
{
	long i = (long)arg;
	struct ocdir_how how = { .mode = 0755, .flags = race_excl ? O_EXCL : 0 };

	pthread_barrier_wait(&race_start);
	race_made[i] = -1;
	race_fd[i] = ocdir_openat2(race_dfd, "race", &how, sizeof(how), &race_made[i]);
	race_err[i] = errno;
	return NULL;
}

/* Many threads, one name: exactly one says "created", all fds the same dir. */
static void test_race(int dfd, int excl)
{
	pthread_t t[RACERS];
	int round, i, bad = 0;
	char why[128] = "";

	race_dfd = dfd;
	race_excl = excl;
	for (round = 0; round < ROUNDS && !bad; round++) {
		int made = 0, ok = 0;

		pthread_barrier_init(&race_start, NULL, RACERS);
		for (i = 0; i < RACERS; i++)
			pthread_create(&t[i], NULL, racer, (void *)(long)i);
		for (i = 0; i < RACERS; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&race_start);
		for (i = 0; i < RACERS; i++) {
			if (race_fd[i] < 0) {
				if (!excl || race_err[i] != EEXIST) {
					bad = 1;
					snprintf(why, sizeof(why), "round %d: %s", round,
						 t_errname(race_err[i]));
				}
				continue;
			}
			ok++;
			made += race_made[i] == 1;
			if (!same_inode(race_fd[i], dfd, "race")) {
				bad = 1;
				snprintf(why, sizeof(why), "round %d: fd not the directory", round);
			}
			close(race_fd[i]);
		}
		if (made != 1 || (excl && ok != 1)) {
			bad = 1;
			snprintf(why, sizeof(why), "round %d: %d created, %d fds", round, made, ok);
		}
		unlinkat(dfd, "race", AT_REMOVEDIR);
	}
	T_CHECK(N(excl ? "race-excl-one-winner" : "race-one-creator"), !bad && !stage_left(dfd),
		"%s", why[0] ? why : "staging directory left");
}

static int run_mode(const char *name, const char *dir)
{
	int dfd, fds;

	mode_name = name;
	snprintf(base, sizeof(base), "%s/api.%s.%d", dir, name, (int)getpid());
	if (mkdir(base, 0755) < 0 || (dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		t_fail(N("setup"), "%s: %s", base, strerror(errno));
		return t_exit_status();
	}
	umask(022);
	fds = t_count_fds();
	test_how_checks(dfd);
	test_cloexec(dfd);
	test_cwd_bare_names(dfd);
	test_mkdirat(dfd);
	test_fast(dfd);
	test_path_by_parent(dfd, !strcmp(name, "weak"));
	test_mkpath(dfd);
	test_mkpath_long(dfd);
	test_mkpath_sticky_levels(dfd);
	test_unreadable_existing(dfd);
	test_setup(dfd, !strcmp(name, "weak"));
	test_prepare(dfd);
	test_discard_deep(dfd);
	test_discard_leftover(dfd);
	test_mkpath_deep(dfd);
	if (strcmp(name, "weak"))
		test_no_proc(dfd);
	if (strcmp(name, "weak"))
		test_discard_moved_stage(dfd);
	test_race(dfd, 0);
	test_race(dfd, 1);
	T_CHECK(N("no-fd-leak"), t_count_fds() == fds, "fds %d -> %d", fds, t_count_fds());
	test_emfile(dfd);
	close(dfd);
	return t_exit_status();
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	int i, status, worst = T_EXIT_PASS;
	pid_t pid;

	for (i = 0; i < 3; i++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			if (i == 1)
				setenv("OCDIR_FORCE_EMULATION", "1", 1);
			if (i == 2) {
				setenv("OCDIR_FORCE_EMULATION", "1", 1);
				setenv("OCDIR_TEST_NO_NOREPLACE", "1", 1);
			}
			_exit(run_mode(i == 0 ? "default" : i == 1 ? "emulated" : "weak", dir));
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
			t_fail("api-child", "child died");
			return T_EXIT_FAIL;
		}
		if (WEXITSTATUS(status) == T_EXIT_FAIL)
			worst = T_EXIT_FAIL;
	}
	return worst;
}
