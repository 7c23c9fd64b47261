/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/attack.c - an attacker thread swaps directories and symlinks
 * under a running ocdir_openat2(RESOLVE_BENEATH) for a fixed number of
 * rounds; the call must never return a descriptor outside the root and
 * never create anything outside it. Run in the emulation with openat2 and
 * with the userspace resolver.
 *
 *   lib-attack [DIR]
 *
 * Layout: TOP/root/a/x (a directory), TOP/o1/o2/ox (outside), TOP/root/t
 * alternating between a directory and a symlink to ../o1.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../helpers.h"
#include "ocdir.h"

#define ROUNDS 4000

static int topfd, rootfd;
static volatile int stop;

static void *attacker(void *arg)
{
	(void)arg;
	while (!stop) {
		/* Move the walker's directory out of the root and back. */
		renameat2(topfd, "root/a/x", topfd, "o1/o2/ox", RENAME_EXCHANGE);
		/* Replace a final component by an escaping symlink and back. */
		renameat2(topfd, "root/t", topfd, "tlink", RENAME_EXCHANGE);
	}
	return NULL;
}

/*
 * Did the call hand out something it must not? The attacker keeps moving
 * directories, so "where is it now" proves nothing; identities do: "t" may
 * only be the directory made as root/t (never o1, the symlink's target),
 * and "new" must be the directory now at root/new.
 */
static int escaped(int fd, int want_new, const struct stat *tdir)
{
	struct stat st, at;

	if (fstat(fd, &st) < 0)
		return 1;
	if (want_new)
		return fstatat(rootfd, "new", &at, AT_SYMLINK_NOFOLLOW) < 0 ||
		       at.st_dev != st.st_dev || at.st_ino != st.st_ino;
	return st.st_dev != tdir->st_dev || st.st_ino != tdir->st_ino;
}

static int run(const char *label, const char *dir)
{
	char top[2048], name[128];
	struct ocdir_how how = { .mode = 0755, .resolve = OCDIR_RESOLVE_BENEATH };
	int i, fd, escapes = 0, created_outside = 0, opened = 0;
	pthread_t t;
	struct stat st, tdir;

	snprintf(top, sizeof(top), "%s/attack.%s.%d", dir, label, (int)getpid());
	if (mkdir(top, 0755) < 0 || (topfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(topfd, "root", 0755) || mkdirat(topfd, "root/a", 0755) ||
	    mkdirat(topfd, "root/a/x", 0755) || mkdirat(topfd, "o1", 0755) ||
	    mkdirat(topfd, "o1/o2", 0755) || mkdirat(topfd, "o1/o2/ox", 0755) ||
	    mkdirat(topfd, "root/t", 0755) || symlinkat("../o1", topfd, "tlink") ||
	    (rootfd = openat(topfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(name, sizeof(name), "%s:setup", label);
		t_fail(name, "%s", strerror(errno));
		return t_exit_status();
	}
	fstatat(topfd, "root/t", &tdir, 0);
	stop = 0;
	pthread_create(&t, NULL, attacker, NULL);
	for (i = 0; i < ROUNDS; i++) {
		const char *path = i & 1 ? "t" : "a/x/../../new";

		fd = ocdir_openat2(rootfd, path, &how, sizeof(how), NULL);
		if (fd >= 0) {
			opened++;
			if (escaped(fd, !(i & 1), &tdir))
				escapes++;
			close(fd);
		}
		unlinkat(rootfd, "new", AT_REMOVEDIR);
		if (fstatat(topfd, "o1/new", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		    fstatat(topfd, "new", &st, AT_SYMLINK_NOFOLLOW) == 0)
			created_outside++;
	}
	stop = 1;
	pthread_join(t, NULL);
	snprintf(name, sizeof(name), "%s:rename-attack-no-escape", label);
	T_CHECK(name, !escapes && !created_outside && opened > 0,
		"%d escapes, %d created outside, %d of %d calls opened", escapes,
		created_outside, opened, ROUNDS);
	printf("# %s: %d of %d calls returned an fd\n", label, opened, ROUNDS);
	return t_exit_status();
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	int i, status, worst = T_EXIT_PASS;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			setenv("OCDIR_FORCE_EMULATION", "1", 1);
			if (i)
				setenv("OCDIR_FORCE_RESOLVER", "1", 1);
			_exit(run(i ? "resolver" : "openat2", dir));
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
			t_fail("attack-child", "child died");
			return T_EXIT_FAIL;
		}
		if (WEXITSTATUS(status) == T_EXIT_FAIL)
			worst = T_EXIT_FAIL;
	}
	return worst;
}
