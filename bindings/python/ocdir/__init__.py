# SPDX-License-Identifier: MIT
"""ocdir - create a directory and get a file descriptor to it, race-free.

A thin ctypes layer over libocdir (include/ocdir.h documents every call,
docs/semantics.md the behaviour). Calls look like os.open(): they take a
path, an optional dir_fd and keyword options, return descriptors, and
raise OSError with the library's errno and the path on failure.

    import os, ocdir
    with ocdir.open_dir("/srv/app/cache", 0o750) as d:
        if d.created:
            os.fchown(d.fd, 1000, 1000)  # the directory this call made

The library is loaded from $OCDIR_LIBRARY if set (a path to libocdir.so.1;
for tests of an uninstalled build), else as "libocdir.so.1" through the
dynamic linker's search path; library_path() says which file was loaded.
Without the library, `import ocdir` raises ImportError.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import itertools
import operator
import os
import sys
import threading
import warnings
from typing import Callable, Dict, NamedTuple, Optional, Tuple, Union

# The library's version (include/ocdir.h, OCDIR_VERSION_STRING); pyproject.toml
# reads it from here and tests/suites/45-bindings checks that both agree.
__version__ = "1.2.0"

__all__ = [
    "open_dir", "mkpath", "mkdir", "prepare", "Prepared", "OpenedDir",
    "backend", "library_path", "SetupFn",
    "RESOLVE_NO_XDEV", "RESOLVE_NO_MAGICLINKS", "RESOLVE_NO_SYMLINKS",
    "RESOLVE_BENEATH", "RESOLVE_IN_ROOT", "NO_CLOEXEC", "FAST_EMULATION",
    "ALLOW_WEAK_EMULATION", "ALWAYS_STAGE", "AT_FDCWD",
]

# include/ocdir.h
RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
RESOLVE_IN_ROOT = 0x10
NO_CLOEXEC = 1 << 0
FAST_EMULATION = 1 << 1
ALLOW_WEAK_EMULATION = 1 << 2
ALWAYS_STAGE = 1 << 3
BACKEND_NATIVE = 1
BACKEND_EMULATED = 2
SETUP_LEAF = 1
AT_FDCWD = -100

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: A setup callable: (fd, path, leaf) -> None; raise OSError to fail the call.
#: fd is a duplicate of the library's descriptor, closed when it returns.
SetupFn = Callable[[int, str, bool], None]

_LIBRARY = "libocdir.so.1"


class _How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64), ("options", ctypes.c_uint64)]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


# int setup(int fd, const char *path, unsigned int flags, void *arg)
_SETUP_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                             ctypes.c_uint, ctypes.c_void_p)


def _load() -> Tuple[ctypes.CDLL, str]:
    name = os.environ.get("OCDIR_LIBRARY") or _LIBRARY
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as e:
        raise ImportError(
            "ocdir: cannot load the C library %s (%s). Install libocdir "
            "(it provides %s; `make install` in the ocdir source tree), or "
            "set OCDIR_LIBRARY to the path of a libocdir.so.1"
            % (name, e, _LIBRARY), name="ocdir") from e
    c_int, c_char_p, c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
    how_p, size_t = ctypes.POINTER(_How), ctypes.c_size_t
    int_p = ctypes.POINTER(c_int)
    for fname, args in (
            ("ocdir_openat2", [c_int, c_char_p, how_p, size_t, int_p]),
            ("ocdir_openat2_setup", [c_int, c_char_p, how_p, size_t,
                                     _SETUP_FN, c_void_p, int_p]),
            ("ocdir_mkpath", [c_int, c_char_p, how_p, size_t, int_p]),
            ("ocdir_mkpath_setup", [c_int, c_char_p, how_p, size_t,
                                    _SETUP_FN, c_void_p, int_p]),
            ("ocdir_mkdirat", [c_int, c_char_p, how_p, size_t]),
            ("ocdir_prepare", [c_int, c_char_p, how_p, size_t,
                               ctypes.POINTER(c_void_p)]),
            ("ocdir_publish", [c_void_p]),
            ("ocdir_discard", [c_void_p]),
            ("ocdir_backend", [ctypes.POINTER(c_char_p)])):
        try:
            fn = getattr(lib, fname)
        except AttributeError as e:
            raise ImportError(
                "ocdir: %s has no %s: this binding needs libocdir %s or later"
                % (name, fname, __version__), name="ocdir") from e
        fn.argtypes = args
        fn.restype = c_int
    # Which file the dynamic linker loaded (dladdr of one of its symbols).
    where = name
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [c_void_p, ctypes.POINTER(_DlInfo)]
        info = _DlInfo()
        if dladdr(ctypes.cast(lib.ocdir_backend, c_void_p), ctypes.byref(info)) \
                and info.dli_fname:
            where = os.fsdecode(info.dli_fname)
    except (AttributeError, OSError):
        pass
    return lib, os.path.abspath(where) if os.sep in where else where


_lib, _lib_path = _load()


def library_path() -> str:
    """The file of libocdir this process loaded (an absolute path).

    $OCDIR_LIBRARY if that was set, else what the dynamic linker found for
    "libocdir.so.1": compare it with the build you meant to use, since an
    installed copy in the linker's path wins over an uninstalled build."""
    return _lib_path


