// SPDX-License-Identifier: MIT

package ocdir

// The fd-identity test: with the library of `make test-hooks`
// (build/test-hooks/libocdir.so.1; LD_LIBRARY_PATH=build/test-hooks) and
// OCDIR_TEST_SWAP_AFTER=1 at the time of the call, every call that hands
// out a descriptor to a name moves that name to NAME.ocdir-test-moved and
// makes a fresh directory at NAME just before it returns. The file this
// package returns must be the moved directory (the library's descriptor),
// never the fresh one (what a re-open by name would give). Without the
// hook NAME.ocdir-test-moved never appears: SKIP, or FAIL when
// OCDIR_TEST_HOOKS_REQUIRED=1.

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// swapped runs call with OCDIR_TEST_SWAP_AFTER=1 set.
func swapped(t *testing.T, call func() (*os.File, error)) *os.File {
	t.Helper()
	os.Setenv("OCDIR_TEST_SWAP_AFTER", "1")
	f, err := call()
	os.Unsetenv("OCDIR_TEST_SWAP_AFTER")
	if err != nil {
		t.Fatalf("the call: %v", err)
	}
	return f
}

// checkIdentity: f is dir/path.ocdir-test-moved, not dir/path.
func checkIdentity(t *testing.T, f *os.File, dir, path string) {
	t.Helper()
	var got, moved, fresh syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &got); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, path)
	if err := syscall.Lstat(full+".ocdir-test-moved", &moved); err != nil {
		if os.Getenv("OCDIR_TEST_HOOKS_REQUIRED") == "1" {
			t.Fatalf("%s.ocdir-test-moved: %v: the library has no test hook, but OCDIR_TEST_HOOKS_REQUIRED=1", path, err)
		}
		t.Skipf("the library has no test hook (%s.ocdir-test-moved: %v; make test-hooks, LD_LIBRARY_PATH=build/test-hooks)", path, err)
	}
	if err := syscall.Lstat(full, &fresh); err != nil {
		t.Fatalf("%s: %v (the hook makes a fresh one)", path, err)
	}
	if got.Dev != moved.Dev || got.Ino != moved.Ino {
		t.Errorf("the file is not the directory the call made (%s.ocdir-test-moved)", path)
	}
	if got.Dev == fresh.Dev && got.Ino == fresh.Ino {
		t.Errorf("the file is the fresh %s: re-opened by name", path)
	}
}

func TestIdentityOpenDir(t *testing.T) {
	dir, d := tempDir(t)
	f := swapped(t, func() (*os.File, error) { f, _, err := OpenDir(d, "x", How{}); return f, err })
	defer f.Close()
	checkIdentity(t, f, dir, "x")
}

func TestIdentityMkPath(t *testing.T) {
	dir, d := tempDir(t)
	f := swapped(t, func() (*os.File, error) { f, _, err := MkPath(d, "a/x", How{}); return f, err })
	defer f.Close()
	checkIdentity(t, f, dir, "a/x")
}

func TestIdentityOpenDirSetup(t *testing.T) {
	dir, d := tempDir(t)
	ran := 0
	f := swapped(t, func() (*os.File, error) {
		f, _, err := OpenDirSetup(d, "x", How{}, func(*os.File, string, bool) error { ran++; return nil })
		return f, err
	})
	defer f.Close()
	if ran != 1 {
		t.Errorf("setup ran %d times", ran)
	}
	checkIdentity(t, f, dir, "x")
}

func TestIdentityMkPathSetup(t *testing.T) {
	dir, d := tempDir(t)
	ran := 0
	f := swapped(t, func() (*os.File, error) {
		f, _, err := MkPathSetup(d, "a/x", How{}, func(*os.File, string, bool) error { ran++; return nil })
		return f, err
	})
	defer f.Close()
	if ran != 2 {
		t.Errorf("setup ran %d times, want 2", ran)
	}
	checkIdentity(t, f, dir, "a/x")
}

func TestIdentityPublish(t *testing.T) {
	dir, d := tempDir(t)
	p, err := Prepare(d, "x", How{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.File().Close()
	f := swapped(t, func() (*os.File, error) { err := p.Publish(); return p.File(), err })
	checkIdentity(t, f, dir, "x")
}
