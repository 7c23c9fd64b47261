/* SPDX-License-Identifier: MIT */
/*
 * bench/profile_loop.c - the workload bench/profile records: one kind of
 * operation, many times, and nothing else during the recorded phase.
 *
 *   profile_loop [--threads 1|2] [--separate] [--ops N] [--rounds R]
 *                [--tracing-on FILE] MODE DIR
 *
 * MODE is one operation of ocdir_bench (docs/performance.md):
 *   mkdirat   (a) mkdirat(parent, name, 0755)
 *   native    (b) openat(parent, name, O_CREAT|O_DIRECTORY|O_CLOEXEC, 0755)
 *   excl      (b) with O_EXCL, which skips the lockless lookup of the name
 *   careful   (c) mkdirat + openat(O_DIRECTORY|O_NOFOLLOW) + fstat
 *   open      (f1) openat(parent, "existing", O_DIRECTORY|O_CLOEXEC)
 *   creat     (f2) openat(parent, "existing", O_CREAT|O_DIRECTORY|O_CLOEXEC, 0755)
 *
 * A round: every thread does N operations in its parent (DIR itself, or
 * DIR/pT with --separate), starting together at a barrier; then, outside
 * the recorded phase, the descriptors are closed and the directories
 * removed.  With --tracing-on FILE (the tracefs "tracing_on" file) the
 * program writes 1 there just before a round's operations and 0 right after
 * them, so that a trace holds only the operations, not the clean-up.
 *
 * It prints, per mode, the median over rounds of the wall-clock time of the
 * operations of a round divided by their number (all threads together), and
 * the same per thread (the time one caller waits for one operation).  The
 * ratios bench/profile reports come from these, taken in the same boot.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	2
#define MAX_ROUNDS	1000
#define NAME_LEN	32
#define DIR_MODE	0755

enum mode { MKDIRAT, NATIVE, CAREFUL, OPEN, CREAT, EXCL };

static const char *const mode_names[] = { "mkdirat", "native", "careful", "open", "creat", "excl" };

struct thread {
	pthread_t tid;
	int parentfd;
	int index;
	int *fds;
	double start, end;	/* this thread's operations, this round */
	int err;		/* errno of the first failure */
	const char *failed;
};

static enum mode mode;
static int nthreads = 1, nops = 1000, nrounds = 20, separate;
static int tracing_fd = -1;
static pthread_barrier_t start_line;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void set_tracing(int on)
{
	/* A failed write would leave a trace of the wrong phase: stop here. */
	if (tracing_fd >= 0 && write(tracing_fd, on ? "1" : "0", 1) != 1) {
		perror("profile_loop: writing tracing_on");
		exit(1);
	}
}

static void name_of(char *buf, int thread, int i)
{
	snprintf(buf, NAME_LEN, "t%d_%d", thread, i);
}

