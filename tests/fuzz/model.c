/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/model.c - reference model of docs/semantics.md section 3 (and
 * section 5 for the library), written from that document and from the
 * order of checks in the kernel's path walk (build_open_flags,
 * link_path_walk, pick_link, follow_dotdot, lookup_open, do_open,
 * may_open), not from the code under test. It walks an in-memory tree
 * built from the pre-state.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"

#define MAX_NODES	(FZ_MAX_ENTRIES + FZ_MAX_ANCESTORS + 8)
#define MAXSYMLINKS	40

void fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, size, f, ap);
	va_end(ap);
}

struct node {
	char name[FZ_REL_MAX];
	int parent;		/* -1 for "/" */
	int type;		/* enum fz_type */
	int magic;		/* /proc/self/fd/N: jumps to the dirfd */
	int anyone;		/* procfs: searchable by the process itself */
	unsigned int perm, uid, gid;
	const char *link;
	int acl, ro;
	uint64_t mnt;
	int below_c;		/* C or inside it */
};

struct tree {
	struct node n[MAX_NODES];
	int count, root, c;
};

struct walk {
	const struct fz_env *env;
	const struct fz_call *call;
	struct tree *t;
	int dirfd, scope_root;
	uint64_t flags, resolve;
	int path_only;		/* raw openat with O_PATH: a plain lookup */
	int lib, follow, links;
	int root_set;		/* nd->root is set: absolute start, scoping, ".." */
};

static int add_node(struct tree *t, int parent, const char *name, int type)
{
	struct node *n;

	if (t->count >= MAX_NODES)
		return -1;
	n = &t->n[t->count];
	memset(n, 0, sizeof(*n));
	fmt(n->name, sizeof(n->name), "%s", name);
	n->parent = parent;
	n->type = type;
	n->perm = 0755;
	if (parent >= 0) {
		n->mnt = t->n[parent].mnt;
		n->below_c = t->n[parent].below_c;
	}
	return t->count++;
}

static int child(const struct tree *t, int dir, const char *name, size_t len)
{
	int i;

	for (i = 0; i < t->count; i++)
		if (t->n[i].parent == dir && strlen(t->n[i].name) == len &&
		    !memcmp(t->n[i].name, name, len))
			return i;
	return -1;
}

/* Node of a path relative to C, creating nothing; -1 if absent. */
static int lookup_rel(const struct tree *t, const char *rel)
{
	int cur = t->c;
	const char *p = rel, *e;

	while (*p) {
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		cur = child(t, cur, p, (size_t)(e - p));
		if (cur < 0)
			return -1;
		p = *e ? e + 1 : e;
	}
	return cur;
}

static void rel_path(const struct tree *t, int node, char *buf, size_t size)
{
	char tmp[FZ_REL_MAX * 2];

	buf[0] = '\0';
	while (node >= 0 && node != t->c) {
		fmt(tmp, sizeof(tmp), "%s%s%s", t->n[node].name,
			 buf[0] ? "/" : "", buf);
		fmt(buf, size, "%s", tmp);
		node = t->n[node].parent;
	}
}

static void abs_path(const struct tree *t, int node, char *buf, size_t size)
{
	char tmp[PATH_MAX + NAME_MAX + 2];

	buf[0] = '\0';
	while (node >= 0 && node != t->root) {
		fmt(tmp, sizeof(tmp), "/%s%s", t->n[node].name, buf);
		fmt(buf, size, "%s", tmp);
		node = t->n[node].parent;
	}
	if (!buf[0])
		fmt(buf, size, "/");
}

