/* SPDX-License-Identifier: MIT */
/*
 * lib/probe.c - the decisions libocdir takes once per process: which
 * backend, and the environment switches for tests. This and the remembered
 * absence of openat2 are the library's only global state.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static struct oc_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* Only a failure is remembered: ENOSYS cannot turn into success later. */
static int openat2_missing;

/*
 * secure_getenv(): in a setuid, setgid or file-capability program every
 * switch reads as unset, so whoever runs such a program cannot move it off
 * the native call or onto a test-only path.
 */
static int env_is_set(const char *name)
{
	const char *v = secure_getenv(name);

	return v && strcmp(v, "1") == 0;
}

/*
 * The side-effect-free probe of docs/semantics.md section 4: "/" always
 * exists, so no kernel creates anything; a patched one opens it.
 */
static void probe(void)
{
	int fd;

	config.force_resolver = env_is_set("OCDIR_FORCE_RESOLVER");
	config.no_noreplace = env_is_set("OCDIR_TEST_NO_NOREPLACE");
	if (env_is_set("OCDIR_FORCE_EMULATION")) {
		config.reason = "forced by OCDIR_FORCE_EMULATION=1";
		return;
	}
	fd = oc_openat(AT_FDCWD, "/", O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0);
	if (fd >= 0) {
		/* "/" was opened, not created: 0 where the kernel can say so. */
		config.created_query = oc_created_query(fd) == 0;
		close(fd);
		config.native = 1;
		config.reason = "probe: O_CREAT|O_DIRECTORY opened \"/\" (kernel with ocdir patches)";
		return;
	}
	switch (-fd) {
	case EINVAL:
		config.reason = "probe: EINVAL (stock kernel 6.4 or later, or a stable branch with that change)";
		break;
	case EISDIR:
		config.reason = "probe: EISDIR (kernel before 6.4 without the EINVAL change)";
		break;
	case ENOTDIR:
		config.reason = "probe: ENOTDIR (unexpected; treated as no native support)";
		break;
	case EACCES:
		config.reason = "probe: EACCES (cannot read \"/\"; native support unknown)";
		break;
	default:
		config.reason = "probe: unexpected error; native support unknown";
		break;
	}
}

const struct oc_config *oc_config(void)
{
	pthread_once(&config_once, probe);
	return &config;
}

int oc_openat2_missing(void)
{
	return __atomic_load_n(&openat2_missing, __ATOMIC_RELAXED);
}

void oc_set_openat2_missing(void)
{
	__atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
}

OC_EXPORT int ocdir_backend(const char **reason)
{
	const struct oc_config *c = oc_config();

	if (reason)
		*reason = c->reason;
	return c->native ? OCDIR_BACKEND_NATIVE : OCDIR_BACKEND_EMULATED;
}

#ifdef OCDIR_TEST_HOOKS
int oc_test_swap_after(int dirfd, const char *path, int fd)
{
	char moved[PATH_MAX];
	int saved = errno;

	/* Read at every call so that a test can turn it on for one call. */
	if (fd < 0 || getauxval(AT_SECURE) || !env_is_set("OCDIR_TEST_SWAP_AFTER"))
		return fd;
	if ((size_t)snprintf(moved, sizeof(moved), "%s.ocdir-test-moved", path) <
	    sizeof(moved) &&
	    renameat(dirfd, path, dirfd, moved) == 0)
		mkdirat(dirfd, path, 0700);
	errno = saved;
	return fd;
}
#endif
