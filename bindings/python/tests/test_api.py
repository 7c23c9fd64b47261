# SPDX-License-Identifier: MIT
"""The Python binding's own calls: results, errors, prepare/publish."""

import errno
import os
import shutil
import stat
import tempfile
import unittest

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


if __name__ == "__main__":
    unittest.main()
