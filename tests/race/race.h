/* SPDX-License-Identifier: MIT */
/*
 * tests/race/race.h - what the two race programs share: tests/race/race.c
 * (the race torture) and tests/race/hostile.c (the hostile-user
 * attackers). Both run a root victim against an attacker process of
 * another uid, paused between rounds through the same futex protocol, and
 * clean up and label their arenas the same way. Kept here so that the
 * protocol cannot drift apart between them; what every test program
 * shares is in tests/helpers.h.
 */
#ifndef OCDIR_TESTS_RACE_H
#define OCDIR_TESTS_RACE_H

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the pause protocol ---- */

/*
 * The victim publishes a generation in gen: even = the attacker runs, odd
 * = it pauses (between two of its moves, so that every swap is undone),
 * GEN_QUIT = it exits. The attacker answers each generation in ack.
 */
#define GEN_QUIT (~0U)
struct shared {
	_Atomic unsigned int gen;	/* futex words are 32 bits */
	_Atomic unsigned int ack;
	_Atomic unsigned long moves;	/* attacker moves that changed something */
};

static inline void futex_wait(_Atomic unsigned int *p, unsigned int v)
{
	syscall(SYS_futex, p, FUTEX_WAIT, v, NULL, NULL, 0);
}

static inline void publish(_Atomic unsigned int *p, unsigned int v)
{
	atomic_store_explicit(p, v, memory_order_release);
	syscall(SYS_futex, p, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * Spin a little (the other side is usually on the other CPU and answers
 * within microseconds), then sleep on the futex: sched_yield() on a loaded
 * machine hands the CPU to anyone else for a whole slice.
 */
static inline void wait_while_eq(_Atomic unsigned int *p, unsigned int v)
{
	unsigned int n = 0;

	while (atomic_load_explicit(p, memory_order_acquire) == v)
		if (++n > 2000)
			futex_wait(p, v);
}

static inline void wait_until_eq(_Atomic unsigned int *p, unsigned int v)
{
	unsigned int n = 0, cur;

	while ((cur = atomic_load_explicit(p, memory_order_acquire)) != v)
		if (++n > 2000)
			futex_wait(p, cur);
}

/*
 * The protocol's page, shared with the attacker child forked next: gen 1
 * (paused) until the first round, ack 0 until the attacker is in its loop.
 * NULL if it cannot be mapped.
 */
static inline struct shared *shared_map(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sh == MAP_FAILED)
		return NULL;
	atomic_store(&sh->gen, 1);
	atomic_store(&sh->ack, 0);
	return sh;
}

/* Round `round` begins: the attacker runs (and has said so) from here. */
static inline void round_run(struct shared *sh, unsigned int round)
{
	publish(&sh->gen, 2 * round + 2);
	wait_until_eq(&sh->ack, 2 * round + 2);
}

/* Round `round` ends: the attacker has undone its moves and waits. */
static inline void round_pause(struct shared *sh, unsigned int round)
{
	publish(&sh->gen, 2 * round + 3);
	wait_until_eq(&sh->ack, 2 * round + 3);
}

/*
 * Keep a swapped state for `spins` spins (as long as an attacker likes),
 * but give way at once when the victim pauses generation g.
 */
static inline void dwell(struct shared *sh, unsigned int g, unsigned long spins)
{
	unsigned long n;

	for (n = 0; n < spins; n++)
		if (atomic_load_explicit(&sh->gen, memory_order_relaxed) != g)
			break;
}

/*
 * One attacker move in round generation g (even): 1 if it changed
 * something. A move either fails at its first step or undoes itself
 * before it returns, unless settle (below) undoes it.
 */
typedef int attack_move_fn(void *arena, struct shared *sh, unsigned int g);
/* Before a pause is acknowledged: undo what the moves left (or NULL). */
typedef void attack_settle_fn(void *arena);

/*
 * The attacker's side of the protocol, in the attacker's process, until
 * GEN_QUIT: up to max_burst moves a round while gen is even, each
 * generation acknowledged in ack (with the move count), at a pause only
 * once every swap is undone.
 */
static inline void attacker_loop(struct shared *sh, unsigned long max_burst,
				 attack_move_fn *move, attack_settle_fn *settle, void *arena)
{
	unsigned long moves = 0, burst = 0;
	unsigned int g;

	for (;;) {
		g = atomic_load_explicit(&sh->gen, memory_order_acquire);
		if (g == GEN_QUIT)
			break;
		/*
		 * A bounded burst per round: on a shared core an endless burst
		 * would keep the victim off the CPU for a whole time slice.
		 * One kind of move per round, repeated: a round is short.
		 */
		if (!(g & 1) && burst < max_burst) {
			moves += (unsigned long)move(arena, sh, g);
			burst++;
		}
		if (atomic_load_explicit(&sh->ack, memory_order_relaxed) != g) {
			/* Paused, or running and hot: the victim waits for this. */
			if ((g & 1) && settle)
				settle(arena);
			atomic_store_explicit(&sh->moves, moves, memory_order_relaxed);
			publish(&sh->ack, g);
		}
		if ((g & 1) || burst >= max_burst) {
			wait_while_eq(&sh->gen, g);
			burst = 0;
		}
	}
}

/* The victim is done: the attacker exits at its next look at gen. */
static inline void stop_attacker(struct shared *sh, pid_t pid)
{
	publish(&sh->gen, GEN_QUIT);
	waitpid(pid, NULL, 0);
}

/* ---- small tools ---- */

/*
 * A directory stream on what dirfd refers to, from its own descriptor
 * (dirfd stays open and keeps its offset), or NULL.
 */
static inline DIR *opendir_fd(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);

	if (!dir && fd >= 0)
		close(fd);
	return dir;
}

static inline int xchg(int d, const char *a, const char *b)
{
	return renameat2(d, a, d, b, RENAME_EXCHANGE);
}

/* The attacker's identity: no groups of root's, real, effective, saved. */
static inline int drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return 0;
}

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Best effort, without following links: a test's debris, whatever it is. */
static inline void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The filesystem's name for the result lines (its magic number if unknown). */
static inline const char *fs_name(int fd, char *buf, size_t size)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return "?";
	switch ((unsigned long)sfs.f_type) {
	case 0x01021994: return "tmpfs";
	case 0xEF53: return "ext4";
	case 0x01021997: return "9p";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x65735546: return "fuse";
	}
	snprintf(buf, size, "0x%lx", (unsigned long)sfs.f_type);
	return buf;
}

/* Is `name` one of the comma-separated `list` (-v)? A NULL list has all. */
static inline int wanted_in(const char *list, const char *name)
{
	const char *p = list;
	size_t n = strlen(name);

	if (!p)
		return 1;
	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

#endif /* OCDIR_TESTS_RACE_H */
