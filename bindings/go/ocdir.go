// SPDX-License-Identifier: MIT

// Package ocdir creates a directory and returns an *os.File for that very
// directory, with no window in which another process can swap the new
// name for something else: a thin cgo layer over libocdir (include/ocdir.h
// documents every call, docs/semantics.md the behaviour).
//
// On a kernel with the ocdir patches each call is one
// open(O_CREAT|O_DIRECTORY); elsewhere libocdir emulates it race-free,
// with the same errors. Errors are *os.PathError holding the library's
// errno (a syscall.Errno, so errors.Is(err, fs.ErrExist) works).
//
// The package links against libocdir through pkg-config (ocdir.pc, from
// make install; or build/ocdir-uninstalled.pc of a checkout, with
// PKG_CONFIG_PATH pointing at build/).
package ocdir

/*
#cgo pkg-config: ocdir
#include <stdlib.h>
#include <ocdir.h>
*/
import "C"

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"
)

// Scoping flags for How.Resolve (openat2's RESOLVE_* values).
const (
	ResolveNoXdev       = uint64(C.OCDIR_RESOLVE_NO_XDEV)
	ResolveNoMagiclinks = uint64(C.OCDIR_RESOLVE_NO_MAGICLINKS)
	ResolveNoSymlinks   = uint64(C.OCDIR_RESOLVE_NO_SYMLINKS)
	ResolveBeneath      = uint64(C.OCDIR_RESOLVE_BENEATH)
	ResolveInRoot       = uint64(C.OCDIR_RESOLVE_IN_ROOT)
)

// Options for How.Options.
const (
	// NoCloexec: the returned descriptor is inherited by exec'd programs.
	NoCloexec = uint64(C.OCDIR_NO_CLOEXEC)
	// AllowWeakEmulation: see OCDIR_ALLOW_WEAK_EMULATION in ocdir.h.
	AllowWeakEmulation = uint64(C.OCDIR_ALLOW_WEAK_EMULATION)
	// AlwaysStage: see OCDIR_ALWAYS_STAGE in ocdir.h.
	AlwaysStage = uint64(C.OCDIR_ALWAYS_STAGE)
)

// How says how to create or open, as struct ocdir_how.
type How struct {
	// Flags are open(2) flags added to O_CREAT|O_DIRECTORY:
	// syscall.O_EXCL (the directory must be new), syscall.O_NOFOLLOW
	// (a trailing symlink is ENOTDIR), ...
	Flags int
	// Mode holds the permission bits of a created directory (0o7777:
	// 0o755, 0o1777 for sticky), before the umask. Unlike os.FileMode,
	// these are the Unix bits, and the zero value is mode 0.
	Mode uint32
	// Resolve holds Resolve* scoping flags.
	Resolve uint64
	// Options holds NoCloexec, AllowWeakEmulation, AlwaysStage.
	Options uint64
}

func (h How) c() C.struct_ocdir_how {
	return C.struct_ocdir_how{
		flags:   C.uint64_t(uint64(int64(h.Flags))),
		mode:    C.uint64_t(h.Mode),
		resolve: C.uint64_t(h.Resolve),
		options: C.uint64_t(h.Options),
	}
}

const howSize = C.size_t(unsafe.Sizeof(C.struct_ocdir_how{}))

func dirfd(dir *os.File) C.int {
	if dir == nil {
		return C.AT_FDCWD
	}
	return C.int(dir.Fd())
}

func name(dir *os.File, path string) string {
	if dir == nil || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir.Name(), path)
}

func pathError(op, path string, err error) error {
	errno, ok := err.(syscall.Errno)
	if !ok || errno == 0 {
		errno = syscall.EIO // the library always sets errno; never seen
	}
	return &os.PathError{Op: op, Path: path, Err: errno}
}

// OpenDir creates the directory path (relative to dir; nil dir: the
// current directory) if it is absent, and opens it: open(path,
// O_CREAT|O_DIRECTORY) of a patched kernel, on every kernel
// (ocdir_openat2). It returns the directory (O_RDONLY, close-on-exec
// unless NoCloexec) and whether this call created it.
func OpenDir(dir *os.File, path string, how How) (*os.File, bool, error) {
	return fdCall("opendir", dir, path, how, func(d C.int, p *C.char, h *C.struct_ocdir_how, c *C.int) (C.int, error) {
		r, err := C.ocdir_openat2(d, p, h, howSize, c)
		return r, err
	})
}

