/* SPDX-License-Identifier: MIT */
/*
 * bench/ocdir_bench.c - what does create-and-open of a directory cost, next
 * to a bare mkdirat(2) and to what careful programs do today?
 *
 *   ocdir_bench [--smoke] [--set issue7|issue14|all] [--csv FILE]
 *               [--label NAME] [--ops N] [--reps N] DIR...
 *
 * Every variant (see the table `variants` below, or --list) runs in batches.
 * A batch is one fresh child process (forked from this driver, so that
 * libocdir's once-per-process backend choice can differ per variant) with
 * 1 or 2 threads; each thread first does a few untimed warm-up operations,
 * then all threads start together (barrier) and time N operations each,
 * reading CLOCK_MONOTONIC once between two operations. Everything a variant
 * creates is removed, and every descriptor it gets is closed, after the
 * timed phase, once all threads have finished it (a second barrier).
 *
 * Repetitions are round-robin: each repetition runs one batch of every
 * variant, the baseline (a) included, in a rotated order. Ratios are taken
 * per repetition between batches of the same repetition and then the median
 * over repetitions is reported, so that a machine whose speed drifts (other
 * jobs, QEMU TCG) moves numerator and denominator together.
 *
 * Variant sets (--set): issue7 (the default: (a)-(g4), what `make bench`
 * has always measured), issue14 (the cost of the hardened emulation:
 * new directories in private, sticky and shared parents, existing
 * directories, mkpath over an existing path, each with its baseline) and
 * all. Every set has (a) and (c), the CSV's two ratio columns.
 *
 * Output: a human-readable report on stdout, "PASS: ..."/"MISS: ..." lines
 * for the targets of issues 7 and 14 (informational only), and the CSV rows
 *   fs,threads,parents,variant,ops_per_s,p50_ns,p99_ns,ratio_vs_a,ratio_vs_c
 * to FILE (or, without --csv, to stdout after a "# csv" line).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ocdir.h"

#include "../tests/helpers.h"

#define MAX_THREADS	2
#define MAX_REPS	31
#define MKPATH_DEPTH	5
#define DIR_MODE	0755
#define NAME_LEN	48
/* An existing MKPATH_DEPTH-level path in every private parent. */
#define DEEP_PATH	"deep/b/c/d/e"

/* Which variant set a variant belongs to (--set). */
#define SET_ISSUE7	1u
#define SET_ISSUE14	2u

/*
 * The parent a variant works in. Private: the caller's, mode 0755 (the
 * emulation creates in place). Sticky: the caller's, mode 1777 (in place
 * too). Shared: the caller's, mode 0777, not sticky (the emulation stages).
 */
enum parent_kind { PARENT_PRIVATE, PARENT_STICKY, PARENT_SHARED, NPARENT_KINDS };

enum lib_mode {
	LIB_NONE,		/* the variant does not call libocdir */
	LIB_NATIVE,		/* libocdir, default mode, must probe native */
	LIB_EMULATED,		/* libocdir with OCDIR_FORCE_EMULATION=1 */
};

enum target_kind {
	CREATE_ONE,		/* creates names[i] */
	OPEN_EXISTING,		/* opens the existing directory "existing" */
	CREATE_PATH,		/* creates the MKPATH_DEPTH levels of paths[i] */
};

struct worker {
	int parentfd;
	int nops;
	char (*names)[NAME_LEN];	/* one per operation */
	int *fds;			/* what each operation returned, or -1 */
	uint64_t *ts;			/* nops + 1 timestamps */
	const char *failed;		/* the call that failed, for the report */
	int err;
};

struct variant {
	const char *name;
	const char *timed;		/* what one timed operation is */
	int (*op)(struct worker *w, int i);	/* 0 or -errno */
	enum lib_mode lib;
	int needs_native;		/* needs kernel O_CREAT|O_DIRECTORY */
	enum target_kind target;
	unsigned int sets;		/* SET_* it belongs to */
	enum parent_kind parent;
};

/* ---- the timed operations: one call of each returns 0 or -errno ---- */

static int fail(struct worker *w, const char *call)
{
	w->failed = call;
	w->err = errno;
	return -errno;
}

static int op_mkdirat(struct worker *w, int i)
{
	if (mkdirat(w->parentfd, w->names[i], DIR_MODE) < 0)
		return fail(w, "mkdirat");
	return 0;
}

static int op_native_openat(struct worker *w, int i)
{
	w->fds[i] = openat(w->parentfd, w->names[i],
			   O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, DIR_MODE);
	return w->fds[i] < 0 ? fail(w, "openat(O_CREAT|O_DIRECTORY)") : 0;
}

/* What a careful program does today: create, open without following, check. */
static int op_mkdir_open_fstat(struct worker *w, int i)
{
	struct stat st;

	if (mkdirat(w->parentfd, w->names[i], DIR_MODE) < 0)
		return fail(w, "mkdirat");
	w->fds[i] = openat(w->parentfd, w->names[i],
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->fds[i] < 0)
		return fail(w, "openat(O_DIRECTORY|O_NOFOLLOW)");
	if (fstat(w->fds[i], &st) < 0)
		return fail(w, "fstat");
	return 0;
}

static int op_ocdir_openat(struct worker *w, int i)
{
	w->fds[i] = ocdir_openat(w->parentfd, w->names[i], 0, DIR_MODE);
	return w->fds[i] < 0 ? fail(w, "ocdir_openat") : 0;
}

/*
 * The bare staging sequence in a shared parent, without one check: a
 * private directory made and opened, the new one made and opened in it,
 * renamed into place (RENAME_NOREPLACE), the private one removed. What any
 * design that hides the new directory until it is opened pays: the floor
 * under (e3).
 */
