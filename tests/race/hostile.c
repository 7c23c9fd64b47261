/* SPDX-License-Identifier: MIT */
/*
 * tests/race/hostile.c - regression attackers for issue 14: a hostile local
 * user against libocdir's emulation, one attacker per finding. Written from
 * the outside (the header and the issue), not from the library's code.
 *
 *   hostile [-v ATTACKER,...] [-n ROUNDS] [-t SECONDS] [-d DIR]
 *           [-u ATTACKER_UID] [-m MOVES] [-w SPINS] [-q]
 *
 * Every attacker counts HITS (not crashes) and prints one line
 *   # RESULT arena=A variant=hostile-NAME fs=F rounds=N hits=H escapes=C
 *     wrong=W removed=R stranded=S probes=P leftovers=L refused=F errors=E
 *     seconds=T
 * (the fields tests/race/torture tabulates), then PASS when hits, leftovers
 * and unexpected errors are all 0, else FAIL; SKIP when it cannot run here.
 * The victim is root (umask 0); the attacker is uid 65534 (-u).
 *
 *  chmod-xchg       finding 1. Shared 0777 arena, OCDIR_TEST_NO_NOREPLACE=1
 *                   (the no-RENAME_NOREPLACE fallback) and
 *                   OCDIR_ALLOW_WEAK_EMULATION when the library knows it;
 *                   the victim asks for mode 0333 (owner cannot read). The
 *                   attacker exchanges the new name with its symlink to a
 *                   root-owned 0600 bait file outside the arena. Hit: the
 *                   bait's mode or owner changed ("escapes").
 *  chmod-xchg-strict  the same without the opt-in bit: the new library must
 *                   refuse (EOPNOTSUPP, counted as "refused"), never hit.
 *  chmod-bindfs     the same on a real bindfs mount (no RENAME_NOREPLACE, no
 *                   RENAME_EXCHANGE there: the attacker renames the new
 *                   directory aside and puts its symlink at the name), no
 *                   test switch.
 *  setgid-toggle    finding 2. The arena belongs to the attacker (02777);
 *                   it toggles the arena's S_ISGID and exchanges the name
 *                   with an old root-owned directory (even rounds, victim
 *                   mode 0700) or with its symlink to the bait (odd rounds,
 *                   mode 0333). The victim makes O_EXCL creates, default
 *                   emulation. Hits: created=1 for anything but a new
 *                   directory ("wrong"), the bait or the old directory
 *                   changed ("escapes").
 *  stage-xchg       finding 8. The attacker watches the shared arena with
 *                   inotify and exchanges each ".ocdir-stage.*" directory
 *                   with an old root-owned directory (mode 0751), holds it,
 *                   swaps back. Hits: the old directory's mode/owner changed
 *                   ("escapes") or created=1 for it ("wrong"). Shown, not
 *                   hits (the attacker can do both itself in this arena):
 *                   it was removed ("removed") or is not back at its name
 *                   after the round ("stranded"). Leftovers are allowed
 *                   only for calls that lost a race (EAGAIN, removed).
 *  probe-move       stage-xchg, and each ".ocdir-mode.*" directory (the look
 *                   at the bits a server adds, made when the name shows
 *                   a directory with group or other bits, as the old one
 *                   exchanged in does) is renamed to "atk-probe.N" in the
 *                   arena. Hit: such a directory of the victim's left in
 *                   the arena after the call ("probes"): the library
 *                   knows the inode and the parent it is in.
 *  probe-move-fuse  probe-move's renames on a bindfs mount that shows every
 *                   directory with group and other read and search bits
 *                   (--perms=g+rX,o+rX): each call makes the look, finds
 *                   no birth time to prove it new and refuses (EOPNOTSUPP,
 *                   "refused"). Hit: a look left in the arena ("probes").
 *  probe-xchg       stage-xchg, and each ".ocdir-mode.*" directory is
 *                   exchanged with a second old root-owned directory
 *                   "old-dir2" (mode 0751) while the victim looks at it:
 *                   the look must not take the old directory's group and
 *                   other bits for the server's. Hits: the old directory
 *                   changed ("escapes") or created=1 for it ("wrong"), and
 *                   as in probe-move.
 *  owner-mismatch   finding 3. bindfs --force-user=4321 over a directory:
 *                   everything, the staging directory included, shows
 *                   another owner than the root victim. Hit: EAGAIN or any
 *                   error but the documented EOPNOTSUPP refusal; leftovers:
 *                   ".ocdir-stage.*" after the call.
 *  owner-mismatch-weak     the same with OCDIR_ALLOW_WEAK_EMULATION: must
 *                   succeed every time.
 *  owner-mismatch-private  bindfs --force-user=0 over a sticky 1777
 *                   directory, victim uid 1000 (a private parent: the
 *                   in-place path): must succeed every time.
 *  deep-symlink     finding 5. A 40-link chain ending at a directory, and
 *                   one ending at a missing name (EEXIST), opened from a
 *                   thread with a 64 KiB stack; and the fewest free
 *                   descriptors the call needs (RLIMIT_NOFILE). Hits: a
 *                   crash, a wrong result, more than 3 descriptors besides
 *                   the returned one.
 *  setuid-switch    finding 4. A setuid-root copy of this program run by the
 *                   attacker uid with OCDIR_FORCE_EMULATION=1,
 *                   OCDIR_TEST_NO_NOREPLACE=1 and OCDIR_FORCE_RESOLVER=1.
 *                   Hit per switch honoured: the backend's reason names the
 *                   forcing; a create in a shared directory goes in place
 *                   (or is refused with EOPNOTSUPP); a RESOLVE_BENEATH call
 *                   makes no openat2 (counted with a seccomp trap).
 *  setcap-switch    the same with a file capability instead of setuid.
 *  discard-dest     finding 7. After ocdir_prepare() the attacker renames
 *                   the staging directory onto the destination name; publish
 *                   fails, then ocdir_discard(). Hit: discard says 0 with
 *                   errno 0 while something is left in the arena, or
 *                   anything beyond the one empty staging directory a 0
 *                   with errno set may name (issue 39).
 *  discard-deep     finding 7. A 1100-level prepared tree discarded under
 *                   RLIMIT_NOFILE 1024. Hit: anything left behind.
 *  landlock-refer   finding 6. Landlock grants MAKE_DIR but not REFER. Hits:
 *                   a create in a private parent fails; one in a shared
 *                   parent gives anything but EOPNOTSUPP (success with the
 *                   opt-in bit); a staging directory is left.
 *
 * Issue 26 (the setup path, removals, ENOENT, --apply-existing):
 *  setup-xchg       point 1. Shared 0777 arena with another user's tree
 *                   (uid 1000, a file in it) at "old-dir". The attacker
 *                   toggles a dangling symlink at the name and exchanges
 *                   the name with that tree whenever a directory is
 *                   there; the victim calls ocdir_openat2_setup() (no
 *                   O_EXCL) with a setup that puts a file in the new
 *                   directory and fails (EDQUOT). Hits: the other tree
 *                   changed, emptied or removed ("escapes"), the new
 *                   directory visible at the name (or at the tree's) while
 *                   setup runs ("wrong"), ENOENT ("enoent"); anything left
 *                   at the name after the call is a leftover.
 *  setup-xchg-mkpath  the same through ocdir_mkpath_setup().
 *  setup-xchg-native  setup-xchg with the native backend (the patched
 *                   guest; SKIP where the kernel has no O_CREAT|O_DIRECTORY).
 *  setup-emfile     point 2. Private parent, 1 to 4 free descriptors
 *                   (RLIMIT_NOFILE); a setup that fails (it needs a
 *                   descriptor, or says EDQUOT). Hit: anything left in the
 *                   parent.
 *  enoent-symlink   point 3. Shared 0777 arena; the attacker toggles a
 *                   symlink to an existing directory at the name; the
 *                   victim calls ocdir_openat2(). Hit: ENOENT (every
 *                   component but the toggled last one exists), created=1
 *                   for anything but a new directory.
 *  enoent-symlink-sticky  the same in a sticky 01777 arena that belongs to
 *                   the attacker (so that fs.protected_symlinks lets root
 *                   follow the attacker's link).
 *  enoent-stage-rmdir  point 3. The attacker watches the shared arena with
 *                   inotify and removes each (empty) ".ocdir-stage.*". Hit:
 *                   ENOENT. A staging directory left by a call that said
 *                   EAGAIN is excused (the one accepted leftover).
 *  apply-existing   point 5. The attacker plants a symlink at the name to a
 *                   root-owned 0700 directory outside the arena; root runs
 *                   `ocdir --apply-existing -m 777 -o ATTACKER [-p] NAME`
 *                   (the command next to this program, or
 *                   OCDIR_HOSTILE_CLI). Hit: the directory's mode or owner
 *                   changed.
 *
 * Measured hit counts, old library (2f737e3, before the fixes) and new one,
 * are in tests/race/README.md and docs/security.md ("Hostile-user attackers
 * (issue 14)"). Build against another checkout's library with
 * `make hostile-old HOSTILE_OLD=/path/to/checkout`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "ocdir.h"
#include "../helpers.h"
#include "race.h"

#ifndef OCDIR_ALLOW_WEAK_EMULATION
#define OCDIR_ALLOW_WEAK_EMULATION (1ULL << 2)
#endif
#ifndef EOPNOTSUPP
#define EOPNOTSUPP ENOTSUP
#endif

#define TARGET		"target"
#define LINK		"atk-link"
#define OLD		"old-dir"
#define OLD2		"old-dir2"
#define ASIDE		"atk-aside"
#define DEST		"dest"
#define STAGE_PREFIX	".ocdir-stage."
#define PROBE_PREFIX	".ocdir-mode."
#define PROBE_ASIDE	"atk-probe."
#define PROBE_HOLD_US	300
#define OLD_MODE_STAGE	0751
#define BAIT_MODE	0600
#define MISMATCH_UID	4321
#define KEEP		"keep"
#define MISSING		"atk-missing"
#define OLD_MODE_SETUP	0755
#define PRIVATE_VICTIM	1000

enum kind {
	K_CHMOD, K_SETGID, K_STAGE, K_OWNER, K_DEEP, K_SUID, K_DISCARD_DEST,
	K_DISCARD_DEEP, K_LANDLOCK, K_SETUP, K_ENOENT, K_EMFILE, K_APPLY,
};

struct attack {
	const char *name;
	enum kind kind;
	int bindfs;		/* the arena is a bindfs mount */
	int no_noreplace;	/* OCDIR_TEST_NO_NOREPLACE=1 */
	int weak_opt;		/* pass OCDIR_ALLOW_WEAK_EMULATION if known */
	int variant;		/* kind-specific */
};

