# SPDX-License-Identifier: MIT
"""What the table readers (test_conformance, test_calls) share: the
checkout's paths, the default library, the setup and `after` languages of
tests/conformance (cases.h, calls.h), and the leak checks."""

import os
import shutil
import stat
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

NEED_ROOT, NEED_USER, NEED_MOUNT, NEED_ROOT_SETUP, NEED_PROT_LINKS = 1, 2, 4, 8, 16


def table_path(env, name):
    return os.environ.get(env) or os.path.join(TOP, "build", "tests", name)


def skip_reason(need):
    """Why a case with these needs (a set of words or a bitmask) cannot run
    here, or None."""
    if isinstance(need, int):
        need = {w for bit, w in ((NEED_ROOT, "root"), (NEED_USER, "user"),
                                 (NEED_MOUNT, "mount"),
                                 (NEED_ROOT_SETUP, "root-setup"),
                                 (NEED_PROT_LINKS, "protected-symlinks"))
                if need & bit}
    root = os.geteuid() == 0
    if "root" in need and not root:
        return "root only"
    if "user" in need and root:
        return "non-root only (the C conformance test's --user run covers it)"
    if "root-setup" in need and not root:
        return "setup needs root"
    if "protected-symlinks" in need:
        try:
            with open("/proc/sys/fs/protected_symlinks") as f:
                if f.read(1) != "1":
                    return "fs.protected_symlinks is off"
        except OSError:
            return "fs.protected_symlinks unknown"
    if "mount" in need:
        return "needs a private mount namespace (the C conformance test runs it)"
    return None


def setup_op(casefd, casedir, op):
    kind, _, arg = op.partition(":")
    if kind == "l":
        name, _, target = arg.partition(">")
        os.symlink(target.replace("%D", casedir), name, dir_fd=casefd)
        return
    name, eq, value = arg.partition("=")
    if kind == "d":
        os.mkdir(name, 0o755, dir_fd=casefd)
        if eq:
            os.chmod(name, int(value, 8), dir_fd=casefd)
    elif kind == "f":
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644,
                         dir_fd=casefd))
    elif kind == "p":
        os.mkfifo(name, 0o644, dir_fd=casefd)
    elif kind == "o":
        uid = int(value or "0")
        os.chown(name, uid, uid, dir_fd=casefd, follow_symlinks=False)
    elif kind == "chain":
        n = int(name)
        for i in range(1, n + 1):
            os.symlink("d" if i == n else "s%d" % (i + 1), "s%d" % i,
                       dir_fd=casefd)
    else:
        raise ValueError("unknown setup op " + op)


def check_after(casefd, after):
    """None if every check of `after` holds, else what does not."""
    for tok in after.split():
        kind, path = tok[0], tok[2:]
        path, _, want = path.partition("=")
        try:
            st = os.stat(path, dir_fd=casefd, follow_symlinks=False)
        except OSError:
            st = None
        if kind == "-":
            if st is not None:
                return "%s exists" % path
        elif kind in "DEM":
            if st is None or not stat.S_ISDIR(st.st_mode):
                return "%s is not a directory" % path
            if kind == "M" and stat.S_IMODE(st.st_mode) != int(want, 8):
                return "%s has mode %04o, want %s" % (
                    path, stat.S_IMODE(st.st_mode), want)
            if kind == "E":
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY, dir_fd=casefd)
                except PermissionError:
                    continue  # unreadable for this uid: no verdict (as the C test)
                try:
                    if os.listdir(fd):
                        return "%s is not empty" % path
                finally:
                    os.close(fd)
        elif kind == "F":
            if st is None or not stat.S_ISREG(st.st_mode):
                return "%s is not a regular file" % path
        elif kind == "L":
            if st is None or not stat.S_ISLNK(st.st_mode):
                return "%s is not a symlink" % path
        else:
            return "unknown after check " + tok
    return None


def stage_left(dirfd, depth=1):
    """Is a ".ocdir-stage.*" directory left in dirfd or up to depth below?"""
    entries = os.listdir(dirfd)
    if any(e.startswith(".ocdir-stage.") for e in entries):
        return True
    if depth > 0:
        for entry in entries:
            try:
                sub = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                              dir_fd=dirfd)
            except OSError:
                continue
            try:
                if stage_left(sub, depth - 1):
                    return True
            finally:
                os.close(sub)
    return False


def count_fds():
    return len(os.listdir("/proc/self/fd"))


def rmtree(path):
    """shutil.rmtree, after giving back the permissions a case took away
    from its directories (0500, 0000)."""
    def fix(p):
        try:
            os.chmod(p, 0o700)
            with os.scandir(p) as it:
                subdirs = [e.path for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            return
        for sub in subdirs:
            fix(sub)
    fix(path)
    shutil.rmtree(path)


def add_case_tests(cls, prefix, read, path, run_case, need_mask=None):
    """One test method on cls per row of the table at path (read by
    read): prefix + the case name; skipped as skip_reason says for the
    row's need (its bits within need_mask, if given), else failed with run_case's reason.
    Returns the rows ([] if the table cannot be read: a test of each
    module says so)."""
    def make(idx, c):
        def test(self):
            need = c["need"] if need_mask is None else c["need"] & need_mask
            why = skip_reason(need)
            if why:
                self.skipTest(why)
            why = run_case(self.base, idx, c)
            if why:
                self.fail(why)
        return test
    try:
        cases = read(path)
    except OSError:
        cases = []
    for idx, c in enumerate(cases):
        setattr(cls, prefix + c["name"].replace("-", "_"), make(idx, c))
    return cases


class TableTest(unittest.TestCase):
    """A table's test class: umask 022 and a fresh base directory (under
    $OCDIR_TEST_DIR) for the class, removed afterwards; the working
    directory is restored. prefix names the base directory."""
    base = None
    prefix = "py-table."

    @classmethod
    def setUpClass(cls):
        cls.old_umask = os.umask(0o022)
        cls.old_cwd = os.getcwd()
        top = os.environ.get("OCDIR_TEST_DIR") or None
        cls.base = tempfile.mkdtemp(prefix=cls.prefix, dir=top)
        os.chmod(cls.base, 0o755)

    @classmethod
    def tearDownClass(cls):
        os.chdir(cls.old_cwd)
        os.umask(cls.old_umask)
        rmtree(cls.base)
