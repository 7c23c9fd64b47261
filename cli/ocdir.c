/* SPDX-License-Identifier: MIT */
/*
 * cli/ocdir.c - the ocdir command: mkdir(1) and install -d without the
 * race, over libocdir.
 *
 * Argument parsing and messages only. Creating, opening, setting up a new
 * directory before anyone else can use it, publishing it and removing
 * what a failed call made are the library's (ocdir_openat2_setup,
 * ocdir_mkpath_setup); this file decides what to ask for and says what
 * happened. Every attribute is applied through a descriptor.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <locale.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ocdir.h"
#include "mode.h"
#include "quote.h"

#define PROG "ocdir"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* Exit status of --probe when the library emulates (0: native). */
#define PROBE_EMULATED 2

struct xattr_arg {
	const char *name;
	const char *value;
	size_t size;
};

struct options {
	int parents;
	int exclusive;
	int verbose;
	int publish;
	int probe;
	int json;
	int apply_existing;
	int have_mode;
	mode_t mode;		/* the -m mode, from a=rwx */
	mode_t mode_bits;	/* the bits -m's clauses named */
	mode_t umask_bits;
	uid_t uid;		/* (uid_t)-1: leave alone */
	gid_t gid;		/* (gid_t)-1: leave alone */
	const char *context;	/* -Z/--context=CTX: the SELinux label */
	uint64_t resolve;	/* OCDIR_RESOLVE_BENEATH or _IN_ROOT or 0 */
	const char *root;	/* --beneath/--in-root argument */
	struct xattr_arg *xattrs;
	size_t nxattrs;
};

/* Bad usage: one line saying what, one pointing at --help; status 1. */
__attribute__((format(printf, 1, 2), noreturn))
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" PROG " --help' for more information.\n", stderr);
	exit(1);
}

static void print_help(void)
{
	printf("Usage: " PROG " [OPTION]... DIRECTORY...\n"
"  or:  " PROG " --probe [--json]\n"
"Create each DIRECTORY if it does not exist, race-free, as mkdir and\n"
"install -d do. An existing directory is accepted unless --exclusive.\n"
"\n"
"  -p, --parents          create missing parent directories as needed\n"
"  -m, --mode=MODE        set the mode (octal or symbolic, as chmod) of\n"
"                         directories this call creates; not subject to umask\n"
"  -o, --owner=OWNER      set the owner (name or numeric id) of created\n"
"                         directories\n"
"  -g, --group=GROUP      set the group (name or numeric id) of created\n"
"                         directories\n"
"      --xattr=NAME=VALUE set an extended attribute on created directories\n"
"                         (repeatable)\n"
"  -Z                     accepted for mkdir compatibility: the kernel's\n"
"                         default security context is used\n"
"      --context[=CTX]    like -Z, or with CTX set the SELinux security\n"
"                         context of created directories to CTX\n"
"      --apply-existing   apply -m, -o, -g to a DIRECTORY that exists\n"
"                         already, as install -d does\n"
"      --beneath=ROOT     resolve DIRECTORY relative to ROOT and never leave it\n"
"      --in-root=ROOT     resolve DIRECTORY with ROOT as its \"/\"\n"
"      --exclusive        fail if DIRECTORY exists already\n"
"      --publish          build the directory hidden, apply the attributes,\n"
"                         then make it appear in one step; DIRECTORY must be\n"
"                         new\n"
"      --probe            print the backend the library uses here, and why;\n"
"                         exit status 0 if native, 2 if emulated\n"
"      --json             with --probe: one JSON object\n"
"  -v, --verbose          print a message for each created directory\n"
"      --help             display this help and exit\n"
"      --version          output version information and exit\n"
"\n"
"Exit status: 0 if every DIRECTORY was created or opened, 1 otherwise.\n"
"See ocdir(1) and ocdir(7).\n");
}

