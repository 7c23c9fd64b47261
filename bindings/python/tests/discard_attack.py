#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bindings/discard-attack's Python program: discard_attack.py DIR.

Run as the (non-root) owner of DIR, with the library built with ASan:
prepares DIR/new, takes the write permission away from DIR (0555) so that
the library's discard can remove the prepared directory but not the
staging directory beside it, then discards twice through the binding.
The C contract: discard returns 0, frees the handle and says EACCES (the
empty staging directory stays), or returns -1 and keeps the handle. The
binding must report that (staging_errno EACCES, or OSError), and the
second discard must not reach the freed handle: it returns the first
one's answer without calling the library. Exits 0 iff all of that held.
"""

import errno
import os
import sys

import ocdir


def main():
    d = sys.argv[1]
    calls = []
    real = ocdir._lib.ocdir_discard

    def counted(handle):
        calls.append(handle)
        return real(handle)
    ocdir._lib.ocdir_discard = counted
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    p = ocdir.prepare("new", 0o755, dir_fd=dfd)
    os.mkdir("sub", dir_fd=p.fd)
    os.chmod(d, 0o555)
    bad = []
    try:
        try:
            got = p.discard()
        except OSError as e:
            # -1: the handle is still valid; with write permission back,
            # discard again must finish the job.
            print("discard: OSError %s; the handle stays valid" % errno.errorcode.get(e.errno))
            if p.state != "prepared":
                bad.append("state %s after a failed discard" % p.state)
            os.chmod(d, 0o755)
            if p.discard() != 0:
                bad.append("the repeated discard left the staging directory: %s"
                           % errno.errorcode.get(p.staging_errno))
            if len(calls) != 2:
                bad.append("%d calls of ocdir_discard, want 2" % len(calls))
        else:
            print("discard: 0, staging_errno %s" % errno.errorcode.get(got, got))
            if got != errno.EACCES or p.staging_errno != errno.EACCES:
                bad.append("staging_errno %r, want EACCES" % got)
            if p.state != "discarded":
                bad.append("state %s, want discarded" % p.state)
            again = p.discard()  # must not reach the freed handle
            if again != got:
                bad.append("the second discard said %r" % again)
            if len(calls) != 1:
                bad.append("ocdir_discard called %d times: the freed handle was "
                           "passed again" % len(calls))
    finally:
        os.chmod(d, 0o755)
    stages = [e for e in os.listdir(dfd) if e.startswith(".ocdir-stage.")]
    if "new" in os.listdir(dfd):
        bad.append("new was published")
    for s in stages:
        left = os.listdir(os.path.join(d, s))
        if left:
            bad.append("%s is not empty: %s" % (s, left))
        os.rmdir(s, dir_fd=dfd)
    if p.staging_errno == errno.EACCES and len(stages) != 1:
        bad.append("EACCES, but %d staging directories" % len(stages))
    p.close()
    os.close(dfd)
    for b in bad:
        print("discard_attack: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
