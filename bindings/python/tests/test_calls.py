# SPDX-License-Identifier: MIT
"""The calls table of tests/conformance/calls.h, through the binding.

The table is read from $OCDIR_CALLS_TABLE, else from the checkout's
build/tests/calls.tsv (make writes it: `build/tests/conformance
--print-calls`): the cases of ocdir_mkdirat, ocdir_mkpath, the setup
calls, prepare with publish or discard and ocdir_openat2's options, with
the C test's expectations. Each case runs in a fresh directory (the case
directory is dir_fd; the working directory is elsewhere, so a binding that
loses dir_fd fails), umask 022, and checks what the C test checks: the
errno, the fd (a directory, O_RDONLY, close-on-exec unless NO_CLOEXEC,
the expected one), created, how often the setup callable ran, the `after`
checks, no descriptor leaked, no ".ocdir-stage.*" left. One test per case.
"""

import errno
import fcntl
import os
import stat

from _table import (TableTest, add_case_tests, check_after, count_fds, setup_op,
                    stage_left, table_path)
import ocdir

TABLE = table_path("OCDIR_CALLS_TABLE", "calls.tsv")
COLUMNS = ("name call setup path flags mode resolve options action errno "
           "fd_is created after calls need").split()
NEED_NOREPLACE = 32  # publishes by RENAME_NOREPLACE: every local fs here


