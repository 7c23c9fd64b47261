// SPDX-License-Identifier: MIT

package ocdir

// The calls table (build/tests/calls.tsv, written by `build/tests/conformance
// --print-calls` from tests/conformance/calls.h; $OCDIR_CALLS_TABLE): every
// call of the library with its expected errno, fd, created flag, after
// checks and setup counts, run through this package's API (OpenDir, Mkdir,
// MkPath, OpenDirSetup, MkPathSetup, Prepare + Publish/Discard). One subtest
// per case, each in a fresh directory below $OCDIR_TEST_DIR, umask 022.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

type callCase struct {
	name, call, setup, path string
	flags                   int
	mode                    uint64
	resolve, options        uint64
	action                  string
	errno                   syscall.Errno
	fdIs                    string
	created                 int
	after                   string
	setupCalls              string
	need                    int
}

// The need bits of the table (as the conformance table's).
const (
	needRoot              = 1
	needUser              = 2
	needMount             = 4
	needRootSetup         = 8
	needProtectedSymlinks = 16
)

func callsTablePath() string {
	if p := os.Getenv("OCDIR_CALLS_TABLE"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "build", "tests", "calls.tsv")
}

func readCalls(path string) ([]callCase, error) {
	rows, err := tableRows(path, 15)
	if err != nil {
		return nil, err
	}
	var cases []callCase
	for _, x := range rows {
		flags, e1 := strconv.Atoi(x[4])
		mode, e2 := strconv.ParseUint(x[5], 8, 64)
		resolve, e3 := strconv.ParseUint(x[6], 10, 64)
		options, e4 := strconv.ParseUint(x[7], 10, 64)
		errno, e5 := strconv.Atoi(x[9])
		created, e6 := strconv.Atoi(x[11])
		need, e7 := strconv.Atoi(x[14])
		if err := firstError(e1, e2, e3, e4, e5, e6, e7); err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, x, err)
		}
		cases = append(cases, callCase{name: x[0], call: x[1], setup: x[2], path: x[3],
			flags: flags, mode: mode, resolve: resolve, options: options, action: x[8],
			errno: syscall.Errno(errno), fdIs: x[10], created: created, after: x[12],
			setupCalls: x[13], need: need})
	}
	return cases, nil
}

func callSkip(c *callCase) string {
	root := os.Geteuid() == 0
	switch {
	case c.need&needRoot != 0 && !root:
		return "root only"
	case c.need&needUser != 0:
		return "non-root only (the C test's --user run covers it)"
	case c.need&needMount != 0:
		return "needs a private mount namespace (the C test runs it)"
	case c.need&needRootSetup != 0:
		return "setup needs root-owned files of other users (the C test runs it)"
	}
	if c.need&needProtectedSymlinks != 0 {
		b, err := os.ReadFile("/proc/sys/fs/protected_symlinks")
		if err != nil || !strings.HasPrefix(string(b), "1") {
			return "fs.protected_symlinks is off"
		}
	}
	if _, ok := fileMode(c.mode); !ok {
		return fmt.Sprintf("mode %#o: bits outside 07777 have no fs.FileMode (the C test checks them)", c.mode)
	}
	return ""
}

// errnoIn is the errno an error of this package holds (0 for nil).
func errnoIn(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return syscall.Errno(0xffff) // no errno at all: never expected
	}
	return errno
}

// callSetup is the setup func of an action, counting its calls.
func callSetup(action string, leafCalls, interCalls *int) (SetupFunc, error) {
	kind, arg, _ := strings.Cut(action, ":")
	var n uint64
	if arg != "" {
		var err error
		base := 8
		if kind == "fail" {
			base = 10
		}
		if n, err = strconv.ParseUint(arg, base, 32); err != nil {
			return nil, err
		}
	}
	switch kind {
	case "-", "chmod", "leafchmod", "fail":
	default:
		return nil, fmt.Errorf("unknown action %q for a setup call", action)
	}
	return func(dir *os.File, path string, leaf bool) error {
		if leaf {
			*leafCalls++
		} else {
			*interCalls++
		}
		switch {
		case kind == "chmod" || kind == "leafchmod" && leaf:
			return syscall.Fchmod(int(dir.Fd()), uint32(n))
		case kind == "fail" && leaf:
			return syscall.Errno(n)
		}
		return nil
	}, nil
}

