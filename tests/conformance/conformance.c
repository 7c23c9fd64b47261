/* SPDX-License-Identifier: MIT */
/*
 * tests/conformance/conformance.c - run the case table of cases.h against
 * one backend, in a directory given on the command line:
 *
 *   conformance --backend B --dir DIR [--user UID]
 *   conformance --print-table
 *
 *   raw             open(2)/openat2(2) with O_CREAT|O_DIRECTORY directly
 *   native          libocdir, which must have picked the native backend
 *   emulated        libocdir with OCDIR_FORCE_EMULATION=1
 *   resolver        ... and OCDIR_FORCE_RESOLVER=1 (userspace scoping)
 *   weak            ... emulated, RENAME_NOREPLACE refused, and the caller
 *                   opts in to the in-place fallback in shared parents
 *                   (OCDIR_ALLOW_WEAK_EMULATION)
 *   seccomp-enosys  libocdir (own choice) with openat2 blocked: ENOSYS
 *   seccomp-eperm   libocdir (own choice) with openat2 blocked: EPERM
 *
 * A backend that cannot run here (raw/native on a kernel without the ocdir
 * patches) FAILS: it was asked for explicitly. --user runs the calls as
 * that uid (setup still runs as root, which --user requires).
 *
 * The cases run in a child process, which may unshare its mount namespace
 * for the mount-crossing cases. Output: the tests/helpers.h protocol.
 *
 * For native, inotify on each case directory tells which path a creating
 * call took: the kernel (one IN_CREATE|IN_ISDIR for the name) or the
 * emulation (a .ocdir-stage.* directory first), which the library falls
 * back to where the kernel only looks the name up (docs/semantics.md,
 * rule 13). A summary line per run checks that against the filesystem.
 *
 * --print-table writes the table as tab-separated text, the one the
 * bindings' conformance tests read (bindings/README.md): make writes it to
 * build/tests/conformance.tsv, so cases.h stays the only copy of the
 * cases and every language checks the errno this program checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "../helpers.h"
#include "ocdir.h"
#include "cases.h"
#include "calls.h"

enum backend { B_RAW, B_NATIVE, B_EMULATED, B_RESOLVER, B_WEAK,
	       B_SECCOMP_ENOSYS, B_SECCOMP_EPERM };

static const char *const backend_names[] = {
	"raw", "native", "emulated", "resolver", "weak",
	"seccomp-enosys", "seccomp-eperm",
};

struct run {
	enum backend backend;
	const char *dir;	/* where the case directories go */
	char base[2048];	/* our own directory under dir */
	int as_user;
	uid_t uid;
	int mounts_ok;		/* mount namespace available */
	int no_noreplace;	/* the filesystem refuses RENAME_NOREPLACE */
	mode_t mkdir_drops;	/* mode bits mkdirat(2) drops on this filesystem */
	const char *fs_type;	/* from /proc/self/mountinfo */
	int made_by_kernel;	/* native creations seen, by path taken */
	int made_by_emulation;
	int calls;		/* --calls: the table of calls.h */
};

/* ---- setup ---- */

/*
 * chown(2) by root fails so where the filesystem cannot give a file another
 * owner (cifs without the Unix extensions: EINVAL): the cases that need
 * other owners, and the --user run, skip there.
 */
#define NO_OTHER_OWNERS "this filesystem cannot give files other owners (chown: %s)"

static int no_other_owners(int err)
{
	return err == EINVAL || err == EOPNOTSUPP;
}

static void subst(char *out, size_t size, const char *in, const char *casedir)
{
	size_t n = 0;

	while (*in && n + 1 < size) {
		if (in[0] == '%' && in[1] == 'D') {
			n += (size_t)snprintf(out + n, size - n, "%s", casedir);
			in += 2;
			if (n >= size)
				n = size - 1;
			continue;
		}
		out[n++] = *in++;
	}
	out[n] = '\0';
}

/*
 * Run one setup operation in casefd; returns 0 or an error message.  What
 * it makes is the test uid's: chowned for the --user run only (a chown by
 * root to root changes nothing, except on a server that maps it to an
 * inheritable ACL, as ksmbd does).
 */