class OpenedDir(NamedTuple):
    """What open_dir() and mkpath() return: a tuple (fd, created).

    fd is a new O_RDONLY|O_DIRECTORY descriptor (close-on-exec unless
    NO_CLOEXEC), yours to close; created is True when this call made the
    directory. Unpack it as (fd, created), or use it as a context manager
    that closes fd at the end of the block (do not close fd yourself then;
    os.dup(fd) keeps one beyond the block)."""
    fd: int
    created: bool

    def close(self) -> None:
        """os.close(fd)."""
        os.close(self.fd)

    def __enter__(self) -> "OpenedDir":
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def _path(path: StrPath) -> bytes:
    """path as bytes for C; a NUL inside it is ValueError, as in os."""
    b = os.fsencode(path)
    if b"\0" in b:
        raise ValueError("embedded null byte in path %r" % (path,))
    return b


def _dirfd(dir_fd: Optional[int]) -> int:
    if dir_fd is None:
        return AT_FDCWD
    fd = operator.index(dir_fd)
    if not -(1 << 31) <= fd < (1 << 31):
        raise OverflowError("dir_fd %d does not fit a C int" % fd)
    return fd


def _u64(what: str, value: int) -> int:
    v = operator.index(value)
    if not 0 <= v < (1 << 64):
        raise OverflowError("%s %d is outside 0..2**64-1" % (what, v))
    return v


def _how(call: str, flags: int, mode: int, resolve: int, options: int,
         exclusive: bool = False, follow_symlinks: bool = True) -> _How:
    """struct ocdir_how for `call` (named in the messages of bad values)."""
    f = _u64(call + ": flags", flags)
    if exclusive:
        f |= os.O_EXCL
    if not follow_symlinks:
        f |= os.O_NOFOLLOW
    return _How(f, _u64(call + ": mode", mode), _u64(call + ": resolve", resolve),
                _u64(call + ": options", options))


def _error(err: int, path: object) -> OSError:
    return OSError(err, os.strerror(err), path)


def _retry(call: Callable[[], int],
           run: Optional["_SetupRun"] = None) -> Tuple[int, int]:
    """(result, errno) of call, repeated while it fails with EINTR (PEP 475).

    ctypes runs the C call without the GIL; between two tries the
    interpreter runs any pending signal handlers (the loop is Python code),
    and an exception a handler raises ends the loop and propagates. Not
    repeated when the EINTR came from a setup callable of the caller's."""
    while True:
        ctypes.set_errno(0)
        r = call()
        err = ctypes.get_errno()
        if r >= 0 or err != _errno.EINTR or (run is not None and run.error is not None):
            return r, err


# ---- setup callables: one C trampoline, the Python callable found by arg ----

class _SetupRun:
    __slots__ = ("fn", "error", "escaped")

    def __init__(self, fn: SetupFn) -> None:
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.escaped = False  # an exception left the callback (see _unraisable)


_setup_runs: Dict[int, _SetupRun] = {}
_setup_keys = itertools.count(1)
# This thread's _SetupRuns whose C call is under way, innermost last.
_setup_calls = threading.local()


