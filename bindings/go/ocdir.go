// SPDX-License-Identifier: MIT

// Package ocdir creates a directory and returns an *os.File for that very
// directory, with no window in which another process can swap the new
// name for something else: a thin cgo layer over libocdir (include/ocdir.h
// documents every call, docs/semantics.md the behaviour).
//
// On a kernel with the ocdir patches each call is one
// open(O_CREAT|O_DIRECTORY); elsewhere libocdir emulates it race-free,
// with the same errors. Errors are *fs.PathError (= *os.PathError) holding
// the library's errno as a syscall.Errno, so errors.Is(err, fs.ErrExist)
// and errors.Is(err, fs.ErrNotExist) work as for package os.
//
// As package os does, every call retries when the library fails with
// EINTR (the library leaves nothing behind then), rejects a path holding a
// NUL byte with EINVAL before calling C, and keeps a dir *os.File open
// for the length of the C call (a concurrent Close cannot hand the library
// a number that meanwhile names another file).
//
// The package needs cgo (CGO_ENABLED=1, a C compiler) and links against
// libocdir through pkg-config (ocdir.pc from make install; or
// build/ocdir-uninstalled.pc of a checkout, with PKG_CONFIG_PATH set to the
// absolute path of build/). bindings/go/README.md has the details.
package ocdir

/*
#cgo pkg-config: ocdir
#include <stdlib.h>
#include <ocdir.h>

// The exported Go function of setup.go; its C type has no const.
extern int ocdirGoSetup(int, char *, unsigned int, void *);

int ocdir_go_setup(int fd, const char *path, unsigned int flags, void *arg)
{
	return ocdirGoSetup(fd, (char *)path, flags, arg);
}
*/
import "C"

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
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
	// AlwaysStage: see OCDIR_ALWAYS_STAGE in ocdir.h (OpenDirSetup and
	// MkPathSetup only).
	AlwaysStage = uint64(C.OCDIR_ALWAYS_STAGE)
)

// How says how to create or open, as struct ocdir_how. The zero How means
// what os.MkdirAll(path, 0o777) means: mode 0o777 (before the umask),
// follow a trailing symlink, an existing directory is fine.
type How struct {
	// Flags are open(2) flags added to O_CREAT|O_DIRECTORY:
	// syscall.O_EXCL (the directory must be new), syscall.O_NOFOLLOW
	// (a trailing symlink is ENOTDIR), ...
	Flags int
	// Mode is the permission of a created directory, before the umask,
	// as for os.Mkdir: Perm() bits, and fs.ModeSticky, fs.ModeSetgid,
	// fs.ModeSetuid as the Unix bits (the library keeps only the sticky
	// bit of those three, as mkdir(2)). Type bits (fs.ModeDir...) are
	// ignored, as os does. Mode 0 means 0o777 unless ZeroMode is set.
	Mode fs.FileMode
	// ZeroMode: a Mode of 0 means mode 0 (no permission for anyone)
	// instead of 0o777. Without effect when Mode is not 0.
	ZeroMode bool
	// Resolve holds Resolve* scoping flags.
	Resolve uint64
	// Options holds NoCloexec, AllowWeakEmulation, AlwaysStage.
	Options uint64
}

// unixMode is how.Mode as the mode_t bits the library takes.
func (h How) unixMode() uint64 {
	m := uint64(h.Mode.Perm())
	if h.Mode&fs.ModeSetuid != 0 {
		m |= syscall.S_ISUID
	}
	if h.Mode&fs.ModeSetgid != 0 {
		m |= syscall.S_ISGID
	}
	if h.Mode&fs.ModeSticky != 0 {
		m |= syscall.S_ISVTX
	}
	if m == 0 && !h.ZeroMode {
		m = 0o777
	}
	return m
}

func (h How) c() C.struct_ocdir_how {
	return C.struct_ocdir_how{
		flags:   C.uint64_t(uint64(int64(h.Flags))),
		mode:    C.uint64_t(h.unixMode()),
		resolve: C.uint64_t(h.Resolve),
		options: C.uint64_t(h.Options),
	}
}

