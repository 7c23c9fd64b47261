// SPDX-License-Identifier: MIT

package ocdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func tempDir(t *testing.T) (string, *os.File) {
	t.Helper()
	dir, err := os.MkdirTemp(os.Getenv("OCDIR_TEST_DIR"), "go-api.")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); os.RemoveAll(dir) })
	return dir, f
}

func sameFile(t *testing.T, f *os.File, path string) bool {
	t.Helper()
	a, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(path)
	if err != nil {
		return false
	}
	return os.SameFile(a, b)
}

func TestOpenDirCreatesThenOpens(t *testing.T) {
	dir, _ := tempDir(t)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(dir, "a")
	f, created, err := OpenDir(nil, p, How{Mode: 0o750})
	if err != nil || !created {
		t.Fatalf("OpenDir: %v, created %v", err, created)
	}
	if !sameFile(t, f, p) || f.Name() != p {
		t.Errorf("the file is not %s (name %q)", p, f.Name())
	}
	if st, _ := f.Stat(); st.Mode().Perm() != 0o750 || !st.IsDir() {
		t.Errorf("mode %v", st.Mode())
	}
	f.Close()
	f, created, err = OpenDir(nil, p, How{Mode: 0o750})
	if err != nil || created {
		t.Fatalf("second OpenDir: %v, created %v", err, created)
	}
	f.Close()
}

func TestOpenDirRelativeToDir(t *testing.T) {
	dir, d := tempDir(t)
	f, created, err := OpenDir(d, "b", How{Mode: 0o700})
	if err != nil || !created {
		t.Fatalf("OpenDir: %v, created %v", err, created)
	}
	defer f.Close()
	if f.Name() != filepath.Join(dir, "b") || !sameFile(t, f, filepath.Join(dir, "b")) {
		t.Errorf("name %q", f.Name())
	}
}

func TestErrorsArePathErrorsWithErrno(t *testing.T) {
	dir, d := tempDir(t)
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := OpenDir(d, "file", How{Mode: 0o755})
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Err != syscall.ENOTDIR || pe.Path != "file" {
		t.Fatalf("got %#v, want a PathError with ENOTDIR for \"file\"", err)
	}
	os.Mkdir(filepath.Join(dir, "c"), 0o755)
	_, _, err = OpenDir(d, "c", How{Flags: syscall.O_EXCL, Mode: 0o755})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL on an existing directory: %v, want EEXIST", err)
	}
	_, _, err = OpenDir(d, "../escape", How{Mode: 0o755, Resolve: ResolveBeneath})
	if !errors.Is(err, syscall.EXDEV) {
		t.Errorf("RESOLVE_BENEATH escape: %v, want EXDEV", err)
	}
}

func TestMkPath(t *testing.T) {
	dir, d := tempDir(t)
	f, created, err := MkPath(d, "x/y/z", How{Mode: 0o700})
	if err != nil || !created {
		t.Fatalf("MkPath: %v, created %v", err, created)
	}
	if !sameFile(t, f, filepath.Join(dir, "x/y/z")) {
		t.Error("not the leaf")
	}
	f.Close()
	f, created, err = MkPath(nil, filepath.Join(dir, "x/y/z"), How{Mode: 0o700})
	if err != nil || created {
		t.Fatalf("MkPath again: %v, created %v", err, created)
	}
	f.Close()
	os.WriteFile(filepath.Join(dir, "x/f"), nil, 0o644)
	if _, _, err := MkPath(d, "x/f/g", How{Mode: 0o700}); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("through a file: %v, want ENOTDIR", err)
	}
}

func TestMkdir(t *testing.T) {
	dir, d := tempDir(t)
	if created, err := Mkdir(d, "m", How{Mode: 0o755}); err != nil || !created {
		t.Fatalf("Mkdir: %v %v", created, err)
	}
	if created, err := Mkdir(nil, filepath.Join(dir, "m"), How{Mode: 0o755}); err != nil || created {
		t.Fatalf("Mkdir again: %v %v", created, err)
	}
}