def _setup_trampoline(fd: int, path: Optional[bytes], flags: int,
                      arg: Optional[int]) -> int:
    # Everything in one try: an exception leaving a ctypes callback is only
    # printed, and C gets an undefined int, which the library takes for
    # success when it is not negative. A signal handler's exception
    # (KeyboardInterrupt) is raised at any call in here.
    run = None
    try:
        run = _setup_runs.get(arg or 0)
        if run is None:
            return -_errno.EINVAL
        # The callable gets a duplicate: an int is easily closed, and the
        # library goes on using its own number after setup returns (its
        # clean-up after a failure takes back, empties and removes what
        # the number names): closed and reused by an os.open, that would
        # be another directory of the caller's.
        dup = os.dup(fd)
        try:
            run.fn(dup, os.fsdecode(path or b""), bool(flags & SETUP_LEAF))
        finally:
            _close_dup(dup, fd)
        return 0
    except BaseException as e:  # noqa: B902 -- re-raised after the C call
        if run is None:
            run = _current_run()
            if run is None:
                return -_errno.ECANCELED
        if run.error is None:
            run.error = e
        if isinstance(e, OSError) and isinstance(e.errno, int) and 0 < e.errno < 4096:
            return -e.errno
        return -_errno.ECANCELED


def _close_dup(dup: int, fd: int) -> None:
    """Close the callable's duplicate of fd, unless it closed that itself
    (then the number may name something else by now: left alone)."""
    try:
        a, b = os.fstat(dup), os.fstat(fd)
    except OSError:
        return
    if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
        os.close(dup)


def _current_run() -> Optional[_SetupRun]:
    runs = getattr(_setup_calls, "runs", None)
    return runs[-1] if runs else None


_setup_c = _SETUP_FN(_setup_trampoline)


def _unraisable(u: "sys.UnraisableHookArgs") -> None:
    """sys.unraisablehook, chained: a signal handler's exception raised as
    the trampoline is entered (before its try) leaves the callback; it is
    kept for the caller instead of printed, and the call is marked."""
    run = _current_run() if u.object is _setup_trampoline else None
    if run is None or u.exc_value is None:
        _unraisable_next(u)
        return
    run.escaped = True
    if run.error is None:
        run.error = u.exc_value


_unraisable_next = sys.unraisablehook
sys.unraisablehook = _unraisable


def _with_setup(setup: SetupFn, path: StrPath,
                call: Callable[[int], int]) -> Tuple[int, int]:
    """Run call(key) (a C call taking _setup_c and key as arg) with setup
    registered under key; returns (fd, errno) or raises what setup raised.

    setup raising OSError with an errno fails the C call with that errno
    (OSError with the library's errno and path is raised, the callable's
    exception as its __cause__); any other exception fails it with
    ECANCELED and is re-raised here once the library has cleaned up."""
    if not callable(setup):
        raise TypeError("setup must be callable, not %s" % type(setup).__name__)
    run = _SetupRun(setup)
    key = next(_setup_keys)
    _setup_runs[key] = run
    runs = _setup_calls.__dict__.setdefault("runs", [])
    runs.append(run)
    try:
        r, err = _retry(lambda: call(key), run)
    finally:
        runs.pop()
        del _setup_runs[key]
    e = run.error
    if e is None:
        return r, err
    if run.escaped:
        if r >= 0:
            os.close(r)
        e.add_note("ocdir: this exception left the setup callback as it was "
                   "entered, before setup ran; the library %s"
                   % ("took that for success: what the call made stays, "
                      "not set up" if r >= 0 else
                      "failed with %s" % _errno.errorcode.get(err, err)))
        raise e
    if r >= 0:  # the library ignored a failed setup: never hand that out
        os.close(r)
        err = _errno.EIO
    if isinstance(e, OSError) and isinstance(e.errno, int) and 0 < e.errno < 4096:
        raise _error(err, path) from e
    if err != _errno.ECANCELED:
        e.add_note("ocdir: the call failed with %s (%s) instead of ECANCELED: "
                   "what it made could not be removed"
                   % (_errno.errorcode.get(err, err), os.strerror(err)))
    raise e


# ---- the calls ----