/* "PROG: <text with %Q for a quoted name>" and a newline, to f. */
static void say(FILE *f, const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", f);
	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		if (p[0] == '%' && p[1] == 'Q') {
			cli_put_quoted(f, va_arg(ap, const char *));
			p++;
		} else if (p[0] == '%' && p[1] == 's') {
			fputs(va_arg(ap, const char *), f);
			p++;
		} else if (p[0] == '%' && p[1] == 'o') {
			fprintf(f, "%04o", va_arg(ap, unsigned int));
			p++;
		} else if (p[0] == '%' && p[1] == 'u') {
			fprintf(f, "%u", va_arg(ap, unsigned int));
			p++;
		} else {
			fputc(*p, f);
		}
	}
	va_end(ap);
	fputc('\n', f);
}

/* ---- owners, groups, xattrs ---- */

static int parse_id(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	/* (uid_t)-1 means "leave alone" to fchown: not a valid id. */
	if (errno || *end || v >= (unsigned long)(uid_t)-1)
		return -1;
	*out = v;
	return 0;
}

static int parse_owner(const char *s, uid_t *out)
{
	struct passwd *pw;
	unsigned long id;

	if (*s && *s != '+' && (pw = getpwnam(s))) {
		*out = pw->pw_uid;
		return 0;
	}
	if (parse_id(s, &id))
		return -1;
	*out = (uid_t)id;
	return 0;
}

static int parse_group(const char *s, gid_t *out)
{
	struct group *gr;
	unsigned long id;

	if (*s && *s != '+' && (gr = getgrnam(s))) {
		*out = gr->gr_gid;
		return 0;
	}
	if (parse_id(s, &id))
		return -1;
	*out = (gid_t)id;
	return 0;
}

static int add_xattr(struct options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct xattr_arg *x;
	char *name;

	if (!eq || eq == arg)
		return -1;
	x = realloc(o->xattrs, (o->nxattrs + 1) * sizeof(*x));
	if (!x)
		return -1;
	o->xattrs = x;
	name = strndup(arg, (size_t)(eq - arg));
	if (!name)
		return -1;
	x[o->nxattrs].name = name;
	x[o->nxattrs].value = eq + 1;
	x[o->nxattrs].size = strlen(eq + 1);
	o->nxattrs++;
	return 0;
}

static int wants_attributes(const struct options *o)
{
	return o->have_mode || o->uid != (uid_t)-1 || o->gid != (gid_t)-1 ||
	       o->nxattrs || o->context;
}

/* Is SELinux on? (Its filesystem is mounted where libselinux looks.) */
static int selinux_enabled(void)
{
	return access("/sys/fs/selinux/enforce", F_OK) == 0;
}

/*
 * The permission bits mkdirat(2) keeps of a mode in the new directory's
 * parent: those its default ACL allows (*acl = 1), else those the umask
 * leaves (*acl = 0). The library made the directory owner-only, so its
 * mode cannot tell; it inherited the parent's default ACL as its own, in
 * the xattr format of the kernel: a version word (2), then 8-byte
 * little-endian entries of tag, permissions and id.
 */
static mode_t creation_mask(int fd, const struct options *o, int *acl)
{
	static const char name[] = "system.posix_acl_default";
	unsigned int user = 0, group = 0, mask = 8, other = 0;
	unsigned char *buf;
	ssize_t n, i;

	*acl = 0;
	n = fgetxattr(fd, name, NULL, 0);
	if (n < 4 || !(buf = malloc((size_t)n)))
		return 0777 & ~o->umask_bits;
	n = fgetxattr(fd, name, buf, (size_t)n);
	if (n < 4 || (n - 4) % 8 || buf[0] != 2 || buf[1] || buf[2] || buf[3]) {
		free(buf);
		return 0777 & ~o->umask_bits;
	}
	for (i = 4; i < n; i += 8) {
		unsigned int tag = buf[i] | buf[i + 1] << 8, perm = buf[i + 2] & 7;

		if (tag == 0x01)	/* ACL_USER_OBJ */
			user = perm;
		else if (tag == 0x04)	/* ACL_GROUP_OBJ */
			group = perm;
		else if (tag == 0x10)	/* ACL_MASK: limits the group class */
			mask = perm;
		else if (tag == 0x20)	/* ACL_OTHER */
			other = perm;
	}
	free(buf);
	*acl = 1;
	return (mode_t)(user << 6 | (mask == 8 ? group : mask) << 3 | other);
}