static int build_tree(struct tree *t, const struct fz_env *env,
		      const struct fz_entry *pre, int npre)
{
	int i, cur, proc, self, pid, fd;
	uint64_t bind = 1ULL << 62;

	t->count = 0;
	t->root = add_node(t, -1, "", FT_DIR);
	t->n[t->root].mnt = env->anc_mnt[0];
	cur = t->root;
	for (i = 1; i < env->nanc; i++) {
		cur = add_node(t, cur, env->anc_name[i], FT_DIR);
		t->n[cur].mnt = env->anc_mnt[i];
	}
	t->c = cur;
	t->n[cur].below_c = 1;
	if (env->proc_mnt) {
		proc = add_node(t, t->root, "proc", FT_DIR);
		t->n[proc].mnt = env->proc_mnt;
		t->n[proc].anyone = 1;
		self = add_node(t, proc, "self", FT_LNK);
		t->n[self].link = "PID";
		t->n[self].perm = 0777;
		pid = add_node(t, proc, "PID", FT_DIR);
		t->n[pid].anyone = 1;
		fd = add_node(t, pid, "fd", FT_DIR);
		t->n[fd].anyone = 1;
		fd = add_node(t, fd, "DIRFD", FT_LNK);
		t->n[fd].magic = 1;
	}
	for (i = 0; i < npre; i++) {
		const char *slash = strrchr(pre[i].path, '/');
		char dir[FZ_REL_MAX];
		int parent, n;

		if (slash) {
			fmt(dir, sizeof(dir), "%.*s", (int)(slash - pre[i].path),
				 pre[i].path);
			parent = lookup_rel(t, dir);
		} else {
			parent = t->c;
		}
		if (parent < 0)
			return -1;
		n = add_node(t, parent, slash ? slash + 1 : pre[i].path, pre[i].type);
		if (n < 0)
			return -1;
		t->n[n].perm = pre[i].perm;
		t->n[n].uid = pre[i].uid;
		t->n[n].gid = pre[i].gid;
		t->n[n].link = pre[i].link;
		t->n[n].acl = pre[i].acl;
		t->n[n].ro = pre[i].ro_mount || t->n[parent].ro;
		if (pre[i].ro_mount)
			t->n[n].mnt = bind++;
	}
	return 0;
}

/* ---- permissions (no supplementary groups, no access ACLs) ---- */

static unsigned int perm_class(const struct walk *w, const struct node *n)
{
	if (n->uid == w->call->uid)
		return (n->perm >> 6) & 7;
	if (n->gid == w->call->gid)
		return (n->perm >> 3) & 7;
	return n->perm & 7;
}

static int may(const struct walk *w, const struct node *n, unsigned int bits)
{
	if (w->call->uid == 0 || n->anyone)
		return 1;	/* CAP_DAC_OVERRIDE; procfs lets a task see its own fds */
	return (perm_class(w, n) & bits) == bits;
}

/* ---- the walk ---- */

/* follow_dotdot(): ".." at the root stays (BENEATH: EXDEV). */
static int dotdot(struct walk *w, int *cur)
{
	struct tree *t = w->t;
	int up;

	w->root_set = 1;	/* handle_dots() sets the root */
	if (*cur == w->scope_root || *cur == t->root) {
		if (*cur == w->scope_root && (w->resolve & FZ_RESOLVE_BENEATH))
			return -EXDEV;
		return 0;
	}
	up = t->n[*cur].parent;
	if (t->n[up].mnt != t->n[*cur].mnt && (w->resolve & FZ_RESOLVE_NO_XDEV))
		return -EXDEV;
	*cur = up;
	return 0;
}

/*
 * pick_link(): the link count, protected_symlinks (trailing links only),
 * RESOLVE_NO_SYMLINKS, then magic links and absolute jumps. On success *cur
 * is where the link text starts.
 */