def open_dir(path: StrPath, mode: int = 0o777, *, dir_fd: Optional[int] = None,
             exclusive: bool = False, resolve: int = 0,
             follow_symlinks: bool = True, flags: int = 0, options: int = 0,
             setup: Optional[SetupFn] = None) -> OpenedDir:
    """Create the directory path if it is absent, and open it.

    Like os.open(path, O_CREAT|O_DIRECTORY, mode, dir_fd=dir_fd) on a
    kernel with the ocdir patches (ocdir_openat2). exclusive: the
    directory must be new (O_EXCL: EEXIST otherwise). resolve: RESOLVE_*
    scoping, as openat2(2). follow_symlinks=False: a trailing symlink is
    ENOTDIR (O_NOFOLLOW). flags: further open(2) flags; options: NO_CLOEXEC,
    ALLOW_WEAK_EMULATION, ALWAYS_STAGE. mode: permission bits (07777; the
    umask applies).

    setup(fd, path, leaf): run on the new directory before anyone else can
    use it, only if this call creates it (ocdir_openat2_setup): set owner,
    mode, xattrs through fd. Raise OSError to fail the call with its errno
    (what the call made is removed); any other exception fails the call too
    and is re-raised.

    Returns OpenedDir(fd, created). Raises OSError with the library's
    errno and path; ValueError for a path with a NUL byte.
    """
    bpath, dfd, created = _path(path), _dirfd(dir_fd), ctypes.c_int(0)
    if setup is None:
        how = _how("ocdir_openat2", flags, mode, resolve, options, exclusive, follow_symlinks)
        r, err = _retry(lambda: _lib.ocdir_openat2(dfd, bpath, ctypes.byref(how), ctypes.sizeof(how), ctypes.byref(created)))
    else:
        how = _how("ocdir_openat2_setup", flags, mode, resolve, options, exclusive, follow_symlinks)
        r, err = _with_setup(setup, path, lambda key: _lib.ocdir_openat2_setup(
            dfd, bpath, ctypes.byref(how), ctypes.sizeof(how), _setup_c, key, ctypes.byref(created)))
    if r < 0:
        raise _error(err, path)
    return OpenedDir(r, bool(created.value))


def mkpath(path: StrPath, mode: int = 0o777, *, dir_fd: Optional[int] = None,
           exclusive: bool = False, resolve: int = 0,
           follow_symlinks: bool = True, flags: int = 0, options: int = 0,
           setup: Optional[SetupFn] = None) -> OpenedDir:
    """mkdir -p that returns a descriptor to the last directory.

    Each missing level is created and opened through its parent's
    descriptor (ocdir_mkpath); levels before the leaf get 0777 minus the
    umask, plus u+wx; the leaf gets mode. exclusive and follow_symlinks
    apply to the leaf. On failure the levels this call made are removed
    again. setup(fd, path, leaf) (ocdir_mkpath_setup) runs on each level
    this call makes, top down, leaf=False for those before the leaf, as
    for open_dir(). Returns OpenedDir(fd, created) (created: the leaf is
    new); raises OSError, ValueError as open_dir().
    """
    bpath, dfd, leaf_created = _path(path), _dirfd(dir_fd), ctypes.c_int(0)
    if setup is None:
        how = _how("ocdir_mkpath", flags, mode, resolve, options, exclusive, follow_symlinks)
        r, err = _retry(lambda: _lib.ocdir_mkpath(dfd, bpath, ctypes.byref(how), ctypes.sizeof(how), ctypes.byref(leaf_created)))
    else:
        how = _how("ocdir_mkpath_setup", flags, mode, resolve, options, exclusive, follow_symlinks)
        r, err = _with_setup(setup, path, lambda key: _lib.ocdir_mkpath_setup(
            dfd, bpath, ctypes.byref(how), ctypes.sizeof(how), _setup_c, key, ctypes.byref(leaf_created)))
    if r < 0:
        raise _error(err, path)
    return OpenedDir(r, bool(leaf_created.value))


