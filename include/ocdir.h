/* SPDX-License-Identifier: MIT */
/*
 * ocdir.h - create a directory and get a file descriptor to it, race-free.
 *
 * The one public header of libocdir. Every call looks like open(2): it
 * returns a file descriptor (or 0) on success and -1 with errno set on
 * failure. The semantics are those of docs/semantics.md: on a
 * kernel with the ocdir patches the library calls
 * open*(O_CREAT|O_DIRECTORY) directly ("native"); elsewhere it emulates the
 * same behaviour, with the same errno values, in userspace ("emulated").
 *
 * Returned descriptors are O_RDONLY|O_DIRECTORY and O_CLOEXEC unless the
 * caller asks otherwise (OCDIR_NO_CLOEXEC). They always refer to a
 * directory, never to anything else.
 *
 * Environment (read once, at the first call, with secure_getenv(3): a
 * setuid, setgid or file-capability program ignores all of them):
 *   OCDIR_FORCE_EMULATION=1  use the emulation even on a native kernel.
 *   OCDIR_FORCE_RESOLVER=1   do RESOLVE_* scoping with the userspace resolver
 *                            even where openat2(2) works (implies the
 *                            emulation for calls that ask for scoping).
 *   OCDIR_TEST_NO_NOREPLACE=1  (tests only) behave as if the filesystem
 *                            refused renameat2(RENAME_NOREPLACE).
 *
 * All functions are thread-safe.
 */
#ifndef OCDIR_H
#define OCDIR_H

/* The version of libocdir and of the ocdir command (ocdir.pc, the soname). */
#define OCDIR_VERSION_MAJOR	1
#define OCDIR_VERSION_MINOR	2
#define OCDIR_VERSION_PATCH	0
#define OCDIR_VERSION_STRING	"1.2.0"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scoping flags for ocdir_how.resolve (same values as RESOLVE_*) ---- */

/* Fail with EXDEV on crossing a mount point (bind mounts included). */
#define OCDIR_RESOLVE_NO_XDEV		0x01ULL
/* Fail with ELOOP on a "magic link" such as /proc/self/fd/N. */
#define OCDIR_RESOLVE_NO_MAGICLINKS	0x02ULL
/* Fail with ELOOP on any symlink in the path, trailing one included. */
#define OCDIR_RESOLVE_NO_SYMLINKS	0x04ULL
/* Stay below dirfd: absolute paths, symlinks and ".." that leave it: EXDEV. */
#define OCDIR_RESOLVE_BENEATH		0x08ULL
/* Treat dirfd as "/": ".." stops there, absolute symlinks start there. */
#define OCDIR_RESOLVE_IN_ROOT		0x10ULL

/* ---- library options for ocdir_how.options ---- */

/* Do not set O_CLOEXEC on the returned descriptor (it is set by default). */
#define OCDIR_NO_CLOEXEC		(1ULL << 0)
/*
 * Accepted for compatibility; no effect. Where the parent is private (see
 * OCDIR_ALLOW_WEAK_EMULATION) the emulation always creates in place now,
 * with the full guarantee.
 */
#define OCDIR_FAST_EMULATION		(1ULL << 1)
/*
 * Emulation only. The emulation creates a new directory in one of two ways,
 * both with the full guarantee (the descriptor is the directory this call
 * made, and "created" is never said of anything else):
 *   - in a private parent (owned by the caller's fsuid or root, and either
 *     writable by nobody else -- no group or other write bit; with an ACL
 *     those bits are its mask -- or sticky): mkdirat + openat(O_NOFOLLOW),
 *     since nobody else can move or replace the new entry there;
 *   - in any other parent: inside a private staging directory, then
 *     renamed onto the name with RENAME_NOREPLACE.
 * Where the staging design cannot run in a shared parent -- the filesystem
 * refuses RENAME_NOREPLACE (NFS, 9p, many FUSE servers), an LSM refuses the
 * rename (Landlock without LANDLOCK_ACCESS_FS_REFER), the staging
 * directory would lose the setgid bit the new directory must inherit,
 * the server keeps group or other permission bits on it that its mode did
 * not ask for (or adds them where no birth time proves whose they are),
 * or no birth time proves the staging directory new (NFSv3, 9p, most FUSE
 * servers; see docs/security.md) -- the call fails with EOPNOTSUPP and
 * creates nothing. With this option it falls
 * back to mkdirat + openat(O_NOFOLLOW) in the shared parent instead, which
 * gives up one guarantee: someone who can write to the parent can swap the
 * new name for another directory of the caller's between the two calls,
 * and the call then opens that one and reports it as created (it still
 * never returns anything but a directory the caller owns, never follows a
 * symlink, and never changes anything but that directory).
 */
