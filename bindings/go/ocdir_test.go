// SPDX-License-Identifier: MIT

package ocdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
