/* SPDX-License-Identifier: MIT */
/*
 * tests/race/netfs_race.c - two clients of one network filesystem race on
 * one name: client A creates a directory and takes a descriptor to it,
 * client B (another mount of the same export, another NFS superblock or
 * SMB connection) renames what appears at the name away and plants its
 * own entry there. A's descriptor must always be the directory the server
 * made for A, and "created" must say so.
 *
 *   netfs_race -a DIR_A -b DIR_B [-s SERVER_DIR [-i]] -v VICTIM -p PLANT
 *              [-n ROUNDS] [-t SECONDS] [-x] [-e] [-w MICROSECONDS] [-D N]
 *              [-l LABEL]
 *
 * DIR_A and DIR_B are the same directory seen through the two clients;
 * SERVER_DIR, if given, is that directory in the server's own filesystem
 * (the guest serves its own exports, vm/netfs-up), where the program also
 * checks that A's descriptor is on an inode the server holds at the name A
 * made (or where B moved it).
 *
 * VICTIM: how A creates and opens
 *   native  open(O_CREAT|O_DIRECTORY) (the kernel series), "created" from
 *           fcntl(F_CREATED_QUERY)
 *   lib     ocdir_openat2(), "created" from its out parameter; B then runs
 *           as uid 65534 (the program must run as root): the library
 *           trusts a parent that only its caller's uid can write, and an
 *           attacker of that same uid is outside its model
 *   naive   mkdirat() then openat() by name: the pattern the feature
 *           replaces; must be caught (the test can fail)
 * PLANT: what B puts at the name after moving A's directory away
 *   dir      a directory of its own
 *   symlink  a symbolic link to a directory of its own ("decoy")
 * -x adds O_EXCL to A's call; -e ends a naive run at its first wrong
 * round; -w pauses the naive victim that long between its mkdirat() and
 * its openat(). On SMB, B needs three round trips after the server made
 * the directory (a lookup, the rename, its plant) and A's openat() is
 * the very next request: the bare sequence was first caught in round 237
 * to 5514 of a run, and not in 1000 rounds on the debug kernel. A pause
 * makes a short run show that the check sees the wrong fd there.
 * -i makes B wait for the name to appear in SERVER_DIR (inotify on the
 * server's own directory) before its first rename of a round, instead of
 * retrying the rename from the start of the round: B then moves A's
 * directory within a round trip of the server making it, which is the
 * window where a client that learns the new directory's identity by name
 * gets the wrong one, and spends no CPU on misses (under TCG one SMB
 * round took 25 requests, most of them B's misses). It knows no more than
 * a client polling the directory would, only sooner.
 * -D N drops the machine's page, dentry and inode caches every N rounds,
 * between two rounds (needs root; the guest's own servers). On NFSv3 of an
 * ext4 the rounds slow down as the removed names' inodes pile up in the
 * clients: ext4 gives each new inode the number of one just removed, NFS
 * hashes its inodes by that number (the fileid), and every lookup walks a
 * hash chain of the stale inodes with that fileid. A planted symlink's
 * inode also holds a page (the NFS client caches the target it sent), and
 * an inode with pages is off the inode LRU, so dropping dentries and
 * inodes alone ("2") frees none of them: measured 2026-12-07 under TCG
 * with "2", 89 rounds/s in the first 120 s, 40 after 360 s, 23 on average
 * over an hour, with one client inode more per round.
 *
 * Each round starts with the name absent, so the first entry that appears
 * there is the one A's call made; B moves at most one entry a round. A
 * round is wrong when A's call returns a descriptor that is not a
 * directory, is not that entry's inode, or says "not created". The
 * program prints one PASS or FAIL line: for native and lib PASS means no
 * wrong round and at most 1 % (native) or 10 % (lib) of the calls failed;
 * for naive PASS means at least one wrong round was seen
 * (expected: the naive sequence is unsafe). Exit 0 on PASS, 1 on FAIL,
 * 77 when the victim cannot run here (SKIP line).
 */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <ocdir.h>
#include "../helpers.h"
#include "race.h"

#ifndef F_CREATED_QUERY
#define F_CREATED_QUERY (1024 + 4)	/* F_LINUX_SPECIFIC_BASE + 4, Linux 6.12 */
#endif