static int follow_link(struct walk *w, int *cur, int link, int trailing)
{
	struct tree *t = w->t;
	const struct node *l = &t->n[link], *dir = &t->n[*cur];

	if (w->links++ >= MAXSYMLINKS)
		return -ELOOP;
	if (trailing && w->env->protected_symlinks && l->uid != w->call->uid &&
	    (dir->perm & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) &&
	    dir->uid != l->uid)
		return -EACCES;
	if (w->resolve & FZ_RESOLVE_NO_SYMLINKS)
		return -ELOOP;
	if (l->magic) {
		if (w->resolve & FZ_RESOLVE_NO_MAGICLINKS)
			return -ELOOP;
		if ((w->resolve & FZ_RESOLVE_NO_XDEV) && l->mnt != t->n[w->dirfd].mnt)
			return -EXDEV;
		if (w->resolve & (FZ_RESOLVE_BENEATH | FZ_RESOLVE_IN_ROOT))
			return -EXDEV;
		*cur = w->dirfd;
		return 0;
	}
	if (l->link[0] == '/') {
		if (w->resolve & FZ_RESOLVE_BENEATH)
			return -EXDEV;
		/*
		 * nd_jump_root() compares with nd->root before setting it:
		 * with no root yet, any absolute link is a crossing.
		 */
		if ((w->resolve & FZ_RESOLVE_NO_XDEV) &&
		    (!w->root_set || t->n[*cur].mnt != t->n[w->scope_root].mnt))
			return -EXDEV;
		w->root_set = 1;
		*cur = w->scope_root;
	}
	return 0;
}

/* may_create_in_sticky() for an existing directory (rule 10). */
static int sticky_denies(const struct walk *w, const struct node *dir,
			 const struct node *n)
{
	if (!(dir->perm & S_ISVTX))
		return 0;
	if (n->uid == dir->uid || n->uid == w->call->uid)
		return 0;
	return (dir->perm & 0002) || (dir->perm & 0020);
}

/* do_open() and may_open() on an existing object. */
static int open_existing(struct walk *w, int node, int parent, int last_norm,
			 struct fz_expect *out)
{
	const struct node *n = &w->t->n[node];

	if (w->path_only) {
		if (n->type != FT_DIR)
			return -ENOTDIR;
	} else {
		if (w->flags & O_EXCL)
			return -EEXIST;
		if (last_norm && n->type == FT_DIR &&
		    sticky_denies(w, &w->t->n[parent], n))
			return -EACCES;
		if (n->type != FT_DIR)
			return -ENOTDIR;
		if (!may(w, n, 4))
			return -EACCES;
		if ((w->flags & O_NOATIME) && w->call->uid != 0 && n->uid != w->call->uid)
			return -EPERM;
		if ((w->flags & O_DIRECT) &&
		    !(node == w->t->root ? w->env->odirect_root : w->env->odirect_dirs))
			return -EINVAL;
	}
	abs_path(w->t, node, out->opened, sizeof(out->opened));
	return 0;
}

/* The mode mkdir(2) gives: rule 2, the default ACL or the umask, setgid. */
static void new_dir(struct walk *w, int parent, const char *name, size_t len,
		    struct fz_expect *out)
{
	const struct node *p = &w->t->n[parent];
	unsigned int mode = (unsigned int)w->call->mode & 01777;
	char prel[FZ_REL_MAX];

	switch (p->acl) {
	case FZ_ACL_MIN:
		mode &= 01750;
		break;
	case FZ_ACL_EXT:
		mode &= 01771;
		break;
	default:
		mode &= ~w->call->umask & 01777;
	}
	mode &= w->env->perm_mask;
	out->made.type = FT_DIR;
	out->made.uid = w->call->uid;
	out->made.gid = w->call->gid;
	if (p->perm & S_ISGID) {
		mode |= S_ISGID;
		out->made.gid = p->gid;
	}
	out->made.perm = mode;
	rel_path(w->t, parent, prel, sizeof(prel));
	fmt(out->made.path, sizeof(out->made.path), "%s%s%.*s", prel,
		 prel[0] ? "/" : "", (int)len, name);
	fmt(out->opened, sizeof(out->opened), "%s/%s", w->env->cdir,
		 out->made.path);
}

/*
 * The emulation creates in place only in a private parent (the caller's or
 * root's, writable by nobody else, or sticky); elsewhere it stages, and
 * refuses (EOPNOTSUPP) where staging cannot give the result mkdir(2)
 * would, unless the caller passed OCDIR_ALLOW_WEAK_EMULATION (bit 2): the
 * filesystem refuses RENAME_NOREPLACE, or a chmod by a caller outside the
 * parent's group (not root: CAP_FSETID) would clear the setgid bit the new
 * directory inherits: the staging directory's (0700 less the umask, when
 * that took an owner bit) or the new directory's lent u+w for the rename.
 */
