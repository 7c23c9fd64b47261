/* SPDX-License-Identifier: MIT */
/*
 * audit_calls - make the calls whose audit records audit-watch.sh compares.
 *
 * Each call works in its own directory DIR/NAME, so that a watch on that
 * directory (auditctl -w DIR/NAME -p w -k ocdir-NAME) says which call it saw:
 *
 *   mkdirat    mkdirat(d, "new", 0755)                    the reference
 *   openat     openat(d, "new", O_CREAT|O_DIRECTORY)       a write, as mkdirat
 *   openat2    openat2(d, "new", O_CREAT|O_DIRECTORY)      a write, as mkdirat
 *   open       open("DIR/open/new", O_CREAT|O_DIRECTORY)   a write, as mkdirat
 *   readonly   openat(d, "sub", O_RDONLY|O_DIRECTORY)      a read: no perm=w match
 *   opath      openat(d, "sub", O_PATH|O_CREAT|O_DIRECTORY) O_PATH drops O_CREAT:
 *                                                        nothing made, no match
 *
 * One PASS/FAIL line per call for what the call itself did (a new
 * directory, an fd); whether audit saw it is the script's to check.
 */
#include <limits.h>
#include <linux/openat2.h>

#include "../helpers.h"

/* The directory DIR/NAME that the call NAME works in, opened. */
static int case_dir(const char *root, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * The call NAME returned ret (an fd, 0 for mkdirat, or -1): did it leave a
 * directory "new" in dfd?  Closes ret and dfd.
 */
static void check_created(const char *name, int dfd, int ret)
{
	struct stat st;

	if (ret < 0)
		t_fail(name, "%s", t_errname(errno));
	else
		T_CHECK(name, fstatat(dfd, "new", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			S_ISDIR(st.st_mode), "no directory \"new\" after the call");
	if (ret > 0)
		close(ret);
	if (dfd >= 0)
		close(dfd);
}

int main(int argc, char **argv)
{
	struct open_how how = { .flags = O_CREAT | O_DIRECTORY | O_CLOEXEC, .mode = 0755 };
	char path[PATH_MAX];
	int dfd, fd;

	if (argc != 2) {
		fprintf(stderr, "usage: audit_calls DIR\n");
		return 2;
	}

	dfd = case_dir(argv[1], "mkdirat");
	check_created("mkdirat", dfd, mkdirat(dfd, "new", 0755));

	dfd = case_dir(argv[1], "openat");
	check_created("openat", dfd, openat(dfd, "new", O_CREAT | O_DIRECTORY | O_CLOEXEC, 0755));

	dfd = case_dir(argv[1], "openat2");
	check_created("openat2", dfd, (int)syscall(SYS_openat2, dfd, "new", &how, sizeof(how)));

	dfd = case_dir(argv[1], "open");
	snprintf(path, sizeof(path), "%s/open/new", argv[1]);
	check_created("open", dfd, open(path, O_CREAT | O_DIRECTORY | O_CLOEXEC, 0755));

	dfd = case_dir(argv[1], "readonly");
	fd = openat(dfd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	T_CHECK("readonly", fd >= 0, "%s", t_errname(errno));

	dfd = case_dir(argv[1], "opath");
	fd = openat(dfd, "sub", O_PATH | O_CREAT | O_DIRECTORY | O_CLOEXEC, 0755);
	T_CHECK("opath", fd >= 0, "%s", t_errname(errno));
	return t_exit_status();
}