// fillAt puts a file f and a directory sub holding a file g into fd.
func fillAt(fd int) error {
	f, err := syscall.Openat(fd, "f", syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	syscall.Close(f)
	if err := syscall.Mkdirat(fd, "sub", 0o755); err != nil {
		return err
	}
	sub, err := syscall.Openat(fd, "sub", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(sub)
	g, err := syscall.Openat(sub, "g", syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	return syscall.Close(g)
}

// runPrepared: prepare, the action, then publish or discard. The file is
// the prepared (published) directory, or nil; err is the error the row's
// err column is about.
func runPrepared(casef *os.File, path string, how How, c *callCase) (*os.File, error, string) {
	p, err := Prepare(casef, path, how)
	if err != nil {
		return nil, err, ""
	}
	f := p.File()
	kind, arg, _ := strings.Cut(c.action, ":")
	switch kind {
	case "-":
	case "chmod":
		m, _ := strconv.ParseUint(arg, 8, 32)
		if err := syscall.Fchmod(int(f.Fd()), uint32(m)); err != nil {
			p.Discard()
			f.Close()
			return nil, nil, "action chmod: " + err.Error()
		}
	case "fill":
		if err := fillAt(int(f.Fd())); err != nil {
			p.Discard()
			f.Close()
			return nil, nil, "action fill: " + err.Error()
		}
	case "plant":
		if err := os.Mkdir(arg, 0o755); err != nil {
			p.Discard()
			f.Close()
			return nil, nil, "action plant: " + err.Error()
		}
	default:
		p.Discard()
		f.Close()
		return nil, nil, "unknown action " + c.action
	}
	if c.call == "prepare-discard" {
		err := p.Discard()
		f.Close()
		if err != nil {
			return nil, nil, "discard: " + err.Error()
		}
		return nil, nil, ""
	}
	err = p.Publish()
	if err != nil {
		if kind == "plant" {
			// The handle stays valid after a failed publish: discard it.
			if derr := p.Discard(); derr != nil {
				f.Close()
				return nil, err, "discard after the failed publish: " + derr.Error()
			}
		} else {
			p.Discard()
		}
		f.Close()
		return nil, err, ""
	}
	return f, nil, ""
}

// runCall: "" if the case passes, else why it fails.
func runCall(base string, idx int, c *callCase) string {
	casedir, casef, why := enterCase(base, idx, c.setup)
	if why != "" {
		return why
	}
	defer casef.Close()
	var err error
	path := strings.ReplaceAll(c.path, "%D", casedir)
	fmode, _ := fileMode(c.mode)
	how := How{Flags: c.flags, Mode: fmode, ZeroMode: c.mode == 0, Resolve: c.resolve, Options: c.options}
	leafCalls, interCalls := 0, 0
	var (
		f       *os.File
		created bool
	)
	before := countFds()
	switch c.call {
	case "open":
		f, created, err = OpenDir(casef, path, how)
	case "mkpath":
		f, created, err = MkPath(casef, path, how)
	case "mkdir":
		created, err = Mkdir(casef, path, how)
	case "open-setup", "mkpath-setup":
		fn, ferr := callSetup(c.action, &leafCalls, &interCalls)
		if ferr != nil {
			return ferr.Error()
		}
		if c.call == "open-setup" {
			f, created, err = OpenDirSetup(casef, path, how, fn)
		} else {
			f, created, err = MkPathSetup(casef, path, how, fn)
		}
	case "prepare-publish", "prepare-discard":
		f, err, why = runPrepared(casef, path, how, c)
		if why != "" {
			return why
		}
	default:
		return "unknown call " + c.call
	}
	if err != nil {
		var pe *os.PathError
		if !errors.As(err, &pe) {
			return fmt.Sprintf("error %T (%v) is not *fs.PathError", err, err)
		}
	}
	got := errnoIn(err)
	closeFile := func() {
		if f != nil {
			f.Close()
			f = nil
		}
	}
	defer closeFile()
	switch {
	case got != c.errno:
		return fmt.Sprintf("got errno %d (%v), want %d (%v)", int(got), err, int(c.errno), c.errno)
	case c.errno == 0 && f == nil && c.fdIs != "-":
		return "no file, want one"
	}
	if f != nil {
		if why := checkCallFile(f, c); why != "" {
			return why
		}
	}
	if c.errno == 0 && c.created >= 0 && created != (c.created == 1) {
		return fmt.Sprintf("created=%v, want %d", created, c.created)
	}
	if c.setupCalls != "-" {
		if s := fmt.Sprintf("%d/%d", leafCalls, interCalls); s != c.setupCalls {
			return fmt.Sprintf("setup ran %s times (leaf/intermediate), want %s", s, c.setupCalls)
		}
	}
	if why := checkAfter(c.after); why != "" {
		return why
	}
	closeFile()
	if countFds() != before {
		return "fd leaked"
	}
	if stageLeft(casedir, 1) {
		return "a .ocdir-stage.* directory was left behind"
	}
	return ""
}

func checkCallFile(f *os.File, c *callCase) string {
	var st, want syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return "fd is not a directory"
	}
	fl := fcntl(f.Fd(), syscall.F_GETFL)
	isPath := fl&oPath != 0
	if isPath && c.flags&oPath == 0 {
		return "fd is O_PATH, not asked for"
	}
	if !isPath && fl&syscall.O_ACCMODE != syscall.O_RDONLY {
		return "fd is not O_RDONLY"
	}
	// Close-on-exec unless NoCloexec, and then only if flags ask for it.
	wantCloexec := c.options&NoCloexec == 0 || c.flags&syscall.O_CLOEXEC != 0
	if cloexec := fcntl(f.Fd(), syscall.F_GETFD)&syscall.FD_CLOEXEC != 0; cloexec != wantCloexec {
		return fmt.Sprintf("fd close-on-exec is %v, want %v", cloexec, wantCloexec)
	}
	if c.fdIs != "-" {
		if err := syscall.Stat(c.fdIs, &want); err != nil {
			return "fd_is path " + c.fdIs + " missing"
		}
		if want.Dev != st.Dev || want.Ino != st.Ino {
			return "fd is not " + c.fdIs
		}
	}
	return ""
}

func TestCalls(t *testing.T) {
	path := callsTablePath()
	cases, err := readCalls(path)
	if errors.Is(err, os.ErrNotExist) && os.Getenv("OCDIR_CALLS_TABLE") == "" {
		t.Skipf("no calls table at %s and OCDIR_CALLS_TABLE unset (make writes it)", path)
	}
	if err != nil {
		t.Fatalf("the calls table: %v", err)
	}
	if len(cases) == 0 {
		t.Fatalf("no cases in %s", path)
	}
	base, err := os.MkdirTemp(os.Getenv("OCDIR_TEST_DIR"), "go-calls.")
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
			if why := callSkip(c); why != "" {
				t.Skip(why)
			}
			if why := runCall(base, i, c); why != "" {
				t.Error(why)
			}
		})
	}
}

// oPath is Linux's O_PATH (package syscall has no name for it).
const oPath = 0x200000
