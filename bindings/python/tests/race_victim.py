#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The victim of tests/race/race.c -x, in Python (bindings/README.md).

    race -v ext-emulated -x "python3 bindings/python/tests/race_victim.py"

Arguments (added by race): ARENA shared|sticky. For each "r" on stdin it
creates ARENA/target with ocdir.open_dir (mode 0700, no trailing symlink
followed), and if it created it (or the arena is sticky, where the victim
acts like mkdir -p) sets mode 0710, owner 4242 and the xattr
user.ocdir.race through the descriptor, then answers
"fd CREATED DEV INO UID ISDIR" (an fstat of the descriptor taken before the
changes) or "err ERRNO". --naive (first argument)
is the deliberately broken victim: os.mkdir, then os.open by name.
"""

import os
import stat
import sys

import ocdir


def main():
    args = sys.argv[1:]
    naive = args[:1] == ["--naive"]
    if naive:
        args = args[1:]
    arena, kind = args
    sticky = kind == "sticky"
    target = os.path.join(arena, "target")
    afd = os.open(arena, os.O_RDONLY | os.O_DIRECTORY)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for _ in sys.stdin:
        try:
            if naive:
                try:
                    os.mkdir(target, 0o700)
                    created = True
                except FileExistsError:
                    if not sticky:
                        raise
                    created = False
                fd = os.open(target, os.O_RDONLY)
            else:
                fd, created = ocdir.open_dir("target", 0o700, dir_fd=afd,
                                             follow_symlinks=False)
        except OSError as e:
            out.write("err %d\n" % e.errno)
            out.flush()
            continue
        try:
            st = os.fstat(fd)  # before the changes: what the call returned
            if created or sticky:
                os.fchmod(fd, 0o710)
                os.fchown(fd, 4242, 4242)
                try:
                    os.setxattr(fd, "user.ocdir.race", b"victim")
                except OSError:
                    pass
        finally:
            os.close(fd)
        out.write("fd %d %d %d %d %d\n" % (int(created), st.st_dev, st.st_ino,
                                          st.st_uid, int(stat.S_ISDIR(st.st_mode))))
        out.flush()


if __name__ == "__main__":
    main()