static const char *setup_op(struct run *r, int casefd, const char *casedir,
			    char *op)
{
	char *arg = strchr(op, ':'), *eq;
	char target[4096];
	int fd;

	if (!arg)
		return "bad setup op";
	*arg++ = '\0';
	eq = strchr(arg, strcmp(op, "l") ? '=' : '>');
	if (eq)
		*eq++ = '\0';
	if (!strcmp(op, "d") || !strcmp(op, "m")) {
		if (mkdirat(casefd, arg, 0755) < 0)
			return "mkdir";
		if (!strcmp(op, "m")) {
			char path[8192], opts[128];

			if (!r->mounts_ok)
				return "no mount namespace";
			snprintf(path, sizeof(path), "%s/%s", casedir, arg);
			snprintf(opts, sizeof(opts), "mode=0755,uid=%u,gid=%u",
				 (unsigned)r->uid, (unsigned)r->uid);
			if (mount("ocdir-test", path, "tmpfs", 0, opts) < 0)
				return "mount tmpfs";
			return NULL;
		}
		if (r->as_user && fchownat(casefd, arg, r->uid, r->uid, AT_SYMLINK_NOFOLLOW) < 0)
			return "chown";
		if (eq && fchmodat(casefd, arg, (mode_t)strtoul(eq, NULL, 8), 0) < 0)
			return "chmod";
	} else if (!strcmp(op, "f")) {
		fd = openat(casefd, arg, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			return "create file";
		close(fd);
		if (r->as_user && fchownat(casefd, arg, r->uid, r->uid, AT_SYMLINK_NOFOLLOW) < 0)
			return "chown";
	} else if (!strcmp(op, "p")) {
		if (mknodat(casefd, arg, S_IFIFO | 0644, 0) < 0)
			return "mkfifo";
	} else if (!strcmp(op, "l")) {
		if (!eq)
			return "bad symlink op";
		subst(target, sizeof(target), eq, casedir);
		if (symlinkat(target, casefd, arg) < 0)
			return "symlink";
		if (r->as_user && fchownat(casefd, arg, r->uid, r->uid, AT_SYMLINK_NOFOLLOW) < 0)
			return "chown";
	} else if (!strcmp(op, "o")) {
		uid_t uid = (uid_t)strtoul(eq ? eq : "0", NULL, 10);

		if (fchownat(casefd, arg, uid, uid, AT_SYMLINK_NOFOLLOW) < 0)
			return "chown (needs root)";
	} else if (!strcmp(op, "chain")) {
		int i, n = atoi(arg);
		char name[32];

		for (i = 1; i <= n; i++) {
			snprintf(name, sizeof(name), "s%d", i);
			if (i == n)
				snprintf(target, sizeof(target), "d");
			else
				snprintf(target, sizeof(target), "s%d", i + 1);
			if (symlinkat(target, casefd, name) < 0)
				return "symlink chain";
		}
	} else {
		return "unknown setup op";
	}
	return NULL;
}

/*
 * Run a case's setup operations in casefd. Returns 1, or 0 once it has
 * reported the case (a SKIP where this filesystem cannot hold what the
 * setup needs, else a FAIL).
 */
static int setup_case(struct run *r, int casefd, const char *casedir,
		      const char *name, const char *ops)
{
	char setup[1024], *save = NULL, *op;
	const char *msg;

	snprintf(setup, sizeof(setup), "%s", ops);
	for (op = strtok_r(setup, " ", &save); op; op = strtok_r(NULL, " ", &save)) {
		msg = setup_op(r, casefd, casedir, op);
		/* 9p without a security model, for one, cannot hold fifos. */
		if (msg && !strcmp(msg, "mkfifo") &&
		    (errno == ENXIO || errno == EPERM || errno == EOPNOTSUPP)) {
			t_skip(name, "this filesystem cannot hold a fifo (%s)", strerror(errno));
			return 0;
		}
		/* cifs without the Unix extensions keeps one owner per share. */
		if (msg && !strncmp(msg, "chown", 5) && no_other_owners(errno)) {
			t_skip(name, NO_OTHER_OWNERS, strerror(errno));
			return 0;
		}
		if (msg) {
			t_fail(name, "setup %s: %s", msg, strerror(errno));
			return 0;
		}
	}
	return 1;
}

/*
 * Make case idx's directory (the test uid's), open it and run the setup
 * operations in it. Returns its descriptor, or -1 once the case is
 * reported (a FAIL, or a SKIP from setup_case).
 */
static int enter_case(struct run *r, int idx, char *casedir, size_t size,
		      const char *name, const char *ops)
{
	int casefd;

	snprintf(casedir, size, "%s/%03d", r->base, idx);
	if (mkdir(casedir, 0755) < 0 || (r->as_user && chown(casedir, r->uid, r->uid) < 0)) {
		t_fail(name, "setup: case directory: %s", strerror(errno));
		return -1;
	}
	casefd = open(casedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (casefd < 0) {
		t_fail(name, "setup: open case directory: %s", strerror(errno));
		return -1;
	}
	if (!setup_case(r, casefd, casedir, name, ops)) {
		close(casefd);
		return -1;
	}
	return casefd;
}

/* ---- checks ---- */

static int mode_of(const char *s)
{
	return (int)strtoul(s, NULL, 8);
}

/*
 * The permission bits mkdirat(2) gives a directory made with mode beside
 * path (in the same parent) under the current umask, or -1.
 */
static int mkdirat_mode(int casefd, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char ref[4096];
	struct stat st;
	int ret = -1;

	snprintf(ref, sizeof(ref), "%.*s.mode-ref",
		 slash ? (int)(slash - path + 1) : 0, path);
	if (mkdirat(casefd, ref, mode) < 0)
		return -1;
	if (fstatat(casefd, ref, &st, AT_SYMLINK_NOFOLLOW) == 0)
		ret = (int)(st.st_mode & 07777);
	unlinkat(casefd, ref, AT_REMOVEDIR);
	return ret;
}

/*
 * Returns NULL or a description of the first check that failed.
 * dropped: mode bits mkdirat(2) itself drops on this filesystem (bindfs
 * drops the sticky bit); the cases' modes are what local filesystems give,
 * and the contract is "as mkdirat(2) would".  made, if not NULL, is the
 * directory the call created with mode: where mkdirat(2) gives another mode
 * beside it than the case says (a server's own policy: ksmbd's), that one
 * is expected.
 */
static const char *check_after(int casefd, const char *after, mode_t dropped,
			       const char *made, mode_t mode, char *why, size_t size)
{
	char buf[1024], *save = NULL, *tok;
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", after);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char kind = tok[0], *path = tok + 2, *eq = strchr(path, '=');
		int r;

		if (eq)
			*eq++ = '\0';
		r = fstatat(casefd, path, &st, AT_SYMLINK_NOFOLLOW);
		switch (kind) {
		case '-':
			if (r == 0) {
				snprintf(why, size, "%s exists", path);
				return why;
			}
			break;
		case 'D': case 'E': case 'M':
			if (r < 0 || !S_ISDIR(st.st_mode)) {
				snprintf(why, size, "%s is not a directory", path);
				return why;
			}
			if (kind == 'M') {
				int want = mode_of(eq) & ~dropped, ref = -1;

				if ((int)(st.st_mode & 07777) != want && made &&
				    !strcmp(path, made))
					ref = mkdirat_mode(casefd, path, mode);
				if (ref >= 0)
					want = ref;
				if ((int)(st.st_mode & 07777) != want) {
					snprintf(why, size, "%s has mode %04o, want %04o%s",
						 path, (unsigned)(st.st_mode & 07777),
						 (unsigned)want,
						 ref >= 0 ? " (as mkdirat(2) beside it)" : "");
					return why;
				}
			}
			if (kind == 'E') {
				int n = 0, fd = openat(casefd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
				struct dirent *de;

				if (!d) {
					if (fd >= 0)
						close(fd);
					break;	/* unreadable for this uid: no verdict */
				}
				while ((de = readdir(d)))
					n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
				closedir(d);
				if (n) {
					snprintf(why, size, "%s is not empty", path);
					return why;
				}
			}
			break;
		case 'F':
			if (r < 0 || !S_ISREG(st.st_mode)) {
				snprintf(why, size, "%s is not a regular file", path);
				return why;
			}
			break;
		case 'L':
			if (r < 0 || !S_ISLNK(st.st_mode)) {
				snprintf(why, size, "%s is not a symlink", path);
				return why;
			}
			break;
		}
	}
	return NULL;
}

/* Any ".ocdir-stage.*" left in dirfd or one level below? */
static int stage_left(int dirfd, int depth)
{
	int fd = dup(dirfd), found = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) && !found) {
		if (!strncmp(de->d_name, ".ocdir-stage.", 13))
			found = 1;
		else if (depth > 0 && de->d_type == DT_DIR && strcmp(de->d_name, ".") &&
			 strcmp(de->d_name, "..")) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				found = stage_left(sub, depth - 1);
				close(sub);
			}
		}
	}
	closedir(d);
	return found;
}

