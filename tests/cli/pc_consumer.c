/* SPDX-License-Identifier: MIT */
/*
 * tests/cli/pc_consumer.c - a program built against an *installed* libocdir
 * through `pkg-config --cflags --libs ocdir` (tests/suites/60-cli): it must
 * find the header, link, load the shared library and create a directory.
 * Usage: pc_consumer DIR; exit 0 when DIR was created and opened.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ocdir.h>

int main(int argc, char **argv)
{
	struct ocdir_how how = { .mode = 0755 };
	const char *reason;
	struct stat st;
	int created = 0, fd, backend;

	if (argc != 2) {
		fprintf(stderr, "usage: pc_consumer DIR\n");
		return 2;
	}
	fd = ocdir_openat2(AT_FDCWD, argv[1], &how, sizeof(how), &created);
	if (fd < 0) {
		fprintf(stderr, "pc_consumer: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || !created) {
		fprintf(stderr, "pc_consumer: %s: not a directory we created\n", argv[1]);
		return 1;
	}
	close(fd);
	backend = ocdir_backend(&reason);
	printf("%s: %s\n", backend == OCDIR_BACKEND_NATIVE ? "native" : "emulated",
	       reason);
	return 0;
}