static int lib_refuses_shared(const struct walk *w, const struct node *p,
			      const struct fz_entry *made)
{
	unsigned int stage = p->acl == FZ_ACL_NONE ? 0700 & ~w->call->umask : 0700;

	if (w->call->options & 4)
		return 0;
	if ((p->uid == w->call->uid || p->uid == 0) &&
	    (!(p->perm & 022) || (p->perm & S_ISVTX)))
		return 0;
	if (w->env->no_noreplace)
		return 1;
	return (made->perm & S_ISGID) && w->call->uid != 0 && w->call->gid != p->gid &&
	       ((stage & 0700) != 0700 || !(made->perm & S_IWUSR));
}

/* An absent last component: lookup_open() with O_CREAT|O_DIRECTORY. */
static int absent(struct walk *w, int parent, const char *name, size_t len,
		  int in_link, struct fz_expect *out)
{
	const struct node *p = &w->t->n[parent];
	int create_error = 0;

	if (w->path_only)
		return -ENOENT;
	if (in_link)
		create_error = -EEXIST;		/* rule 9: never through a symlink */
	else if (p->ro)
		create_error = -EROFS;
	else if (!may(w, p, 3))
		create_error = -EACCES;
	if (create_error)
		return create_error;
	if (!p->below_c)
		return -EPERM;	/* the fuzzer never creates outside C */
	new_dir(w, parent, name, len, out);
	out->created = 1;
	/*
	 * The library's one difference (docs/library.md): opening a new
	 * directory its owner may not read takes a lent u+r, and a chmod by
	 * a caller outside the group (not root: CAP_FSETID) clears the
	 * inherited setgid bit for good. The library keeps the bit and fails.
	 */
	if (w->lib && (out->made.perm & S_ISGID) && !(out->made.perm & S_IRUSR) &&
	    w->call->uid != 0 && w->call->gid != p->gid) {
		out->created = 0;
		return -EACCES;
	}
	if (w->lib && lib_refuses_shared(w, p, &out->made)) {
		out->created = 0;
		return -EOPNOTSUPP;
	}
	if ((w->flags & O_DIRECT) && !w->env->odirect_dirs) {
		/*
		 * Only a kernel from before the early O_DIRECT check gets here
		 * (the library refuses O_DIRECT up front): the open after the
		 * mkdir fails and the new directory stays, as O_CREAT keeps a
		 * new file.
		 */
		out->made_kept = !w->lib;
		out->created = 0;
		return -EINVAL;
	}
	return 0;
}

