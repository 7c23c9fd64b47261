/* SPDX-License-Identifier: MIT */
/*
 * demo_calls - the calls `make run` shows on each kernel, one line per case:
 *
 *   case<TAB>raw open(O_CREAT|O_DIRECTORY) result<TAB>libocdir result
 *
 * and a last line "backend<TAB><backend and why>".  vm/demo runs this in the
 * legacy, stock and patched guests and lays the columns side by side.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "ocdir.h"

#include "../tests/helpers.h"

struct demo_case {
	const char *name;	/* shown in the table */
	const char *path;	/* what the call opens, relative to a scratch dir */
	int flags;		/* on top of O_CREAT|O_DIRECTORY */
	const char *setup;	/* "dir", "file", "dangling" or NULL */
};

static const struct demo_case cases[] = {
	{ "absent name",            "new",     0,        NULL },
	{ "existing directory",     "dir",     0,        "dir" },
	{ "existing dir + O_EXCL",  "dir",     O_EXCL,   "dir" },
	{ "existing regular file",  "file",    0,        "file" },
	{ "\".\" (the probe)",      ".",       0,        NULL },
	{ "trailing slash \"new/\"", "new/",   0,        NULL },
	{ "dangling symlink",       "link",    0,        "dangling" },
	{ "O_RDWR",                 "new",     O_RDWR,   NULL },
};

static int make_scratch(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/ocdir-demo.XXXXXX");
	return mkdtemp(dir) ? 0 : -errno;
}

static void setup_case(int dfd, const char *setup, const char *path)
{
	if (!setup)
		return;
	if (!strcmp(setup, "dir"))
		mkdirat(dfd, path, 0755);
	else if (!strcmp(setup, "file"))
		close(openat(dfd, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	else if (!strcmp(setup, "dangling"))
		(void)!symlinkat("missing-target", dfd, path);
}

/* "fd (directory)", an errno name, plus what the call left at "new". */
static void describe(char *buf, size_t len, int fd, int err, int dfd)
{
	struct stat st;
	const char *left = "";

	if (fd >= 0) {
		fstat(fd, &st);
		snprintf(buf, len, "fd, %s", S_ISDIR(st.st_mode) ? "directory" : "NOT a directory");
		close(fd);
		return;
	}
	if (!fstatat(dfd, "new", &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
		left = " + regular file left";
	else if (!fstatat(dfd, "missing-target", &st, AT_SYMLINK_NOFOLLOW))
		left = " + created through the symlink";
	snprintf(buf, len, "%s%s", t_errname(err), left);
}

/* Remove everything a case may have left in the scratch directory. */
static void clean(int dfd)
{
	static const char *const names[] = { "new", "dir", "file", "link", "missing-target" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		unlinkat(dfd, names[i], 0);
		unlinkat(dfd, names[i], AT_REMOVEDIR);
	}
}

int main(void)
{
	char dir[64], raw[64], lib[64];
	const char *reason;
	int dfd, fd, err;

	if (make_scratch(dir, sizeof(dir)) < 0) {
		perror("demo_calls: mkdtemp");
		return 1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct demo_case *c = &cases[i];

		setup_case(dfd, c->setup, c->path);
		fd = openat(dfd, c->path, O_CREAT | O_DIRECTORY | O_CLOEXEC | c->flags, 0755);
		err = errno;
		describe(raw, sizeof(raw), fd, err, dfd);
		clean(dfd);

		setup_case(dfd, c->setup, c->path);
		fd = ocdir_openat(dfd, c->path, c->flags, 0755);
		err = errno;
		describe(lib, sizeof(lib), fd, err, dfd);
		clean(dfd);

		printf("%s\t%s\t%s\n", c->name, raw, lib);
	}
	printf("backend\t%s\t\n", ocdir_backend(&reason) == OCDIR_BACKEND_NATIVE ?
	       "native" : "emulated");
	printf("why\t%s\t\n", reason);
	close(dfd);
	rmdir(dir);
	return 0;
}
