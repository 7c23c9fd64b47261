/* SPDX-License-Identifier: MIT */
/*
 * tests/race/hostile3.c - regression attackers for issue 39 (libocdir
 * under attack, round three): a freed handle retried, a directory that
 * existed before the call taken for staging, and a directory that setup
 * gave away left at its public name. Written from the header and the
 * issue, one variant per way in.
 *
 *   hostile3 [-v VARIANT,...] [-n ROUNDS] [-t SECONDS] [-d DIR] [-u UID]
 *            [-w SPINS] [-c OCDIR] [-q]
 *   hostile3 -l PREFIX|native   (the variants' names, for -v)
 *
 * Each variant prints
 *   # RESULT variant=hostile3-NAME fs=F rounds=N hits=H leftovers=L
 *     eagain=A errors=E moves=M seconds=T
 * then PASS when hits and leftovers are 0, else FAIL; SKIP when it cannot
 * run here. The victim is root (umask 022) unless said; the attacker is
 * uid 65534 (-u).
 *
 *  discard-retry   point 1. Victim uid 1000 (its fsuid), arena owned by
 *                  the attacker (0777). Each round: ocdir_prepare() "dest"
 *                  with a file in it; the attacker makes the arena 0555;
 *                  ocdir_discard(). The arena is made 0777 again, a second
 *                  prepare makes "dest2" with a file, and if the discard
 *                  said -1 it is retried, as the header of f246af7 told
 *                  callers to (the bindings did). Hits: the second tree
 *                  harmed (the retry ran on a freed handle that malloc
 *                  gave to the second prepare), a discard that said 0 and
 *                  errno 0 with anything left, a discard that said 0 and
 *                  a leftover with anything left but one empty 0700
 *                  directory of uid 1000.
 *  stage-old-{full,acl,sgid}-{openat2,setup,prepare}
 *                  point 2, deterministic. Shared 0777 arena (root's). The
 *                  program is linked with a mkdirat wrapper: right after
 *                  the library's mkdirat of a ".ocdir-stage.*" directory it
 *                  exchanges that name with "old-dir", one of root's
 *                  directories from before the call: full = mode 0500 with
 *                  a file in it; acl = 0700, empty, default ACL
 *                  u:65534:rwx; sgid = 02700, empty, group 65534. Then the
 *                  call (ocdir_openat2, ocdir_openat2_setup with a setup
 *                  that does nothing, ocdir_prepare + ocdir_publish) of
 *                  "target", mode 0755.
 *  stage-fresh-{full,acl,sgid}-{...}
 *                  the same with a directory made inside the window (born
 *                  after the call began, as one made in the same clock
 *                  tick before it would be): its birth time cannot tell
 *                  it from the staging directory, the other checks must.
 *                  Hits for both: anything made in, or attributes changed
 *                  on, the planted directory (inotify IN_CREATE/IN_ATTRIB,
 *                  and its mode, owner, group, ACL and file compared);
 *                  "target" made with an ACL entry, group 65534 or the
 *                  setgid bit (the arena hands out group 0, no ACL).
 *  race-{full,acl,sgid}-{openat2,setup,prepare,cli}
 *                  point 2, live. The attacker, SCHED_FIFO on the
 *                  victim's CPU, blocks on inotify on the arena and
 *                  exchanges each new ".ocdir-stage.*" with "old-dir" (as
 *                  above) as soon as it appears, holds it -w microseconds
 *                  (default 200), swaps back. cli runs the ocdir command
 *                  (-m 0755) beside this program. Hits as for stage-old-*.
 *  handoff-private, handoff-shared-weak
 *                  point 3. Arena 0755 (private), or a 0777 one on a
 *                  bindfs mount (shared) that adds g+rX,o+rX to all, so
 *                  that no staging directory can be private there, with
 *                  OCDIR_ALLOW_WEAK_EMULATION, both root's: the two ways
 *                  a directory is set up at its public name. ocdir_openat2_setup() of "target" with a setup
 *                  that fchowns the directory to the attacker (mode 0755),
 *                  waits until the attacker, by the public name, holds the
 *                  directory and a subdirectory of its own open and fills
 *                  them, and fails (EDQUOT). The attacker fills on until
 *                  the call returns. Hits: anything at "target" after the
 *                  call. Leftovers: anything else left in the arena.
 *                  "reported" (in errors): a removal failure the call gave
 *                  as its answer.
 * Leftovers are counted in every variant: anything left in the arena
 * besides "old-dir" and a created "target", except, after a call that
 * said EAGAIN, one empty 0700 directory of the victim's (issue 39's
 * accepted one).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ocdir.h"
#include "../helpers.h"
#include "race.h"

#define OLD		"old-dir"
#define FRESH		"fresh-dir"
#define TARGET		"target"
#define KEEP		"keep"
#define STAGE_PREFIX	".ocdir-stage."
#define ACL_DEFAULT	"system.posix_acl_default"
#define ACL_ACCESS	"system.posix_acl_access"
#define VICTIM_UID	1000

enum family { F_DISCARD, F_STAGE, F_RACE, F_HANDOFF };
enum plant { P_FULL, P_ACL, P_SGID };
enum entry { E_OPENAT2, E_SETUP, E_PREPARE, E_CLI };

struct variant {
	char name[48];
	enum family fam;
	int fresh;		/* F_STAGE: planted in the window, not before */
	enum plant plant;
	enum entry entry;
	int shared;		/* F_HANDOFF: a 0777 arena */
};