/* ---- the call under test ---- */

static int call_backend(struct run *r, int dirfd, const char *path,
			const struct conf_case *c, int *created)
{
	*created = -1;
	if (r->backend == B_RAW) {
		int flags = c->flags | O_CREAT | O_DIRECTORY | O_CLOEXEC;

		if (c->api == AT)
			return (int)syscall(SYS_openat, dirfd, path, flags, (mode_t)c->mode);
		struct open_how how = {
			.flags = (unsigned int)flags, .mode = c->mode, .resolve = c->resolve,
		};
		return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	}
	/* weak: the opt-in fallback, reachable only through ocdir_openat2 */
	if (c->api == AT && r->backend != B_WEAK)
		return ocdir_openat(dirfd, path, c->flags, (mode_t)c->mode);
	struct ocdir_how how = {
		.flags = (unsigned int)c->flags, .mode = c->mode, .resolve = c->resolve,
	};
	if (r->backend == B_WEAK)
		how.options = OCDIR_ALLOW_WEAK_EMULATION;
	if (c->api == AT) {
		how.mode &= 07777;	/* open(2) ignores the rest */
		return ocdir_openat2(dirfd, path, &how, sizeof(how), NULL);
	}
	return ocdir_openat2(dirfd, path, &how, sizeof(how), created);
}

static int protected_symlinks(void)
{
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "re");
	int on = 0;

	if (f) {
		on = fgetc(f) == '1';
		fclose(f);
	}
	return on;
}

/* The emulation's rule: the parent of rel is the caller's or root's and
 * writable by nobody else, or sticky. */
static int parent_private(int casefd, const char *rel, uid_t me)
{
	char parent[1024];
	const char *slash = strrchr(rel, '/');
	struct stat st;

	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 1,
		 slash ? rel : ".");
	if (fstatat(casefd, parent, &st, 0) < 0)
		return 1;
	if (st.st_uid != me && st.st_uid != 0)
		return 0;
	return !(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX);
}

