// SPDX-License-Identifier: MIT

package ocdir

// The conformance table of tests/conformance/cases.h, through the binding:
// read from $OCDIR_CONFORMANCE_TABLE, else from the checkout's
// build/tests/conformance.tsv (written by `build/tests/conformance
// --print-table`), so the cases and their expected errno are the C
// conformance test's. Each case runs in a fresh directory below
// $OCDIR_TEST_DIR (default: a new temporary directory), umask 022, on the
// backend the library picks (OCDIR_FORCE_EMULATION=1: the emulation). One
// subtest per case.

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

type confCase struct {
	name, setup, path, api string
	flags                  int
	mode                   uint32
	resolve                uint64
	errno                  syscall.Errno
	errname, fdIs          string
	created                int
	after                  string
	need                   map[string]bool
}

func tablePath() string {
	if p := os.Getenv("OCDIR_CONFORMANCE_TABLE"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "build", "tests", "conformance.tsv")
}

// tableRows reads a table build/tests/conformance wrote: the fields of
// each line that is not a comment, each line of exactly columns fields.
func tableRows(path string, columns int) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		x := strings.Split(line, "\t")
		if len(x) != columns {
			return nil, fmt.Errorf("%s: %d columns, want %d: %q", path, len(x), columns, line)
		}
		rows = append(rows, x)
	}
	return rows, sc.Err()
}

func readTable(path string) ([]confCase, error) {
	rows, err := tableRows(path, 13)
	if err != nil {
		return nil, err
	}
	var cases []confCase
	for _, x := range rows {
		flags, e1 := strconv.Atoi(x[4])
		mode, e2 := strconv.ParseUint(x[5], 8, 32)
		resolve, e3 := strconv.ParseUint(x[6], 10, 64)
		errno, e4 := strconv.Atoi(x[7])
		created, e5 := strconv.Atoi(x[10])
		if err := firstError(e1, e2, e3, e4, e5); err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, x, err)
		}
		c := confCase{name: x[0], setup: x[1], path: x[2], api: x[3], flags: flags,
			mode: uint32(mode), resolve: resolve, errno: syscall.Errno(errno),
			errname: x[8], fdIs: x[9], created: created, after: x[11],
			need: map[string]bool{}}
		for _, n := range strings.Split(x[12], ",") {
			if n != "" {
				c.need[n] = true
			}
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// fileMode is a table's Unix mode as How.Mode; false if it has bits that
// fs.FileMode cannot say (outside 07777).
func fileMode(m uint64) (fs.FileMode, bool) {
	f := fs.FileMode(m & 0o777)
	if m&syscall.S_ISUID != 0 {
		f |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		f |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		f |= fs.ModeSticky
	}
	return f, m&^0o7777 == 0
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func skipReason(c *confCase) string {
	root := os.Geteuid() == 0
	switch {
	case c.need["root"] && !root:
		return "root only"
	case c.need["user"] && root:
		return "non-root only (the C conformance test's --user run covers it)"
	case c.need["root-setup"] && !root:
		return "setup needs root"
	case c.need["mount"]:
		return "needs a private mount namespace (the C conformance test runs it)"
	}
	if c.need["protected-symlinks"] {
		b, err := os.ReadFile("/proc/sys/fs/protected_symlinks")
		if err != nil || !strings.HasPrefix(string(b), "1") {
			return "fs.protected_symlinks is off"
		}
	}
	return ""
}

// setupOp runs one setup operation in the current directory (the case's).
func setupOp(casedir, op string) error {
	kind, arg, _ := strings.Cut(op, ":")
	if kind == "l" {
		name, target, _ := strings.Cut(arg, ">")
		return os.Symlink(strings.ReplaceAll(target, "%D", casedir), name)
	}
	name, value, eq := strings.Cut(arg, "=")
	switch kind {
	case "d":
		if err := os.Mkdir(name, 0o755); err != nil {
			return err
		}
		if eq {
			m, err := strconv.ParseUint(value, 8, 32)
			if err != nil {
				return err
			}
			return syscall.Chmod(name, uint32(m))
		}
	case "f":
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		return f.Close()
	case "p":
		return syscall.Mkfifo(name, 0o644)
	case "o":
		uid, _ := strconv.Atoi(value)
		return os.Lchown(name, uid, uid)
	case "chain":
		n, err := strconv.Atoi(name)
		if err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			target := fmt.Sprintf("s%d", i+1)
			if i == n {
				target = "d"
			}
			if err := os.Symlink(target, fmt.Sprintf("s%d", i)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown setup op %q", op)
	}
	return nil
}

// checkAfter: "" or the first check of the case's after column that fails.
func checkAfter(after string) string {
	for _, tok := range strings.Fields(after) {
		kind, path := tok[0], tok[2:]
		path, want, _ := strings.Cut(path, "=")
		var st syscall.Stat_t
		exists := syscall.Lstat(path, &st) == nil
		isDir := exists && st.Mode&syscall.S_IFMT == syscall.S_IFDIR
		switch kind {
		case '-':
			if exists {
				return path + " exists"
			}
		case 'D', 'E', 'M':
			if !isDir {
				return path + " is not a directory"
			}
			if kind == 'M' {
				m, _ := strconv.ParseUint(want, 8, 32)
				if st.Mode&0o7777 != uint32(m) {
					return fmt.Sprintf("%s has mode %04o, want %s", path, st.Mode&0o7777, want)
				}
			}
			if kind == 'E' {
				entries, err := os.ReadDir(path)
				if err == nil && len(entries) > 0 {
					return path + " is not empty"
				}
			}
		case 'F':
			if !exists || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				return path + " is not a regular file"
			}
		case 'L':
			if !exists || st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
				return path + " is not a symlink"
			}
		}
	}
	return ""
}

// stageLeft: is a ".ocdir-stage.*" directory left in dir or one level below?
func stageLeft(dir string, depth int) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".ocdir-stage.") {
			return true
		}
		if depth > 0 && e.IsDir() && stageLeft(filepath.Join(dir, e.Name()), depth-1) {
			return true
		}
	}
	return false
}