/*
 * What -m asks of an existing directory of mode `now` (--apply-existing
 * and the warning): the bits -m named set as -m says, the others kept, as
 * chmod(1) with the same mode would do (clauses without a who letter take
 * the umask into account, as mkdir -m).
 */
static mode_t existing_dir_mode(const struct options *o, mode_t now)
{
	return (o->mode & o->mode_bits) | (now & MODE_BITS & ~o->mode_bits);
}

/* What the setup step needs: the options, and whether it said why it failed. */
struct setup_ctx {
	const struct options *o;
	int reported;
	char *leaf_name;	/* the new leaf as -v names it ("x" for "x/.") */
	size_t made_len;	/* -p: the length of the deepest level made */
};

/*
 * Apply the requested attributes through fd. Order matters: xattrs first
 * (a mode of 0 would forbid them to a non-root owner), then the owner,
 * then the mode, computed from the directory as it was made (chown may
 * clear setgid, chmod sets it last). Returns 0 or
 * -errno, with the message printed.
 */
static int apply_attributes(int fd, const char *path, const struct options *o)
{
	const struct cli_mode m = {
		.given = o->have_mode, .mode = o->mode, .named = o->mode_bits,
		.umask_bits = o->umask_bits,
	};
	struct stat st;
	mode_t mode, mask;
	size_t i;
	int acl;

	if (fstat(fd, &st)) {
		int err = errno;

		say(stderr, "cannot stat %Q: %s", path, strerror(err));
		return -err;
	}
	mask = creation_mask(fd, o, &acl);
	mode = cli_new_dir_mode(&m, mask, acl, st.st_mode & S_ISGID);

	for (i = 0; i < o->nxattrs; i++) {
		if (fsetxattr(fd, o->xattrs[i].name, o->xattrs[i].value,
			      o->xattrs[i].size, 0)) {
			int err = errno;

			say(stderr, "cannot set attribute %Q of %Q: %s",
			    o->xattrs[i].name, path, strerror(err));
			return -err;
		}
	}
	if (o->context && selinux_enabled() &&
	    fsetxattr(fd, "security.selinux", o->context, strlen(o->context) + 1, 0)) {
		int err = errno;

		say(stderr, "cannot set the security context of %Q to %Q: %s",
		    path, o->context, strerror(err));
		return -err;
	}
	if ((o->uid != (uid_t)-1 || o->gid != (gid_t)-1) &&
	    fchown(fd, o->uid, o->gid)) {
		int err = errno;

		say(stderr, "cannot change owner of %Q: %s", path, strerror(err));
		return -err;
	}
	if (fchmod(fd, mode)) {
		int err = errno;

		say(stderr, "cannot change permissions of %Q: %s", path, strerror(err));
		return -err;
	}
	return 0;
}

/*
 * The library's setup step: intermediate directories -p made are only
 * reported (mkdir -v), the directory asked for gets its attributes before
 * anyone else can use it.
 */
static int setup_new(int fd, const char *path, unsigned int flags, void *arg)
{
	struct setup_ctx *ctx = arg;
	int r;

	if (!(flags & OCDIR_SETUP_LEAF)) {
		ctx->made_len = strlen(path);	/* a prefix of the operand */
		if (ctx->o->verbose)
			say(stdout, "created directory %Q", path);
		return 0;
	}
	r = apply_attributes(fd, path, ctx->o);
	ctx->reported = r < 0;
	if (!r && ctx->o->verbose && !(ctx->leaf_name = strdup(path)))
		r = -ENOMEM;
	return r;
}