type fdFunc func(C.int, *C.char, *C.struct_ocdir_how, *C.int) (C.int, error)

// fdCall runs ocdir_openat2 or ocdir_mkpath: the directory and whether it
// was created, or a *os.PathError.
func fdCall(op string, dir *os.File, path string, how How, call fdFunc) (*os.File, bool, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := how.c()
	var created C.int
	fd, err := call(dirfd(dir), cpath, &h, &created)
	runtime.KeepAlive(dir)
	if fd < 0 {
		return nil, false, pathError(op, path, err)
	}
	return os.NewFile(uintptr(fd), name(dir, path)), created == 1, nil
}

// MkPath is os.MkdirAll that returns the last directory: each missing
// level is created and opened through its parent's descriptor
// (ocdir_mkpath). Levels before the leaf get 0o777 minus the umask, plus
// u+wx; the leaf gets how.Mode, and how.Flags apply to it. On failure the
// levels this call made are removed again. The bool says whether the leaf
// was created.
func MkPath(dir *os.File, path string, how How) (*os.File, bool, error) {
	return fdCall("mkpath", dir, path, how, func(d C.int, p *C.char, h *C.struct_ocdir_how, c *C.int) (C.int, error) {
		r, err := C.ocdir_mkpath(d, p, h, howSize, c)
		return r, err
	})
}

// Mkdir makes sure path is a directory, without a descriptor
// (ocdir_mkdirat): true if this call created it, false if a directory was
// there; ENOTDIR if something else has the name.
func Mkdir(dir *os.File, path string, how How) (bool, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := how.c()
	r, err := C.ocdir_mkdirat(dirfd(dir), cpath, &h, howSize)
	runtime.KeepAlive(dir)
	if r < 0 {
		return false, pathError("mkdir", path, err)
	}
	return r == 1, nil
}

// Prepared is a new directory nobody else can see yet (Prepare). Set its
// owner, mode, xattrs and contents through File(), then call Publish or
// Discard once. The *os.File stays the caller's to close in every case.
type Prepared struct {
	p    *C.struct_ocdir_prepared
	f    *os.File
	path string
}

// Prepare makes a new, empty, still invisible directory destined for path
// (ocdir_prepare): it lives in a private staging directory next to path
// until Publish. how.Flags may hold only O_EXCL, O_NOATIME, O_NONBLOCK.
// EEXIST if the name exists already.
func Prepare(dir *os.File, path string, how How) (*Prepared, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := how.c()
	var p *C.struct_ocdir_prepared
	fd, err := C.ocdir_prepare(dirfd(dir), cpath, &h, howSize, &p)
	runtime.KeepAlive(dir)
	if fd < 0 {
		return nil, pathError("prepare", path, err)
	}
	return &Prepared{p: p, f: os.NewFile(uintptr(fd), name(dir, path)), path: path}, nil
}

// File is the prepared directory.
func (p *Prepared) File() *os.File { return p.f }

// Publish puts the directory at its name in one rename
// (RENAME_NOREPLACE). On failure (EEXIST: the name was taken meanwhile)
// it stays prepared: Publish again, or Discard.
func (p *Prepared) Publish() error {
	if p.p == nil {
		return &os.PathError{Op: "publish", Path: p.path, Err: syscall.EINVAL}
	}
	if r, err := C.ocdir_publish(p.p); r < 0 {
		return pathError("publish", p.path, err)
	}
	p.p = nil
	return nil
}

// Discard removes the prepared directory and everything put into it. A
// Prepared that is already published or discarded is left alone.
func (p *Prepared) Discard() error {
	if p.p == nil {
		return nil
	}
	// After a failure the library keeps the handle valid: Discard again.
	r, err := C.ocdir_discard(p.p)
	if r < 0 {
		return pathError("discard", p.path, err)
	}
	p.p = nil
	return nil
}

// Backend reports whether this process uses the kernel's native call, and
// why (ocdir_backend).
func Backend() (native bool, reason string) {
	var r *C.char
	b := C.ocdir_backend(&r)
	return b == C.OCDIR_BACKEND_NATIVE, C.GoString(r)
}
