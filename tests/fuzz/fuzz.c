/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz.c - differential fuzzer for O_CREAT|O_DIRECTORY.
 *
 *   fuzz --seed S --cases N --dir DIR [--backends raw,model,emulated,native]
 *   fuzz --seed S --case I  --dir DIR [...]     replay (and shrink) case I
 *   --max-seconds T stops generating after T seconds (the count is reported)
 *   --max-reports R shrinks and prints the first R disagreements (20)
 *   --jobs N runs N processes, job k taking cases k, k+N, ... (one summary)
 *   --first F runs cases F .. F+N-1 (a long run in parts: disjoint ranges
 *             of one seed add up to the run in one go)
 *   --progress T prints a line per job every T seconds (default 600)
 *
 * Case I of seed S is a pure function of (S, I): open flags (every bit,
 * invalid ones included), mode, umask, resolve flags, library options, the
 * path shape, what is at the name, the kind of parent directory and the
 * caller's uid. For each case the fuzzer builds the pre-state once in
 * DIR/ocdir-fuzz.PID/c, runs the call once per backend (root's calls in
 * the fuzzer's process, the uid 1000 ones in a worker process per backend,
 * reused from case to case), and compares the
 * result (descriptor to which directory, or which errno), the library's
 * "created" answer and everything below the case directory afterwards
 * (type, mode, owner, group of every object) with what the model (model.c)
 * says. A backend that agreed leaves the pre-state plus the directory the
 * model says it made; that directory is removed before the next backend
 * runs, and any disagreement rebuilds the pre-state from scratch:
 *
 *   raw       openat(2)/openat2(2) with O_CREAT|O_DIRECTORY, against the model
 *             with the kernel's semantics for this filesystem (rule 13)
 *   emulated  ocdir_openat/ocdir_openat2 with OCDIR_FORCE_EMULATION=1, against
 *             the model with the library's semantics
 *   native    the same without forcing; the library must pick the native
 *             backend (it FAILs otherwise)
 *   model     always on: it is the reference
 *
 * A disagreement is shrunk (flags, resolve bits and options removed, the
 * path and the pre-state simplified while it persists) and printed with the
 * replay command. Needs root (setup, mounts, setresuid for the uid cases);
 * runs in a private mount namespace. Output: tests/helpers.h protocol.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>

#include "../helpers.h"
#include "ocdir.h"
#include "model.h"

#define USER_UID	1000	/* the unprivileged caller */
#define USER_GID	1000
#define OTHER_UID	2000	/* owns parents that are not the caller's */
#define THIRD_UID	3000	/* owns entries that are neither's */

/* ---- the case ---- */

enum api { API_OPENAT, API_OPENAT2 };

enum parent_kind {
	PK_PLAIN,		/* 0755 */
	PK_WORLD,		/* 0777 */
	PK_STICKY_WORLD,	/* 01777 */
	PK_STICKY_GROUP,	/* 01770 */
	PK_SETGID,		/* 02775 */
	PK_RO,			/* 0777, read-only bind mount */
	PK_NOWRITE,		/* 0555 */
	PK_NOEXEC,		/* 0666 */
	PK_NOREAD,		/* 0333 */
	PK_ACL_MIN,		/* 0777 + default ACL u::rwx g::r-x o::--- */
	PK_ACL_EXT,		/* 0777 + default ACL with a named user and a mask */
	PK_COUNT
};
static const char *const parent_names[] = {
	"plain-0755", "world-0777", "sticky-01777", "sticky-group-01770",
	"setgid-02775", "ro-bind-0777", "nowrite-0555", "noexec-0666",
	"noread-0333", "acl-min-0777", "acl-ext-0777",
};
static const unsigned int parent_perm[] = {
	0755, 0777, 01777, 01770, 02775, 0777, 0555, 0666, 0333, 0777, 0777,
};

enum target_kind {
	TK_ABSENT, TK_DIR, TK_FILE, TK_FIFO, TK_SOCK, TK_CHR,
	TK_LNK_DIR, TK_LNK_FILE, TK_LNK_DANGLING, TK_LNK_DANGLING_DEEP,
	TK_LNK_ABS_DIR, TK_LNK_LOOP, TK_LNK_DOT,
	TK_COUNT
};
static const char *const target_names[] = {
	"absent", "dir", "file", "fifo", "socket", "chardev",
	"symlink->d2", "symlink->f2", "symlink->nothere", "symlink->nodir/x",
	"symlink->/abs/P/d2", "symlink-loop", "symlink->.",
};

enum shape {
	SH_NAME, SH_SLASH, SH_SLASH2, SH_DOT, SH_DOTDOT, SH_ROOT, SH_NAME_DOT,
	SH_MISSING_PARENT, SH_FILE_PARENT, SH_LINK_MID, SH_ABSLINK_MID,
	SH_DOTDOT_MID, SH_ESCAPE, SH_ABS, SH_MAGIC, SH_DIRFD_P, SH_EMPTY,
	SH_LONGPATH, SH_UNDER,
	SH_COUNT
};
static const char *const shape_names[] = {
	"P/N", "P/N/", "P/N//", "P/.", "P/..", "/", "P/N/.", "P/missing/N",
	"P/f2/N", "L/N (L->P)", "A/N (A->/abs/P)", "P/d2/../N",
	"../c/P/N", "/abs/c/P/N", "/proc/self/fd/DIRFD/P/N", "N (dirfd P)",
	"\"\"", "P/./././...(>PATH_MAX)/N", "P/N/x",
};

enum owner { OW_ROOT, OW_CALLER, OW_OTHER, OW_THIRD, OW_COUNT };
static const char *const owner_names[] = { "root", "caller", "other", "third" };

struct fcase {
	int api;
	uint64_t flags, mode, resolve, options;
	unsigned int umask;
	int user;		/* 0: root, 1: uid USER_UID */
	int pkind, powner, pgroup;
	int tkind, towner;
	unsigned int tmode;
	int shape;
	int namelen;		/* 0: "n", 1: 255 bytes, 2: 256 bytes */
	int nofile;		/* the fd table is full (RLIMIT_NOFILE): EMFILE */
};

/* ---- environment ---- */

struct caps {
	int acl, ro, fifo, sock, chr, user;
	int plain_create;	/* root's new objects are as inherited() says */
};

static struct fz_env env;
static struct caps caps;
static char basedir[PATH_MAX];	/* DIR/ocdir-fuzz.PID */
static char cdir[PATH_MAX];	/* basedir/c */
static int verbose;
static int quiet_discovery;	/* jobs after the first of --jobs */
static int max_reports = 20;	/* disagreements shrunk and printed */

enum backend { BE_RAW, BE_EMULATED, BE_NATIVE, BE_COUNT };
static const char *const backend_names[] = { "raw", "emulated", "native" };
static int use_backend[BE_COUNT];
static unsigned long disagreed[BE_COUNT];	/* cases, per backend */

/* Outcome counters: per backend, per errno (0 = a descriptor). */
#define MAX_ERRNO 140
static unsigned long outcome[BE_COUNT + 2][MAX_ERRNO + 2];
#define OUT_MODEL_KERNEL BE_COUNT	/* the model's answers, kernel semantics */
#define OUT_MODEL_LIB	(BE_COUNT + 1)	/* ... library semantics */