/*
 * An existing directory: as mkdir, leave it alone but say where it differs
 * from what -m/-o/-g asked for; with --apply-existing, as install -d,
 * change it through the descriptor.
 */
static int handle_existing(int fd, const char *path, const struct options *o)
{
	struct stat st;
	mode_t want;

	if (!o->have_mode && o->uid == (uid_t)-1 && o->gid == (gid_t)-1)
		return 0;
	if (fstat(fd, &st)) {
		say(stderr, "cannot stat %Q: %s", path, strerror(errno));
		return -1;
	}
	want = o->have_mode ? existing_dir_mode(o, st.st_mode) : st.st_mode & MODE_BITS;
	if (o->apply_existing) {
		if ((o->uid != (uid_t)-1 || o->gid != (gid_t)-1) &&
		    fchown(fd, o->uid, o->gid)) {
			say(stderr, "cannot change owner of %Q: %s", path, strerror(errno));
			return -1;
		}
		if (o->have_mode && fchmod(fd, want)) {
			say(stderr, "cannot change permissions of %Q: %s", path,
			    strerror(errno));
			return -1;
		}
		return 0;
	}
	if (o->have_mode && (st.st_mode & MODE_BITS) != want)
		say(stderr, "warning: %Q exists: its mode %o is left as it is "
		    "(-m %o applies to directories this call creates; "
		    "--apply-existing changes it)", path,
		    (unsigned int)(st.st_mode & MODE_BITS), (unsigned int)want);
	if (o->uid != (uid_t)-1 && st.st_uid != o->uid)
		say(stderr, "warning: %Q exists: its owner %u is left as it is "
		    "(--apply-existing changes it)", path, (unsigned int)st.st_uid);
	if (o->gid != (gid_t)-1 && st.st_gid != o->gid)
		say(stderr, "warning: %Q exists: its group %u is left as it is "
		    "(--apply-existing changes it)", path, (unsigned int)st.st_gid);
	return 0;
}

/*
 * The sticky-directory rule refused an existing directory: the parent is
 * sticky and writable by others, and the directory belongs to neither the
 * caller nor the parent's owner. Only looked at to explain an EACCES.
 */
static int sticky_refused(int rootfd, const char *path)
{
	char *copy = strdup(path), *slash;
	struct stat parent, st;
	int r = 0;

	if (!copy)
		return 0;
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	if (slash == copy)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (!fstatat(rootfd, slash ? copy : ".", &parent, 0) &&
	    !fstatat(rootfd, path, &st, 0) && S_ISDIR(st.st_mode) &&
	    (parent.st_mode & S_ISVTX) && (parent.st_mode & (S_IWGRP | S_IWOTH)) &&
	    st.st_uid != geteuid() && st.st_uid != parent.st_uid)
		r = 1;
	free(copy);
	return r;
}

/*
 * With -p the library applies that rule to every level it would have
 * made: the first level of path (top down) that the rule refuses, as a
 * new string, or NULL.
 */
static char *sticky_refused_level(int rootfd, const char *path)
{
	char *copy = strdup(path);
	size_t i = 0, n;

	if (!copy)
		return NULL;
	while (copy[i]) {
		while (copy[i] == '/')
			i++;
		n = strcspn(copy + i, "/");
		if (!n || !copy[i + n])
			break;	/* the leaf: the caller looks at it */
		if (!(n == 1 && copy[i] == '.') &&
		    !(n == 2 && copy[i] == '.' && copy[i + 1] == '.')) {
			copy[i + n] = '\0';
			if (sticky_refused(rootfd, copy))
				return copy;
			copy[i + n] = '/';
		}
		i += n;
	}
	free(copy);
	return NULL;
}
/*
 * stat of a level as the library looked it up: with --beneath/--in-root
 * under that scoping (an absolute operand is below ROOT, ".." stays in
 * it), by openat2(2) O_PATH; else fstatat(2). 0 or -1 with errno.
 */
