# SPDX-License-Identifier: MIT
"""The conformance table of tests/conformance/cases.h, through the binding.

The table is read from $OCDIR_CONFORMANCE_TABLE, else from the checkout's
build/tests/conformance.tsv (make writes it: `build/tests/conformance
--print-table`), so the cases and their expected errno are those of the C
conformance test. Each case runs in a fresh directory below
$OCDIR_TEST_DIR (default: a new temporary directory), with umask 022, on
whichever backend the library picks (OCDIR_FORCE_EMULATION=1 forces the
emulation). One test method per case.
"""

import fcntl
import os
import stat

from _table import (TableTest, add_case_tests, check_after, count_fds, setup_op,
                    stage_left, table_path)
import ocdir

TABLE = table_path("OCDIR_CONFORMANCE_TABLE", "conformance.tsv")
COLUMNS = ("name setup path api flags mode resolve errno errname fd_is "
           "created after need").split()


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
            c["flags"] = int(c["flags"])
            c["mode"] = int(c["mode"], 8)
            c["resolve"] = int(c["resolve"])
            c["errno"] = int(c["errno"])
            c["created"] = int(c["created"])
            c["need"] = set(filter(None, c["need"].split(",")))
            cases.append(c)
    return cases


def run_case(base, idx, c):
    """None if the case passes, else why it fails."""
    casedir = os.path.join(base, "%03d" % idx)
    os.mkdir(casedir, 0o755)
    casefd = os.open(casedir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for op in c["setup"].split():
            setup_op(casefd, casedir, op)
        os.chdir(casedir)
        path = c["path"].replace("%D", casedir)
        mode = c["mode"] & 0o7777 if c["api"] == "at" else c["mode"]
        before = count_fds()
        err, fd, created = 0, -1, None
        try:
            fd, created = ocdir.open_dir(path, mode, dir_fd=casefd,
                                         flags=c["flags"], resolve=c["resolve"])
        except OSError as e:
            err = e.errno
            if e.filename != path:
                return "OSError.filename is %r, want %r" % (e.filename, path)
        want = c["errno"]
        if want and fd >= 0:
            os.close(fd)
            return "got an fd, want %s" % c["errname"]
        if not want and fd < 0:
            return "got %s (%s), want an fd" % (
                os.strerror(err), err)
        if want and err != want:
            return "got errno %d (%s), want %s" % (err, os.strerror(err),
                                                   c["errname"])
        if fd >= 0:
            try:
                st = os.fstat(fd)
                fl = fcntl.fcntl(fd, fcntl.F_GETFL)
                if not stat.S_ISDIR(st.st_mode):
                    return "fd is not a directory"
                if fl & os.O_ACCMODE != os.O_RDONLY:
                    return "fd is not O_RDONLY"
                if os.get_inheritable(fd):
                    return "fd is not O_CLOEXEC"
                if c["fd_is"] != "-":
                    want_st = os.stat(c["fd_is"], dir_fd=casefd)
                    if (want_st.st_dev, want_st.st_ino) != (st.st_dev, st.st_ino):
                        return "fd is not %s" % c["fd_is"]
                if c["api"] == "at2" and c["created"] >= 0 and \
                        int(created) != c["created"]:
                    return "created=%d, want %d" % (created, c["created"])
            finally:
                os.close(fd)
        why = check_after(casefd, c["after"])
        if why:
            return why
        if count_fds() != before:
            return "fd leaked"
        if stage_left(casefd):
            return "a .ocdir-stage.* directory was left behind"
        return None
    finally:
        os.close(casefd)


class Conformance(TableTest):
    prefix = "py-conformance."

    def test_table_present(self):
        self.assertTrue(CASES, "no cases read from " + TABLE)


CASES = add_case_tests(Conformance, "test_", read_table, TABLE, run_case)