static int op_staging_floor(struct worker *w, int i)
{
	char stage[NAME_MAX + 1];
	int sfd;

	snprintf(stage, sizeof(stage), ".stage.%s", w->names[i]);
	if (mkdirat(w->parentfd, stage, 0700) < 0)
		return fail(w, "mkdirat (staging)");
	sfd = openat(w->parentfd, stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return fail(w, "openat (staging)");
	if (mkdirat(sfd, w->names[i], DIR_MODE) < 0) {
		close(sfd);
		return fail(w, "mkdirat (in staging)");
	}
	w->fds[i] = openat(sfd, w->names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->fds[i] < 0 ||
	    renameat2(sfd, w->names[i], w->parentfd, w->names[i], RENAME_NOREPLACE) < 0) {
		close(sfd);
		return fail(w, "openat or renameat2 (staging)");
	}
	close(sfd);
	return unlinkat(w->parentfd, stage, AT_REMOVEDIR) < 0 ? fail(w, "rmdir (staging)") : 0;
}

static int op_open_existing(struct worker *w, int i)
{
	w->fds[i] = openat(w->parentfd, "existing", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return w->fds[i] < 0 ? fail(w, "openat(O_DIRECTORY)") : 0;
}

static int op_creat_existing(struct worker *w, int i)
{
	w->fds[i] = openat(w->parentfd, "existing",
			   O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, DIR_MODE);
	return w->fds[i] < 0 ? fail(w, "openat(O_CREAT|O_DIRECTORY) existing") : 0;
}

static int op_ocdir_existing(struct worker *w, int i)
{
	w->fds[i] = ocdir_openat(w->parentfd, "existing", 0, DIR_MODE);
	return w->fds[i] < 0 ? fail(w, "ocdir_openat existing") : 0;
}

/*
 * mkdir -p as programs write it: mkdirat of every prefix, from the top,
 * an existing level (EEXIST) is fine. The path's slashes are cut in place
 * so that nothing is copied inside the timed region.
 */
static int mkdir_p(struct worker *w, int i)
{
	char *path = w->names[i], *p;

	for (p = path;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (*p == '/') {
			*p = '\0';
			if (mkdirat(w->parentfd, path, DIR_MODE) < 0 && errno != EEXIST) {
				*p = '/';
				return fail(w, "mkdirat (mkdir -p)");
			}
			*p = '/';
			continue;
		}
		if (mkdirat(w->parentfd, path, DIR_MODE) < 0 && errno != EEXIST)
			return fail(w, "mkdirat (mkdir -p)");
		return 0;
	}
}

static int op_mkdir_p(struct worker *w, int i)
{
	return mkdir_p(w, i);
}

static int op_mkdir_p_open(struct worker *w, int i)
{
	struct stat st;
	int r = mkdir_p(w, i);

	if (r)
		return r;
	w->fds[i] = openat(w->parentfd, w->names[i],
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->fds[i] < 0)
		return fail(w, "openat leaf");
	if (fstat(w->fds[i], &st) < 0)
		return fail(w, "fstat leaf");
	return 0;
}

static int op_ocdir_mkpath(struct worker *w, int i)
{
	static const struct ocdir_how how = { .mode = DIR_MODE };

	w->fds[i] = ocdir_mkpath(w->parentfd, w->names[i], &how, sizeof(how), NULL);
	return w->fds[i] < 0 ? fail(w, "ocdir_mkpath") : 0;
}

/*
 * What a program that only needs the fd of an existing path does: one
 * openat per level, each relative to the previous level's descriptor,
 * closed once the next one is open. The levels above the leaf are only
 * walked through (O_PATH, as ocdir_mkpath opens them); the leaf is opened
 * for real, since ocdir_mkpath returns a readable descriptor.
 */
static int op_walk_existing(struct worker *w, int i)
{
	static const char *const level[MKPATH_DEPTH] = { "deep", "b", "c", "d", "e" };
	int k, fd = w->parentfd, next;

	for (k = 0; k < MKPATH_DEPTH; k++) {
		next = openat(fd, level[k], k + 1 < MKPATH_DEPTH ?
			      O_PATH | O_DIRECTORY | O_CLOEXEC :
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd != w->parentfd)
			close(fd);
		if (next < 0)
			return fail(w, "openat (walk)");
		fd = next;
	}
	w->fds[i] = fd;
	return 0;
}

static int op_ocdir_mkpath_existing(struct worker *w, int i)
{
	static const struct ocdir_how how = { .mode = DIR_MODE };

	w->fds[i] = ocdir_mkpath(w->parentfd, DEEP_PATH, &how, sizeof(how), NULL);
	return w->fds[i] < 0 ? fail(w, "ocdir_mkpath existing") : 0;
}

#define I7	SET_ISSUE7
#define I14	SET_ISSUE14
static const struct variant variants[] = {
	{ "a_mkdirat", "mkdirat(parent, name)",
	  op_mkdirat, LIB_NONE, 0, CREATE_ONE, I7 | I14, PARENT_PRIVATE },
	{ "b_native_openat", "openat(parent, name, O_CREAT|O_DIRECTORY) (fd closed untimed)",
	  op_native_openat, LIB_NONE, 1, CREATE_ONE, I7, PARENT_PRIVATE },
	{ "c_mkdir_open_fstat", "mkdirat + openat(O_DIRECTORY|O_NOFOLLOW) + fstat (fd closed untimed)",
	  op_mkdir_open_fstat, LIB_NONE, 0, CREATE_ONE, I7 | I14, PARENT_PRIVATE },
	{ "d_ocdir_native", "ocdir_openat(parent, name), native backend (fd closed untimed)",
	  op_ocdir_openat, LIB_NATIVE, 1, CREATE_ONE, I7, PARENT_PRIVATE },
	{ "e_ocdir_emulated", "ocdir_openat(parent, name), OCDIR_FORCE_EMULATION=1 (fd closed untimed)",
	  op_ocdir_openat, LIB_EMULATED, 0, CREATE_ONE, I7 | I14, PARENT_PRIVATE },
	{ "f1_open_existing", "openat(parent, \"existing\", O_DIRECTORY) (fd closed untimed)",
	  op_open_existing, LIB_NONE, 0, OPEN_EXISTING, I7 | I14, PARENT_PRIVATE },
	{ "f2_creat_existing", "openat(parent, \"existing\", O_CREAT|O_DIRECTORY) (fd closed untimed)",
	  op_creat_existing, LIB_NONE, 1, OPEN_EXISTING, I7, PARENT_PRIVATE },
	{ "f3_ocdir_native_existing", "ocdir_openat(parent, \"existing\"), native (fd closed untimed)",
	  op_ocdir_existing, LIB_NATIVE, 1, OPEN_EXISTING, I7, PARENT_PRIVATE },
	{ "f4_ocdir_emulated_existing", "ocdir_openat(parent, \"existing\"), emulated (fd closed untimed)",
	  op_ocdir_existing, LIB_EMULATED, 0, OPEN_EXISTING, I7 | I14, PARENT_PRIVATE },
	{ "g1_mkdir_p", "mkdir -p of a new 5-level path: 5 x mkdirat, no fd",
	  op_mkdir_p, LIB_NONE, 0, CREATE_PATH, I7, PARENT_PRIVATE },
	{ "g2_mkdir_p_open_fstat", "mkdir -p (5 levels) + openat(leaf, O_DIRECTORY|O_NOFOLLOW) + fstat",
	  op_mkdir_p_open, LIB_NONE, 0, CREATE_PATH, I7 | I14, PARENT_PRIVATE },
	{ "g3_ocdir_mkpath_native", "ocdir_mkpath of a new 5-level path, native (leaf fd closed untimed)",
	  op_ocdir_mkpath, LIB_NATIVE, 1, CREATE_PATH, I7 | I14, PARENT_PRIVATE },
	{ "g4_ocdir_mkpath_emulated", "ocdir_mkpath of a new 5-level path, emulated (leaf fd closed untimed)",
	  op_ocdir_mkpath, LIB_EMULATED, 0, CREATE_PATH, I7, PARENT_PRIVATE },
	{ "e2_ocdir_emulated_sticky", "ocdir_openat(parent, name), emulated, parent 1777 (fd closed untimed)",
	  op_ocdir_openat, LIB_EMULATED, 0, CREATE_ONE, I14, PARENT_STICKY },
	{ "e3_ocdir_emulated_shared", "ocdir_openat(parent, name), emulated, parent 0777 (fd closed untimed)",
	  op_ocdir_openat, LIB_EMULATED, 0, CREATE_ONE, I14, PARENT_SHARED },
	{ "h1_walk_existing", "5 x openat of an existing 5-level path, level by level (leaf fd closed untimed)",
	  op_walk_existing, LIB_NONE, 0, OPEN_EXISTING, I14, PARENT_PRIVATE },
	{ "h2_ocdir_mkpath_emulated_existing", "ocdir_mkpath of an existing 5-level path, emulated (leaf fd closed untimed)",
	  op_ocdir_mkpath_existing, LIB_EMULATED, 0, OPEN_EXISTING, I14, PARENT_PRIVATE },
	{ "h3_ocdir_mkpath_native_existing", "ocdir_mkpath of an existing 5-level path, native (leaf fd closed untimed)",
	  op_ocdir_mkpath_existing, LIB_NATIVE, 1, OPEN_EXISTING, I14, PARENT_PRIVATE },
	{ "e4_staging_floor", "bare staging: mkdirat+openat of a private dir, mkdirat+openat in it, renameat2 NOREPLACE, rmdir; parent 0777, no check",
	  op_staging_floor, LIB_NONE, 0, CREATE_ONE, I14, PARENT_SHARED },
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

#undef I7
#undef I14

enum { V_A, V_B, V_C, V_D, V_E, V_F1, V_F2, V_F3, V_F4, V_G1, V_G2, V_G3, V_G4,
       V_E2, V_E3, V_H1, V_H2, V_H3, V_E4 };

/* ---- one batch, in a child process ---- */

struct batch {
	const struct variant *v;
	int nthreads;
	int nwarm;		/* untimed warm-up operations, per thread */
	struct worker w[MAX_THREADS];
	int arrived;		/* spin barrier before the timed phase */
	pthread_barrier_t done;
};

struct thread_arg {
	struct batch *b;
	struct worker *w;
};

/*
 * The clock. CLOCK_MONOTONIC where it has a fine resolution; where it does
 * not (a guest kernel that found no usable clocksource runs on jiffies,
 * 4 ms steps and a system call per read) the CPU's time-stamp counter,
 * calibrated against CLOCK_MONOTONIC. Timestamps are in "ticks" of either;
 * tick_ns converts. Ratios do not depend on the calibration.
 */
static int use_tsc;
static double tick_ns = 1.0;

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t now_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (use_tsc)
		return __builtin_ia32_rdtsc();
#endif
	return mono_ns();
}

/* Start and end on a step of CLOCK_MONOTONIC so that its coarseness cancels. */
static void calibrate_tsc(double seconds)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t m0, m1, m2, t1, t2;

	m0 = mono_ns();
	while ((m1 = mono_ns()) == m0)
		;
	t1 = __builtin_ia32_rdtsc();
	while (mono_ns() - m1 < (uint64_t)(seconds * 1e9))
		;
	m0 = mono_ns();
	while ((m2 = mono_ns()) == m0)
		;
	t2 = __builtin_ia32_rdtsc();
	if (t2 > t1) {
		use_tsc = 1;
		tick_ns = (double)(m2 - m1) / (double)(t2 - t1);
	}
#else
	(void)seconds;
#endif
}

/*
 * tsc_mhz > 0: the TSC's rate is known from outside (bench/run measures the
 * host's, which is what QEMU TCG hands the guest): a guest clock that loses
 * ticks under load would make a calibration against it wrong.
 */
static void choose_clock(int force_tsc, double tsc_mhz)
{
	struct timespec res = { 0, 0 };
	int coarse = clock_getres(CLOCK_MONOTONIC, &res) == 0 &&
		     (res.tv_sec || res.tv_nsec > 1000);

	if (!force_tsc && !coarse) {
		printf("# clock: CLOCK_MONOTONIC\n");
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	if (tsc_mhz > 0) {
		use_tsc = 1;
		tick_ns = 1e3 / tsc_mhz;
		printf("# clock: CLOCK_MONOTONIC resolution %ld ns; using the TSC at %.1f MHz "
		       "(given by --tsc-mhz)\n", res.tv_sec ? 999999999L : res.tv_nsec, tsc_mhz);
		return;
	}
#endif
	calibrate_tsc(1.0);
	if (use_tsc) {
		printf("# clock: CLOCK_MONOTONIC resolution %ld ns; using the TSC, "
		       "%.1f MHz by a 1 s calibration against it (absolute times only as "
		       "good as that clock, ratios unaffected)\n",
		       res.tv_sec ? 999999999L : res.tv_nsec, 1e3 / tick_ns);
		return;
	}
	printf("# clock: CLOCK_MONOTONIC (coarse)\n");
}

/* Untimed: close what operation i returned, remove what it created. */
static void undo(struct worker *w, const struct variant *v, int i)
{
	char path[NAME_LEN], *p;

	if (w->fds[i] >= 0)
		close(w->fds[i]);
	w->fds[i] = -1;
	if (v->target == OPEN_EXISTING)
		return;
	/* Deepest level first; a one-level name has no slash. */
	memcpy(path, w->names[i], NAME_LEN);
	for (;;) {
		unlinkat(w->parentfd, path, AT_REMOVEDIR);
		p = strrchr(path, '/');
		if (!p)
			break;
		*p = '\0';
	}
}

static void *run_thread(void *arg)
{
	struct batch *b = ((struct thread_arg *)arg)->b;
	struct worker *w = ((struct thread_arg *)arg)->w;
	const struct variant *v = b->v;
	int i, r = 0, done = 0;

	for (i = 0; i < b->nwarm && !r; i++) {
		r = v->op(w, i % w->nops);
		undo(w, v, i % w->nops);
	}
	/*
	 * Spin rather than sleep at the start line, so that both threads are
	 * on a CPU when the timed phase begins instead of one waiting for
	 * the scheduler to wake it.
	 */
	__atomic_add_fetch(&b->arrived, 1, __ATOMIC_SEQ_CST);
	for (i = 0; __atomic_load_n(&b->arrived, __ATOMIC_SEQ_CST) < b->nthreads; i++)
		if (i > 10000)	/* fewer CPUs than threads: let the other run */
			sched_yield();
	if (!r) {
		w->ts[0] = now_ticks();
		for (i = 0; i < w->nops; i++) {
			r = v->op(w, i);
			w->ts[i + 1] = now_ticks();
			if (r)
				break;
		}
		done = i;
	}
	pthread_barrier_wait(&b->done);
	for (i = 0; i < done && i < w->nops; i++)
		undo(w, v, i);
	if (!r && done < w->nops)
		r = -EIO;
	if (r && done < w->nops)
		undo(w, v, done);
	return NULL;
}

/*
 * The child's whole life: pick the libocdir mode, run the threads, report
 * a failed call on stderr. Timestamps go to ts (shared with the driver).
 */
static int child_batch(const struct variant *v, int nthreads, const int *parentfds,
		       int nops, int nwarm, uint64_t *ts)
{
	struct thread_arg args[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	struct batch b = { .v = v, .nthreads = nthreads, .nwarm = nwarm };
	const char *reason;
	int t, i, status = 0;

	if (v->lib == LIB_EMULATED)
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
	else
		unsetenv("OCDIR_FORCE_EMULATION");
	if (v->lib == LIB_NATIVE && ocdir_backend(&reason) != OCDIR_BACKEND_NATIVE) {
		fprintf(stderr, "ocdir_bench: %s: libocdir is not native here (%s)\n",
			v->name, reason);
		return 1;
	}
	if (v->lib == LIB_EMULATED && ocdir_backend(&reason) != OCDIR_BACKEND_EMULATED) {
		fprintf(stderr, "ocdir_bench: %s: emulation not forced (%s)\n", v->name, reason);
		return 1;
	}
	pthread_barrier_init(&b.done, NULL, (unsigned int)nthreads);
	for (t = 0; t < nthreads; t++) {
		struct worker *w = &b.w[t];

		w->parentfd = parentfds[t];
		w->nops = nops;
		w->names = calloc((size_t)nops, sizeof(*w->names));
		w->fds = calloc((size_t)nops, sizeof(*w->fds));
		w->ts = ts + (size_t)t * (size_t)(nops + 1);
		if (!w->names || !w->fds) {
			fprintf(stderr, "ocdir_bench: out of memory\n");
			return 1;
		}
		/* Thread number in the name: shared parents never collide. */
		for (i = 0; i < nops; i++) {
			if (v->target == CREATE_PATH)
				snprintf(w->names[i], NAME_LEN, "m%d_%d/b/c/d/e", t, i);
			else
				snprintf(w->names[i], NAME_LEN, "n%d_%d", t, i);
			w->fds[i] = -1;
		}
		args[t] = (struct thread_arg){ .b = &b, .w = w };
	}
	/*
	 * Grow the descriptor table to its final size now: growing a table
	 * shared by two threads waits for an RCU grace period (milliseconds),
	 * which would land inside the timed phase of the variants that keep
	 * their descriptors open.
	 */
	i = dup2(0, nthreads * nops + 32);
	if (i >= 0)
		close(i);
	for (t = 1; t < nthreads; t++)
		if (pthread_create(&tid[t], NULL, run_thread, &args[t])) {
			fprintf(stderr, "ocdir_bench: pthread_create failed\n");
			return 1;
		}
	run_thread(&args[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	for (t = 0; t < nthreads; t++) {
		if (b.w[t].failed) {
			fprintf(stderr, "ocdir_bench: %s: %s failed: %s\n", v->name,
				b.w[t].failed, strerror(b.w[t].err));
			status = 1;
		}
	}
	return status;
}

/* ---- the driver ---- */

struct cell {			/* one variant in one configuration */
	int selected;			/* in the --set being run */
	int available;			/* selected, and the kernel can run it */
	int nreps;
	double ns_per_op[MAX_REPS];	/* wall time / all threads' operations */
	uint64_t *lat;			/* per-operation latencies, all reps */
	size_t nlat, caplat;
	size_t stalled;			/* operations left out as stalls */
};

struct config {
	int threads, parents;
};

static const struct config configs[] = { { 1, 1 }, { 2, 1 }, { 2, 2 } };
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

struct opts {
	int smoke, nops, reps, nwarm, discard;
	unsigned int sets;		/* SET_* selected by --set */
	const char *csv, *label;
	FILE *csvf;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double s[MAX_REPS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Median over repetitions of x's time per operation over y's, same rep. */
static double pair_ratio(const struct cell *x, const struct cell *y)
{
	double r[MAX_REPS];
	int i, n = x->nreps < y->nreps ? x->nreps : y->nreps;

	if (!x->available || !y->available || n == 0)
		return 0;
	for (i = 0; i < n; i++)
		r[i] = x->ns_per_op[i] / y->ns_per_op[i];
	return median(r, n);
}

static uint64_t percentile(const struct cell *c, double p)
{
	size_t k;

	if (!c->nlat)
		return 0;
	k = (size_t)(p * (double)c->nlat + 0.999999);
	if (k < 1)
		k = 1;
	if (k > c->nlat)
		k = c->nlat;
	return c->lat[k - 1];
}

/* Online CPUs: with fewer CPUs than threads, latencies include time slices. */
static int ncpus = 1;

/*
 * An operation slower than STALL_FACTOR times its batch's median is taken
 * to have lost its CPU to the host (a time slice is milliseconds; the
 * slowest variant's median is well under one) and is left out of the
 * batch's time per operation; p99 keeps it.
 */
#define STALL_FACTOR 8

/*
 * Time per operation of a batch, over the operations completed while all
 * threads were in their timed phase (a thread that the scheduler starts
 * late would otherwise pass a solo run off as a concurrent one).
 *
 * Where every thread has a CPU of its own: the mean latency of those
 * operations without the stalled ones (see STALL_FACTOR), divided by the
 * number of threads. A stall is an operation during which the host took
 * the (v)CPU away (kernel builds share these 2 cores; under QEMU TCG a vCPU
 * is a host thread): one stall of a few ms would otherwise double the time
 * of a whole batch, and a fixed share of trimmed operations would remove
 * all stalls from short operations but not from long ones. Where threads
 * share CPUs, a time slice is part of the cost, so the length of the
 * common window divided by the operations in it is used instead.
 *
 * Returns the number of operations in the common window (0: the threads
 * never ran at the same time; then all operations count).
 */
static size_t batch_time(const uint64_t *shm, int nthreads, int nops, uint64_t *scratch,
			 double *ns_per_op, size_t *stalled)
{
	uint64_t lo = 0, hi = UINT64_MAX, first = UINT64_MAX, last = 0, limit;
	size_t count = 0, n = 0, keep, k;
	double sum = 0;
	int t, i;

	for (t = 0; t < nthreads; t++) {
		const uint64_t *ts = shm + (size_t)t * (size_t)(nops + 1);

		lo = ts[0] > lo ? ts[0] : lo;
		hi = ts[nops] < hi ? ts[nops] : hi;
		first = ts[0] < first ? ts[0] : first;
		last = ts[nops] > last ? ts[nops] : last;
	}
	for (t = 0; t < nthreads; t++) {
		const uint64_t *ts = shm + (size_t)t * (size_t)(nops + 1);

		for (i = 1; i <= nops; i++)
			if (hi > lo && ts[i] > lo && ts[i] <= hi)
				scratch[count++] = ts[i] - ts[i - 1];
	}
	if (!count) {
		for (t = 0; t < nthreads; t++) {
			const uint64_t *ts = shm + (size_t)t * (size_t)(nops + 1);

			for (i = 1; i <= nops; i++)
				scratch[n++] = ts[i] - ts[i - 1];
		}
	} else {
		n = count;
	}
	if (nthreads > ncpus) {
		if (count)
			*ns_per_op = (double)(hi - lo) * tick_ns / (double)count;
		else
			*ns_per_op = (double)(last - first) * tick_ns / (double)n;
		return count;
	}
	qsort(scratch, n, sizeof(*scratch), cmp_u64);
	limit = scratch[n / 2] * STALL_FACTOR;
	for (k = 0, keep = 0; k < n && scratch[k] <= limit; k++, keep++)
		sum += (double)scratch[k];
	*stalled += n - keep;
	*ns_per_op = sum / (double)keep * tick_ns / nthreads;
	return count;
}

#define BATCH_RETRIES 2

static int run_batch(const struct variant *v, const struct config *cf,
		     int (*pfds)[MAX_THREADS], const struct opts *o, uint64_t *shm,
		     struct cell *c, int keep, int *retried)
{
	int fds[MAX_THREADS], t, i, status, tries;
	static uint64_t *scratch;
	double ns_per_op = 0;
	size_t need, inwin, stalled = 0;
	pid_t pid;

	if (!scratch)
		scratch = malloc(sizeof(*scratch) * MAX_THREADS * (size_t)o->nops);
	if (!scratch) {
		fprintf(stderr, "ocdir_bench: out of memory\n");
		return -1;
	}
	for (t = 0; t < cf->threads; t++)
		fds[t] = pfds[v->parent][cf->parents == 1 ? 0 : t];
	for (tries = 0;; tries++) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("ocdir_bench: fork");
			return -1;
		}
		if (pid == 0)
			_exit(child_batch(v, cf->threads, fds, o->nops, o->nwarm, shm));
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "ocdir_bench: the %s batch failed\n", v->name);
			return -1;
		}
		/* Most of the batch must have run with all threads at once. */
		stalled = 0;
		inwin = batch_time(shm, cf->threads, o->nops, scratch, &ns_per_op, &stalled);
		if (inwin * 2 >= (size_t)(cf->threads * o->nops) || tries == BATCH_RETRIES)
			break;
		++*retried;
	}
	if (!keep)
		return 0;
	need = c->nlat + (size_t)cf->threads * (size_t)o->nops;
	if (need > c->caplat) {
		c->caplat = need * 2;
		c->lat = realloc(c->lat, c->caplat * sizeof(*c->lat));
		if (!c->lat) {
			fprintf(stderr, "ocdir_bench: out of memory\n");
			return -1;
		}
	}
	for (t = 0; t < cf->threads; t++) {
		uint64_t *ts = shm + (size_t)t * (size_t)(o->nops + 1);

		for (i = 0; i < o->nops; i++)
			c->lat[c->nlat++] = (uint64_t)((double)(ts[i + 1] - ts[i]) * tick_ns);
	}
	c->ns_per_op[c->nreps++] = ns_per_op;
	c->stalled += stalled;
	return 0;
}

static const char *fs_name(int dirfd)
{
	struct statfs sf;

	if (fstatfs(dirfd, &sf) < 0)
		return "unknown";
	switch ((unsigned long)sf.f_type) {
	case 0x01021994: return "tmpfs";
	case 0xEF53: return "ext4";
	case 0x01021997: return "9p";
	case 0x9123683E: return "btrfs";
	case 0x58465342: return "xfs";
	case 0x794c7630: return "overlayfs";
	default: return "other";
	}
}

/*
 * The side-effect-free probe of docs/semantics.md section 4, on the
 * directory under test.
 */
static int kernel_has_feature(int dirfd, char *why, size_t size)
{
	int err;

	if (t_kernel_creates_dirs(dirfd, &err)) {
		snprintf(why, size, "openat(dir, \".\", O_CREAT|O_DIRECTORY) returned an fd");
		return 1;
	}
	snprintf(why, size, "openat(dir, \".\", O_CREAT|O_DIRECTORY) failed with %s",
		 strerrorname_np(err) ? strerrorname_np(err) : strerror(err));
	return 0;
}

static void target(const char *fs, const struct config *cf, int applies,
		   const char *what, double value, int ok, const char *note)
{
	const char *tag = !applies ? "INFO" : ok ? "PASS" : "MISS";

	printf("%s: %s %dT/%dP: %s = %.3f%s%s\n", tag, fs, cf->threads, cf->parents,
	       what, value, note ? " " : "", note ? note : "");
}

/* Both cells were measured (selected, and the kernel could run them). */
static int both(const struct cell *c, int x, int y)
{
	return c[x].available && c[y].available;
}

/*
 * Issue 14, point 7: the hardened emulation's default path against the
 * careful sequence, a plain open and a plain walk; and native mkpath
 * against mkdir -p + open + fstat. These apply on every filesystem.
 */
static void report_issue14(const char *fs, const struct config *cf, struct cell *c,
			   int native)
{
	static const struct {
		int x, y;
		double max;
		const char *what;
	} t[] = {
		{ V_E, V_C, 1.3, "issue 14: (e)/(c) time, new dir, emulated, private parent" },
		{ V_E2, V_C, 1.3, "issue 14: (e2)/(c) time, new dir, emulated, sticky parent" },
		{ V_E3, V_C, 3.0, "issue 14: (e3)/(c) time, new dir, emulated, shared parent (staging)" },
		{ V_F4, V_F1, 1.2, "issue 14: (f4)/(f1) time, existing dir, emulated" },
		{ V_H2, V_H1, 1.3, "issue 14: (h2)/(h1) time, mkpath over existing 5 levels, emulated" },
		{ V_H3, V_H1, 1.3, "issue 14: (h3)/(h1) time, mkpath over existing 5 levels, native" },
		{ V_G3, V_G2, 1.0, "issue 14: (g3)/(g2) time, mkpath of new 5 levels, native" },
	};
	char note[32];
	size_t k;

	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		double r;

		if (!c[t[k].x].selected || !c[t[k].y].selected)
			continue;
		if (!both(c, t[k].x, t[k].y)) {
			if (!native)
				printf("N/A: %s %dT/%dP: %s: kernel lacks the feature\n", fs,
				       cf->threads, cf->parents, t[k].what);
			continue;
		}
		r = pair_ratio(&c[t[k].x], &c[t[k].y]);
		snprintf(note, sizeof(note), "(target <= %.1f)", t[k].max);
		target(fs, cf, 1, t[k].what, r, r <= t[k].max, note);
	}
	/* Issue 39: the floor under (e3), and what the proofs cost above it. */
	if (both(c, V_E4, V_C) && both(c, V_E3, V_E4)) {
		target(fs, cf, 0, "issue 39: (e4)/(c) time, bare staging (the floor), shared parent",
		       pair_ratio(&c[V_E4], &c[V_C]), 1, NULL);
		target(fs, cf, 0, "issue 39: (e3)/(e4) time, emulated shared over bare staging",
		       pair_ratio(&c[V_E3], &c[V_E4]), 1, NULL);
	}
}

static void report_targets(const char *fs, const struct config *cf, struct cell *c,
			   int native)
{
	int tmpfs = !strcmp(fs, "tmpfs");

	/* Issue 7: the native call on tmpfs; only in the set that has (b). */
	if (!c[V_B].selected) {
		report_issue14(fs, cf, c, native);
		return;
	}
	if (!native) {
		printf("N/A: %s %dT/%dP: (b)/(a), (c)/(b), (f2)/(f1), (d)/(b): kernel lacks the feature\n",
		       fs, cf->threads, cf->parents);
	} else {
		double ba = pair_ratio(&c[V_B], &c[V_A]);
		double cb = pair_ratio(&c[V_C], &c[V_B]);
		double ff = pair_ratio(&c[V_F2], &c[V_F1]);
		double db = pair_ratio(&c[V_D], &c[V_B]);

		target(fs, cf, tmpfs, "(b)/(a) time", ba, ba <= 1.10, "(target <= 1.10)");
		target(fs, cf, tmpfs, "(c)/(b) time", cb, cb >= 1.20,
		       "(target >= 1.20; ceiling ~1.35 under QEMU TCG, ~1.5 on hardware)");
		target(fs, cf, tmpfs, "(f2)/(f1) time, existing dir", ff, ff <= 1.02,
		       "(target <= 1.02)");
		target(fs, cf, tmpfs, "(d)/(b) time", db, db <= 1.02, "(target <= 1.02)");
	}
	printf("INFO: %s %dT/%dP: emulation cost: (e)/(c) = %.2f, (e)/(a) = %.2f, "
	       "(f4)/(f1) = %.2f, (g4)/(g2) = %.2f\n", fs, cf->threads, cf->parents,
	       pair_ratio(&c[V_E], &c[V_C]), pair_ratio(&c[V_E], &c[V_A]),
	       pair_ratio(&c[V_F4], &c[V_F1]), pair_ratio(&c[V_G4], &c[V_G2]));
	report_issue14(fs, cf, c, native);
}

static void print_results(const char *fs, const struct config *cf, struct cell *c,
			  const struct opts *o)
{
	size_t v;

	printf("# %s, %d thread%s, %d parent%s:\n", fs, cf->threads,
	       cf->threads > 1 ? "s" : "", cf->parents, cf->parents > 1 ? "s" : "");
	printf("#   %-34s %10s %9s %9s %7s %7s %8s\n", "variant", "ops/s", "p50_us",
	       "p99_us", "x(a)", "x(c)", "stalls");
	for (v = 0; v < NVARIANTS; v++) {
		struct cell *x = &c[v];

		if (!x->selected)
			continue;
		if (!x->available) {
			printf("#   %-34s n/a: kernel lacks the feature\n", variants[v].name);
			fprintf(o->csvf, "%s,%d,%d,%s,n/a,n/a,n/a,n/a,n/a\n", fs,
				cf->threads, cf->parents, variants[v].name);
			continue;
		}
		qsort(x->lat, x->nlat, sizeof(*x->lat), cmp_u64);
		double ops = 1e9 / median(x->ns_per_op, x->nreps);
		uint64_t p50 = percentile(x, 0.50), p99 = percentile(x, 0.99);
		double ra = pair_ratio(x, &c[V_A]), rc = pair_ratio(x, &c[V_C]);

		printf("#   %-34s %10.0f %9.1f %9.1f %7.2f %7.2f %7.1f%%\n", variants[v].name,
		       ops, p50 / 1e3, p99 / 1e3, ra, rc,
		       x->nlat ? 100.0 * (double)x->stalled / (double)x->nlat : 0.0);
		fprintf(o->csvf, "%s,%d,%d,%s,%.0f,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f\n",
			fs, cf->threads, cf->parents, variants[v].name, ops, p50, p99, ra, rc);
	}
	fflush(o->csvf);
}

/*
 * Make, under DIR/ocdir-bench.PID, one parent of each kind per thread:
 * p0, p1 (private, 0755, each with "existing" and DEEP_PATH), s0, s1
 * (sticky, 1777) and w0, w1 (shared, 0777). Modes are set through the
 * descriptor, whatever the umask. pfds[kind][thread].
 */
static const char parent_letter[NPARENT_KINDS] = { 'p', 's', 'w' };
static const mode_t parent_mode[NPARENT_KINDS] = { 0755, 01777, 0777 };

static int setup_dirs(int dirfd, char *top, size_t size, int (*pfds)[MAX_THREADS])
{
	char name[32], deep[sizeof(DEEP_PATH)], *p;
	int topfd, t, k;

	snprintf(top, size, "ocdir-bench.%d", (int)getpid());
	if (mkdirat(dirfd, top, 0755) < 0)
		return -1;
	topfd = openat(dirfd, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (topfd < 0)
		return -1;
	for (k = 0; k < NPARENT_KINDS; k++) {
		for (t = 0; t < MAX_THREADS; t++) {
			snprintf(name, sizeof(name), "%c%d", parent_letter[k], t);
			if (mkdirat(topfd, name, 0700) < 0)
				goto fail;
			pfds[k][t] = openat(topfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (pfds[k][t] < 0 || fchmod(pfds[k][t], parent_mode[k]) < 0)
				goto fail;
			if (k != PARENT_PRIVATE)
				continue;
			if (mkdirat(pfds[k][t], "existing", 0755) < 0)
				goto fail;
			/* Each prefix of DEEP_PATH, from the top. */
			memcpy(deep, DEEP_PATH, sizeof(deep));
			for (p = deep;; p++) {
				if (*p != '/' && *p != '\0')
					continue;
				char c = *p;

				*p = '\0';
				if (mkdirat(pfds[k][t], deep, 0755) < 0)
					goto fail;
				*p = c;
				if (!c)
					break;
			}
		}
	}
	close(topfd);
	return 0;
fail:
	close(topfd);
	return -1;
}

static void teardown_dirs(int dirfd, const char *top, int (*pfds)[MAX_THREADS])
{
	char name[32], deep[sizeof(DEEP_PATH)], *p;
	int topfd = openat(dirfd, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC), t, k;

	for (k = 0; k < NPARENT_KINDS; k++) {
		for (t = 0; t < MAX_THREADS; t++) {
			if (pfds[k][t] >= 0) {
				unlinkat(pfds[k][t], "existing", AT_REMOVEDIR);
				memcpy(deep, DEEP_PATH, sizeof(deep));
				for (;;) {
					unlinkat(pfds[k][t], deep, AT_REMOVEDIR);
					p = strrchr(deep, '/');
					if (!p)
						break;
					*p = '\0';
				}
				close(pfds[k][t]);
			}
			snprintf(name, sizeof(name), "%c%d", parent_letter[k], t);
			if (topfd >= 0)
				unlinkat(topfd, name, AT_REMOVEDIR);
		}
	}
	if (topfd >= 0)
		close(topfd);
	unlinkat(dirfd, top, AT_REMOVEDIR);
}

/* What the emulation sees: owner and mode of the parents, against the caller. */
static void print_parents(const char *fs, int (*pfds)[MAX_THREADS])
{
	static const char *const what[NPARENT_KINDS] = {
		"private (in place)", "sticky (in place)", "shared (staging)",
	};
	struct stat st;
	int k;

	printf("# %s parents (caller uid %d):", fs, (int)geteuid());
	for (k = 0; k < NPARENT_KINDS; k++)
		if (fstat(pfds[k][0], &st) == 0)
			printf(" %c0 %04o uid %d = %s%s", parent_letter[k],
			       (unsigned int)(st.st_mode & 07777), (int)st.st_uid, what[k],
			       k + 1 < NPARENT_KINDS ? ";" : "\n");
}

static int bench_dir(const char *dir, const struct opts *o, uint64_t *shm)
{
	static struct cell cells[NVARIANTS];
	int pfds[NPARENT_KINDS][MAX_THREADS], dirfd, native, rc = 0, retried;
	char why[128], top[64];
	const char *fs;
	size_t k, v;
	int rep;

	for (k = 0; k < NPARENT_KINDS; k++)
		for (v = 0; v < MAX_THREADS; v++)
			pfds[k][v] = -1;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "ocdir_bench: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	fs = o->label ? o->label : fs_name(dirfd);
	native = kernel_has_feature(dirfd, why, sizeof(why));
	printf("# %s (%s): %s: native variants %s\n", dir, fs, why,
	       native ? "run" : "n/a: kernel lacks the feature");
	if (setup_dirs(dirfd, top, sizeof(top), pfds) < 0) {
		fprintf(stderr, "ocdir_bench: cannot set up %s/ocdir-bench.*: %s\n", dir,
			strerror(errno));
		teardown_dirs(dirfd, top, pfds);
		close(dirfd);
		return -1;
	}
	print_parents(fs, pfds);
	for (k = 0; k < NCONFIGS && !rc; k++) {
		const struct config *cf = &configs[k];

		for (v = 0; v < NVARIANTS; v++) {
			free(cells[v].lat);
			int sel = !!(variants[v].sets & o->sets);

			cells[v] = (struct cell){
				.selected = sel,
				.available = sel && (native || !variants[v].needs_native),
			};
		}
		retried = 0;
		/* Round-robin, each repetition in a rotated order; rep < 0 is warm-up. */
		for (rep = -o->discard; rep < o->reps && !rc; rep++) {
			for (size_t j = 0; j < NVARIANTS && !rc; j++) {
				size_t vi = (j + (size_t)(rep + o->discard)) % NVARIANTS;

				if (!cells[vi].available)
					continue;
				if (run_batch(&variants[vi], cf, pfds, o, shm, &cells[vi],
					      rep >= 0, &retried) < 0)
					rc = -1;
			}
		}
		if (rc)
			break;
		if (retried)
			printf("# %s %dT/%dP: %d batch%s repeated: the threads did not run at the same time\n",
			       fs, cf->threads, cf->parents, retried, retried > 1 ? "es" : "");
		print_results(fs, cf, cells, o);
		report_targets(fs, cf, cells, native);
	}
	teardown_dirs(dirfd, top, pfds);
	close(dirfd);
	return rc;
}

static uint64_t clock_cost_ns(void)
{
	uint64_t t0 = now_ticks(), t1;
	int i;

	for (i = 0; i < 100000; i++)
		(void)now_ticks();
	t1 = now_ticks();
	return (uint64_t)((double)(t1 - t0) * tick_ns / 100000);
}

/*
 * Which backend libocdir picks by default, asked in a child: the driver
 * itself never calls the library, so every batch makes its own choice.
 */
static void print_backend(void)
{
	char buf[256] = "";
	struct utsname u;
	const char *reason;
	int pipefd[2], b;
	ssize_t n = -1;
	pid_t pid;

	if (uname(&u) == 0)
		printf("# kernel %s %s, %ld CPUs online\n", u.release, u.machine,
		       sysconf(_SC_NPROCESSORS_ONLN));
	if (pipe(pipefd) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		unsetenv("OCDIR_FORCE_EMULATION");
		b = ocdir_backend(&reason);
		dprintf(pipefd[1], "%s (%s)", b == OCDIR_BACKEND_NATIVE ? "native" : "emulated",
			reason);
		_exit(0);
	}
	close(pipefd[1]);
	if (pid > 0) {
		n = read(pipefd[0], buf, sizeof(buf) - 1);
		waitpid(pid, NULL, 0);
	}
	close(pipefd[0]);
	buf[n > 0 ? n : 0] = '\0';
	printf("# libocdir default backend: %s\n", buf);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ocdir_bench [--smoke] [--set S] [--csv FILE] [--label FS] [--tsc] [--tsc-mhz F] [--ops N] [--reps N] DIR...\n"
		"       ocdir_bench --list\n"
		"  --smoke     a few thousand operations, to check that the benchmark works\n"
		"  --set S     the variants: issue7 (default), issue14 (hardened emulation), all\n"
		"  --csv FILE  write the CSV rows to FILE (default: stdout, after \"# csv\")\n"
		"  --label FS  the fs column (default: from statfs of DIR)\n"
		"  --tsc       time with the TSC even where CLOCK_MONOTONIC is fine\n"
		"  --tsc-mhz F the TSC's rate, where CLOCK_MONOTONIC is coarse (else calibrated)\n"
		"  --measure-tsc  print the TSC's rate in MHz (1 s against CLOCK_MONOTONIC)\n"
		"  --ops N     timed operations per thread per batch (default 400)\n"
		"  --reps N    repetitions, medians taken over them (default 7, max %d)\n",
		MAX_REPS);
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .nops = 400, .reps = 7, .nwarm = 20, .discard = 1,
			  .sets = SET_ISSUE7 };
	struct rlimit rl;
	uint64_t *shm;
	size_t v;
	int i, rc = 0, force_tsc = 0;
	double tsc_mhz = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			o.smoke = 1;
		} else if (!strcmp(argv[i], "--list")) {
			for (v = 0; v < NVARIANTS; v++)
				printf("%-34s %-13s %s\n", variants[v].name,
				       variants[v].sets == SET_ISSUE7 ? "issue7" :
				       variants[v].sets == SET_ISSUE14 ? "issue14" :
				       "issue7,issue14", variants[v].timed);
			return 0;
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "issue7"))
				o.sets = SET_ISSUE7;
			else if (!strcmp(argv[i], "issue14"))
				o.sets = SET_ISSUE14;
			else if (!strcmp(argv[i], "all"))
				o.sets = SET_ISSUE7 | SET_ISSUE14;
			else
				usage();
		} else if (!strcmp(argv[i], "--tsc")) {
			force_tsc = 1;
		} else if (!strcmp(argv[i], "--tsc-mhz") && i + 1 < argc) {
			tsc_mhz = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--measure-tsc")) {
			calibrate_tsc(1.0);
			printf("%.1f\n", use_tsc ? 1e3 / tick_ns : 0.0);
			return 0;
		} else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			o.csv = argv[++i];
		} else if (!strcmp(argv[i], "--label") && i + 1 < argc) {
			o.label = argv[++i];
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			o.nops = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			o.reps = atoi(argv[++i]);
		} else {
			usage();
		}
	}
	if (i >= argc || o.nops < 1 || o.reps < 1 || o.reps > MAX_REPS)
		usage();
	if (o.smoke) {
		o.nops = 50;
		o.reps = 2;
		o.nwarm = 5;
		o.discard = 0;
	}
	/* Every timed descriptor stays open until its batch ends. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur != RLIM_INFINITY &&
		    (rlim_t)(MAX_THREADS * o.nops + 64) > rl.rlim_cur)
			o.nops = (int)(rl.rlim_cur - 64) / MAX_THREADS;
	}
	o.csvf = stdout;
	if (o.csv && !(o.csvf = fopen(o.csv, "w"))) {
		fprintf(stderr, "ocdir_bench: %s: %s\n", o.csv, strerror(errno));
		return 1;
	}
	/* Only OCDIR_FORCE_EMULATION, set per batch, may steer the library. */
	unsetenv("OCDIR_FORCE_RESOLVER");
	unsetenv("OCDIR_TEST_NO_NOREPLACE");
	shm = mmap(NULL, sizeof(uint64_t) * MAX_THREADS * (size_t)(o.nops + 1),
		   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("ocdir_bench: mmap");
		return 1;
	}
	print_backend();
	choose_clock(force_tsc, tsc_mhz);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	printf("# %s, variant set %s: %d timed ops per thread per batch, %d repetitions (medians)%s, "
	       "%d warm-up ops per batch; clock read %" PRIu64 " ns (in every latency)\n",
	       o.smoke ? "smoke mode" : "full mode",
	       o.sets == SET_ISSUE7 ? "issue7" : o.sets == SET_ISSUE14 ? "issue14" : "all",
	       o.nops, o.reps,
	       o.discard ? " after 1 discarded round" : "", o.nwarm, clock_cost_ns());
	printf("# time per op: mean latency of a batch without stalls (> %dx its median), per "
	       "thread (%d CPUs online: %s)\n", STALL_FACTOR, ncpus, ncpus >= MAX_THREADS ?
	       "all configurations" : "1 thread only; 2 threads: wall-clock window");
	if (o.csvf == stdout)
		printf("# csv\n");
	fprintf(o.csvf, "fs,threads,parents,variant,ops_per_s,p50_ns,p99_ns,ratio_vs_a,ratio_vs_c\n");
	for (; i < argc; i++)
		if (bench_dir(argv[i], &o, shm) < 0)
			rc = 1;
	if (o.csvf != stdout && fclose(o.csvf) != 0)
		rc = 1;
	return rc;
}
