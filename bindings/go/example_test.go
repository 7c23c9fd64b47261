// SPDX-License-Identifier: MIT

package ocdir_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"syscall"

	"ocdir.invalid/ocdir"
)

// scratch is a new empty directory for an example, opened.
func scratch() (string, *os.File) {
	dir, err := os.MkdirTemp(os.Getenv("OCDIR_TEST_DIR"), "go-example.")
	if err != nil {
		log.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	return dir, d
}

func ExampleMkPath() {
	dir, d := scratch()
	defer os.RemoveAll(dir)
	defer d.Close()

	// mkdir -p app/cache, and the leaf's descriptor.
	cache, created, err := ocdir.MkPath(d, "app/cache", ocdir.How{Mode: 0o750})
	if err != nil {
		log.Fatal(err)
	}
	defer cache.Close()
	fmt.Println("created:", created, filepath.Base(cache.Name()))

	// Again: it exists, nothing is created.
	again, created, err := ocdir.MkPath(d, "app/cache", ocdir.How{Mode: 0o750})
	if err != nil {
		log.Fatal(err)
	}
	again.Close()
	fmt.Println("created:", created)
	// Output:
	// created: true cache
	// created: false
}

func ExampleOpenDir() {
	dir, d := scratch()
	defer os.RemoveAll(dir)
	defer d.Close()

	// O_EXCL: the directory must be new.
	how := ocdir.How{Flags: syscall.O_EXCL, Mode: 0o700}
	f, _, err := ocdir.OpenDir(d, "spool", how)
	if err != nil {
		log.Fatal(err)
	}
	f.Close()
	_, _, err = ocdir.OpenDir(d, "spool", how)
	fmt.Println(errors.Is(err, fs.ErrExist), err)

	// A missing parent.
	_, _, err = ocdir.OpenDir(d, "no/such", ocdir.How{})
	fmt.Println(errors.Is(err, fs.ErrNotExist), err)
	// Output:
	// true opendir spool: file exists
	// true opendir no/such: no such file or directory
}

func ExampleOpenDirSetup() {
	dir, d := scratch()
	defer os.RemoveAll(dir)
	defer d.Close()

	// install -d -m 2770: the final mode is set before anyone else can
	// use the directory (a fchmod is not subject to the umask).
	f, created, err := ocdir.OpenDirSetup(d, "shared", ocdir.How{},
		func(dir *os.File, path string, leaf bool) error {
			return dir.Chmod(fs.ModeSetgid | 0o770)
		})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	fmt.Println(created, st.Mode())

	// An error of the setup func fails the call; what it made is gone.
	_, _, err = ocdir.OpenDirSetup(d, "other", ocdir.How{},
		func(dir *os.File, path string, leaf bool) error {
			return syscall.EDQUOT
		})
	_, serr := os.Stat(filepath.Join(dir, "other"))
	fmt.Println(err, errors.Is(serr, fs.ErrNotExist))
	// Output:
	// true dgrwxrwx---
	// opendir other: disk quota exceeded true
}

func ExampleMkPathSetup() {
	dir, d := scratch()
	defer os.RemoveAll(dir)
	defer d.Close()

	// mkdir -p -v: the setup func sees every level the call makes.
	f, _, err := ocdir.MkPathSetup(d, "a/b/c", ocdir.How{},
		func(dir *os.File, path string, leaf bool) error {
			fmt.Printf("made %s (leaf %v)\n", path, leaf)
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	f.Close()
	// Output:
	// made a (leaf false)
	// made a/b (leaf false)
	// made a/b/c (leaf true)
}

func ExamplePrepare() {
	dir, d := scratch()
	defer os.RemoveAll(dir)
	defer d.Close()

	// A release directory that appears complete or not at all.
	p, err := ocdir.Prepare(d, "release", ocdir.How{Mode: 0o755})
	if err != nil {
		log.Fatal(err)
	}
	defer p.File().Close()
	defer p.Discard() // a no-op once published
	fd, err := syscall.Openat(int(p.File().Fd()), "VERSION",
		syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	syscall.Write(fd, []byte("1.0\n"))
	syscall.Close(fd)
	if err := p.Publish(); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "release", "VERSION"))
	fmt.Printf("%q %v\n", b, p.StagingLeft())
	// Output:
	// "1.0\n" <nil>
}
