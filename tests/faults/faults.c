/* SPDX-License-Identifier: MIT */
/*
 * tests/faults/faults.c - create-or-open when the system says no: EMFILE,
 * ENOSPC, EDQUOT, EROFS, ENAMETOOLONG, ELOOP, EMLINK, a parent removed
 * while the call runs, a filesystem detached under it, and (for the
 * library) every malloc failing in turn. Each case asserts the errno, that
 * nothing was created (the scratch tree is listed before and after, hidden
 * staging directories included) and that no descriptor leaked.
 *
 *   faults --backend lib|raw [--dir DIR]
 *
 * lib: libocdir, whichever backend it picks (OCDIR_FORCE_EMULATION=1 and
 * friends choose the emulation). raw: openat(O_CREAT|O_DIRECTORY) itself,
 * only where the kernel has the feature (SKIP otherwise). Mount cases run
 * in a child in a private mount namespace and need root (SKIP otherwise).
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ocdir.h"
#include "../helpers.h"

/* ---- malloc that fails on request (the library's own allocations) ---- */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

static _Atomic int oom_armed;
static _Atomic unsigned long oom_count, oom_fail_at;

static int oom_now(void)
{
	if (!atomic_load_explicit(&oom_armed, memory_order_relaxed))
		return 0;
	if (atomic_fetch_add(&oom_count, 1) + 1 != atomic_load(&oom_fail_at))
		return 0;
	errno = ENOMEM;
	return 1;
}

/* Interposed for the whole process, libc's strdup() included. */
void *malloc(size_t size)
{
	return oom_now() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return oom_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return oom_now() ? NULL : __libc_realloc(p, size);
}

/* ---- the call under test ---- */

static int use_raw;

/*
 * Create-or-open `path` below dirfd; returns a descriptor or -errno.
 * how_resolve is only for the library (raw: openat2 with it).
 */
static int call(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct ocdir_how how = { .flags = (uint64_t)flags, .mode = 0755, .resolve = resolve };
	int fd;

	if (use_raw) {
		if (resolve) {
			struct { uint64_t flags, mode, resolve; } oh = {
				(uint64_t)(flags | O_CREAT | O_DIRECTORY | O_CLOEXEC), 0755, resolve };

			fd = (int)syscall(437 /* openat2 */, dirfd, path, &oh, sizeof(oh));
		} else {
			fd = openat(dirfd, path, flags | O_CREAT | O_DIRECTORY | O_CLOEXEC, 0755);
		}
	} else {
		fd = ocdir_openat2(dirfd, path, &how, sizeof(how), NULL);
	}
	return fd < 0 ? -errno : fd;
}

/* ---- "nothing left behind": a listing of the whole scratch tree ---- */

struct listing {
	char buf[8192];
	size_t len;
};

static void list_tree(int dirfd, const char *prefix, struct listing *l, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char sub[512];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%.200s", prefix, de->d_name);
		l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%s\n", sub);
		if (l->len >= sizeof(l->buf))
			l->len = sizeof(l->buf) - 1;
		if (de->d_type == DT_DIR && depth < 4) {
			int sfd = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sfd >= 0) {
				list_tree(sfd, sub, l, depth + 1);
				close(sfd);
			}
		}
	}
	closedir(d);
}

/* Sorted, so that two listings compare as sets. */
static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void snapshot(int dirfd, struct listing *l)
{
	char *lines[256], copy[8192], *p, *save = NULL;
	size_t n = 0, i;

	l->len = 0;
	l->buf[0] = '\0';
	list_tree(dirfd, "", l, 0);
	memcpy(copy, l->buf, l->len + 1);
	for (p = strtok_r(copy, "\n", &save); p && n < 256; p = strtok_r(NULL, "\n", &save))
		lines[n++] = p;
	qsort(lines, n, sizeof(lines[0]), line_cmp);
	l->len = 0;
	l->buf[0] = '\0';
	for (i = 0; i < n; i++)
		l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%s ", lines[i]);
}

struct before {
	struct listing tree;
	int fds;
};

static void before(int dirfd, struct before *b)
{
	snapshot(dirfd, &b->tree);
	b->fds = t_count_fds();
}