/* Does the filesystem under dir take renameat2(RENAME_NOREPLACE)? */
static int refuses_noreplace(const char *dir)
{
	char a[4096], b[4096];
	int refused;

	snprintf(a, sizeof(a), "%s/.noreplace-a.%d", dir, (int)getpid());
	snprintf(b, sizeof(b), "%s/.noreplace-b.%d", dir, (int)getpid());
	if (mkdir(a, 0700) < 0)
		return 0;
	refused = syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE) < 0 &&
		  errno == EINVAL;
	rmdir(a);
	rmdir(b);
	return refused;
}

static void run_case(struct run *r, const struct conf_case *c, int idx)
{
	char casedir[2100], path[4096], why[512];
	char refused_after[512];
	int casefd, fd, err, fds_before, created, want_err = c->err, in = -1;
	const char *after = c->after;
	const char *msg = NULL;
	struct stat a, b;

	if ((c->need & NEED_ROOT) && r->as_user)
		return t_skip(c->name, "root only (covered by the root run)");
	if ((c->need & NEED_USER) && !r->as_user)
		return t_skip(c->name, "non-root only (covered by the --user run)");
	if ((c->need & NEED_ROOT_SETUP) && geteuid() != 0)
		return t_skip(c->name, "setup needs root");
	if ((c->need & NEED_PROT_LINKS) && !protected_symlinks())
		return t_skip(c->name, "fs.protected_symlinks is off");
	if ((c->need & NEED_MOUNT) && !r->mounts_ok)
		return t_skip(c->name, "no private mount namespace (needs root)");

	casefd = enter_case(r, idx, casedir, sizeof(casedir), c->name, c->setup);
	if (casefd < 0)
		return;

	if (r->backend == B_NATIVE && c->created == 1) {
		in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (in >= 0 && inotify_add_watch(in, casedir, IN_CREATE) < 0) {
			close(in);
			in = -1;
		}
	}

	/* The call runs as the test uid; only the setup needed root. */
	if (r->as_user && (setresgid(r->uid, r->uid, r->uid) < 0 ||
			   setresuid(r->uid, r->uid, 0) < 0)) {
		close(casefd);
		return t_fail(c->name, "setresuid(%u): %s", (unsigned)r->uid, strerror(errno));
	}
	if (chdir(casedir) < 0) {
		err = errno;
		goto back;
	}
	subst(path, sizeof(path), c->path, casedir);

	/*
	 * The emulation stages in a shared parent; where the filesystem
	 * refuses RENAME_NOREPLACE it refuses there (EOPNOTSUPP, nothing
	 * made) unless the caller opts in, as the weak backend does.
	 */
	if (r->backend != B_RAW && r->backend != B_WEAK &&
	    ocdir_backend(NULL) == OCDIR_BACKEND_EMULATED && r->no_noreplace &&
	    want_err == OK && c->created == 1 && c->fd_is &&
	    !parent_private(casefd, c->fd_is, r->as_user ? r->uid : geteuid())) {
		want_err = EOPNOTSUPP;
		snprintf(refused_after, sizeof(refused_after), "-:%s", c->fd_is);
		after = refused_after;
	}

	fds_before = t_count_fds();
	fd = call_backend(r, casefd, path, c, &created);
	err = fd < 0 ? errno : 0;
	msg = NULL;
	if (want_err && fd >= 0) {
		snprintf(why, sizeof(why), "got an fd, want %s", t_errname(want_err));
		msg = why;
	} else if (!want_err && fd < 0) {
		snprintf(why, sizeof(why), "got %s (%s), want an fd", t_errname(err), strerror(err));
		msg = why;
	} else if (want_err && err != want_err) {
		snprintf(why, sizeof(why), "got %s, want %s", t_errname(err), t_errname(want_err));
		msg = why;
	} else if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

		if (fstat(fd, &a) < 0 || !S_ISDIR(a.st_mode))
			msg = "fd is not a directory";
		else if ((fl & O_ACCMODE) != O_RDONLY)
			msg = "fd is not O_RDONLY";
		else if (!(fdfl & FD_CLOEXEC))
			msg = "fd is not O_CLOEXEC";
		else if (c->fd_is && fstatat(casefd, c->fd_is, &b, 0) < 0)
			msg = "fd_is path missing";
		else if (c->fd_is && (a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
			snprintf(why, sizeof(why), "fd is not %s", c->fd_is);
			msg = why;
		} else if (c->api == AT2 && r->backend != B_RAW && c->created >= 0 &&
			   created != c->created) {
			snprintf(why, sizeof(why), "created=%d, want %d", created, c->created);
			msg = why;
		}
		close(fd);
	}
	if (in >= 0 && !msg && fd >= 0) {
		enum t_path_taken path = t_read_path_taken(in);

		r->made_by_kernel += path == T_PATH_DIRECT;
		r->made_by_emulation += path == T_PATH_STAGED;
	}
	if (!msg)
		msg = check_after(casefd, after, r->mkdir_drops,
				  c->created == 1 ? c->fd_is : NULL,
				  (mode_t)(c->mode & 07777), why, sizeof(why));
	if (!msg && t_count_fds() != fds_before)
		msg = "fd leaked";
	if (!msg && stage_left(casefd, 1))
		msg = "a .ocdir-stage.* directory was left behind";
	err = 0;
back:
	if (r->as_user && (setresuid(0, 0, 0) < 0 || setresgid(0, 0, 0) < 0)) {
		t_fail(c->name, "cannot get root back: %s", strerror(errno));
		exit(T_EXIT_FAIL);
	}
	close(casefd);
	if (in >= 0)
		close(in);
	if (err)
		return t_fail(c->name, "chdir: %s", strerror(err));
	if (msg)
		return t_fail(c->name, "%s", msg);
	t_pass(c->name);
}