static int level_stat(int rootfd, const char *path, uint64_t resolve, struct stat *st)
{
	struct {
		uint64_t flags, mode, resolve;
	} how = { O_PATH | O_CLOEXEC, 0, resolve };
	long fd;
	int r, err;

	if (!resolve)
		return fstatat(rootfd, path, st, 0);
	fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd < 0)
		return -1;
	r = fstat((int)fd, st);
	err = errno;
	close((int)fd);
	errno = err;
	return r;
}

/*
 * With -p, GNU mkdir names the level that failed ("cannot create
 * directory 'ro/x'" for ro/x/y), not the operand. The library says only
 * why; where, the command works out from what is there now, one level
 * at a time, top down (never creating anything):
 *  - after the deepest level the call made, if the setup step saw one
 *    (made_len: the levels the call made are removed again on failure,
 *    so they cannot be seen any more);
 *  - for a name too long, the first component over NAME_MAX (none: the
 *    path as a whole was, scoped);
 *  - else the first level that is missing or not a directory, or the
 *    level above one that cannot be looked up for want of search
 *    permission (mkdir -p cannot enter it: it names that one).
 * Returns the level as a new string, or NULL for the operand itself.
 */
static char *failed_level(int rootfd, const char *path, int err, size_t made_len,
			  uint64_t resolve)
{
	/* how: 0, after the deepest level made; 1, a long name; 2, the walk */
	int how = made_len ? 0 : err == ENAMETOOLONG ? 1 : 2, e;
	size_t i, n, prev = 0, end;
	struct stat st;
	char *copy;

	for (i = 0;; i += n) {
		i += strspn(path + i, "/");
		n = strcspn(path + i, "/");
		end = i + n;
		if (!n || !path[end + strspn(path + end, "/")])
			break;	/* the leaf, below */
		if (n == 1 && path[i] == '.')
			continue;
		if ((how == 0 && end > made_len) || (how == 1 && n > NAME_MAX))
			return strndup(path, end);
		if (how == 2) {
			if (!(copy = strndup(path, end)))
				return NULL;
			e = level_stat(rootfd, copy, resolve, &st) ? errno : 0;
			if (e ? e != EACCES && e != ENAMETOOLONG : !S_ISDIR(st.st_mode))
				return copy;
			free(copy);
			if (e == EACCES && prev)
				return strndup(path, prev);
		}
		prev = end;
	}
	if (how < 2)	/* the leaf; or, scoped, a path too long as a whole */
		return NULL;
	/* The leaf: only if its parent cannot be searched. */
	if (prev && level_stat(rootfd, path, resolve, &st) && errno == EACCES)
		return strndup(path, prev);
	return NULL;
}

/*
 * Why the library refused, in words; the errno text where it says enough.
 * made_len: as failed_level().
 */
static void create_error(int rootfd, const char *operand, int err,
			 const struct options *o, size_t made_len)
{
	const char *path = operand;
	char *level, *failed = NULL;

	if (err == EACCES) {
		level = o->parents ? sticky_refused_level(rootfd, operand) : NULL;
		if (level) {
			say(stderr, "cannot create directory %Q: refused: %Q exists "
			    "in a sticky directory that others can write to, and "
			    "belongs neither to you nor to that directory's owner "
			    "(someone else may have put it there)", operand, level);
			free(level);
			return;
		}
		if (sticky_refused(rootfd, operand)) {
			say(stderr, "cannot open directory %Q: refused: it exists in a "
			    "sticky directory that others can write to, and belongs "
			    "neither to you nor to that directory's owner (someone "
			    "else may have put it there)", operand);
			return;
		}
	}
	/* EXDEV: the operand leads outside ROOT, said of the operand */
	if (o->parents && err != EXDEV)
		failed = failed_level(rootfd, operand, err, made_len, o->resolve);
	if (failed)
		path = failed;
	switch (err) {
	case EOPNOTSUPP:
		say(stderr, "cannot create directory %Q: refused: the parent "
		    "directory is writable by others and its filesystem (or a "
		    "security module) does not allow the atomic no-replace "
		    "rename that makes this race-free (%s); see ocdir(1)",
		    path, strerror(err));
		break;
	case EXDEV:
		if (o->root) {
			say(stderr, "cannot create directory %Q: it leads outside "
			    "%Q (--%s): %s", path, o->root,
			    o->resolve == OCDIR_RESOLVE_BENEATH ? "beneath" : "in-root",
			    strerror(err));
			break;
		}
		say(stderr, "cannot create directory %Q: %s", path, strerror(err));
		break;
	case EAGAIN:
		say(stderr, "cannot create directory %Q: others kept changing the "
		    "name while it was being created; try again (%s)", path,
		    strerror(err));
		break;
	default:
		say(stderr, "cannot create directory %Q: %s", path, strerror(err));
	}
	free(failed);
}

