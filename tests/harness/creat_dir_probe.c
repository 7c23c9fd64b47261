/* SPDX-License-Identifier: MIT */
/*
 * creat_dir_probe - what does open(O_CREAT|O_DIRECTORY) do on this kernel?
 *
 * Runs the two calls of docs/harness.md in a scratch directory and checks
 * them against the era named on the command line, so that the harness can
 * prove it booted the kernel it meant to:
 *
 *   era       openat(d, ".", ...)   openat(d, "new", ...)
 *   stock     EINVAL                EINVAL, nothing created
 *   legacy    EISDIR                ENOTDIR, a *regular file* "new" left behind
 *   patched   an O_DIRECTORY fd     an fd to a new directory "new"
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "../helpers.h"

static const char *describe(int fd, int err)
{
	static char buf[64];
	struct stat st;

	if (fd < 0)
		return t_errname(err);
	if (fstat(fd, &st))
		return "fd (fstat failed)";
	snprintf(buf, sizeof(buf), "fd to a %s",
		 S_ISDIR(st.st_mode) ? "directory" :
		 S_ISREG(st.st_mode) ? "regular file" : "non-directory");
	return buf;
}

/* What, if anything, the second call left at the name "new". */
static const char *left_behind(int dfd)
{
	struct stat st;

	if (fstatat(dfd, "new", &st, AT_SYMLINK_NOFOLLOW))
		return "nothing";
	return S_ISDIR(st.st_mode) ? "a directory" :
	       S_ISREG(st.st_mode) ? "a regular file" : "something else";
}

int main(int argc, char **argv)
{
	const char *want_dot, *want_new, *want_left;
	const char *era, *dir = ".";
	char name[128], scratch[4096];
	int dfd, fd, err;
	const char *got;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s stock|legacy|patched [DIR]\n", argv[0]);
		return 2;
	}
	era = argv[1];
	if (argc == 3)
		dir = argv[2];
	if (!strcmp(era, "stock")) {
		want_dot = "EINVAL", want_new = "EINVAL", want_left = "nothing";
	} else if (!strcmp(era, "legacy")) {
		want_dot = "EISDIR", want_new = "ENOTDIR", want_left = "a regular file";
	} else if (!strcmp(era, "patched")) {
		want_dot = "fd to a directory", want_new = "fd to a directory";
		want_left = "a directory";
	} else {
		fprintf(stderr, "%s: unknown era '%s'\n", argv[0], era);
		return 2;
	}

	snprintf(scratch, sizeof(scratch), "%s/creat_dir_probe.XXXXXX", dir);
	if (!mkdtemp(scratch)) {
		t_fail("probe setup", "mkdtemp in %s: %s", dir, strerror(errno));
		return t_exit_status();
	}
	dfd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	fd = openat(dfd, ".", O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0);
	err = errno;
	got = describe(fd, err);
	printf("# %s: openat(d, \".\", O_CREAT|O_DIRECTORY) -> %s\n", era, got);
	snprintf(name, sizeof(name), "%s: openat(d, \".\", O_CREAT|O_DIRECTORY) gives %s", era, want_dot);
	T_CHECK(name, !strcmp(got, want_dot), "got %s", got);
	if (fd >= 0)
		close(fd);

	fd = openat(dfd, "new", O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0755);
	err = errno;
	got = describe(fd, err);
	printf("# %s: openat(d, \"new\", O_CREAT|O_DIRECTORY) -> %s, leaves %s\n",
	       era, got, left_behind(dfd));
	snprintf(name, sizeof(name), "%s: openat(d, \"new\", O_CREAT|O_DIRECTORY) gives %s", era, want_new);
	T_CHECK(name, !strcmp(got, want_new), "got %s", got);
	snprintf(name, sizeof(name), "%s: openat(d, \"new\", O_CREAT|O_DIRECTORY) leaves %s", era, want_left);
	T_CHECK(name, !strcmp(left_behind(dfd), want_left), "found %s", left_behind(dfd));
	if (fd >= 0)
		close(fd);

	unlinkat(dfd, "new", 0);
	unlinkat(dfd, "new", AT_REMOVEDIR);
	close(dfd);
	rmdir(scratch);
	return t_exit_status();
}