/* The verdict of one case: errno among `ok` (0-terminated), nothing made. */
static void verdict(const char *name, int dirfd, const struct before *b, int r,
		    const int *ok)
{
	static struct listing after;
	int fds, i, good = 0;

	if (r >= 0) {
		close(r);
		t_fail(name, "succeeded, expected %s", t_errname(ok[0]));
		return;
	}
	for (i = 0; ok[i]; i++)
		good |= -r == ok[i];
	fds = t_count_fds();
	snapshot(dirfd, &after);
	if (!good)
		t_fail(name, "errno %s, expected %s", t_errname(-r), t_errname(ok[0]));
	else if (fds != b->fds)
		t_fail(name, "%s, but %d descriptors before and %d after", t_errname(-r),
		       b->fds, fds);
	else if (strcmp(after.buf, b->tree.buf))
		t_fail(name, "%s, but the tree changed: [%s] -> [%s]", t_errname(-r),
		       b->tree.buf, after.buf);
	else
		t_pass(name);
}

#define ERRS(...) ((const int[]){ __VA_ARGS__, 0 })

/* ---- the scratch directory ---- */

static const char *topdir = "/tmp";

static int scratch(char *path, size_t size, const char *what)
{
	snprintf(path, size, "%s/ocdir-faults.%s.XXXXXX", topdir, what);
	if (!mkdtemp(path))
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "faults: could not remove %s\n", path);
}

/* ---- cases ---- */

/*
 * EMFILE with 0..4 descriptors free: the call may get some of the
 * descriptors it needs (the emulation holds a parent, a staging directory
 * and the new one) but not all. Each try either succeeds or fails with
 * EMFILE having removed what it made.
 */
static void case_emfile(void)
{
	struct rlimit old, lim;
	char path[PATH_MAX], name[64];
	int dirfd, free_slots, fill[64], nfill, r, i, saw_emfile = 0;
	struct before b;

	dirfd = scratch(path, sizeof(path), "emfile");
	if (dirfd < 0 || getrlimit(RLIMIT_NOFILE, &old)) {
		t_fail("EMFILE", "setup: %s", strerror(errno));
		return;
	}
	for (free_slots = 0; free_slots <= 4; free_slots++) {
		snprintf(name, sizeof(name), "EMFILE with %d free descriptor%s", free_slots,
			 free_slots == 1 ? "" : "s");
		before(dirfd, &b);
		lim = old;
		lim.rlim_cur = 48;
		if (setrlimit(RLIMIT_NOFILE, &lim)) {
			t_fail(name, "setrlimit: %s", strerror(errno));
			continue;
		}
		for (nfill = 0; nfill < 64; nfill++) {
			fill[nfill] = dup(0);
			if (fill[nfill] < 0)
				break;
		}
		for (i = 0; i < free_slots && nfill > 0; i++)
			close(fill[--nfill]);
		r = call(dirfd, "new", 0, 0);
		for (i = 0; i < nfill; i++)
			close(fill[i]);
		setrlimit(RLIMIT_NOFILE, &old);
		if (r >= 0) {
			/* Enough descriptors this time: fine, if it is a new directory. */
			struct stat st;
			int ok = fstat(r, &st) == 0 && S_ISDIR(st.st_mode);

			close(r);
			T_CHECK(name, ok && unlinkat(dirfd, "new", AT_REMOVEDIR) == 0,
				"succeeded but left no directory \"new\"");
			continue;
		}
		saw_emfile |= r == -EMFILE;
		b.fds = t_count_fds();	/* the fillers are closed again */
		verdict(name, dirfd, &b, r, ERRS(EMFILE));
	}
	T_CHECK("EMFILE: at least one try ran out", saw_emfile, "no try got EMFILE");
	close(dirfd);
	rm_rf(path);
}

static void case_enametoolong(void)
{
	char path[PATH_MAX], longname[300], longpath[PATH_MAX + 100];
	struct before b;
	int dirfd, r;
	size_t i;

	dirfd = scratch(path, sizeof(path), "name");
	if (dirfd < 0) {
		t_fail("ENAMETOOLONG", "setup: %s", strerror(errno));
		return;
	}
	memset(longname, 'n', 256);
	longname[256] = '\0';
	before(dirfd, &b);
	r = call(dirfd, longname, 0, 0);
	verdict("ENAMETOOLONG: a 256-byte name", dirfd, &b, r, ERRS(ENAMETOOLONG));
	for (i = 0; i + 2 < sizeof(longpath); i += 2)
		memcpy(longpath + i, "a/", 2);
	longpath[i] = '\0';
	before(dirfd, &b);
	r = call(dirfd, longpath, 0, 0);
	verdict("ENAMETOOLONG: a path of PATH_MAX+ bytes", dirfd, &b, r, ERRS(ENAMETOOLONG));
	close(dirfd);
	rm_rf(path);
}