/* ---- random numbers: case I of seed S depends on nothing else ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int pick(uint64_t *s, unsigned int n)
{
	return (unsigned int)(splitmix(s) % n);
}

static int chance(uint64_t *s, unsigned int percent)
{
	return pick(s, 100) < percent;
}

static void generate(uint64_t seed, uint64_t index, struct fcase *c)
{
	static const struct { uint64_t bit; unsigned int pct; } flag_bits[] = {
		{ O_EXCL, 30 }, { O_NOFOLLOW, 25 }, { O_CLOEXEC, 30 },
		{ O_NONBLOCK, 10 }, { O_NOCTTY, 8 }, { O_NOATIME, 10 },
		{ O_APPEND, 6 }, { O_DSYNC, 5 }, { O_SYNC, 5 }, { O_ASYNC, 5 },
		{ O_DIRECT, 5 }, { FZ_O_LARGEFILE, 8 }, { O_TRUNC, 3 },
		{ O_WRONLY, 3 }, { O_RDWR, 3 }, { O_PATH, 3 },
		{ FZ_O_TMPFILE_BIT, 3 }, { 04, 1 }, { 010, 1 }, { 040000000, 1 },
		{ FZ_O_NONOTIFY, 1 }, { 0x80000000ULL, 1 }, { 1ULL << 40, 1 },
	};
	static const uint64_t modes[] = {
		0777, 0755, 0700, 0, 01777, 06777, 02755, 0500, 0300, 0751,
	};
	static const unsigned int umasks[] = { 022, 0, 077, 027, 0777, 002 };
	static const unsigned int tmodes[] = { 0755, 0700, 0311, 0 };
	uint64_t s = seed ^ (index * 0xd1b54a32d192ed03ULL);
	size_t i;

	splitmix(&s);
	memset(c, 0, sizeof(*c));
	c->api = chance(&s, 50) ? API_OPENAT2 : API_OPENAT;
	c->flags = O_CREAT | O_DIRECTORY;
	for (i = 0; i < sizeof(flag_bits) / sizeof(flag_bits[0]); i++)
		if (chance(&s, flag_bits[i].pct))
			c->flags |= flag_bits[i].bit;
	if (chance(&s, 4))
		c->mode = splitmix(&s) & 07777;
	else if (chance(&s, 3))
		c->mode = (chance(&s, 50) ? 010000 : 0170000) | 0755;
	else
		c->mode = modes[pick(&s, sizeof(modes) / sizeof(modes[0]))];
	c->umask = umasks[pick(&s, sizeof(umasks) / sizeof(umasks[0]))];
	if (c->api == API_OPENAT2) {
		static const unsigned int rbits[] = { 0x01, 0x02, 0x04, 0x08, 0x10 };

		for (i = 0; i < 5; i++)
			if (chance(&s, 15))
				c->resolve |= rbits[i];
		if (chance(&s, 3))
			c->resolve |= FZ_RESOLVE_CACHED;
		if (chance(&s, 2))
			c->resolve |= 0x40;
		if (chance(&s, 20))
			c->options |= OCDIR_NO_CLOEXEC;
		if (chance(&s, 20))
			c->options |= OCDIR_FAST_EMULATION;
		if (chance(&s, 2))
			c->options |= 1ULL << 5;
	}
	c->user = chance(&s, 40);
	c->pkind = (int)pick(&s, PK_COUNT);
	c->powner = (int)pick(&s, 3);
	c->pgroup = (int)pick(&s, 3);
	c->tkind = chance(&s, 35) ? TK_ABSENT : (int)pick(&s, TK_COUNT);
	c->towner = (int)pick(&s, OW_COUNT);
	c->tmode = tmodes[pick(&s, 4)];
	c->shape = chance(&s, 45) ? SH_NAME : (int)pick(&s, SH_COUNT);
	c->namelen = chance(&s, 4) ? 1 + (int)pick(&s, 2) : 0;
	c->nofile = chance(&s, 3);

	/* What this filesystem or this run cannot set up becomes plainer. */
	if ((c->pkind == PK_ACL_MIN || c->pkind == PK_ACL_EXT) && !caps.acl)
		c->pkind = PK_WORLD;
	if (c->pkind == PK_RO && !caps.ro)
		c->pkind = PK_NOWRITE;
	if ((c->tkind == TK_FIFO && !caps.fifo) || (c->tkind == TK_SOCK && !caps.sock) ||
	    (c->tkind == TK_CHR && !caps.chr))
		c->tkind = TK_FILE;
	if (c->user && !caps.user)
		c->user = 0;
	if (c->shape == SH_MAGIC && !env.proc_mnt)
		c->shape = SH_NAME;
}

/* ---- describing a case ---- */

static const char *flag_name(uint64_t bit)
{
	switch (bit) {
	case O_WRONLY: return "O_WRONLY";
	case O_RDWR: return "O_RDWR";
	case O_CREAT: return "O_CREAT";
	case O_EXCL: return "O_EXCL";
	case O_NOCTTY: return "O_NOCTTY";
	case O_TRUNC: return "O_TRUNC";
	case O_APPEND: return "O_APPEND";
	case O_NONBLOCK: return "O_NONBLOCK";
	case O_DSYNC: return "O_DSYNC";
	case O_ASYNC: return "O_ASYNC";
	case O_DIRECT: return "O_DIRECT";
	case FZ_O_LARGEFILE: return "O_LARGEFILE";
	case O_DIRECTORY: return "O_DIRECTORY";
	case O_NOFOLLOW: return "O_NOFOLLOW";
	case O_NOATIME: return "O_NOATIME";
	case O_CLOEXEC: return "O_CLOEXEC";
	case 04000000: return "__O_SYNC";
	case O_PATH: return "O_PATH";
	case FZ_O_TMPFILE_BIT: return "__O_TMPFILE";
	default: return NULL;
	}
}

static void flags_str(uint64_t flags, char *buf, size_t size)
{
	size_t n = 0;
	int b;

	buf[0] = '\0';
	for (b = 0; b < 64; b++) {
		uint64_t bit = 1ULL << b;
		const char *name;

		if (!(flags & bit))
			continue;
		name = flag_name(bit);
		if (name)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "|" : "", name);
		else
			n += (size_t)snprintf(buf + n, size - n, "%s0x%" PRIx64,
					      n ? "|" : "", bit);
		if (n >= size)
			return;
	}
	if (!n)
		fmt(buf, size, "O_RDONLY");
}

static void resolve_str(uint64_t r, char *buf, size_t size)
{
	static const char *const names[] = {
		"NO_XDEV", "NO_MAGICLINKS", "NO_SYMLINKS", "BENEATH", "IN_ROOT",
		"CACHED", "0x40",
	};
	size_t n = 0;
	int b;

	buf[0] = '\0';
	for (b = 0; b < 7; b++)
		if (r & (1ULL << b))
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "|" : "", names[b]);
	if (!n)
		fmt(buf, size, "0");
}

static void describe(const struct fcase *c, char *buf, size_t size)
{
	char f[512], r[128];

	flags_str(c->flags, f, sizeof(f));
	resolve_str(c->resolve, r, sizeof(r));
	fmt(buf, size,
		 "api=%s flags=%s mode=0%" PRIo64 " resolve=%s options=0x%" PRIx64
		 " umask=0%03o caller=%s parent=%s(owner=%s,group=%s) "
		 "target=%s(owner=%s,mode=0%o) path=%s name=%s%s",
		 c->api == API_OPENAT2 ? "openat2" : "openat", f, c->mode, r,
		 c->options, c->umask, c->user ? "uid1000" : "root",
		 parent_names[c->pkind], owner_names[c->powner],
		 owner_names[c->pgroup], target_names[c->tkind],
		 owner_names[c->towner], c->tmode, shape_names[c->shape],
		 c->namelen == 0 ? "n" : c->namelen == 1 ? "x*255" : "x*256",
		 c->nofile ? " fd-table=full" : "");
}

/* ---- pre-state plan: the single description setup and model share ---- */

static unsigned int owner_uid(const struct fcase *c, int who)
{
	switch (who) {
	case OW_CALLER: return c->user ? USER_UID : 0;
	case OW_OTHER: return OTHER_UID;
	case OW_THIRD: return THIRD_UID;
	default: return 0;
	}
}

static unsigned int group_gid(const struct fcase *c, int who)
{
	switch (who) {
	case OW_CALLER: return c->user ? USER_GID : 0;
	case OW_OTHER: return OTHER_UID;
	default: return 0;
	}
}

static void name_of(const struct fcase *c, char *buf, size_t size)
{
	size_t n = c->namelen == 0 ? 1 : c->namelen == 1 ? 255 : 256;

	if (n == 1) {
		fmt(buf, size, "n");
		return;
	}
	memset(buf, 'x', n);
	buf[n] = '\0';
}

static struct fz_entry *add(struct fz_entry *e, int *n, const char *path,
			    int type, unsigned int perm, unsigned int uid,
			    unsigned int gid, const char *link)
{
	struct fz_entry *x = &e[(*n)++];

	memset(x, 0, sizeof(*x));
	fmt(x->path, sizeof(x->path), "%s", path);
	x->type = type;
	x->perm = perm;
	x->uid = uid;
	x->gid = gid;
	if (link)
		fmt(x->link, sizeof(x->link), "%s", link);
	return x;
}

