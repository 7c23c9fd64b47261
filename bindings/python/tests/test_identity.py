# SPDX-License-Identifier: MIT
"""The fd-identity test: the binding hands out the library's descriptor.

With the library of `make test-hooks` (build/test-hooks/libocdir.so.1) and
OCDIR_TEST_SWAP_AFTER=1 set at the time of the call, every call that
returns a descriptor to a named directory renames that name to
NAME.ocdir-test-moved right before it returns, and makes a fresh empty
NAME. So the descriptor must be the moved directory and not the one now at
NAME: a binding that re-opened the directory by name would hand out the
fresh one, every time. Without the hook (NAME.ocdir-test-moved never
appears) each test is skipped, or fails if OCDIR_TEST_HOOKS_REQUIRED=1.
"""

import os
import shutil
import tempfile
import unittest

import _table  # noqa: F401 -- the tests' import path
import ocdir

SWAP = "OCDIR_TEST_SWAP_AFTER"


class Identity(unittest.TestCase):
    def setUp(self):
        self.old_umask = os.umask(0o022)
        self.dir = tempfile.mkdtemp(prefix="py-identity.",
                                    dir=os.environ.get("OCDIR_TEST_DIR") or None)
        self.dfd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)

    def tearDown(self):
        os.environ.pop(SWAP, None)
        os.close(self.dfd)
        shutil.rmtree(self.dir)
        os.umask(self.old_umask)

    def swapped(self, name, call):
        """fd = call() with the swap on; then fd must be NAME.ocdir-test-moved."""
        os.environ[SWAP] = "1"
        try:
            fd = call()
        finally:
            del os.environ[SWAP]
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        try:
            moved = os.lstat(name + ".ocdir-test-moved", dir_fd=self.dfd)
        except FileNotFoundError:
            why = ("the library %s has no fd-identity hook (make test-hooks builds "
                   "build/test-hooks/libocdir.so.1)" % ocdir.library_path())
            if os.environ.get("OCDIR_TEST_HOOKS_REQUIRED") == "1":
                self.fail(why + ", and OCDIR_TEST_HOOKS_REQUIRED=1")
            self.skipTest(why)
        fresh = os.lstat(name, dir_fd=self.dfd)
        self.assertEqual((st.st_dev, st.st_ino), (moved.st_dev, moved.st_ino),
                         "the fd is not the directory the library returned")
        self.assertNotEqual((st.st_dev, st.st_ino), (fresh.st_dev, fresh.st_ino),
                            "the fd is the directory now at the name (re-opened by name)")

    def test_identity_open_dir(self):
        self.swapped("o", lambda: ocdir.open_dir("o", dir_fd=self.dfd).fd)

    def test_identity_open_dir_existing(self):
        os.mkdir(os.path.join(self.dir, "e"))
        self.swapped("e", lambda: ocdir.open_dir("e", dir_fd=self.dfd).fd)

    def test_identity_open_dir_absolute(self):
        path = os.path.join(self.dir, "abs")
        self.swapped("abs", lambda: ocdir.open_dir(path).fd)

    def test_identity_open_dir_setup(self):
        self.swapped("os", lambda: ocdir.open_dir(
            "os", dir_fd=self.dfd, setup=lambda fd, p, leaf: os.fchmod(fd, 0o750)).fd)

    def test_identity_mkpath(self):
        os.mkdir(os.path.join(self.dir, "m"))
        self.swapped("m/a", lambda: ocdir.mkpath("m/a", dir_fd=self.dfd).fd)

    def test_identity_mkpath_setup(self):
        os.mkdir(os.path.join(self.dir, "ms"))
        self.swapped("ms/a", lambda: ocdir.mkpath(
            "ms/a", dir_fd=self.dfd, setup=lambda fd, p, leaf: None).fd)

    def test_identity_prepare_publish(self):
        def call():
            p = ocdir.prepare("p", dir_fd=self.dfd)
            p.publish()
            return p.detach()
        self.swapped("p", call)

    def test_identity_prepare_context_manager(self):
        def call():
            with ocdir.prepare("pc", dir_fd=self.dfd) as p:
                fd = os.dup(p.fd)
            return fd
        self.swapped("pc", call)


if __name__ == "__main__":
    unittest.main()