struct result {
	unsigned long rounds, hits, leftovers, eagain, errors, moves;
	double seconds;
	char fs[32], note[200];
};

static struct {
	const char *list, *dir, *cli;
	unsigned long rounds, dwell;
	double seconds;
	uid_t attacker;
	int quiet;
} opt = { NULL, "/tmp", NULL, 1000, 200, 30, 65534, 0 };

static const char *const plant_names[] = { "full", "acl", "sgid" };
static const char *const entry_names[] = { "openat2", "setup", "prepare", "cli" };

static void note(struct result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->note[0])
		return;
	va_start(ap, fmt);
	vsnprintf(res->note, sizeof(res->note), fmt, ap);
	va_end(ap);
}

static void set_fs(struct result *res, int fd)
{
	char buf[32];

	snprintf(res->fs, sizeof(res->fs), "%.31s", fs_name(fd, buf, sizeof(buf)));
}

/* ---- the planted directories ---- */

/* A default ACL granting uid `uid` rwx: the xattr as the kernel stores it. */
static size_t acl_granting(char *buf, uid_t uid)
{
	static const struct { unsigned short tag, perm; } e[] = {
		{ 0x01, 7 }, { 0x02, 7 }, { 0x04, 5 }, { 0x10, 7 }, { 0x20, 5 },
	};
	uint32_t version = 2, id;
	size_t i, off = 4;

	memcpy(buf, &version, 4);
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		id = e[i].tag == 0x02 ? uid : (uint32_t)-1;
		memcpy(buf + off, &e[i].tag, 2);
		memcpy(buf + off + 2, &e[i].perm, 2);
		memcpy(buf + off + 4, &id, 4);
		off += 8;
	}
	return off;
}

/* What a planted directory looked like when it was planted. */
struct planted {
	int fd;			/* O_RDONLY on it */
	struct stat st;
	char acl[256];
	ssize_t acl_len;
	int watch;		/* inotify watch on it, or -1 */
};

/* Make root's directory `name` in dirfd as `plant` says, and remember it. */
static int make_plant(int dirfd, const char *name, enum plant plant, struct planted *pl)
{
	char acl[128];
	int fd;

	if (mkdirat(dirfd, name, 0700))
		return -1;
	pl->fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pl->fd < 0)
		return -1;
	switch (plant) {
	case P_FULL:
		fd = openat(pl->fd, KEEP, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 || close(fd) || fchmod(pl->fd, 0500))
			return -1;
		break;
	case P_ACL:
		if (fsetxattr(pl->fd, ACL_DEFAULT, acl, acl_granting(acl, opt.attacker), 0))
			return -1;
		break;
	case P_SGID:
		if (fchown(pl->fd, 0, opt.attacker) || fchmod(pl->fd, 02700))
			return -1;
		break;
	}
	pl->acl_len = fgetxattr(pl->fd, ACL_DEFAULT, pl->acl, sizeof(pl->acl));
	pl->watch = -1;
	return fstat(pl->fd, &pl->st);
}

/* Was the planted directory removed or changed (mode, owner, group, ACL, file)? */
static int plant_changed(const struct planted *pl, enum plant plant)
{
	char acl[256];
	struct stat st;
	ssize_t n;

	if (fstat(pl->fd, &st) || st.st_nlink == 0 ||
	    (st.st_mode & 07777) != (pl->st.st_mode & 07777) ||
	    st.st_uid != pl->st.st_uid || st.st_gid != pl->st.st_gid)
		return 1;
	n = fgetxattr(pl->fd, ACL_DEFAULT, acl, sizeof(acl));
	if (n != pl->acl_len || (n > 0 && memcmp(acl, pl->acl, (size_t)n)))
		return 1;
	if (plant == P_FULL && faccessat(pl->fd, KEEP, F_OK, AT_SYMLINK_NOFOLLOW))
		return 1;
	return 0;
}

/* Does what fd holds show anything the arena (group 0, no ACL) did not hand out? */
static int target_inherited(int fd)
{
	char acl[256];
	struct stat st;

	if (fstat(fd, &st))
		return 0;
	return st.st_gid != 0 || (st.st_mode & S_ISGID) ||
	       fgetxattr(fd, ACL_DEFAULT, acl, sizeof(acl)) >= 0 ||
	       fgetxattr(fd, ACL_ACCESS, acl, sizeof(acl)) >= 0;
}

