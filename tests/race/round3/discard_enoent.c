/* SPDX-License-Identifier: MIT */
/*
 * discard_enoent.c - ocdir_discard() returns 0 (handle freed, "nothing of
 * the prepared tree is left") while the tree is still there, because any
 * -ENOENT from deep inside remove_tree() is taken for "the prepared
 * directory is gone" (lib/prepare.c ocdir_discard: `r != -ENOENT`).
 *
 * Victim: uid 1000 (no privilege), prepares DIR/dest, makes it 0777 and
 * hands its descriptor to a worker (uid 65534, the attacker) to fill.
 * The worker makes a/ (its own, so the victim's take_back cannot change it)
 * with a/x/f inside, then renames a/x <-> a/y in a loop. The victim calls
 * ocdir_discard(). A hit: discard returned 0 but the staging directory
 * still holds the prepared tree (more than the one empty 0700 directory).
 * Also counted: -1 returns (fine, handle kept), and leftovers after -1.
 *
 *   discard_enoent DIR ROUNDS
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ocdir.h"

static int count_entries_deep(const char *path)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "find '%s' -mindepth 1 | wc -l", path);
	FILE *f = popen(cmd, "r");
	int n = -1;
	if (f) { if (fscanf(f, "%d", &n) != 1) n = -1; pclose(f); }
	return n;
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	long rounds = argc > 2 ? atol(argv[2]) : 1000, i;
	long hits = 0, zero = 0, minus = 0, other = 0;
	char arena[256];
	volatile int *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	for (i = 0; i < rounds; i++) {
		snprintf(arena, sizeof arena, "%s/atkA.%d.%ld", base, getpid(), i);
		mkdir(arena, 0755);
		(void)!chown(arena, 1000, 1000);
		sh[0] = 0; sh[1] = 0;
		pid_t v = fork();
		if (!v) {
			/* victim, uid 1000 */
			(void)!setresgid(1000, 1000, 0);
			(void)!setresuid(1000, 1000, 0);	/* saved 0: only to fork the worker */
			umask(022);
			struct ocdir_how how = { .flags = O_RDONLY, .mode = 0777 };
			struct ocdir_prepared *p;
			int dfd = open(arena, O_PATH | O_DIRECTORY);
			int fd = ocdir_prepare(dfd, "dest", &how, sizeof how, &p);
			if (fd < 0) { perror("prepare"); _exit(3); }
			fchmod(fd, 0777);
			pid_t a = fork();
			if (!a) {
				/* worker/attacker, uid 65534, holds the descriptor */
				(void)!setresuid(0, 0, 0);
				(void)!setresgid(65534, 65534, 65534);
				if (setresuid(65534, 65534, 65534) < 0) _exit(2);
				umask(0);
				if (fchdir(fd) < 0) _exit(1);
				mkdir("a", 0777);
				if (chdir("a") < 0) _exit(1);
				mkdir("x", 0777);
				mkdir("x/sub", 0777);
				close(open("x/f", O_CREAT | O_WRONLY, 0666));
				sh[0] = 1;
				while (!sh[1]) {
					rename("x", "y");
					rename("y", "x");
				}
				_exit(0);
			}
			while (!sh[0]) ;
			int r = ocdir_discard(p);
			int e = errno;
			sh[1] = 1;
			waitpid(a, NULL, 0);
			_exit(r == 0 ? (e == 0 ? 10 : 11) : 20);
		}
		int st;
		waitpid(v, &st, 0);
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 99;
		int left = count_entries_deep(arena);
		if (code == 10 || code == 11) {
			zero++;
			/* allowed: nothing, or one empty .ocdir-stage dir */
			if (left > 1) {
				hits++;
				if (hits <= 3) {
					char cmd[512];
					fprintf(stderr, "HIT round %ld: discard said 0 (errno %s), left:\n",
						i, code == 10 ? "0" : "set");
					snprintf(cmd, sizeof cmd, "find %s -printf '%%M %%u %%p\\n' >&2", arena);
					(void)!system(cmd);
				}
			}
		} else if (code == 20) {
			minus++;
		} else {
			other++;
		}
		char cmd[512];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", arena);
		(void)!system(cmd);
	}
	printf("RESULT discard_enoent base=%s rounds=%ld discard0=%ld discard-1=%ld other=%ld HITS=%ld\n",
	       base, rounds, zero, minus, other, hits);
	return 0;
}