static int plan(const struct fcase *c, struct fz_entry *e)
{
	char name[300], path[FZ_REL_MAX], link[PATH_MAX];
	unsigned int tuid = owner_uid(c, c->towner);
	struct fz_entry *p;
	int n = 0;

	name_of(c, name, sizeof(name));
	p = add(e, &n, "P", FT_DIR, parent_perm[c->pkind], owner_uid(c, c->powner),
		group_gid(c, c->pgroup), NULL);
	if (c->pkind == PK_ACL_MIN)
		p->acl = FZ_ACL_MIN;
	if (c->pkind == PK_ACL_EXT)
		p->acl = FZ_ACL_EXT;
	if (c->pkind == PK_RO)
		p->ro_mount = 1;
	add(e, &n, "P/d2", FT_DIR, 0755, 0, 0, NULL);
	add(e, &n, "P/f2", FT_REG, 0644, 0, 0, NULL);
	add(e, &n, "L", FT_LNK, 0777, 0, 0, "P");
	fmt(link, sizeof(link), "%s/P", env.cdir);
	add(e, &n, "A", FT_LNK, 0777, 0, 0, link);
	if (c->namelen == 2)	/* nothing can be made with that name */
		return n;
	fmt(path, sizeof(path), "P/%s", name);
	switch (c->tkind) {
	case TK_DIR:
		add(e, &n, path, FT_DIR, c->tmode, tuid, tuid, NULL);
		break;
	case TK_FILE:
		add(e, &n, path, FT_REG, 0644, tuid, tuid, NULL);
		break;
	case TK_FIFO:
		add(e, &n, path, FT_FIFO, 0644, tuid, tuid, NULL);
		break;
	case TK_SOCK:
		add(e, &n, path, FT_SOCK, 0755, tuid, tuid, NULL);
		break;
	case TK_CHR:
		add(e, &n, path, FT_CHR, 0666, 0, 0, NULL);
		break;
	case TK_LNK_DIR:
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, "d2");
		break;
	case TK_LNK_FILE:
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, "f2");
		break;
	case TK_LNK_DANGLING:
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, "nothere");
		break;
	case TK_LNK_DANGLING_DEEP:
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, "nodir/x");
		break;
	case TK_LNK_ABS_DIR:
		fmt(link, sizeof(link), "%s/P/d2", env.cdir);
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, link);
		break;
	case TK_LNK_LOOP:
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, name);
		break;
	case TK_LNK_DOT:
		add(e, &n, path, FT_LNK, 0777, tuid, tuid, ".");
		break;
	}
	return n;
}

/* The path and dirfd of a case; "DIRFD" is replaced in the child. */
static void case_path(const struct fcase *c, char *buf, size_t size,
		      const char **dirfd_rel)
{
	char name[300], *base;
	size_t n;

	name_of(c, name, sizeof(name));
	*dirfd_rel = "";
	base = strrchr(basedir, '/');
	switch (c->shape) {
	case SH_NAME: fmt(buf, size, "P/%s", name); break;
	case SH_SLASH: fmt(buf, size, "P/%s/", name); break;
	case SH_SLASH2: fmt(buf, size, "P/%s//", name); break;
	case SH_DOT: fmt(buf, size, "P/."); break;
	case SH_DOTDOT: fmt(buf, size, "P/.."); break;
	case SH_ROOT: fmt(buf, size, "/"); break;
	case SH_NAME_DOT: fmt(buf, size, "P/%s/.", name); break;
	case SH_MISSING_PARENT: fmt(buf, size, "P/missing/%s", name); break;
	case SH_FILE_PARENT: fmt(buf, size, "P/f2/%s", name); break;
	case SH_LINK_MID: fmt(buf, size, "L/%s", name); break;
	case SH_ABSLINK_MID: fmt(buf, size, "A/%s", name); break;
	case SH_DOTDOT_MID: fmt(buf, size, "P/d2/../%s", name); break;
	case SH_ESCAPE: fmt(buf, size, "../c/P/%s", name); break;
	case SH_ABS: fmt(buf, size, "%s/P/%s", env.cdir, name); break;
	case SH_MAGIC: fmt(buf, size, "/proc/self/fd/DIRFD/P/%s", name); break;
	case SH_DIRFD_P: fmt(buf, size, "%s", name); *dirfd_rel = "P"; break;
	case SH_EMPTY: buf[0] = '\0'; break;
	case SH_UNDER: fmt(buf, size, "P/%s/x", name); break;
	case SH_LONGPATH:
		n = (size_t)snprintf(buf, size, "P/");
		while (n + 2 < size && n < PATH_MAX + 8)
			n += (size_t)snprintf(buf + n, size - n, "./");
		fmt(buf + n, size - n, "%s", name);
		break;
	}
	(void)base;
}

/* ---- building and removing the pre-state ---- */

static int remove_tree_at(int dfd, const char *name)
{
	struct stat st;
	int fd, r = 0;
	DIR *d;
	struct dirent *de;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 ? -errno : 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			if (remove_tree_at(dirfd(d), de->d_name) < 0)
				r = -1;
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

/* The pre-state setup() built last, so that teardown() needs no walk. */
static struct fz_entry built[FZ_MAX_ENTRIES];
static int nbuilt = -1, built_ro;

static void teardown(void)
{
	char p[PATH_MAX * 2];
	int i, ok = nbuilt >= 0;

	fmt(p, sizeof(p), "%s/P", cdir);
	if (nbuilt < 0 || built_ro)
		while (umount2(p, MNT_DETACH) == 0)
			;
	/* children first; anything else left behind makes an rmdir fail */
	for (i = nbuilt - 1; ok && i >= 0; i--) {
		fmt(p, sizeof(p), "%s/%s", cdir, built[i].path);
		if (unlinkat(AT_FDCWD, p, built[i].type == FT_DIR ? AT_REMOVEDIR : 0) < 0)
			ok = 0;
	}
	nbuilt = -1;
	built_ro = 0;
	if (ok && rmdir(cdir) == 0)
		return;
	remove_tree_at(AT_FDCWD, cdir);
}

static int set_default_acl(const char *path, int kind)
{
	/* struct posix_acl_xattr_header + entries, little endian */
	struct acl_entry { uint16_t tag, perm; uint32_t id; } ent[6];
	unsigned char buf[4 + sizeof(ent)];
	uint32_t version = 2;
	int n = 0;

	ent[n++] = (struct acl_entry){ 0x01, 7, 0xffffffff };	/* ACL_USER_OBJ */
	if (kind == FZ_ACL_EXT)
		ent[n++] = (struct acl_entry){ 0x02, 7, 1234 };	/* ACL_USER */
	ent[n++] = (struct acl_entry){ 0x04, 5, 0xffffffff };	/* ACL_GROUP_OBJ */
	if (kind == FZ_ACL_EXT)
		ent[n++] = (struct acl_entry){ 0x10, 7, 0xffffffff }; /* ACL_MASK */
	ent[n++] = (struct acl_entry){ 0x20, kind == FZ_ACL_EXT ? 1 : 0, 0xffffffff };
	memcpy(buf, &version, 4);
	memcpy(buf + 4, ent, sizeof(ent[0]) * (size_t)n);
	return setxattr(path, "system.posix_acl_default", buf,
			4 + sizeof(ent[0]) * (size_t)n, 0);
}

/*
 * What root's mkdir/open/mknod/symlink makes, with the umask 0, under a
 * parent with the given gid and mode, when the filesystem behaves as
 * discover() checked (caps.plain_create): owner 0, the group and for a
 * directory the setgid bit from a setgid parent, the permission bits
 * asked for. Where that is already the entry, its lchown or chmod is
 * skipped: on the debug kernel under TCG each costs about 0.2 ms, and
 * setting up a case was most of its time. A wrong guess cannot pass
 * silently: every backend's result is compared with the whole pre-state.
 */
static unsigned int create_perm(int type, unsigned int perm)
{
	return type == FT_DIR ? perm & 01777 : perm & 0777;
}

static void inherited(int type, unsigned int perm, unsigned int pgid, unsigned int pmode,
		      unsigned int *gid, unsigned int *mode)
{
	*gid = pmode & S_ISGID ? pgid : 0;
	*mode = create_perm(type, perm);
	if (type == FT_DIR && (pmode & S_ISGID))
		*mode |= S_ISGID;
}

/* Returns NULL or what failed. */
static const char *setup(const struct fz_entry *e, int n)
{
	char path[PATH_MAX * 2];
	const char *why = NULL;
	unsigned int gid, mode;
	mode_t saved_umask;
	int i, j, fd;

	teardown();
	if (mkdir(cdir, 0755) < 0)
		return "mkdir C";
	saved_umask = umask(0);
	for (i = 0; i < n && !why; i++) {
		/* what the create asks for; without plain_create the chmod sets it */
		unsigned int perm = caps.plain_create ? create_perm(e[i].type, e[i].perm) :
				    e[i].type == FT_DIR ? 0700 : 0600;
		unsigned int pgid = 0, pmode = 0755;
		const char *slash = strrchr(e[i].path, '/');

		/* the parent: an earlier entry, or C (root's, 0755) */
		for (j = i - 1; slash && j >= 0; j--)
			if (strlen(e[j].path) == (size_t)(slash - e[i].path) &&
			    !strncmp(e[j].path, e[i].path, (size_t)(slash - e[i].path))) {
				pgid = e[j].gid;
				pmode = e[j].perm;
				break;
			}
		fmt(path, sizeof(path), "%s/%s", cdir, e[i].path);
		switch (e[i].type) {
		case FT_DIR:
			if (mkdir(path, perm) < 0)
				why = "mkdir";
			break;
		case FT_REG:
			fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, perm);
			if (fd < 0)
				why = "create file";
			else
				close(fd);
			break;
		case FT_FIFO:
			if (mknod(path, S_IFIFO | perm, 0) < 0)
				why = "mkfifo";
			break;
		case FT_SOCK:
			if (mknod(path, S_IFSOCK | perm, 0) < 0)
				why = "mknod socket";
			break;
		case FT_CHR:
			if (mknod(path, S_IFCHR | perm, makedev(1, 3)) < 0)
				why = "mknod chardev";
			break;
		case FT_LNK:
			if (symlink(e[i].link, path) < 0)
				why = "symlink";
			break;
		}
		if (why)
			break;
		inherited(e[i].type, e[i].perm, pgid, pmode, &gid, &mode);
		if ((!caps.plain_create || e[i].uid != 0 || e[i].gid != gid) &&
		    lchown(path, e[i].uid, e[i].gid) < 0)
			why = "lchown";
		else if (e[i].type != FT_LNK && (!caps.plain_create || mode != e[i].perm) &&
			 chmod(path, e[i].perm) < 0)
			why = "chmod";
	}
	umask(saved_umask);
	if (why)
		return why;
	/* after the children were made, so that they inherit nothing */
	for (i = 0; i < n; i++) {
		fmt(path, sizeof(path), "%s/%s", cdir, e[i].path);
		if (e[i].acl && set_default_acl(path, e[i].acl) < 0)
			return "setxattr system.posix_acl_default";
	}
	for (i = 0; i < n; i++) {
		if (!e[i].ro_mount)
			continue;
		fmt(path, sizeof(path), "%s/%s", cdir, e[i].path);
		if (mount(path, path, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
			return "read-only bind mount";
		built_ro = 1;
	}
	memcpy(built, e, sizeof(*e) * (size_t)n);
	nbuilt = n;
	return NULL;
}

/* ---- state after the call ---- */

struct snap {
	char line[FZ_MAX_ENTRIES + 8][FZ_REL_MAX + 64];
	int n;
	int overflow;
};

static const char *type_name(int type)
{
	static const char *const names[] = {
		"none", "dir", "file", "fifo", "socket", "chardev", "symlink",
	};
	return names[type];
}

static int type_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR: return FT_DIR;
	case S_IFREG: return FT_REG;
	case S_IFIFO: return FT_FIFO;
	case S_IFSOCK: return FT_SOCK;
	case S_IFCHR: return FT_CHR;
	case S_IFLNK: return FT_LNK;
	default: return FT_NONE;
	}
}