static int process(int rootfd, const char *path, const struct options *o)
{
	struct ocdir_how how = {
		/* --apply-existing never changes a trailing symlink's target */
		.flags = (o->exclusive || o->publish ? O_EXCL : 0) |
			 (o->apply_existing && wants_attributes(o) ? O_NOFOLLOW : 0),
		.mode = 0777,
		.resolve = o->resolve,
		.options = o->publish ? OCDIR_ALWAYS_STAGE : 0,
	};
	struct setup_ctx ctx = { .o = o };
	int fd, created = 0;

	if (!wants_attributes(o) && !o->publish && !o->parents) {
		/* Nothing to set up and no descriptor needed: as cheap as mkdir. */
		created = ocdir_mkdirat(rootfd, path, &how, sizeof(how));
		if (created < 0) {
			create_error(rootfd, path, errno, o, ctx.made_len);
			return -1;
		}
		if (created && o->verbose)
			say(stdout, "created directory %Q", path);
		return 0;
	}
	/*
	 * With nothing to apply to an existing leaf, searching it is enough:
	 * an unreadable existing directory is accepted, as by mkdir -p.
	 */
	if (!wants_attributes(o) && o->parents)
		how.flags |= O_PATH;
	if (!wants_attributes(o) && !o->publish && !o->verbose) {
		fd = ocdir_mkpath(rootfd, path, &how, sizeof(how), &created);
	} else if (o->parents) {
		fd = ocdir_mkpath_setup(rootfd, path, &how, sizeof(how), setup_new,
					&ctx, &created);
	} else {
		fd = ocdir_openat2_setup(rootfd, path, &how, sizeof(how), setup_new,
					 &ctx, &created);
	}
	if (fd < 0) {
		if (!ctx.reported)
			create_error(rootfd, path, errno, o, ctx.made_len);
		free(ctx.leaf_name);
		return -1;
	}
	if (!created && handle_existing(fd, path, o)) {
		close(fd);
		return -1;
	}
	close(fd);
	if (created && o->verbose)
		say(stdout, "created directory %Q", ctx.leaf_name ? ctx.leaf_name : path);
	free(ctx.leaf_name);
	return 0;
}

/* ---- --probe ---- */

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/*
 * Does the kernel have openat2(2) / fchmodat2(2)? Asked with arguments
 * each refuses before it looks at any file (no how; unknown flags), so
 * nothing is opened or changed: ENOSYS means absent.
 */
static int have_openat2(void)
{
	return !(syscall(SYS_openat2, -1, "", NULL, (size_t)0) < 0 && errno == ENOSYS);
}

