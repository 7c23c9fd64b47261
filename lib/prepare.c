/* SPDX-License-Identifier: MIT */
/*
 * lib/prepare.c - prepare a directory out of sight, then publish it at its
 * name in one rename, or throw it away. The directory lives in a private
 * staging directory next to its destination until then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

struct ocdir_prepared {
	int parentfd;		/* O_PATH: the destination's parent */
	int stagefd;		/* the staging directory */
	char stagename[64];
	char *name;		/* the destination's last component */
};

static int oc_result(int r)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

static void prepared_free(struct ocdir_prepared *p)
{
	free(p->name);
	free(p);
}

/*
 * The staging part of ocdir_prepare, for p->name in p->parentfd (both set
 * by the caller): fail early if the name exists, make the private staging
 * directory, make the new directory in it and open it. Returns the
 * descriptor, or -errno with the staging directory removed again.
 */
static int prepare_at(struct ocdir_prepared *p, const struct oc_req *req)
{
	int fd, r, unusable, tries = 0;
	struct stat st;
	mode_t made;

	if (oc_is_dot_name(p->name))
		return -EEXIST;
	/* Fail early; publishing checks again, atomically. */
	if (fstatat(p->parentfd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
again:
	r = oc_stage_create(p->parentfd, &p->stagefd, p->stagename,
			    sizeof(p->stagename), &unusable, &made);
	if (r)
		return r;
	/*
	 * The staging directory cannot pass on the parent's setgid bit (our
	 * chmod cleared it): publishing would show a directory mkdir(2)
	 * would not have made. Or the server would not let it be private.
	 */
	if (unusable) {
		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
		return -EOPNOTSUPP;
	}
	fd = oc_mkdir_open(p->stagefd, p->name, req->mode,
			   (req->flags & ~O_EXCL) | req->cloexec, NULL, 1);
	if (fd < 0) {
		int gone = fd == -ENOENT && oc_stage_gone(p->stagefd);

		oc_stage_remove(p->parentfd, p->stagefd, p->stagename);
		/* Someone removed the empty staging directory: another one. */
		if (gone && ++tries < OC_RACE_RETRIES)
			goto again;
		return gone ? -EAGAIN : fd;
	}
	return fd;
}

OC_EXPORT int ocdir_prepare(int dirfd, const char *path,
			    const struct ocdir_how *how, size_t size,
			    struct ocdir_prepared **prepared)
{
	const int allowed = O_EXCL | O_CREAT | O_DIRECTORY | O_CLOEXEC |
			    O_NOATIME | O_NONBLOCK | OC_O_LARGEFILE;
	struct ocdir_prepared *p;
	char *parent = NULL, *last = NULL;
	struct oc_req req;
	int r, fd;

	if (!prepared)
		return oc_result(-EFAULT);
	r = oc_check_how(path, how, size, OC_HOW_OPENAT2, &req);
	if (r)
		return oc_result(r);
	if (how->flags & ~(uint64_t)allowed)
		return oc_result(-EINVAL);
	r = oc_split_path(path, &parent, &last);
	if (r)
		return oc_result(r);
	if (oc_is_dot_name(last)) {
		r = -EEXIST;
		goto out_names;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto out_names;
	}
	p->name = last;
	last = NULL;
	p->parentfd = oc_scoped_open(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				     req.resolve);
	if (p->parentfd < 0) {
		r = p->parentfd;
		goto out_free;
	}
	fd = prepare_at(p, &req);
	if (fd < 0) {
		r = fd;
		goto out_parent;
	}
	*prepared = p;
	free(parent);
	return fd;

out_parent:
	close(p->parentfd);
out_free:
	prepared_free(p);
out_names:
	free(parent);
	free(last);
	return oc_result(r);
}

/*
 * Moving a directory to another parent needs write permission on it (its
 * ".." changes). If the caller took that away from its own directory, lend
 * it for the rename and give it back, through an O_PATH descriptor.
 */
static int publish_rename(struct ocdir_prepared *p)
{
	struct stat st;
	int fd, r;

	fd = oc_openat(p->stagefd, p->name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if ((st.st_mode & S_IWUSR) || st.st_uid != oc_fsuid() ||
	    oc_chmod_fd(fd, (st.st_mode & 07777) | S_IWUSR) < 0) {
		r = oc_renameat2(p->stagefd, p->name, p->parentfd, p->name,
				 RENAME_NOREPLACE);
		if (r == 0)
			oc_note_made(fd);
		close(fd);
		return r;
	}
	r = oc_renameat2(p->stagefd, p->name, p->parentfd, p->name,
			 RENAME_NOREPLACE);
	/* Give it back; if that fails the caller can still fix it via its fd. */
	oc_chmod_fd(fd, st.st_mode & 07777);
	if (r == 0)
		oc_note_made(fd);
	close(fd);
	return r;
}

/*
 * The end of a handle: once the directory is published or its tree gone,
 * only the empty staging directory is left to remove. p is freed whatever
 * that says, and the call succeeds: errno tells the caller whether the
 * staging directory stays (the header's "leftover"), 0 if it does not.
 */
static int prepared_end(struct ocdir_prepared *p)
{
	int r = oc_stage_remove(p->parentfd, p->stagefd, p->stagename);

	close(p->parentfd);
	prepared_free(p);
	errno = -r;
	return 0;
}

OC_EXPORT int ocdir_publish(struct ocdir_prepared *p)
{
	int r;

	if (!p)
		return oc_result(-EFAULT);
	/* Until the rename is done, p is the caller's to retry or discard. */
	r = publish_rename(p);
	if (r < 0)
		return oc_result(r);
	oc_test_swap_after(p->parentfd, p->name, 0);
	return prepared_end(p);
}

/* One directory on the way down from the one being emptied: how to come back. */
struct level {
	dev_t dev;
	ino_t ino;
	char *name;		/* its name in the level above */
};

/*
 * Make the directory fd ours alone again before it is emptied: owner and
 * group the caller's, no ACL, mode 0700. Whoever a setup gave it to (an
 * owner, a group, an ACL entry, a mode that lets others in) could
 * otherwise fill it as fast as it is emptied, through a descriptor or a
 * working directory it holds. Best effort: what the caller may not change
 * stays (then the removal may fail, and says so).
 */
/* No ACL, mode 0700: the caller's own directory fd (showing st), closed to others. */
static void close_to_others(int fd, const struct stat *st)
{
	fremovexattr(fd, "system.posix_acl_access");
	fremovexattr(fd, "system.posix_acl_default");
	if ((st->st_mode & 07777) != 0700)
		oc_chmod_fd(fd, 0700);
}

static void take_back(int fd)
{
	uid_t uid = oc_fsuid();
	gid_t gid = oc_fsgid();
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	if (st.st_uid != uid || st.st_gid != gid)
		(void)!fchown(fd, uid, gid);
	close_to_others(fd, &st);
}

/*
 * Could someone but the caller put entries in a directory that shows st?
 * (An access ACL's named entries are bounded by its mask, the group bits.)
 */
static int others_may_write(const struct stat *st)
{
	return st->st_uid != oc_fsuid() || (st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * Find the next entry of the directory fd to remove and remove it if it is
 * not a non-empty directory. The entries are read with getdents64 through
 * fd itself, from the start: no descriptor of its own. Returns 1 with
 * *sub set to a descriptor of a non-empty subdirectory (named *subname,
 * malloc'ed) to go down into, 0 when the directory is empty, or -errno
 * (EBUSY for another mount, as rmdir of a mount point).
 */
static int clear_step(int fd, dev_t dev, int careful, int *sub, char **subname)
{
	struct stat opened;
	union {
		struct oc_dirent64 de;
		char buf[4096];
	} u;
	const struct oc_dirent64 *de;
	struct stat st;
	long n, off;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, fd, u.buf, sizeof(u.buf))) > 0) {
		for (off = 0; off < n; off += de->d_reclen) {
			de = (const struct oc_dirent64 *)(u.buf + off);
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue;
				return -errno;
			}
			if (!S_ISDIR(st.st_mode)) {
				if (unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT)
					return -errno;
				continue;
			}
			if (st.st_dev != dev)
				return -EBUSY;
			if (unlinkat(fd, de->d_name, AT_REMOVEDIR) == 0)
				continue;
			if (errno != ENOTEMPTY && errno != EEXIST)
				return -errno;
			/*
			 * careful: others could put entries here. Another
			 * user's directory is not gone into: emptying it with
			 * the caller's rights could remove what its owner may
			 * keep from whoever moved it in.
			 */
			if (careful && st.st_uid != oc_fsuid())
				return -EPERM;
			*sub = oc_openat(fd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
			if (*sub < 0)
				return *sub;
			/* What was opened decides, not what the name showed before. */
			if (careful && (fstat(*sub, &opened) < 0 || opened.st_uid != oc_fsuid())) {
				close(*sub);
				return -EPERM;
			}
			/* The caller's own, open to others: closed to them before it is emptied. */
			if (careful && others_may_write(&opened))
				close_to_others(*sub, &opened);
			*subname = strdup(de->d_name);
			if (!*subname) {
				close(*sub);
				return -ENOMEM;
			}
			return 1;
		}
	}
	return n < 0 ? -errno : 0;
}

/*
 * Empty the directory `top` (a descriptor the caller holds; its offset
 * moves), without following symlinks and without entering other mounts.
 * Iterative, with at most two descriptors of its own open at a time,
 * whatever the depth: a level is left through its ".." (checked against
 * the device and inode it was entered from), and a subdirectory is
 * removed by name only while that name still leads to the level just
 * emptied. Stops at the first entry it cannot remove; what was removed
 * stays removed.
 */
static int remove_contents(int top, int careful)
{
	struct level *stack = NULL, *grown;
	size_t depth = 0, cap = 0, i;
	int cur = top, sub = -1, up, r;
	char *subname = NULL;
	struct stat st, upst, byname;
	dev_t dev;

	if (fstat(top, &st) < 0)
		return -errno;
	dev = st.st_dev;
	for (;;) {
		r = clear_step(cur, dev, careful, &sub, &subname);
		if (r < 0)
			break;
		if (r == 1) {	/* down */
			if (depth == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(stack, cap * sizeof(*stack));
				if (!grown) {
					r = -ENOMEM;
					close(sub);
					free(subname);
					break;
				}
				stack = grown;
			}
			if (fstat(cur, &st) < 0) {
				r = -errno;
				close(sub);
				free(subname);
				break;
			}
			stack[depth++] = (struct level){ st.st_dev, st.st_ino, subname };
			if (cur != top)
				close(cur);
			cur = sub;
			continue;
		}
		if (!depth)	/* top is empty now */
			break;
		/* up: to top, or through "..", which must be the level we came from */
		depth--;
		up = top;
		if (depth) {
			up = oc_openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
			if (up >= 0 && (fstat(up, &upst) < 0 || upst.st_dev != stack[depth].dev ||
					upst.st_ino != stack[depth].ino)) {
				close(up);
				up = -ESTALE;
			}
		}
		r = up < 0 ? up : fstat(cur, &st) < 0 ? -errno : 0;
		if (!r && (fstatat(up, stack[depth].name, &byname, AT_SYMLINK_NOFOLLOW) < 0 ||
			   !oc_same_inode(&st, &byname)))
			r = -ESTALE;	/* moved meanwhile */
		if (!r && unlinkat(up, stack[depth].name, AT_REMOVEDIR) < 0)
			r = -errno;
		free(stack[depth].name);
		close(cur);
		cur = up < 0 ? top : up;
		if (r < 0)
			break;
	}
	if (cur != top)
		close(cur);
	for (i = 0; i < depth; i++)
		free(stack[i].name);
	free(stack);
	return r;
}

/*
 * Remove the directory fd (held by the caller), made at `name` in parentfd,
 * with whatever was put in it: taken back (take_back()), its contents
 * removed through fd, then the directory by name, only once the name is
 * shown to lead to that very inode. Never a look-up of the name to find
 * what to empty. A directory refilled between the emptying and the rmdir
 * (by someone who held a way in before it was taken back) is emptied
 * again, a few times. careful: it was given away where others could reach
 * it by name, so others could have put entries in it: another user's
 * directory inside is not emptied (-EPERM), see clear_step(). (A prepared
 * or staged directory was never reachable by name: only those the caller
 * gave a descriptor could fill it, and its tree is the caller's to
 * remove, other owners' directories in it included.) Needs no descriptor
 * beyond the two of remove_contents().
 */
static int remove_made_at(int parentfd, const char *name, int fd, int careful)
{
	struct stat byfd, byname;
	int i, r = 0;

	take_back(fd);
	for (i = 0; i < OC_RACE_RETRIES; i++) {
		r = remove_contents(fd, careful);
		if (r < 0)
			return r;
		if (fstat(fd, &byfd) < 0)
			return -errno;
		if (fstatat(parentfd, name, &byname, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !oc_same_inode(&byfd, &byname))
			return -ESTALE;
		if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0)
			return 0;
		r = -errno;
		if (r != -ENOTEMPTY && r != -EEXIST)
			return r;
	}
	return r;
}

/*
 * Move the directory fd from `name` in fromfd to `to` in todir (a name
 * nobody has: a new staging directory of ours, or 64 random bits), only
 * while the name leads to fd. rename(2) goes by name: someone who can
 * write fromfd can exchange the name between the look and the rename.
 * What arrived is looked at, and another directory is put back at once
 * (the move is then tried again, a few times). Returns 0 once fd's
 * directory is at `to`, or -errno (it is then where it was).
 */
static int move_own(int fromfd, const char *name, int todir, const char *to, int fd)
{
	struct stat byfd, byname;
	int i, r = -EAGAIN;

	if (fstat(fd, &byfd) < 0)
		return -errno;
	for (i = 0; i < OC_RACE_RETRIES; i++) {
		if (fstatat(fromfd, name, &byname, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!oc_same_inode(&byfd, &byname))
			return -ESTALE;
		r = oc_renameat2(fromfd, name, todir, to, RENAME_NOREPLACE);
		/* No RENAME_NOREPLACE: `to` is nobody's. */
		if (r == -EINVAL || r == -ENOSYS)
			r = renameat(fromfd, name, todir, to) < 0 ? -errno : 0;
		if (r < 0)
			return r;
		if (fstatat(todir, to, &byname, AT_SYMLINK_NOFOLLOW) == 0 &&
		    oc_same_inode(&byfd, &byname))
			return 0;
		/* Someone else's: back where it was taken from, or where it was left. */
		if (oc_renameat2(todir, to, fromfd, name, RENAME_NOREPLACE) < 0 &&
		    renameat(todir, to, fromfd, name) < 0)
			return -errno;
		r = -EAGAIN;
	}
	return r;
}

/*
 * Where no staging directory can be made (or proven ours): off its public
 * name all the same, to a random hidden name in the parent (only while the
 * name leads to fd), and removed there. Returns as remove_made_at(); not
 * removed, it stays at the hidden name (or, if the rename was refused, at
 * its name).
 */
static int remove_at_hidden_name(int parentfd, const char *name, int fd, int careful)
{
	char hidden[64];
	int r;

	oc_random_name(hidden, sizeof(hidden), ".ocdir-stage");
	r = move_own(parentfd, name, parentfd, hidden, fd);
	return remove_made_at(parentfd, r < 0 ? name : hidden, fd, careful);
}

/*
 * Remove the directory fd that setup had, made at `name` in parentfd,
 * where others may see that name (in place: a private parent is still
 * seen by its owner and root, a shared one with the weak option by all).
 * setup may have given it away, so it is first taken back and moved out
 * of its public name into a new private staging directory (only while the
 * name leads to it), then removed there with the staging directory.
 * Returns 0, or -errno when it could not be removed: it then stays hidden
 * in that staging directory (or under a hidden name in the parent where
 * none could be made: remove_at_hidden_name()), emptied as far as the
 * caller may; at its name only where the rename itself was refused.
 */
static int remove_from_public_name(int parentfd, const char *name, int fd)
{
	char stagename[64];
	struct stat st;
	int stagefd, unusable, r, careful;
	mode_t made;

	/* Given away (an owner, a mode, an ACL that lets others write): careful. */
	careful = fstat(fd, &st) < 0 || others_may_write(&st);
	take_back(fd);
	r = oc_stage_create(parentfd, &stagefd, stagename, sizeof(stagename),
			    &unusable, &made);
	/* No birth time proves the staging directory ours: not a place to use. */
	if (!r && unusable == OC_STAGE_NOT_PROVEN) {
		oc_stage_remove(parentfd, stagefd, stagename);
		r = -EOPNOTSUPP;
	}
	if (r < 0)
		return remove_at_hidden_name(parentfd, name, fd, careful);
	r = move_own(parentfd, name, stagefd, name, fd);
	r = r < 0 ? remove_made_at(parentfd, name, fd, careful) :
		    remove_made_at(stagefd, name, fd, careful);
	/* Still in it if the removal failed: the rmdir then fails and it stays. */
	oc_stage_remove(parentfd, stagefd, stagename);
	return r;
}

/*
 * Remove the prepared directory `name` in our private staging directory,
 * where nobody else can replace it: opened once, then as remove_made_at().
 */
static int remove_tree(int stagefd, const char *name)
{
	int fd, r;

	/* ENOENT here, and only here: nothing of ours is at the name any more. */
	if (unlinkat(stagefd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	fd = oc_openat(stagefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	r = remove_made_at(stagefd, name, fd, 0);
	close(fd);
	/*
	 * An ENOENT from inside is a directory of the tree moved while it was
	 * being emptied (by someone it was opened to): the tree is not gone.
	 */
	return r == -ENOENT ? -ESTALE : r;
}

OC_EXPORT int ocdir_discard(struct ocdir_prepared *p)
{
	int r;

	if (!p) {
		errno = 0;
		return 0;
	}
	/*
	 * Keep p for a retry while any of the tree is left: the caller may
	 * free descriptors and call again. A name that is gone from our
	 * staging directory (an earlier try removed it, or the caller or root
	 * moved it) leaves no tree of ours to remove.
	 */
	r = remove_tree(p->stagefd, p->name);
	if (r < 0)
		return oc_result(r);
	return prepared_end(p);
}

/* ---- create with a setup step: ocdir_openat2_setup, ocdir_mkpath_setup ---- */

/* setup's answer: 0, or the -errno it gave (anything else as -EIO). */
static int run_setup(ocdir_setup_fn setup, int fd, const char *shown, void *arg)
{
	int r = setup(fd, shown, OCDIR_SETUP_LEAF, arg);

	return r >= 0 ? 0 : r > -4096 ? r : -EIO;
}

/*
 * Make `last` in parentfd owner-only, open it and set it up. Where nobody
 * else can write the parent (then this is as strong as staging), or, weak
 * set, with OCDIR_ALLOW_WEAK_EMULATION where staging cannot run. -EEXIST:
 * the name exists (nothing made). A failed setup removes what it made
 * through fd and parentfd, both held: no descriptor needed.
 */
static int setup_in_place(int parentfd, const char *last, const char *shown,
			  const struct oc_req *req, int weak,
			  ocdir_setup_fn setup, void *arg)
{
	int oflags = (req->flags & ~(O_EXCL | O_NOFOLLOW)) | req->cloexec;
	struct oc_req own = *req;
	int fd, r;

	own.mode &= S_IRWXU;
	fd = weak ? oc_create_weak(parentfd, last, &own, oflags) :
		    oc_mkdir_open(parentfd, last, own.mode, oflags, NULL, 1);
	if (fd < 0)
		return fd;
	r = run_setup(setup, fd, shown, arg);
	if (r < 0) {
		int removed = remove_from_public_name(parentfd, last, fd);

		close(fd);
		/* A removal that fails is the call's answer: it says what stays. */
		return removed < 0 ? removed : r;
	}
	return fd;
}

/*
 * Staging in a shared parent: make it hidden, set it up, publish it. An
 * existing name gives -EEXIST (the new directory removed again); a
 * filesystem or LSM that refuses the publishing rename gives -EOPNOTSUPP.
 * Nothing is left behind on failure.
 */
/*
 * Will this filesystem take the publishing rename (RENAME_NOREPLACE)?
 * Asked before setup runs, so that a refusal (then the weak way, or
 * EOPNOTSUPP) does not run setup a second time on another directory: the
 * new directory `name` is renamed to another name inside our staging
 * directory and back, which reaches the filesystem's own check. The
 * answer "yes" is kept for the last filesystem (device) that gave it.
 */
static dev_t noreplace_ok_dev;

static int noreplace_refused(int stagefd, const char *name)
{
	struct stat st;
	dev_t ok;
	int r;

	if (fstat(stagefd, &st) < 0)
		return 0;	/* the publishing rename will say */
	ok = __atomic_load_n(&noreplace_ok_dev, __ATOMIC_RELAXED);
	if (ok && ok == st.st_dev && !oc_config()->no_noreplace)
		return 0;
	r = oc_renameat2(stagefd, name, stagefd, ".ocdir-probe", RENAME_NOREPLACE);
	if (r == -EINVAL || r == -ENOSYS)
		return 1;
	if (r == 0 && oc_renameat2(stagefd, ".ocdir-probe", stagefd, name, RENAME_NOREPLACE) < 0 &&
	    renameat(stagefd, ".ocdir-probe", stagefd, name) < 0)
		return 0;	/* cannot happen in our own directory; publishing will say */
	if (r == 0)
		__atomic_store_n(&noreplace_ok_dev, st.st_dev, __ATOMIC_RELAXED);
	return 0;
}

static int setup_staged(int parentfd, const char *last, const char *shown,
			const struct oc_req *req, ocdir_setup_fn setup, void *arg)
{
	struct ocdir_prepared p = { .parentfd = parentfd, .name = (char *)last };
	struct oc_req own = *req;
	int fd, r;

	own.mode &= S_IRWXU;
	fd = prepare_at(&p, &own);
	if (fd < 0)
		return fd;
	/* setup runs once: not on a directory that could not be published. */
	r = noreplace_refused(p.stagefd, last) ? -EOPNOTSUPP : run_setup(setup, fd, shown, arg);
	if (!r) {
		r = publish_rename(&p);
		/* No RENAME_NOREPLACE here, or an LSM refused the rename. */
		if (r == -EINVAL || r == -ENOSYS || r == -EXDEV)
			r = -EOPNOTSUPP;
	}
	if (r < 0) {
		int removed = remove_made_at(p.stagefd, last, fd, 0);

		close(fd);
		/* Not removed: it stays hidden, in the staging directory. */
		fd = removed < 0 ? removed : r;
	}
	oc_stage_remove(parentfd, p.stagefd, p.stagename);
	return fd;
}

/*
 * Open what exists at path, by ocdir_openat2's rules, never creating
 * anything: -ENOENT when the name is gone again. With O_PATH allowed
 * (mkpath), an existing directory the caller may not read is opened
 * O_PATH, as oc_create_or_open_path() does.
 */
static int open_existing(int dirfd, const char *path, const struct oc_req *req)
{
	struct oc_req look = *req;
	int fd;

	look.no_create = 1;
	fd = oc_emulate(dirfd, path, &look, NULL);
	if (fd != -EACCES || !req->path_only)
		return fd;
	look.flags |= O_PATH;
	return oc_emulate(dirfd, path, &look, NULL);
}

/*
 * Create `path` with setup run on it before anyone else can use it, or
 * open what exists there. In a shared, non-sticky parent nothing is ever
 * made at the name: staged, or (EEXIST) the existing entry opened as it
 * is; a name that comes and goes gets another staged try, 8 in all, then
 * -EAGAIN. The parent's descriptor is taken before setup runs, so that
 * removing what a failed setup leaves needs no new one.
 */
int oc_create_setup(int dirfd, const char *path, const char *shown,
		    const struct oc_req *req, ocdir_setup_fn setup, void *arg,
		    int *created)
{
	char *parent = NULL, *last = NULL;
	int parentfd, fd, i, private, made = 0;
	struct stat st;

	if (!setup)
		return oc_create_or_open(dirfd, path, req, created);
	fd = oc_split_path(path, &parent, &last);
	if (fd)
		return fd;
	/* ".", "..", "/": nothing is made, nothing set up. */
	if (oc_is_dot_name(last)) {
		fd = oc_create_or_open_path(dirfd, path, req, &made);
		goto out;
	}
	parentfd = oc_scoped_open(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				  req->resolve);
	if (parentfd < 0) {
		fd = parentfd;
		goto out;
	}
	if (fstat(parentfd, &st) < 0) {
		fd = -errno;
		close(parentfd);
		goto out;
	}
	private = oc_parent_is_private(&st) && !req->always_stage;
	fd = -EAGAIN;
	for (i = 0; i < OC_RACE_RETRIES; i++) {
		if (private)
			fd = setup_in_place(parentfd, last, shown, req, 0, setup, arg);
		else
			fd = setup_staged(parentfd, last, shown, req, setup, arg);
		if (fd == -EOPNOTSUPP && !private && req->allow_weak && !req->always_stage)
			fd = setup_in_place(parentfd, last, shown, req, 1, setup, arg);
		if (fd >= 0) {
			made = 1;
			break;
		}
		if (fd != -EEXIST || (req->flags & O_EXCL))
			break;
		fd = open_existing(dirfd, path, req);
		if (fd != -ENOENT)
			break;
		fd = -EAGAIN;	/* gone again: stage again */
	}
	close(parentfd);
out:
	if (fd >= 0 && created)
		*created = made;
	free(parent);
	free(last);
	return fd;
}

OC_EXPORT int ocdir_openat2_setup(int dirfd, const char *path,
				  const struct ocdir_how *how, size_t size,
				  ocdir_setup_fn setup, void *arg, int *created)
{
	struct oc_req req;
	int r, made = 0;

	r = oc_check_how(path, how, size, OC_HOW_OPENAT2, &req);
	if (r)
		return oc_result(r);
	r = oc_create_setup(dirfd, path, path, &req, setup, arg, &made);
	if (r >= 0 && created)
		*created = made;
	return oc_result(oc_test_swap_after(dirfd, path, r));
}