static void snap_add(struct snap *s, const char *rel, int type, unsigned int perm,
		     unsigned int uid, unsigned int gid)
{
	if (s->n >= (int)(sizeof(s->line) / sizeof(s->line[0]))) {
		s->overflow = 1;
		return;
	}
	if (type == FT_LNK)
		perm = 0777;
	fmt(s->line[s->n++], sizeof(s->line[0]), "%s %s %04o %u:%u", rel,
		 type_name(type), perm, uid, gid);
}

/*
 * Takes dirfd over (closedir() closes it): every syscall counts on the
 * debug kernel, so there is no dup() to keep it open for the caller.
 */
static void snap_walk(struct snap *s, int dirfd, const char *prefix)
{
	struct dirent *de;
	struct stat st;
	char rel[FZ_REL_MAX + 300];
	DIR *d;

	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		fmt(rel, sizeof(rel), "%s%s", prefix, de->d_name);
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		snap_add(s, rel, type_of(st.st_mode), st.st_mode & 07777,
			 st.st_uid, st.st_gid);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char pre2[FZ_REL_MAX + 304];

			if (sub >= 0) {
				fmt(pre2, sizeof(pre2), "%s/", rel);
				snap_walk(s, sub, pre2);
			}
		}
	}
	closedir(d);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void snap_sort(struct snap *s)
{
	qsort(s->line, (size_t)s->n, sizeof(s->line[0]), cmp_line);
}

static void snap_take(struct snap *s)
{
	int fd = open(cdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	s->n = 0;
	s->overflow = 0;
	if (fd >= 0)
		snap_walk(s, fd, "");
	snap_sort(s);
}

static void snap_expect(struct snap *s, const struct fz_entry *e, int n,
			const struct fz_expect *x)
{
	int i;

	s->n = 0;
	s->overflow = 0;
	for (i = 0; i < n; i++)
		snap_add(s, e[i].path, e[i].type, e[i].perm, e[i].uid, e[i].gid);
	if (x->created || x->made_kept)
		snap_add(s, x->made.path, x->made.type, x->made.perm, x->made.uid,
			 x->made.gid);
	snap_sort(s);
}

/* First difference of two snapshots, or NULL. */
static const char *snap_diff(const struct snap *got, const struct snap *want,
			     char *why, size_t size)
{
	int i = 0, j = 0, c;

	while (i < got->n || j < want->n) {
		if (i < got->n && j < want->n) {
			c = strcmp(got->line[i], want->line[j]);
			if (!c) {
				i++;
				j++;
				continue;
			}
		} else {
			c = i < got->n ? -1 : 1;
		}
		if (c < 0)
			fmt(why, size, "unexpected \"%.300s\"", got->line[i]);
		else
			fmt(why, size, "missing \"%.300s\"", want->line[j]);
		return why;
	}
	return NULL;
}

/* ---- running one backend ---- */

struct result {
	int err;		/* 0: a descriptor */
	int isdir;
	uint64_t dev, ino;
	int created;		/* -1: not asked */
	int setup_failed;
	char note[160];
};

static void fill_call(const struct fcase *c, int sem, const char *path,
		      const char *dirfd_rel, struct fz_call *call)
{
	memset(call, 0, sizeof(*call));
	call->sem = sem;
	call->flags = c->flags;
	call->mode = c->mode;
	call->resolve = c->resolve;
	call->options = c->options;
	call->umask = c->umask;
	call->uid = c->user ? USER_UID : 0;
	call->gid = c->user ? USER_GID : 0;
	call->dirfd_rel = dirfd_rel;
	call->path = path;
	call->nofile = c->nofile;
}

static int model_sem(const struct fcase *c, int be)
{
	if (be == BE_RAW)
		return c->api == API_OPENAT2 ? FZ_SEM_KERNEL_OPENAT2 : FZ_SEM_KERNEL_OPENAT;
	/* with resolve flags or options the library call is ocdir_openat2 */
	return c->api == API_OPENAT2 ? FZ_SEM_LIB_OPENAT2 : FZ_SEM_LIB_OPENAT;
}

/*
 * The backends run in worker processes, one per backend and caller, made
 * once and reused for every case (a fork per call was most of the cost
 * under TCG): the library reads its environment once per process, and
 * the uid 1000 worker drops its privileges once. The parent opens the
 * dirfd as root, as a forked child used to, and passes it over a unix
 * socket; the worker sets the umask and the descriptor limit per call.
 */
struct request {
	struct fcase c;
	char path[PATH_MAX * 2];
};

struct worker {
	pid_t pid;
	int sock;
};
static struct worker workers[BE_COUNT][2];

/*
 * Root's raw calls, and its emulated ones when this process's library is
 * the emulated backend (main() forces it when no backend wants the
 * library unforced), run here without a worker: a round trip to a worker
 * and back costs about 1.5 ms on the debug kernel under TCG, more than
 * the call itself. The uid 1000 calls keep their worker.
 */
static int library_here;

static void worker_call(const struct request *q, int be, int dirfd, struct result *r)
{
	const struct fcase *c = &q->c;
	char path[PATH_MAX * 2], num[16];
	const char *hole;
	struct rlimit saved, rl;
	struct stat st;
	int fd, limited = 0;

	memset(r, 0, sizeof(*r));
	r->created = -1;
	hole = strstr(q->path, "DIRFD");
	if (hole) {
		fmt(num, sizeof(num), "%d", dirfd);
		fmt(path, sizeof(path), "%.*s%s%s", (int)(hole - q->path), q->path,
		    num, hole + 5);
	} else {
		fmt(path, sizeof(path), "%s", q->path);
	}
	umask(c->umask);
	if (c->nofile) {
		/* the lowest free descriptor becomes the limit: the next open fails */
		int free_fd = dup(0);

		if (free_fd >= 0)
			close(free_fd);
		if (free_fd < 0 || getrlimit(RLIMIT_NOFILE, &saved) < 0) {
			r->setup_failed = 1;
			fmt(r->note, sizeof(r->note), "RLIMIT_NOFILE: %s", strerror(errno));
			return;
		}
		rl = saved;
		rl.rlim_cur = (rlim_t)free_fd;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			r->setup_failed = 1;
			fmt(r->note, sizeof(r->note), "setrlimit: %s", strerror(errno));
			return;
		}
		limited = 1;
	}
	if (be == BE_RAW && c->api == API_OPENAT) {
		fd = (int)syscall(SYS_openat, dirfd, path, (int)(uint32_t)c->flags,
				  (mode_t)c->mode);
	} else if (be == BE_RAW) {
		struct open_how how = {
			.flags = c->flags, .mode = c->mode, .resolve = c->resolve,
		};
		int tries = 0;

		/*
		 * Under BENEATH or IN_ROOT a ".." fails with EAGAIN when any
		 * rename or mount happened meanwhile anywhere on the system
		 * (rename_lock, mount_lock) - another job of --jobs does both.
		 * openat2(2) says to retry; the check comes before anything is
		 * created, and the library retries too. RESOLVE_CACHED's own
		 * EAGAIN is not retried.
		 */
		do
			fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		while (fd < 0 && errno == EAGAIN && ++tries < 64 &&
		       (c->resolve & (FZ_RESOLVE_BENEATH | FZ_RESOLVE_IN_ROOT)) &&
		       !(c->resolve & FZ_RESOLVE_CACHED));
	} else if (c->api == API_OPENAT) {
		fd = ocdir_openat(dirfd, path, (int)(uint32_t)c->flags, (mode_t)c->mode);
	} else {
		struct ocdir_how how = {
			.flags = c->flags, .mode = c->mode, .resolve = c->resolve,
			.options = c->options,
		};
		int made = -1;

		fd = ocdir_openat2(dirfd, path, &how, sizeof(how), &made);
		if (fd >= 0)
			r->created = made;
	}
	if (fd < 0) {
		r->err = errno;
	} else {
		if (fstat(fd, &st) == 0) {
			r->isdir = S_ISDIR(st.st_mode);
			r->dev = st.st_dev;
			r->ino = st.st_ino;
		}
		close(fd);
	}
	if (limited)
		setrlimit(RLIMIT_NOFILE, &saved);
}