func countFds() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

func fcntl(fd uintptr, cmd int) int {
	r, _, _ := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), 0)
	return int(r)
}

// enterCase makes case idx's directory under base, makes it the working
// directory and runs the setup operations in it: the directory, an open
// *os.File of it (the caller closes it), or why that failed.
func enterCase(base string, idx int, setup string) (string, *os.File, string) {
	casedir := filepath.Join(base, fmt.Sprintf("%03d", idx))
	if err := os.Mkdir(casedir, 0o755); err != nil {
		return "", nil, "setup: " + err.Error()
	}
	if err := os.Chdir(casedir); err != nil {
		return "", nil, "setup: " + err.Error()
	}
	casef, err := os.Open(casedir)
	if err != nil {
		return "", nil, "setup: " + err.Error()
	}
	for _, op := range strings.Fields(setup) {
		if err := setupOp(casedir, op); err != nil {
			casef.Close()
			return "", nil, fmt.Sprintf("setup %s: %v", op, err)
		}
	}
	return casedir, casef, ""
}

// runCase: "" if the case passes, else why it fails.
func runCase(base string, idx int, c *confCase) string {
	casedir, casef, why := enterCase(base, idx, c.setup)
	if why != "" {
		return why
	}
	defer casef.Close()
	var err error
	path := strings.ReplaceAll(c.path, "%D", casedir)
	mode := c.mode
	if c.api == "at" {
		mode &= 0o7777 // open(2) ignores the rest
	}
	fmode, _ := fileMode(uint64(mode))
	before := countFds()
	f, created, err := OpenDir(casef, path, How{Flags: c.flags, Mode: fmode, ZeroMode: mode == 0, Resolve: c.resolve})
	var got syscall.Errno
	if err != nil {
		var pe *os.PathError
		if !errors.As(err, &pe) {
			return fmt.Sprintf("error %T is not *os.PathError", err)
		}
		if pe.Path != path {
			return fmt.Sprintf("PathError.Path is %q, want %q", pe.Path, path)
		}
		got, _ = pe.Err.(syscall.Errno)
	}
	switch {
	case c.errno != 0 && f != nil:
		f.Close()
		return "got a file, want " + c.errname
	case c.errno == 0 && f == nil:
		return fmt.Sprintf("got %v (errno %d), want a file", err, int(got))
	case c.errno != 0 && got != c.errno:
		return fmt.Sprintf("got errno %d (%v), want %s", int(got), got, c.errname)
	}
	if f != nil {
		why := checkFile(f, c, created)
		f.Close()
		if why != "" {
			return why
		}
	}
	if why := checkAfter(c.after); why != "" {
		return why
	}
	if countFds() != before {
		return "fd leaked"
	}
	if stageLeft(casedir, 1) {
		return "a .ocdir-stage.* directory was left behind"
	}
	return ""
}

func checkFile(f *os.File, c *confCase, created bool) string {
	var st, want syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return "fd is not a directory"
	}
	if fcntl(f.Fd(), syscall.F_GETFL)&syscall.O_ACCMODE != syscall.O_RDONLY {
		return "fd is not O_RDONLY"
	}
	if fcntl(f.Fd(), syscall.F_GETFD)&syscall.FD_CLOEXEC == 0 {
		return "fd is not O_CLOEXEC"
	}
	if c.fdIs != "-" {
		if err := syscall.Stat(c.fdIs, &want); err != nil {
			return "fd_is path missing"
		}
		if want.Dev != st.Dev || want.Ino != st.Ino {
			return "fd is not " + c.fdIs
		}
	}
	if c.api == "at2" && c.created >= 0 && created != (c.created == 1) {
		return fmt.Sprintf("created=%v, want %d", created, c.created)
	}
	return ""
}

func TestConformance(t *testing.T) {
	cases, err := readTable(tablePath())
	if err != nil {
		t.Fatalf("the conformance table: %v", err)
	}
	if len(cases) == 0 {
		t.Fatalf("no cases in %s", tablePath())
	}
	base, err := os.MkdirTemp(os.Getenv("OCDIR_TEST_DIR"), "go-conformance.")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	defer os.Chdir(cwd)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for i := range cases {
		c := &cases[i]
		t.Run(c.name, func(t *testing.T) {
			if why := skipReason(c); why != "" {
				t.Skip(why)
			}
			if _, ok := fileMode(uint64(c.mode)); !ok && c.api != "at" {
				t.Skipf("mode %#o: bits outside 07777 have no fs.FileMode (the C test checks EINVAL)", c.mode)
			}
			if why := runCase(base, i, c); why != "" {
				t.Error(why)
			}
		})
	}
}
