/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/hook.c - the fd-identity test hook of make test-hooks (the
 * bindings' identity tests stand on it): with OCDIR_TEST_SWAP_AFTER=1 each
 * call that hands out a descriptor to a name has moved that name to
 * NAME.ocdir-test-moved and made a fresh directory at NAME; without the
 * variable, or in a process the kernel marks AT_SECURE (setuid), nothing
 * moves.
 *
 *   lib-hook DIR            the checks, linked with the test-hooks library
 *   lib-hook --one DIR NAME with the variable set, one ocdir_openat of
 *                           DIR/NAME; exit 0 if the name stayed, 3 if it
 *                           moved (the setuid check runs this copy)
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "../helpers.h"
#include "ocdir.h"

static int dirfd_of(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "lib-hook: %s: %s\n", dir, strerror(errno));
		exit(T_EXIT_FAIL);
	}
	return fd;
}

static int moved(int dirfd, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s.ocdir-test-moved", name);
	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* fd is the moved directory, and name now another one */
static int fd_is_moved(int dirfd, const char *name, int fd)
{
	char path[512];
	struct stat a, m, n;

	snprintf(path, sizeof(path), "%s.ocdir-test-moved", name);
	return fstat(fd, &a) == 0 && fstatat(dirfd, path, &m, 0) == 0 &&
	       fstatat(dirfd, name, &n, 0) == 0 && a.st_ino == m.st_ino &&
	       a.st_dev == m.st_dev && a.st_ino != n.st_ino;
}

int main(int argc, char **argv)
{
	struct ocdir_how how = { .mode = 0755 };
	struct ocdir_prepared *p;
	int dfd, fd, created;

	if (argc == 4 && !strcmp(argv[1], "--one")) {
		dfd = dirfd_of(argv[2]);
		setenv("OCDIR_TEST_SWAP_AFTER", "1", 1);
		fd = ocdir_openat(dfd, argv[3], O_CREAT | O_DIRECTORY | O_RDONLY, 0755);
		if (fd < 0) {
			fprintf(stderr, "lib-hook: ocdir_openat: %s\n", strerror(errno));
			return T_EXIT_FAIL;
		}
		return moved(dfd, argv[3]) ? 3 : 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: lib-hook DIR | lib-hook --one DIR NAME\n");
		return 2;
	}
	dfd = dirfd_of(argv[1]);

	fd = ocdir_openat2(dfd, "off", &how, sizeof(how), &created);
	T_CHECK("unset-nothing-moves", fd >= 0 && !moved(dfd, "off"), "moved without the variable");
	if (fd >= 0)
		close(fd);

	setenv("OCDIR_TEST_SWAP_AFTER", "1", 1);
	fd = ocdir_openat2(dfd, "a", &how, sizeof(how), &created);
	T_CHECK("openat2-moved", fd >= 0 && fd_is_moved(dfd, "a", fd),
		"the descriptor is not the moved directory");
	if (fd >= 0)
		close(fd);
	fd = ocdir_mkpath(dfd, "b", &how, sizeof(how), &created);
	T_CHECK("mkpath-moved", fd >= 0 && fd_is_moved(dfd, "b", fd),
		"the descriptor is not the moved directory");
	if (fd >= 0)
		close(fd);
	fd = ocdir_prepare(dfd, "c", &how, sizeof(how), &p);
	T_CHECK("publish-moved", fd >= 0 && ocdir_publish(p) == 0 && fd_is_moved(dfd, "c", fd),
		"the prepared descriptor is not the moved directory");
	if (fd >= 0)
		close(fd);
	fd = ocdir_openat(dfd, "nodir/x", O_CREAT | O_DIRECTORY | O_RDONLY, 0755);
	T_CHECK("failure-nothing-moves", fd < 0 && errno == ENOENT && !moved(dfd, "nodir/x"),
		"a failed call moved something");
	unsetenv("OCDIR_TEST_SWAP_AFTER");
	return t_exit_status();
}