func TestPreparePublish(t *testing.T) {
	dir, d := tempDir(t)
	p, err := Prepare(d, "rel", How{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	defer p.File().Close()
	if _, err := os.Lstat(filepath.Join(dir, "rel")); err == nil {
		t.Error("visible before Publish")
	}
	fd, err := syscall.Openat(int(p.File().Fd()), "inside", syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
	if err := p.Publish(); err != nil {
		t.Fatal(err)
	}
	if !sameFile(t, p.File(), filepath.Join(dir, "rel")) {
		t.Error("published directory is not the prepared one")
	}
	if _, err := os.Stat(filepath.Join(dir, "rel", "inside")); err != nil {
		t.Error(err)
	}
	if err := p.Discard(); err != nil {
		t.Errorf("Discard after Publish: %v", err)
	}
}

func TestPrepareDiscard(t *testing.T) {
	dir, d := tempDir(t)
	p, err := Prepare(d, "gone", How{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	defer p.File().Close()
	os.Mkdir(filepath.Join(dir, "gone"), 0o755)
	if err := p.Publish(); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Publish onto a taken name: %v, want EEXIST", err)
	}
	if err := p.Discard(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "gone" {
		t.Errorf("left behind: %v", entries)
	}
}

func TestBackend(t *testing.T) {
	native, reason := Backend()
	if reason == "" {
		t.Error("no reason")
	}
	if os.Getenv("OCDIR_FORCE_EMULATION") == "1" && native {
		t.Error("native despite OCDIR_FORCE_EMULATION=1")
	}
	t.Logf("native=%v: %s", native, reason)
}

// empty fails unless dir has no entries.
func empty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s is not empty: %v", dir, names)
	}
}

func TestNULIsEINVALAndCreatesNothing(t *testing.T) {
	dir, d := tempDir(t)
	calls := map[string]func(path string) error{
		"OpenDir": func(p string) error { f, _, err := OpenDir(d, p, How{}); f.Close(); return err },
		"MkPath":  func(p string) error { f, _, err := MkPath(d, p, How{}); f.Close(); return err },
		"Mkdir":   func(p string) error { _, err := Mkdir(d, p, How{}); return err },
		"OpenDirSetup": func(p string) error {
			f, _, err := OpenDirSetup(d, p, How{}, func(*os.File, string, bool) error { return nil })
			f.Close()
			return err
		},
		"MkPathSetup": func(p string) error {
			f, _, err := MkPathSetup(d, p, How{}, func(*os.File, string, bool) error { return nil })
			f.Close()
			return err
		},
		"Prepare": func(p string) error {
			pr, err := Prepare(d, p, How{})
			if err == nil {
				pr.Publish()
				pr.File().Close()
			}
			return err
		},
	}
	for name, call := range calls {
		for _, p := range []string{"a\x00b", "x/y\x00", "\x00"} {
			err := call(p)
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Err != syscall.EINVAL || pe.Path != p {
				t.Errorf("%s(%q): %#v, want a *fs.PathError with EINVAL", name, p, err)
			}
			empty(t, dir)
		}
	}
}

func TestModeIsFileMode(t *testing.T) {
	dir, d := tempDir(t)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, c := range []struct {
		name string
		how  How
		want uint32
	}{
		{"zero", How{}, 0o755},
		{"perm", How{Mode: 0o750}, 0o750},
		{"sticky", How{Mode: fs.ModeSticky | 0o777}, 0o1755},
		{"sticky-only", How{Mode: fs.ModeSticky}, 0o1000},
		{"dir-bit-ignored", How{Mode: fs.ModeDir | 0o700}, 0o700},
		{"setgid-dropped", How{Mode: fs.ModeSetgid | fs.ModeSetuid | 0o755}, 0o755},
		{"zero-mode", How{ZeroMode: true}, 0},
		{"zero-mode-ignored", How{Mode: 0o711, ZeroMode: true}, 0o711},
	} {
		f, created, err := OpenDir(d, c.name, c.how)
		if err != nil || !created {
			t.Errorf("%s: %v, created %v", c.name, err, created)
			continue
		}
		var st syscall.Stat_t
		syscall.Fstat(int(f.Fd()), &st)
		f.Close()
		if st.Mode&0o7777 != c.want {
			t.Errorf("%s: mode %04o, want %04o", c.name, st.Mode&0o7777, c.want)
		}
	}
	// MkPath's leaf and Prepare too.
	f, _, err := MkPath(d, "p/q", How{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	p, err := Prepare(d, "r", How{Mode: fs.ModeSticky | 0o770})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(); err != nil {
		t.Fatal(err)
	}
	p.File().Close()
	for path, want := range map[string]fs.FileMode{"p/q": 0o755, "r": fs.ModeSticky | 0o750} {
		st, err := os.Stat(filepath.Join(dir, path))
		if err != nil || st.Mode()&(fs.ModePerm|fs.ModeSticky) != want {
			t.Errorf("%s: %v %v, want %v", path, st.Mode(), err, want)
		}
	}
}

func TestErrorsIsErrExistErrNotExist(t *testing.T) {
	dir, d := tempDir(t)
	os.Mkdir(filepath.Join(dir, "there"), 0o755)
	type check struct {
		name string
		err  error
		is   error
	}
	var checks []check
	_, _, err := OpenDir(d, "there", How{Flags: syscall.O_EXCL})
	checks = append(checks, check{"OpenDir O_EXCL", err, fs.ErrExist})
	_, _, err = OpenDir(d, "missing/x", How{})
	checks = append(checks, check{"OpenDir missing parent", err, fs.ErrNotExist})
	_, _, err = MkPath(d, "there", How{Flags: syscall.O_EXCL})
	checks = append(checks, check{"MkPath O_EXCL", err, fs.ErrExist})
	_, err = Mkdir(d, "missing/x", How{})
	checks = append(checks, check{"Mkdir missing parent", err, fs.ErrNotExist})
	_, err = Prepare(d, "there", How{})
	checks = append(checks, check{"Prepare existing", err, fs.ErrExist})
	_, _, err = OpenDirSetup(d, "missing/x", How{}, func(*os.File, string, bool) error { return nil })
	checks = append(checks, check{"OpenDirSetup missing parent", err, fs.ErrNotExist})
	for _, c := range checks {
		var pe *fs.PathError
		if !errors.Is(c.err, c.is) || !errors.As(c.err, &pe) {
			t.Errorf("%s: %#v, want a *fs.PathError that errors.Is %v", c.name, c.err, c.is)
		}
	}
}

// A closed dir is refused (fs.ErrClosed), not handed to C as a number.
func TestClosedDirIsErrClosed(t *testing.T) {
	dir, _ := tempDir(t)
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	_, _, err = OpenDir(d, "x", How{})
	if !errors.Is(err, fs.ErrClosed) {
		t.Errorf("OpenDir on a closed dir: %v, want fs.ErrClosed", err)
	}
	if _, err = Mkdir(d, "x", How{}); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Mkdir on a closed dir: %v, want fs.ErrClosed", err)
	}
	empty(t, dir)
}

// dir stays open during the C call: a Close from the setup func (in the
// middle of the call) releases the number only once the call returned.
func TestDirPinnedDuringCall(t *testing.T) {
	for _, mk := range []string{"open", "mkpath"} {
		dir, _ := tempDir(t)
		d, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var want syscall.Stat_t
		syscall.Fstat(int(d.Fd()), &want)
		n := int(d.Fd())
		during := error(nil)
		setup := func(*os.File, string, bool) error {
			d.Close()
			var st syscall.Stat_t
			if err := syscall.Fstat(n, &st); err != nil {
				during = err
			} else if st.Ino != want.Ino || st.Dev != want.Dev {
				during = errors.New("the number names another file")
			}
			return nil
		}
		var f *os.File
		if mk == "open" {
			f, _, err = OpenDirSetup(d, "x", How{}, setup)
		} else {
			f, _, err = MkPathSetup(d, "x", How{}, setup)
		}
		if err != nil {
			t.Fatalf("%s: %v", mk, err)
		}
		f.Close()
		if during != nil {
			t.Errorf("%s: dir's descriptor during the call after Close: %v, want it still open", mk, during)
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(n, &st); err == nil && st.Ino == want.Ino {
			t.Errorf("%s: dir's descriptor still open after the call", mk)
		}
	}
}

// (_Ctype_int is cgo's Go name of C.int, which test files cannot write.)
func TestRetryEINTR(t *testing.T) {
	n := 0
	r, err := retryEINTR(func() (_Ctype_int, error) {
		n++
		if n < 3 {
			return -1, syscall.EINTR
		}
		return 7, nil
	})
	if r != 7 || err != nil || n != 3 {
		t.Errorf("got %d %v after %d calls, want 7 <nil> after 3", r, err, n)
	}
	n = 0
	r, err = retryEINTR(func() (_Ctype_int, error) { n++; return -1, syscall.EACCES })
	if r != -1 || err != syscall.EACCES || n != 1 {
		t.Errorf("EACCES: got %d %v after %d calls", r, err, n)
	}
}

// EINTR from a setup func repeats the whole call, as EINTR from the
// library does.
func TestSetupEINTRRepeats(t *testing.T) {
	dir, d := tempDir(t)
	n := 0
	f, created, err := OpenDirSetup(d, "x", How{}, func(*os.File, string, bool) error {
		n++
		if n == 1 {
			return syscall.EINTR
		}
		return nil
	})
	if err != nil || !created || n != 2 {
		t.Fatalf("got %v, created %v, setup ran %d times; want success after 2", err, created, n)
	}
	defer f.Close()
	if !sameFile(t, f, filepath.Join(dir, "x")) {
		t.Error("not x")
	}
}

// A func that always answers EINTR: the call is repeated, but not forever.
func TestSetupEINTRBounded(t *testing.T) {
	dir, d := tempDir(t)
	n := 0
	f, _, err := OpenDirSetup(d, "x", How{}, func(*os.File, string, bool) error {
		if n++; n > 1000 {
			return nil // unbounded: end it here, and fail below
		}
		return syscall.EINTR
	})
	if f != nil {
		f.Close()
	}
	if !errors.Is(err, syscall.EINTR) || n != maxSetupEINTR {
		t.Fatalf("got %v after %d runs of the func; want EINTR after %d", err, n, maxSetupEINTR)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}

func TestSetupFuncErrors(t *testing.T) {
	dir, d := tempDir(t)
	mine := errors.New("not today")
	for _, c := range []struct {
		name   string
		ret    error
		errno  syscall.Errno // what errors.As finds in the result
		target error         // what errors.Is must match
	}{
		{"errno", syscall.EROFS, syscall.EROFS, syscall.EROFS},
		{"patherror", &os.PathError{Op: "chown", Path: "x", Err: syscall.EPERM}, syscall.EPERM, fs.ErrPermission},
		{"other", mine, 0, mine},
	} {
		for _, call := range []string{"open", "mkpath"} {
			var (
				f   *os.File
				err error
			)
			setup := func(*os.File, string, bool) error { return c.ret }
			if call == "open" {
				f, _, err = OpenDirSetup(d, "x", How{}, setup)
			} else {
				f, _, err = MkPathSetup(d, "p/x", How{}, setup)
			}
			if f != nil {
				f.Close()
				t.Errorf("%s/%s: got a file", call, c.name)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || !errors.Is(err, c.target) || pe.Err != c.ret {
				t.Errorf("%s/%s: %#v, want a *fs.PathError holding %v", call, c.name, err, c.ret)
			}
			var errno syscall.Errno
			if errors.As(err, &errno) != (c.errno != 0) || errno != c.errno {
				t.Errorf("%s/%s: errno %v, want %v", call, c.name, errno, c.errno)
			}
			empty(t, dir)
		}
	}
}

func TestSetupFuncPanicIsRepanicked(t *testing.T) {
	dir, d := tempDir(t)
	for _, call := range []string{"open", "mkpath"} {
		calls := 0
		v := func() (v interface{}) {
			defer func() { v = recover() }()
			setup := func(*os.File, string, bool) error { calls++; panic("boom") }
			if call == "open" {
				OpenDirSetup(d, "x", How{}, setup)
			} else {
				MkPathSetup(d, "p/q/x", How{}, setup)
			}
			return nil
		}()
		if v != "boom" || calls != 1 {
			t.Errorf("%s: recovered %v after %d calls, want \"boom\" after 1", call, v, calls)
		}
		empty(t, dir)
	}
}

// panic(nil) is a panic too (before Go 1.21 recover() gives nil for it):
// the call fails, removes what it made, and panics again in the caller.
func TestSetupFuncPanicNilIsRepanicked(t *testing.T) {
	dir, d := tempDir(t)
	for _, call := range []string{"open", "mkpath"} {
		returned := false
		func() {
			defer func() { recover() }()
			setup := func(*os.File, string, bool) error { panic(nil) }
			var f *os.File
			if call == "open" {
				f, _, _ = OpenDirSetup(d, "x", How{}, setup)
			} else {
				f, _, _ = MkPathSetup(d, "p/q/x", How{}, setup)
			}
			returned = true
			if f != nil {
				f.Close()
			}
		}()
		if returned {
			t.Errorf("%s: a setup func that panicked with nil let the call return", call)
		}
		empty(t, dir)
	}
}

// The func's *os.File is its own: closing it leaves the library's
// descriptor (and so the returned one) alone.
func TestSetupFuncFileIsADuplicate(t *testing.T) {
	dir, d := tempDir(t)
	var inside syscall.Stat_t
	f, created, err := OpenDirSetup(d, "x", How{Mode: 0o700}, func(dir *os.File, path string, leaf bool) error {
		if path != "x" || !leaf {
			return fmt.Errorf("path %q leaf %v", path, leaf)
		}
		syscall.Fstat(int(dir.Fd()), &inside)
		if err := dir.Chmod(0o751); err != nil {
			return err
		}
		return dir.Close()
	})
	if err != nil || !created {
		t.Fatalf("%v, created %v", err, created)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Ino != inside.Ino || st.Mode&0o7777 != 0o751 {
		t.Errorf("returned fd: %v, ino %d (setup saw %d), mode %04o", err, st.Ino, inside.Ino, st.Mode&0o7777)
	}
	if !sameFile(t, f, filepath.Join(dir, "x")) {
		t.Error("not x")
	}
}

func TestMkPathSetupLevels(t *testing.T) {
	_, d := tempDir(t)
	var seen []string
	f, created, err := MkPathSetup(d, "a/b/c", How{}, func(dir *os.File, path string, leaf bool) error {
		seen = append(seen, fmt.Sprintf("%s:%v", path, leaf))
		return nil
	})
	if err != nil || !created {
		t.Fatalf("%v, created %v", err, created)
	}
	f.Close()
	if fmt.Sprint(seen) != "[a:false a/b:false a/b/c:true]" {
		t.Errorf("setup saw %v", seen)
	}
	// Nothing new: setup does not run.
	seen = nil
	f, created, err = MkPathSetup(d, "a/b/c", How{}, func(*os.File, string, bool) error {
		seen = append(seen, "called")
		return nil
	})
	if err != nil || created || seen != nil {
		t.Fatalf("again: %v, created %v, setup %v", err, created, seen)
	}
	f.Close()
}

// After a Discard or Publish that returned nil the handle is freed: the
// package never passes it to C again.
func TestFinishedPreparedNeverReachesC(t *testing.T) {
	dir, d := tempDir(t)
	for _, first := range []string{"discard", "publish"} {
		p, err := Prepare(d, first, How{})
		if err != nil {
			t.Fatal(err)
		}
		if first == "discard" {
			err = p.Discard()
		} else {
			err = p.Publish()
		}
		if err != nil || p.StagingLeft() != nil {
			t.Fatalf("%s: %v, staging %v", first, err, p.StagingLeft())
		}
		n := discardCalls
		if err := p.Discard(); err != nil {
			t.Errorf("Discard after %s: %v, want nil", first, err)
		}
		if err := p.Publish(); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Publish after %s: %v, want EINVAL", first, err)
		}
		if discardCalls != n {
			t.Errorf("Discard after %s called the library", first)
		}
		p.File().Close()
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "publish" {
		t.Errorf("left: %v", entries)
	}
}

// The staging directory moved away by someone else: Discard succeeds and
// says so (ENOENT), as ocdir.h's errno after success.
func TestStagingLeft(t *testing.T) {
	dir, d := tempDir(t)
	p, err := Prepare(d, "n", How{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.File().Close()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), ".ocdir-stage.") {
		t.Fatalf("no staging directory: %v", entries)
	}
	away := t.TempDir()
	if err := os.Rename(filepath.Join(dir, entries[0].Name()), filepath.Join(away, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := p.Discard(); err != nil {
		t.Fatalf("Discard: %v", err)
	}
	if err := p.StagingLeft(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("StagingLeft: %v, want ENOENT", err)
	}
	if err := p.Discard(); err != nil {
		t.Errorf("second Discard: %v", err)
	}
}