#define OCDIR_ALLOW_WEAK_EMULATION	(1ULL << 2)
/*
 * ocdir_openat2_setup and ocdir_mkpath_setup only (no effect elsewhere):
 * make the new directory hidden and publish it finished even where the
 * parent is private, so that nobody, the parent's owner included, ever
 * sees it at its name before setup is done (for watchers of the parent,
 * or a directory that must appear complete). Costs a staging directory
 * and a rename; where the filesystem or an LSM refuses that rename the
 * call fails with EOPNOTSUPP. Since 1.2.0.
 */
#define OCDIR_ALWAYS_STAGE		(1ULL << 3)

/*
 * Arguments of the extended calls, laid out like struct open_how.
 *
 * flags:   open(2) flags. O_CREAT and O_DIRECTORY are implied. Accepted:
 *          O_RDONLY, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_CLOEXEC,
 *          O_NONBLOCK, O_NOCTTY, O_NOATIME, O_LARGEFILE, O_APPEND, O_DSYNC,
 *          O_SYNC, O_ASYNC. O_DIRECT gives EINVAL before the path is looked
 *          at (as the patched kernel: nothing is created, whether or not the
 *          name exists). O_WRONLY, O_RDWR, access mode 3 and O_TRUNC give
 *          ENOTDIR (a directory cannot be opened for writing); O_TMPFILE
 *          and O_PATH give EINVAL; any other bit gives EINVAL.
 * mode:    permission bits of a created directory; only 0777 and S_ISVTX are
 *          kept (setuid/setgid are dropped as mkdir(2) drops them), then the
 *          umask or the parent's default ACL applies. Bits outside 07777 give
 *          EINVAL (as openat2(2)).
 * resolve: OCDIR_RESOLVE_* flags; unknown bits or BENEATH together with
 *          IN_ROOT give EINVAL.
 * options: OCDIR_NO_CLOEXEC, OCDIR_FAST_EMULATION, OCDIR_ALLOW_WEAK_EMULATION,
 *          OCDIR_ALWAYS_STAGE;
 *          unknown bits give EINVAL.
 *
 * Pass sizeof(struct ocdir_how) as `size`; later versions only append fields
 * and accept an older, shorter size. A larger size than the library knows is
 * accepted when the unknown tail is all zero, otherwise E2BIG; a size above
 * 4096 (a page) is E2BIG without reading it, as openat2(2). All `size`
 * bytes at `how` must be readable memory.
 */
struct ocdir_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
	uint64_t options;
};
#define OCDIR_HOW_SIZE_VER0	32

/*
 * Common errors. Every call below can fail with these, in addition to the
 * ones listed at the call:
 *   EBADF         path is relative and dirfd is neither AT_FDCWD nor an open
 *                 descriptor.
 *   EFAULT        path (or another pointer argument that may not be NULL) is
 *                 NULL.
 *   ENOENT        path is empty, or a component before the last is missing.
 *   ENOTDIR       a component before the last is not a directory.
 *   EACCES        search permission denied on a component, write
 *                 permission denied on the directory that gets the new entry,
 *                 or read permission denied on an existing directory.
 *   EPERM         O_NOATIME on an existing directory the caller does not
 *                 own (without CAP_FOWNER), as open(2).
 *   ESTALE        (9p, FUSE) the server kept replacing the name while the
 *                 kernel looked it up twice.
 *   ELOOP         more than 40 symlinks, or a symlink/magic link forbidden by
 *                 OCDIR_RESOLVE_NO_SYMLINKS/OCDIR_RESOLVE_NO_MAGICLINKS.
 *   EXDEV         the path leaves dirfd under OCDIR_RESOLVE_BENEATH, crosses
 *                 a mount under OCDIR_RESOLVE_NO_XDEV, or meets a magic link
 *                 under BENEATH or IN_ROOT.
 *   ENAMETOOLONG  path or one of its components is too long.
 *   EMFILE ENFILE ENOMEM   out of descriptors or memory.
 *   ENOSPC EDQUOT EMLINK EROFS EPERM EIO   as from mkdir(2) when a
 *                 directory has to be created.
 *   EINTR         a system call of the call was interrupted by a signal
 *                 handler installed without SA_RESTART (only on filesystems
 *                 whose operations can be interrupted, e.g. FUSE, NFS).
 *                 Nothing is left behind; the call may be repeated.
 */