const howSize = C.size_t(unsafe.Sizeof(C.struct_ocdir_how{}))

// cstring is path for C, or EINVAL if it holds a NUL byte (C would see
// only the part before it), as package os answers.
func cstring(op, path string) (*C.char, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return nil, &fs.PathError{Op: op, Path: path, Err: syscall.EINVAL}
	}
	return C.CString(path), nil
}

// withDir runs call with dir's descriptor (AT_FDCWD for nil), keeping dir
// from being closed until call returns: a Close meanwhile waits to release
// the number, which another open could otherwise reuse under the library.
func withDir(op, path string, dir *os.File, call func(dirfd C.int)) error {
	if dir == nil {
		call(C.AT_FDCWD)
		return nil
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	if err := rc.Control(func(fd uintptr) { call(C.int(fd)) }); err != nil {
		// Control fails only for a closed file.
		return &fs.PathError{Op: op, Path: path, Err: fs.ErrClosed}
	}
	return nil
}

// retryEINTR runs call again while it fails with EINTR, as package os
// retries its system calls (the library leaves nothing behind then).
func retryEINTR(call func() (C.int, error)) (C.int, error) {
	for {
		r, err := call()
		if r >= 0 || err != syscall.EINTR {
			return r, err
		}
	}
}

// errnoOf is the library's errno (it always sets one on failure).
func errnoOf(err error) syscall.Errno {
	errno, ok := err.(syscall.Errno)
	if !ok || errno == 0 {
		return syscall.EIO
	}
	return errno
}

func name(dir *os.File, path string) string {
	if dir == nil || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir.Name(), path)
}

// OpenDir creates the directory path (relative to dir; nil dir: the
// current directory) if it is absent, and opens it: open(path,
// O_CREAT|O_DIRECTORY) of a patched kernel, on every kernel
// (ocdir_openat2). It returns the directory (O_RDONLY, close-on-exec
// unless NoCloexec) and whether this call created it.
func OpenDir(dir *os.File, path string, how How) (*os.File, bool, error) {
	return OpenDirSetup(dir, path, how, nil)
}

// OpenDirSetup is OpenDir, and if the call creates the directory, setup
// runs on it before anyone else can use it (ocdir_openat2_setup): see
// SetupFunc. The bool is true exactly when the directory was created and
// setup succeeded. With a nil setup this is OpenDir (ocdir_openat2).
func OpenDirSetup(dir *os.File, path string, how How, setup SetupFunc) (*os.File, bool, error) {
	return fdCall("opendir", dir, path, how, setup, func(d C.int, p *C.char, h *C.struct_ocdir_how, fn C.ocdir_setup_fn, arg unsafe.Pointer, c *C.int) (C.int, error) {
		if fn == nil {
			r, err := C.ocdir_openat2(d, p, h, howSize, c)
			return r, err
		}
		r, err := C.ocdir_openat2_setup(d, p, h, howSize, fn, arg, c)
		return r, err
	})
}

// MkPath is os.MkdirAll that returns the last directory: each missing
// level is created and opened through its parent's descriptor
// (ocdir_mkpath). Levels before the leaf get 0o777 minus the umask, plus
// u+wx; the leaf gets how.Mode, and how.Flags apply to it. On failure the
// levels this call made are removed again. The bool says whether the leaf
// was created.
func MkPath(dir *os.File, path string, how How) (*os.File, bool, error) {
	return MkPathSetup(dir, path, how, nil)
}