static const struct attack attacks[] = {
	{ "chmod-xchg", K_CHMOD, 0, 1, 1, 0 },
	{ "chmod-xchg-strict", K_CHMOD, 0, 1, 0, 0 },
	{ "chmod-bindfs", K_CHMOD, 1, 0, 1, 0 },
	{ "setgid-toggle", K_SETGID, 0, 0, 0, 0 },
	{ "stage-xchg", K_STAGE, 0, 0, 0, 0 },
	{ "probe-move", K_STAGE, 0, 0, 0, 1 },
	{ "probe-xchg", K_STAGE, 0, 0, 0, 2 },
	{ "probe-move-fuse", K_STAGE, 1, 0, 0, 3 },
	{ "owner-mismatch", K_OWNER, 1, 0, 0, 0 },
	{ "owner-mismatch-weak", K_OWNER, 1, 0, 1, 0 },
	{ "owner-mismatch-private", K_OWNER, 1, 0, 0, 1 },
	{ "deep-symlink", K_DEEP, 0, 0, 0, 0 },
	{ "setuid-switch", K_SUID, 0, 0, 0, 0 },
	{ "setcap-switch", K_SUID, 0, 0, 0, 1 },
	{ "discard-dest", K_DISCARD_DEST, 0, 0, 0, 0 },
	{ "discard-deep", K_DISCARD_DEEP, 0, 0, 0, 0 },
	{ "landlock-refer", K_LANDLOCK, 0, 0, 0, 0 },
	{ "setup-xchg", K_SETUP, 0, 0, 0, 0 },
	{ "setup-xchg-mkpath", K_SETUP, 0, 0, 0, 1 },
	{ "setup-xchg-native", K_SETUP, 0, 0, 0, 2 },
	{ "setup-emfile", K_EMFILE, 0, 0, 0, 0 },
	{ "enoent-symlink", K_ENOENT, 0, 0, 0, 0 },
	{ "enoent-symlink-sticky", K_ENOENT, 0, 0, 0, 1 },
	{ "enoent-stage-rmdir", K_ENOENT, 0, 0, 0, 2 },
	{ "apply-existing", K_APPLY, 0, 0, 0, 0 },
};
#define N_ATTACKS (sizeof(attacks) / sizeof(attacks[0]))

struct result {
	unsigned long rounds, hits, escapes, wrong, removed, stranded;
	unsigned long excused;	/* leftovers of calls that said EAGAIN (stage-xchg) */
	unsigned long enoent;	/* ENOENT with every component there (issue 26) */
	unsigned long stage_left;	/* leftovers that are staging directories */
	unsigned long probes;	/* probe-move: bit probes left in the arena */
	unsigned long leftovers, refused, errors, moves, created, reported;
	unsigned long inplace;	/* rounds whose directory was made at its name */
	unsigned long errs[160];	/* failed victim calls by errno */
	double seconds;
	char arena[16];
	char fs[16];
	char note[320];
};

static struct {
	const char *only;
	unsigned long rounds;
	double seconds;
	const char *dir;
	uid_t attacker;
	unsigned long burst;
	unsigned long dwell;
	int quiet;
} opt = { .rounds = 3000, .seconds = 20, .attacker = 65534, .burst = 2000,
	  .dwell = 20000 };

/* ---- small tools ---- */

__attribute__((format(printf, 2, 3)))
static void note(struct result *res, const char *fmt, ...)
{
	size_t len = strlen(res->note);
	va_list ap;

	if (len + 3 >= sizeof(res->note))
		return;
	if (len)
		len += (size_t)snprintf(res->note + len, sizeof(res->note) - len, "; ");
	va_start(ap, fmt);
	vsnprintf(res->note + len, sizeof(res->note) - len, fmt, ap);
	va_end(ap);
}

static void rm_tree_at(int dirfd, const char *name)
{
	char path[PATH_MAX];

	if (unlinkat(dirfd, name, 0) == 0 || unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	rm_tree(path);
}

static void set_fs(struct result *res, int fd, const char *prefix)
{
	char buf[16];

	snprintf(res->fs, sizeof(res->fs), "%s%s", prefix, fs_name(fd, buf, sizeof(buf)));
}

static int make_base(char *base, size_t size, mode_t mode)
{
	snprintf(base, size, "%s/ocdir-hostile.XXXXXX", opt.dir);
	if (!mkdtemp(base) || chmod(base, mode))
		return -errno;
	return 0;
}

/*
 * Does this library know OCDIR_ALLOW_WEAK_EMULATION? An unknown option bit
 * gives EINVAL before the path is looked at; a known one lets the call go
 * on to the empty path (ENOENT).
 */
static int lib_knows_weak_opt(void)
{
	struct ocdir_how how = { .mode = 0700, .options = OCDIR_ALLOW_WEAK_EMULATION };

	return !(ocdir_openat2(AT_FDCWD, "", &how, sizeof(how), NULL) < 0 && errno == EINVAL);
}

static uint64_t weak_option(const struct attack *at, struct result *res)
{
	if (!at->weak_opt)
		return 0;
	if (lib_knows_weak_opt())
		return OCDIR_ALLOW_WEAK_EMULATION;
	note(res, "library without OCDIR_ALLOW_WEAK_EMULATION (old): weak path by default");
	return 0;
}

static int errno_expected_under_attack(int err)
{
	switch (err) {
	case EEXIST: case ENOENT: case ENOTDIR: case ELOOP: case EAGAIN: case EACCES:
		return 1;
	}
	return 0;
}

/* ---- bindfs ---- */

static int run_cmd(char *const argv[])
{
	pid_t pid = fork();
	int st, fd;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int bindfs_mount(const char *src, const char *mnt, const char *force_user,
			const char *perms)
{
	char fu[64], fg[64], pm[64];
	char *argv[8];
	int n = 0;

	argv[n++] = "bindfs";
	if (perms) {
		snprintf(pm, sizeof(pm), "--perms=%s", perms);
		argv[n++] = pm;
	}
	if (force_user) {
		snprintf(fu, sizeof(fu), "--force-user=%s", force_user);
		snprintf(fg, sizeof(fg), "--force-group=%s", force_user);
		argv[n++] = fu;
		argv[n++] = fg;
	}
	argv[n++] = (char *)src;
	argv[n++] = (char *)mnt;
	argv[n] = NULL;
	return run_cmd(argv);
}

static void bindfs_umount(const char *mnt)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (umount2(mnt, 0) == 0 || errno == EINVAL || errno == ENOENT)
			return;
		usleep(20000);
	}
	umount2(mnt, MNT_DETACH);
}

/* ---- the race arena (chmod-xchg, setgid-toggle, stage-xchg, discard-dest) ---- */

struct arena {
	const struct attack *at;
	char base[512], src[600], mnt[600], arena[600], bait[600];
	int mounted;
	int arenafd, baitfd, oldfd, inotify, vwatch;
	struct stat bait_st, old_st;
	mode_t old_mode;
	int flipped;		/* attacker: an exchange to undo at the pause */
	cpu_set_t cpu;		/* probe-move: the one CPU victim and attacker share */
};

/*
 * The old directory at OLD, mode old_mode; for setup-xchg another user's
 * tree (uid 1000, with a file in it) that root must never touch.
 */
static int make_old(struct arena *a)
{
	int fd;

	if (mkdirat(a->arenafd, OLD, a->old_mode) ||
	    fchmodat(a->arenafd, OLD, a->old_mode, 0))
		return -1;
	a->oldfd = openat(a->arenafd, OLD, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->oldfd < 0)
		return -1;
	/*
	 * probe-xchg: a file in it, so that a victim that took it for its
	 * staging directory cannot rmdir it afterwards (which would hide the
	 * mode it changed): an empty directory's link count, no less.
	 */
	if (a->at->kind == K_SETUP || (a->at->kind == K_STAGE && a->at->variant == 2)) {
		fd = openat(a->oldfd, KEEP, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd))
			return -1;
	}
	if (a->at->kind == K_SETUP && fchown(a->oldfd, PRIVATE_VICTIM, PRIVATE_VICTIM))
		return -1;
	return fstat(a->oldfd, &a->old_st);
}

/*
 * probe-xchg's second old directory, root's, mode OLD_MODE_STAGE, made
 * again whenever a round removed or changed it (the victim's look at the
 * bits may rmdir what it finds at its name: this arena lets the attacker
 * do that itself).
 */
static int make_old2(struct arena *a)
{
	struct stat st;

	if (fstatat(a->arenafd, OLD2, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode) && (st.st_mode & 07777) == OLD_MODE_STAGE && st.st_uid == 0)
		return 0;
	rm_tree_at(a->arenafd, OLD2);
	return mkdirat(a->arenafd, OLD2, OLD_MODE_STAGE) ||
	       fchmodat(a->arenafd, OLD2, OLD_MODE_STAGE, 0);
}