/* ---- the arena ---- */

struct arena {
	char base[256], path[300];
	int fd, inotify;
	int mounted;		/* a bindfs mount at path: 1; it failed: -1 */
	struct planted old;
};

static int arena_make(struct arena *a, mode_t mode, uid_t owner)
{
	memset(a, 0, sizeof(*a));
	a->fd = a->inotify = a->old.fd = -1;
	snprintf(a->base, sizeof(a->base), "%s/hostile3.XXXXXX", opt.dir);
	if (!mkdtemp(a->base) || chmod(a->base, 0755))
		return -1;
	snprintf(a->path, sizeof(a->path), "%s/arena", a->base);
	if (mkdir(a->path, 0700) || chown(a->path, owner, owner) || chmod(a->path, mode))
		return -1;
	a->fd = open(a->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return a->fd < 0 || a->inotify < 0 ? -1 : 0;
}

/*
 * The arena on a bindfs mount of a 0777 directory (FUSE, allow_other as
 * root) that shows group and other read and search bits on everything:
 * no staging directory can be made private there (f246af7 gave up on it
 * for that; the fix also for the missing birth time).
 */
static int arena_make_bindfs(struct arena *a)
{
	char src[300];
	pid_t pid;
	int st;

	if (arena_make(a, 0755, 0))
		return -1;
	close(a->fd);
	snprintf(src, sizeof(src), "%s/src", a->base);
	if (mkdir(src, 0777) || chmod(src, 0777))
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execlp("bindfs", "bindfs", "--perms=g+rX,o+rX", src, a->path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		a->mounted = -1;
		return -1;
	}
	a->mounted = 1;
	a->fd = open(a->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return a->fd < 0 ? -1 : 0;
}

static void arena_drop(struct arena *a)
{
	int i;

	if (a->mounted > 0) {
		if (a->fd >= 0)
			close(a->fd);
		a->fd = -1;
		for (i = 0; i < 50 && umount2(a->path, 0) && errno == EBUSY; i++)
			usleep(20000);
		umount2(a->path, MNT_DETACH);
	}
	if (a->old.fd >= 0)
		close(a->old.fd);
	if (a->inotify >= 0)
		close(a->inotify);
	if (a->fd >= 0)
		close(a->fd);
	if (a->base[0])
		rm_tree(a->base);
}

static int rm_at(int dirfd, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	rm_tree(path);
	return 0;
}

static int is_dots(const char *n)
{
	return !strcmp(n, ".") || !strcmp(n, "..");
}

/* An empty 0700 directory of uid's: the one leftover a lost race may leave. */
static int accepted_leftover(int dirfd, const char *name, uid_t uid)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int fd, empty = 1;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
	    (st.st_mode & 07777) != 0700 || st.st_uid != uid)
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)))
		if (!is_dots(de->d_name))
			empty = 0;
	closedir(d);
	return empty;
}

/*
 * Count and remove what a round left in the arena besides `keep` (NULL:
 * nothing is kept) and a "target" the call created (target_ok); after a
 * call that said EAGAIN (or a discard that reported a leftover) one empty
 * 0700 directory of `uid` is accepted. Returns the leftovers.
 */
static unsigned long sweep(struct arena *a, const char *keep, int target_ok,
			   int allow_one, uid_t uid, const char *what, struct result *res)
{
	unsigned long left = 0;
	struct dirent *de;
	DIR *d = opendir_fd(a->fd);

	while (d && (de = readdir(d))) {
		if (is_dots(de->d_name) || (keep && !strcmp(de->d_name, keep)))
			continue;
		if (target_ok && !strcmp(de->d_name, TARGET)) {
			rm_at(a->fd, de->d_name);
			continue;
		}
		if (allow_one && accepted_leftover(a->fd, de->d_name, uid)) {
			allow_one = 0;
		} else {
			left++;
			if (!opt.quiet && res->leftovers + left <= 3)
				printf("# %s: left: %s\n", what, de->d_name);
		}
		rm_at(a->fd, de->d_name);
	}
	if (d)
		closedir(d);
	return left;
}

