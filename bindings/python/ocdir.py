# SPDX-License-Identifier: MIT
"""ocdir - create a directory and get a file descriptor to it, race-free.

A thin ctypes layer over libocdir (include/ocdir.h documents every call,
docs/semantics.md the behaviour). Calls look like os.open(): they take a
path, an optional dir_fd and keyword options, return descriptors, and
raise OSError with the library's errno and the path on failure.

    import os, ocdir
    fd, created = ocdir.open_dir("/srv/app/cache", 0o750)
    if created:
        os.fchown(fd, 1000, 1000)   # the directory this call made, not a name
    os.close(fd)

The library is loaded from $OCDIR_LIBRARY if set (a path to libocdir.so.1;
for tests of an uninstalled build), else as "libocdir.so.1" through the
dynamic linker's search path.
"""

import ctypes
import os

__all__ = [
    "open_dir", "mkpath", "mkdir", "prepare", "Prepared", "backend",
    "RESOLVE_NO_XDEV", "RESOLVE_NO_MAGICLINKS", "RESOLVE_NO_SYMLINKS",
    "RESOLVE_BENEATH", "RESOLVE_IN_ROOT", "NO_CLOEXEC", "ALLOW_WEAK_EMULATION",
    "ALWAYS_STAGE", "AT_FDCWD",
]

# include/ocdir.h
RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
RESOLVE_IN_ROOT = 0x10
NO_CLOEXEC = 1 << 0
ALLOW_WEAK_EMULATION = 1 << 2
ALWAYS_STAGE = 1 << 3
BACKEND_NATIVE = 1
BACKEND_EMULATED = 2
AT_FDCWD = -100


class _How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64), ("options", ctypes.c_uint64)]


def _load():
    lib = ctypes.CDLL(os.environ.get("OCDIR_LIBRARY") or "libocdir.so.1",
                      use_errno=True)
    c_int, c_char_p, c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
    how_p, size_t = ctypes.POINTER(_How), ctypes.c_size_t
    int_p = ctypes.POINTER(c_int)
    for name, args in (
            ("ocdir_openat2", [c_int, c_char_p, how_p, size_t, int_p]),
            ("ocdir_mkpath", [c_int, c_char_p, how_p, size_t, int_p]),
            ("ocdir_mkdirat", [c_int, c_char_p, how_p, size_t]),
            ("ocdir_prepare", [c_int, c_char_p, how_p, size_t,
                               ctypes.POINTER(c_void_p)]),
            ("ocdir_publish", [c_void_p]),
            ("ocdir_discard", [c_void_p]),
            ("ocdir_backend", [ctypes.POINTER(c_char_p)])):
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = c_int
    return lib


_lib = _load()


def _how(mode, exclusive, resolve, flags, options, follow_symlinks=True):
    if exclusive:
        flags |= os.O_EXCL
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    return _How(flags & 0xFFFFFFFFFFFFFFFF, mode, resolve, options)


def _dirfd(dir_fd):
    return AT_FDCWD if dir_fd is None else dir_fd


def _error(path):
    err = ctypes.get_errno()
    return OSError(err, os.strerror(err), path)


def _fd_call(fn, path, dir_fd, how):
    """(fd, created) from ocdir_openat2 or ocdir_mkpath, or OSError."""
    created = ctypes.c_int(0)
    fd = fn(_dirfd(dir_fd), os.fsencode(path), ctypes.byref(how),
            ctypes.sizeof(how), ctypes.byref(created))
    if fd < 0:
        raise _error(path)
    return fd, bool(created.value)


def open_dir(path, mode=0o777, *, dir_fd=None, exclusive=False, resolve=0,
             follow_symlinks=True, flags=0, options=0):
    """Create the directory path if it is absent, and open it.

    Like os.open(path, O_CREAT|O_DIRECTORY, mode, dir_fd=dir_fd) on a
    kernel with the ocdir patches (ocdir_openat2). exclusive: the
    directory must be new (O_EXCL: EEXIST otherwise). resolve: RESOLVE_*
    scoping, as openat2(2). follow_symlinks=False: a trailing symlink is
    ENOTDIR (O_NOFOLLOW). flags: further open(2) flags; options: NO_CLOEXEC,
    ALLOW_WEAK_EMULATION, ALWAYS_STAGE. mode: permission bits (07777; the
    umask applies).

    Returns (fd, created): an O_RDONLY|O_DIRECTORY descriptor, not
    inheritable unless NO_CLOEXEC, and True if this call created the
    directory. Raises OSError with the library's errno and path.
    """
    return _fd_call(_lib.ocdir_openat2, path, dir_fd,
                    _how(mode, exclusive, resolve, flags, options, follow_symlinks))