static int arena_setup(struct arena *a, const struct attack *at, struct result *res)
{
	int r, fd;

	memset(a, 0, sizeof(*a));
	a->at = at;
	a->arenafd = a->baitfd = a->oldfd = a->inotify = a->vwatch = -1;
	r = make_base(a->base, sizeof(a->base), 0755);
	if (r)
		return r;
	snprintf(a->bait, sizeof(a->bait), "%s/bait", a->base);
	fd = open(a->bait, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, BAIT_MODE);
	if (fd < 0 || write(fd, "secret\n", 7) != 7 || fchmod(fd, BAIT_MODE) || close(fd))
		return -errno;
	if (at->bindfs) {
		snprintf(a->src, sizeof(a->src), "%s/src", a->base);
		snprintf(a->mnt, sizeof(a->mnt), "%s/mnt", a->base);
		if (mkdir(a->src, 0777) || chmod(a->src, 0777) || mkdir(a->mnt, 0755))
			return -errno;
		/* probe-move-fuse: a server that adds bits to everything */
		if (bindfs_mount(a->src, a->mnt, NULL,
				 at->kind == K_STAGE ? "g+rX,o+rX" : NULL)) {
			snprintf(res->note, sizeof(res->note), "bindfs did not mount");
			return 77;
		}
		a->mounted = 1;
		snprintf(a->arena, sizeof(a->arena), "%s", a->mnt);
	} else {
		snprintf(a->arena, sizeof(a->arena), "%s/arena", a->base);
		if (mkdir(a->arena, 0700))
			return -errno;
		if (at->kind == K_SETGID) {
			if (chown(a->arena, opt.attacker, opt.attacker) || chmod(a->arena, 02777))
				return -errno;
		} else if (at->kind == K_ENOENT && at->variant == 1) {
			if (chown(a->arena, opt.attacker, opt.attacker) || chmod(a->arena, 01777))
				return -errno;
		} else if (chmod(a->arena, 0777)) {
			return -errno;
		}
	}
	a->arenafd = open(a->arena, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a->baitfd = open(a->bait, O_RDONLY | O_CLOEXEC);
	if (a->arenafd < 0 || a->baitfd < 0 || fstat(a->baitfd, &a->bait_st))
		return -errno;
	if (at->kind == K_CHMOD || at->kind == K_SETGID) {
		if (symlinkat(a->bait, a->arenafd, LINK) ||
		    fchownat(a->arenafd, LINK, opt.attacker, opt.attacker, AT_SYMLINK_NOFOLLOW))
			return -errno;
	}
	if (at->kind == K_SETGID || at->kind == K_STAGE || at->kind == K_SETUP ||
	    at->kind == K_ENOENT) {
		a->old_mode = at->kind == K_STAGE ? OLD_MODE_STAGE :
			      at->kind == K_SETGID ? 0700 : OLD_MODE_SETUP;
		if (make_old(a))
			return -errno;
	}
	if (at->kind == K_STAGE && at->variant == 2 && make_old2(a))
		return -errno;
	set_fs(res, a->arenafd, "");
	return 0;
}

static void arena_teardown(struct arena *a)
{
	if (a->oldfd >= 0)
		close(a->oldfd);
	if (a->baitfd >= 0)
		close(a->baitfd);
	if (a->arenafd >= 0)
		close(a->arenafd);
	if (a->mounted)
		bindfs_umount(a->mnt);
	if (a->base[0])
		rm_tree(a->base);
}

static int has_prefix(const struct inotify_event *ev, const char *prefix)
{
	return ev->len && !strncmp(ev->name, prefix, strlen(prefix));
}

/* What the stage-xchg and enoent-stage-rmdir moves do to one new name. */
struct stage_move {
	struct arena *a;
	struct shared *sh;
	unsigned int g;
};

/* stage-xchg, probe-*: exchange a staging directory with OLD a while. */
static int xchg_stage(const struct inotify_event *ev, void *ctx)
{
	struct stage_move *m = ctx;
	int d = m->a->arenafd;

	if (!has_prefix(ev, STAGE_PREFIX) || xchg(d, ev->name, OLD))
		return 0;
	if (m->a->at->variant)	/* outlasts the probe's exchange */
		usleep(3 * PROBE_HOLD_US);
	else
		dwell(m->sh, m->g, opt.dwell);
	xchg(d, ev->name, OLD);
	return 1;
}

/* enoent-stage-rmdir: remove a staging directory while it is still empty. */
static int rmdir_stage(const struct inotify_event *ev, void *ctx)
{
	struct stage_move *m = ctx;

	for (int k = 0; has_prefix(ev, STAGE_PREFIX) && k < 64; k++) {
		if (unlinkat(m->a->arenafd, ev->name, AT_REMOVEDIR) == 0)
			return 1;
		if (errno != ENOTEMPTY && errno != EEXIST)
			break;
	}
	return 0;
}

/* One attacker move; each undoes itself before it returns. */
static int attack_move(void *arena, struct shared *sh, unsigned int g)
{
	struct arena *a = arena;
	int d = a->arenafd;

	switch (a->at->kind) {
	case K_CHMOD:
		if (a->at->bindfs) {
			/* bindfs refuses RENAME_EXCHANGE: move aside, plant */
			if (renameat(d, TARGET, d, ASIDE))
				return 0;
			if (symlinkat(a->bait, d, TARGET) == 0) {
				dwell(sh, g, opt.dwell);
				unlinkat(d, TARGET, 0);
			}
			renameat(d, ASIDE, d, TARGET);
			return 1;
		}
		/*
		 * Flip and flip again, no dwell: the window is the step
		 * between a look at the name and a chmod by name, a moment;
		 * every flip is a chance. An odd flip is undone at the pause.
		 */
		if (xchg(d, TARGET, LINK))
			return 0;
		a->flipped ^= 1;
		return 1;
	case K_SETGID: {
		const char *obj = (g / 2) % 2 ? LINK : OLD;

		/* the arena's S_ISGID flips meanwhile (setgid_toggler()) */
		if (xchg(d, TARGET, obj))
			return 0;
		dwell(sh, g, opt.dwell);
		xchg(d, TARGET, obj);
		return 1;
	}
	case K_STAGE: {
		struct stage_move m = { a, sh, g };
		struct pollfd pfd = { a->inotify, POLLIN, 0 };

		/*
		 * probe-move runs SCHED_FIFO on the victim's one CPU: the
		 * event's wakeup preempts the victim right after its mkdirat
		 * (as a busy machine's scheduler may), and the exchange is
		 * held asleep so that the victim runs into it (a spin would
		 * hold the CPU the victim needs).
		 */
		if (a->at->variant && poll(&pfd, 1, 1) != 1)
			return 0;
		return t_each_inotify_event(a->inotify, xchg_stage, &m) > 0;
	}
	case K_SETUP:
		/*
		 * Flip the name with the other user's tree whenever a
		 * directory is there (an odd flip is undone at the pause);
		 * else toggle a dangling symlink at it.
		 */
		if (xchg(d, TARGET, OLD) == 0) {
			a->flipped ^= 1;
			return 1;
		}
		if (!a->flipped && symlinkat(MISSING, d, TARGET) == 0) {
			dwell(sh, g, opt.dwell / 20);
			unlinkat(d, TARGET, 0);
			return 1;
		}
		return 0;
	case K_ENOENT: {
		struct stage_move m = { a, sh, g };

		if (a->at->variant != 2) {
			/* a symlink to an existing directory, there and gone */
			if (symlinkat(OLD, d, TARGET))
				return 0;
			unlinkat(d, TARGET, 0);
			return 1;
		}
		return t_each_inotify_event(a->inotify, rmdir_stage, &m) > 0;
	}
	case K_DISCARD_DEST: {
		struct dirent *de;
		DIR *dir = opendir_fd(d);

		if (!dir)
			return 0;
		while ((de = readdir(dir)))
			if (!strncmp(de->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)) &&
			    renameat2(d, de->d_name, d, DEST, RENAME_NOREPLACE) == 0) {
				closedir(dir);
				return 1;
			}
		closedir(dir);
		return 0;
	}
	default:
		return 0;
	}
}

struct toggler {
	struct arena *a;
	struct shared *sh;
};

/* The parent's owner flips its setgid bit while the victim runs. */
static void *setgid_toggler(void *p)
{
	struct toggler *t = p;
	unsigned int g;

	for (;;) {
		g = atomic_load_explicit(&t->sh->gen, memory_order_acquire);
		if (g == GEN_QUIT)
			break;
		if (g & 1) {
			wait_while_eq(&t->sh->gen, g);
			continue;
		}
		fchmod(t->a->arenafd, 02777);
		fchmod(t->a->arenafd, 0777);
	}
	return NULL;
}

/*
 * probe-move, probe-xchg: a second thread of the attacker, so that a probe
 * made while attack_move() holds an exchange is moved at once: each
 * ".ocdir-mode.*" directory goes to "atk-probe.N" in the arena
 * (probe-move) or is exchanged with OLD2 for a while (probe-xchg).
 */
struct probe_move {
	struct toggler *t;
	unsigned long n;
};

static int move_probe(const struct inotify_event *ev, void *ctx)
{
	struct probe_move *m = ctx;
	int d = m->t->a->arenafd;
	char aside[64];

	if (!has_prefix(ev, PROBE_PREFIX))
		return 0;
	if (m->t->a->at->variant == 2) {
		if (xchg(d, ev->name, OLD2) == 0) {
			usleep(PROBE_HOLD_US);
			xchg(d, ev->name, OLD2);
		}
	} else {
		snprintf(aside, sizeof(aside), PROBE_ASIDE "%lu", m->n++);
		renameat(d, ev->name, d, aside);
	}
	return 1;
}

static void *probe_mover(void *p)
{
	struct probe_move m = { p, 0 };
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	struct pollfd pfd = { in, POLLIN, 0 };

	if (in < 0 || inotify_add_watch(in, m.t->a->arena, IN_CREATE) < 0)
		_exit(2);
	while (atomic_load_explicit(&m.t->sh->gen, memory_order_acquire) != GEN_QUIT)
		if (poll(&pfd, 1, 10) == 1)
			t_each_inotify_event(in, move_probe, &m);
	close(in);
	return NULL;
}

/* chmod-xchg: an odd number of flips is undone before the pause. */
static void unflip(void *arena)
{
	struct arena *a = arena;

	if (a->flipped) {
		xchg(a->arenafd, TARGET, a->at->kind == K_SETUP ? OLD : LINK);
		a->flipped = 0;
	}
}

static void attacker(struct arena *a, struct shared *sh)
{
	struct toggler tg = { a, sh };
	pthread_t th;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (a->at->kind == K_STAGE && a->at->variant) {
		struct sched_param fifo = { .sched_priority = 1 };

		/* before drop_to(): the threads inherit both */
		if (sched_setaffinity(0, sizeof(a->cpu), &a->cpu) ||
		    sched_setscheduler(0, SCHED_FIFO, &fifo))
			_exit(2);
	}
	if (drop_to(opt.attacker))
		_exit(2);
	if (a->at->kind == K_STAGE || (a->at->kind == K_ENOENT && a->at->variant == 2)) {
		a->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (a->inotify < 0 || inotify_add_watch(a->inotify, a->arena, IN_CREATE) < 0)
			_exit(2);
	}
	if (a->at->kind == K_SETGID && pthread_create(&th, NULL, setgid_toggler, &tg))
		_exit(2);
	if (a->at->kind == K_STAGE && a->at->variant &&
	    pthread_create(&th, NULL, probe_mover, &tg))
		_exit(2);
	attacker_loop(sh, opt.burst, attack_move, unflip, a);
	_exit(0);
}

/*
 * Map the pause protocol's page and fork the attacker on the arena; back
 * once the attacker runs, as its own uid. Its pid, or -1 if it could not
 * be started.
 */
static pid_t start_attacker(struct arena *a, struct shared **sh)
{
	pid_t pid;

	*sh = shared_map();
	if (!*sh)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		attacker(a, *sh);
	wait_until_eq(&(*sh)->ack, 1);
	return pid;
}

