# SPDX-License-Identifier: MIT
"""The Python binding's own calls: results, errors, prepare/publish."""

import ctypes
import errno
import fcntl
import gc
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
import warnings
from unittest import mock

from _table import TOP
import ocdir


class Api(unittest.TestCase):
    def setUp(self):
        self.old_umask = os.umask(0o022)
        self.dir = tempfile.mkdtemp(prefix="py-api.",
                                    dir=os.environ.get("OCDIR_TEST_DIR") or None)
        self.dfd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)

    def tearDown(self):
        os.close(self.dfd)
        shutil.rmtree(self.dir)
        os.umask(self.old_umask)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def same(self, fd, path):
        a, b = os.fstat(fd), os.stat(path)
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

    def test_open_dir_creates_then_opens(self):
        fd, created = ocdir.open_dir(self.path("a"), 0o750)
        self.assertTrue(created)
        self.assertTrue(self.same(fd, self.path("a")))
        self.assertEqual(stat.S_IMODE(os.fstat(fd).st_mode), 0o750)
        self.assertFalse(os.get_inheritable(fd))
        os.close(fd)
        fd, created = ocdir.open_dir(self.path("a"))
        self.assertFalse(created)
        os.close(fd)

    def test_open_dir_dir_fd_and_default_mode(self):
        fd, created = ocdir.open_dir("b", dir_fd=self.dfd)
        self.assertTrue(created)
        self.assertEqual(stat.S_IMODE(os.fstat(fd).st_mode), 0o755)  # 0777 - umask
        os.close(fd)

    def test_exclusive(self):
        os.mkdir(self.path("c"))
        with self.assertRaises(FileExistsError) as cm:
            ocdir.open_dir("c", dir_fd=self.dfd, exclusive=True)
        self.assertEqual(cm.exception.errno, errno.EEXIST)
        self.assertEqual(cm.exception.filename, "c")

    def test_error_is_oserror_with_errno_and_filename(self):
        open(self.path("file"), "w").close()
        with self.assertRaises(NotADirectoryError) as cm:
            ocdir.open_dir(self.path("file"))
        self.assertEqual(cm.exception.errno, errno.ENOTDIR)
        self.assertEqual(cm.exception.filename, self.path("file"))

    def test_follow_symlinks_false(self):
        os.mkdir(self.path("d"))
        os.symlink("d", self.path("l"))
        with self.assertRaises(OSError) as cm:
            ocdir.open_dir("l", dir_fd=self.dfd, follow_symlinks=False)
        self.assertEqual(cm.exception.errno, errno.ENOTDIR)

    def test_resolve_beneath(self):
        with self.assertRaises(OSError) as cm:
            ocdir.open_dir("../escape", dir_fd=self.dfd,
                           resolve=ocdir.RESOLVE_BENEATH)
        self.assertEqual(cm.exception.errno, errno.EXDEV)

    def test_bytes_path(self):
        fd, created = ocdir.open_dir(os.fsencode(self.path("bytes")))
        self.assertTrue(created)
        os.close(fd)

    def test_no_cloexec_option(self):
        fd, _ = ocdir.open_dir(self.path("inh"), options=ocdir.NO_CLOEXEC)
        self.assertTrue(os.get_inheritable(fd))
        os.close(fd)

    def test_mkpath(self):
        fd, created = ocdir.mkpath("x/y/z", 0o700, dir_fd=self.dfd)
        self.assertTrue(created)
        self.assertTrue(self.same(fd, self.path("x", "y", "z")))
        self.assertEqual(stat.S_IMODE(os.fstat(fd).st_mode), 0o700)
        os.close(fd)
        fd, created = ocdir.mkpath(self.path("x", "y", "z"))
        self.assertFalse(created)
        os.close(fd)
        open(self.path("x", "f"), "w").close()
        with self.assertRaises(NotADirectoryError):
            ocdir.mkpath(self.path("x", "f", "g"))

    def test_mkdir(self):
        self.assertTrue(ocdir.mkdir("m", dir_fd=self.dfd))
        self.assertFalse(ocdir.mkdir(self.path("m")))
        open(self.path("mf"), "w").close()
        with self.assertRaises(NotADirectoryError):
            ocdir.mkdir(self.path("mf"))

    def test_prepare_publish(self):
        with ocdir.prepare(self.path("rel"), 0o755) as p:
            self.assertFalse(os.path.exists(self.path("rel")))
            os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=p.fd))
            kept = os.dup(p.fd)
        self.assertEqual(p.fd, -1)
        self.assertTrue(self.same(kept, self.path("rel")))
        self.assertTrue(os.path.exists(self.path("rel", "f")))
        os.close(kept)
        self.assertEqual(sorted(os.listdir(self.dir)), ["rel"])

    def test_prepare_discard_on_exception(self):
        with self.assertRaises(RuntimeError):
            with ocdir.prepare(self.path("gone")) as p:
                os.mkdir("sub", dir_fd=p.fd)
                raise RuntimeError("setup failed")
        self.assertEqual(os.listdir(self.dir), [])

    def test_prepare_publish_eexist_discards(self):
        with self.assertRaises(FileExistsError):
            with ocdir.prepare(self.path("taken")):
                os.mkdir(self.path("taken"))
        self.assertEqual(os.listdir(self.dir), ["taken"])

    def test_prepare_explicit(self):
        p = ocdir.prepare("exp", dir_fd=self.dfd)
        os.mkdir(self.path("exp"))
        with self.assertRaises(FileExistsError):
            p.publish()
        os.rmdir(self.path("exp"))
        p.publish()  # still prepared after the failure
        p.close()
        self.assertEqual(os.listdir(self.dir), ["exp"])

    def test_prepare_existing_name(self):
        os.mkdir(self.path("e"))
        with self.assertRaises(FileExistsError) as cm:
            ocdir.prepare(self.path("e"))
        self.assertEqual(cm.exception.filename, self.path("e"))

    def test_backend(self):
        name, reason = ocdir.backend()
        self.assertIn(name, ("native", "emulated"))
        self.assertTrue(reason)
        if os.environ.get("OCDIR_FORCE_EMULATION") == "1":
            self.assertEqual(name, "emulated")


    # ---- results ----

    def test_opened_dir_is_a_named_tuple_and_closes(self):
        r = ocdir.open_dir("t", dir_fd=self.dfd)
        self.assertIsInstance(r, tuple)
        self.assertEqual((r.fd, r.created), tuple(r))
        with r as d:
            self.assertIs(d, r)
            os.fstat(d.fd)
        with self.assertRaises(OSError) as cm:
            os.fstat(r.fd)  # closed at the end of the block
        self.assertEqual(cm.exception.errno, errno.EBADF)
        with ocdir.mkpath("t/u", dir_fd=self.dfd) as d:
            self.assertTrue(d.created)
            self.assertTrue(self.same(d.fd, self.path("t", "u")))

    def test_mkdir_flags_and_options(self):
        os.mkdir(self.path("e"))
        with self.assertRaises(FileExistsError):
            ocdir.mkdir("e", dir_fd=self.dfd, flags=os.O_EXCL)
        with self.assertRaises(FileExistsError):
            ocdir.mkdir("e", dir_fd=self.dfd, exclusive=True)
        with self.assertRaises(OSError) as cm:
            ocdir.mkdir("n", dir_fd=self.dfd, options=1 << 20)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        self.assertTrue(ocdir.mkdir("m750", 0o750, dir_fd=self.dfd))
        self.assertEqual(stat.S_IMODE(os.stat(self.path("m750")).st_mode), 0o750)

    def test_bad_numbers(self):
        for kw in ({"mode": -1}, {"flags": 1 << 64}, {"resolve": -1},
                   {"options": 1 << 70}, {"dir_fd": 1 << 40}):
            with self.assertRaises(OverflowError, msg=kw):
                ocdir.open_dir("bad", **kw)
        with self.assertRaises(TypeError):
            ocdir.open_dir("bad", dir_fd="3")
        self.assertEqual(os.listdir(self.dir), [])

    # ---- NUL bytes: ValueError, nothing created ----

    def test_nul_in_path_is_valueerror(self):
        calls = {
            "open_dir": lambda p: ocdir.open_dir(p, dir_fd=self.dfd),
            "open_dir-setup": lambda p: ocdir.open_dir(p, dir_fd=self.dfd,
                                                       setup=lambda *a: None),
            "mkpath": lambda p: ocdir.mkpath(p, dir_fd=self.dfd),
            "mkpath-setup": lambda p: ocdir.mkpath(p, dir_fd=self.dfd,
                                                   setup=lambda *a: None),
            "mkdir": lambda p: ocdir.mkdir(p, dir_fd=self.dfd),
            "prepare": lambda p: ocdir.prepare(p, dir_fd=self.dfd),
        }
        for name, fn in calls.items():
            for path in ("a\0b", b"a\0b", "a/\0", self.path("a\0b")):
                with self.subTest(call=name, path=path):
                    with self.assertRaises(ValueError):
                        fn(path)
                    self.assertEqual(os.listdir(self.dir), [])

    # ---- the library ----

    def test_import_without_library_is_importerror(self):
        code = ("import sys\n"
                "try:\n"
                "    import ocdir\n"
                "except ImportError as e:\n"
                "    print(e); sys.exit(0)\n"
                "sys.exit('imported')\n")
        env = dict(os.environ, OCDIR_LIBRARY=self.path("no", "libocdir.so.1"))
        out = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                             capture_output=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("OCDIR_LIBRARY", out.stdout)
        self.assertIn("libocdir.so.1", out.stdout)

    def test_library_path(self):
        where = ocdir.library_path()
        self.assertTrue(os.path.isabs(where), where)
        self.assertTrue(os.path.exists(where), where)
        asked = os.environ.get("OCDIR_LIBRARY")
        if asked:
            self.assertEqual(os.path.realpath(where), os.path.realpath(asked))

    def test_version_is_the_headers(self):
        header = os.path.join(TOP, "include", "ocdir.h")
        if not os.path.exists(header):
            self.skipTest("no include/ocdir.h beside this copy of the binding")
        with open(header) as f:
            m = re.search(r'^#define OCDIR_VERSION_STRING\s+"([^"]+)"', f.read(), re.M)
        self.assertEqual(ocdir.__version__, m.group(1))

    # ---- EINTR (PEP 475): repeated, not raised ----

    def interrupted(self, name, times=2):
        """Patch _lib.NAME to fail with EINTR `times` times, then call it."""
        real = getattr(ocdir._lib, name)
        calls = []

        def fake(*args):
            calls.append(args)
            if len(calls) <= times:
                ctypes.set_errno(errno.EINTR)
                return -1
            return real(*args)
        return mock.patch.object(ocdir._lib, name, fake), calls

    def test_eintr_is_retried(self):
        cases = [
            ("ocdir_openat2", lambda: os.close(ocdir.open_dir("i1", dir_fd=self.dfd).fd)),
            ("ocdir_openat2_setup", lambda: os.close(ocdir.open_dir(
                "i2", dir_fd=self.dfd, setup=lambda *a: None).fd)),
            ("ocdir_mkpath", lambda: os.close(ocdir.mkpath("i3/x", dir_fd=self.dfd).fd)),
            ("ocdir_mkpath_setup", lambda: os.close(ocdir.mkpath(
                "i4/x", dir_fd=self.dfd, setup=lambda *a: None).fd)),
            ("ocdir_mkdirat", lambda: ocdir.mkdir("i5", dir_fd=self.dfd)),
            ("ocdir_prepare", lambda: ocdir.prepare("i6", dir_fd=self.dfd).discard()),
        ]
        for name, run in cases:
            with self.subTest(call=name):
                patch, calls = self.interrupted(name)
                with patch:
                    run()
                self.assertEqual(len(calls), 3)
        for name in ("ocdir_publish", "ocdir_discard"):
            with self.subTest(call=name):
                p = ocdir.prepare("i-" + name, dir_fd=self.dfd)
                patch, calls = self.interrupted(name)
                with patch:
                    self.assertEqual(getattr(p, name[6:])(), 0)
                p.close()
                self.assertEqual(len(calls), 3)
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["i-ocdir_publish", "i1", "i2", "i3", "i4", "i5"])

    def test_eintr_from_setup_is_not_retried(self):
        runs = []

        def setup(fd, path, leaf):
            runs.append(path)
            raise InterruptedError(errno.EINTR, "interrupted")
        with self.assertRaises(InterruptedError):
            ocdir.open_dir("s", dir_fd=self.dfd, setup=setup)
        self.assertEqual(runs, ["s"])

    # ---- setup callables ----

    def test_setup_runs_on_new_directories_only(self):
        seen = []

        def setup(fd, path, leaf):
            st = os.fstat(fd)
            seen.append((path, leaf, stat.S_IMODE(st.st_mode)))
            os.fchmod(fd, 0o751)
        fd, created = ocdir.open_dir("s", 0o750, dir_fd=self.dfd, setup=setup)
        self.assertTrue(created)
        self.assertEqual(seen, [("s", True, 0o700)])  # mode & 0700 while set up
        self.assertEqual(stat.S_IMODE(os.fstat(fd).st_mode), 0o751)
        os.close(fd)
        fd, created = ocdir.open_dir("s", dir_fd=self.dfd, setup=setup)
        self.assertFalse(created)
        self.assertEqual(len(seen), 1)
        os.close(fd)
        seen.clear()
        fd, created = ocdir.mkpath("m/n/o", 0o750, dir_fd=self.dfd, setup=setup)
        self.assertTrue(created)
        self.assertEqual([(p, leaf) for p, leaf, _ in seen],
                         [("m", False), ("m/n", False), ("m/n/o", True)])
        self.assertEqual(seen[-1][2], 0o700)
        os.close(fd)
        # The mode reaches the library: 0550 & 0700 while set up, and after
        # (setup did not chmod).
        seen.clear()
        for fn in (ocdir.open_dir, ocdir.mkpath):
            with fn(fn.__name__, 0o550, dir_fd=self.dfd,
                    setup=lambda fd, p, leaf: seen.append(os.fstat(fd).st_mode)) as d:
                self.assertEqual(stat.S_IMODE(seen[-1]), 0o500)
                self.assertEqual(stat.S_IMODE(os.fstat(d.fd).st_mode), 0o500)

    def test_setup_oserror_fails_the_call_with_its_errno(self):
        for fn, parent in ((ocdir.open_dir, "o"), (ocdir.mkpath, "m")):
            boom = PermissionError(errno.EPERM, "not allowed")

            def setup(fd, path, leaf, boom=boom):
                if leaf:
                    raise boom
            if fn is ocdir.open_dir:
                os.mkdir(self.path(parent))
            with self.subTest(call=fn.__name__):
                with self.assertRaises(PermissionError) as cm:
                    fn(parent + "/g", dir_fd=self.dfd, setup=setup)
                self.assertEqual(cm.exception.errno, errno.EPERM)
                self.assertEqual(cm.exception.filename, parent + "/g")
                self.assertIs(cm.exception.__cause__, boom)
                self.assertEqual(os.listdir(self.dir), ["o"])
                self.assertEqual(os.listdir(self.path("o")), [])

    def test_setup_other_exception_is_reraised(self):
        class Mine(Exception):
            pass
        for fn in (ocdir.open_dir, ocdir.mkpath):
            for exc in (Mine("boom"), KeyboardInterrupt(), OSError("no errno")):
                def setup(fd, path, leaf, exc=exc):
                    raise exc
                with self.subTest(call=fn.__name__, exc=exc):
                    before = len(os.listdir("/proc/self/fd"))
                    with self.assertRaises(BaseException) as cm:
                        fn("x/y", dir_fd=self.dfd, setup=setup) if fn is ocdir.mkpath \
                            else fn("x", dir_fd=self.dfd, setup=setup)
                    self.assertIs(cm.exception, exc)
                    self.assertEqual(os.listdir(self.dir), [])
                    self.assertEqual(len(os.listdir("/proc/self/fd")), before)

    def test_setup_closing_its_fd_cannot_aim_the_library_elsewhere(self):
        """A callable that closes its fd and opens another directory (the
        number is reused) must not make the library take that directory
        back (chmod 0700), empty it, or return it as the new one."""
        victim = self.path("victim")
        os.mkdir(victim, 0o755)
        with open(os.path.join(victim, "precious"), "w") as f:
            f.write("x")
        for fn, fail in ((ocdir.open_dir, False), (ocdir.open_dir, True),
                         (ocdir.mkpath, False), (ocdir.mkpath, True)):
            with self.subTest(call=fn.__name__, fail=fail):
                held = []

                def setup(fd, path, leaf):
                    os.close(fd)
                    v = os.open(victim, os.O_RDONLY | os.O_DIRECTORY)
                    held.append(v)
                    self.assertEqual(v, fd)  # the number is reused
                    if fail:
                        raise PermissionError(errno.EACCES, "no")
                try:
                    if fail:
                        with self.assertRaises(PermissionError):
                            fn(self.path("new"), 0o755, setup=setup)
                    else:
                        with fn(self.path("new"), 0o755, setup=setup) as d:
                            self.assertTrue(d.created)
                            self.assertTrue(self.same(d.fd, self.path("new")))
                        os.rmdir(self.path("new"))
                finally:
                    for v in held:
                        os.close(v)
                self.assertEqual(os.listdir(victim), ["precious"])
                self.assertEqual(stat.S_IMODE(os.stat(victim).st_mode), 0o755)
                self.assertEqual(os.listdir(self.dir), ["victim"])

    def test_exception_leaving_the_setup_callback_is_not_success(self):
        """A signal handler's exception (KeyboardInterrupt) pending while
        the library runs is raised as Python enters the callback, before
        any try in it: ctypes prints it and gives C an undefined int, which
        the library takes for success when it is not negative. Simulated:
        a callback that raises at once. The call must raise it, never
        return a directory as made and set up."""
        def raiser(fd, path, flags, arg):
            raise KeyboardInterrupt
        ran = []
        for fn in (ocdir.open_dir, ocdir.mkpath):
            with self.subTest(call=fn.__name__), \
                    mock.patch.object(ocdir, "_setup_trampoline", raiser), \
                    mock.patch.object(ocdir, "_setup_c", ocdir._SETUP_FN(raiser)):
                with self.assertRaises(KeyboardInterrupt):
                    fn(self.path("k"), 0o755, setup=lambda *a: ran.append(a))
                if os.path.isdir(self.path("k")):  # the library took it for success
                    os.rmdir(self.path("k"))
                self.assertEqual(os.listdir(self.dir), [])
        self.assertEqual(ran, [])

    def test_setup_must_be_callable(self):
        with self.assertRaises(TypeError):
            ocdir.open_dir("n", dir_fd=self.dfd, setup=42)
        self.assertEqual(os.listdir(self.dir), [])

    # ---- prepare: the handle's end, staging_errno ----

    def counting(self, name):
        real = getattr(ocdir._lib, name)
        calls = []

        def wrapper(*args):
            calls.append(args)
            return real(*args)
        return mock.patch.object(ocdir._lib, name, wrapper), calls

    def test_discard_twice_calls_the_library_once(self):
        p = ocdir.prepare("d", dir_fd=self.dfd)
        patch, calls = self.counting("ocdir_discard")
        with patch:
            self.assertEqual(p.discard(), 0)
            self.assertEqual(p.state, "discarded")
            self.assertEqual(p.discard(), 0)  # no-op: the handle is gone
            with self.assertRaises(ValueError):
                p.publish()
        self.assertEqual(len(calls), 1)
        p.close()
        self.assertEqual(os.listdir(self.dir), [])

    def test_threads_end_a_handle_once(self):
        """Two threads end one Prepared at once: the library sees the
        handle once (a second ocdir_discard or ocdir_publish would be a
        use after free). The stand-in holds the first call for 50 ms, with
        the GIL released, so the other thread comes in while it runs."""
        import threading
        import time
        for first, second in (("discard", "discard"), ("publish", "discard"),
                              ("discard", "publish"), ("publish", "publish")):
            with self.subTest(first=first, second=second):
                p = ocdir.prepare("t", dir_fd=self.dfd)
                calls = []
                reals = {n: getattr(ocdir._lib, n)
                         for n in ("ocdir_discard", "ocdir_publish")}

                def slow(name):
                    def call(handle):
                        calls.append(name)
                        time.sleep(0.05)
                        return reals[name](handle)
                    return call
                go = threading.Barrier(2)
                errors = []

                def end(how):
                    go.wait()
                    try:
                        getattr(p, how)()
                    except (ValueError, OSError) as e:
                        errors.append(e)
                with mock.patch.object(ocdir._lib, "ocdir_discard", slow("ocdir_discard")), \
                        mock.patch.object(ocdir._lib, "ocdir_publish", slow("ocdir_publish")):
                    threads = [threading.Thread(target=end, args=(h,))
                               for h in (first, second)]
                    for t in threads:
                        t.start()
                    for t in threads:
                        t.join()
                self.assertEqual(len(calls), 1, calls)
                p.close()
                if p.state == "published":
                    os.rmdir(os.path.join(self.dir, "t"))
                self.assertEqual(os.listdir(self.dir), [])

    def test_interrupt_after_the_c_call_never_passes_the_handle_again(self):
        """A signal handler's exception (KeyboardInterrupt) is raised right
        after ctypes returns from ocdir_publish or ocdir_discard, before
        the binding's next line: the stand-in makes the real call, which
        frees the handle, then raises. Neither __exit__'s discard nor a
        later discard, publish or __del__ may pass that handle again."""
        for name in ("ocdir_publish", "ocdir_discard"):
            with self.subTest(call=name):
                real = {n: getattr(ocdir._lib, n) for n in ("ocdir_publish", "ocdir_discard")}
                calls = []

                def stand_in(which):
                    def call(handle):
                        calls.append((which, handle.value))
                        r = real[which](handle)
                        if which == name:
                            raise KeyboardInterrupt
                        return r
                    return call
                with mock.patch.object(ocdir._lib, "ocdir_publish", stand_in("ocdir_publish")), \
                        mock.patch.object(ocdir._lib, "ocdir_discard", stand_in("ocdir_discard")):
                    with self.assertRaises(KeyboardInterrupt):
                        if name == "ocdir_publish":
                            with ocdir.prepare("i", dir_fd=self.dfd) as p:
                                pass
                        else:
                            with ocdir.prepare("i", dir_fd=self.dfd) as p:
                                raise KeyboardInterrupt  # __exit__ discards
                    self.assertEqual(p.state, "interrupted")
                    for again in (p.discard, p.publish):
                        with self.assertRaises(ValueError):
                            again()
                    del p
                    gc.collect()
                handles = [h for _, h in calls]
                self.assertEqual(len(handles), len(set(handles)), calls)
                if name == "ocdir_publish":
                    os.rmdir(self.path("i"))
                self.assertEqual(os.listdir(self.dir), [])

    def test_a_second_end_waits_for_the_first(self):
        """publish() and discard() take p's lock before looking at the
        handle: held elsewhere, they wait (and then find it ended)."""
        import threading
        p = ocdir.prepare("w", dir_fd=self.dfd)
        patch, calls = self.counting("ocdir_discard")
        with patch:
            with p._ending:
                t = threading.Thread(target=p.discard)
                t.start()
                t.join(0.1)
                self.assertTrue(t.is_alive())
                self.assertEqual(calls, [])
            t.join()
        self.assertEqual(len(calls), 1)
        self.assertEqual(p.state, "discarded")
        p.close()
        self.assertEqual(os.listdir(self.dir), [])

    def test_signal_handler_ending_the_handle_under_way(self):
        """A signal handler runs in the thread that publishes (holding the
        lock) and may discard or publish the same Prepared: RuntimeError
        there, no deadlock, and the handle reaches C once."""
        import threading
        p = ocdir.prepare("s", dir_fd=self.dfd)
        real = ocdir._lib.ocdir_publish
        calls, inner = [], []

        def publish_with_handler(handle):
            calls.append(handle.value)
            for again in (p.discard, p.publish):  # as a handler would
                try:
                    again()
                except RuntimeError as e:
                    inner.append(e)
            return real(handle)
        done = []

        # (In a thread, so that a deadlock fails the test instead of
        # hanging it; the stand-in is gone when the join gives up.)
        t = threading.Thread(target=lambda: done.append(p.publish()), daemon=True)
        with mock.patch.object(ocdir._lib, "ocdir_publish", publish_with_handler):
            t.start()
            t.join(10)
        self.assertFalse(t.is_alive(), "deadlocked")
        self.assertEqual(done, [0])
        self.assertEqual(len(inner), 2, inner)
        self.assertEqual(len(calls), 1)
        self.assertEqual(p.state, "published")
        p.close()
        os.rmdir(self.path("s"))

    def test_publish_then_discard_is_refused(self):
        p = ocdir.prepare("pd", dir_fd=self.dfd)
        patch, calls = self.counting("ocdir_discard")
        with patch:
            self.assertEqual(p.publish(), 0)
            self.assertEqual(p.staging_errno, 0)
            with self.assertRaises(ValueError):
                p.discard()
            with self.assertRaises(ValueError):
                p.publish()
        self.assertEqual(calls, [])
        p.close()
        self.assertEqual(os.listdir(self.dir), ["pd"])

    def stage_of(self, dfd):
        stages = [e for e in os.listdir(dfd) if e.startswith(".ocdir-stage.")]
        self.assertEqual(len(stages), 1, stages)
        return stages[0]

    def test_discard_staging_moved_away_is_enoent_once(self):
        # Someone who can write the parent moves the staging directory out
        # of it: discard removes the prepared tree, returns 0 (the handle is
        # freed) and says ENOENT; nothing is to be retried.
        os.mkdir(self.path("away"))
        p = ocdir.prepare("new", dir_fd=self.dfd)
        os.mkdir("sub", dir_fd=p.fd)
        os.rename(self.stage_of(self.dfd), "away/stage", src_dir_fd=self.dfd,
                  dst_dir_fd=self.dfd)
        patch, calls = self.counting("ocdir_discard")
        with patch:
            self.assertEqual(p.discard(), errno.ENOENT)
            self.assertEqual(p.staging_errno, errno.ENOENT)
            self.assertEqual(p.state, "discarded")
            self.assertEqual(p.discard(), errno.ENOENT)
        self.assertEqual(len(calls), 1)
        p.close()
        self.assertEqual(os.listdir(self.path("away", "stage")), [])
        self.assertEqual(os.listdir(self.dir), ["away"])

    def test_exit_keeps_publish_error_and_notes_discard_error(self):
        def failing_discard(handle):
            ctypes.set_errno(errno.EBUSY)
            return -1
        with mock.patch.object(ocdir._lib, "ocdir_discard", failing_discard):
            with self.assertRaises(FileExistsError) as cm:
                with ocdir.prepare("x", dir_fd=self.dfd) as p:
                    os.mkdir(self.path("x"))
        e = cm.exception
        self.assertEqual(e.filename, "x")
        self.assertIsInstance(e.__context__, OSError)
        self.assertEqual(e.__context__.errno, errno.EBUSY)
        self.assertTrue(any("discard" in n for n in getattr(e, "__notes__", [])))
        self.assertEqual(p.state, "prepared")  # the handle is still valid
        self.assertEqual(p.fd, -1)
        self.assertEqual(p.discard(), 0)
        self.assertEqual(os.listdir(self.dir), ["x"])

    def test_exit_keeps_block_error_and_notes_discard_error(self):
        def failing_discard(handle):
            ctypes.set_errno(errno.EBUSY)
            return -1
        with mock.patch.object(ocdir._lib, "ocdir_discard", failing_discard):
            with self.assertRaises(KeyError) as cm:
                with ocdir.prepare("x", dir_fd=self.dfd) as p:
                    raise KeyError("block")
        self.assertTrue(any("discard" in n for n in cm.exception.__notes__))
        self.assertEqual(p.discard(), 0)
        self.assertEqual(os.listdir(self.dir), [])

    def test_garbage_collected_prepared_is_discarded_with_a_warning(self):
        p = ocdir.prepare("gc", dir_fd=self.dfd)
        os.mkdir("sub", dir_fd=p.fd)
        fd = p.fd
        with self.assertWarns(ResourceWarning):
            del p
            gc.collect()
        self.assertEqual(os.listdir(self.dir), [])
        with self.assertRaises(OSError):
            os.fstat(fd)

    def test_prepare_arguments(self):
        with self.assertRaises(OSError) as cm:
            ocdir.prepare("../p", dir_fd=self.dfd, resolve=ocdir.RESOLVE_BENEATH)
        self.assertEqual(cm.exception.errno, errno.EXDEV)
        with self.assertRaises(OSError) as cm:
            ocdir.prepare("p", dir_fd=self.dfd, flags=os.O_APPEND)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        p = ocdir.prepare("p", 0o710, dir_fd=self.dfd, options=ocdir.NO_CLOEXEC)
        self.assertTrue(os.get_inheritable(p.fd))
        self.assertEqual(stat.S_IMODE(os.fstat(p.fd).st_mode), 0o710)
        kept = p.detach()
        self.assertEqual(p.fd, -1)
        p.publish()
        self.assertTrue(self.same(kept, self.path("p")))
        os.close(kept)

    def test_setup_calls_arguments(self):
        noop = lambda fd, path, leaf: None  # noqa: E731
        for fn in (ocdir.open_dir, ocdir.mkpath):
            with self.subTest(call=fn.__name__):
                with self.assertRaises(OSError) as cm:
                    fn("../esc", dir_fd=self.dfd, resolve=ocdir.RESOLVE_BENEATH, setup=noop)
                self.assertEqual(cm.exception.errno, errno.EXDEV)
                with fn(fn.__name__, 0o750, dir_fd=self.dfd, options=ocdir.NO_CLOEXEC,
                        setup=noop) as d:
                    self.assertTrue(d.created)
                    self.assertTrue(os.get_inheritable(d.fd))
                    self.assertEqual(stat.S_IMODE(os.fstat(d.fd).st_mode), 0o700)
                    self.assertTrue(self.same(d.fd, self.path(fn.__name__)))
                with self.assertRaises(FileExistsError):
                    fn(fn.__name__, dir_fd=self.dfd, flags=os.O_EXCL, setup=noop)


    def test_readme_example(self):
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        code = re.search(r"^```python\n(.*?)^```$", text, re.M | re.S).group(1)
        want = re.search(r"^It prints\n\n```\n(.*?)^```$", text, re.M | re.S).group(1)
        env = dict(os.environ,
                   PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(ocdir.__file__))))
        out = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                             capture_output=True, cwd=self.dir)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, want)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main()