def read_table(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != len(COLUMNS):
                raise ValueError("%s: bad line %r" % (path, line))
            c = dict(zip(COLUMNS, fields))
            for k in ("flags", "resolve", "options", "errno", "created", "need"):
                c[k] = int(c[k])
            c["mode"] = int(c["mode"], 8)
            cases.append(c)
    return cases


class Step:
    """The setup callable of a case: the action of column 9."""

    def __init__(self, action):
        self.kind, _, self.value = action.partition(":")
        self.leaf = self.inter = 0

    def __call__(self, fd, path, leaf):
        if not isinstance(fd, int) or not isinstance(path, str) or \
                not isinstance(leaf, bool):
            raise TypeError("setup got (%r, %r, %r)" % (fd, path, leaf))
        if leaf:
            self.leaf += 1
        else:
            self.inter += 1
        if self.kind == "fail" and leaf:
            n = int(self.value)
            raise OSError(n, os.strerror(n))
        if self.kind == "chmod" or (self.kind == "leafchmod" and leaf):
            os.fchmod(fd, int(self.value, 8))

    def calls(self):
        return "%d/%d" % (self.leaf, self.inter)


def prepared_action(casefd, p, action):
    kind, _, value = action.partition(":")
    if kind == "chmod":
        os.fchmod(p.fd, int(value, 8))
    elif kind == "plant":
        os.mkdir(value, 0o755, dir_fd=casefd)
    elif kind == "fill":
        os.close(os.open("f", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=p.fd))
        os.mkdir("sub", 0o755, dir_fd=p.fd)
        sub = os.open("sub", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=p.fd)
        try:
            os.close(os.open("g", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=sub))
        finally:
            os.close(sub)


class Broken(Exception):
    """The test itself could not do what the case says."""


def call(c, casefd, path, step):
    """(fd or -1, created or None, errno) of case c's call."""
    kw = dict(dir_fd=casefd, flags=c["flags"], resolve=c["resolve"],
              options=c["options"])
    kind = c["call"]
    try:
        if kind == "open":
            return (*ocdir.open_dir(path, c["mode"], **kw), 0)
        if kind == "open-setup":
            return (*ocdir.open_dir(path, c["mode"], setup=step, **kw), 0)
        if kind == "mkpath":
            return (*ocdir.mkpath(path, c["mode"], **kw), 0)
        if kind == "mkpath-setup":
            return (*ocdir.mkpath(path, c["mode"], setup=step, **kw), 0)
        if kind == "mkdir":
            return -1, ocdir.mkdir(path, c["mode"], **kw), 0
        if not kind.startswith("prepare-"):
            raise Broken("unknown call " + kind)
        p = ocdir.prepare(path, c["mode"], **kw)
    except OSError as e:
        if e.filename != path:
            raise Broken("OSError.filename is %r, want %r" % (e.filename, path))
        return -1, None, e.errno
    try:
        prepared_action(casefd, p, c["action"])
    except OSError as e:
        p.discard()
        p.close()
        raise Broken("action %s: %s" % (c["action"], e))
    if kind == "prepare-discard":
        p.close()
        if p.discard() != 0:
            raise Broken("discard left the staging directory: %s"
                         % errno.errorcode[p.staging_errno])
        if p.state != "discarded":
            raise Broken("state %s after discard" % p.state)
        return -1, None, 0
    try:
        if p.publish() != 0:
            p.close()
            raise Broken("publish left the staging directory: %s"
                         % errno.errorcode[p.staging_errno])
    except OSError as e:
        p.close()
        if p.state != "prepared":
            raise Broken("state %s after a failed publish" % p.state)
        try:
            p.discard()  # the handle is still valid after a failed publish
        except OSError as d:
            raise Broken("discard after publish's %s: %s" % (e, d))
        return -1, None, e.errno
    return p.detach(), None, 0


def run_case(base, idx, c):
    """None if the case passes, else why it fails."""
    casedir = os.path.join(base, "%03d" % idx)
    os.mkdir(casedir, 0o755)
    casefd = os.open(casedir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for op in c["setup"].split():
            setup_op(casefd, casedir, op)
        path = c["path"].replace("%D", casedir)
        step = Step(c["action"])
        before = count_fds()
        try:
            fd, created, err = call(c, casefd, path, step)
        except Broken as e:
            return str(e)
        want = c["errno"]
        if want and (fd >= 0 or created is not None):
            if fd >= 0:
                os.close(fd)
            return "succeeded, want %s" % errno.errorcode.get(want, want)
        if not want and err:
            return "got %s (%s), want success" % (errno.errorcode.get(err, err),
                                                 os.strerror(err))
        if want and err != want:
            return "got %s, want %s" % (errno.errorcode.get(err, err),
                                        errno.errorcode.get(want, want))
        if fd >= 0:
            try:
                st = os.fstat(fd)
                cloexec = not c["options"] & ocdir.NO_CLOEXEC or c["flags"] & os.O_CLOEXEC
                if not stat.S_ISDIR(st.st_mode):
                    return "fd is not a directory"
                if fcntl.fcntl(fd, fcntl.F_GETFL) & (os.O_ACCMODE | os.O_PATH) != os.O_RDONLY:
                    return "fd is not O_RDONLY"
                if os.get_inheritable(fd) == bool(cloexec):
                    return "fd is %sclose-on-exec" % ("not " if cloexec else "")
                if c["fd_is"] == "-":
                    return "an fd, want none"
                want_st = os.stat(c["fd_is"], dir_fd=casefd)
                if (want_st.st_dev, want_st.st_ino) != (st.st_dev, st.st_ino):
                    return "fd is not %s" % c["fd_is"]
            finally:
                os.close(fd)
        elif not want and c["fd_is"] != "-":
            return "no fd, want %s" % c["fd_is"]
        if c["created"] >= 0 and created is not None and int(created) != c["created"]:
            return "created %d, want %d" % (created, c["created"])
        if c["calls"] != "-" and step.calls() != c["calls"]:
            return "setup ran %s (leaf/intermediate), want %s" % (step.calls(), c["calls"])
        why = check_after(casefd, c["after"])
        if why:
            return why
        if count_fds() != before:
            return "fd leaked"
        if stage_left(casefd, 2):
            return "a .ocdir-stage.* directory was left behind"
        return None
    finally:
        os.close(casefd)


class Calls(TableTest):
    prefix = "py-calls."

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Not the case directory: relative paths work only through dir_fd.
        os.chdir(cls.base)

    def test_calls_table_present(self):
        self.assertTrue(CASES, "no cases read from " + TABLE)
        self.assertEqual({c["call"] for c in CASES},
                         {"open", "mkdir", "mkpath", "open-setup", "mkpath-setup",
                          "prepare-publish", "prepare-discard"})


CASES = add_case_tests(Calls, "test_call_", read_table, TABLE, run_case, ~NEED_NOREPLACE)