/* ---- create or open ---- */

/*
 * ocdir_openat - create the directory `path` (relative to dirfd) if it does
 * not exist, and open it; like openat(dirfd, path, flags|O_CREAT|O_DIRECTORY,
 * mode) on a kernel with the ocdir patches.
 *
 * flags: as ocdir_how.flags. O_CLOEXEC is always set (use ocdir_openat2 with
 * OCDIR_NO_CLOEXEC to opt out). mode: as ocdir_how.mode, except that bits
 * outside 07777 are ignored as open(2) ignores them.
 *
 * Behaviour (docs/semantics.md section 3): an absent name is created with
 * mkdir(2) semantics and opened; an existing directory is opened (O_EXCL:
 * EEXIST); trailing slashes are allowed; a final ".", ".." or "/" opens the
 * existing directory (O_EXCL: EEXIST); a trailing symlink to a directory is
 * followed unless O_NOFOLLOW or O_EXCL; a directory is never created
 * through a symlink.
 *
 * Returns a new descriptor, or -1 with errno:
 *   EEXIST   O_EXCL and the name exists (of any type, "." ".." "/" included);
 *            or the last component is a symlink whose target does not exist.
 *   ENOTDIR  the name exists and is not a directory (a symlink to a
 *            non-directory too); O_NOFOLLOW and the name is a symlink; write
 *            access or O_TRUNC requested (checked before the path is looked
 *            at).
 *   EACCES   the parent is sticky and world- or group-writable, and the
 *            existing directory belongs neither to the parent's owner nor to
 *            the caller (only when opening an existing directory); a
 *            trailing symlink refused by fs.protected_symlinks (checked
 *            before OCDIR_RESOLVE_NO_SYMLINKS, as the kernel does);
 *            (emulation only) the new directory would inherit the parent's
 *            setgid bit, the caller is neither in the parent's group nor
 *            privileged (CAP_FSETID), and the mode (after the umask) leaves
 *            the owner without read permission: opening it would need a
 *            chmod, which clears that bit for good. Nothing is created.
 *   EINVAL   O_TMPFILE, O_PATH, O_DIRECT or an unknown flag bit.
 *   EOPNOTSUPP  (emulation only) the name is absent, the parent is shared
 *            (see OCDIR_ALLOW_WEAK_EMULATION) and the race-free way of
 *            creating there cannot run: the filesystem refuses
 *            renameat2(RENAME_NOREPLACE) (NFS, 9p, many FUSE servers), an
 *            LSM refuses the rename (Landlock without
 *            LANDLOCK_ACCESS_FS_REFER), the staging directory would
 *            lose the setgid bit the new directory inherits, the server
 *            will not let it be private (group or other bits it added and
 *            keeps through a chmod), or the filesystem shows no birth time
 *            to prove the staging directory new. Nothing is created. Also where a directory's mode must be changed
 *            through an O_PATH descriptor and the kernel has neither
 *            fchmodat2(2) (6.6) nor a usable /proc.
 *   EAGAIN   (emulation only) a race was lost 8 times in a row: the name
 *            was created and removed by others faster than the call could
 *            open it, a trailing symlink kept appearing and disappearing,
 *            or someone kept removing or replacing the staging directory.
 *            (ENOENT is only ever a missing component before the last:
 *            a last component that others change is looked at again.)
 *   and the common errors above.
 * On failure nothing is left behind: no directory, no staging directory, no
 * descriptor. (Emulation only: if the process dies inside the call, an empty
 * hidden directory ".ocdir-stage.*" can remain next to the target.)
 *
 * The emulation never changes anything by name after it created it: modes
 * are changed through descriptors (fchmodat2(2) with AT_EMPTY_PATH where
 * the directory cannot be opened yet, else a verified /proc), and it
 * removes only what its name still shows to be the directory it made.
 */
int ocdir_openat(int dirfd, const char *path, int flags, mode_t mode);

