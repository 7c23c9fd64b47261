/* SPDX-License-Identifier: MIT */
/*
 * cli/ocdir.c - the ocdir command: create directories race-free, in the
 * manner of mkdir(1) and install -d, on top of libocdir.
 *
 * Every attribute (mode, owner, group, xattrs) is applied through the new
 * directory's descriptor, never by path. When attributes are asked for, a
 * new directory is built hidden (ocdir_prepare), finished through its
 * descriptor and only then published under its name (ocdir_publish), so a
 * failure leaves nothing behind and nobody ever sees it half-done.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ocdir.h"

#define OCDIR_VERSION OCDIR_VERSION_STRING

#define PROG "ocdir"

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
	int have_mode;
	mode_t mode;		/* final mode, applied with fchmod when have_mode */
	uid_t uid;		/* (uid_t)-1: leave alone */
	gid_t gid;		/* (gid_t)-1: leave alone */
	uint64_t resolve;	/* OCDIR_RESOLVE_BENEATH or _IN_ROOT or 0 */
	const char *root;	/* --beneath/--in-root argument */
	struct xattr_arg *xattrs;
	size_t nxattrs;
};

/* What happened to one operand, for the verbose line. */
enum outcome { OUT_CREATED, OUT_EXISTED };

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
"Create each DIRECTORY if it does not exist, race-free, and open it.\n"
"An existing directory is accepted unless --exclusive is given.\n"
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
"      --beneath=ROOT     resolve DIRECTORY relative to ROOT and never leave it\n"
"      --in-root=ROOT     resolve DIRECTORY with ROOT as its \"/\"\n"
"      --exclusive        fail if DIRECTORY exists already\n"
"      --publish          build the directory hidden, apply the attributes,\n"
"                         then make it appear in one step; DIRECTORY must be\n"
"                         new\n"
"      --probe            print the backend the library uses here, and why\n"
"  -v, --verbose          print a line for each DIRECTORY\n"
"      --help             display this help and exit\n"
"      --version          output version information and exit\n"
"\n"
"Exit status: 0 if every DIRECTORY was created or opened, 1 otherwise.\n"
"See ocdir(1) and ocdir(7).\n");
}

/* ---- modes: octal, or symbolic as chmod(1) ---- */

#define MODE_BITS 07777

static int parse_octal_mode(const char *s, mode_t *out)
{
	unsigned long v = 0;
	const char *p;

	for (p = s; *p; p++) {
		if (*p < '0' || *p > '7')
			return -1;
		v = v * 8 + (unsigned long)(*p - '0');
		if (v > MODE_BITS)
			return -1;
	}
	if (p == s)
		return -1;
	*out = (mode_t)v;
	return 0;
}

/*
 * Apply a symbolic mode ("u+rwx,g-w,o=", "a+X", "g=u") to `mode`, with the
 * rules of chmod(1): without a who letter the umask masks what is changed;
 * setuid/setgid of a directory are kept unless a clause names them. The
 * target is always a directory, so X always means x.
 */
static int parse_symbolic_mode(const char *s, mode_t mode, mode_t umask_bits,
			       mode_t *out)
{
	const char *p = s;

	for (;;) {
		mode_t who = 0;

		for (;; p++) {
			if (*p == 'u')
				who |= S_ISUID | S_IRWXU;
			else if (*p == 'g')
				who |= S_ISGID | S_IRWXG;
			else if (*p == 'o')
				who |= S_ISVTX | S_IRWXO;
			else if (*p == 'a')
				who |= MODE_BITS;
			else
				break;
		}
		if (*p != '+' && *p != '-' && *p != '=')
			return -1;
		while (*p == '+' || *p == '-' || *p == '=') {
			char op = *p++;
			mode_t value = 0, mentioned = 0, keep;

			if (*p == 'u' || *p == 'g' || *p == 'o') {
				/* Copy one class's rwx to the others. */
				mode_t src = *p == 'u' ? (mode & S_IRWXU) >> 6 :
					     *p == 'g' ? (mode & S_IRWXG) >> 3 :
							 (mode & S_IRWXO);
				value = src << 6 | src << 3 | src;
				p++;
			} else {
				for (;; p++) {
					if (*p == 'r')
						value |= S_IRUSR | S_IRGRP | S_IROTH;
					else if (*p == 'w')
						value |= S_IWUSR | S_IWGRP | S_IWOTH;
					else if (*p == 'x' || *p == 'X')
						value |= S_IXUSR | S_IXGRP | S_IXOTH;
					else if (*p == 's') {
						value |= S_ISUID | S_ISGID;
						mentioned |= S_ISUID | S_ISGID;
					} else if (*p == 't')
						value |= S_ISVTX;
					else
						break;
				}
			}
			if (who)
				value &= who;
			else
				value &= MODE_BITS & ~umask_bits;
			/* A directory's setuid/setgid change only when named. */
			keep = (S_ISUID | S_ISGID) & ~(mentioned & (who ? who : MODE_BITS));
			value &= ~keep;
			if (op == '+') {
				mode |= value;
			} else if (op == '-') {
				mode &= ~value;
			} else {
				mode_t preserved = (who ? ~who & MODE_BITS : 0) | keep;

				mode = (mode & preserved) | value;
			}
		}
		if (*p == '\0')
			break;
		if (*p != ',')
			return -1;
		p++;
	}
	*out = mode & MODE_BITS;
	return 0;
}

