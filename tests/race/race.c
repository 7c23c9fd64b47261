/* SPDX-License-Identifier: MIT */
/*
 * tests/race/race.c - race torture: an attacker running as another uid
 * swaps the name a victim is creating, for a bounded number of rounds, and
 * we count how often the victim's changes land somewhere they should not.
 *
 *   race [-a shared|sticky|both] [-v VARIANT,...] [-n ROUNDS] [-t SECONDS]
 *        [-d DIR] [-u ATTACKER_UID] [-m MOVES] [-w SPINS] [-e ESCAPES]
 *        [-j PAIRS] [-x VICTIM_COMMAND] [-q]
 *
 * -j runs PAIRS victim/attacker pairs of each variant at once, each in an
 * arena of its own, and shares the ROUNDS out among them (the result line
 * is their sum): one pair leaves a CPU idle while it waits on the other.
 *
 * The victim runs as root, the most powerful victim: every fchmod, fchown
 * and fsetxattr it makes succeeds, on whatever its descriptor refers to.
 * Each round it creates DIR/.../arena/target and, believing it created it,
 * sets mode 0710, owner 4242:4242 and the xattr user.ocdir.race through
 * what it got. Meanwhile the attacker (uid 65534 by default) works on the
 * arena in a tight loop. Two arenas:
 *
 *   shared  mode 0777, not sticky. The attacker can rename and remove the
 *           victim's entries: it swaps "target" with its own directory,
 *           with its symlink to the bait file, with an old directory of the
 *           victim's (renameat2 RENAME_EXCHANGE, each swap held a moment
 *           and undone before the round's pause),
 *           removes "target" and puts a symlink there, or plants its own
 *           directory at the name. The victim changes only what it
 *           believes it created (mkdir said 0, O_EXCL succeeded, or the
 *           library said created=1).
 *   sticky  mode 1777. The attacker cannot touch the victim's entries but
 *           can plant its directory or a symlink at the name first. The
 *           victim behaves like "mkdir -p; chown": it changes whatever
 *           directory it got, since an existing one is acceptable to it.
 *
 * After each round the attacker is paused (between two of its moves, so
 * every swap is undone) and the bait file (outside the arena) and the
 * attacker's directory are checked, through descriptors held since setup,
 * for the victim's mode, owner or xattr: an "escape". A "wrong report" is
 * created=1 for anything but a new directory owned by the victim (the
 * attacker's directory and the old victim directory are known by inode).
 *
 * Variants: naive (mkdir + open by path + fchmod), mkdirat (mkdirat +
 * openat O_NOFOLLOW|O_DIRECTORY), native (openat O_CREAT|O_DIRECTORY, only
 * where the probe finds it), lib-native, lib-emulated (staging directory),
 * lib-resolver (emulated, RESOLVE_BENEATH through the userspace resolver),
 * lib-native-beneath (native through openat2 RESOLVE_BENEATH), lib-weak
 * (emulated where RENAME_NOREPLACE is refused, with the caller's opt-in
 * OCDIR_ALLOW_WEAK_EMULATION: mkdirat + openat), lib-refuse (the same
 * without the opt-in: EOPNOTSUPP in the shared arena, in place in the
 * sticky one), lib-fast
 * (emulated with OCDIR_FAST_EMULATION: mkdirat + openat where the parent
 * is private or sticky, the staging directory in the shared arena). Each
 * variant runs in its own process, since libocdir reads its environment
 * once.
 *
 * -x CMD puts a victim of another language in the C victim's place (the
 * bindings' race tests, bindings/README.md): variants ext-native and
 * ext-emulated (0 escapes, 0 wrong reports, as lib-*) and ext-naive (a
 * deliberately broken victim: must show escapes). CMD is run by /bin/sh
 * with two arguments, the arena's path and "shared" or "sticky", and the
 * variant's environment. It prints "ready" once; then for each line "r"
 * it reads on stdin it creates ARENA/target as the C victim does (mode
 * 0700, O_NOFOLLOW; in the sticky arena an existing directory is fine),
 * and if it created it (or the arena is sticky) sets mode 0710, owner
 * 4242:4242 and, where the filesystem takes it, the xattr user.ocdir.race
 * through its descriptor, then answers one line, "fd CREATED DEV INO UID
 * ISDIR" from an fstat of that descriptor taken before the changes (it
 * closes the descriptor afterwards) or "err ERRNO". End of input: it
 * exits 0.
 *
 * Result lines (tests/helpers.h protocol): naive PASSes when it shows
 * escapes (the test can see them), every libocdir variant and native PASS
 * with 0 escapes, 0 wrong reports and nothing left in the arena, except
 * lib-weak: its documented guarantee does not cover a swap to another
 * directory owned by the caller, so its wrong reports are shown but only
 * escapes fail. mkdirat is measured only ("# " lines).
 * Every variant also prints
 *   # RESULT arena=A variant=V fs=F rounds=N escapes=E wrong=W leftovers=L seconds=S
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "ocdir.h"
#include "../helpers.h"
#include "race.h"

#define TARGET		"target"
#define ATK_DIR		"atk-dir"
#define ATK_LINK	"atk-link"
#define OLD_DIR		"old-dir"
#define XATTR_NAME	"user.ocdir.race"
#define VICTIM_MODE	0710
#define VICTIM_OWNER	4242

enum arena_kind { ARENA_SHARED, ARENA_STICKY };
enum how_call { CALL_NAIVE, CALL_MKDIRAT, CALL_NATIVE, CALL_LIB, CALL_EXT };
/*
 * EXPECT_NO_ESCAPE: the documented weaker guarantee of the mkdirat+openat
 * emulation (docs/library.md, feature table): a swap to another directory
 * owned by the caller goes undetected, so wrong reports are counted and
 * shown but only escapes fail.
 */