/* Did something land on this object? Put it back if so. */
static int tampered(int fd, const struct stat *orig)
{
	struct stat st;

	if (fstat(fd, &st))
		return 1;
	if ((st.st_mode & 07777) == (orig->st_mode & 07777) &&
	    st.st_uid == orig->st_uid && st.st_gid == orig->st_gid)
		return 0;
	if (st.st_nlink == 0)
		return 0;	/* removed: counted by the caller */
	(void)!fchown(fd, orig->st_uid, orig->st_gid);
	fchmod(fd, orig->st_mode & 07777);
	return 1;
}

static int is_name(const char *n, const char *want)
{
	return !strcmp(n, want);
}

/* A leftover `name`, `where` ("left behind"): counted, the first 3 shown. */
static void count_leftover(const char *attack, struct result *res, const char *where,
			   const char *name)
{
	res->leftovers++;
	if (!opt.quiet && res->leftovers < 4)
		printf("# %s: %s: %s\n", attack, where, name);
}

/*
 * After a round (attacker paused, its moves undone): count what landed on
 * the bait and on the old directory, put the old directory back at its
 * name, remove the victim's directory and count anything else as left
 * over.
 */
static int arena_check(struct arena *a, struct result *res, int scan)
{
	struct stat st;
	struct dirent *de;
	DIR *dir;
	int old_home = 1;

	if (tampered(a->baitfd, &a->bait_st))
		res->escapes++;
	if (a->oldfd >= 0) {
		if (fstat(a->oldfd, &st) == 0 && st.st_nlink == 0) {
			res->removed++;
			close(a->oldfd);
			a->oldfd = -1;
			old_home = 0;
		} else if (tampered(a->oldfd, &a->old_st)) {
			res->escapes++;
		} else if ((a->at->kind == K_SETUP ||
			    (a->at->kind == K_STAGE && a->at->variant == 2)) &&
			   fstatat(a->oldfd, KEEP, &st, AT_SYMLINK_NOFOLLOW)) {
			int fd = openat(a->oldfd, KEEP, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			res->escapes++;	/* emptied: the issue's tree deletion */
			if (fd >= 0)
				close(fd);
		}
		if (a->oldfd >= 0 &&
		    (fstatat(a->arenafd, OLD, &st, AT_SYMLINK_NOFOLLOW) ||
		     st.st_ino != a->old_st.st_ino || st.st_dev != a->old_st.st_dev)) {
			res->stranded++;
			old_home = 0;
			scan = 1;
		}
	}
	if (a->at->kind == K_SETGID)
		fchmod(a->arenafd, 02777);
	if (a->at->kind == K_STAGE && a->at->variant == 2 && make_old2(a))
		return -1;
	if (unlinkat(a->arenafd, TARGET, AT_REMOVEDIR) && errno != ENOENT)
		rm_tree_at(a->arenafd, TARGET);
	if ((a->at->kind == K_CHMOD || a->at->kind == K_SETGID) &&
	    (fstatat(a->arenafd, LINK, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode))) {
		/* an exchange the victim's rollback made impossible to undo */
		rm_tree_at(a->arenafd, LINK);
		if (symlinkat(a->bait, a->arenafd, LINK) ||
		    fchownat(a->arenafd, LINK, opt.attacker, opt.attacker, AT_SYMLINK_NOFOLLOW))
			return -1;
	}
	if (!scan)
		return 0;
	dir = opendir_fd(a->arenafd);
	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		if (is_name(de->d_name, ".") || is_name(de->d_name, ".."))
			continue;
		if (is_name(de->d_name, LINK) && a->at->kind != K_DISCARD_DEST)
			continue;
		if (a->oldfd >= 0 && de->d_ino == a->old_st.st_ino) {
			if (!is_name(de->d_name, OLD)) {
				/* stranded: home again (whatever sits at OLD is left over) */
				if (renameat2(a->arenafd, de->d_name, a->arenafd, OLD,
					      RENAME_EXCHANGE) && errno == ENOENT)
					renameat(a->arenafd, de->d_name, a->arenafd, OLD);
			}
			continue;
		}
		if (is_name(de->d_name, OLD2) && a->at->kind == K_STAGE)
			continue;
		if (is_name(de->d_name, ASIDE)) {	/* attacker debris */
			rm_tree_at(a->arenafd, de->d_name);
			continue;
		}
		if (!strncmp(de->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)))
			res->stage_left++;
		if (!strncmp(de->d_name, PROBE_ASIDE, strlen(PROBE_ASIDE)))
			res->probes++;
		count_leftover(a->at->name, res, "left in the arena", de->d_name);
		rm_tree_at(a->arenafd, de->d_name);
	}
	closedir(dir);
	/* a leftover sat at OLD and the old directory came home over it? */
	if (a->oldfd >= 0 && !old_home) {
		if (fstatat(a->arenafd, OLD, &st, AT_SYMLINK_NOFOLLOW) ||
		    st.st_ino != a->old_st.st_ino) {
			rm_tree_at(a->arenafd, OLD);
			close(a->oldfd);
			a->oldfd = -1;
		}
	}
	if (a->oldfd < 0 && a->old_mode) {	/* removed: make a new one */
		rm_tree_at(a->arenafd, OLD);
		if (make_old(a))
			return -1;
	}
	return 0;
}

static int is_new_own_dir(const struct arena *a, int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return 0;
	return a->oldfd < 0 || st.st_ino != a->old_st.st_ino || st.st_dev != a->old_st.st_dev;
}

/*
 * Was the victim's directory made at its name (mkdirat in the parent: the
 * in-place or weak path) rather than moved there from a staging
 * directory? The attacker's exchanges show as moves, never as IN_CREATE.
 */
static int is_target_mkdir(const struct inotify_event *ev, void *ctx)
{
	(void)ctx;
	return (ev->mask & IN_CREATE) && (ev->mask & IN_ISDIR) && ev->len &&
	       !strcmp(ev->name, TARGET);
}

static int made_in_place(int in)
{
	int hits, direct = 0;

	while ((hits = t_each_inotify_event(in, is_target_mkdir, NULL)) >= 0)
		direct |= hits > 0;
	return direct;
}

struct setup_watch {
	struct arena *a;
	struct result *res;
};

/*
 * setup-xchg's setup: is the new directory at the name (or, exchanged, at
 * the other tree's) while setup runs? Then put a file in it and fail, as
 * a refused chown or xattr would.
 */
static int failing_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	struct setup_watch *w = arg;
	struct stat me, st;
	int f;

	(void)path;
	if (!(flags & OCDIR_SETUP_LEAF))
		return 0;
	if (fstat(fd, &me) == 0 &&
	    ((fstatat(w->a->arenafd, TARGET, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	      st.st_ino == me.st_ino && st.st_dev == me.st_dev) ||
	     (fstatat(w->a->arenafd, OLD, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	      st.st_ino == me.st_ino && st.st_dev == me.st_dev)))
		w->res->wrong++;
	f = openat(fd, "junk", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f >= 0)
		close(f);
	return -EDQUOT;
}

/* setup-xchg: after the round, nothing of the victim's at the name. */
static void setup_leftover(struct arena *a, struct result *res)
{
	struct stat st;

	if (fstatat(a->arenafd, TARGET, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_ino != a->old_st.st_ino)
		count_leftover(a->at->name, res, "left at the name", TARGET);
}

/*
 * Count an issue-26 victim call: fd or -1 with errno; wrong says whether
 * its created=1 is a lie. ENOENT is always a hit there (every component
 * but the attacked last one exists); EDQUOT is the failing setup's.
 */
static void count_issue26(int fd, int wrong, struct result *res)
{
	int err = errno;

	if (fd >= 0) {
		res->wrong += wrong;
		close(fd);
		return;
	}
	if (err > 0 && err < 160)
		res->errs[err]++;
	if (err == ENOENT)
		res->enoent++;
	else if (err != EDQUOT && !errno_expected_under_attack(err))
		res->errors++;
}

static void victim_round(struct arena *a, unsigned long r, uint64_t options,
			 struct result *res)
{
	struct ocdir_how how = { .mode = 0333, .options = options };
	struct setup_watch w = { a, res };
	int fd, created = 0, err;

	switch (a->at->kind) {
	case K_SETUP:
		how.mode = 0755;
		if (a->at->variant == 1)
			fd = ocdir_mkpath_setup(a->arenafd, TARGET, &how, sizeof(how),
						failing_setup, &w, &created);
		else
			fd = ocdir_openat2_setup(a->arenafd, TARGET, &how, sizeof(how),
						 failing_setup, &w, &created);
		/* setup always fails: created=1 is wrong whatever was opened */
		count_issue26(fd, created == 1, res);
		return;
	case K_ENOENT:
		how.mode = 0700;
		fd = ocdir_openat2(a->arenafd, TARGET, &how, sizeof(how), &created);
		count_issue26(fd, created == 1 && fd >= 0 && !is_new_own_dir(a, fd), res);
		return;
	case K_SETGID:
		how.flags = O_EXCL;
		how.mode = r % 2 ? 0333 : 0700;
		break;
	case K_STAGE:
		how.mode = 0700;
		break;
	default:
		break;
	}
	fd = ocdir_openat2(a->arenafd, TARGET, &how, sizeof(how), &created);
	err = errno;
	if (a->vwatch >= 0 && made_in_place(a->vwatch))
		res->inplace++;
	errno = err;
	if (fd >= 0) {
		if (created == 1) {
			res->created++;
			if (!is_new_own_dir(a, fd))
				res->wrong++;
		}
		close(fd);
		return;
	}
	if (errno > 0 && errno < 160)
		res->errs[errno]++;
	if (errno == EOPNOTSUPP) {
		res->refused++;
	} else if (!errno_expected_under_attack(errno)) {
		res->errors++;
		if (res->errors < 4 && !opt.quiet)
			printf("# %s: unexpected %s\n", a->at->name, t_errname(errno));
	}
}

static int run_race(const struct attack *at, struct result *res)
{
	struct arena a;
	struct shared *sh;
	uint64_t options;
	unsigned long r;
	double start;
	pid_t pid;
	int rc, pinned = 0;
	cpu_set_t all_cpus;

	rc = arena_setup(&a, at, res);
	if (rc) {
		if (rc != 77)
			note(res, "setup: %s", strerror(-rc));
		arena_teardown(&a);
		return rc == 77 ? 77 : 2;
	}
	snprintf(res->arena, sizeof(res->arena), "%s",
		 at->kind == K_SETGID ? "owned" :
		 at->kind == K_ENOENT && at->variant == 1 ? "sticky" : "shared");
	options = weak_option(at, res);
	a.vwatch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a.vwatch >= 0 && inotify_add_watch(a.vwatch, a.arena, IN_CREATE) < 0) {
		close(a.vwatch);
		a.vwatch = -1;
	}
	if (at->kind == K_STAGE && at->variant) {
		if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus))
			return 2;
		CPU_ZERO(&a.cpu);
		CPU_SET(sched_getcpu(), &a.cpu);
		if (sched_setaffinity(0, sizeof(a.cpu), &a.cpu))
			return 2;
		pinned = 1;
	}
	pid = start_attacker(&a, &sh);
	if (pid < 0)
		return 2;
	start = now();
	for (r = 0; r < opt.rounds; r++) {
		if ((r & 31) == 0 && now() - start > opt.seconds)
			break;
		round_run(sh, (unsigned int)r);
		victim_round(&a, r, options, res);
		round_pause(sh, (unsigned int)r);
		if (at->kind == K_SETUP)
			setup_leftover(&a, res);
		if (arena_check(&a, res, (r & 255) == 255)) {
			note(res, "the arena could not be reset after round %lu", r);
			res->errors++;
			r++;
			break;
		}
	}
	if (arena_check(&a, res, 1))
		res->errors++;
	res->rounds = r;
	res->seconds = now() - start;
	res->moves = atomic_load(&sh->moves);
	res->hits = res->escapes + res->wrong + res->removed + res->stranded + res->enoent;
	/*
	 * stage-xchg: in this shared, non-sticky arena the attacker can rmdir
	 * the empty old directory and rename it anywhere itself, so the
	 * library's rmdir of the staging name losing a race to an exchange
	 * (removed) or the attacker keeping the old directory elsewhere
	 * (stranded) gives it nothing: shown, not hits. What the library must
	 * never do is change the old directory (escapes) or call it created
	 * (wrong). A call that lost its race 8 times (EAGAIN), and one whose
	 * rmdir lost it (removed), may leave its own empty staging directory
	 * where the attacker's exchanges put it.
	 */
	if (a.at->kind == K_STAGE) {
		unsigned long lost = res->errs[EAGAIN] + res->removed, unexcused;

		res->excused = res->leftovers < lost ? res->leftovers : lost;
		unexcused = res->leftovers - res->excused;
		res->hits = res->escapes + res->wrong;
		/* probe-*: looks beyond the one directory a lost call may leave */
		if (a.at->variant)
			res->hits += res->probes < unexcused ? res->probes : unexcused;
	}
	/*
	 * Issue 26: a call that lost its staging race and said EAGAIN may
	 * leave one empty directory of its own (a staging directory) in
	 * this shared parent; nothing else may stay. setgid-toggle too since
	 * issue 39: a staging directory must show the setgid bit and group
	 * the parent hands out, which the parent's owner keeps flipping.
	 */
	if (at->kind == K_SETUP || at->kind == K_ENOENT || at->kind == K_SETGID) {
		unsigned long lost = res->errs[EAGAIN];

		res->excused = res->stage_left < lost ? res->stage_left : lost;
	}
	{
		unsigned long failed = 0;
		int e, top = 0;

		for (e = 1; e < 160; e++) {
			failed += res->errs[e];
			if (res->errs[e] > res->errs[top])
				top = e;
		}
		if (top)
			note(res, "failed calls: %lu, most with %s (%lu)", failed,
			     t_errname(top), res->errs[top]);
	}
	stop_attacker(sh, pid);
	arena_teardown(&a);
	if (pinned)
		sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
	return 0;
}