static ssize_t send_with_fd(int sock, const void *buf, size_t len, int fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.b;
		m.msg_controllen = sizeof(u.b);
		CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL);
}

static ssize_t recv_with_fd(int sock, void *buf, size_t len, int *fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *h;
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	for (h = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(h), sizeof(int));
	return n;
}

static void worker_main(int be, int user, int sock)
{
	static struct request q;
	struct result r, init;	/* init: why this worker cannot run calls */
	const char *why;
	int dirfd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&init, 0, sizeof(init));
	if (be == BE_EMULATED)
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
	else
		unsetenv("OCDIR_FORCE_EMULATION");
	if (be != BE_RAW) {
		int want = be == BE_NATIVE ? OCDIR_BACKEND_NATIVE : OCDIR_BACKEND_EMULATED;

		if (ocdir_backend(&why) != want) {
			init.setup_failed = 1;
			fmt(init.note, sizeof(init.note), "library backend is not %s: %s",
			    backend_names[be], why);
		}
	}
	if (!init.setup_failed && user &&
	    (setgroups(0, NULL) < 0 || setresgid(USER_GID, USER_GID, USER_GID) < 0 ||
	     setresuid(USER_UID, USER_UID, USER_UID) < 0)) {
		init.setup_failed = 1;
		fmt(init.note, sizeof(init.note), "setresuid: %s", strerror(errno));
	}
	if (user)
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);	/* /proc/self/fd stays ours */
	for (;;) {
		if (recv_with_fd(sock, &q, sizeof(q), &dirfd) != (ssize_t)sizeof(q))
			_exit(0);
		alarm(20);	/* a hung call kills the worker: the parent sees it */
		if (init.setup_failed)
			r = init;
		else
			worker_call(&q, be, dirfd, &r);
		alarm(0);
		if (dirfd >= 0)
			close(dirfd);
		if (send(sock, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
			_exit(2);
	}
}

static void stop_worker(struct worker *w)
{
	int status;

	if (w->pid <= 0)
		return;
	close(w->sock);
	waitpid(w->pid, &status, 0);
	w->pid = 0;
}

static void stop_workers(void)
{
	int be, u;

	for (be = 0; be < BE_COUNT; be++)
		for (u = 0; u < 2; u++)
			stop_worker(&workers[be][u]);
}

static struct worker *get_worker(int be, int user)
{
	struct worker *w = &workers[be][user];
	int sv[2];

	if (w->pid > 0)
		return w;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	fflush(stdout);
	w->pid = fork();
	if (w->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	if (w->pid == 0) {
		int b, u;

		/* the other workers' sockets: they must see EOF when we stop them */
		for (b = 0; b < BE_COUNT; b++)
			for (u = 0; u < 2; u++)
				if (workers[b][u].pid > 0 && &workers[b][u] != w)
					close(workers[b][u].sock);
		close(sv[0]);
		worker_main(be, user, sv[1]);
	}
	close(sv[1]);
	w->sock = sv[0];
	return w;
}

static int run_backend(const struct fcase *c, int be, const char *path,
		       const char *dirfd_rel, struct result *r)
{
	static struct request q;
	char dpath[PATH_MAX + 8];
	struct worker *w;
	int dirfd, status;
	ssize_t n = -1;

	memset(r, 0, sizeof(*r));
	fmt(dpath, sizeof(dpath), "%s%s%s", cdir, dirfd_rel[0] ? "/" : "", dirfd_rel);
	dirfd = open(dpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		r->setup_failed = 1;
		fmt(r->note, sizeof(r->note), "open dirfd: %s", strerror(errno));
		return 0;
	}
	q.c = *c;
	fmt(q.path, sizeof(q.path), "%s", path);
	if (!c->user && (be == BE_RAW || (be == BE_EMULATED && library_here))) {
		mode_t saved = umask(022);

		worker_call(&q, be, dirfd, r);
		umask(saved);
		close(dirfd);
		return 0;
	}
	w = get_worker(be, c->user);
	if (w && send_with_fd(w->sock, &q, sizeof(q), dirfd) == (ssize_t)sizeof(q))
		n = recv(w->sock, r, sizeof(*r), 0);
	close(dirfd);
	if (n != (ssize_t)sizeof(*r)) {
		memset(r, 0, sizeof(*r));
		r->setup_failed = 1;
		status = 0;
		if (w) {
			close(w->sock);
			waitpid(w->pid, &status, 0);
			w->pid = 0;
		}
		fmt(r->note, sizeof(r->note), "worker died (status 0x%x)", status);
	}
	return 0;
}

/* ---- one case against every backend ---- */

struct verdict {
	int disagreements;
	char what[BE_COUNT][1200];
	int model_err[BE_COUNT];
	int got_err[BE_COUNT];
	int got_created[BE_COUNT];
};

static const char *outcome_name(int err, int created)
{
	if (err)
		return t_errname(err);
	return created ? "fd(created)" : "fd(opened)";
}

/* Back to the pre-state after an agreeing backend: 1 if that worked. */
static int undo_made(const struct fz_expect *x)
{
	char p[PATH_MAX * 2];

	if (!x->created && !x->made_kept)
		return 1;
	fmt(p, sizeof(p), "%s/%s", cdir, x->made.path);
	return rmdir(p) == 0;
}

static int check_case(const struct fcase *c, struct verdict *v, int count)
{
	struct fz_entry pre[FZ_MAX_ENTRIES];
	char path[PATH_MAX * 2], why[700];
	const char *dirfd_rel, *bad;
	int npre, be, clean;

	memset(v, 0, sizeof(*v));
	npre = plan(c, pre);
	case_path(c, path, sizeof(path), &dirfd_rel);
	clean = 0;
	for (be = 0; be < BE_COUNT; be++) {
		struct fz_expect x;
		struct fz_call call;
		struct result r;
		struct snap got, want;
		struct stat st;
		const char *made_by;

		if (!use_backend[be])
			continue;
		fill_call(c, model_sem(c, be), path, dirfd_rel, &call);
		if (fz_model(&env, pre, npre, &call, &x) < 0) {
			fmt(v->what[be], sizeof(v->what[be]), "model cannot build the case");
			v->disagreements++;
			continue;
		}
		v->model_err[be] = x.err;
		/*
		 * The pre-state is built once per case: a backend that agreed
		 * with the model left exactly the pre-state plus the directory
		 * the model says it made, which is removed again below.
		 */
		bad = clean ? NULL : setup(pre, npre);
		if (bad) {
			fmt(v->what[be], sizeof(v->what[be]), "setup: %s: %s", bad,
				 strerror(errno));
			v->disagreements++;
			teardown();
			continue;
		}
		clean = 0;
		run_backend(c, be, path, dirfd_rel, &r);
		v->got_err[be] = r.err;
		v->got_created[be] = r.created;
		if (count) {
			int m = be == BE_RAW ? OUT_MODEL_KERNEL : OUT_MODEL_LIB;

			if (be != BE_NATIVE || !use_backend[BE_EMULATED]) {
				outcome[m][x.err > MAX_ERRNO ? MAX_ERRNO : x.err]++;
				if (!x.err && x.created)
					outcome[m][MAX_ERRNO + 1]++;
			}
			if (!r.setup_failed) {
				outcome[be][r.err > MAX_ERRNO ? MAX_ERRNO : r.err]++;
				if (!r.err && x.created)
					outcome[be][MAX_ERRNO + 1]++;
			}
		}
		if (r.setup_failed) {
			fmt(v->what[be], sizeof(v->what[be]), "%s", r.note);
			v->disagreements++;
			teardown();
			continue;
		}
		snap_take(&got);
		snap_expect(&want, pre, npre, &x);
		why[0] = '\0';
		made_by = x.created ? "created" : "opened";
		if (r.err != x.err) {
			fmt(why, sizeof(why), "got %s, model says %s", outcome_name(r.err, 0),
				 x.err ? t_errname(x.err) : made_by);
		} else if (!r.err && !r.isdir) {
			fmt(why, sizeof(why), "the descriptor is not a directory");
		} else if (!r.err && (stat(x.opened, &st) < 0 ||
				      st.st_dev != r.dev || st.st_ino != r.ino)) {
			fmt(why, sizeof(why), "the descriptor is not %s", x.opened);
		} else if (!r.err && r.created >= 0 && r.created != x.created) {
			fmt(why, sizeof(why), "created=%d, model says %d", r.created,
				 x.created);
		} else if (snap_diff(&got, &want, why, sizeof(why))) {
			char tmp[760];

			fmt(tmp, sizeof(tmp), "state after %s: %s",
				 r.err ? t_errname(r.err) : "success", why);
			fmt(why, sizeof(why), "%s", tmp);
		}
		if (why[0]) {
			fmt(v->what[be], sizeof(v->what[be]), "%s", why);
			v->disagreements++;
			teardown();
			continue;
		}
		clean = undo_made(&x);
		if (!clean)
			teardown();
	}
	return v->disagreements;
}

/* ---- shrinking ---- */

static int still_fails(const struct fcase *c)
{
	struct verdict v;

	return check_case(c, &v, 0) > 0;
}

static void shrink(struct fcase *c)
{
	int changed = 1, rounds = 0, b;

	while (changed && rounds++ < 4) {
		struct fcase t;

		changed = 0;
#define TRY(stmt) do { t = *c; stmt; if (memcmp(&t, c, sizeof(t)) && still_fails(&t)) { *c = t; changed = 1; } } while (0)
		for (b = 0; b < 64; b++) {
			uint64_t bit = 1ULL << b;

			if (!(c->flags & bit) || bit == O_CREAT || bit == O_DIRECTORY)
				continue;
			TRY(t.flags &= ~bit);
		}
		for (b = 0; b < 7; b++)
			if (c->resolve & (1ULL << b))
				TRY(t.resolve &= ~(1ULL << b));
		for (b = 0; b < 6; b++)
			if (c->options & (1ULL << b))
				TRY(t.options &= ~(1ULL << b));
		if (!c->resolve && !c->options && !(c->flags >> 32))
			TRY(t.api = API_OPENAT);
		TRY(t.shape = SH_NAME);
		TRY(t.namelen = 0);
		TRY(t.tkind = TK_ABSENT);
		TRY(t.tkind = TK_DIR);
		TRY(t.pkind = PK_PLAIN);
		TRY(t.pkind = PK_WORLD);
		TRY(t.user = 0);
		TRY(t.powner = OW_ROOT);
		TRY(t.pgroup = OW_ROOT);
		TRY(t.towner = OW_ROOT);
		TRY(t.tmode = 0755);
		TRY(t.mode = 0755);
		TRY(t.umask = 022);
		TRY(t.nofile = 0);
#undef TRY
	}
}

/* ---- environment discovery ---- */

static uint64_t mnt_id(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/* The filesystem type of the mount that holds path (statfs lies on 9p). */
static void fs_type_of(const char *path, char *type, size_t size)
{
	uint64_t want = mnt_id(path);
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	fmt(type, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id;
		char *sep = strstr(line, " - ");

		if (sscanf(line, "%llu", &id) == 1 && id == want && sep) {
			sscanf(sep + 3, "%63s", type);
			break;
		}
	}
	fclose(f);
}

static int user_can_search(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(USER_GID, USER_GID, USER_GID) < 0 ||
		    setresuid(USER_UID, USER_UID, USER_UID) < 0)
			_exit(1);
		_exit(access(path, X_OK) == 0 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int kernel_has_feature(int *err);

static int made_as(const char *path, unsigned int gid, unsigned int mode)
{
	struct stat st;

	return lstat(path, &st) == 0 && st.st_uid == 0 && st.st_gid == gid &&
	       (S_ISLNK(st.st_mode) || (st.st_mode & 07777) == mode);
}

/*
 * Whether setup() may trust inherited(): made as C is (0755 under
 * basedir), a sticky directory, and in a setgid directory of another
 * group a directory, a file and a symlink, each compared with the guess.
 */
/* Does the filesystem under dir take renameat2(RENAME_NOREPLACE)? */
static int refuses_noreplace(const char *dir)
{
	char a[PATH_MAX], b[PATH_MAX];
	int refused;

	fmt(a, sizeof(a), "%s/noreplace-a", dir);
	fmt(b, sizeof(b), "%s/noreplace-b", dir);
	if (mkdir(a, 0700) < 0)
		return 0;
	refused = renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE) < 0 && errno == EINVAL;
	rmdir(a);
	rmdir(b);
	return refused;
}

static int plain_create_works(void)
{
	char c[PATH_MAX + 64], p[PATH_MAX + 80];
	mode_t saved = umask(0);
	int ok, fd;

	fmt(c, sizeof(c), "%s/calc", basedir);
	ok = mkdir(c, 0755) == 0 && made_as(c, 0, 0755);
	fmt(p, sizeof(p), "%s/s", c);
	ok = ok && mkdir(p, 01777) == 0 && made_as(p, 0, 01777);
	fmt(p, sizeof(p), "%s/g", c);
	ok = ok && mkdir(p, 0775) == 0 && lchown(p, 0, OTHER_UID) == 0 &&
	     chmod(p, 02775) == 0;
	fmt(p, sizeof(p), "%s/g/d", c);
	ok = ok && mkdir(p, 0755) == 0 && made_as(p, OTHER_UID, 02755);
	fmt(p, sizeof(p), "%s/g/f", c);
	fd = ok ? open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644) : -1;
	ok = fd >= 0 && made_as(p, OTHER_UID, 0644);
	if (fd >= 0)
		close(fd);
	fmt(p, sizeof(p), "%s/g/l", c);
	ok = ok && symlink("d", p) == 0 && made_as(p, OTHER_UID, 0);
	umask(saved);
	remove_tree_at(AT_FDCWD, c);
	return ok;
}

static int discover(const char *dir)
{
	char real[PATH_MAX], p[PATH_MAX + 64], *s;
	struct stat st;
	int fd, i, ferr;
	FILE *f;

	if (!realpath(dir, real)) {
		fprintf(stderr, "fuzz: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	fmt(basedir, sizeof(basedir), "%s/ocdir-fuzz.%d", strcmp(real, "/") ? real : "",
		 (int)getpid());
	fmt(cdir, sizeof(cdir), "%s/c", basedir);
	if (mkdir(basedir, 0755) < 0 || chmod(basedir, 0755) < 0) {
		fprintf(stderr, "fuzz: mkdir %s: %s\n", basedir, strerror(errno));
		return -1;
	}
	fmt(env.cdir, sizeof(env.cdir), "%s", cdir);
	fs_type_of(basedir, env.fstype, sizeof(env.fstype));

	/* "/" and every directory down to C, with their mount ids */
	env.nanc = 0;
	env.anc_mnt[env.nanc] = mnt_id("/");
	env.anc_name[env.nanc++][0] = '\0';
	for (s = cdir + 1; s && *s && env.nanc < FZ_MAX_ANCESTORS; ) {
		char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		fmt(env.anc_name[env.nanc], sizeof(env.anc_name[0]), "%.*s",
			 (int)len, s);
		fmt(p, sizeof(p), "%.*s", (int)(s - cdir + (long)len), cdir);
		if (!e) {	/* C itself does not exist yet: same mount as its parent */
			env.anc_mnt[env.nanc] = mnt_id(basedir);
		} else {
			env.anc_mnt[env.nanc] = mnt_id(p);
		}
		env.nanc++;
		s = e ? e + 1 : NULL;
	}
	env.proc_mnt = stat("/proc/self/fd", &st) == 0 ? mnt_id("/proc") : 0;
	f = fopen("/proc/sys/fs/protected_symlinks", "re");
	if (f) {
		if (fscanf(f, "%d", &env.protected_symlinks) != 1)
			env.protected_symlinks = 0;
		fclose(f);
	}

	/* facts about this filesystem that existing behaviour decides */
	env.no_noreplace = refuses_noreplace(basedir);
	fd = open(basedir, O_RDONLY | O_DIRECTORY | O_DIRECT | O_CLOEXEC);
	env.odirect_dirs = fd >= 0;
	if (fd >= 0)
		close(fd);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_DIRECT | O_CLOEXEC);
	env.odirect_root = fd >= 0;
	if (fd >= 0)
		close(fd);
	/* a missing parent: nothing can be created, only the order shows */
	fmt(p, sizeof(p), "%s/nothere/x", basedir);
	fd = (int)syscall(SYS_openat, AT_FDCWD, p,
			  O_CREAT | O_DIRECTORY | O_DIRECT | O_RDONLY | O_CLOEXEC, 0755);
	env.odirect_early = fd < 0 && errno == EINVAL && kernel_has_feature(&ferr);
	if (fd >= 0)
		close(fd);
	/* openat2's flag check, which differs between kernel versions */
	{
		struct open_how how = {
			.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | FZ_O_NONOTIFY,
		};

		fd = (int)syscall(SYS_openat2, AT_FDCWD, basedir, &how, sizeof(how));
		env.nonotify_stripped = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	fmt(p, sizeof(p), "%s/cal", basedir);
	umask(0);
	env.perm_mask = 01777;
	if (mkdir(p, 01777) == 0 && stat(p, &st) == 0)
		env.perm_mask = st.st_mode & 01777;
	umask(022);
	caps.acl = set_default_acl(p, FZ_ACL_EXT) == 0;
	rmdir(p);
	fmt(p, sizeof(p), "%s/calf", basedir);
	caps.fifo = mknod(p, S_IFIFO | 0600, 0) == 0 && unlink(p) == 0;
	caps.sock = mknod(p, S_IFSOCK | 0600, 0) == 0 && unlink(p) == 0;
	caps.chr = mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0 && unlink(p) == 0;
	fmt(p, sizeof(p), "%s/calm", basedir);
	caps.ro = mkdir(p, 0755) == 0 && mount(p, p, NULL, MS_BIND, NULL) == 0 &&
		  mount(NULL, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) == 0;
	umount2(p, MNT_DETACH);
	rmdir(p);
	caps.user = user_can_search(basedir);
	caps.plain_create = plain_create_works();
	if (!quiet_discovery)
		printf("# fuzz: %s on %s; O_DIRECT on dirs %s%s; mkdir keeps %04o; "
	       "protected_symlinks=%d; RENAME_NOREPLACE %s; default ACLs %s, ro bind %s, fifo %s, "
	       "socket %s, chardev %s, uid %d %s; setup trusts inheritance: %s\n", basedir, env.fstype,
	       env.odirect_dirs ? "works" : "EINVAL",
	       env.odirect_early ? " (O_CREAT|O_DIRECTORY|O_DIRECT: EINVAL before the walk)" : "",
	       env.perm_mask,
	       env.protected_symlinks, env.no_noreplace ? "refused" : "works",
	       caps.acl ? "yes" : "no", caps.ro ? "yes" : "no",
	       caps.fifo ? "yes" : "no", caps.sock ? "yes" : "no",
	       caps.chr ? "yes" : "no", USER_UID, caps.user ? "yes" : "no (root only)",
	       caps.plain_create ? "yes" : "no");
	for (i = 0; verbose && i < env.nanc; i++)
		printf("#   ancestor %d %s mnt %" PRIu64 "\n", i, env.anc_name[i],
		       env.anc_mnt[i]);
	return 0;
}

/*
 * The side-effect-free probe of docs/semantics.md section 4: an fd means
 * the feature.
 */
static int kernel_has_feature(int *err)
{
	int fd = openat(AT_FDCWD, basedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		*err = errno;
		return 0;
	}
	r = (int)syscall(SYS_openat, fd, ".", O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0);
	*err = r < 0 ? errno : 0;
	close(fd);
	if (r >= 0)
		close(r);
	return r >= 0;
}

/* ---- main ---- */

static void usage(void)
{
	fprintf(stderr,
		"usage: fuzz --seed S (--cases N | --case I) --dir DIR "
		"[--backends raw,model,emulated,native] [--first F] [--max-seconds T] [--max-reports R] "
		"[--jobs N] [--progress T] [--verbose]\n");
	exit(2);
}

static void print_outcomes(void)
{
	int be, e;

	for (be = 0; be <= OUT_MODEL_LIB; be++) {
		char line[4096];
		size_t n = 0;

		if (be < BE_COUNT && !use_backend[be])
			continue;
		if (!outcome[be][0] && !outcome[be][MAX_ERRNO + 1] && be >= BE_COUNT) {
			for (e = 1; e <= MAX_ERRNO && !outcome[be][e]; e++)
				;
			if (e > MAX_ERRNO)
				continue;
		}
		n += (size_t)snprintf(line + n, sizeof(line) - n, "# outcomes %s:",
				      be == OUT_MODEL_KERNEL ? "model(kernel)" :
				      be == OUT_MODEL_LIB ? "model(library)" :
				      backend_names[be]);
		for (e = 0; e <= MAX_ERRNO; e++) {
			unsigned long k = outcome[be][e];

			if (!k)
				continue;
			if (e == 0)
				n += (size_t)snprintf(line + n, sizeof(line) - n,
						      " fd=%lu (created %lu)", k,
						      outcome[be][MAX_ERRNO + 1]);
			else
				n += (size_t)snprintf(line + n, sizeof(line) - n, " %s=%lu",
						      e ? t_errname(e) : "fd", k);
			if (n >= sizeof(line))
				break;
		}
		puts(line);
	}
}

/* What the jobs of --jobs add up; the parent prints it. */
struct totals {
	int lock;
	uint64_t ran, bad;
	unsigned long disagreed[BE_COUNT];
	unsigned long outcome[BE_COUNT + 2][MAX_ERRNO + 2];
	int use[BE_COUNT];
};

static void add_totals(struct totals *t, uint64_t ran, uint64_t bad)
{
	int be, e;

	while (__atomic_exchange_n(&t->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	t->ran += ran;
	t->bad += bad;
	for (be = 0; be < BE_COUNT; be++) {
		t->disagreed[be] += disagreed[be];
		t->use[be] |= use_backend[be];
	}
	for (be = 0; be < BE_COUNT + 2; be++)
		for (e = 0; e < MAX_ERRNO + 2; e++)
			t->outcome[be][e] += outcome[be][e];
	__atomic_store_n(&t->lock, 0, __ATOMIC_RELEASE);
}

static int report_totals(uint64_t ran, uint64_t bad, uint64_t seed, time_t start)
{
	int be;

	print_outcomes();
	for (be = 0; be < BE_COUNT; be++)
		if (use_backend[be])
			printf("# disagreements %s: %lu of %" PRIu64 " cases\n",
			       backend_names[be], disagreed[be], ran);
	printf("# %" PRIu64 " cases in %lds\n", ran, (long)(time(NULL) - start));
	if (bad)
		printf("FAIL: fuzz seed %" PRIu64 ": %" PRIu64 " cases, %" PRIu64
		       " disagreements\n", seed, ran, bad);
	else
		printf("PASS: fuzz seed %" PRIu64 ": %" PRIu64 " cases, 0 disagreements\n",
		       seed, ran);
	return bad ? T_EXIT_FAIL : T_EXIT_PASS;
}

/* The parent of --jobs: wait for every job, then one summary. */
static int summarize(struct totals *t, int jobs, uint64_t seed, time_t start,
		     const char *backends)
{
	int status, failed = 0;

	(void)backends;
	while (jobs-- > 0) {
		if (wait(&status) < 0)
			break;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	memcpy(disagreed, t->disagreed, sizeof(disagreed));
	memcpy(outcome, t->outcome, sizeof(outcome));
	memcpy(use_backend, t->use, sizeof(use_backend));
	if (failed)
		printf("FAIL: fuzz seed %" PRIu64 ": %d jobs did not finish\n", seed, failed);
	return report_totals(t->ran, t->bad + (uint64_t)failed, seed, start);
}

int main(int argc, char **argv)
{
	uint64_t seed = 0, cases = 0, one = 0, i, bad = 0, max_seconds = 0, first_case = 0;
	uint64_t progress = 600;
	time_t last_progress;
	int have_seed = 0, have_one = 0, reports = 0, be, ferr, jobs = 1, shard = 0;
	uint64_t ran = 0;
	struct totals *tot = NULL;
	const char *dir = NULL, *backends = "model,emulated";
	char list[256], *tok, *save = NULL;
	time_t start = time(NULL);

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
			seed = strtoull(argv[++a], NULL, 0);
			have_seed = 1;
		} else if (!strcmp(argv[a], "--cases") && a + 1 < argc) {
			cases = strtoull(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--case") && a + 1 < argc) {
			one = strtoull(argv[++a], NULL, 0);
			have_one = 1;
		} else if (!strcmp(argv[a], "--dir") && a + 1 < argc) {
			dir = argv[++a];
		} else if (!strcmp(argv[a], "--backends") && a + 1 < argc) {
			backends = argv[++a];
		} else if (!strcmp(argv[a], "--first") && a + 1 < argc) {
			first_case = strtoull(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--progress") && a + 1 < argc) {
			progress = strtoull(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--max-seconds") && a + 1 < argc) {
			max_seconds = strtoull(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--max-reports") && a + 1 < argc) {
			max_reports = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--jobs") && a + 1 < argc) {
			jobs = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--verbose")) {
			verbose = 1;
		} else {
			usage();
		}
	}
	if (!have_seed || !dir || (!cases && !have_one) || jobs < 1 || jobs > 64)
		usage();
	if (have_one)
		jobs = 1;
	fmt(list, sizeof(list), "%s", backends);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (be = 0; be < BE_COUNT; be++)
			if (!strcmp(tok, backend_names[be]))
				use_backend[be] = 1;
		if (strcmp(tok, "model") && strcmp(tok, "raw") && strcmp(tok, "emulated") &&
		    strcmp(tok, "native"))
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!have_one)
		printf("# fuzz seed %" PRIu64 ": cases %" PRIu64 " to %" PRIu64 ", %d job%s\n",
		       seed, first_case, first_case + cases - 1, jobs, jobs > 1 ? "s" : "");
	if (geteuid() != 0) {
		printf("SKIP: fuzz seed %" PRIu64 ": needs root (setup, mounts, setresuid)\n", seed);
		return T_EXIT_SKIP;
	}
	/* our bind mounts stay ours */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		fprintf(stderr, "fuzz: no private mount namespace (%s): no read-only parents\n",
			strerror(errno));
	/*
	 * --jobs N: N processes, process k taking cases k, k+N, ...; each
	 * has its own case directory and workers, and adds its counts into
	 * shared memory for the one summary the parent prints.
	 */
	if (jobs > 1) {
		tot = mmap(NULL, sizeof(*tot), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (tot == MAP_FAILED)
			return T_EXIT_FAIL;
		memset(tot, 0, sizeof(*tot));
		fflush(stdout);
		for (shard = 0; shard < jobs; shard++) {
			pid_t pid = fork();

			if (pid < 0)
				return T_EXIT_FAIL;
			if (pid == 0)
				break;
		}
		if (shard == jobs)
			return summarize(tot, jobs, seed, start, backends);
	}
	quiet_discovery = shard > 0;
	if (discover(dir) < 0)
		return T_EXIT_FAIL;
	if (use_backend[BE_EMULATED] && !use_backend[BE_NATIVE]) {
		/* before this process's first library call: the probe is cached */
		setenv("OCDIR_FORCE_EMULATION", "1", 1);
		library_here = ocdir_backend(NULL) == OCDIR_BACKEND_EMULATED;
	}
	if (use_backend[BE_RAW] && !kernel_has_feature(&ferr)) {
		printf("FAIL: fuzz seed %" PRIu64 ": raw: kernel lacks the feature "
		       "(probe openat(d, \".\", O_CREAT|O_DIRECTORY): %s)\n", seed,
		       t_errname(ferr));
		use_backend[BE_RAW] = 0;
		bad++;
	}
	if (have_one) {
		cases = 1;
	}
	last_progress = time(NULL);
	for (i = first_case + (uint64_t)shard; i < first_case + cases; i += (uint64_t)jobs) {
		uint64_t index = have_one ? one : i;
		struct fcase c, orig;
		struct verdict v, first;
		char desc[2048];

		if (progress && !have_one && time(NULL) - last_progress >= (time_t)progress) {
			last_progress = time(NULL);
			printf("# progress: job %d: %" PRIu64 " cases, %" PRIu64
			       " disagreements, next case %" PRIu64 ", %lld s\n", shard, ran, bad,
			       index, (long long)(last_progress - start));
		}

		if (max_seconds && !have_one &&
		    (uint64_t)(time(NULL) - start) >= max_seconds) {
			printf("# stopped after %" PRIu64 " s (--max-seconds): %" PRIu64
			       " of %" PRIu64 " cases run%s\n", max_seconds, ran, cases,
			       jobs > 1 ? " by this job" : "");
			break;
		}
		ran++;
		generate(seed, index, &c);
		if (verbose) {
			describe(&c, desc, sizeof(desc));
			printf("# case %" PRIu64 ": %s\n", index, desc);
		}
		if (!check_case(&c, &v, 1))
			continue;
		bad++;
		for (be = 0; be < BE_COUNT; be++)
			if (v.what[be][0])
				disagreed[be]++;
		if (reports++ >= max_reports && !have_one)
			continue;
		orig = c;
		first = v;
		shrink(&c);
		check_case(&c, &v, 0);
		describe(&c, desc, sizeof(desc));
		for (be = 0; be < BE_COUNT; be++)
			if (v.what[be][0])
				printf("FAIL: fuzz seed %" PRIu64 " case %" PRIu64 ": %s: %s\n",
				       seed, index, backend_names[be], v.what[be]);
		if (!v.disagreements) {
			describe(&orig, desc, sizeof(desc));
			printf("FAIL: fuzz seed %" PRIu64 " case %" PRIu64
			       ": disagreement went away while shrinking\n", seed, index);
			for (be = 0; be < BE_COUNT; be++)
				if (first.what[be][0])
					printf("#   first run: %s: %s\n", backend_names[be],
					       first.what[be]);
		}
		printf("#   minimized: %s\n", desc);
		printf("#   on %s (%s); replay: tests/fuzz/fuzz --seed %" PRIu64 " --case %"
		       PRIu64 " --dir %s --backends %s\n", dir, env.fstype, seed, index,
		       dir, backends);
	}
	stop_workers();
	teardown();
	remove_tree_at(AT_FDCWD, basedir);
	if (tot) {	/* a job of --jobs: the parent reports */
		add_totals(tot, ran, bad);
		_exit(0);
	}
	return report_totals(ran, bad, seed, start);
}
