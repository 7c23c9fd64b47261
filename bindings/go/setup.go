// SPDX-License-Identifier: MIT

package ocdir

// The Go side of ocdir_setup_fn. This file exports a function to C, so its
// preamble may only declare (cgo's rule); the C trampoline is in ocdir.go.

/*
#include <ocdir.h>
*/
import "C"

import (
	"errors"
	"os"
	"runtime/cgo"
	"syscall"
	"unsafe"
)

// SetupFunc is what OpenDirSetup and MkPathSetup run on a directory the
// call just made, before anyone else can use it: set its owner, group,
// mode, xattrs or contents through dir (dir.Chown, dir.Chmod, *at calls on
// dir.Fd(), ...). leaf is true for the directory the call was asked for
// (new, empty, mode how.Mode & 0o700 after the umask until setup changes
// it), false for an intermediate level MkPathSetup made on the way
// (already at its name, mode as MkPath gives it). path is the part of the
// caller's path that names that directory.
//
// dir is a duplicate of the library's descriptor (same directory, same
// open file): the package closes it when the func returns, and closing it
// earlier does not touch the library's own. It is valid only during the
// call.
//
// A nil error goes on with the call. An error fails it, and the library
// removes what the call made (ocdir.h, ocdir_openat2_setup):
//   - an error holding a syscall.Errno (errors.As; syscall.EACCES,
//     *os.PathError from dir.Chown, ...) fails the call with that errno;
//     the caller gets a *fs.PathError whose Err is the func's error;
//   - any other error fails the call with ECANCELED inside the library,
//     and the caller again gets the func's error in the *fs.PathError.
//
// Where the library reports another errno than the func's (it could not
// remove what the call made: ENOTEMPTY, EBUSY, ...), that errno is the
// *fs.PathError's Err instead, as in C. An errno of EINTR makes the
// package repeat the whole call, as for EINTR from the library (the func
// then runs again on a new directory), up to maxSetupEINTR runs of the
// func in one call; then the call fails with the func's EINTR error.
//
// A panic in the func does not unwind through the library's C frames: it
// is recovered, the call fails (the library removes what it made) and
// then the same value is panicked again in the caller's goroutine, from
// OpenDirSetup or MkPathSetup. Do not call runtime.Goexit (t.FailNow,
// t.Fatal) in the func.
type SetupFunc func(dir *os.File, path string, leaf bool) error

// errSetupOther is the errno the library gets for an error without one.
const errSetupOther = syscall.ECANCELED

// maxSetupEINTR bounds the repeats a func's EINTR asks for: a func that
// always answers EINTR would otherwise repeat the call forever.
const maxSetupEINTR = 16

// setupState is one call's func and what became of it.
type setupState struct {
	fn         SetupFunc
	err        error         // the func's error, if it failed
	errno      syscall.Errno // the errno given to the library for it
	panicked   bool
	panicValue interface{}
	eintrs     int // the func's EINTR answers in this call, kept over repeats
}

// reset forgets the last try (before a repeat on EINTR).
func (st *setupState) reset() {
	if st != nil && !st.panicked {
		st.err, st.errno = nil, 0
	}
}

//export ocdirGoSetup
func ocdirGoSetup(fd C.int, path *C.char, flags C.uint, arg unsafe.Pointer) (ret C.int) {
	st := (*(*cgo.Handle)(arg)).Value().(*setupState)
	if st.panicked {
		return -C.int(errSetupOther)
	}
	// Whether runSetup returned: a deferred recover() alone cannot tell
	// panic(nil) (recover gives nil before Go 1.21) from no panic, and
	// would let the library publish a directory whose setup never ended.
	returned := false
	defer func() {
		if !returned {
			st.panicked, st.panicValue = true, recover()
			ret = -C.int(errSetupOther)
		}
	}()
	ret = runSetup(st, fd, path, flags)
	returned = true
	return ret
}

// runSetup duplicates fd for the func, runs it and gives the library its answer.
func runSetup(st *setupState, fd C.int, path *C.char, flags C.uint) C.int {
	p := C.GoString(path)
	nfd, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		st.err, st.errno = &os.PathError{Op: "setup", Path: p, Err: e}, e
		return -C.int(e)
	}
	dir := os.NewFile(nfd, p)
	defer dir.Close()
	err := st.fn(dir, p, flags&C.OCDIR_SETUP_LEAF != 0)
	if err == nil {
		return 0
	}
	errno := errSetupOther
	var e2 syscall.Errno
	if errors.As(err, &e2) && e2 > 0 && e2 <= 4095 {
		errno = e2
	}
	if errno == syscall.EINTR {
		// Not repeated any more: the library gets another errno, so the
		// caller gets the func's error (EINTR) instead of a repeat.
		if st.eintrs++; st.eintrs >= maxSetupEINTR {
			errno = errSetupOther
		}
	}
	st.err, st.errno = err, errno
	return -C.int(errno)
}