/* ---- the calls table (calls.h) ---- */

/* What a case's setup step does, and how often it ran. */
struct setup_step {
	const char *action;
	int leaf_calls, inter_calls;
};

static int setup_step(int fd, const char *path, unsigned int flags, void *arg)
{
	struct setup_step *s = arg;
	const char *v = strchr(s->action, ':');
	int leaf = !!(flags & OCDIR_SETUP_LEAF);

	(void)path;
	if (leaf)
		s->leaf_calls++;
	else
		s->inter_calls++;
	if (!v)
		return 0;
	v++;
	if (!strncmp(s->action, "fail:", 5))
		return leaf ? -atoi(v) : 0;
	if (!strncmp(s->action, "chmod:", 6) ||
	    (leaf && !strncmp(s->action, "leafchmod:", 10)))
		return fchmod(fd, (mode_t)strtoul(v, NULL, 8)) < 0 ? -errno : 0;
	return 0;
}

/* The action on a prepared directory before publish or discard. */
static int prepared_action(int casefd, int fd, const char *action)
{
	int sub, f;

	if (!strncmp(action, "chmod:", 6))
		return fchmod(fd, (mode_t)strtoul(action + 6, NULL, 8));
	if (!strncmp(action, "plant:", 6))
		return mkdirat(casefd, action + 6, 0755);
	if (strcmp(action, "fill"))
		return 0;
	f = openat(fd, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (f < 0 || close(f) < 0 || mkdirat(fd, "sub", 0755) < 0)
		return -1;
	sub = openat(fd, "sub", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return -1;
	f = openat(sub, "g", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	close(sub);
	return f < 0 ? -1 : close(f);
}

/*
 * The call of case c; returns an fd, mkdirat's 0/1 (fd_is "-"), or -1 with
 * errno. *created as the call says it; why gets a message for failures of
 * the test itself (an action that could not run), then -2 is returned.
 */
static int call_library(int dirfd, const char *path, const struct call_case *c,
			uint64_t extra_options, struct setup_step *step,
			int *created, char *why, size_t size)
{
	struct ocdir_how how = {
		.flags = (unsigned int)c->flags, .mode = c->mode,
		.resolve = c->resolve, .options = c->options | extra_options,
	};
	struct ocdir_prepared *p = NULL;
	int fd, err;

	*created = -1;
	if (!strcmp(c->call, "open"))
		return ocdir_openat2(dirfd, path, &how, sizeof(how), created);
	if (!strcmp(c->call, "mkdir")) {
		fd = ocdir_mkdirat(dirfd, path, &how, sizeof(how));
		*created = fd;
		return fd;
	}
	if (!strcmp(c->call, "mkpath"))
		return ocdir_mkpath(dirfd, path, &how, sizeof(how), created);
	if (!strcmp(c->call, "open-setup"))
		return ocdir_openat2_setup(dirfd, path, &how, sizeof(how), setup_step,
					   step, created);
	if (!strcmp(c->call, "mkpath-setup"))
		return ocdir_mkpath_setup(dirfd, path, &how, sizeof(how), setup_step,
					  step, created);
	fd = ocdir_prepare(dirfd, path, &how, sizeof(how), &p);
	if (fd < 0)
		return fd;
	if (prepared_action(dirfd, fd, c->action) < 0) {
		snprintf(why, size, "action %s: %s", c->action, strerror(errno));
		ocdir_discard(p);
		close(fd);
		return -2;
	}
	if (!strcmp(c->call, "prepare-discard")) {
		close(fd);
		if (ocdir_discard(p) < 0) {
			snprintf(why, size, "discard: %s", t_errname(errno));
			return -2;
		}
		/* errno after 0: why the staging directory stayed, 0 if it did not */
		if (errno) {
			snprintf(why, size, "discard left the staging directory: %s",
				 t_errname(errno));
			return -2;
		}
		return 0;
	}
	if (ocdir_publish(p) == 0) {
		if (errno) {
			snprintf(why, size, "publish left the staging directory: %s",
				 t_errname(errno));
			close(fd);
			return -2;
		}
		return fd;
	}
	/* publish failed: the handle is still ours to discard */
	err = errno;
	close(fd);
	if (ocdir_discard(p) < 0) {
		snprintf(why, size, "discard after publish's %s: %s", t_errname(err),
			 t_errname(errno));
		return -2;
	}
	errno = err;
	return -1;
}

static void run_call_case(struct run *r, const struct call_case *c, int idx)
{
	char casedir[2100], path[4096], why[512], want_calls[32];
	struct setup_step step = { .action = c->action };
	int casefd, fd, err, fds_before, created, cloexec;
	int want_fd = strcmp(c->fd_is, "-") != 0;
	const char *msg = NULL;
	struct stat a, b;

	if ((c->need & NEED_ROOT) && r->as_user)
		return t_skip(c->name, "root only (covered by the root run)");
	if ((c->need & NEED_USER) && !r->as_user)
		return t_skip(c->name, "non-root only (covered by the --user run)");
	if ((c->need & NEED_NOREPLACE) && (r->no_noreplace || r->backend == B_WEAK))
		return t_skip(c->name, "publishes by RENAME_NOREPLACE, which %s refuses",
			      r->backend == B_WEAK ? "the weak backend pretends this filesystem"
						   : "this filesystem");
	casefd = enter_case(r, idx, casedir, sizeof(casedir), c->name, c->setup);
	if (casefd < 0)
		return;
	if (r->as_user && (setresgid(r->uid, r->uid, r->uid) < 0 ||
			   setresuid(r->uid, r->uid, 0) < 0)) {
		close(casefd);
		return t_fail(c->name, "setresuid(%u): %s", (unsigned)r->uid, strerror(errno));
	}
	subst(path, sizeof(path), c->path, casedir);
	fds_before = t_count_fds();
	fd = call_library(casefd, path, c,
			  r->backend == B_WEAK ? OCDIR_ALLOW_WEAK_EMULATION : 0,
			  &step, &created, why, sizeof(why));
	err = fd == -1 ? errno : 0;
	if (fd == -2)
		msg = why;
	else if (c->err && fd >= 0)
		snprintf(why, sizeof(why), "succeeded, want %s", t_errname(c->err)), msg = why;
	else if (!c->err && fd < 0)
		snprintf(why, sizeof(why), "got %s (%s), want success", t_errname(err),
			 strerror(err)), msg = why;
	else if (c->err && err != c->err)
		snprintf(why, sizeof(why), "got %s, want %s", t_errname(err),
			 t_errname(c->err)), msg = why;
	else if (fd >= 0 && want_fd) {
		cloexec = !(c->options & O_NOCLOEXEC_OPT) || (c->flags & O_CLOEXEC);
		if (fstat(fd, &a) < 0 || !S_ISDIR(a.st_mode))
			msg = "fd is not a directory";
		else if ((fcntl(fd, F_GETFL) & (O_ACCMODE | O_PATH)) != O_RDONLY)
			msg = "fd is not O_RDONLY";
		else if (!!(fcntl(fd, F_GETFD) & FD_CLOEXEC) != cloexec)
			msg = cloexec ? "fd is not close-on-exec" : "fd is close-on-exec";
		else if (fstatat(casefd, c->fd_is, &b, 0) < 0)
			msg = "fd_is path missing";
		else if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			snprintf(why, sizeof(why), "fd is not %s", c->fd_is), msg = why;
		close(fd);
	}
	if (!msg && c->created >= 0 && created != c->created)
		snprintf(why, sizeof(why), "created %d, want %d", created, c->created), msg = why;
	snprintf(want_calls, sizeof(want_calls), "%d/%d", step.leaf_calls, step.inter_calls);
	if (!msg && strcmp(c->calls, "-") && strcmp(c->calls, want_calls))
		snprintf(why, sizeof(why), "setup ran %s (leaf/intermediate), want %s",
			 want_calls, c->calls), msg = why;
	if (!msg)
		msg = check_after(casefd, c->after, r->mkdir_drops, NULL, 0, why, sizeof(why));
	if (!msg && t_count_fds() != fds_before)
		msg = "fd leaked";
	if (!msg && stage_left(casefd, 2))
		msg = "a .ocdir-stage.* directory was left behind";
	if (r->as_user && (setresuid(0, 0, 0) < 0 || setresgid(0, 0, 0) < 0)) {
		t_fail(c->name, "cannot get root back: %s", strerror(errno));
		exit(T_EXIT_FAIL);
	}
	close(casefd);
	if (msg)
		return t_fail(c->name, "%s", msg);
	t_pass(c->name);
}

/* ---- backends ---- */

static int install_openat2_filter(int err)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY };

	if (t_block_syscall(SYS_openat2, err) < 0)
		return -1;
	/* The filter must really answer err, or the run proves nothing. */
	if (syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how)) >= 0 || errno != err) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/*
 * The filesystem type of dir. statfs() cannot tell: 9p passes the server's
 * f_type through, so it comes from /proc/self/mountinfo, matched by device.
 */
