// SPDX-License-Identifier: MIT

package ocdir

// The victim of tests/race/race.c -x, in Go: the test binary is the victim
// when OCDIR_RACE_VICTIM is set (bindings/README.md):
//
//	race -v ext-emulated -x "env OCDIR_RACE_VICTIM=ocdir build/bindings/go/ocdir.test"
//
// race adds two arguments, ARENA and shared|sticky. For each "r" on stdin
// the victim creates ARENA/target with OpenDir (mode 0700, O_NOFOLLOW), and
// if it created it (or the arena is sticky, where it acts like mkdir -p)
// sets mode 0710, owner 4242 and the xattr user.ocdir.race through the
// descriptor; it answers "fd CREATED DEV INO UID ISDIR" (an fstat taken
// before the changes) or "err ERRNO". OCDIR_RACE_VICTIM=naive is the
// deliberately broken victim: os.Mkdir, then os.Open by name.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

func TestMain(m *testing.M) {
	if d := os.Getenv("OCDIR_DISCARD_ATTACK"); d != "" {
		os.Exit(discardAttack(d))
	}
	if v := os.Getenv("OCDIR_RACE_VICTIM"); v != "" {
		os.Exit(raceVictim(v == "naive", os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

func fsetxattr(fd uintptr, name string, value []byte) {
	n, err := syscall.BytePtrFromString(name)
	if err != nil {
		return
	}
	syscall.Syscall6(syscall.SYS_FSETXATTR, fd, uintptr(unsafe.Pointer(n)),
		uintptr(unsafe.Pointer(&value[0])), uintptr(len(value)), 0, 0)
}

func raceVictim(naive bool, arena, kind string) int {
	sticky := kind == "sticky"
	target := filepath.Join(arena, "target")
	dir, err := os.Open(arena)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	for in.Scan() {
		var f *os.File
		created := false
		if naive {
			err = os.Mkdir(target, 0o700)
			created = err == nil
			if err == nil || (sticky && errors.Is(err, os.ErrExist)) {
				f, err = os.Open(target)
			}
		} else {
			f, created, err = OpenDir(dir, "target", How{Flags: syscall.O_NOFOLLOW, Mode: 0o700})
		}
		if err != nil {
			var errno syscall.Errno
			if !errors.As(err, &errno) {
				errno = syscall.EIO
			}
			fmt.Fprintf(out, "err %d\n", int(errno))
			out.Flush()
			continue
		}
		var st syscall.Stat_t
		syscall.Fstat(int(f.Fd()), &st)
		if created || sticky {
			syscall.Fchmod(int(f.Fd()), 0o710)
			syscall.Fchown(int(f.Fd()), 4242, 4242)
			fsetxattr(f.Fd(), "user.ocdir.race", []byte("victim"))
		}
		f.Close()
		isDir, c := 0, 0
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			isDir = 1
		}
		if created {
			c = 1
		}
		fmt.Fprintf(out, "fd %d %d %d %d %d\n", c, st.Dev, st.Ino, st.Uid, isDir)
		out.Flush()
	}
	return 0
}