/* ---- discard-dest: the staging directory renamed onto the destination ---- */

static int run_discard_dest(const struct attack *at, struct result *res)
{
	struct ocdir_how how = { .mode = 0700 };
	struct ocdir_prepared *p;
	struct arena a;
	struct shared *sh;
	struct dirent *de;
	unsigned long r, left, rounds = opt.rounds / 10 < 50 ? 50 : opt.rounds / 10;
	double start;
	pid_t pid;
	int rc, fd, rp, rd, derr;
	DIR *dir;

	rc = arena_setup(&a, at, res);
	if (rc) {
		note(res, "setup: %s", strerror(-rc));
		arena_teardown(&a);
		return 2;
	}
	snprintf(res->arena, sizeof(res->arena), "shared");
	pid = start_attacker(&a, &sh);
	if (pid < 0)
		return 2;
	start = now();
	for (r = 0; r < rounds; r++) {
		if ((r & 15) == 0 && now() - start > opt.seconds)
			break;
		fd = ocdir_prepare(a.arenafd, DEST, &how, sizeof(how), &p);
		/*
		 * A filesystem that shows no birth time (FUSE here) cannot
		 * prove a staging directory new: the documented refusal.
		 */
		if (fd < 0 && errno == EOPNOTSUPP) {
			res->refused++;
			continue;
		}
		if (fd < 0) {
			res->errors++;
			if (res->errors < 4 && !opt.quiet)
				printf("# %s: prepare: %s\n", at->name, t_errname(errno));
			continue;
		}
		/* the attacker moves once at least before it acknowledges */
		round_run(sh, (unsigned int)r);
		round_pause(sh, (unsigned int)r);
		rp = ocdir_publish(p);
		rd = 0;
		derr = 0;
		if (rp < 0) {
			errno = 0;
			rd = ocdir_discard(p);
			derr = errno;
		}
		/* what is left in the arena besides a published destination */
		left = 0;
		dir = opendir_fd(a.arenafd);
		while (dir && (de = readdir(dir))) {
			struct stat st, mine;

			if (is_name(de->d_name, ".") || is_name(de->d_name, ".."))
				continue;
			if (rp == 0 && is_name(de->d_name, DEST) &&
			    fstatat(a.arenafd, DEST, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    fstat(fd, &mine) == 0 && st.st_ino == mine.st_ino)
				continue;	/* published: that is success */
			left++;
			if (!opt.quiet && res->leftovers + res->reported < 3)
				printf("# %s: left after %s: %s\n", at->name,
				       rp == 0 ? "publish" : "discard", de->d_name);
		}
		if (dir)
			closedir(dir);
		if (left && rp == 0) {
			res->hits++;
			res->leftovers += left;
		} else if (left && rd == 0 && (derr == 0 || left > 1)) {
			/*
			 * discard said everything went (errno 0), or left more
			 * than the one empty staging directory it may name.
			 */
			res->hits++;
			res->leftovers += left;
		} else if (left) {
			res->reported++;	/* discard said it failed: honest */
			if (res->reported == 1)
				note(res, "discard reported %s with %lu entries left",
				     t_errname(derr), left);
		}
		close(fd);
		dir = opendir_fd(a.arenafd);
		while (dir && (de = readdir(dir)))
			if (!is_name(de->d_name, ".") && !is_name(de->d_name, ".."))
				rm_tree_at(a.arenafd, de->d_name);
		if (dir)
			closedir(dir);
	}
	res->rounds = r;
	res->seconds = now() - start;
	res->moves = atomic_load(&sh->moves);
	if (!res->moves)
		note(res, res->refused == res->rounds ?
		     "every prepare refused (EOPNOTSUPP: no birth time proves a staging directory new)" :
		     "the attacker never found the staging directory");
	stop_attacker(sh, pid);
	arena_teardown(&a);
	return 0;
}

/*
 * Remove everything in the directory arenafd and say how many entries
 * there were (the first one's name in first).
 */
static unsigned long clear_arena(int arenafd, char *first, size_t size)
{
	unsigned long left = 0;
	struct dirent *de;
	DIR *dir = opendir_fd(arenafd);

	while (dir && (de = readdir(dir))) {
		if (is_name(de->d_name, ".") || is_name(de->d_name, ".."))
			continue;
		if (!left++)
			snprintf(first, size, "%s", de->d_name);
		rm_tree_at(arenafd, de->d_name);
	}
	if (dir)
		closedir(dir);
	return left;
}

/* ---- discard-deep: a 1100-level prepared tree under RLIMIT_NOFILE 1024 ---- */

static int run_discard_deep(const struct attack *at, struct result *res)
{
	char first[NAME_MAX + 1];
	struct ocdir_how how = { .mode = 0700 };
	struct ocdir_prepared *p;
	char base[512], arena[600];
	struct rlimit old, lim;
	unsigned long r, rounds = opt.rounds >= 10000 ? 3 : 1, left;
	int fd, i, arenafd, rd, derr;
	double start = now();

	(void)at;
	if (make_base(base, sizeof(base), 0755))
		return 2;
	snprintf(arena, sizeof(arena), "%s/arena", base);
	if (mkdir(arena, 0777) || chmod(arena, 0777) ||
	    (arenafd = open(arena, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rm_tree(base);
		return 2;
	}
	snprintf(res->arena, sizeof(res->arena), "shared");
	set_fs(res, arenafd, "");
	getrlimit(RLIMIT_NOFILE, &old);
	for (r = 0; r < rounds; r++) {
		fd = ocdir_prepare(arenafd, DEST, &how, sizeof(how), &p);
		if (fd < 0) {
			res->errors++;
			note(res, "prepare: %s", t_errname(errno));
			break;
		}
		i = t_make_nested_dirs(fd, 1100);
		if (i < 1100) {
			res->errors++;
			note(res, "could not build the tree: %d levels", i);
		}
		close(fd);
		lim = old;
		lim.rlim_cur = 1024;
		if (old.rlim_cur < lim.rlim_cur)
			lim.rlim_cur = old.rlim_cur;
		setrlimit(RLIMIT_NOFILE, &lim);
		rd = ocdir_discard(p);
		derr = errno;
		setrlimit(RLIMIT_NOFILE, &old);
		left = clear_arena(arenafd, first, sizeof(first));
		if (left && !res->leftovers)
			note(res, "round %lu: discard returned %d (%s) and left %s", r, rd,
			     rd ? t_errname(derr) : "0", first);
		res->leftovers += left;
		if (left)
			res->hits++;
		if (!left && rd) {
			res->hits++;
			note(res, "discard failed with %s, nothing left", t_errname(derr));
		}
	}
	res->rounds = r;
	res->seconds = now() - start;
	close(arenafd);
	rm_tree(base);
	return 0;
}

/* ---- owner-mismatch: bindfs --force-user ---- */

static int run_owner(const struct attack *at, struct result *res)
{
	char base[512], src[600], mnt[600], name[32];
	struct ocdir_how how = { .mode = 0700 };
	unsigned long r, rounds = opt.rounds / 10 < 20 ? 20 : opt.rounds / 10;
	int private = at->variant == 1, mntfd, fd, created, rc = 0;
	uid_t victim = private ? PRIVATE_VICTIM : 0;
	unsigned char *ok;
	struct dirent *de;
	double start;
	pid_t pid;
	DIR *dir;

	if (rounds > 2000)
		rounds = 2000;
	if (make_base(base, sizeof(base), 0755))
		return 2;
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(mnt, sizeof(mnt), "%s/mnt", base);
	if (mkdir(src, 0700) || chmod(src, private ? 01777 : 0755) || mkdir(mnt, 0755)) {
		rm_tree(base);
		return 2;
	}
	if (bindfs_mount(src, mnt, private ? "0" : "4321", NULL)) {
		note(res, "bindfs did not mount (is it installed?)");
		rm_tree(base);
		return 77;
	}
	snprintf(res->arena, sizeof(res->arena), private ? "sticky" : "foreign");
	ok = mmap(NULL, rounds, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ok == MAP_FAILED)
		return 2;
	start = now();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* The victim: root, or uid 1000 in the private variant. */
		if (victim && drop_to(victim))
			_exit(2);
		mntfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mntfd < 0)
			_exit(3);
		set_fs(res, mntfd, "bindfs/");
		if (private)
			how.mode = 0755;	/* shown as root's: others must read it */
		how.options = weak_option(at, res);
		for (r = 0; r < rounds; r++) {
			if ((r & 15) == 0 && now() - start > opt.seconds)
				break;
			snprintf(name, sizeof(name), "d%lu", r);
			fd = ocdir_openat2(mntfd, name, &how, sizeof(how), &created);
			if (fd >= 0) {
				ok[r] = 1;
				res->created += created == 1;
				/* a new name, made by this call: created=0 is false */
				if (created != 1 && ++res->reported == 1)
					note(res, "created=0 for a directory this call made");
				close(fd);
			} else if (errno == EOPNOTSUPP && !at->weak_opt && !private) {
				res->refused++;
			} else {
				res->hits++;
				if (res->hits < 4 && !opt.quiet)
					printf("# %s: round %lu: %s\n", at->name, r,
					       t_errname(errno));
				if (res->hits == 1)
					note(res, "first failure: %s", t_errname(errno));
			}
		}
		res->rounds = r;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &rc, 0) < 0 || !WIFEXITED(rc) || WEXITSTATUS(rc)) {
		note(res, "the victim did not run (status %d)", rc);
		rc = 2;
	} else {
		rc = 0;
	}
	/* count through the underlying directory: what is not a created dN */
	dir = opendir(src);
	while (dir && (de = readdir(dir))) {
		unsigned long n;
		char *end;

		if (is_name(de->d_name, ".") || is_name(de->d_name, ".."))
			continue;
		if (de->d_name[0] == 'd' && (n = strtoul(de->d_name + 1, &end, 10), !*end) &&
		    n < rounds && ok[n])
			continue;
		count_leftover(at->name, res, "left behind", de->d_name);
	}
	if (dir)
		closedir(dir);
	res->seconds = now() - start;
	bindfs_umount(mnt);
	rm_tree(base);
	return rc;
}