enum expect { EXPECT_ESCAPES, EXPECT_SAFE, EXPECT_NO_ESCAPE, EXPECT_MEASURE };

struct variant {
	const char *name;
	enum how_call call;
	enum expect expect;
	const char *env[3];	/* NAME=VALUE set before the first library call */
	uint64_t resolve;
	uint64_t options;	/* ocdir_how.options */
	int need_native;	/* the kernel (or the library) must be native */
	int may_refuse;		/* EOPNOTSUPP is a right answer (nothing made) */
};

static const struct variant variants[] = {
	{ "naive", CALL_NAIVE, EXPECT_ESCAPES, { NULL }, 0, 0, 0, 0 },
	{ "mkdirat", CALL_MKDIRAT, EXPECT_MEASURE, { NULL }, 0, 0, 0, 0 },
	{ "native", CALL_NATIVE, EXPECT_SAFE, { NULL }, 0, 0, 1, 0 },
	{ "lib-native", CALL_LIB, EXPECT_SAFE, { NULL }, 0, 0, 1, 0 },
	{ "lib-native-beneath", CALL_LIB, EXPECT_SAFE, { NULL },
	  OCDIR_RESOLVE_BENEATH, 0, 1, 0 },
	{ "lib-emulated", CALL_LIB, EXPECT_SAFE,
	  { "OCDIR_FORCE_EMULATION=1", NULL }, 0, 0, 0, 0 },
	{ "lib-resolver", CALL_LIB, EXPECT_SAFE,
	  { "OCDIR_FORCE_EMULATION=1", "OCDIR_FORCE_RESOLVER=1", NULL },
	  OCDIR_RESOLVE_BENEATH, 0, 0, 0 },
	{ "lib-weak", CALL_LIB, EXPECT_NO_ESCAPE,
	  { "OCDIR_FORCE_EMULATION=1", "OCDIR_TEST_NO_NOREPLACE=1", NULL }, 0,
	  OCDIR_ALLOW_WEAK_EMULATION, 0, 0 },
	{ "lib-refuse", CALL_LIB, EXPECT_SAFE,
	  { "OCDIR_FORCE_EMULATION=1", "OCDIR_TEST_NO_NOREPLACE=1", NULL }, 0, 0, 0, 1 },
	{ "lib-fast", CALL_LIB, EXPECT_SAFE,
	  { "OCDIR_FORCE_EMULATION=1", NULL }, 0, OCDIR_FAST_EMULATION, 0, 0 },
	/* -x CMD: the victim is another program (a binding's race victim) */
	{ "ext-native", CALL_EXT, EXPECT_SAFE, { NULL }, 0, 0, 1, 0 },
	{ "ext-emulated", CALL_EXT, EXPECT_SAFE,
	  { "OCDIR_FORCE_EMULATION=1", NULL }, 0, 0, 0, 0 },
	{ "ext-naive", CALL_EXT, EXPECT_ESCAPES, { NULL }, 0, 0, 0, 0 },
};
#define N_VARIANTS (sizeof(variants) / sizeof(variants[0]))