/* One operation; returns the fd it got (or 0 where none), -1 on failure. */
static int one_op(struct thread *t, const char *name)
{
	struct stat st;
	int fd;

	switch (mode) {
	case MKDIRAT:
		if (mkdirat(t->parentfd, name, DIR_MODE) < 0)
			return t->failed = "mkdirat", -1;
		return 0;
	case NATIVE:
		fd = openat(t->parentfd, name, O_CREAT | O_DIRECTORY | O_CLOEXEC, DIR_MODE);
		if (fd < 0)
			t->failed = "openat(O_CREAT|O_DIRECTORY)";
		return fd;
	case EXCL:
		fd = openat(t->parentfd, name, O_CREAT | O_EXCL | O_DIRECTORY | O_CLOEXEC, DIR_MODE);
		if (fd < 0)
			t->failed = "openat(O_CREAT|O_EXCL|O_DIRECTORY)";
		return fd;
	case CAREFUL:
		if (mkdirat(t->parentfd, name, DIR_MODE) < 0)
			return t->failed = "mkdirat", -1;
		fd = openat(t->parentfd, name, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return t->failed = "openat", -1;
		if (fstat(fd, &st) < 0) {
			close(fd);
			return t->failed = "fstat", -1;
		}
		return fd;
	case OPEN:
		fd = openat(t->parentfd, "existing", O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			t->failed = "openat(existing)";
		return fd;
	case CREAT:
		fd = openat(t->parentfd, "existing", O_CREAT | O_DIRECTORY | O_CLOEXEC, DIR_MODE);
		if (fd < 0)
			t->failed = "openat(existing, O_CREAT|O_DIRECTORY)";
		return fd;
	}
	return -1;
}

static void *run_thread(void *arg)
{
	struct thread *t = arg;
	char names[64][NAME_LEN];
	int i;

	pthread_barrier_wait(&start_line);
	t->start = now_ns();
	for (i = 0; i < nops; i++) {
		char *name = names[i % 64];

		/* snprintf is cheap next to a system call under TCG, but keep
		 * it out of the kernel's share: names are made in batches of 64. */
		if (i % 64 == 0) {
			int j;

			for (j = 0; j < 64 && i + j < nops; j++)
				name_of(names[j], t->index, i + j);
		}
		t->fds[i] = one_op(t, name);
		if (t->fds[i] < 0) {
			t->err = errno;
			break;
		}
	}
	t->end = now_ns();
	return NULL;
}

/* Close what a round opened and remove what it created: not recorded. */
static void clean_up(struct thread *t)
{
	char name[NAME_LEN];
	int i;

	for (i = 0; i < nops; i++) {
		if (t->fds[i] > 0)
			close(t->fds[i]);
		t->fds[i] = -1;
		if (mode != OPEN && mode != CREAT) {
			name_of(name, t->index, i);
			unlinkat(t->parentfd, name, AT_REMOVEDIR);
		}
	}
}

/*
 * Every operation's descriptor stays open until the round ends: raise the
 * limit, and grow the descriptor table to its final size now, because
 * growing a table that two threads share waits for an RCU grace period,
 * which would land in the recorded phase.
 */
static int make_room_for_fds(int want)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	if (rl.rlim_cur < (rlim_t)want) {
		rl.rlim_cur = want;
		if (rl.rlim_max < (rlim_t)want)
			rl.rlim_max = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -1;
	}
	fd = dup2(0, want - 1);
	if (fd < 0)
		return -1;
	return close(fd);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
	fprintf(stderr, "usage: profile_loop [--threads 1|2] [--separate] [--ops N] [--rounds R]\n"
		"                    [--tracing-on FILE] mkdirat|native|excl|careful|open|creat DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static double wall[MAX_ROUNDS], per_thread[MAX_ROUNDS];
	struct thread threads[MAX_THREADS];
	const char *dir;
	int i, r, dirfd;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--separate"))
			separate = 1;
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			nops = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			nrounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tracing-on") && i + 1 < argc) {
			tracing_fd = open(argv[++i], O_WRONLY | O_CLOEXEC);
			if (tracing_fd < 0) {
				perror(argv[i]);
				return 1;
			}
		} else
			usage();
	}
	if (argc - i != 2 || nthreads < 1 || nthreads > MAX_THREADS || nops < 1 ||
	    nrounds < 1 || nrounds > MAX_ROUNDS)
		usage();
	for (mode = 0; mode < sizeof(mode_names) / sizeof(mode_names[0]); mode++)
		if (!strcmp(argv[i], mode_names[mode]))
			break;
	if (mode > EXCL)
		usage();
	dir = argv[i + 1];
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		perror(dir);
		return 1;
	}

	for (i = 0; i < nthreads; i++) {
		struct thread *t = &threads[i];
		char sub[NAME_LEN];

		memset(t, 0, sizeof(*t));
		t->index = i;
		t->parentfd = dirfd;
		if (separate) {
			snprintf(sub, sizeof(sub), "p%d", i);
			if (mkdirat(dirfd, sub, DIR_MODE) < 0 && errno != EEXIST) {
				perror(sub);
				return 1;
			}
			t->parentfd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (t->parentfd < 0 ||
		    ((mode == OPEN || mode == CREAT) && mkdirat(t->parentfd, "existing", DIR_MODE) < 0 && errno != EEXIST)) {
			perror("profile_loop: setting up");
			return 1;
		}
		t->fds = malloc(nops * sizeof(*t->fds));
		if (!t->fds) {
			perror("malloc");
			return 1;
		}
		memset(t->fds, -1, nops * sizeof(*t->fds));
	}
	pthread_barrier_init(&start_line, NULL, nthreads + 1);
	if (make_room_for_fds(nops * nthreads + 64) < 0) {
		perror("profile_loop: descriptor table");
		return 1;
	}

	for (r = 0; r < nrounds; r++) {
		double first = 0, last = 0, sum = 0;

		for (i = 0; i < nthreads; i++)
			if (pthread_create(&threads[i].tid, NULL, run_thread, &threads[i])) {
				fprintf(stderr, "profile_loop: pthread_create failed\n");
				return 1;
			}
		set_tracing(1);
		pthread_barrier_wait(&start_line);
		for (i = 0; i < nthreads; i++)
			pthread_join(threads[i].tid, NULL);
		set_tracing(0);
		for (i = 0; i < nthreads; i++) {
			if (threads[i].failed) {
				fprintf(stderr, "profile_loop: %s %s: %s\n", mode_names[mode],
					threads[i].failed, strerror(threads[i].err));
				/* leave nothing behind for the next run in DIR */
				for (i = 0; i < nthreads; i++)
					clean_up(&threads[i]);
				return 1;
			}
			sum += threads[i].end - threads[i].start;
			/* Wall clock from the first thread's start to the last one's
			 * end: not the wake-up of threads from the barrier. */
			if (!i || threads[i].start < first)
				first = threads[i].start;
			if (!i || threads[i].end > last)
				last = threads[i].end;
		}
		wall[r] = (last - first) / ((double)nops * nthreads);
		per_thread[r] = sum / ((double)nops * nthreads);
		for (i = 0; i < nthreads; i++)
			clean_up(&threads[i]);
	}

	printf("%s threads=%d parents=%d ops=%d rounds=%d ns_per_op=%.0f ns_per_call=%.0f\n",
	       mode_names[mode], nthreads, separate ? nthreads : 1, nops, nrounds,
	       median(wall, nrounds), median(per_thread, nrounds));
	for (i = 0; i < nthreads; i++) {
		if (mode == OPEN || mode == CREAT)
			unlinkat(threads[i].parentfd, "existing", AT_REMOVEDIR);
		if (separate) {
			char sub[NAME_LEN];

			snprintf(sub, sizeof(sub), "p%d", i);
			close(threads[i].parentfd);
			unlinkat(dirfd, sub, AT_REMOVEDIR);
		}
	}
	return 0;
}