def mkdir(path: StrPath, mode: int = 0o777, *, dir_fd: Optional[int] = None,
          exclusive: bool = False, resolve: int = 0, follow_symlinks: bool = True,
          flags: int = 0, options: int = 0) -> bool:
    """Make sure path is a directory, without a descriptor (ocdir_mkdirat).

    Returns True if this call created it, False if a directory was there;
    raises OSError (ENOTDIR: something else has the name; EEXIST with
    exclusive), ValueError as open_dir().
    """
    bpath, dfd = _path(path), _dirfd(dir_fd)
    how = _how("ocdir_mkdirat", flags, mode, resolve, options, exclusive, follow_symlinks)
    r, err = _retry(lambda: _lib.ocdir_mkdirat(dfd, bpath, ctypes.byref(how), ctypes.sizeof(how)))
    if r < 0:
        raise _error(err, path)
    return r == 1


class Prepared:
    """A new directory nobody else can see yet (ocdir_prepare).

    fd is its descriptor: set owner, mode, xattrs and contents through it,
    then publish() puts it at its name in one rename (RENAME_NOREPLACE)
    or discard() removes it with everything in it. As a context manager
    it publishes when the block ends normally and discards when the block
    raises; either way it closes fd at the end (os.dup(fd) or detach()
    keeps a descriptor beyond the block).

    state is "prepared", "published" or "discarded" ("interrupted": an
    exception, such as KeyboardInterrupt from a signal handler, ended
    publish() or discard() while the C call ran; whether it freed the
    handle is unknown, so it is never passed again; "ending" only for a
    signal handler of the thread in publish() or discard(), whose own
    publish() or discard() is RuntimeError). After publish() or
    discard() succeeded, staging_errno says whether the empty 0700 staging
    directory next to the name was removed too: 0 if so, else the errno
    why it stays (ENOENT: someone moved it away; EACCES: the parent's
    write permission was taken away). Nothing is to be retried then.

    A Prepared that is garbage-collected while still "prepared" is
    discarded, with a ResourceWarning; an fd still open then is closed.
    """

    def __init__(self, handle: ctypes.c_void_p, fd: int, path: StrPath) -> None:
        self._handle: Optional[ctypes.c_void_p] = handle
        # Held across the C call that may end the handle: ctypes releases
        # the GIL there, and a second thread's publish or discard must not
        # pass the same pointer while the first one may be freeing it.
        # Reentrant: a signal handler runs in the thread that holds it (it
        # gets RuntimeError from _end's state "ending", not a deadlock).
        self._ending = threading.RLock()
        self.fd = fd
        self.path = path
        self.state = "prepared"
        self.staging_errno: Optional[int] = None

    def publish(self) -> int:
        """Publish (ocdir_publish); returns staging_errno.

        OSError (EEXIST: the name was taken meanwhile) leaves it prepared:
        publish again or discard(). ValueError if already published or
        discarded."""
        with self._ending:
            # No call between the look and the take (see _end).
            handle, state = self._handle, self.state
            if state == "ending":
                raise self._reentered()
            if handle is None:
                raise ValueError("ocdir: %r was %s already" % (self.path, state))
            self._handle, self.state = None, "ending"
            try:
                return self._end(handle, _lib.ocdir_publish, "published")
            finally:
                if self.state == "ending":  # an exception ended it
                    self.state = "interrupted"

    def discard(self) -> Optional[int]:
        """Remove the prepared directory and what was put into it
        (ocdir_discard); returns staging_errno.

        OSError leaves it prepared (the library keeps the handle after a
        failure, and what was removed stays removed): discard again later.
        A second discard() does nothing and returns the first one's
        staging_errno; after publish() it is ValueError."""
        with self._ending:
            handle, state = self._handle, self.state
            if state == "ending":
                raise self._reentered()
            if handle is None:
                if state == "discarded":
                    return self.staging_errno
                raise ValueError("ocdir: %r was %s already" % (self.path, state))
            self._handle, self.state = None, "ending"
            try:
                return self._end(handle, _lib.ocdir_discard, "discarded")
            finally:
                if self.state == "ending":  # an exception ended it
                    self.state = "interrupted"

    def _end(self, handle: ctypes.c_void_p, call: Callable[[ctypes.c_void_p], int],
             state: str) -> int:
        """call(handle) (ocdir_publish or ocdir_discard), with _ending held
        and the handle already taken out of self (state "ending").

        A signal handler runs in this thread at any call of Python code
        (and may publish or discard this Prepared: RuntimeError while
        "ending"), and its exception (KeyboardInterrupt, a SIGALRM
        timeout) is raised right after the C call returns, before the next
        line here runs. So the handle is taken out before the call, by the
        caller without a call between its look and its take, and given
        back only once the call is known to have failed (-1: still valid,
        ocdir.h): had the call freed it, keeping it would pass freed memory
        to C again (__exit__'s discard, __del__). After such an exception
        the handle is left alone (at worst the prepared directory stays),
        and the caller's finally makes state "interrupted"."""
        r, err = _retry(lambda: call(handle))
        if r < 0:
            self._handle = handle  # still valid: the call may be repeated
            self.state = "prepared"
            raise _error(err, self.path)
        self.state = state
        self.staging_errno = err
        return err

    def _reentered(self) -> RuntimeError:
        # Only the thread holding _ending sees "ending": a signal handler's.
        return RuntimeError("ocdir: %r: publish() or discard() of it is under way "
                            "in this thread (called from a signal handler?)" % (self.path,))

    def close(self) -> None:
        """Close fd (the directory stays prepared, published or not)."""
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def detach(self) -> int:
        """Hand fd over to the caller: it is no longer closed by close(),
        the context manager or garbage collection."""
        fd, self.fd = self.fd, -1
        return fd

    def __enter__(self) -> "Prepared":
        return self

    def __exit__(self, exc_type: object, exc: Optional[BaseException],
                 tb: object) -> None:
        try:
            if self._handle is not None:
                if exc is None:
                    try:
                        self.publish()
                    except BaseException as e:
                        self._discard_after(e)
                        raise
                else:
                    self._discard_after(exc)
        finally:
            self.close()

    def _discard_after(self, error: BaseException) -> None:
        """discard() after error; its own failure is noted on error (and is
        its __context__ if it had none), not raised instead of it."""
        try:
            self.discard()
        except Exception as d:
            error.add_note("ocdir: discarding %r failed too, it stays prepared: %s"
                           % (self.path, d))
            if error.__context__ is None:
                error.__context__ = d

    def __del__(self) -> None:
        try:
            if getattr(self, "_handle", None) is not None:
                try:
                    warnings.warn("ocdir: Prepared %r was neither published nor "
                                  "discarded; discarding it" % (self.path,),
                                  ResourceWarning, source=self)
                finally:
                    try:
                        self.discard()
                    except Exception:
                        pass
        finally:
            if getattr(self, "fd", -1) >= 0:
                try:
                    self.close()
                except OSError:
                    pass

    def __repr__(self) -> str:
        return "<ocdir.Prepared %r %s fd=%d>" % (self.path, self.state, self.fd)