/* ---- deep-symlink: a 40-link chain from a 64 KiB stack ---- */

#define CHAIN 40

struct deep_arg {
	int dirfd;
	const char *name;
	int fd, err;
};

static void *deep_thread(void *p)
{
	struct deep_arg *a = p;

	a->fd = ocdir_openat(a->dirfd, a->name, 0, 0700);
	a->err = a->fd < 0 ? errno : 0;
	return NULL;
}

/*
 * In a child: the call from a thread with `stack` bytes of stack and, if
 * free_fds > 0, an RLIMIT_NOFILE that leaves exactly that many descriptors.
 * Returns in *out: 1 fd right, 2 EEXIST, 3 other errno (in *err), 4 EMFILE;
 * -1 if the child died (signal in *err).
 */
static int deep_try(int basefd, const char *name, size_t stack, int free_fds,
		    const struct stat *want, int *err)
{
	struct { int out, err; } *sh;
	int st, out;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -2;
	sh->out = 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct deep_arg a = { .dirfd = basefd, .name = name };
		pthread_attr_t attr;
		pthread_t th;
		struct rlimit lim;
		struct stat got;

		if (free_fds > 0) {
			/* the lowest limit with free_fds numbers unused below it */
			int fds[4096] = { 0 }, L, used = 0;
			struct dirent *de;
			DIR *d = opendir("/proc/self/fd");

			while (d && (de = readdir(d))) {
				int n = atoi(de->d_name);

				if (de->d_name[0] != '.' && n < 4096 && n != dirfd(d))
					fds[n] = 1;
			}
			if (d)
				closedir(d);
			for (L = 0; L < 4096; L++) {
				if (L - used == free_fds)
					break;
				used += fds[L];
			}
			getrlimit(RLIMIT_NOFILE, &lim);
			lim.rlim_cur = (rlim_t)L;
			if (setrlimit(RLIMIT_NOFILE, &lim))
				_exit(5);
		}
		pthread_attr_init(&attr);
		if (pthread_attr_setstacksize(&attr, stack) ||
		    pthread_create(&th, &attr, deep_thread, &a))
			_exit(6);
		pthread_join(th, NULL);
		if (a.fd >= 0)
			sh->out = fstat(a.fd, &got) == 0 && got.st_ino == want->st_ino &&
				  got.st_dev == want->st_dev ? 1 : 3;
		else
			sh->out = a.err == EEXIST ? 2 : a.err == EMFILE ? 4 : 3;
		sh->err = a.err;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		munmap(sh, sizeof(*sh));
		return -2;
	}
	if (WIFSIGNALED(st)) {
		*err = WTERMSIG(st);
		out = -1;
	} else if (WEXITSTATUS(st)) {
		*err = WEXITSTATUS(st);
		out = -2;
	} else {
		*err = sh->err;
		out = sh->out;
	}
	munmap(sh, sizeof(*sh));
	return out;
}

static int run_deep(const struct attack *at, struct result *res)
{
	char base[512], name[16], target[16];
	struct stat want;
	int basefd, i, k, out, err, need = -1;
	double start = now();

	(void)at;
	if (make_base(base, sizeof(base), 0755))
		return 2;
	basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd < 0 || mkdirat(basefd, "dir", 0755) || fstatat(basefd, "dir", &want, 0))
		return 2;
	for (i = 0; i < CHAIN; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		snprintf(target, sizeof(target), i + 1 < CHAIN ? "l%d" : "dir", i + 1);
		if (symlinkat(target, basefd, name))
			return 2;
		snprintf(name, sizeof(name), "m%d", i);
		snprintf(target, sizeof(target), i + 1 < CHAIN ? "m%d" : "missing", i + 1);
		if (symlinkat(target, basefd, name))
			return 2;
	}
	snprintf(res->arena, sizeof(res->arena), "private");
	set_fs(res, basefd, "");
	ocdir_backend(NULL);	/* the probe's descriptor is not the call's */

	/* 1. the chain to a directory and to a missing name, 64 KiB stack */
	out = deep_try(basefd, "l0", 64 * 1024, 0, &want, &err);
	res->rounds++;
	if (out != 1) {
		res->hits++;
		note(res, "40 links to a directory on a 64 KiB stack: %s %s",
		     out == -1 ? "killed by signal" : "got", out == -1 ? strsignal(err) :
		     out == 3 || out == 4 ? t_errname(err) : "a wrong result");
	}
	out = deep_try(basefd, "m0", 64 * 1024, 0, &want, &err);
	res->rounds++;
	if (out != 2) {
		res->hits++;
		note(res, "40 links to a missing name on a 64 KiB stack: %s %s",
		     out == -1 ? "killed by signal" : "got", out == -1 ? strsignal(err) :
		     out == 1 ? "a descriptor" : t_errname(err));
	}
	if (faccessat(basefd, "missing", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		res->hits++;
		note(res, "created through the chain");
		unlinkat(basefd, "missing", AT_REMOVEDIR);
	}
	/* 2. how many free descriptors the call needs (normal stack) */
	for (k = 1; k <= 64; k++) {
		out = deep_try(basefd, "l0", 8 << 20, k, &want, &err);
		res->rounds++;
		if (out == 1) {
			need = k;
			break;
		}
		if (out != 4 && out != 3)
			break;
	}
	if (need < 0 || need > 4) {
		res->hits++;
		if (need < 0)
			note(res, "no success with up to 64 free descriptors (last: %s)",
			     out == -1 ? strsignal(err) : t_errname(err));
		else
			note(res, "needs %d free descriptors (allowed: 3 + the result)", need);
	} else {
		note(res, "needs %d free descriptors", need);
	}
	res->seconds = now() - start;
	close(basefd);
	rm_tree(base);
	return 0;
}

/* ---- setuid-switch: the test switches inside a setuid program ---- */

static volatile sig_atomic_t openat2_calls;

#if defined(__x86_64__) && defined(SYS_openat2)
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	openat2_calls++;
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

/* openat2 traps (and answers ENOSYS, which every caller must survive) */
static int trap_openat2(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -1;
	return 0;
}
#else
static int trap_openat2(void)
{
	return -1;
}
#endif

/* How the library made "t": in place (IN_CREATE, 1) or moved there (0). */
static int note_how_made(const struct inotify_event *ev, void *ctx)
{
	int *noreplace = ctx;

	if (ev->len && !strcmp(ev->name, "t"))
		*noreplace = (ev->mask & IN_CREATE) ? 1 : 0;
	return 0;
}

/*
 * The program itself, setuid root (or with a file capability), run by the
 * attacker uid. Works only in the directory its executable sits in.
 * Prints "SUIDRES secure=S forced=F noreplace=N resolver=R" where 1 means
 * the switch was honoured, 0 ignored, -1 unknown.
 */