struct arena {
	enum arena_kind kind;
	char base[1024];
	char arena[1040];
	char bait[1040];
	char target[1060];		/* absolute, for the naive victim */
	int basefd, arenafd;
	int baitfd, atkfd, oldfd;	/* held: identity survives renames */
	struct stat bait_st, atk_st, old_st;
	int xattrs;			/* user.* xattrs work on this fs */
	char fsname[16];
};

struct result {
	unsigned long rounds, escapes, wrong, leftovers, errors, moves, created;
	int broken;			/* the arena could not be reset */
	double seconds;
	char note[160];
};

static struct {
	enum arena_kind kinds[2];
	int nkinds;
	const char *only;
	unsigned long rounds;
	double seconds;
	const char *dir;
	uid_t attacker;
	unsigned long burst;		/* attacker moves per round at most */
	unsigned long dwell;		/* spins a swapped state is kept */
	unsigned long enough;		/* naive: stop after this many escapes */
	int quiet;
	unsigned int jobs;		/* victim/attacker pairs per variant */
	const char *ext;		/* -x: the command of an external victim */
} opt = { .jobs = 1, .rounds = 5000, .seconds = 20, .attacker = 65534, .burst = 200,
	  .dwell = 20000 };

/*
 * Be at the victim's name first: move the attacker's entry `name` to it,
 * hold it there a moment, move it back. 0 if the name was taken already.
 */
static int plant(int d, const char *name, struct shared *sh, unsigned int g)
{
	if (renameat2(d, name, d, TARGET, RENAME_NOREPLACE))
		return 0;
	dwell(sh, g, opt.dwell);
	renameat2(d, TARGET, d, name, RENAME_NOREPLACE);
	return 1;
}

/*
 * One attacker move. Each move either fails at its first step or undoes
 * itself before the pause is acknowledged, so that at a pause every
 * attacker object is back at its own name.
 */