// MkPathSetup is MkPath with setup run on each directory the call makes
// (ocdir_mkpath_setup): with leaf false on each intermediate level, top
// down, right after it was made; with leaf true on the leaf, before anyone
// else can use it. See SetupFunc. The bool is true exactly when the leaf
// was created and setup succeeded on it. With a nil setup this is MkPath
// (ocdir_mkpath).
func MkPathSetup(dir *os.File, path string, how How, setup SetupFunc) (*os.File, bool, error) {
	return fdCall("mkpath", dir, path, how, setup, func(d C.int, p *C.char, h *C.struct_ocdir_how, fn C.ocdir_setup_fn, arg unsafe.Pointer, c *C.int) (C.int, error) {
		if fn == nil {
			r, err := C.ocdir_mkpath(d, p, h, howSize, c)
			return r, err
		}
		r, err := C.ocdir_mkpath_setup(d, p, h, howSize, fn, arg, c)
		return r, err
	})
}

type fdFunc func(C.int, *C.char, *C.struct_ocdir_how, C.ocdir_setup_fn, unsafe.Pointer, *C.int) (C.int, error)

// fdCall runs ocdir_openat2_setup or ocdir_mkpath_setup: the directory and
// whether it was created, or a *fs.PathError.
func fdCall(op string, dir *os.File, path string, how How, setup SetupFunc, call fdFunc) (*os.File, bool, error) {
	cpath, err := cstring(op, path)
	if err != nil {
		return nil, false, err
	}
	defer C.free(unsafe.Pointer(cpath))
	h := how.c()
	var (
		fn      C.ocdir_setup_fn
		arg     unsafe.Pointer
		st      *setupState
		handle  cgo.Handle
		created C.int
		fd      C.int
	)
	if setup != nil {
		st = &setupState{fn: setup}
		handle = cgo.NewHandle(st)
		defer handle.Delete()
		fn = C.ocdir_setup_fn(C.ocdir_go_setup)
		arg = unsafe.Pointer(&handle)
	}
	if err := withDir(op, path, dir, func(d C.int) {
		fd, err = retryEINTR(func() (C.int, error) {
			st.reset()
			return call(d, cpath, &h, fn, arg, &created)
		})
	}); err != nil {
		return nil, false, err
	}
	if st != nil && st.panicked {
		if fd >= 0 { // (the library fails the call: never seen)
			syscall.Close(int(fd))
		}
		panic(st.panicValue)
	}
	if fd < 0 {
		errno := errnoOf(err)
		if st != nil && st.err != nil && errno == st.errno {
			// The library failed with the errno setup gave it:
			// setup's own error tells more.
			return nil, false, &fs.PathError{Op: op, Path: path, Err: st.err}
		}
		return nil, false, &fs.PathError{Op: op, Path: path, Err: errno}
	}
	return os.NewFile(uintptr(fd), name(dir, path)), created == 1, nil
}

// Mkdir makes sure path is a directory, without a descriptor
// (ocdir_mkdirat): true if this call created it, false if a directory was
// there; ENOTDIR if something else has the name.
func Mkdir(dir *os.File, path string, how How) (bool, error) {
	cpath, err := cstring("mkdir", path)
	if err != nil {
		return false, err
	}
	defer C.free(unsafe.Pointer(cpath))
	h := how.c()
	var r C.int
	if err := withDir("mkdir", path, dir, func(d C.int) {
		r, err = retryEINTR(func() (C.int, error) {
			r, err := C.ocdir_mkdirat(d, cpath, &h, howSize)
			return r, err
		})
	}); err != nil {
		return false, err
	}
	if r < 0 {
		return false, &fs.PathError{Op: "mkdir", Path: path, Err: errnoOf(err)}
	}
	return r == 1, nil
}

// Prepared is a new directory nobody else can see yet (Prepare). Set its
// owner, mode, xattrs and contents through File(), then Publish or
// Discard it. The *os.File stays the caller's to close in every case.
//
// A Prepared is finished once Publish or Discard returned nil: the
// library has freed its handle, and the package never passes it to C
// again (a later Discard is a no-op, a later Publish fails with EINVAL).
// After an error it stays valid, and either call may be made (again).
// Its methods may be called from several goroutines.
type Prepared struct {
	mu      sync.Mutex
	p       *C.struct_ocdir_prepared // nil once finished
	f       *os.File
	path    string
	staging error
}