/*
 * ocdir_openat2 - ocdir_openat with scoping and options, like openat2(2).
 *
 * how/size: see struct ocdir_how. created: if not NULL, set to 1 when this
 * call created the directory, 0 when it opened an existing one; it is only
 * written on success. The emulation says 1 only for the directory it made.
 * The native backend asks the kernel with fcntl(F_CREATED_QUERY) (Linux
 * 6.12); on kernels without it, it tries O_EXCL first, and a directory that
 * someone else removes and re-creates between the two tries is reported
 * as 0.
 *
 * Returns a new descriptor, or -1 with errno as ocdir_openat, and also:
 *   EINVAL   how->mode has bits outside 07777; unknown bits in how->resolve
 *            or how->options; BENEATH and IN_ROOT together; size smaller
 *            than OCDIR_HOW_SIZE_VER0.
 *   E2BIG    size larger than struct ocdir_how and the extra bytes not
 *            zero, or size larger than 4096.
 *   EFAULT   how is NULL.
 *   EXDEV, ELOOP   as in the common errors, for the scoping flags.
 *   EAGAIN   as ocdir_openat.
 * Nothing is left behind on failure, as for ocdir_openat.
 */
int ocdir_openat2(int dirfd, const char *path, const struct ocdir_how *how,
		  size_t size, int *created);

/*
 * ocdir_mkdirat - create the directory `path` if it does not exist, and
 * accept an existing one, by the rules of ocdir_openat2, for callers that
 * need no descriptor (the ocdir command without attributes): `mkdir -p`
 * for one level, without its "is it a directory?" race.
 *
 * Unscoped (how->resolve 0), a new directory is one mkdirat(2): nothing is
 * done to it afterwards, so there is no window to protect. An existing
 * name is then opened with ocdir_openat2's rules (it must be a directory;
 * a trailing symlink to one is followed unless O_NOFOLLOW; the sticky
 * rule) and closed again; as no descriptor is handed out, an existing
 * directory the caller may not read is accepted, as by mkdir. With
 * scoping, one ocdir_openat2 call.
 *
 * Returns 1 if this call created the directory, 0 if it existed, or -1
 * with errno as ocdir_openat2 (O_PATH is EINVAL), except: never EACCES for
 * an existing directory the caller may not read; EMFILE/ENFILE only for a
 * name that exists; EOPNOTSUPP, EAGAIN only with scoping or for a name
 * that existed; unscoped, a new directory gives the errors of mkdirat(2)
 * as they are (EEXIST only with O_EXCL). Since 1.2.0.
 */
int ocdir_mkdirat(int dirfd, const char *path, const struct ocdir_how *how,
		  size_t size);

/*
 * ocdir_mkpath - "mkdir -p" that returns a descriptor to the last directory.
 *
 * Walks path one component at a time, creating each missing directory and
 * opening it through its parent's descriptor (with RESOLVE_BENEATH or
 * RESOLVE_IN_ROOT each level is resolved from dirfd under the same scoping,
 * and path must be shorter than PATH_MAX; unscoped it may be longer, as
 * for mkdir -p; at most three descriptors of the call's own are open at
 * a time, whatever the depth, so a path of more levels than free
 * descriptors works). Intermediate directories are created with mode
 * 0777 minus the umask, plus u+wx (set through their descriptors, as mkdir -p does,
 * so that the walk can go on below them whatever the umask); the leaf gets
 * how->mode. how->flags apply to the leaf only (O_EXCL: the leaf must be
 * new; O_NOFOLLOW: the leaf may not be a symlink); symlinks
 * before the leaf are followed unless OCDIR_RESOLVE_NO_SYMLINKS. A symlink
 * to a missing target is never followed to create anything (EEXIST).
 * The sticky rule (EACCES, see ocdir_openat) applies at every existing
 * level, not only at the leaf: each is a level the call would have made
 * (a planted /tmp/x would otherwise hand mkpath("/tmp/x/s") a planted s).
 * Not to ".." levels nor to the starting directory.
 *
 * O_PATH in how->flags (since 1.2.0): the caller needs no readable
 * descriptor, as mkdir -p needs none: an existing leaf that the caller may
 * not read (0711 and someone else's; 0700 with only its parent
 * searchable) is accepted and returned as an O_PATH descriptor, good for
 * *at() calls, fstat and fchdir only. A leaf this call creates is
 * returned O_RDONLY. Without O_PATH such a leaf gives EACCES.
 *
 * leaf_created: if not NULL, set on success to 1 when the leaf was created
 * by this call, else 0.
 *
 * Returns a descriptor to the leaf, or -1 with errno as ocdir_openat2, and:
 *   ENOTDIR       an intermediate exists as a non-directory.
 *   EEXIST        a level is a dangling symlink; O_EXCL and the leaf exists.
 *   EACCES        the sticky rule at any level; an unreadable existing leaf
 *                 without O_PATH.
 *   ENAMETOOLONG  scoped and path of PATH_MAX bytes or more; a component
 *                 over NAME_MAX.
 * On failure the
 * directories this call created are removed again, deepest first, as long
 * as they are still empty and still at the name where they were made
 * (reached back up through "..", checked against the directory each was
 * made in).
 */