static int suid_child(const char *dir)
{
	char self[PATH_MAX], shared[PATH_MAX];
	struct ocdir_how how = { .mode = 0700 };
	int forced, noreplace = -1, resolver = -1, secure, in, sfd, fd, created;
	const char *reason = "?";
	ssize_t n;
	size_t dl = strlen(dir);

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (size_t)n <= dl || strncmp(self, dir, dl) || self[dl] != '/')
		return 2;
	self[n] = '\0';
	secure = (int)getauxval(AT_SECURE);
	ocdir_backend(&reason);
	forced = strstr(reason, "FORCE") != NULL;

	snprintf(shared, sizeof(shared), "%s/shared", dir);
	sfd = open(shared, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sfd < 0 || in < 0 || inotify_add_watch(in, shared, IN_CREATE | IN_MOVED_TO) < 0)
		return 3;
	fd = ocdir_openat2(sfd, "t", &how, sizeof(how), &created);
	if (fd >= 0 && ocdir_backend(NULL) == OCDIR_BACKEND_NATIVE) {
		/* The kernel made it (one IN_CREATE): no emulation, no switch to honour. */
		noreplace = 0;
		close(fd);
		unlinkat(sfd, "t", AT_REMOVEDIR);
	} else if (fd < 0) {
		noreplace = errno == EOPNOTSUPP ? 1 : -1;
		printf("# create in the shared directory: %s\n", t_errname(errno));
	} else {
		t_each_inotify_event(in, note_how_made, &noreplace);
		close(fd);
		unlinkat(sfd, "t", AT_REMOVEDIR);
	}
	if (trap_openat2() == 0) {
		how.resolve = OCDIR_RESOLVE_BENEATH;
		fd = ocdir_openat2(sfd, "r", &how, sizeof(how), NULL);
		resolver = openat2_calls == 0;
		if (fd >= 0) {
			close(fd);
			unlinkat(sfd, "r", AT_REMOVEDIR);
		} else {
			printf("# RESOLVE_BENEATH create: %s\n", t_errname(errno));
		}
	}
	printf("SUIDRES secure=%d forced=%d noreplace=%d resolver=%d reason=%s\n",
	       secure, forced, noreplace, resolver, reason);
	return 0;
}

static int run_suid(const struct attack *at, struct result *res)
{
	char base[512], exe[600], shared[600], out[4096] = "";
	char *const env[] = { "OCDIR_FORCE_EMULATION=1", "OCDIR_TEST_NO_NOREPLACE=1",
			      "OCDIR_FORCE_RESOLVER=1", "PATH=/usr/bin:/bin", NULL };
	int in, outfd, pfd[2], st, secure = -1, forced = -1, noreplace = -1, resolver = -1;
	struct statvfs sv;
	char buf[65536], *line;
	ssize_t n;
	size_t used = 0;
	double start = now();
	pid_t pid;

	if (make_base(base, sizeof(base), 0755))
		return 2;
	snprintf(res->arena, sizeof(res->arena), "shared");
	in = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (in >= 0) {
		set_fs(res, in, "");
		close(in);
	}
	if (statvfs(base, &sv) == 0 && (sv.f_flag & ST_NOSUID)) {
		note(res, "%s is mounted nosuid", opt.dir);
		rm_tree(base);
		return 77;
	}
	snprintf(exe, sizeof(exe), "%s/hostile-suid", base);
	snprintf(shared, sizeof(shared), "%s/shared", base);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	outfd = open(exe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	while (in >= 0 && outfd >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(outfd, buf, (size_t)n) != n)
			break;
	if (in < 0 || outfd < 0 || fchown(outfd, 0, 0) ||
	    fchmod(outfd, at->variant ? 0755 : 04755) || mkdir(shared, 0777) ||
	    chmod(shared, 0777)) {
		note(res, "cannot install the setuid copy: %s", strerror(errno));
		rm_tree(base);
		return 2;
	}
	if (at->variant) {
		struct vfs_cap_data cap;

		memset(&cap, 0, sizeof(cap));
		cap.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
		cap.data[0].permitted = 1U << CAP_DAC_READ_SEARCH;
		if (fsetxattr(outfd, "security.capability", &cap, XATTR_CAPS_SZ_2, 0)) {
			note(res, "cannot set a file capability: %s", strerror(errno));
			close(outfd);
			rm_tree(base);
			return 77;
		}
	}
	close(in);
	close(outfd);
	if (pipe(pfd))
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		if (drop_to(opt.attacker))
			_exit(126);
		execve(exe, (char *const[]){ exe, "--suid-child", base, NULL }, env);
		_exit(127);
	}
	close(pfd[1]);
	while (used + 1 < sizeof(out) && (n = read(pfd[0], out + used, sizeof(out) - 1 - used)) > 0)
		used += (size_t)n;
	out[used] = '\0';
	close(pfd[0]);
	waitpid(pid, &st, 0);
	rm_tree(base);
	res->seconds = now() - start;
	res->rounds = 1;
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#' && !opt.quiet)
			printf("# %s: %s\n", at->name, line + 2);
		if (!strncmp(line, "SUIDRES ", 8)) {
			sscanf(line, "SUIDRES secure=%d forced=%d noreplace=%d resolver=%d",
			       &secure, &forced, &noreplace, &resolver);
			if (strstr(line, "reason="))
				note(res, "reason: %s", strstr(line, "reason=") + 7);
		}
	}
	if (secure < 0) {
		note(res, "the setuid copy did not report (status %d)", st);
		return 2;
	}
	if (secure != 1) {
		note(res, "AT_SECURE not set (nosuid or no privilege?)");
		return 77;
	}
	if (forced == 1) {
		res->hits++;
		note(res, "OCDIR_FORCE_EMULATION honoured");
	}
	if (noreplace == 1) {
		res->hits++;
		note(res, "OCDIR_TEST_NO_NOREPLACE honoured");
	} else if (noreplace < 0) {
		res->errors++;
		note(res, "could not tell whether OCDIR_TEST_NO_NOREPLACE was honoured");
	}
	if (resolver == 1) {
		res->hits++;
		note(res, "OCDIR_FORCE_RESOLVER honoured");
	} else if (resolver < 0) {
		note(res, "OCDIR_FORCE_RESOLVER not checked (no seccomp trap here)");
	}
	return 0;
}

/* ---- landlock-refer: MAKE_DIR granted, REFER not ---- */

static int run_landlock(const struct attack *at, struct result *res)
{
#if defined(SYS_landlock_create_ruleset) && defined(LANDLOCK_ACCESS_FS_REFER)
	char base[512], priv[600], shared[600], name[32];
	struct {
		unsigned long rounds, hits, leftovers, errors, weak_ok;
		int first_priv, first_shared, first_weak, skip;
	} *sh;
	unsigned long r, rounds = 20;
	double start = now();
	struct dirent *de;
	int st, abi;
	pid_t pid;
	DIR *dir;

	(void)at;
	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 2) {
		note(res, "Landlock ABI %d (REFER needs 2)", abi);
		return 77;
	}
	if (make_base(base, sizeof(base), 0755))
		return 2;
	snprintf(priv, sizeof(priv), "%s/private", base);
	snprintf(shared, sizeof(shared), "%s/shared", base);
	if (mkdir(priv, 0755) || chmod(priv, 0755) || mkdir(shared, 0777) || chmod(shared, 0777))
		return 2;
	snprintf(res->arena, sizeof(res->arena), "both");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct landlock_ruleset_attr ra = {
			.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_DIR |
					     LANDLOCK_ACCESS_FS_REFER,
		};
		struct landlock_path_beneath_attr pb = {
			.allowed_access = LANDLOCK_ACCESS_FS_MAKE_DIR,
		};
		struct ocdir_how how = { .mode = 0700 };
		int rs, pfd, sfd, fd, knows;

		rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
		pb.parent_fd = open(base, O_PATH | O_CLOEXEC);
		if (rs < 0 || pb.parent_fd < 0 ||
		    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_landlock_restrict_self, rs, 0)) {
			sh->skip = errno;
			_exit(0);
		}
		pfd = open(priv, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		sfd = open(shared, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		knows = lib_knows_weak_opt();
		for (r = 0; r < rounds; r++) {
			snprintf(name, sizeof(name), "p%lu", r);
			how.options = 0;
			fd = ocdir_openat2(pfd, name, &how, sizeof(how), NULL);
			if (fd < 0) {
				sh->hits++;
				if (!sh->first_priv)
					sh->first_priv = errno;
			} else {
				close(fd);
			}
			snprintf(name, sizeof(name), "s%lu", r);
			fd = ocdir_openat2(sfd, name, &how, sizeof(how), NULL);
			if (fd >= 0 || errno != EOPNOTSUPP) {
				sh->hits++;
				if (!sh->first_shared)
					sh->first_shared = fd >= 0 ? -1 : errno;
			}
			if (fd >= 0)
				close(fd);
			if (knows) {
				snprintf(name, sizeof(name), "w%lu", r);
				how.options = OCDIR_ALLOW_WEAK_EMULATION;
				fd = ocdir_openat2(sfd, name, &how, sizeof(how), NULL);
				if (fd < 0) {
					sh->hits++;
					if (!sh->first_weak)
						sh->first_weak = errno;
				} else {
					sh->weak_ok++;
					close(fd);
				}
			}
			sh->rounds = r + 1;
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		rm_tree(base);
		return 2;
	}
	if (sh->skip) {
		note(res, "landlock_restrict_self: %s", strerror(sh->skip));
		rm_tree(base);
		return 77;
	}
	/* left behind: anything but pN / wN (made) in either directory */
	for (int k = 0; k < 2; k++) {
		dir = opendir(k ? shared : priv);
		while (dir && (de = readdir(dir))) {
			if (is_name(de->d_name, ".") || is_name(de->d_name, ".."))
				continue;
			if (de->d_name[0] == (k ? 'w' : 'p') || (k && de->d_name[0] == 's'))
				continue;
			count_leftover(at->name, res, "left behind", de->d_name);
		}
		if (dir)
			closedir(dir);
	}
	res->rounds = sh->rounds;
	res->hits = sh->hits;
	if (sh->first_priv)
		note(res, "private parent: %s", t_errname(sh->first_priv));
	if (sh->first_shared)
		note(res, "shared parent: %s", sh->first_shared < 0 ? "success without opt-in" :
		     t_errname(sh->first_shared));
	if (sh->first_weak)
		note(res, "shared parent with opt-in: %s", t_errname(sh->first_weak));
	if (sh->weak_ok)
		note(res, "opt-in weak creates: %lu", sh->weak_ok);
	res->seconds = now() - start;
	set_fs(res, AT_FDCWD, "");
	{
		int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (bfd >= 0) {
			set_fs(res, bfd, "");
			close(bfd);
		}
	}
	rm_tree(base);
	return 0;
#else
	(void)at;
	note(res, "built without Landlock REFER headers");
	return 77;
#endif
}

/* ---- setup-emfile: a failed setup with few free descriptors ---- */

/* Needs a descriptor (EMFILE when there is none), and fails anyway. */
static int fd_hungry_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	int f;

	(void)path;
	(void)arg;
	if (!(flags & OCDIR_SETUP_LEAF))
		return 0;
	f = openat(fd, "junk", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f < 0)
		return -errno;
	close(f);
	return -EDQUOT;
}