static const char *fs_type_of(const char *dir)
{
	static char found[64] = "unknown";
	char line[4096], type[64];
	unsigned int maj, min;
	struct stat st;
	FILE *f;

	if (stat(dir, &st) < 0 || !(f = fopen("/proc/self/mountinfo", "re")))
		return found;
	/* The last match: a mount stacked on another one is listed after it. */
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*d %*d %u:%u", &maj, &min) != 2 ||
		    sscanf(sep + 3, "%63s", type) != 1)
			continue;
		if (maj == major(st.st_dev) && min == minor(st.st_dev))
			memcpy(found, type, sizeof(found));
	}
	fclose(f);
	return found;
}

/*
 * Which of 07777 a directory made by mkdirat(2) in dir loses (umask 0),
 * S_ISGID included where a setgid parent does not pass it on (9P2000.u:
 * the server decides the mode).
 */
static mode_t mkdir_drops(const char *dir)
{
	char path[4096], sub[4200];
	mode_t old = umask(0), kept = 01777, drops;
	struct stat st;

	snprintf(path, sizeof(path), "%s/.mode-probe.%d", dir, (int)getpid());
	if (mkdir(path, 01777) == 0) {
		if (stat(path, &st) == 0)
			kept = st.st_mode & 07777;
		rmdir(path);
	}
	drops = 01777 & ~kept;
	if (mkdir(path, 0755) == 0) {
		snprintf(sub, sizeof(sub), "%s/d", path);
		if (chmod(path, 02775) == 0 && mkdir(sub, 0755) == 0 &&
		    stat(sub, &st) == 0 && !(st.st_mode & S_ISGID))
			drops |= S_ISGID;
		rmdir(sub);
		rmdir(path);
	}
	umask(old);
	return drops;
}