def mkpath(path, mode=0o777, *, dir_fd=None, exclusive=False, resolve=0,
           follow_symlinks=True, flags=0, options=0):
    """mkdir -p that returns a descriptor to the last directory.

    Each missing level is created and opened through its parent's
    descriptor (ocdir_mkpath); levels before the leaf get 0777 minus the
    umask, plus u+wx; the leaf gets mode. exclusive and follow_symlinks
    apply to the leaf. On failure the levels this call made are removed
    again. Returns (fd, leaf_created); raises OSError.
    """
    return _fd_call(_lib.ocdir_mkpath, path, dir_fd,
                    _how(mode, exclusive, resolve, flags, options, follow_symlinks))


def mkdir(path, mode=0o777, *, dir_fd=None, resolve=0, follow_symlinks=True):
    """Make sure path is a directory, without a descriptor (ocdir_mkdirat).

    Returns True if this call created it, False if a directory was there;
    raises OSError (ENOTDIR: something else has the name).
    """
    how = _how(mode, False, resolve, 0, 0, follow_symlinks)
    r = _lib.ocdir_mkdirat(_dirfd(dir_fd), os.fsencode(path), ctypes.byref(how),
                           ctypes.sizeof(how))
    if r < 0:
        raise _error(path)
    return r == 1


class Prepared:
    """A new directory nobody else can see yet (ocdir_prepare).

    fd is its descriptor: set owner, mode, xattrs and contents through it,
    then publish() puts it at its name in one rename (RENAME_NOREPLACE)
    or discard() removes it with everything in it. As a context manager
    it publishes when the block ends normally and discards when the block
    raises; either way it closes fd at the end. Use os.dup(fd) to keep a
    descriptor beyond the block.
    """

    def __init__(self, handle, fd, path):
        self._handle = handle
        self.fd = fd
        self.path = path

    def publish(self):
        """Publish; OSError (EEXIST: the name was taken meanwhile) leaves it
        prepared: publish again or discard()."""
        if self._handle is None:
            raise ValueError("already published or discarded")
        if _lib.ocdir_publish(self._handle) < 0:
            raise _error(self.path)
        self._handle = None

    def discard(self):
        """Remove the prepared directory and what was put into it. OSError
        leaves it prepared (the library keeps the handle valid after any
        failure): discard again later."""
        if self._handle is None:
            return
        if _lib.ocdir_discard(self._handle) < 0:
            raise _error(self.path)
        self._handle = None

    def close(self):
        """Close fd (the directory stays prepared, published or not)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if self._handle is not None:
                if exc_type is None:
                    try:
                        self.publish()
                    except BaseException:
                        self.discard()
                        raise
                else:
                    self.discard()
        finally:
            self.close()
        return False


def prepare(path, mode=0o777, *, dir_fd=None, resolve=0, flags=0, options=0):
    """A new, still invisible directory destined for path: a Prepared.

        with ocdir.prepare("/srv/releases/v42", 0o755) as p:
            os.fchown(p.fd, uid, gid)   # nobody sees it before this is done
        # published here (EEXIST if the name was taken: then discarded)
    """
    how = _How(flags, mode, resolve, options)
    handle = ctypes.c_void_p()
    fd = _lib.ocdir_prepare(_dirfd(dir_fd), os.fsencode(path), ctypes.byref(how),
                            ctypes.sizeof(how), ctypes.byref(handle))
    if fd < 0:
        raise _error(path)
    return Prepared(handle, fd, path)


def backend():
    """("native" or "emulated", the reason) for this process (ocdir_backend)."""
    reason = ctypes.c_char_p()
    b = _lib.ocdir_backend(ctypes.byref(reason))
    name = "native" if b == BACKEND_NATIVE else "emulated"
    return name, (reason.value or b"").decode()