int ocdir_mkpath(int dirfd, const char *path, const struct ocdir_how *how,
		 size_t size, int *leaf_created);

/* ---- create, set up, then let others use it ---- */

/*
 * ocdir_setup_fn - what a caller does to a directory its call just made,
 * before anyone else can use it.
 *
 * With OCDIR_SETUP_LEAF in flags, fd is the directory the call was asked
 * for, new and empty, open O_RDONLY|O_DIRECTORY, mode how->mode & 0700
 * (after the umask), not yet usable by anyone else: set its owner, group,
 * xattrs, ACLs, security label and final mode through fd (fchown, fsetxattr,
 * fchmod, ...). Without it, fd is an intermediate directory that
 * ocdir_mkpath_setup made on the way (already at its name, mode as
 * ocdir_mkpath gives it): report it (as mkdir -v does) or set it up too.
 * path is the part of the caller's path that names the directory, for
 * messages. Return 0, or a negative errno value to fail the call: the
 * directory, anything setup put in it and (ocdir_mkpath_setup) the parents
 * the call made are removed again, and the call fails with that errno.
 * Never called for a directory that existed already.
 */
typedef int (*ocdir_setup_fn)(int fd, const char *path, unsigned int flags,
			      void *arg);
#define OCDIR_SETUP_LEAF	1u

/*
 * ocdir_openat2_setup - ocdir_openat2, and if the call creates the
 * directory, setup(fd, arg) runs on it before anyone else can use it: the
 * library form of "mkdir -m MODE -o OWNER" and "install -d".
 *
 * Where the parent is private (writable by nobody but the caller or root,
 * or sticky; see OCDIR_ALLOW_WEAK_EMULATION) the directory is made at its
 * name with mode how->mode & 0700, so only the caller can use it until
 * setup sets its final mode. In a shared parent it is made hidden, in a
 * private staging directory next to the name (as ocdir_prepare), set up
 * there and then renamed into place in one step (RENAME_NOREPLACE), so
 * nobody sees it before it is finished; nothing is ever made at the name
 * itself there before setup has run (natively too). A name that turns out
 * to exist is opened as it is, without creating anything (O_EXCL: EEXIST),
 * and not set up: compare with `created`; a name that keeps appearing and
 * disappearing gets another staged try, 8 in all, then EAGAIN.
 *
 * If setup fails, what the call made is removed through descriptors it
 * holds. setup may have given the directory away (owner, group, ACL,
 * mode), so it is first taken back (the caller's owner and group, no ACL,
 * mode 0700), then moved off its public name where it was made there
 * (into a new private staging directory, else a hidden random name), then
 * emptied through its descriptor (no symlink followed, no mount entered;
 * each subdirectory others could write taken back too) and removed by
 * name only once the name is shown to lead to that same inode. The
 * parent's descriptor is taken before setup runs.
 *
 * setup may be NULL (then this is ocdir_openat2); it is called once, with
 * OCDIR_SETUP_LEAF, if the call creates the directory (where the
 * publishing rename would be refused, that is known before setup runs). how, size,
 * created: as ocdir_openat2; `created` is 1 exactly when setup ran and
 * succeeded.
 *
 * Returns a new descriptor, or -1 with errno as ocdir_openat2, and also:
 *   (any)       the negative value setup returned (-1 to -4095), as a
 *               positive errno; what the call made is removed.
 *   (removal)   setup failed and what it made could not be removed
 *               (ENOTEMPTY, EBUSY, EACCES, ...: a mount point, an
 *               immutable file; EPERM: setup gave the directory away and
 *               another user's directory is inside, which is neither
 *               changed nor emptied): this error instead of setup's. The
 *               directory then stays, emptied as far as the caller may,
 *               under a hidden ".ocdir-stage.*" name in the parent, never
 *               at its name. ESTALE: (the weak way, in a shared parent)
 *               someone moved it to another name before it could be
 *               moved off its own; it stays there, emptied, 0700.
 *   EIO         setup returned a value below -4095.
 *   EEXIST      O_EXCL and the name exists (nothing set up).
 *   EOPNOTSUPP  the parent is shared and the filesystem or an LSM refuses
 *               the rename that publishes (NFS, 9p, many FUSE servers;
 *               Landlock without REFER), natively too; with
 *               OCDIR_ALLOW_WEAK_EMULATION the directory is made at its
 *               name instead, owner-only until setup is done.
 *   EAGAIN      (natively too) in a shared parent the name kept
 *               appearing and disappearing (8 staged tries), or someone
 *               kept removing or replacing the staging directory. Then,
 *               and only then, one empty 0700 directory of the caller's
 *               (".ocdir-stage.*") may remain in the shared parent, where
 *               whoever raced the call moved it.
 *   (rename)    the other errors of renameat2(2) from the publishing
 *               rename (EACCES, ENOSPC, EMLINK, EDQUOT, ...).
 * Otherwise nothing is left behind on failure. Since 1.2.0.
 */