static int have_fchmodat2(void)
{
	return !(syscall(SYS_fchmodat2, -1, "", 0, ~0u) < 0 && errno == ENOSYS);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static int probe(const struct options *o)
{
	const char *reason;
	int native = ocdir_backend(&reason) == OCDIR_BACKEND_NATIVE;
	struct utsname u;

	if (!o->json) {
		printf("%s: %s\n", native ? "native" : "emulated", reason);
	} else {
		if (uname(&u))
			strcpy(u.release, "unknown");
		printf("{\"backend\": ");
		put_json_string(native ? "native" : "emulated");
		printf(", \"reason\": ");
		put_json_string(reason);
		printf(", \"kernel\": ");
		put_json_string(u.release);
		printf(", \"openat2\": %s, \"fchmodat2\": %s, \"version\": ",
		       have_openat2() ? "true" : "false",
		       have_fchmodat2() ? "true" : "false");
		put_json_string(OCDIR_VERSION_STRING);
		printf("}\n");
	}
	return native ? 0 : PROBE_EMULATED;
}

/* ---- the test hook: OCDIR_CLI_CHECK_FDS=1 ---- */

#define FD_SET_MAX 1024

static unsigned char fds_at_start[FD_SET_MAX / 8];

static void snapshot_fds(unsigned char *set)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self;

	memset(set, 0, FD_SET_MAX / 8);
	if (!d)
		return;
	self = dirfd(d);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == self || fd >= FD_SET_MAX)
			continue;
		set[fd / 8] |= (unsigned char)(1u << (fd % 8));
	}
	closedir(d);
}

/* Name every descriptor open now that was not open at start. */
static int report_leaked_fds(void)
{
	unsigned char now[FD_SET_MAX / 8];
	int fd, leaked = 0;

	/* stdout is left to close_stdout(), which reports why a write failed. */
	snapshot_fds(now);
	for (fd = 0; fd < FD_SET_MAX; fd++) {
		unsigned char bit = (unsigned char)(1u << (fd % 8));

		if ((now[fd / 8] & bit) && !(fds_at_start[fd / 8] & bit)) {
			fprintf(stderr, PROG ": OCDIR_CLI_CHECK_FDS: fd %d leaked\n", fd);
			leaked = 1;
		}
	}
	return leaked;
}

