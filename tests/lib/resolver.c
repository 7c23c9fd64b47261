/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/resolver.c - the userspace resolver must answer exactly as
 * openat2(2) does: same errno, or a descriptor to the same inode, for a
 * corpus of tricky paths under every RESOLVE_* combination we support.
 *
 *   lib-resolver [DIR]     (default: a new directory under /tmp)
 *
 * Needs openat2 (5.6+) as the reference; as root it also mounts a tmpfs in
 * a private mount namespace to test mount crossings.
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "../helpers.h"
#include "internal.h"

static const char *const corpus[] = {
	".", "..", "../..", "a/../..", "/", "//", "/a", "a", "a/", "a//b///",
	"a/b/c/../../..", "a/b/c/../../../..", "abs", "abs/a", "abs/..",
	"absa", "absa/b", "up", "up/x", "upup/..", "self/self/a", "loop1",
	"loop1/x", "dangling", "dangling/", "a/rel", "a/rel/", "f", "f/",
	"f/x", "s40", "s41", "s40/b", "nonexist", "nonexist/x", "a/b/c/d/e",
	"mnt", "mnt/..", "mnt/../a", "mnt/sub", "mnt/sub/../..",
	"/proc/self/cwd", "/proc/self/cwd/a", "/proc/self/root/tmp",
	"fdlink", "fdlink/b", "a/./b/./c/.", "absup", "absup/a",
};

static const unsigned long long resolves[] = {
	0,
	RESOLVE_BENEATH,
	RESOLVE_IN_ROOT,
	RESOLVE_NO_SYMLINKS,
	RESOLVE_NO_MAGICLINKS,
	RESOLVE_NO_XDEV,
	RESOLVE_BENEATH | RESOLVE_NO_XDEV,
	RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS,
	RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	RESOLVE_IN_ROOT | RESOLVE_NO_XDEV,
};

static const int oflags[] = {
	O_PATH | O_CLOEXEC,
	O_PATH | O_NOFOLLOW | O_CLOEXEC,
	O_RDONLY | O_DIRECTORY | O_CLOEXEC,
	O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
};

static int mkfile(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int build_corpus(int dfd, int *has_mount, const char *dir)
{
	char name[16], target[16], fdlink[64], path[4200];
	int i, r = 0;

	r |= mkdirat(dfd, "a", 0755) | mkdirat(dfd, "a/b", 0755) |
	     mkdirat(dfd, "a/b/c", 0755) | mkfile(dfd, "f");
	r |= symlinkat("/", dfd, "abs") | symlinkat("/a", dfd, "absa") |
	     symlinkat("..", dfd, "up") | symlinkat("../..", dfd, "upup") |
	     symlinkat("loop2", dfd, "loop1") | symlinkat("loop1", dfd, "loop2") |
	     symlinkat(".", dfd, "self") | symlinkat("nowhere", dfd, "dangling") |
	     symlinkat("../f", dfd, "a/rel") | symlinkat("/../..", dfd, "absup");
	for (i = 1; i <= 41; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		if (i == 41)
			snprintf(target, sizeof(target), "a");
		else
			snprintf(target, sizeof(target), "s%d", i + 1);
		r |= symlinkat(target, dfd, name);
	}
	/* s1..s41 is 41 links; s40 reaches "a" through 2 of them. */
	snprintf(fdlink, sizeof(fdlink), "/proc/self/fd/%d", dfd);
	r |= symlinkat(fdlink, dfd, "fdlink");
	r |= mkdirat(dfd, "mnt", 0755);
	*has_mount = 0;
	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
		snprintf(path, sizeof(path), "%s/mnt", dir);
		if (mount("ocdir-test", path, "tmpfs", 0, "mode=0755") == 0) {
			*has_mount = 1;
			r |= mkdirat(dfd, "mnt/sub", 0755);
		}
	}
	return r;
}

static int same_result(int a, int erra, int b, int errb, char *why, size_t size)
{
	struct stat sa, sb;

	if (a < 0 || b < 0) {
		if (a < 0 && b < 0 && erra == errb)
			return 1;
		snprintf(why, size, "openat2 %s, resolver %s",
			 a < 0 ? t_errname(erra) : "fd", b < 0 ? t_errname(errb) : "fd");
		return 0;
	}
	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0 ||
	    sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino) {
		snprintf(why, size, "different inodes");
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	char dir[4096], name[512], why[256];
	struct open_how probe_how = { .flags = O_PATH };
	int dfd, has_mount, fds;
	size_t p, r, o;

	if (syscall(SYS_openat2, AT_FDCWD, "/", &probe_how, sizeof(probe_how)) < 0) {
		t_skip("resolver-vs-openat2", "no openat2 to compare with: %s", strerror(errno));
		return t_exit_status();
	}
	if (argc > 1)
		snprintf(dir, sizeof(dir), "%s/resolver.%d", argv[1], (int)getpid());
	else
		snprintf(dir, sizeof(dir), "/tmp/ocdir-resolver.%d", (int)getpid());
	if (mkdir(dir, 0755) < 0 || (dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		t_fail("setup", "%s: %s", dir, strerror(errno));
		return t_exit_status();
	}
	if (build_corpus(dfd, &has_mount, dir)) {
		t_fail("setup", "corpus: %s", strerror(errno));
		return t_exit_status();
	}
	if (chdir(dir) < 0) {
		t_fail("setup", "chdir: %s", strerror(errno));
		return t_exit_status();
	}
	if (!has_mount)
		t_skip("mount-crossing", "cannot mount a tmpfs in a private namespace (not root?)");

	fds = t_count_fds();
	for (p = 0; p < sizeof(corpus) / sizeof(corpus[0]); p++) {
		for (r = 0; r < sizeof(resolves) / sizeof(resolves[0]); r++) {
			const char *bad = NULL;

			snprintf(name, sizeof(name), "resolve-%#llx:%s", resolves[r], corpus[p]);
			if (!has_mount && !strncmp(corpus[p], "mnt", 3))
				continue;
			for (o = 0; o < sizeof(oflags) / sizeof(oflags[0]) && !bad; o++) {
				struct open_how how = {
					.flags = (unsigned int)oflags[o], .resolve = resolves[r],
				};
				int a, b, erra, errb;

				/* EAGAIN: a ".." raced with some rename on the system. */
				do {
					a = (int)syscall(SYS_openat2, dfd, corpus[p], &how, sizeof(how));
					erra = errno;
				} while (a < 0 && erra == EAGAIN);
				b = oc_resolver_open(dfd, corpus[p], oflags[o], resolves[r]);
				errb = b < 0 ? -b : 0;
				if (!same_result(a, erra, b, errb, why, sizeof(why)))
					bad = why;
				if (a >= 0)
					close(a);
				if (b >= 0)
					close(b);
				if (bad) {
					size_t l = strlen(why);

					snprintf(why + l, sizeof(why) - l, " (flags %#o)", oflags[o]);
				}
			}
			if (bad)
				t_fail(name, "%s", bad);
			else
				t_pass(name);
		}
	}
	T_CHECK("resolver-no-fd-leak", t_count_fds() == fds, "fd count %d -> %d", fds, t_count_fds());
	close(dfd);
	return t_exit_status();
}