int ocdir_openat2_setup(int dirfd, const char *path, const struct ocdir_how *how,
			size_t size, ocdir_setup_fn setup, void *arg,
			int *created);

/*
 * ocdir_mkpath_setup - ocdir_mkpath, with the leaf made as by
 * ocdir_openat2_setup: "mkdir -p -m MODE" and "install -d -m MODE -o
 * OWNER". setup runs with OCDIR_SETUP_LEAF on the leaf, if this call
 * creates it, and without it on each intermediate directory the call
 * makes, top down, after it got 0777 minus the umask, plus u+wx (as
 * ocdir_mkpath). If the leaf or setup fails, the intermediate directories
 * this call made are removed again (deepest first, only while empty and
 * still at their names). leaf_created: 1 exactly when setup ran and
 * succeeded. O_PATH in how->flags as for ocdir_mkpath (setup always gets
 * a readable descriptor).
 *
 * Returns a descriptor to the leaf, or -1 with errno as ocdir_mkpath and
 * ocdir_openat2_setup. Since 1.2.0.
 */
int ocdir_mkpath_setup(int dirfd, const char *path, const struct ocdir_how *how,
		       size_t size, ocdir_setup_fn setup, void *arg,
		       int *leaf_created);

/* ---- prepare, then publish ---- */

/* A hidden new directory waiting to be published or discarded. */
struct ocdir_prepared;

/*
 * ocdir_prepare - make a new, empty directory that nobody else can see yet,
 * destined for `path`, and return a descriptor to it.
 *
 * The directory is created with how->mode inside a private 0700 staging
 * directory next to the destination (same filesystem, so it inherits the
 * parent's setgid group and default ACLs). Set owner, mode, xattrs, ACLs
 * and contents through the returned descriptor, then call ocdir_publish()
 * or ocdir_discard() exactly once with *prepared. The descriptor stays
 * valid and stays the caller's to close in every case.
 *
 * how->flags may contain only O_EXCL (ignored: publishing is always
 * exclusive), O_CLOEXEC, O_DIRECTORY, O_CREAT, O_NOATIME, O_NONBLOCK and
 * O_LARGEFILE; how->resolve scopes the lookup of the destination's parent.
 * The final component must be a plain name (not ".", ".." or "/": EEXIST).
 *
 * Returns a descriptor and sets *prepared, or returns -1 with errno:
 *   EEXIST   the destination name exists already (checked now and again at
 *            publish time), or the final component is ".", ".." or "/".
 *   EOPNOTSUPP  the staging directory would lose the parent's setgid bit
 *            (see ocdir_openat); the filesystem shows no birth time to
 *            prove the staging directory new (NFSv3, 9p, most FUSE
 *            servers); or no fchmodat2(2) and no usable /proc.
 *   EAGAIN   someone kept replacing the staging directory.
 *   EINVAL   as ocdir_openat2; also how->flags outside the set above.
 *   E2BIG    as ocdir_openat2.
 *   ENOTDIR  write access or O_TRUNC (checked first, as for every call).
 *   EFAULT   prepared, how or path is NULL.
 *   and the common errors above.
 * On failure nothing is left behind and *prepared is not touched.
 */