static void case_eloop(void)
{
	char path[PATH_MAX];
	struct before b;
	int dirfd, r;

	dirfd = scratch(path, sizeof(path), "loop");
	if (dirfd < 0 || symlinkat("loop-b", dirfd, "loop-a") || symlinkat("loop-a", dirfd, "loop-b") ||
	    symlinkat("self", dirfd, "self")) {
		t_fail("ELOOP", "setup: %s", strerror(errno));
		return;
	}
	before(dirfd, &b);
	r = call(dirfd, "loop-a/new", 0, 0);
	verdict("ELOOP: a symlink loop before the last component", dirfd, &b, r, ERRS(ELOOP));
	before(dirfd, &b);
	r = call(dirfd, "loop-a", 0, 0);
	verdict("ELOOP: a symlink loop as the last component", dirfd, &b, r, ERRS(ELOOP));
	before(dirfd, &b);
	r = call(dirfd, "self", 0, 0);
	verdict("ELOOP: a symlink to itself as the last component", dirfd, &b, r, ERRS(ELOOP));
	before(dirfd, &b);
	r = call(dirfd, "loop-a", 0, OCDIR_RESOLVE_NO_SYMLINKS);
	verdict("ELOOP: RESOLVE_NO_SYMLINKS on a loop", dirfd, &b, r, ERRS(ELOOP));
	close(dirfd);
	rm_rf(path);
}

/*
 * The parent is removed (and re-made) by another thread while the call
 * runs. Only the documented errnos may come back, and nothing may stay.
 */
struct churn {
	int dirfd;
	_Atomic int stop;
};

static void *churn_parent(void *arg)
{
	struct churn *c = arg;

	while (!atomic_load(&c->stop)) {
		unlinkat(c->dirfd, "parent/new", AT_REMOVEDIR);
		unlinkat(c->dirfd, "parent", AT_REMOVEDIR);
		mkdirat(c->dirfd, "parent", 0755);
	}
	return NULL;
}