/* Put the planted directory back at `home`, wherever the round left it. */
static void plant_home(struct arena *a, const struct planted *pl, const char *home)
{
	struct stat st;
	struct dirent *de;
	DIR *d;

	if (fstatat(a->fd, home, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == pl->st.st_ino)
		return;
	d = opendir_fd(a->fd);
	while (d && (de = readdir(d)))
		if (de->d_ino == pl->st.st_ino && !is_dots(de->d_name)) {
			if (renameat2(a->fd, de->d_name, a->fd, home, RENAME_EXCHANGE))
				renameat(a->fd, de->d_name, a->fd, home);
			break;
		}
	if (d)
		closedir(d);
}

/* ---- the mkdirat wrapper: the deterministic exchange ---- */

int __real_mkdirat(int dirfd, const char *path, mode_t mode);

static struct {
	int armed;		/* exchange the next staging directory */
	int fresh;
	enum plant plant;
	struct arena *a;
	struct planted fresh_pl;
	int done;
} window;

/*
 * Linked with -Wl,--wrap=mkdirat: the library's mkdirat of a staging
 * directory returns only after the name holds another directory, as if an
 * attacker had won the race every time.
 */
int __wrap_mkdirat(int dirfd, const char *path, mode_t mode)
{
	struct arena *a = window.a;
	int r = __real_mkdirat(dirfd, path, mode);
	struct planted *pl;
	char watched[700];

	if (r || !window.armed || strncmp(path, STAGE_PREFIX, strlen(STAGE_PREFIX)))
		return r;
	window.armed = 0;
	if (window.fresh) {
		pl = &window.fresh_pl;
		if (make_plant(a->fd, FRESH, window.plant, pl))
			return r;
	} else {
		pl = &a->old;
	}
	if (renameat2(a->fd, path, a->fd, window.fresh ? FRESH : OLD, RENAME_EXCHANGE))
		return r;
	snprintf(watched, sizeof(watched), "%s/%s", a->path, path);
	pl->watch = inotify_add_watch(a->inotify, watched, IN_CREATE | IN_ATTRIB | IN_MOVED_TO);
	window.done = 1;
	return r;
}

/* Were there events on the planted directory's watch? Drains the queue. */
static int plant_touched(struct arena *a, int watch)
{
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	ssize_t n, off;
	int touched = 0;

	while ((n = read(a->inotify, u.buf, sizeof(u.buf))) > 0)
		for (off = 0; off < n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(u.buf + off);

			if (ev->wd == watch && (ev->mask & (IN_CREATE | IN_ATTRIB | IN_MOVED_TO)))
				touched = 1;
			off += (ssize_t)(sizeof(*ev) + ev->len);
		}
	return touched;
}

static int noop_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	(void)fd;
	(void)path;
	(void)flags;
	(void)arg;
	return 0;
}

