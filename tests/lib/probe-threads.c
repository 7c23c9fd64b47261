/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/probe-threads.c - the backend probe runs once per process and
 * every thread that asks at the same moment gets the same answer, which
 * must match what the kernel says to the probe call itself.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../helpers.h"
#include "ocdir.h"

#define NTHREADS 32

static pthread_barrier_t start;

struct answer {
	int backend;
	const char *reason;
};

static void *ask(void *arg)
{
	struct answer *a = arg;

	pthread_barrier_wait(&start);
	a->backend = ocdir_backend(&a->reason);
	return NULL;
}

/* All threads at once; returns the common backend, or -1 if they differ. */
static int ask_all(const char **reason)
{
	struct answer answers[NTHREADS];
	pthread_t tids[NTHREADS];
	int i, n = 0;

	pthread_barrier_init(&start, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&tids[i], NULL, ask, &answers[i]) == 0)
			n++;
	if (n != NTHREADS) {
		fprintf(stderr, "pthread_create failed\n");
		exit(T_EXIT_FAIL);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&start);
	for (i = 1; i < NTHREADS; i++)
		if (answers[i].backend != answers[0].backend ||
		    answers[i].reason != answers[0].reason)
			return -1;
	*reason = answers[0].reason;
	return answers[0].backend;
}

/* Runs in a child so that each variant gets a fresh, unprobed library. */
static int variant(int forced)
{
	const char *reason = NULL;
	int want, got;

	if (forced)
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
	else
		unsetenv("OCDIR_FORCE_EMULATION");
	want = !forced && t_kernel_creates_dirs(AT_FDCWD, NULL) ? OCDIR_BACKEND_NATIVE : OCDIR_BACKEND_EMULATED;
	got = ask_all(&reason);
	if (got < 0) {
		t_fail(forced ? "probe-threads-forced" : "probe-threads",
		       "threads got different answers");
		return t_exit_status();
	}
	T_CHECK(forced ? "probe-threads-forced" : "probe-threads", got == want,
		"backend %d, want %d (%s)", got, want, reason);
	T_CHECK(forced ? "probe-reason-forced" : "probe-reason",
		reason && *reason && (!forced || strstr(reason, "OCDIR_FORCE_EMULATION")),
		"reason \"%s\"", reason ? reason : "(null)");
	/* Asked again later: the cached answer, not a new probe. */
	T_CHECK(forced ? "probe-cached-forced" : "probe-cached",
		ocdir_backend(NULL) == got, "second answer differs");
	printf("# backend: %s\n", reason);
	return t_exit_status();
}

int main(void)
{
	int i, status, worst = T_EXIT_PASS;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(variant(i));
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
			t_fail("probe-child", "child failed");
			return T_EXIT_FAIL;
		}
		if (WEXITSTATUS(status) == T_EXIT_FAIL)
			worst = T_EXIT_FAIL;
	}
	return worst;
}