static int run_emfile(const struct attack *at, struct result *res)
{
	char first[NAME_MAX + 1];
	struct ocdir_how how = { .mode = 0755 };
	char base[512], arena[600];
	unsigned long r, rounds = opt.rounds / 100 < 20 ? 20 : opt.rounds / 100, left;
	struct rlimit old, lim;
	int fills[256], nfill, arenafd, fd, nfree, created, err;
	double start = now();

	if (make_base(base, sizeof(base), 0755))
		return 2;
	snprintf(arena, sizeof(arena), "%s/arena", base);
	if (mkdir(arena, 0755) || (arenafd = open(arena, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rm_tree(base);
		return 2;
	}
	snprintf(res->arena, sizeof(res->arena), "private");
	set_fs(res, arenafd, "");
	(void)at;
	getrlimit(RLIMIT_NOFILE, &old);
	lim = old;
	lim.rlim_cur = 200 < old.rlim_cur ? 200 : old.rlim_cur;
	for (r = 0; r < rounds; r++) {
		nfree = 1 + (int)(r % 4);
		setrlimit(RLIMIT_NOFILE, &lim);
		for (nfill = 0; nfill < 256; nfill++)
			if ((fills[nfill] = fcntl(0, F_DUPFD_CLOEXEC, 0)) < 0)
				break;
		while (nfree-- > 0 && nfill > 0)
			close(fills[--nfill]);
		created = 0;
		fd = ocdir_openat2_setup(arenafd, TARGET, &how, sizeof(how),
					 fd_hungry_setup, NULL, &created);
		err = errno;
		if (fd >= 0)
			close(fd);
		while (nfill > 0)
			close(fills[--nfill]);
		setrlimit(RLIMIT_NOFILE, &old);
		if (fd >= 0) {
			res->wrong++;	/* setup always fails */
			note(res, "round %lu: the call succeeded", r);
		} else if (err > 0 && err < 160) {
			res->errs[err]++;
		}
		left = clear_arena(arenafd, first, sizeof(first));
		if (left && !res->leftovers)
			note(res, "%d free descriptors: %s (%s) and %s left", 1 + (int)(r % 4),
			     t_errname(err), strerror(err), first);
		res->leftovers += left;
		res->hits += left ? 1 : 0;
	}
	res->hits += res->wrong;
	res->rounds = r;
	res->seconds = now() - start;
	close(arenafd);
	rm_tree(base);
	return 0;
}

/* ---- apply-existing: --apply-existing and a planted trailing symlink ---- */

/* The ocdir command: OCDIR_HOSTILE_CLI, else ../ocdir next to this program. */
static int find_cli(char *buf, size_t size)
{
	const char *env = getenv("OCDIR_HOSTILE_CLI");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return access(buf, X_OK);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(buf, size, "%s/../ocdir", exe);
	return access(buf, X_OK);
}

static int run_apply(const struct attack *at, struct result *res)
{
	char base[512], arena[600], bait[600], target[700], cli[PATH_MAX + 16], uid[16];
	unsigned long r, rounds = opt.rounds / 100 < 10 ? 10 : opt.rounds / 100;
	struct stat orig, st;
	double start = now();
	int arenafd, rc;
	pid_t pid;

	(void)at;
	if (find_cli(cli, sizeof(cli))) {
		note(res, "no ocdir command at %s (OCDIR_HOSTILE_CLI)", cli);
		return 77;
	}
	if (make_base(base, sizeof(base), 0755))
		return 2;
	snprintf(arena, sizeof(arena), "%s/arena", base);
	snprintf(bait, sizeof(bait), "%s/bait-dir", base);
	snprintf(target, sizeof(target), "%s/" TARGET, arena);
	snprintf(uid, sizeof(uid), "%u", (unsigned int)opt.attacker);
	if (mkdir(arena, 0777) || chmod(arena, 0777) || mkdir(bait, 0700) ||
	    chmod(bait, 0700) || stat(bait, &orig) ||
	    (arenafd = open(arena, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rm_tree(base);
		return 2;
	}
	snprintf(res->arena, sizeof(res->arena), "shared");
	set_fs(res, arenafd, "");
	/* the attacker plants its link */
	pid = fork();
	if (pid == 0)
		_exit(drop_to(opt.attacker) || symlinkat(bait, arenafd, TARGET) ? 2 : 0);
	if (pid < 0 || waitpid(pid, &rc, 0) < 0 || !WIFEXITED(rc) || WEXITSTATUS(rc)) {
		close(arenafd);
		rm_tree(base);
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		char *argv[] = { cli, "--apply-existing", "-m", "777", "-o", uid,
				 r % 2 ? "-p" : "-v", target, NULL };

		pid = fork();
		if (pid == 0) {
			int nul = open("/dev/null", O_RDWR);

			if (nul >= 0) {
				dup2(nul, 1);
				dup2(nul, 2);
			}
			execv(cli, argv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &rc, 0) < 0)
			break;
		if (WIFEXITED(rc) && WEXITSTATUS(rc) == 127) {
			res->errors++;
			note(res, "could not run %s", cli);
			break;
		}
		if (WIFEXITED(rc) && WEXITSTATUS(rc) == 0)
			res->created++;	/* the command said yes */
		if (stat(bait, &st) == 0 &&
		    ((st.st_mode & 07777) != (orig.st_mode & 07777) || st.st_uid != orig.st_uid)) {
			res->escapes++;
			if (res->escapes == 1)
				note(res, "the link's target became %o, owner %u",
				     (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
			/* put the bait back for the next round; a failure shows as
			 * another escape there */
			if (chown(bait, orig.st_uid, orig.st_gid) != 0 ||
			    chmod(bait, orig.st_mode & 07777) != 0)
				note(res, "cannot restore %s: %s", bait, strerror(errno));
		}
	}
	res->hits = res->escapes;
	res->rounds = r;
	res->seconds = now() - start;
	close(arenafd);
	rm_tree(base);
	return 0;
}

/* ---- driver ---- */

static int attack_child(const struct attack *at, struct result *res)
{
	if (at->kind == K_SETUP && at->variant == 2) {
		if (ocdir_backend(NULL) != OCDIR_BACKEND_NATIVE) {
			note(res, "no native backend here (a kernel without the ocdir series)");
			return 77;
		}
	} else {
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
	}
	if (at->no_noreplace)
		setenv("OCDIR_TEST_NO_NOREPLACE", "1", 1);
	umask(0);
	switch (at->kind) {
	case K_CHMOD:
	case K_SETGID:
	case K_STAGE:
	case K_SETUP:
	case K_ENOENT:
		return run_race(at, res);
	case K_EMFILE:
		return run_emfile(at, res);
	case K_APPLY:
		return run_apply(at, res);
	case K_OWNER:
		return run_owner(at, res);
	case K_DEEP:
		return run_deep(at, res);
	case K_SUID:
		return run_suid(at, res);
	case K_DISCARD_DEST:
		return run_discard_dest(at, res);
	case K_DISCARD_DEEP:
		return run_discard_deep(at, res);
	case K_LANDLOCK:
		return run_landlock(at, res);
	}
	return 2;
}

static void report(const struct attack *at, int status, struct result *res)
{
	char name[96];

	snprintf(name, sizeof(name), "hostile %s", at->name);
	if (status == 77) {
		t_skip(name, "%s", res->note[0] ? res->note : "cannot run here");
		return;
	}
	if (status != 0) {
		t_fail(name, "could not run (status %d): %s", status, res->note);
		return;
	}
	printf("# RESULT arena=%s variant=hostile-%s fs=%s rounds=%lu hits=%lu escapes=%lu "
	       "wrong=%lu removed=%lu stranded=%lu probes=%lu enoent=%lu leftovers=%lu excused=%lu "
	       "refused=%lu errors=%lu reported=%lu created=%lu inplace=%lu moves=%lu seconds=%.1f "
	       "%s\n",
	       res->arena[0] ? res->arena : "-", at->name, res->fs[0] ? res->fs : "?",
	       res->rounds, res->hits, res->escapes, res->wrong, res->removed, res->stranded,
	       res->probes, res->enoent, res->leftovers, res->excused, res->refused, res->errors,
	       res->reported, res->created, res->inplace, res->moves, res->seconds, res->note);
	T_CHECK(name, !res->hits && res->leftovers == res->excused && !res->errors && res->rounds,
		"%lu rounds: %lu hits (%lu escapes, %lu wrong, %lu removed, %lu stranded, "
		"%lu probes, %lu ENOENT), %lu leftovers, %lu unexpected errors%s%s", res->rounds,
		res->hits, res->escapes, res->wrong, res->removed, res->stranded, res->probes,
		res->enoent, res->leftovers, res->errors, res->note[0] ? ": " : "", res->note);
}

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: hostile [-v ATTACKER,...] [-n ROUNDS] [-t SECONDS] [-d DIR] "
		"[-u UID] [-m MOVES] [-w SPINS] [-q]\nattackers:");
	for (i = 0; i < N_ATTACKS; i++)
		fprintf(stderr, " %s", attacks[i].name);
	fputc('\n', stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct result *res;
	size_t i;
	int c, st;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--suid-child"))
		return suid_child(argv[2]);
	while ((c = getopt(argc, argv, "v:n:t:d:u:m:w:q")) != -1) {
		switch (c) {
		case 'v': opt.only = optarg; break;
		case 'n': opt.rounds = strtoul(optarg, NULL, 0); break;
		case 't': opt.seconds = strtod(optarg, NULL); break;
		case 'd': opt.dir = optarg; break;
		case 'u': opt.attacker = (uid_t)strtoul(optarg, NULL, 0); break;
		case 'm': opt.burst = strtoul(optarg, NULL, 0); break;
		case 'w': opt.dwell = strtoul(optarg, NULL, 0); break;
		case 'q': opt.quiet = 1; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (!opt.dir)
		opt.dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (opt.only)
		for (const char *p = opt.only; *p;) {
			size_t n = strcspn(p, ","), j;

			for (j = 0; j < N_ATTACKS; j++)
				if (strlen(attacks[j].name) == n && !strncmp(attacks[j].name, p, n))
					break;
			if (j == N_ATTACKS)
				usage();
			p += n + (p[n] == ',');
		}
	if (geteuid() != 0) {
		t_skip("hostile", "needs root (the victim is root, the attacker another uid)");
		return t_exit_status();
	}
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	for (i = 0; i < N_ATTACKS; i++) {
		if (!wanted_in(opt.only, attacks[i].name))
			continue;
		memset(res, 0, sizeof(*res));
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			st = attack_child(&attacks[i], res);
			fflush(stdout);
			_exit(st);
		}
		if (waitpid(pid, &st, 0) < 0)
			return 1;
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		report(&attacks[i], st, res);
	}
	printf("%u passed, %u failed, %u skipped\n", t_counts.passed, t_counts.failed,
	       t_counts.skipped);
	return t_exit_status();
}