static int walk(struct walk *w, const char *path, struct fz_expect *out)
{
	struct tree *t = w->t;
	char buf[PATH_MAX * 2], tmp[PATH_MAX * 2];
	const char *p, *comp, *q;
	int cur, r, in_link = 0;
	size_t len;

	if (!path[0])
		return -ENOENT;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	fmt(buf, sizeof(buf), "%s", path);
	p = buf;
	if (*p == '/') {
		if (w->resolve & FZ_RESOLVE_BENEATH)
			return -EXDEV;
		w->root_set = 1;
		cur = (w->resolve & FZ_RESOLVE_IN_ROOT) ? w->dirfd : t->root;
	} else {
		cur = w->dirfd;
	}
	for (;;) {
		int trailing, last, c;

		while (*p == '/')
			p++;
		if (!*p)	/* "/" alone: LAST_ROOT */
			return open_existing(w, cur, -1, 0, out);
		comp = p;
		q = strchr(p, '/');
		if (!q)
			q = p + strlen(p);
		len = (size_t)(q - comp);
		trailing = *q == '/';
		while (*q == '/')
			q++;
		last = !*q;
		if (!may(w, &t->n[cur], 1))	/* may_lookup() */
			return -EACCES;
		if ((len == 1 && comp[0] == '.') ||
		    (len == 2 && comp[0] == '.' && comp[1] == '.')) {
			if (len == 2) {
				r = dotdot(w, &cur);
				if (r)
					return r;
			}
			if (last)
				return open_existing(w, cur, -1, 0, out);
			p = q;
			continue;
		}
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		/*
		 * "name/" sets LOOKUP_FOLLOW|LOOKUP_DIRECTORY, except on an
		 * O_EXCL create, which never looks at the dcache first
		 * (lookup_fast_for_open()) and so never follows.
		 */
		if (last && trailing && (w->path_only || !(w->flags & O_EXCL)))
			w->follow = 1;
		c = child(t, cur, comp, len);
		if (c < 0) {
			if (!last)
				return -ENOENT;
			return absent(w, cur, comp, len, in_link, out);
		}
		if (t->n[c].mnt != t->n[cur].mnt && !t->n[c].magic &&
		    t->n[c].type == FT_DIR && (w->resolve & FZ_RESOLVE_NO_XDEV))
			return -EXDEV;
		if (t->n[c].type == FT_LNK && (!last || w->follow)) {
			const char *text = t->n[c].magic ? "" : t->n[c].link;

			r = follow_link(w, &cur, c, last);
			if (r)
				return r;
			if (last)
				in_link = 1;
			fmt(tmp, sizeof(tmp), "%s%s%s", text,
				 *text && *q ? "/" : "", q);
			fmt(buf, sizeof(buf), "%s", tmp);
			p = buf;
			if (!*p)	/* a magic link: its target is the result */
				return open_existing(w, cur, -1, 0, out);
			if (*p == '/' && !t->n[c].magic)
				p++;	/* follow_link() already jumped */
			continue;
		}
		if (last)
			return open_existing(w, c, cur, 1, out);
		if (t->n[c].type != FT_DIR)
			return -ENOTDIR;
		cur = c;
		p = q;
	}
}

/* build_open_flags() for openat(2) and openat2(2), in the kernel's order. */
static int kernel_flags(const struct fz_env *env, const struct fz_call *call,
			uint64_t *flags,
			uint64_t *resolve, int *path_only)
{
	uint64_t f = call->flags, mode = call->mode;
	int will_create;

	*path_only = 0;
	if (call->sem == FZ_SEM_KERNEL_OPENAT) {
		f = (uint32_t)f & FZ_VALID_OPEN_FLAGS;
		mode &= 07777;
		if (f & O_PATH)
			f &= FZ_O_PATH_FLAGS;
		*resolve = 0;
	} else {
		*resolve = call->resolve;
		f &= ~(uint64_t)O_CLOEXEC;
		if (env->nonotify_stripped)
			f &= ~(uint64_t)FZ_O_NONOTIFY;
		if (f & ~(uint64_t)FZ_VALID_OPEN_FLAGS)
			return -EINVAL;
		if (*resolve & ~(uint64_t)0x3f)
			return -EINVAL;
		if ((*resolve & FZ_RESOLVE_BENEATH) && (*resolve & FZ_RESOLVE_IN_ROOT))
			return -EINVAL;
	}
	will_create = !!(f & (O_CREAT | FZ_O_TMPFILE_BIT));
	if (will_create && (mode & ~(uint64_t)07777))
		return -EINVAL;
	if (!will_create && call->sem == FZ_SEM_KERNEL_OPENAT2 && mode)
		return -EINVAL;
	if ((f & O_CREAT) && (f & FZ_O_TMPFILE_BIT))
		return -EINVAL;
	/* the series as of 0012: O_DIRECT is refused before the walk */
	if (env->odirect_early && (f & O_CREAT) && (f & O_DIRECTORY) &&
	    (f & O_DIRECT))
		return -EINVAL;
	if (f & FZ_O_TMPFILE_BIT) {
		if (!(f & O_DIRECTORY) || (f & O_ACCMODE) == O_RDONLY)
			return -EINVAL;
	}
	if (f & O_PATH) {
		if (f & ~(uint64_t)FZ_O_PATH_FLAGS)
			return -EINVAL;
		*path_only = 1;
	}
	if ((f & O_DIRECTORY) && !(f & FZ_O_TMPFILE_BIT) && !*path_only &&
	    ((f & O_ACCMODE) != O_RDONLY || (f & O_TRUNC)))
		return -ENOTDIR;
	if ((*resolve & FZ_RESOLVE_CACHED) && (f & (O_TRUNC | O_CREAT | FZ_O_TMPFILE_BIT)))
		return -EAGAIN;
	*flags = f;
	return 0;
}

