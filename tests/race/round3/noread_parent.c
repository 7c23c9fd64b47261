/* SPDX-License-Identifier: MIT */
/*
 * noread_parent.c - a shared parent the caller may write and search but
 * not read (mode 0333/0733, root's; a drop-box): stage_expect_read() needs
 * the parent's default ACL, oc_default_acl() cannot open the O_PATH parent
 * for reading (EACCES) and its getxattrat(2) fallback answers EBADF for an
 * O_PATH descriptor on this kernel, so every staged create fails with
 * EOPNOTSUPP (and openat2_setup with OCDIR_ALLOW_WEAK_EMULATION silently
 * takes the weak in-place way). Victim uid 1000.
 *   noread_parent BASE ROUNDS
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ocdir.h"
static char arena[256];
static int inplace;
static int probe(int fd, const char *p, unsigned f, void *a)
{
	struct stat s1, s2; char q[300];

	(void)f;
	(void)a;
	snprintf(q, sizeof q, "%s/%s", arena, p);
	inplace = fstat(fd, &s1) == 0 && stat(q, &s2) == 0 && s1.st_ino == s2.st_ino;
	return 0;
}
int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	long rounds = argc > 2 ? atol(argv[2]) : 100;
	long eop_openat2 = 0, eop_prepare = 0, weak_setup = 0, ok = 0;
	snprintf(arena, sizeof arena, "%s/atkH.%d", base, getpid());
	mkdir(arena, 0333); chmod(arena, 0333);
	pid_t v = fork();
	if (!v) {
		(void)!setresgid(1000, 1000, 1000); (void)!setresuid(1000, 1000, 1000);
		int dfd = open(arena, O_PATH | O_DIRECTORY);
		for (long i = 0; i < rounds; i++) {
			char n[64]; struct ocdir_how how = { .flags = O_RDONLY, .mode = 0755 };
			snprintf(n, sizeof n, "a%ld", i);
			int fd = ocdir_openat2(dfd, n, &how, sizeof how, NULL);
			if (fd < 0 && errno == EOPNOTSUPP) eop_openat2++; else if (fd >= 0) ok++, close(fd);
			struct ocdir_prepared *p; snprintf(n, sizeof n, "p%ld", i);
			fd = ocdir_prepare(dfd, n, &how, sizeof how, &p);
			if (fd < 0 && errno == EOPNOTSUPP) eop_prepare++;
			else if (fd >= 0) { close(fd); ocdir_discard(p); }
			how.options = OCDIR_ALLOW_WEAK_EMULATION; inplace = 0;
			snprintf(n, sizeof n, "s%ld", i);
			fd = ocdir_openat2_setup(dfd, n, &how, sizeof how, probe, NULL, NULL);
			if (fd >= 0) close(fd);
			if (inplace) weak_setup++;
		}
		printf("RESULT noread_parent base=%s rounds=%ld openat2_ok=%ld HITS_openat2_EOPNOTSUPP=%ld "
		       "HITS_prepare_EOPNOTSUPP=%ld HITS_setup_weak_in_place=%ld\n",
		       base, rounds, ok, eop_openat2, eop_prepare, weak_setup);
		fflush(stdout);
		_exit(0);
	}
	waitpid(v, NULL, 0);
	char c[300]; snprintf(c, sizeof c, "rm -rf %s", arena); (void)!system(c);
	return 0;
}