static int attack_move(void *arena, struct shared *sh, unsigned int g)
{
	const struct arena *a = arena;
	unsigned int i = g / 2;
	int d = a->arenafd;
	struct stat st;

	if (a->kind == ARENA_SHARED) {
		/*
		 * No look before moving here: a rename that waits on the
		 * arena's lock while the victim creates runs the moment the
		 * victim lets go, which is what hits the mkdir-to-open window
		 * (measured: looking first with fstatat cut the naive
		 * victim's escapes tenfold).
		 */
		switch (i % 5) {
		case 0:	/* the victim opens the attacker's directory */
			if (xchg(d, TARGET, ATK_DIR))
				return 0;
			dwell(sh, g, opt.dwell);
			xchg(d, TARGET, ATK_DIR);
			return 1;
		case 1:	/* ... or a symlink to the bait */
			if (xchg(d, TARGET, ATK_LINK))
				return 0;
			dwell(sh, g, opt.dwell);
			xchg(d, TARGET, ATK_LINK);
			return 1;
		case 2:	/* ... or an old directory of its own */
			if (xchg(d, TARGET, OLD_DIR))
				return 0;
			dwell(sh, g, opt.dwell);
			xchg(d, TARGET, OLD_DIR);
			return 1;
		case 3:	/* remove the new directory, leave a symlink */
			if (unlinkat(d, TARGET, AT_REMOVEDIR))
				return 0;
			if (symlinkat(a->bait, d, TARGET) == 0) {
				dwell(sh, g, opt.dwell);
				unlinkat(d, TARGET, 0);
			}
			return 1;
		default: /* be there first */
			return plant(d, ATK_DIR, sh, g);
		}
	}
	/*
	 * Sticky: all the attacker can do is be first. Once the victim's
	 * directory is there every move fails; look (lock-free) instead of
	 * failing under the arena's lock (measured under TCG: the naive
	 * victim's escapes went from 3 % to 22 % of the rounds).
	 */
	if (fstatat(d, TARGET, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	switch (i % 3) {
	case 0:
		return plant(d, ATK_DIR, sh, g);
	case 1:
		return plant(d, ATK_LINK, sh, g);
	default:
		if (symlinkat(a->bait, d, TARGET))
			return 0;
		dwell(sh, g, opt.dwell);
		unlinkat(d, TARGET, 0);
		return 1;
	}
}

static void attacker(struct arena *a, struct shared *sh)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (drop_to(opt.attacker))
		_exit(2);
	/* Every move undoes itself: nothing to settle at a pause. */
	attacker_loop(sh, opt.burst, attack_move, NULL, a);
	_exit(0);
}

static int setup(struct arena *a, enum arena_kind kind)
{
	char buf[16];
	int fd;

	memset(a, 0, sizeof(*a));
	a->kind = kind;
	snprintf(a->base, sizeof(a->base), "%s/ocdir-race.XXXXXX", opt.dir);
	if (!mkdtemp(a->base) || chmod(a->base, 0755))
		return -errno;
	snprintf(a->arena, sizeof(a->arena), "%s/arena", a->base);
	snprintf(a->bait, sizeof(a->bait), "%s/bait", a->base);
	snprintf(a->target, sizeof(a->target), "%s/" TARGET, a->arena);
	if (mkdir(a->arena, 0700) || chmod(a->arena, kind == ARENA_STICKY ? 01777 : 0777))
		return -errno;
	fd = open(a->bait, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0 || write(fd, "secret\n", 7) != 7 || close(fd))
		return -errno;
	a->basefd = open(a->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a->arenafd = open(a->arena, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->basefd < 0 || a->arenafd < 0)
		return -errno;
	/* The attacker's objects, as if it had made them itself. */
	if (mkdirat(a->arenafd, ATK_DIR, 0755) ||
	    fchownat(a->arenafd, ATK_DIR, opt.attacker, opt.attacker, 0) ||
	    symlinkat(a->bait, a->arenafd, ATK_LINK) ||
	    fchownat(a->arenafd, ATK_LINK, opt.attacker, opt.attacker, AT_SYMLINK_NOFOLLOW) ||
	    mkdirat(a->arenafd, OLD_DIR, 0700))
		return -errno;
	a->baitfd = open(a->bait, O_RDONLY | O_CLOEXEC);
	a->atkfd = openat(a->arenafd, ATK_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a->oldfd = openat(a->arenafd, OLD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->baitfd < 0 || a->atkfd < 0 || a->oldfd < 0 ||
	    fstat(a->baitfd, &a->bait_st) || fstat(a->atkfd, &a->atk_st) ||
	    fstat(a->oldfd, &a->old_st))
		return -errno;
	a->xattrs = fsetxattr(a->oldfd, "user.ocdir.probe", "1", 1, 0) == 0;
	if (a->xattrs)
		fremovexattr(a->oldfd, "user.ocdir.probe");
	snprintf(a->fsname, sizeof(a->fsname), "%s", fs_name(a->arenafd, buf, sizeof(buf)));
	return 0;
}

static void teardown(struct arena *a)
{
	close(a->baitfd);
	close(a->atkfd);
	close(a->oldfd);
	close(a->arenafd);
	close(a->basefd);
	rm_tree(a->base);
}

/* Did the victim's change land on this object? Put it back if so. */
static int tampered(const struct arena *a, int fd, const struct stat *orig)
{
	struct stat st;
	int bad = 0;

	if (fstat(fd, &st))
		return 1;
	if ((st.st_mode & 07777) != (orig->st_mode & 07777) ||
	    st.st_uid != orig->st_uid || st.st_gid != orig->st_gid)
		bad = 1;
	if (a->xattrs && fgetxattr(fd, XATTR_NAME, NULL, 0) >= 0) {
		bad = 1;
		fremovexattr(fd, XATTR_NAME);
	}
	if (bad) {
		(void)!fchown(fd, orig->st_uid, orig->st_gid);
		fchmod(fd, orig->st_mode & 07777);
	}
	return bad;
}

static int victim_call(const struct variant *v, const struct arena *a, int *created)
{
	int ensure = a->kind == ARENA_STICKY;	/* an existing directory is fine */
	struct ocdir_how how;
	int fd, r;

	*created = 0;
	switch (v->call) {
	case CALL_NAIVE:
		r = mkdir(a->target, 0700);
		if (r && !(ensure && errno == EEXIST))
			return -errno;
		*created = r == 0;
		fd = open(a->target, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	case CALL_MKDIRAT:
		r = mkdirat(a->arenafd, TARGET, 0700);
		if (r && !(ensure && errno == EEXIST))
			return -errno;
		*created = r == 0;
		fd = openat(a->arenafd, TARGET,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	case CALL_NATIVE:
		/* O_EXCL is how a raw caller knows it created the directory. */
		fd = openat(a->arenafd, TARGET, O_CREAT | O_DIRECTORY | O_NOFOLLOW |
			    O_CLOEXEC | (ensure ? 0 : O_EXCL), 0700);
		if (fd < 0)
			return -errno;
		*created = ensure ? -1 : 1;
		return fd;
	case CALL_LIB:
		how = (struct ocdir_how){ .flags = O_NOFOLLOW, .mode = 0700,
					  .resolve = v->resolve, .options = v->options };
		fd = ocdir_openat2(a->arenafd, TARGET, &how, sizeof(how), created);
		return fd < 0 ? -errno : fd;
	case CALL_EXT:	/* run_variant asks the external victim */
		break;
	}
	return -EINVAL;
}

/* What a created=1 must mean: a new directory of the victim's. */
static int is_new_own_dir(const struct arena *a, int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return 0;
	if (st.st_dev != a->old_st.st_dev)
		return 0;
	return st.st_ino != a->old_st.st_ino && st.st_ino != a->atk_st.st_ino;
}

/* Back to the state of setup: nothing at "target", nothing else new. */
static int cleanup_round(const struct arena *a, int scan, struct result *res)
{
	char path[1400];
	struct dirent *de;
	struct stat st;
	DIR *dir;

	/*
	 * A victim that chowned the attacker's directory (an escape) took it
	 * away from the attacker, which then cannot move it back out of a
	 * sticky arena; do it for the attacker.
	 */
	if (fstatat(a->arenafd, TARGET, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_ino == a->atk_st.st_ino && st.st_dev == a->atk_st.st_dev)
		renameat2(a->arenafd, TARGET, a->arenafd, ATK_DIR, RENAME_NOREPLACE);
	if (fstatat(a->arenafd, TARGET, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode) || st.st_ino == a->atk_st.st_ino ||
		    st.st_ino == a->old_st.st_ino) {
			snprintf(res->note, sizeof(res->note),
				 "attacker object left at the target name (test bug)");
			return -1;
		}
		if (unlinkat(a->arenafd, TARGET, AT_REMOVEDIR)) {
			snprintf(res->note, sizeof(res->note),
				 "cannot remove the victim's directory: %s", strerror(errno));
			return -1;
		}
	}
	if (!scan)
		return 0;
	dir = opendir_fd(a->arenafd);
	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ATK_DIR) || !strcmp(de->d_name, ATK_LINK) ||
		    !strcmp(de->d_name, OLD_DIR))
			continue;
		res->leftovers++;
		if (!opt.quiet)
			printf("# leftover in the arena: %s\n", de->d_name);
		snprintf(path, sizeof(path), "%s/%s", a->arena, de->d_name);
		rm_tree(path);
	}
	closedir(dir);
	return 0;
}

/* The external victim of -x (one per variant process). */
static struct {
	pid_t pid;
	FILE *to, *from;
} ext = { .pid = -1 };

static int ext_start(const struct arena *a, struct result *res)
{
	int in[2], out[2];
	char cmd[4200], line[64];

	snprintf(cmd, sizeof(cmd), "exec %s \"$@\"", opt.ext);
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	fflush(stdout);
	ext.pid = fork();
	if (ext.pid < 0)
		return -1;
	if (ext.pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, "race-victim", a->arena,
		      a->kind == ARENA_STICKY ? "sticky" : "shared", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	ext.to = fdopen(in[1], "w");
	ext.from = fdopen(out[0], "r");
	if (!ext.to || !ext.from)
		return -1;
	if (!fgets(line, sizeof(line), ext.from) || strcmp(line, "ready\n")) {
		snprintf(res->note, sizeof(res->note), "the victim (-x %s) did not start", opt.ext);
		return -1;
	}
	return 0;
}

static void ext_stop(void)
{
	if (ext.to)
		fclose(ext.to);
	if (ext.from)
		fclose(ext.from);
	if (ext.pid > 0)
		waitpid(ext.pid, NULL, 0);
}

/*
 * One call of the external victim: 0 and what its descriptor showed, a
 * negative errno it answered, or 1 if the protocol broke.
 */
static int ext_call(int *created, struct stat *st)
{
	unsigned long long dev, ino;
	unsigned int uid;
	char line[256];
	int isdir, err;

	*created = 0;
	memset(st, 0, sizeof(*st));
	if (fputs("r\n", ext.to) == EOF || fflush(ext.to) || !fgets(line, sizeof(line), ext.from))
		return 1;
	if (sscanf(line, "err %d", &err) == 1 && err > 0)
		return -err;
	if (sscanf(line, "fd %d %llu %llu %u %d", created, &dev, &ino, &uid, &isdir) != 5)
		return 1;
	st->st_dev = (dev_t)dev;
	st->st_ino = (ino_t)ino;
	st->st_uid = (uid_t)uid;
	st->st_mode = isdir ? S_IFDIR : S_IFREG;
	return 0;
}

/* is_new_own_dir() for what an external victim's descriptor showed. */
static int is_new_own_st(const struct arena *a, const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) || st->st_uid != 0 || st->st_dev != a->old_st.st_dev)
		return 0;
	return st->st_ino != a->old_st.st_ino && st->st_ino != a->atk_st.st_ino;
}

/* The errors a victim may get under attack without anything being wrong. */
static int expected_error(const struct variant *v, int err)
{
	return err == EEXIST || err == ENOENT || err == ENOTDIR || err == EACCES ||
	       err == ELOOP || err == EAGAIN || (err == EOPNOTSUPP && v->may_refuse);
}

static void run_variant(const struct variant *v, struct arena *a, struct shared *sh,
			struct result *res)
{
	unsigned long r;
	double start = now();
	int fd, created, wrong;

	for (r = 0; r < opt.rounds; r++) {
		if ((r & 63) == 0 && now() - start > opt.seconds)
			break;
		if (opt.enough && v->expect == EXPECT_ESCAPES && res->escapes >= opt.enough)
			break;
		/* The attacker is in its loop when the victim starts, as it
		 * would be in real life; no delay is added to the victim. */
		round_run(sh, (unsigned int)r);
		wrong = 0;
		if (v->call == CALL_EXT) {
			struct stat st;

			fd = ext_call(&created, &st);
			if (fd > 0) {
				snprintf(res->note, sizeof(res->note),
					 "the victim (-x %s) stopped answering", opt.ext);
				round_pause(sh, (unsigned int)r);
				res->broken = 1;
				r++;
				break;
			}
			if (fd == 0 && created == 1) {
				res->created++;
				wrong = !is_new_own_st(a, &st);
			}
			fd = fd == 0 ? INT_MAX : fd;	/* the victim closed it */
		} else {
			fd = victim_call(v, a, &created);
		}
		if (fd == INT_MAX) {
			/* the external victim made its changes itself */
		} else if (fd >= 0) {
			if (created == 1) {
				res->created++;
				wrong = !is_new_own_dir(a, fd);
			}
			if (created == 1 || (a->kind == ARENA_STICKY)) {
				fchmod(fd, VICTIM_MODE);
				(void)!fchown(fd, VICTIM_OWNER, VICTIM_OWNER);
				if (a->xattrs)
					fsetxattr(fd, XATTR_NAME, "victim", 6, 0);
			}
			close(fd);
		} else if (!expected_error(v, -fd)) {
			res->errors++;
			if (res->errors < 4 && !opt.quiet)
				printf("# %s: unexpected %s\n", v->name, t_errname(-fd));
		}
		round_pause(sh, (unsigned int)r);
		res->wrong += wrong;
		if (tampered(a, a->baitfd, &a->bait_st) |
		    tampered(a, a->atkfd, &a->atk_st))
			res->escapes++;
		/*
		 * A change that landed on the old directory is a wrong report
		 * (counted above); undo it, or its new owner 4242 would make
		 * every later swap to it fail the emulation's owner check.
		 */
		tampered(a, a->oldfd, &a->old_st);
		if (cleanup_round(a, (r & 1023) == 1023, res)) {
			res->broken = 1;
			r++;
			break;
		}
	}
	if (!res->broken && cleanup_round(a, 1, res))
		res->broken = 1;
	res->rounds = r;
	res->moves = atomic_load(&sh->moves);
	res->seconds = now() - start;
}

static int native_available(const struct arena *a)
{
	int fd = openat(a->arenafd, ".", O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* In a child of its own: set the variant's environment, fork the attacker. */
static int variant_child(const struct variant *v, enum arena_kind kind, struct result *res)
{
	struct shared *sh;
	struct arena a;
	const char *reason = NULL;
	pid_t pid;
	int i, r;

	for (i = 0; v->env[i]; i++)
		putenv((char *)v->env[i]);
	r = setup(&a, kind);
	if (r) {
		snprintf(res->note, sizeof(res->note), "setup in %s: %s", opt.dir, strerror(-r));
		return 2;
	}
	if (v->need_native && v->call == CALL_NATIVE && !native_available(&a)) {
		snprintf(res->note, sizeof(res->note), "not run: kernel lacks the feature");
		teardown(&a);
		return 77;
	}
	if (v->need_native && v->call == CALL_LIB &&
	    ocdir_backend(&reason) != OCDIR_BACKEND_NATIVE) {
		snprintf(res->note, sizeof(res->note),
			 "not run: kernel lacks the feature (%s)", reason);
		teardown(&a);
		return 77;
	}
	if ((v->call == CALL_LIB || v->call == CALL_EXT) && v->need_native &&
	    ocdir_backend(&reason) != OCDIR_BACKEND_NATIVE) {
		snprintf(res->note, sizeof(res->note),
			 "not run: kernel lacks the feature (%s)", reason);
		teardown(&a);
		return 77;
	}
	if ((v->call == CALL_LIB || (v->call == CALL_EXT && v->env[0])) && !v->need_native &&
	    ocdir_backend(&reason) != OCDIR_BACKEND_EMULATED) {
		snprintf(res->note, sizeof(res->note), "backend is not emulated: %s", reason);
		teardown(&a);
		return 2;
	}
	sh = shared_map();
	if (!sh)
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		attacker(&a, sh);
	wait_until_eq(&sh->ack, 1);	/* it runs, and as its own uid */
	if (v->call == CALL_EXT && ext_start(&a, res)) {
		if (!res->note[0])
			snprintf(res->note, sizeof(res->note), "cannot start -x %s: %s",
				 opt.ext, strerror(errno));
		stop_attacker(sh, pid);
		ext_stop();
		teardown(&a);
		return 2;
	}
	run_variant(v, &a, sh, res);
	if (v->call == CALL_EXT)
		ext_stop();
	snprintf(res->note + strlen(res->note), sizeof(res->note) - strlen(res->note),
		 "%sfs=%s%s", res->note[0] ? "; " : "", a.fsname,
		 a.xattrs ? "" : " (no user xattrs: mode/owner only)");
	stop_attacker(sh, pid);
	teardown(&a);
	return 0;
}

static void report(const struct variant *v, enum arena_kind kind, int status,
		   const struct result *res)
{
	const char *an = kind == ARENA_SHARED ? "shared" : "sticky";
	char name[96];

	snprintf(name, sizeof(name), "race %s %s", an, v->name);
	if (status == 77) {
		t_skip(name, "%s", res->note);
		return;
	}
	if (status != 0) {
		t_fail(name, "could not run: %s (status %d)", res->note, status);
		return;
	}
	printf("# RESULT arena=%s variant=%s rounds=%lu escapes=%lu wrong=%lu leftovers=%lu "
	       "errors=%lu created=%lu moves=%lu seconds=%.1f %s\n",
	       an, v->name, res->rounds, res->escapes, res->wrong, res->leftovers,
	       res->errors, res->created, res->moves, res->seconds, res->note);
	if (res->broken) {
		t_fail(name, "after %lu rounds: %s", res->rounds, res->note);
		return;
	}
	switch (v->expect) {
	case EXPECT_ESCAPES:
		T_CHECK(name, res->escapes > 0,
			"no escape seen in %lu rounds: the test could not detect one", res->rounds);
		break;
	case EXPECT_SAFE:
		T_CHECK(name, !res->escapes && !res->wrong && !res->leftovers && !res->errors,
			"%lu rounds: %lu escapes, %lu wrong reports, %lu leftovers, %lu unexpected errors",
			res->rounds, res->escapes, res->wrong, res->leftovers, res->errors);
		break;
	case EXPECT_NO_ESCAPE:
		T_CHECK(name, !res->escapes && !res->leftovers && !res->errors,
			"%lu rounds: %lu escapes, %lu leftovers, %lu unexpected errors",
			res->rounds, res->escapes, res->leftovers, res->errors);
		if (res->wrong)
			printf("# %s: %lu wrong created reports: the documented limit of the "
			       "mkdirat+openat emulation (a directory of the caller's swapped in)\n",
			       name, res->wrong);
		break;
	case EXPECT_MEASURE:
		break;
	}
}

/* Add the results of pairs 1..n-1 into res[0]: time is the longest. */
static void merge(struct result *res, unsigned int n)
{
	unsigned int j;

	for (j = 1; j < n; j++) {
		res->rounds += res[j].rounds;
		res->escapes += res[j].escapes;
		res->wrong += res[j].wrong;
		res->leftovers += res[j].leftovers;
		res->errors += res[j].errors;
		res->moves += res[j].moves;
		res->created += res[j].created;
		res->broken |= res[j].broken;
		if (res[j].seconds > res->seconds)
			res->seconds = res[j].seconds;
		if (res[j].broken || !res->note[0])
			memcpy(res->note, res[j].note, sizeof(res->note));
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: race [-a shared|sticky|both] [-v VARIANT,...] [-n ROUNDS] "
		"[-t SECONDS] [-d DIR] [-u ATTACKER_UID] [-m MOVES] [-w SPINS] [-e ESCAPES] [-j PAIRS] "
		"[-x VICTIM_COMMAND] [-q]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct result *res;
	const char *arenas = "both";
	unsigned int k, i, j;
	int c, status, worst;
	pid_t pid;

	while ((c = getopt(argc, argv, "a:v:n:t:d:u:m:w:e:j:x:q")) != -1) {
		switch (c) {
		case 'a': arenas = optarg; break;
		case 'v': opt.only = optarg; break;
		case 'n': opt.rounds = strtoul(optarg, NULL, 0); break;
		case 't': opt.seconds = strtod(optarg, NULL); break;
		case 'd': opt.dir = optarg; break;
		case 'u': opt.attacker = (uid_t)strtoul(optarg, NULL, 0); break;
		case 'q': opt.quiet = 1; break;
		case 'm': opt.burst = strtoul(optarg, NULL, 0); break;
		case 'e': opt.enough = strtoul(optarg, NULL, 0); break;
		case 'w': opt.dwell = strtoul(optarg, NULL, 0); break;
		case 'j': opt.jobs = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'x': opt.ext = optarg; break;
		default: usage();
		}
	}
	if (!opt.dir)
		opt.dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (!strcmp(arenas, "shared") || !strcmp(arenas, "both"))
		opt.kinds[opt.nkinds++] = ARENA_SHARED;
	if (!strcmp(arenas, "sticky") || !strcmp(arenas, "both"))
		opt.kinds[opt.nkinds++] = ARENA_STICKY;
	if (!opt.nkinds)
		usage();
	if (geteuid() != 0) {
		t_skip("race", "needs root (the victim is root, the attacker another uid)");
		return t_exit_status();
	}
	if (opt.jobs < 1 || opt.jobs > 64)
		usage();
	/* The rounds are shared out among the pairs; each has its own arena. */
	opt.rounds = (opt.rounds + opt.jobs - 1) / opt.jobs;
	if (opt.enough)
		opt.enough = (opt.enough + opt.jobs - 1) / opt.jobs;
	res = mmap(NULL, opt.jobs * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	for (k = 0; k < (unsigned int)opt.nkinds; k++) {
		for (i = 0; i < N_VARIANTS; i++) {
			if (!wanted_in(opt.only, variants[i].name))
				continue;
			/* the ext-* variants need -x; without it only a named one says so */
			if (variants[i].call == CALL_EXT && !opt.ext) {
				if (opt.only)
					t_skip(variants[i].name, "needs -x VICTIM_COMMAND");
				continue;
			}
			memset(res, 0, opt.jobs * sizeof(*res));
			fflush(stdout);
			for (j = 0; j < opt.jobs; j++) {
				pid = fork();
				if (pid < 0)
					return 1;
				if (pid == 0)
					_exit(variant_child(&variants[i], opt.kinds[k], &res[j]));
			}
			worst = 0;
			for (j = 0; j < opt.jobs; j++) {
				if (wait(&status) < 0)
					return 1;
				status = WIFEXITED(status) ? WEXITSTATUS(status) :
							     128 + WTERMSIG(status);
				/* a failure beats a skip beats success */
				if (status != 0 && (worst == 0 || worst == 77))
					worst = status;
			}
			merge(res, opt.jobs);
			report(&variants[i], opt.kinds[k], worst, res);
		}
	}
	printf("%u passed, %u failed, %u skipped\n", t_counts.passed, t_counts.failed,
	       t_counts.skipped);
	return t_exit_status();
}