/* The victim's call of `entry` on TARGET: a descriptor, or -errno. */
static int victim_call(struct arena *a, enum entry entry)
{
	struct ocdir_how how = { .mode = 0755 };
	struct ocdir_prepared *p;
	char path[400];
	int fd, st;
	pid_t pid;

	switch (entry) {
	case E_OPENAT2:
		fd = ocdir_openat2(a->fd, TARGET, &how, sizeof(how), NULL);
		return fd < 0 ? -errno : fd;
	case E_SETUP:
		fd = ocdir_openat2_setup(a->fd, TARGET, &how, sizeof(how), noop_setup, NULL, NULL);
		return fd < 0 ? -errno : fd;
	case E_PREPARE:
		fd = ocdir_prepare(a->fd, TARGET, &how, sizeof(how), &p);
		if (fd < 0)
			return -errno;
		if (ocdir_publish(p) < 0) {
			st = errno;
			ocdir_discard(p);
			close(fd);
			return -st;
		}
		return fd;
	case E_CLI:
		snprintf(path, sizeof(path), "%s/" TARGET, a->path);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 2);
			execl(opt.cli, "ocdir", "-m", "0755", path, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return -EAGAIN;	/* the command's own errors are EAGAIN here */
		fd = openat(a->fd, TARGET, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return -EINVAL;
}

/* Count a call's answer: EAGAIN is a documented loss, others are errors. */
static void count_call(int fd, struct result *res, const char *what)
{
	if (fd == -EAGAIN) {
		res->eagain++;
	} else if (fd < 0) {
		res->errors++;
		if (!opt.quiet && res->errors <= 3)
			printf("# %s: %s\n", what, t_errname(-fd));
	}
}

/* ---- point 2, deterministic ---- */

static int run_stage(const struct variant *v, struct result *res)
{
	struct arena a;
	struct planted *pl;
	unsigned long r, left;
	double start;
	int fd, hit;

	if (arena_make(&a, 0777, 0))
		return -errno;
	set_fs(res, a.fd);
	if (!v->fresh && make_plant(a.fd, OLD, v->plant, &a.old)) {
		arena_drop(&a);
		return errno == EOPNOTSUPP ? 77 : -errno;
	}
	window.a = &a;
	window.fresh = v->fresh;
	window.plant = v->plant;
	start = now();
	for (r = 0; r < opt.rounds; r++) {
		if ((r & 15) == 0 && now() - start > opt.seconds)
			break;
		window.done = 0;
		window.armed = 1;
		window.fresh_pl.fd = -1;
		fd = victim_call(&a, v->entry);
		window.armed = 0;
		pl = v->fresh ? &window.fresh_pl : &a.old;
		count_call(fd, res, v->name);
		hit = 0;
		if (window.done) {
			res->moves++;
			hit = plant_touched(&a, pl->watch) || plant_changed(pl, v->plant);
			inotify_rm_watch(a.inotify, pl->watch);
		}
		if (fd >= 0 && target_inherited(fd))
			hit = 1;
		if (hit) {
			res->hits++;
			if (res->hits == 1)
				note(res, "round %lu: the planted directory was taken (call: %s)", r,
				     fd >= 0 ? "fd" : t_errname(-fd));
		}
		if (fd >= 0)
			close(fd);
		if (!v->fresh) {
			plant_home(&a, &a.old, OLD);
			if (plant_changed(&a.old, v->plant)) {	/* make it anew */
				close(a.old.fd);
				a.old.fd = -1;
				rm_at(a.fd, OLD);
				if (make_plant(a.fd, OLD, v->plant, &a.old))
					break;
			}
		} else if (window.fresh_pl.fd >= 0) {
			plant_home(&a, &window.fresh_pl, FRESH);
			close(window.fresh_pl.fd);
		}
		left = sweep(&a, v->fresh ? FRESH : OLD, fd >= 0, fd == -EAGAIN, 0, v->name, res);
		rm_at(a.fd, FRESH);
		res->leftovers += left;
	}
	res->rounds = r;
	res->seconds = now() - start;
	if (!res->moves)
		note(res, "the wrapper never saw a staging directory");
	arena_drop(&a);
	return 0;
}

/* ---- point 2, live ---- */

/*
 * The live attacker: blocked in a read of its inotify descriptor, on the
 * victim's CPU with SCHED_FIFO, so that the event of a new staging
 * directory hands it the CPU as the victim's mkdirat returns. It
 * exchanges the staging name with old-dir, sleeps `dwell` microseconds
 * (the victim runs meanwhile), and swaps back. `busy` is set while a swap
 * is held: the victim looks at the arena only when it is clear.
 */
struct race_sync {
	_Atomic unsigned long moves;
	_Atomic int busy, quit;
};

static void race_attacker(struct arena *a, struct race_sync *rs, int cpu)
{
	struct sched_param fifo = { .sched_priority = 1 };
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	cpu_set_t set;
	ssize_t n, off;
	int in;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* before drop_to(): an unprivileged process may not ask for FIFO */
	if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, SCHED_FIFO, &fifo))
		_exit(3);
	if (drop_to(opt.attacker))
		_exit(2);
	in = inotify_init1(IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, a->path, IN_CREATE) < 0)
		_exit(2);
	while (!atomic_load(&rs->quit)) {
		n = read(in, u.buf, sizeof(u.buf));
		for (off = 0; off < n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(u.buf + off);

			off += (ssize_t)(sizeof(*ev) + ev->len);
			if (!ev->len || strncmp(ev->name, STAGE_PREFIX, strlen(STAGE_PREFIX)))
				continue;
			atomic_store(&rs->busy, 1);
			if (!xchg(a->fd, ev->name, OLD)) {
				usleep((useconds_t)opt.dwell);
				xchg(a->fd, ev->name, OLD);
				atomic_fetch_add(&rs->moves, 1);
			}
			atomic_store(&rs->busy, 0);
		}
	}
	_exit(0);
}

/* Watch old-dir (the inode, wherever it is moved) for anything done in or to it. */
static int watch_old(struct arena *a)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/" OLD, a->path);
	return inotify_add_watch(a->inotify, path, IN_CREATE | IN_ATTRIB | IN_MOVED_TO);
}

static int run_race(const struct variant *v, struct result *res)
{
	struct race_sync *rs;
	struct arena a;
	unsigned long r;
	double start;
	int fd, hit, watch, st, cpu = 0;
	cpu_set_t set;
	pid_t pid;

	if (v->entry == E_CLI && (!opt.cli || access(opt.cli, X_OK)))
		return 77;
	if (arena_make(&a, 0777, 0))
		return -errno;
	set_fs(res, a.fd);
	if (make_plant(a.fd, OLD, v->plant, &a.old)) {
		arena_drop(&a);
		return errno == EOPNOTSUPP ? 77 : -errno;
	}
	watch = watch_old(&a);
	rs = mmap(NULL, sizeof(*rs), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rs == MAP_FAILED) {
		arena_drop(&a);
		return -ENOMEM;
	}
	memset(rs, 0, sizeof(*rs));
	/* victim and attacker on one CPU: the attacker's wakeup preempts */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		race_attacker(&a, rs, cpu);
	usleep(20000);
	start = now();
	for (r = 0; r < opt.rounds; r++) {
		if ((r & 15) == 0 && now() - start > opt.seconds)
			break;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			note(res, "the attacker could not run (exit %d)", WEXITSTATUS(st));
			res->errors++;
			break;
		}
		fd = victim_call(&a, v->entry);
		while (atomic_load(&rs->busy))
			usleep(50);
		count_call(fd, res, v->name);
		hit = plant_touched(&a, watch) || plant_changed(&a.old, v->plant) ||
		      (fd >= 0 && target_inherited(fd));
		if (hit) {
			res->hits++;
			if (res->hits == 1)
				note(res, "round %lu: old-dir taken for staging", r);
		}
		if (fd >= 0)
			close(fd);
		plant_home(&a, &a.old, OLD);
		if (plant_changed(&a.old, v->plant)) {
			inotify_rm_watch(a.inotify, watch);
			close(a.old.fd);
			a.old.fd = -1;
			rm_at(a.fd, OLD);
			if (make_plant(a.fd, OLD, v->plant, &a.old))
				break;
			watch = watch_old(&a);
		}
		res->leftovers += sweep(&a, OLD, fd >= 0, fd == -EAGAIN, 0, v->name, res);
	}
	res->rounds = r;
	res->seconds = now() - start;
	res->moves = atomic_load(&rs->moves);
	atomic_store(&rs->quit, 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap(rs, sizeof(*rs));
	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (!res->moves)
		note(res, "the attacker never exchanged a staging directory");
	arena_drop(&a);
	return 0;
}