def prepare(path: StrPath, mode: int = 0o777, *, dir_fd: Optional[int] = None,
            resolve: int = 0, flags: int = 0, options: int = 0) -> Prepared:
    """A new, still invisible directory destined for path: a Prepared.

        with ocdir.prepare("/srv/releases/v42", 0o755) as p:
            os.fchown(p.fd, uid, gid)   # nobody sees it before this is done
        # published here (EEXIST if the name was taken: then discarded)

    flags: only O_EXCL, O_CLOEXEC, O_DIRECTORY, O_CREAT, O_NOATIME,
    O_NONBLOCK, O_LARGEFILE (others: EINVAL). Raises OSError (EEXIST: the
    name exists), ValueError as open_dir().
    """
    bpath, dfd, handle = _path(path), _dirfd(dir_fd), ctypes.c_void_p()
    how = _how("ocdir_prepare", flags, mode, resolve, options)
    r, err = _retry(lambda: _lib.ocdir_prepare(dfd, bpath, ctypes.byref(how), ctypes.sizeof(how), ctypes.byref(handle)))
    if r < 0:
        raise _error(err, path)
    return Prepared(handle, r, path)


def backend() -> Tuple[str, str]:
    """("native" or "emulated", the reason) for this process (ocdir_backend)."""
    reason = ctypes.c_char_p()
    b = _lib.ocdir_backend(ctypes.byref(reason))
    name = "native" if b == BACKEND_NATIVE else "emulated"
    return name, (reason.value or b"").decode()