static int env_is_one(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

/*
 * At exit, on every path (--help and --version included): output that
 * could not be written is an error, as for coreutils (gnulib's
 * close_stdout), or `ocdir --version >/dev/full` would claim success.
 * A closed stdout is an error only if something was to be written to it.
 * Runs after main's return value is known, so it can only turn it into 1.
 */
static void close_stdout(void)
{
	int pending = __fpending(stdout) != 0;
	int prev_fail = ferror(stdout) != 0;
	int close_fail = fclose(stdout) != 0;
	int err = close_fail ? errno : 0;

	if (prev_fail || (close_fail && (pending || err != EBADF))) {
		if (err)
			fprintf(stderr, PROG ": write error: %s\n", strerror(err));
		else
			fputs(PROG ": write error\n", stderr);
		_exit(1);
	}
}

/* ---- main ---- */

enum {
	OPT_BENEATH = 256,
	OPT_IN_ROOT,
	OPT_EXCLUSIVE,
	OPT_XATTR,
	OPT_PUBLISH,
	OPT_PROBE,
	OPT_JSON,
	OPT_CONTEXT,
	OPT_APPLY_EXISTING,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_options[] = {
	{ "parents", no_argument, NULL, 'p' },
	{ "mode", required_argument, NULL, 'm' },
	{ "owner", required_argument, NULL, 'o' },
	{ "group", required_argument, NULL, 'g' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "context", optional_argument, NULL, OPT_CONTEXT },
	{ "apply-existing", no_argument, NULL, OPT_APPLY_EXISTING },
	{ "beneath", required_argument, NULL, OPT_BENEATH },
	{ "in-root", required_argument, NULL, OPT_IN_ROOT },
	{ "exclusive", no_argument, NULL, OPT_EXCLUSIVE },
	{ "xattr", required_argument, NULL, OPT_XATTR },
	{ "publish", no_argument, NULL, OPT_PUBLISH },
	{ "probe", no_argument, NULL, OPT_PROBE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv, struct options *o)
{
	const char *mode_arg = NULL;
	char *argv0 = argv[0];
	int c;

	/*
	 * getopt_long says what is wrong with an option itself, in the words
	 * GNU mkdir's come in ("option '--p' is ambiguous; possibilities: ...",
	 * "option '--parents' doesn't allow an argument"), after argv[0]:
	 * the command's name there, whatever path it was run by.
	 */
	if (argc > 0)
		argv[0] = (char *)PROG;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "pm:o:g:vZ", long_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->parents = 1;
			break;
		case 'm':
			mode_arg = optarg;
			break;
		case 'o':
			if (parse_owner(optarg, &o->uid)) {
				say(stderr, "invalid user %Q", optarg);
				exit(1);
			}
			break;
		case 'g':
			if (parse_group(optarg, &o->gid)) {
				say(stderr, "invalid group %Q", optarg);
				exit(1);
			}
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'Z':
			break;	/* the kernel's default labelling */
		case OPT_CONTEXT:
			if (!optarg)
				break;
			if (!selinux_enabled()) {
				say(stderr, "warning: ignoring --context; it requires an "
				    "SELinux-enabled kernel");
				break;
			}
			o->context = optarg;
			break;
		case OPT_APPLY_EXISTING:
			o->apply_existing = 1;
			break;
		case OPT_BENEATH:
		case OPT_IN_ROOT:
			if (o->root)
				usage_error("--beneath and --in-root may be given only once, together or not");
			o->root = optarg;
			o->resolve = c == OPT_BENEATH ? OCDIR_RESOLVE_BENEATH :
							OCDIR_RESOLVE_IN_ROOT;
			break;
		case OPT_EXCLUSIVE:
			o->exclusive = 1;
			break;
		case OPT_XATTR:
			if (add_xattr(o, optarg)) {
				say(stderr, "invalid xattr %Q: expected NAME=VALUE", optarg);
				exit(1);
			}
			break;
		case OPT_PUBLISH:
			o->publish = 1;
			break;
		case OPT_PROBE:
			o->probe = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_HELP:
			print_help();
			exit(0);
		case OPT_VERSION:
			printf(PROG " " OCDIR_VERSION_STRING "\n");
			exit(0);
		default:	/* '?': getopt_long has said what */
			fputs("Try '" PROG " --help' for more information.\n", stderr);
			exit(1);
		}
	}
	if (argc > 0)
		argv[0] = argv0;
	/* The umask is this process's; read once, before anything else runs. */
	o->umask_bits = umask(0);
	umask(o->umask_bits);
	if (mode_arg) {
		if (cli_parse_mode(mode_arg, o->umask_bits, &o->mode, &o->mode_bits)) {
			say(stderr, "invalid mode %Q", mode_arg);
			exit(1);
		}
		o->have_mode = 1;
	}
	if (o->json && !o->probe)
		usage_error("--json goes with --probe");
	if (o->apply_existing && (o->exclusive || o->publish))
		usage_error("--apply-existing makes no sense with --exclusive or --publish");
}

int main(int argc, char **argv)
{
	struct options o = { .uid = (uid_t)-1, .gid = (gid_t)-1 };
	int check_fds = env_is_one("OCDIR_CLI_CHECK_FDS");
	int rootfd = AT_FDCWD, status = 0, i;

	setlocale(LC_CTYPE, "");
	atexit(close_stdout);
	if (check_fds)
		snapshot_fds(fds_at_start);
	parse_args(argc, argv, &o);
	if (o.probe && optind >= argc) {
		status = probe(&o);
		goto out;
	}
	if (o.probe)
		probe(&o);
	if (optind >= argc)
		usage_error("missing operand");
	if (o.root) {
		rootfd = open(o.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0) {
			say(stderr, "cannot open root directory %Q: %s", o.root,
			    strerror(errno));
			status = 1;
			goto out;
		}
	}
	for (i = optind; i < argc; i++)
		if (process(rootfd, argv[i], &o))
			status = 1;
	if (rootfd >= 0)
		close(rootfd);
out:
	for (size_t x = 0; x < o.nxattrs; x++)
		free((char *)o.xattrs[x].name);
	free(o.xattrs);
	if (check_fds && report_leaked_fds())
		status = 1;
	return status;
}