int ocdir_prepare(int dirfd, const char *path, const struct ocdir_how *how,
		  size_t size, struct ocdir_prepared **prepared);

/*
 * ocdir_publish - move a prepared directory to its destination name, in one
 * step (renameat2 RENAME_NOREPLACE), and remove the staging directory.
 *
 * A call that takes a handle (publish, discard) frees it exactly when it
 * returns 0; after -1 the handle is valid and the call may be repeated.
 *
 * Returns 0 and frees `prepared` once the directory is at its name. The
 * empty staging directory is removed then: errno is 0 if it was, else
 * it says why that empty 0700 directory of the caller's stays (ENOENT:
 * moved out of the parent by someone else; the rmdir(2) error, e.g.
 * EACCES: left in the parent). Or returns -1 with errno and leaves
 * `prepared` valid (the caller may retry later or call ocdir_discard):
 *   EEXIST   something now exists at the destination name.
 *   EINVAL   the filesystem does not support RENAME_NOREPLACE (no
 *            non-atomic fallback is attempted).
 *   ENOENT   the staged directory was removed or renamed by someone else
 *            (possible only for root or the owner).
 *   EFAULT   prepared is NULL.
 *   EMFILE, ENFILE  no descriptor for a look at the staged directory.
 *   and the errors of rename(2).
 */
int ocdir_publish(struct ocdir_prepared *prepared);

/*
 * ocdir_discard - remove a prepared directory, its contents (without
 * following symlinks, without crossing mounts) and its staging directory,
 * and free `prepared`.
 *
 * The removal is iterative and holds at most three descriptors of its own,
 * whatever the depth of the tree.
 *
 * Returns 0 and frees `prepared` once nothing of the prepared tree is
 * left. errno is then 0 if the empty staging directory was removed too;
 * otherwise it says why that directory (empty, 0700, the caller's; the
 * one thing that can remain) stays: ENOENT, someone who can write the
 * parent moved it out (moved to another name in the parent, it is found
 * by its inode and removed); the error of rmdir(2), e.g. EACCES when the
 * parent's owner took away write permission. Nothing is to be retried
 * then: `prepared` is gone.
 *
 * Or returns -1 with errno, `prepared` still valid and the call
 * repeatable (what was removed stays removed):
 *   EBUSY, EMFILE, EACCES, ... (the errors of unlinkat(2), openat(2) and
 *            getdents(2); EBUSY for a mount point inside): something in the
 *            prepared tree could not be removed; repeat the call (after
 *            closing descriptors, say).
 *   ESTALE   a directory of the tree was moved while it was being removed.
 * A prepared directory that root or the caller removed or moved out of
 * the staging directory counts as gone. A NULL prepared returns 0.
 */
int ocdir_discard(struct ocdir_prepared *prepared);

/* ---- which backend ---- */

enum ocdir_backend {
	OCDIR_BACKEND_NATIVE = 1,	/* kernel creates with O_CREAT|O_DIRECTORY */
	OCDIR_BACKEND_EMULATED = 2,	/* mkdir + open, emulated race-free */
};

/*
 * ocdir_backend - which backend this process uses, and why.
 *
 * The answer comes from a probe run once per process (thread-safe; every
 * caller sees the same result): openat(AT_FDCWD, "/",
 * O_CREAT|O_DIRECTORY|O_RDONLY|O_CLOEXEC, 0). It never creates anything on
 * any kernel, since the target exists: a patched kernel returns a
 * descriptor, stock 6.4 and later return EINVAL, older kernels EISDIR.
 * OCDIR_FORCE_EMULATION=1 skips the probe.
 *
 * reason: if not NULL, set to a static, human-readable sentence saying why
 * (e.g. "probe: EINVAL (stock kernel 6.4 or later)").
 *
 * Returns OCDIR_BACKEND_NATIVE or OCDIR_BACKEND_EMULATED. Never fails.
 * Scoping (openat2 or the userspace resolver) is decided per call and is not
 * part of this answer: see docs/library.md.
 */
int ocdir_backend(const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* OCDIR_H */