enum victim { V_NATIVE, V_LIB, V_NAIVE };
enum plant { P_DIR, P_SYMLINK };

static pid_t run_id;

/* What B tells A about round r, in shared memory. */
struct board {
	_Atomic unsigned int round;	/* A: B may attack the name of this round; 0: quit */
	_Atomic unsigned int done;	/* A: its call of this round returned */
	_Atomic unsigned int ack;	/* B: it stopped attacking this round */
	ino_t moved_ino;		/* what B moved away (A's entry), 0: none */
	ino_t planted_ino;		/* what B planted, 0: nothing */
};

/*
 * The type and inode number of fd as its client last saw them. cifs
 * revalidates an fstat() by path, which fails (ENOENT) once the other
 * client has moved the directory away; the descriptor is still on it, and
 * the inode number cifs holds for it is the server's.
 */
static int fd_identity(int fd, struct stat *st)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &stx) < 0)
		return -1;
	memset(st, 0, sizeof(*st));
	st->st_mode = stx.stx_mode;
	st->st_ino = stx.stx_ino;
	return 0;
}

/*
 * The names of round r: what A makes ("n") and where B moves it ("m").
 * They carry the run's pid: a client may still hold a name of an earlier
 * run in its cache (cifs for a second, actimeo), and a stat through that
 * cache would report the earlier run's inode.
 */
static void name_of(char *buf, size_t size, const char *what, unsigned int r)
{
	snprintf(buf, size, "%s%ld.%u", what, (long)run_id, r);
}

/*
 * Client B: for each round, try to rename the round's name away until it
 * succeeds or A's call has returned, then plant its own entry once. What
 * it moved and planted is read through view: the server's own directory
 * when the test has it (no client cache between), else B's mount.
 *
 * A failed rename makes B's client remember the name as absent (a
 * negative dentry; NFSv4 keeps one until the parent's attributes expire,
 * 30 s and more), and its next tries would fail without asking the
 * server. An attacker does not wait for that: after each miss B asks the
 * server for the parent's attributes, which drops the remembered absence
 * as soon as the parent changed.
 *
 * With watch >= 0 (-i: an inotify descriptor on the server's directory),
 * B first waits until the round's name appears there or A's call returns.
 * Events of earlier rounds (B's own plants) carry other names.
 */
static int is_name(const struct inotify_event *ev, void *name)
{
	return ev->len && !strcmp(ev->name, name);
}

static void wait_for_name(int watch, struct board *bd, unsigned int r, char *name)
{
	struct pollfd p = { .fd = watch, .events = POLLIN };

	/* A's "done" is a futex word, not a descriptor: poll in short steps */
	while (atomic_load(&bd->done) != r && t_each_inotify_event(watch, is_name, name) <= 0)
		poll(&p, 1, 2);
}