/* The library's argument checks (include/ocdir.h, struct ocdir_how). */
static int lib_flags(const struct fz_call *call, uint64_t *flags,
		     uint64_t *resolve)
{
	uint64_t f = call->flags;

	if (call->sem == FZ_SEM_LIB_OPENAT)
		f = (uint32_t)f;
	*resolve = call->sem == FZ_SEM_LIB_OPENAT ? 0 : call->resolve;
	if (f & ~(uint64_t)FZ_VALID_OPEN_FLAGS)
		return -EINVAL;
	if (*resolve & ~(uint64_t)0x1f)
		return -EINVAL;
	if ((*resolve & FZ_RESOLVE_BENEATH) && (*resolve & FZ_RESOLVE_IN_ROOT))
		return -EINVAL;
	if (call->sem == FZ_SEM_LIB_OPENAT2 && (call->mode & ~(uint64_t)07777))
		return -EINVAL;
	if (call->sem == FZ_SEM_LIB_OPENAT2 && (call->options & ~(uint64_t)7))
		return -EINVAL;
	if (f & O_PATH)
		return -EINVAL;
	if (f & FZ_O_TMPFILE_BIT)
		return -EINVAL;
	if (f & O_DIRECT)	/* every backend, as the patched kernel */
		return -EINVAL;
	if ((f & O_ACCMODE) != O_RDONLY || (f & O_TRUNC))
		return -ENOTDIR;
	*flags = f | O_CREAT | O_DIRECTORY;
	return 0;
}

int fz_model(const struct fz_env *env, const struct fz_entry *pre, int npre,
	     const struct fz_call *call, struct fz_expect *out)
{
	static struct tree t;
	struct walk w;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	w.env = env;
	w.call = call;
	w.t = &t;
	w.lib = call->sem == FZ_SEM_LIB_OPENAT || call->sem == FZ_SEM_LIB_OPENAT2;
	if (w.lib)
		r = lib_flags(call, &w.flags, &w.resolve);
	else
		r = kernel_flags(env, call, &w.flags, &w.resolve, &w.path_only);
	if (r) {
		out->err = -r;
		return 0;
	}
	/* do_sys_openat2(): flags, then getname(), then the descriptor */
	if (!call->path[0] || strlen(call->path) >= PATH_MAX) {
		out->err = call->path[0] ? ENAMETOOLONG : ENOENT;
		return 0;
	}
	if (call->nofile) {
		out->err = EMFILE;	/* rule 15: nothing is created */
		return 0;
	}
	if (build_tree(&t, env, pre, npre) < 0)
		return -1;
	w.dirfd = call->dirfd_rel[0] ? lookup_rel(&t, call->dirfd_rel) : t.c;
	if (w.dirfd < 0)
		return -1;
	w.scope_root = (w.resolve & (FZ_RESOLVE_BENEATH | FZ_RESOLVE_IN_ROOT)) ?
		       w.dirfd : t.root;
	w.root_set = w.scope_root != t.root;
	/* O_EXCL implies O_NOFOLLOW (build_open_flags) */
	w.follow = !(w.flags & O_NOFOLLOW) && !(!w.path_only && (w.flags & O_EXCL));
	r = walk(&w, call->path, out);
	out->err = -r;
	if (r) {
		out->opened[0] = '\0';
		if (!out->made_kept)
			out->created = 0;
	}
	return 0;
}