// discardCalls counts the calls of ocdir_discard (the tests check that a
// finished Prepared never reaches C).
var discardCalls int64

// Prepare makes a new, empty, still invisible directory destined for path
// (ocdir_prepare): it lives in a private staging directory next to path
// until Publish. how.Flags may hold only O_EXCL, O_NOATIME, O_NONBLOCK.
// EEXIST if the name exists already.
func Prepare(dir *os.File, path string, how How) (*Prepared, error) {
	cpath, err := cstring("prepare", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	h := how.c()
	var (
		p  *C.struct_ocdir_prepared
		fd C.int
	)
	if err := withDir("prepare", path, dir, func(d C.int) {
		fd, err = retryEINTR(func() (C.int, error) {
			r, err := C.ocdir_prepare(d, cpath, &h, howSize, &p)
			return r, err
		})
	}); err != nil {
		return nil, err
	}
	if fd < 0 {
		return nil, &fs.PathError{Op: "prepare", Path: path, Err: errnoOf(err)}
	}
	return &Prepared{p: p, f: os.NewFile(uintptr(fd), name(dir, path)), path: path}, nil
}

// File is the prepared directory (after Publish: the published one).
func (p *Prepared) File() *os.File { return p.f }

// finish records a successful Publish or Discard: the handle is freed;
// errno (ocdir.h) says whether the empty staging directory stayed.
func (p *Prepared) finish(op string, err error) {
	p.p = nil // freed by the library: never passed to C again
	if errno, ok := err.(syscall.Errno); ok && errno != 0 {
		p.staging = &fs.PathError{Op: op, Path: p.path, Err: errno}
	}
}

// Publish puts the directory at its name in one rename
// (RENAME_NOREPLACE). On failure (EEXIST: the name was taken meanwhile)
// it stays prepared: Publish again, or Discard. EINVAL if the Prepared is
// already finished.
func (p *Prepared) Publish() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.p == nil {
		return &fs.PathError{Op: "publish", Path: p.path, Err: syscall.EINVAL}
	}
	r, err := retryEINTR(func() (C.int, error) {
		r, err := C.ocdir_publish(p.p)
		return r, err
	})
	if r < 0 {
		return &fs.PathError{Op: "publish", Path: p.path, Err: errnoOf(err)}
	}
	p.finish("publish", err)
	return nil
}

// Discard removes the prepared directory and everything put into it. On
// an error (EBUSY: a mount point inside, ...) what was removed stays
// removed and the Prepared stays valid: Discard again. A finished Prepared
// (published or discarded) is left alone: nil, without calling the
// library, so `defer p.Discard()` is safe.
func (p *Prepared) Discard() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.p == nil {
		return nil
	}
	r, err := retryEINTR(func() (C.int, error) {
		atomic.AddInt64(&discardCalls, 1)
		r, err := C.ocdir_discard(p.p)
		return r, err
	})
	if r < 0 {
		return &fs.PathError{Op: "discard", Path: p.path, Err: errnoOf(err)}
	}
	p.finish("discard", err)
	return nil
}

// StagingLeft tells, after a successful Publish or Discard, whether the
// library's empty private staging directory (0700, the caller's, named
// .ocdir-stage.*) stayed behind in the parent: nil if it was removed (and
// before the Prepared is finished), else a *fs.PathError with the reason
// as ocdir.h gives it: ENOENT (someone who can write the parent moved it
// away), or the error of rmdir(2), e.g. EACCES (the parent's owner took
// write permission away). Nothing is to be retried then.
func (p *Prepared) StagingLeft() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.staging
}

// Backend reports whether this process uses the kernel's native call, and
// why (ocdir_backend).
func Backend() (native bool, reason string) {
	var r *C.char
	b := C.ocdir_backend(&r)
	return b == C.OCDIR_BACKEND_NATIVE, C.GoString(r)
}