static void attacker(struct board *bd, int dirb, int view, enum plant plant, int watch,
		     uid_t as_uid)
{
	unsigned int r = 0;
	char name[32], moved[32];
	struct statx parent;
	struct stat st;
	int idle = 0;

	/* Unable to be the other user: answer the rounds, move nothing (FAIL). */
	if (as_uid && drop_to(as_uid) < 0) {
		perror("netfs_race: client B cannot become uid 65534");
		idle = 1;
	}

	for (;;) {
		wait_while_eq(&bd->round, r);
		r = atomic_load(&bd->round);
		if (r == 0)
			_exit(0);
		name_of(name, sizeof(name), "n", r);
		name_of(moved, sizeof(moved), "m", r);
		if (watch >= 0 && !idle)
			wait_for_name(watch, bd, r, name);
		while (!idle && atomic_load(&bd->done) != r) {
			if (renameat(dirb, name, dirb, moved) < 0) {
				statx(dirb, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_CTIME,
				      &parent);
				continue;
			}
			if (fstatat(view, moved, &st, AT_SYMLINK_NOFOLLOW) == 0)
				bd->moved_ino = st.st_ino;
			if (plant == P_DIR) {
				if (mkdirat(dirb, name, 0755) == 0 &&
				    fstatat(view, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
					bd->planted_ino = st.st_ino;
			} else {
				if (symlinkat("decoy", dirb, name) == 0 &&
				    fstatat(view, "decoy", &st, 0) == 0)
					bd->planted_ino = st.st_ino;
			}
			break;
		}
		publish(&bd->ack, r);
	}
}

/* Client A's call: a descriptor or -errno, *created as the call says. */
static int victim_call(enum victim v, int dira, const char *name, int excl, int *created,
		       unsigned int pause_us)
{
	int fd, c;

	switch (v) {
	case V_NATIVE:
		fd = openat(dira, name, O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC |
			    (excl ? O_EXCL : 0), 0755);
		if (fd < 0)
			return -errno;
		c = fcntl(fd, F_CREATED_QUERY, 0);
		*created = c > 0;
		return fd;
	case V_LIB: {
		struct ocdir_how how = { .flags = excl ? O_EXCL : 0, .mode = 0755 };

		fd = ocdir_openat2(dira, name, &how, sizeof(how), created);
		return fd < 0 ? -errno : fd;
	}
	case V_NAIVE:
		*created = mkdirat(dira, name, 0755) == 0;
		if (!*created && (errno != EEXIST || excl))
			return -errno;
		if (pause_us)
			usleep(pause_us);
		fd = openat(dira, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return -EINVAL;
}

/*
 * Remove whatever a round left, B paused. In the server's own directory
 * when the test has it: a local rmdir there costs a fraction of two
 * rmdirs over the wire (two thirds of an SMB round under TCG), and the
 * clients never look at this round's names again. cifs' symlinks
 * (mfsymlinks) are regular files on the server.
 */
static void clean_round(int dir, unsigned int r)
{
	char name[32], moved[32];

	name_of(name, sizeof(name), "n", r);
	name_of(moved, sizeof(moved), "m", r);
	if (unlinkat(dir, name, AT_REMOVEDIR) < 0)
		unlinkat(dir, name, 0);
	unlinkat(dir, moved, AT_REMOVEDIR);
}

/*
 * Between two rounds (-D): the dentries and inodes of every removed name,
 * and first the pages that keep a symlink's inode off the inode LRU.
 */
static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "3", 1) != 1)
			perror("netfs_race: drop_caches");
		close(fd);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: netfs_race -a DIR_A -b DIR_B [-s SERVER_DIR [-i]] -v native|lib|naive\n"
			"                  -p dir|symlink [-n ROUNDS] [-t SECONDS] [-x] [-e] [-l LABEL]\n"
			"                  [-w MICROSECONDS] [-D N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir_a = NULL, *dir_b = NULL, *srv = NULL, *vname = NULL, *pname = NULL;
	const char *label = "netfs race";
	unsigned long rounds = 10000, r, moves = 0, wrong_fd = 0, wrong_created = 0;
	unsigned long errors = 0, wrong_server = 0;
	double limit = 600, start;
	int opt, excl = 0, stop_at_first = 0, dira, dirb, dirs = -1, view, first_err = 0;
	int watch_server = 0, watch = -1;
	unsigned int pause_us = 0;
	unsigned long drop_every = 0;
	enum victim victim = V_NATIVE;
	enum plant plant = P_DIR;
	char test[256], first_wrong[160] = "";
	struct board *bd;
	pid_t pid;
	int status;

	while ((opt = getopt(argc, argv, "a:b:s:iv:p:n:t:xel:w:D:")) != -1) {
		switch (opt) {
		case 'a': dir_a = optarg; break;
		case 'b': dir_b = optarg; break;
		case 's': srv = optarg; break;
		case 'i': watch_server = 1; break;
		case 'v': vname = optarg; break;
		case 'p': pname = optarg; break;
		case 'n': rounds = strtoul(optarg, NULL, 10); break;
		case 't': limit = strtod(optarg, NULL); break;
		case 'x': excl = 1; break;
		case 'e': stop_at_first = 1; break;
		case 'l': label = optarg; break;
		case 'w': pause_us = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'D': drop_every = strtoul(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (!dir_a || !dir_b || !vname || !pname || rounds == 0 || rounds > 100000000 ||
	    (watch_server && !srv))
		usage();
	if (!strcmp(vname, "native"))
		victim = V_NATIVE;
	else if (!strcmp(vname, "lib"))
		victim = V_LIB;
	else if (!strcmp(vname, "naive"))
		victim = V_NAIVE;
	else
		usage();
	if (!strcmp(pname, "dir"))
		plant = P_DIR;
	else if (!strcmp(pname, "symlink"))
		plant = P_SYMLINK;
	else
		usage();
	snprintf(test, sizeof(test), "%s: %s, %s planted%s", label, vname, pname,
		 excl ? ", O_EXCL" : "");

	dira = open(dir_a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dirb = open(dir_b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dira < 0 || dirb < 0) {
		t_fail(test, "cannot open %s or %s: %s", dir_a, dir_b, strerror(errno));
		return T_EXIT_FAIL;
	}
	if (srv) {
		dirs = open(srv, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirs < 0) {
			t_fail(test, "cannot open the server's %s: %s", srv, strerror(errno));
			return T_EXIT_FAIL;
		}
	}
	if (victim == V_NATIVE) {
		int err = 0;

		if (!t_kernel_creates_dirs(dira, &err)) {
			t_skip(test, "the kernel has no O_CREAT|O_DIRECTORY (probe: %s)",
			       t_errname(err));
			return T_EXIT_SKIP;
		}
	}
	if (victim == V_LIB && geteuid() != 0) {
		t_skip(test, "the lib victim needs root, to run client B as another uid "
			     "(the library trusts a parent only its caller's uid can write)");
		return T_EXIT_SKIP;
	}
	if (plant == P_SYMLINK && mkdirat(dira, "decoy", 0755) < 0 && errno != EEXIST) {
		t_fail(test, "cannot make the decoy: %s", strerror(errno));
		return T_EXIT_FAIL;
	}

	if (watch_server) {
		watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (watch < 0 || inotify_add_watch(watch, srv, IN_CREATE) < 0) {
			t_fail(test, "cannot watch %s: %s", srv, strerror(errno));
			return T_EXIT_FAIL;
		}
	}
	view = dirs >= 0 ? dirs : dira;
	run_id = getpid();
	bd = mmap(NULL, sizeof(*bd), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (bd == MAP_FAILED) {
		t_fail(test, "mmap: %s", strerror(errno));
		return T_EXIT_FAIL;
	}
	memset(bd, 0, sizeof(*bd));
	pid = fork();
	if (pid < 0) {
		t_fail(test, "fork: %s", strerror(errno));
		return T_EXIT_FAIL;
	}
	if (pid == 0)
		attacker(bd, dirb, dirs >= 0 ? dirs : dirb, plant, watch,
			 victim == V_LIB ? 65534 : 0);

	start = now();
	for (r = 1; r <= rounds && now() - start < limit; r++) {
		char name[32], moved[32];
		struct stat st, made;
		ino_t made_ino = 0;
		int fd, created = -1;

		name_of(name, sizeof(name), "n", r);
		name_of(moved, sizeof(moved), "m", r);
		bd->moved_ino = 0;
		bd->planted_ino = 0;
		publish(&bd->round, r);
		fd = victim_call(victim, dira, name, excl, &created, pause_us);
		atomic_store(&bd->done, r);
		wait_until_eq(&bd->ack, r);

		/* The entry A's call made: what B moved away, or what is there. */
		if (bd->moved_ino) {
			made_ino = bd->moved_ino;
			moves++;
		} else if (fstatat(view, name, &made, AT_SYMLINK_NOFOLLOW) == 0 &&
			   S_ISDIR(made.st_mode)) {
			made_ino = made.st_ino;
		}
		if (fd < 0) {
			if (!first_err)
				first_err = -fd;
			errors++;
		} else if (fd_identity(fd, &st) < 0) {
			if (!wrong_fd++)
				snprintf(first_wrong, sizeof(first_wrong),
					 "round %lu: statx of the fd: %s", r, strerror(errno));
		} else if (!S_ISDIR(st.st_mode) || st.st_ino != made_ino) {
			if (!wrong_fd++)
				snprintf(first_wrong, sizeof(first_wrong),
					 "round %lu: fd on inode %lu, A made %lu, B planted %lu",
					 r, (unsigned long)st.st_ino, (unsigned long)made_ino,
					 (unsigned long)bd->planted_ino);
		} else if (created != 1) {
			if (!wrong_created++ && !first_wrong[0])
				snprintf(first_wrong, sizeof(first_wrong),
					 "round %lu: its own new directory reported as not created", r);
		} else if (dirs >= 0) {
			/* The server holds that inode at the name or where B put it. */
			struct stat s1, s2;
			int at_name = fstatat(dirs, name, &s1, AT_SYMLINK_NOFOLLOW) == 0 &&
				      s1.st_ino == st.st_ino;
			int at_moved = fstatat(dirs, moved, &s2, AT_SYMLINK_NOFOLLOW) == 0 &&
				       s2.st_ino == st.st_ino;

			if (!at_name && !at_moved && !wrong_server++ && !first_wrong[0])
				snprintf(first_wrong, sizeof(first_wrong),
					 "round %lu: fd on inode %lu, which the server has at neither name",
					 r, (unsigned long)st.st_ino);
		}
		if (fd >= 0)
			close(fd);
		clean_round(view, r);
		if (drop_every && r % drop_every == 0)
			drop_caches();
		/* The naive sequence is there to be caught: once is enough. */
		if (victim == V_NAIVE && stop_at_first && wrong_fd + wrong_created > 0) {
			r++;
			break;
		}
	}
	publish(&bd->round, 0);
	waitpid(pid, &status, 0);
	if (plant == P_SYMLINK)
		unlinkat(dira, "decoy", AT_REMOVEDIR);
	r--;

	printf("# %s: %lu rounds in %.1f s, %lu moved by B, %lu wrong fds, %lu wrong \"created\", "
	       "%lu not on the server, %lu errors%s%s\n", test, r, now() - start, moves,
	       wrong_fd, wrong_created, wrong_server, errors, first_err ? ", first: " : "",
	       first_err ? t_errname(first_err) : "");
	if (victim != V_NAIVE && r < rounds)
		printf("# %s: the %.0f s bound stopped it at %lu of %lu rounds\n", test, limit, r,
		       rounds);
	if (victim == V_NAIVE) {
		if (wrong_fd + wrong_created > 0) {
			printf("# %s: first: %s\n", test, first_wrong);
			t_pass(test);
			return T_EXIT_PASS;
		}
		t_fail(test, "the naive sequence was never caught in %lu rounds (%lu moves): "
			     "the attack does not reach the window", r, moves);
		return T_EXIT_FAIL;
	}
	if (victim == V_LIB && errors == r && first_err == EOPNOTSUPP) {
		/* Documented: no RENAME_NOREPLACE here, shared parents refused. */
		t_skip(test, "the emulation refuses a shared parent on this filesystem "
			     "(EOPNOTSUPP: no RENAME_NOREPLACE; docs/library.md)");
		return T_EXIT_SKIP;
	}
	if (wrong_fd + wrong_created + wrong_server > 0) {
		t_fail(test, "%lu wrong fds, %lu wrong \"created\", %lu not on the server in %lu rounds; %s",
		       wrong_fd, wrong_created, wrong_server, r, first_wrong);
		return T_EXIT_FAIL;
	}
	if (moves == 0) {
		t_fail(test, "B never moved an entry in %lu rounds: the race was not run", r);
		return T_EXIT_FAIL;
	}
	/*
	 * A native call that fails once its directory exists leaves it
	 * behind: the series before its SMB patches failed 929 of 10^4 calls
	 * with ENOENT (its relookup found B's symlink or nothing) and gave 0
	 * wrong fds. Each round is a fresh name, so a failure is the call's.
	 * The library may answer EAGAIN when it loses a staging race
	 * (documented): it gets more room.
	 */
	if (errors * (victim == V_NATIVE ? 100 : 10) > r) {
		t_fail(test, "%lu of %lu calls failed (first: %s)", errors, r, t_errname(first_err));
		return T_EXIT_FAIL;
	}
	t_pass(test);
	return T_EXIT_PASS;
}