static int parse_mode(const char *s, mode_t *out)
{
	mode_t umask_bits = umask(0);

	umask(umask_bits);
	if (*s >= '0' && *s <= '7')
		return parse_octal_mode(s, out);
	/* mkdir -m starts from a=rwx. */
	return parse_symbolic_mode(s, S_IRWXU | S_IRWXG | S_IRWXO, umask_bits, out);
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
	       o->nxattrs;
}

static const char *backend_name(void)
{
	return ocdir_backend(NULL) == OCDIR_BACKEND_NATIVE ? "native" : "emulated";
}

/*
 * Apply the requested attributes through fd. Order matters: xattrs first
 * (a mode of 0 would forbid them to a non-root owner), then the owner,
 * then the mode (chown may clear setgid, chmod sets it last).
 */
static int apply_attributes(int fd, const char *path, const struct options *o)
{
	size_t i;

	for (i = 0; i < o->nxattrs; i++) {
		if (fsetxattr(fd, o->xattrs[i].name, o->xattrs[i].value,
			      o->xattrs[i].size, 0)) {
			fprintf(stderr, PROG ": cannot set attribute '%s' of '%s': %s\n",
				o->xattrs[i].name, path, strerror(errno));
			return -1;
		}
	}
	if ((o->uid != (uid_t)-1 || o->gid != (gid_t)-1) &&
	    fchown(fd, o->uid, o->gid)) {
		fprintf(stderr, PROG ": cannot change owner of '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	if (o->have_mode && fchmod(fd, o->mode)) {
		fprintf(stderr, PROG ": cannot change permissions of '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void create_error(const char *path, int err)
{
	fprintf(stderr, PROG ": cannot create directory '%s': %s\n", path,
		strerror(err));
}

/*
 * Remove the directory behind fd, which this call created, from its
 * current parent: only if the name still refers to that very inode. Used
 * only in the rare case where attributes had to be applied to a directory
 * that was already visible (see open_existing).
 */
static void remove_created(int fd, const char *path)
{
	const char *slash, *name;
	struct stat self, there;
	char leaf[NAME_MAX + 1];
	size_t len;
	int parent;

	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	for (slash = path + len; slash > path && slash[-1] != '/'; slash--)
		;
	name = slash;
	if ((size_t)(path + len - name) > NAME_MAX)
		return;
	memcpy(leaf, name, (size_t)(path + len - name));
	leaf[path + len - name] = '\0';
	if (fstat(fd, &self))
		return;
	parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return;
	if (!fstatat(parent, leaf, &there, AT_SYMLINK_NOFOLLOW) &&
	    there.st_dev == self.st_dev && there.st_ino == self.st_ino)
		unlinkat(parent, leaf, AT_REMOVEDIR);
	close(parent);
}

/*
 * Open `path` when it exists already (prepare said EEXIST). Done with the
 * library's create-or-open call; should the name vanish in between, that
 * call creates it, and then this call owns it and finishes it in place.
 */
static int open_existing(int dirfd, const char *path, const struct options *o,
			 enum outcome *outcome)
{
	struct ocdir_how how = { .flags = 0, .mode = 0777, .resolve = o->resolve };
	int created = 0, fd;

	/* Should it get created here after all, keep it private until finished. */
	if (o->have_mode)
		how.mode = o->mode & S_IRWXU;
	fd = ocdir_openat2(dirfd, path, &how, sizeof(how), &created);
	if (fd < 0) {
		create_error(path, errno);
		return -1;
	}
	if (created && apply_attributes(fd, path, o)) {
		remove_created(fd, path);
		close(fd);
		return -1;
	}
	*outcome = created ? OUT_CREATED : OUT_EXISTED;
	return fd;
}

/*
 * prepare -> apply -> publish, for `name` below prep_dirfd. An existing
 * destination is an error with --exclusive or --publish, else it is opened
 * as `path` below rootfd with the caller's scoping, and left as it is.
 */
static int create_prepared(int prep_dirfd, const char *name, int rootfd,
			   const char *path, const struct options *o,
			   enum outcome *outcome)
{
	/*
	 * Create the hidden directory owner-only: it is private anyway, and
	 * the requested mode is set exactly with fchmod afterwards.
	 */
	struct ocdir_how how = { .flags = 0, .mode = 0700, .resolve = o->resolve };
	struct ocdir_prepared *prep;
	int fd;

	if (!o->have_mode)
		how.mode = 0777;
	if (prep_dirfd != rootfd)
		how.resolve = 0;	/* a plain name below a directory we hold */
	fd = ocdir_prepare(prep_dirfd, name, &how, sizeof(how), &prep);
	if (fd < 0) {
		if (errno == EEXIST && !o->exclusive && !o->publish)
			return open_existing(rootfd, path, o, outcome);
		create_error(path, errno);
		return -1;
	}
	if (apply_attributes(fd, path, o)) {
		ocdir_discard(prep);
		close(fd);
		return -1;
	}
	if (ocdir_publish(prep)) {
		int err = errno;

		ocdir_discard(prep);
		close(fd);
		if (err == EEXIST && !o->exclusive && !o->publish)
			return open_existing(rootfd, path, o, outcome);
		create_error(path, err);
		return -1;
	}
	*outcome = OUT_CREATED;
	return fd;
}

/* Split "a/b/c//" into "a/b" and "c"; "c" alone has parent ".". */
static int split_leaf(const char *path, char **parent, const char **leaf_out,
		      char *leaf, size_t leaf_size)
{
	size_t len = strlen(path), start;

	while (len > 1 && path[len - 1] == '/')
		len--;
	start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (len - start + 1 > leaf_size)
		return -ENAMETOOLONG;
	memcpy(leaf, path + start, len - start);
	leaf[len - start] = '\0';
	*leaf_out = leaf;
	if (start == 0) {
		*parent = strdup(".");
	} else {
		size_t plen = start;

		/* Keep one "/" for "/x"; drop the separators before the leaf. */
		while (plen > 1 && path[plen - 1] == '/')
			plen--;
		*parent = strndup(path, plen);
	}
	return *parent ? 0 : -ENOMEM;
}

static int is_dot_or_dotdot(const char *s)
{
	return !strcmp(s, ".") || !strcmp(s, "..");
}

/* One parent level of a -p operand, and whether this call created it. */
struct level {
	const char *name;	/* points into the parent path, not terminated */
	size_t len;
	int created;
	dev_t dev;
	ino_t ino;
};

/*
 * Remove the parent levels this call created, deepest first, starting at
 * `cur`, a descriptor to levels[last]. Each is removed through a descriptor
 * to its actual parent ("cur/..") and only while the name there still
 * refers to the inode this call created; rmdir refuses a non-empty one.
 * Stops at the first level this call did not create. Consumes `cur`.
 */
static void remove_created_levels(int cur, const struct level *levels, size_t last)
{
	size_t i = last + 1;

	while (i-- > 0 && levels[i].created) {
		char name[NAME_MAX + 1];
		struct stat self, there;
		int parent;

		if (levels[i].len > NAME_MAX || fstat(cur, &self) ||
		    self.st_dev != levels[i].dev || self.st_ino != levels[i].ino)
			break;
		memcpy(name, levels[i].name, levels[i].len);
		name[levels[i].len] = '\0';
		parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0)
			break;
		close(cur);
		cur = parent;
		if (fstatat(parent, name, &there, AT_SYMLINK_NOFOLLOW) ||
		    there.st_dev != self.st_dev || there.st_ino != self.st_ino ||
		    unlinkat(parent, name, AT_REMOVEDIR))
			break;
	}
	close(cur);
}

static int has_dot_component(const char *p)
{
	while (*p) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 1;
		p += n;
		p += strspn(p, "/");
	}
	return 0;
}

/*
 * -p with attributes: the parents are made one level at a time, each level
 * resolved from rootfd under the caller's scoping (ocdir_mkpath of a longer
 * prefix each time), so that this call knows which levels it created and
 * can remove them again if a deeper level or the leaf fails. Paths with
 * "." or ".." components are handed to ocdir_mkpath in one piece (parents
 * it creates then stay, as with mkdir -p).
 */
static int create_with_parents(int rootfd, const char *path,
			       const struct options *o, enum outcome *outcome)
{
	struct ocdir_how phow = { .mode = 0777, .resolve = o->resolve };
	char leafbuf[NAME_MAX + 2], *parent = NULL, *prefix;
	struct level *levels = NULL;
	size_t nlevels = 0, off;
	const char *leaf;
	int pfd = -1, fd = -1, err, created;

	if (strlen(path) >= PATH_MAX) {
		create_error(path, ENAMETOOLONG);
		return -1;
	}
	err = split_leaf(path, &parent, &leaf, leafbuf, sizeof(leafbuf));
	if (err) {
		create_error(path, -err);
		return -1;
	}
	if (!*leaf || is_dot_or_dotdot(leaf)) {
		/* "", "/", "a/.." name nothing that could be created. */
		struct ocdir_how how = phow;

		free(parent);
		how.flags = o->exclusive ? O_EXCL : 0;
		fd = ocdir_mkpath(rootfd, path, &how, sizeof(how), &created);
		if (fd < 0) {
			create_error(path, errno);
			return -1;
		}
		*outcome = created ? OUT_CREATED : OUT_EXISTED;
		return fd;
	}
	if (has_dot_component(parent) || !strcmp(parent, "/")) {
		pfd = ocdir_mkpath(rootfd, parent, &phow, sizeof(phow), NULL);
		if (pfd < 0)
			goto fail_errno;
		fd = create_prepared(pfd, leaf, rootfd, path, o, outcome);
		close(pfd);
		free(parent);
		return fd;
	}
	levels = calloc(strlen(parent) / 2 + 2, sizeof(*levels));
	prefix = strdup(parent);
	if (!levels || !prefix) {
		free(prefix);
		errno = ENOMEM;
		goto fail_errno;
	}
	off = strspn(parent, "/");
	while (parent[off]) {
		struct level *l = &levels[nlevels];
		struct stat st;
		int next;

		l->name = parent + off;
		l->len = strcspn(parent + off, "/");
		off += l->len;
		prefix[off] = '\0';
		next = ocdir_mkpath(rootfd, prefix, &phow, sizeof(phow), &l->created);
		prefix[off] = parent[off];
		off += strspn(parent + off, "/");
		if (next < 0) {
			free(prefix);
			goto fail_errno;
		}
		if (pfd >= 0)
			close(pfd);
		pfd = next;
		nlevels++;
		if (l->created) {
			if (fstat(pfd, &st)) {
				l->created = 0;
			} else {
				l->dev = st.st_dev;
				l->ino = st.st_ino;
			}
		}
	}
	free(prefix);
	fd = create_prepared(pfd, leaf, rootfd, path, o, outcome);
	if (fd < 0) {
		remove_created_levels(pfd, levels, nlevels - 1);
		pfd = -1;
	}
	if (pfd >= 0)
		close(pfd);
	free(levels);
	free(parent);
	return fd;

fail_errno:
	create_error(path, errno);
	if (pfd >= 0 && nlevels)
		remove_created_levels(pfd, levels, nlevels - 1);
	else if (pfd >= 0)
		close(pfd);
	free(levels);
	free(parent);
	return -1;
}

static int process(int rootfd, const char *path, const struct options *o)
{
	struct ocdir_how how = {
		.flags = o->exclusive ? O_EXCL : 0,
		.mode = 0777,
		.resolve = o->resolve,
	};
	enum outcome outcome = OUT_CREATED;
	int fd, created = 0;

	if (!wants_attributes(o) && !o->publish) {
		if (o->parents)
			fd = ocdir_mkpath(rootfd, path, &how, sizeof(how), &created);
		else
			fd = ocdir_openat2(rootfd, path, &how, sizeof(how), &created);
		if (fd < 0) {
			create_error(path, errno);
			return -1;
		}
		outcome = created ? OUT_CREATED : OUT_EXISTED;
	} else if (!o->parents) {
		fd = create_prepared(rootfd, path, rootfd, path, o, &outcome);
	} else {
		fd = create_with_parents(rootfd, path, o, &outcome);
	}
	if (fd < 0)
		return -1;
	close(fd);
	if (o->verbose) {
		if (outcome == OUT_CREATED)
			printf(PROG ": created directory '%s' (%s%s)\n", path,
			       backend_name(),
			       wants_attributes(o) || o->publish ? ", published" : "");
		else
			printf(PROG ": directory '%s' existed (%s)\n", path,
			       backend_name());
	}
	return 0;
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

	fflush(stdout);
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

/* ---- main ---- */

enum {
	OPT_BENEATH = 256,
	OPT_IN_ROOT,
	OPT_EXCLUSIVE,
	OPT_XATTR,
	OPT_PUBLISH,
	OPT_PROBE,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_options[] = {
	{ "parents", no_argument, NULL, 'p' },
	{ "mode", required_argument, NULL, 'm' },
	{ "owner", required_argument, NULL, 'o' },
	{ "group", required_argument, NULL, 'g' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "beneath", required_argument, NULL, OPT_BENEATH },
	{ "in-root", required_argument, NULL, OPT_IN_ROOT },
	{ "exclusive", no_argument, NULL, OPT_EXCLUSIVE },
	{ "xattr", required_argument, NULL, OPT_XATTR },
	{ "publish", no_argument, NULL, OPT_PUBLISH },
	{ "probe", no_argument, NULL, OPT_PROBE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv, struct options *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":pm:o:g:v", long_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->parents = 1;
			break;
		case 'm':
			if (parse_mode(optarg, &o->mode)) {
				fprintf(stderr, PROG ": invalid mode '%s'\n", optarg);
				exit(1);
			}
			o->have_mode = 1;
			break;
		case 'o':
			if (parse_owner(optarg, &o->uid)) {
				fprintf(stderr, PROG ": invalid user '%s'\n", optarg);
				exit(1);
			}
			break;
		case 'g':
			if (parse_group(optarg, &o->gid)) {
				fprintf(stderr, PROG ": invalid group '%s'\n", optarg);
				exit(1);
			}
			break;
		case 'v':
			o->verbose = 1;
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
				fprintf(stderr, PROG ": invalid xattr '%s': expected NAME=VALUE\n",
					optarg);
				exit(1);
			}
			break;
		case OPT_PUBLISH:
			o->publish = 1;
			break;
		case OPT_PROBE:
			o->probe = 1;
			break;
		case OPT_HELP:
			print_help();
			exit(0);
		case OPT_VERSION:
			printf(PROG " " OCDIR_VERSION "\n");
			exit(0);
		case ':':
			if (!strncmp(argv[optind - 1], "--", 2))
				usage_error("option '%s' requires an argument",
					    argv[optind - 1]);
			usage_error("option requires an argument -- '%c'", optopt);
		default:
			if (optopt > 0 && optopt < 256)
				usage_error("invalid option -- '%c'", optopt);
			usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
}

int main(int argc, char **argv)
{
	struct options o = { .uid = (uid_t)-1, .gid = (gid_t)-1 };
	int check_fds = env_is_one("OCDIR_CLI_CHECK_FDS");
	int rootfd = AT_FDCWD, status = 0, i;

	if (check_fds)
		snapshot_fds(fds_at_start);
	parse_args(argc, argv, &o);
	if (o.probe) {
		const char *reason;
		int b = ocdir_backend(&reason);

		printf("%s: %s\n", b == OCDIR_BACKEND_NATIVE ? "native" : "emulated",
		       reason);
	}
	if (optind >= argc && !o.probe)
		usage_error("missing operand");
	if (o.root && optind < argc) {
		rootfd = open(o.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0) {
			fprintf(stderr, PROG ": cannot open root directory '%s': %s\n",
				o.root, strerror(errno));
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
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": write error: %s\n", strerror(errno));
		status = 1;
	}
	if (check_fds && report_leaked_fds())
		status = 1;
	return status;
}