/*
 * Native only: every creation the events showed must have been made by the
 * kernel, on every filesystem (rule 13), and at least one must have been
 * seen.
 */
static void check_paths_taken(const struct run *r)
{
	const char *want = "kernel";
	int right = r->made_by_kernel;
	int wrong = r->made_by_emulation;

	/* Before the verdict, which flushes: the child ends with _exit(). */
	printf("# path taken on %s: %d creations by the kernel, %d by the emulation "
	       "fallback\n", r->fs_type, r->made_by_kernel, r->made_by_emulation);
	if (right > 0 && wrong == 0)
		t_pass("path-taken");
	else
		t_fail("path-taken", "on %s every creation should take the %s path",
		       r->fs_type, want);
}

static int child(struct run *r)
{
	const char *reason = NULL;
	size_t i;

	umask(022);
	switch (r->backend) {
	case B_EMULATED:
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
		break;
	case B_RESOLVER:
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
		setenv("OCDIR_FORCE_RESOLVER", "1", 1);
		break;
	case B_WEAK:
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
		setenv("OCDIR_TEST_NO_NOREPLACE", "1", 1);
		break;
	case B_SECCOMP_ENOSYS:
	case B_SECCOMP_EPERM:
		if (install_openat2_filter(r->backend == B_SECCOMP_ENOSYS ? ENOSYS : EPERM) < 0) {
			t_fail("backend", "cannot block openat2 with seccomp: %s", strerror(errno));
			return t_exit_status();
		}
		break;
	default:
		break;
	}
	if (r->backend == B_RAW && !t_kernel_creates_dirs(AT_FDCWD, NULL)) {
		t_fail("backend", "raw: this kernel does not create with O_CREAT|O_DIRECTORY");
		return t_exit_status();
	}
	if (r->backend == B_NATIVE && ocdir_backend(&reason) != OCDIR_BACKEND_NATIVE) {
		t_fail("backend", "native: libocdir chose emulation (%s)", reason);
		return t_exit_status();
	}
	if (r->backend != B_RAW && r->backend != B_NATIVE &&
	    r->backend != B_SECCOMP_ENOSYS && r->backend != B_SECCOMP_EPERM &&
	    ocdir_backend(&reason) != OCDIR_BACKEND_EMULATED) {
		t_fail("backend", "%s: libocdir did not pick emulation (%s)",
		       backend_names[r->backend], reason);
		return t_exit_status();
	}
	/* A private mount namespace for the mount-crossing cases. */
	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		r->mounts_ok = 1;

	if (r->calls) {
		for (i = 0; i < sizeof(call_cases) / sizeof(call_cases[0]); i++)
			run_call_case(r, &call_cases[i], (int)i);
		return t_exit_status();
	}
	for (i = 0; i < sizeof(conf_cases) / sizeof(conf_cases[0]); i++)
		run_case(r, &conf_cases[i], (int)i);
	if (r->backend == B_NATIVE)
		check_paths_taken(r);
	return t_exit_status();
}

/*
 * The table as data for the bindings: one line per case, tab-separated,
 * after '#' lines that name the columns. flags as the number the caller
 * passes (x86-64 Linux values), mode in octal, errno as number and name
 * (0 and "OK" for success), "-" for no fd_is; need as comma-separated
 * words.
 */