/* ---- point 1 ---- */

static void as_victim(int on)
{
	setfsgid(on ? VICTIM_UID : 0);
	setfsuid(on ? VICTIM_UID : 0);
}

static int run_discard(const struct variant *v, struct result *res)
{
	struct ocdir_how how = { .mode = 0700 };
	struct ocdir_prepared *p, *p2;
	unsigned long r;
	struct arena a;
	double start;
	int fd, fd2, f, rd, err, harmed, left, allow;
	struct stat st;

	if (arena_make(&a, 0777, opt.attacker))
		return -errno;
	set_fs(res, a.fd);
	start = now();
	for (r = 0; r < opt.rounds; r++) {
		if ((r & 15) == 0 && now() - start > opt.seconds)
			break;
		as_victim(1);
		fd = ocdir_prepare(a.fd, "dest", &how, sizeof(how), &p);
		if (fd < 0) {
			as_victim(0);
			count_call(-errno, res, v->name);
			continue;
		}
		f = openat(fd, KEEP, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (f >= 0)
			close(f);
		as_victim(0);
		fchmod(a.fd, 0555);		/* the attacker owns the arena */
		as_victim(1);
		errno = 0;
		rd = ocdir_discard(p);
		err = errno;
		as_victim(0);
		fchmod(a.fd, 0777);
		as_victim(1);
		fd2 = ocdir_prepare(a.fd, "dest2", &how, sizeof(how), &p2);
		f = fd2 < 0 ? -1 : openat(fd2, KEEP, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (f >= 0)
			close(f);
		if (rd < 0)		/* "prepared stays valid: call again" */
			ocdir_discard(p);
		harmed = fd2 >= 0 && (fstat(fd2, &st) || st.st_nlink == 0 ||
				      faccessat(fd2, KEEP, F_OK, AT_SYMLINK_NOFOLLOW));
		/* p2 is another call's handle: let go of it only while it is whole */
		if (fd2 >= 0 && !harmed && ocdir_discard(p2) < 0)
			res->errors++;
		as_victim(0);
		if (rd < 0)
			count_call(-err, res, v->name);
		if (fd >= 0)
			close(fd);
		if (fd2 >= 0)
			close(fd2);
		/* after 0 with errno set, the empty staging directory may stay */
		allow = rd == 0 && err != 0;
		left = (int)sweep(&a, NULL, 0, allow, VICTIM_UID, v->name, res);
		if (harmed || (left && rd == 0)) {
			res->hits++;
			if (res->hits == 1)
				note(res, "round %lu: discard said %d (%s); %s", r, rd, t_errname(err),
				     harmed ? "the retry removed another handle's tree" : "left behind");
		} else {
			res->leftovers += (unsigned long)left;
		}
	}
	res->rounds = r;
	res->seconds = now() - start;
	arena_drop(&a);
	return 0;
}

/* ---- point 3 ---- */

struct handoff {
	_Atomic unsigned int go, in, stop, quit;
	char path[400];
};

static void filler(struct handoff *h)
{
	unsigned int seen = 0;
	char name[32];
	int dfd, sub, i, f;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (drop_to(opt.attacker))
		_exit(2);
	for (;;) {
		while (atomic_load(&h->go) == seen && !atomic_load(&h->quit))
			sched_yield();
		if (atomic_load(&h->quit))
			_exit(0);
		seen = atomic_load(&h->go);
		dfd = open(h->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		sub = -1;
		if (dfd >= 0 && mkdirat(dfd, "mine", 0700) == 0)
			sub = openat(dfd, "mine", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		for (i = 0; dfd >= 0 && i < 4; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			f = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			if (f >= 0)
				close(f);
		}
		atomic_store(&h->in, seen);	/* it holds its way in, or could not get one */
		for (i = 0; dfd >= 0 && atomic_load(&h->stop) != seen; i++) {
			snprintf(name, sizeof(name), "g%d", i & 1023);
			f = openat(i & 1 && sub >= 0 ? sub : dfd, name,
				   O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			if (f >= 0)
				close(f);
		}
		if (sub >= 0)
			close(sub);
		if (dfd >= 0)
			close(dfd);
		atomic_store(&h->in, seen + 1000000);
	}
}

static int give_away_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	struct handoff *h = arg;
	unsigned int g = atomic_load(&h->go) + 1;

	(void)path;
	(void)flags;
	if (fchown(fd, opt.attacker, opt.attacker) || fchmod(fd, 0755))
		return -errno;
	atomic_store(&h->go, g);
	while (atomic_load(&h->in) != g && atomic_load(&h->in) != g + 1000000)
		sched_yield();
	return -EDQUOT;
}

static int run_handoff(const struct variant *v, struct result *res)
{
	struct ocdir_how how = { .mode = 0755 };
	struct handoff *h;
	unsigned long r, left;
	struct arena a;
	struct stat st;
	double start;
	int fd, at_name;
	pid_t pid;

	/*
	 * Shared: on a FUSE mount (no birth time proves a staging directory
	 * new there) the weak option sets the directory up at its public
	 * name, as in a private parent.
	 */
	if (v->shared)
		how.options = OCDIR_ALLOW_WEAK_EMULATION;
	if (v->shared ? arena_make_bindfs(&a) : arena_make(&a, 0755, 0))
		return a.mounted < 0 ? 77 : -errno;
	set_fs(res, a.fd);
	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED) {
		arena_drop(&a);
		return -ENOMEM;
	}
	memset(h, 0, sizeof(*h));
	snprintf(h->path, sizeof(h->path), "%s/" TARGET, a.path);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		filler(h);
	start = now();
	for (r = 0; r < opt.rounds; r++) {
		if ((r & 15) == 0 && now() - start > opt.seconds)
			break;
		fd = ocdir_openat2_setup(a.fd, TARGET, &how, sizeof(how), give_away_setup, h, NULL);
		fd = fd < 0 ? -errno : fd;
		atomic_store(&h->stop, atomic_load(&h->go));
		while (atomic_load(&h->in) != atomic_load(&h->go) + 1000000)
			sched_yield();
		if (fd >= 0) {
			res->errors++;
			note(res, "round %lu: a setup that failed gave a descriptor", r);
			close(fd);
		} else if (fd != -EDQUOT) {
			res->errors++;	/* a removal failure, reported */
			if (!opt.quiet && res->errors <= 3)
				printf("# %s: reported %s\n", v->name, t_errname(-fd));
		}
		at_name = fstatat(a.fd, TARGET, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (at_name) {
			res->hits++;
			if (res->hits == 1)
				note(res, "round %lu: the given-away directory stayed at its name (%s)",
				     r, t_errname(-fd));
		}
		left = sweep(&a, TARGET, 0, 0, 0, v->name, res);
		rm_at(a.fd, TARGET);
		/* hidden, and the call said so: the contract for a failed removal */
		if (fd == -EDQUOT)
			res->leftovers += left;
	}
	atomic_store(&h->quit, 1);
	waitpid(pid, NULL, 0);
	res->rounds = r;
	res->seconds = now() - start;
	munmap(h, sizeof(*h));
	arena_drop(&a);
	return 0;
}

/* ---- the table and the driver ---- */

static struct variant variants[64];
static size_t nvariants;

static void add(const char *name, enum family fam, int fresh, enum plant plant,
		enum entry entry, int shared)
{
	struct variant *v = &variants[nvariants++];

	snprintf(v->name, sizeof(v->name), "%s", name);
	v->fam = fam;
	v->fresh = fresh;
	v->plant = plant;
	v->entry = entry;
	v->shared = shared;
}

static void build_table(void)
{
	char name[48];
	int fresh, p, e;

	add("discard-retry", F_DISCARD, 0, 0, 0, 0);
	for (fresh = 0; fresh < 2; fresh++)
		for (p = P_FULL; p <= P_SGID; p++)
			for (e = E_OPENAT2; e <= E_PREPARE; e++) {
				snprintf(name, sizeof(name), "stage-%s-%s-%s", fresh ? "fresh" : "old",
					 plant_names[p], entry_names[e]);
				add(name, F_STAGE, fresh, (enum plant)p, (enum entry)e, 0);
			}
	for (p = P_FULL; p <= P_SGID; p++)
		for (e = E_OPENAT2; e <= E_CLI; e++) {
			snprintf(name, sizeof(name), "race-%s-%s", plant_names[p], entry_names[e]);
			add(name, F_RACE, 0, (enum plant)p, (enum entry)e, 0);
		}
	add("handoff-private", F_HANDOFF, 0, 0, 0, 0);
	add("handoff-shared-weak", F_HANDOFF, 0, 0, 0, 1);
}

static int run_variant(const struct variant *v, struct result *res)
{
	switch (v->fam) {
	case F_DISCARD:
		return run_discard(v, res);
	case F_STAGE:
		return run_stage(v, res);
	case F_RACE:
		return run_race(v, res);
	case F_HANDOFF:
		return run_handoff(v, res);
	}
	return -EINVAL;
}

static int report(const struct variant *v, int rc, struct result *res)
{
	char name[80];

	snprintf(name, sizeof(name), "hostile3 %s (%s)", v->name, res->fs[0] ? res->fs : "?");
	if (rc == 77) {
		t_skip(name, "cannot run here (no ACLs, no ocdir command, or a missing tool)");
		return 0;
	}
	if (rc) {
		t_fail(name, "setup: %s", strerror(rc < 0 ? -rc : rc));
		return 1;
	}
	printf("# RESULT variant=hostile3-%s fs=%s rounds=%lu hits=%lu leftovers=%lu eagain=%lu "
	       "errors=%lu moves=%lu seconds=%.1f\n", v->name, res->fs, res->rounds, res->hits,
	       res->leftovers, res->eagain, res->errors, res->moves, res->seconds);
	if (res->hits || res->leftovers) {
		t_fail(name, "%lu hits, %lu leftovers in %lu rounds%s%s", res->hits, res->leftovers,
		       res->rounds, res->note[0] ? ": " : "", res->note);
		return 1;
	}
	if (!res->rounds || (v->fam == F_STAGE && !res->moves)) {
		t_fail(name, "nothing was attacked: %s", res->note[0] ? res->note : "no rounds");
		return 1;
	}
	t_pass(name);
	return 0;
}

/*
 * -l PREFIX: the names that start with PREFIX, comma-separated (for -v);
 * -l native: those that stage on the native backend too (ocdir_openat2 does
 * not: the kernel makes the directory), and the handle and hand-off ones.
 */
static int list_variants(const char *prefix)
{
	const char *sep = "";
	size_t i;
	int native = !strcmp(prefix, "native");

	for (i = 0; i < nvariants; i++) {
		const struct variant *v = &variants[i];

		if (native ? (v->fam == F_STAGE && v->entry == E_OPENAT2) || v->fam == F_RACE ||
			     (v->fam == F_HANDOFF && v->shared) :
			     strncmp(v->name, prefix, strlen(prefix)))
			continue;
		printf("%s%s", sep, v->name);
		sep = ",";
	}
	putchar('\n');
	return 0;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: hostile3 [-v VARIANT,...] [-n ROUNDS] [-t SECONDS] [-d DIR] "
		"[-u UID] [-w SPINS] [-c OCDIR] [-q]\nvariants:");
	for (i = 0; i < nvariants; i++)
		fprintf(stderr, " %s", variants[i].name);
	fputc('\n', stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static char cli[512];
	struct result res;
	size_t i, len;
	int c, failed = 0, ran = 0;

	build_table();
	while ((c = getopt(argc, argv, "v:n:t:d:u:w:c:ql:")) != -1) {
		switch (c) {
		case 'l': return list_variants(optarg);
		case 'v': opt.list = optarg; break;
		case 'n': opt.rounds = strtoul(optarg, NULL, 0); break;
		case 't': opt.seconds = strtod(optarg, NULL); break;
		case 'd': opt.dir = optarg; break;
		case 'u': opt.attacker = (uid_t)strtoul(optarg, NULL, 0); break;
		case 'w': opt.dwell = strtoul(optarg, NULL, 0); break;
		case 'c': opt.cli = optarg; break;
		case 'q': opt.quiet = 1; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (!opt.cli) {	/* build/ocdir beside build/race/ */
		len = (size_t)readlink("/proc/self/exe", cli, sizeof(cli) - 16);
		if (len < sizeof(cli) - 16) {
			cli[len] = 0;
			if (strrchr(cli, '/'))
				*strrchr(cli, '/') = 0;
			if (strrchr(cli, '/'))
				strcpy(strrchr(cli, '/'), "/ocdir");
			opt.cli = cli;
		}
	}
	if (geteuid()) {
		t_skip("hostile3", "needs root (the victim is root, the attacker uid %u)",
		       (unsigned)opt.attacker);
		return T_EXIT_SKIP;
	}
	umask(022);
	for (i = 0; i < nvariants; i++) {
		if (!wanted_in(opt.list, variants[i].name))
			continue;
		memset(&res, 0, sizeof(res));
		failed |= report(&variants[i], run_variant(&variants[i], &res), &res);
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "hostile3: no such variant: %s\n", opt.list);
		return 2;
	}
	return failed ? T_EXIT_FAIL : T_EXIT_PASS;
}