static void case_parent_removed(void)
{
	static const int ok[] = { ENOENT, EAGAIN, 0 };	/* documented for a vanishing parent */
	char path[PATH_MAX], bad[128] = "";
	struct churn c = { .stop = 0 };
	pthread_t th;
	struct before b;
	int i, r, fds, good = 0, errs = 0, j, leftovers = 0;
	struct dirent *de;
	DIR *d;

	c.dirfd = scratch(path, sizeof(path), "parent");
	if (c.dirfd < 0) {
		t_fail("parent removed in flight", "setup: %s", strerror(errno));
		return;
	}
	mkdirat(c.dirfd, "parent", 0755);
	before(c.dirfd, &b);
	fds = b.fds;
	if (pthread_create(&th, NULL, churn_parent, &c)) {
		t_fail("parent removed in flight", "pthread_create failed");
		return;
	}
	for (i = 0; i < 3000; i++) {
		r = call(c.dirfd, "parent/new", 0, 0);
		if (r >= 0) {
			good++;
			close(r);
			continue;
		}
		for (j = 0; ok[j] && ok[j] != -r; j++)
			;
		if (!ok[j] && !errs++)
			snprintf(bad, sizeof(bad), "%s", t_errname(-r));
	}
	atomic_store(&c.stop, 1);
	pthread_join(th, NULL);
	/* Staging directories would be left in "parent" or at the top. */
	unlinkat(c.dirfd, "parent/new", AT_REMOVEDIR);
	for (j = 0; j < 2; j++) {
		int fd = openat(c.dirfd, j ? "parent" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		d = fd < 0 ? NULL : fdopendir(fd);
		while (d && (de = readdir(d)))
			leftovers += !strncmp(de->d_name, ".ocdir-stage", 12);
		if (d)
			closedir(d);
	}
	printf("# parent removed in flight: %d of 3000 calls succeeded\n", good);
	if (errs)
		t_fail("parent removed in flight", "%d calls failed with undocumented errnos, e.g. %s",
		       errs, bad);
	else if (t_count_fds() != fds)
		t_fail("parent removed in flight", "%d descriptors before, %d after", fds,
		       t_count_fds());
	else if (leftovers)
		t_fail("parent removed in flight", "%d staging directories left", leftovers);
	else
		t_pass("parent removed in flight");
	close(c.dirfd);
	rm_rf(path);
}

/* ---- cases that need their own mounts: a child in a private namespace ---- */

struct counts_box {
	struct t_counts c;
};

static int in_namespace(void (*fn)(void), const char *what)
{
	struct counts_box *box;
	pid_t pid;
	int status;

	box = mmap(NULL, sizeof(*box), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (box == MAP_FAILED)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		t_counts = (struct t_counts){ 0, 0, 0 };
		if (unshare(CLONE_NEWNS) || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
			t_skip(what, "no private mount namespace: %s", strerror(errno));
		} else {
			fn();
		}
		box->c = t_counts;
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	if (!WIFEXITED(status))
		t_fail(what, "the child died (status %d)", status);
	t_counts.passed += box->c.passed;
	t_counts.failed += box->c.failed;
	t_counts.skipped += box->c.skipped;
	munmap(box, sizeof(*box));
	return 0;
}

/* A tmpfs of its own at a fresh directory; returns its path in mnt. */
static int tiny_tmpfs(char *mnt, size_t size, const char *opts)
{
	snprintf(mnt, size, "%s/ocdir-faults.mnt.XXXXXX", topdir);
	if (!mkdtemp(mnt))
		return -1;
	if (mount("tmpfs", mnt, "tmpfs", 0, opts)) {
		int err = errno;

		rmdir(mnt);	/* nothing left behind when the mount fails */
		errno = err;
		return -1;
	}
	return 0;
}

static void ns_enospc(void)
{
	char mnt[PATH_MAX], name[64], fname[32];
	int dirfd, i, n, k, r, saw = 0;
	struct before b;

	if (tiny_tmpfs(mnt, sizeof(mnt), "size=64k,nr_inodes=32,mode=0755")) {
		t_skip("ENOSPC", "cannot mount a tmpfs: %s", strerror(errno));
		return;
	}
	dirfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Use up every inode, then give back k of them. */
	for (n = 0; n < 64; n++) {
		snprintf(fname, sizeof(fname), "f%d", n);
		r = openat(dirfd, fname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (r < 0)
			break;
		close(r);
	}
	if (errno != ENOSPC) {
		t_fail("ENOSPC", "filling the tmpfs stopped with %s", t_errname(errno));
		goto out;
	}
	for (k = 0; k <= 2; k++) {
		if (k) {
			snprintf(fname, sizeof(fname), "f%d", n - k);
			unlinkat(dirfd, fname, 0);
		}
		snprintf(name, sizeof(name), "ENOSPC with %d free inode%s", k, k == 1 ? "" : "s");
		before(dirfd, &b);
		r = call(dirfd, "new", 0, 0);
		if (r >= 0) {
			/* The native call needs only one inode: fine. */
			close(r);
			T_CHECK(name, k >= 1 && unlinkat(dirfd, "new", AT_REMOVEDIR) == 0,
				"succeeded with no inode free");
			continue;
		}
		saw |= r == -ENOSPC;
		verdict(name, dirfd, &b, r, ERRS(ENOSPC));
	}
	T_CHECK("ENOSPC: at least one try ran out", saw, "no try got ENOSPC");
	for (i = 0; i < n; i++) {
		snprintf(fname, sizeof(fname), "f%d", i);
		unlinkat(dirfd, fname, 0);
	}
out:
	close(dirfd);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

static void ns_erofs(void)
{
	char mnt[PATH_MAX], sub[PATH_MAX + 16];
	struct before b;
	int dirfd, r;

	if (tiny_tmpfs(mnt, sizeof(mnt), "size=1m,mode=0755")) {
		t_skip("EROFS", "cannot mount a tmpfs: %s", strerror(errno));
		return;
	}
	snprintf(sub, sizeof(sub), "%s/existing", mnt);
	mkdir(sub, 0755);
	if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL)) {
		t_fail("EROFS: remount read-only", "%s", strerror(errno));
	} else {
		dirfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		before(dirfd, &b);
		r = call(dirfd, "new", 0, 0);
		verdict("EROFS: new name on a read-only tmpfs", dirfd, &b, r, ERRS(EROFS));
		r = call(dirfd, "existing", 0, 0);
		T_CHECK("EROFS: an existing directory still opens read-only", r >= 0,
			"%s", t_errname(-r));
		if (r >= 0)
			close(r);
		close(dirfd);
		mount(NULL, mnt, NULL, MS_REMOUNT, NULL);
	}
	/* A read-only bind mount of a writable directory. */
	if (mount(sub, sub, NULL, MS_BIND, NULL) ||
	    mount(NULL, sub, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL)) {
		t_fail("EROFS: read-only bind mount", "%s", strerror(errno));
	} else {
		dirfd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		before(dirfd, &b);
		r = call(dirfd, "new", 0, 0);
		verdict("EROFS: new name on a read-only bind mount", dirfd, &b, r, ERRS(EROFS));
		close(dirfd);
		umount2(sub, MNT_DETACH);
	}
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

/*
 * Detached with umount2(MNT_DETACH) while we hold a descriptor in it: the
 * filesystem lives on until the last reference goes, so the call works
 * there; by path the name now leads to the directory underneath.
 */
static void ns_detached(void)
{
	char mnt[PATH_MAX];
	struct stat st;
	int dirfd, r, fds;

	if (tiny_tmpfs(mnt, sizeof(mnt), "size=1m,mode=0755")) {
		t_skip("lazy unmount", "cannot mount a tmpfs: %s", strerror(errno));
		return;
	}
	dirfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (umount2(mnt, MNT_DETACH)) {
		t_fail("lazy unmount", "umount2: %s", strerror(errno));
		return;
	}
	fds = t_count_fds();
	r = call(dirfd, "new", 0, 0);
	T_CHECK("lazy unmount: a descriptor into the detached tmpfs still creates",
		r >= 0 && fstat(r, &st) == 0 && S_ISDIR(st.st_mode), "%s", t_errname(-r));
	if (r >= 0)
		close(r);
	T_CHECK("lazy unmount: no descriptor leaked", t_count_fds() == fds, "%d -> %d", fds,
		t_count_fds());
	close(dirfd);
	/* Path-based: the name resolves on the directory that was underneath. */
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/below", mnt);
	r = call(AT_FDCWD, path, 0, 0);
	T_CHECK("lazy unmount: by path the call lands on the directory underneath",
		r >= 0 && fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0,
		"%s", t_errname(-r));
	if (r >= 0)
		close(r);
	rmdir(path);
	rmdir(mnt);
}

/*
 * A loop-mounted ext4 of our own (mkfs.ext4 FEATURES, mount OPTS) at a
 * fresh directory. Returns 0, or a reason to skip in why.
 */
struct loopfs {
	char img[PATH_MAX], mnt[PATH_MAX], dev[64];
};

static int loop_ext4(struct loopfs *l, const char *mkfs_args, const char *opts,
		     char *why, size_t whysize)
{
	char cmd[PATH_MAX * 2];
	FILE *p;
	int fd, made;

	snprintf(l->img, sizeof(l->img), "%s/ocdir-faults.img.XXXXXX", topdir);
	fd = mkstemp(l->img);
	if (fd < 0 || ftruncate(fd, 96 << 20)) {
		snprintf(why, whysize, "cannot make an image file: %s", strerror(errno));
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s '%s' >/dev/null 2>&1", mkfs_args, l->img);
	if (system(cmd) != 0) {
		snprintf(why, whysize, "mkfs.ext4 %s failed (is e2fsprogs installed?)", mkfs_args);
		unlink(l->img);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "losetup -f --show '%s' 2>/dev/null", l->img);
	p = popen(cmd, "r");
	l->dev[0] = '\0';
	if (!p || !fgets(l->dev, sizeof(l->dev), p) || l->dev[0] != '/') {
		if (p)
			pclose(p);
		snprintf(why, whysize, "no loop device (losetup failed; the guest kernel has "
			 "no CONFIG_BLK_DEV_LOOP)");
		unlink(l->img);
		return -1;
	}
	pclose(p);
	l->dev[strcspn(l->dev, "\n")] = '\0';
	snprintf(l->mnt, sizeof(l->mnt), "%s/ocdir-faults.mnt.XXXXXX", topdir);
	made = mkdtemp(l->mnt) != NULL;
	if (!made || mount(l->dev, l->mnt, "ext4", 0, opts)) {
		snprintf(why, whysize, "mount ext4 -o %s: %s", opts, strerror(errno));
		if (made)
			rmdir(l->mnt);	/* nothing left behind when the mount fails */
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", l->dev);
		if (system(cmd) != 0)
			fprintf(stderr, "faults: %s failed\n", cmd);
		unlink(l->img);
		return -1;
	}
	return 0;
}

static void loop_ext4_free(struct loopfs *l)
{
	char cmd[128];

	umount2(l->mnt, MNT_DETACH);
	rmdir(l->mnt);
	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", l->dev);
	if (system(cmd) != 0)
		fprintf(stderr, "faults: %s failed\n", cmd);
	unlink(l->img);
}

/* Run fn(arg) in a child with all ids set to uid; its results count here. */
static void as_user(uid_t uid, void (*fn)(void *), void *arg)
{
	struct t_counts *box;
	pid_t pid;
	int status;

	box = mmap(NULL, sizeof(*box), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (box == MAP_FAILED)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		t_counts = (struct t_counts){ 0, 0, 0 };
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			t_fail("as_user", "cannot become uid %u: %s", (unsigned int)uid, strerror(errno));
		else
			fn(arg);
		*box = t_counts;
		fflush(stdout);
		_exit(0);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid) {
		t_counts.passed += box->passed;
		t_counts.failed += box->failed;
		t_counts.skipped += box->skipped;
	}
	munmap(box, sizeof(*box));
}

#define QUOTA_USER 65534

/* As QUOTA_USER: use the inode quota up, then leave 0..2 inodes of it. */
static void edquot_tries(void *arg)
{
	const char *mnt = arg;
	char name[64], f[32];
	struct before b;
	int dirfd, n, k, r, saw = 0;

	dirfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (n = 0; n < 64; n++) {
		snprintf(f, sizeof(f), "fill%d", n);
		r = openat(dirfd, f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (r < 0)
			break;
		close(r);
	}
	if (errno != EDQUOT) {
		t_fail("EDQUOT", "filling the quota stopped with %s after %d files",
		       t_errname(errno), n);
		close(dirfd);
		return;
	}
	for (k = 0; k <= 2; k++) {
		if (k) {
			snprintf(f, sizeof(f), "fill%d", n - k);
			unlinkat(dirfd, f, 0);
		}
		snprintf(name, sizeof(name), "EDQUOT with %d inode%s left in the quota", k,
			 k == 1 ? "" : "s");
		before(dirfd, &b);
		r = call(dirfd, "new", 0, 0);
		if (r >= 0) {
			close(r);
			T_CHECK(name, k >= 1 && unlinkat(dirfd, "new", AT_REMOVEDIR) == 0,
				"succeeded with no inode left in the quota");
			continue;
		}
		saw |= r == -EDQUOT;
		verdict(name, dirfd, &b, r, ERRS(EDQUOT));
	}
	T_CHECK("EDQUOT: at least one try ran out", saw, "no try got EDQUOT");
	close(dirfd);
}

/*
 * A tmpfs with a default inode quota (CONFIG_TMPFS_QUOTA, 6.6+), else an
 * ext4 image with the quota feature (CONFIG_QFMT_V2 and a loop device).
 * Root is exempt from quotas, so the calls run as QUOTA_USER.
 */
static void ns_edquot(void)
{
	char why[256], mnt[PATH_MAX];
	struct dqblk dq = { 0 };
	struct loopfs l;

	if (tiny_tmpfs(mnt, sizeof(mnt), "size=4m,mode=0777,usrquota,usrquota_inode_hardlimit=6") == 0) {
		as_user(QUOTA_USER, edquot_tries, mnt);
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
		return;
	}
	rmdir(mnt);
	if (loop_ext4(&l, "-O quota -E quotatype=usrquota", "usrquota", why, sizeof(why))) {
		t_skip("EDQUOT", "no tmpfs quota (CONFIG_TMPFS_QUOTA) and no ext4 quota: %s%s", why,
		       errno == EINVAL ? " (ext4 quotas need CONFIG_QUOTA and CONFIG_QFMT_V2)" : "");
		return;
	}
	dq.dqb_ihardlimit = 6;
	dq.dqb_valid = QIF_ILIMITS;
	if (chmod(l.mnt, 0777) ||
	    quotactl(QCMD(Q_SETQUOTA, USRQUOTA), l.dev, QUOTA_USER, (caddr_t)&dq))
		t_fail("EDQUOT", "setting the quota: %s", strerror(errno));
	else
		as_user(QUOTA_USER, edquot_tries, l.mnt);
	loop_ext4_free(&l);
}

/*
 * ext4 without dir_nlink stops a directory at 65000 links (EXT4_LINK_MAX):
 * fill one up to the limit, leave 0..2 links free.
 */
static void ns_emlink(void)
{
	char why[256], name[64], sub[32];
	struct loopfs l;
	struct before b;
	int dirfd, n, k, r, saw = 0;

	if (loop_ext4(&l, "-O ^dir_nlink -N 70000", "", why, sizeof(why))) {
		t_skip("EMLINK", "%s", why);
		return;
	}
	dirfd = open(l.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (n = 0; n < 70000; n++) {
		snprintf(sub, sizeof(sub), "d%d", n);
		if (mkdirat(dirfd, sub, 0755))
			break;
	}
	if (errno != EMLINK) {
		t_skip("EMLINK", "filling a directory stopped with %s after %d, not EMLINK",
		       t_errname(errno), n);
		goto out;
	}
	printf("# EMLINK: the directory is full after %d subdirectories\n", n);
	for (k = 0; k <= 2; k++) {
		if (k) {
			snprintf(sub, sizeof(sub), "d%d", n - k);
			unlinkat(dirfd, sub, AT_REMOVEDIR);
		}
		snprintf(name, sizeof(name), "EMLINK with %d link%s free", k, k == 1 ? "" : "s");
		/* Listing 65000 names is pointless: look only for new entries. */
		b.tree.len = 0;
		b.fds = t_count_fds();
		r = call(dirfd, "new", 0, 0);
		if (r >= 0) {
			close(r);
			T_CHECK(name, k >= 1 && unlinkat(dirfd, "new", AT_REMOVEDIR) == 0,
				"succeeded in a full directory");
			continue;
		}
		saw |= r == -EMLINK;
		{
			struct stat st;
			int left = fstatat(dirfd, "new", &st, AT_SYMLINK_NOFOLLOW) == 0;
			DIR *d = fdopendir(openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
			struct dirent *de;

			while (d && (de = readdir(d)))
				left += !strncmp(de->d_name, ".ocdir-stage", 12);
			if (d)
				closedir(d);
			if (r != -EMLINK)
				t_fail(name, "errno %s, expected EMLINK", t_errname(-r));
			else if (t_count_fds() != b.fds)
				t_fail(name, "EMLINK, but descriptors leaked");
			else if (left)
				t_fail(name, "EMLINK, but %d entries were left", left);
			else
				t_pass(name);
		}
	}
	T_CHECK("EMLINK: at least one try ran out", saw, "no try got EMLINK");
out:
	close(dirfd);
	loop_ext4_free(&l);
}

/* ---- out of memory: the Nth allocation of the call fails ---- */

struct oom_op {
	const char *name;
	int (*run)(int dirfd);	/* a descriptor (or 0) or -errno */
	void (*undo)(int dirfd);	/* remove what a successful run made */
};

static int op_new(int dirfd) { return call(dirfd, "new", 0, 0); }
static int op_existing(int dirfd) { return call(dirfd, "existing", 0, 0); }
static int op_link(int dirfd) { return call(dirfd, "link-to-existing", 0, 0); }
static int op_path(int dirfd) { return call(dirfd, "existing/new", 0, 0); }
static int op_beneath(int dirfd)
{
	return call(dirfd, "existing/../existing/new", 0, OCDIR_RESOLVE_BENEATH);
}
static int op_mkpath(int dirfd)
{
	struct ocdir_how how = { .mode = 0755 };
	int fd = ocdir_mkpath(dirfd, "p1/p2/p3", &how, sizeof(how), NULL);

	return fd < 0 ? -errno : fd;
}
static int op_prepare(int dirfd)
{
	struct ocdir_how how = { .mode = 0755 };
	struct ocdir_prepared *p;
	int fd = ocdir_prepare(dirfd, "prepared", &how, sizeof(how), &p);

	if (fd < 0)
		return -errno;
	if (ocdir_publish(p)) {
		int e = -errno;

		ocdir_discard(p);
		close(fd);
		return e;
	}
	return fd;
}
static void undo_none(int dirfd) { (void)dirfd; }
static void undo_new(int dirfd) { unlinkat(dirfd, "new", AT_REMOVEDIR); }
static void undo_path(int dirfd) { unlinkat(dirfd, "existing/new", AT_REMOVEDIR); }
static void undo_mkpath(int dirfd)
{
	unlinkat(dirfd, "p1/p2/p3", AT_REMOVEDIR);
	unlinkat(dirfd, "p1/p2", AT_REMOVEDIR);
	unlinkat(dirfd, "p1", AT_REMOVEDIR);
}
static void undo_prepare(int dirfd) { unlinkat(dirfd, "prepared", AT_REMOVEDIR); }

static const struct oom_op oom_ops[] = {
	{ "new name", op_new, undo_new },
	{ "existing directory", op_existing, undo_none },
	{ "symlink to a directory", op_link, undo_none },
	{ "two components", op_path, undo_path },
	{ "RESOLVE_BENEATH", op_beneath, undo_path },
	{ "ocdir_mkpath p1/p2/p3", op_mkpath, undo_mkpath },
	{ "ocdir_prepare + publish", op_prepare, undo_prepare },
};

static void case_oom(void)
{
	char path[PATH_MAX], name[96], bad[160];
	unsigned long n, calls;
	struct before b;
	int dirfd, r, failed, fds;
	size_t i;

	dirfd = scratch(path, sizeof(path), "oom");
	if (dirfd < 0 || mkdirat(dirfd, "existing", 0755) ||
	    symlinkat("existing", dirfd, "link-to-existing")) {
		t_fail("ENOMEM", "setup: %s", strerror(errno));
		return;
	}
	/* Warm up: the probe and the environment are read once, not per call. */
	r = op_existing(dirfd);
	if (r >= 0)
		close(r);
	for (i = 0; i < sizeof(oom_ops) / sizeof(oom_ops[0]); i++) {
		snprintf(name, sizeof(name), "ENOMEM: %s, every allocation failing in turn",
			 oom_ops[i].name);
		failed = 0;
		calls = 0;
		for (n = 1; n < 200 && !failed; n++) {
			before(dirfd, &b);
			fds = b.fds;
			atomic_store(&oom_count, 0);
			atomic_store(&oom_fail_at, n);
			atomic_store(&oom_armed, 1);
			r = oom_ops[i].run(dirfd);
			atomic_store(&oom_armed, 0);
			if (r >= 0) {
				close(r);
				oom_ops[i].undo(dirfd);
				if (atomic_load(&oom_count) < n)
					break;	/* every allocation point was failed once */
				continue;	/* the failure was absorbed */
			}
			calls++;
			static struct listing after;

			snapshot(dirfd, &after);
			if (r != -ENOMEM) {
				snprintf(bad, sizeof(bad), "allocation %lu failing gave %s, not ENOMEM",
					 n, t_errname(-r));
				failed = 1;
			} else if (t_count_fds() != fds) {
				snprintf(bad, sizeof(bad), "allocation %lu failing leaked %d descriptors",
					 n, t_count_fds() - fds);
				failed = 1;
			} else if (strcmp(after.buf, b.tree.buf)) {
				snprintf(bad, sizeof(bad), "allocation %lu failing left [%.100s]", n,
					 after.buf);
				failed = 1;
			}
		}
		if (failed)
			t_fail(name, "%s", bad);
		else
			printf("# %s: %lu allocation points, all ENOMEM and clean\n", name, n - 1);
		if (!failed)
			t_pass(name);
	}
	close(dirfd);
	rm_rf(path);
}

static int raw_available(void)
{
	int fd = openat(AT_FDCWD, topdir, O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int main(int argc, char **argv)
{
	const char *reason = "";
	const char *tmp = getenv("TMPDIR");
	int i;

	/* Scratch directories go where TMPDIR says, as mktemp(1) puts them. */
	if (tmp && *tmp == '/')
		topdir = tmp;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			use_raw = !strcmp(argv[++i], "raw");
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			topdir = argv[++i];
		} else {
			fprintf(stderr, "usage: faults --backend lib|raw [--dir DIR]\n");
			return 2;
		}
	}
	if (use_raw && !raw_available()) {
		t_skip("faults raw", "not run: kernel lacks the feature");
		return t_exit_status();
	}
	if (!use_raw) {
		int native = ocdir_backend(&reason) == OCDIR_BACKEND_NATIVE;

		printf("# backend: %s (%s)\n", native ? "native" : "emulated", reason);
	}
	case_emfile();
	case_enametoolong();
	case_eloop();
	case_parent_removed();
	if (geteuid() == 0) {
		in_namespace(ns_enospc, "ENOSPC");
		in_namespace(ns_erofs, "EROFS");
		in_namespace(ns_detached, "lazy unmount");
		in_namespace(ns_edquot, "EDQUOT");
		in_namespace(ns_emlink, "EMLINK");
	} else {
		t_skip("ENOSPC, EROFS, lazy unmount, EDQUOT, EMLINK", "need root for mounts");
	}
	if (use_raw)
		t_skip("ENOMEM", "the kernel call allocates nothing in userspace");
	else
		case_oom();
	printf("%u passed, %u failed, %u skipped\n", t_counts.passed, t_counts.failed,
	       t_counts.skipped);
	return t_exit_status();
}