static void print_table(void)
{
	static const struct { unsigned int bit; const char *word; } needs[] = {
		{ NEED_ROOT, "root" }, { NEED_USER, "user" }, { NEED_MOUNT, "mount" },
		{ NEED_ROOT_SETUP, "root-setup" }, { NEED_PROT_LINKS, "protected-symlinks" },
	};
	size_t i, j;

	printf("# generated by build/tests/conformance --print-table from "
	       "tests/conformance/cases.h: do not edit\n");
	printf("# name\tsetup\tpath\tapi\tflags\tmode\tresolve\terrno\terrname\t"
	       "fd_is\tcreated\tafter\tneed\n");
	for (i = 0; i < sizeof(conf_cases) / sizeof(conf_cases[0]); i++) {
		const struct conf_case *c = &conf_cases[i];
		const char *sep = "";

		printf("%s\t%s\t%s\t%s\t%d\t%llo\t%llu\t%d\t%s\t%s\t%d\t%s\t",
		       c->name, c->setup, c->path, c->api == AT ? "at" : "at2", c->flags,
		       c->mode, c->resolve, c->err, c->err ? t_errname(c->err) : "OK",
		       c->fd_is ? c->fd_is : "-", c->created, c->after);
		for (j = 0; j < sizeof(needs) / sizeof(needs[0]); j++) {
			if (c->need & needs[j].bit) {
				printf("%s%s", sep, needs[j].word);
				sep = ",";
			}
		}
		printf("\n");
	}
}

/*
 * The calls table for the bindings, in the columns of calls.h (the
 * "Conformance" part of bindings/README.md): numbers in decimal, mode in
 * octal, need as its bits.
 */
static void print_calls(void)
{
	size_t i;

	printf("# generated by build/tests/conformance --print-calls from "
	       "tests/conformance/calls.h: do not edit\n");
	printf("# name\tcall\tsetup\tpath\tflags\tmode\tresolve\toptions\t"
	       "action\terrno\tfd_is\tcreated\tafter\tcalls\tneed\n");
	for (i = 0; i < sizeof(call_cases) / sizeof(call_cases[0]); i++) {
		const struct call_case *c = &call_cases[i];

		printf("%s\t%s\t%s\t%s\t%d\t%04llo\t%llu\t%llu\t%s\t%d\t%s\t%d\t%s\t%s\t%u\n",
		       c->name, c->call, c->setup, c->path, c->flags, c->mode,
		       c->resolve, c->options, c->action, c->err, c->fd_is,
		       c->created, c->after, c->calls, c->need);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: conformance --backend raw|native|emulated|resolver|weak|"
		"seccomp-enosys|seccomp-eperm --dir DIR [--user UID]\n"
		"       conformance --print-table\n"
		"       conformance --calls --backend native|emulated|resolver|weak --dir DIR [--user UID]\n"
		"       conformance --print-calls\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct run r = { .backend = (enum backend)-1 };
	int i, status;
	pid_t pid;
	size_t b;

	if (argc == 2 && !strcmp(argv[1], "--print-table")) {
		print_table();
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--print-calls")) {
		print_calls();
		return fflush(stdout) ? 1 : 0;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			i++;
			for (b = 0; b < sizeof(backend_names) / sizeof(backend_names[0]); b++)
				if (!strcmp(argv[i], backend_names[b]))
					r.backend = (enum backend)b;
			if ((int)r.backend < 0)
				usage();
		} else if (!strcmp(argv[i], "--calls")) {
			r.calls = 1;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			r.dir = argv[++i];
		} else if (!strcmp(argv[i], "--user") && i + 1 < argc) {
			r.as_user = 1;
			r.uid = (uid_t)strtoul(argv[++i], NULL, 10);
		} else {
			usage();
		}
	}
	if ((int)r.backend < 0 || !r.dir || (r.calls && r.backend == B_RAW))
		usage();
	if (!r.as_user)
		r.uid = geteuid();
	else if (geteuid() != 0) {
		t_fail("user", "--user needs root to set up and switch uid");
		return t_exit_status();
	}
	r.fs_type = fs_type_of(r.dir);
	r.mkdir_drops = mkdir_drops(r.dir);
	r.no_noreplace = refuses_noreplace(r.dir);
	if (r.no_noreplace)
		printf("# %s refuses RENAME_NOREPLACE: the emulation refuses to create in "
		       "shared parents there (EOPNOTSUPP) unless the caller opts in\n", r.fs_type);
	if (r.mkdir_drops)
		printf("# mkdirat(2) on %s drops mode bits %04o: expected modes follow\n",
		       r.fs_type, (unsigned)r.mkdir_drops);
	snprintf(r.base, sizeof(r.base), "%s/%s.%s.%u.%d", r.dir,
		 r.calls ? "calls" : "conf", backend_names[r.backend], (unsigned)r.uid, (int)getpid());
	if (mkdir(r.base, 0755) < 0) {
		t_fail("setup", "mkdir %s: %s", r.base, strerror(errno));
		return t_exit_status();
	}
	if (r.as_user && chown(r.base, r.uid, r.uid) < 0) {
		int err = errno;

		rmdir(r.base);
		if (no_other_owners(err))
			t_skip("user", NO_OTHER_OWNERS, strerror(err));
		else
			t_fail("setup", "chown %s: %s", r.base, strerror(err));
		return t_exit_status();
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		t_fail("setup", "fork: %s", strerror(errno));
		return t_exit_status();
	}
	if (pid == 0)
		_exit(child(&r));
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		t_fail("child", "did not exit normally (status %#x)", status);
		return t_exit_status();
	}
	return WEXITSTATUS(status);
}
