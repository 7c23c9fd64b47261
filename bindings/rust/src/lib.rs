// SPDX-License-Identifier: MIT
//! Create a directory and get a file descriptor to that very directory,
//! race-free: a thin layer over libocdir (`include/ocdir.h` documents every
//! call, `docs/semantics.md` the behaviour).
//!
//! On a kernel with the ocdir patches each call is one
//! `open(O_CREAT|O_DIRECTORY)`; elsewhere libocdir emulates it race-free,
//! with the same errors. Errors are [`io::Error`]s carrying the library's
//! errno ([`io::Error::raw_os_error`]).
//!
//! ```
//! use std::fs::File;
//!
//! let path = std::env::temp_dir().join(format!("ocdir-doc.{}", std::process::id()));
//! let how = ocdir::How::new().mode(0o750);
//! let (fd, created) = ocdir::open_dir(ocdir::cwd(), &path, &how)?;
//! assert!(created.is_new());
//! // fd is the directory this call made, whatever the name shows by now:
//! // set it up through fd (fchown, fchmod, openat), never by name.
//! let dir = File::from(fd);
//! assert!(dir.metadata()?.is_dir());
//! std::fs::remove_dir(&path)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::CString;
use std::io;
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::ptr;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RawHow {
    flags: u64,
    mode: u64,
    resolve: u64,
    options: u64,
}

extern "C" {
    fn ocdir_openat2(
        dirfd: c_int,
        path: *const c_char,
        how: *const RawHow,
        size: usize,
        created: *mut c_int,
    ) -> c_int;
    fn ocdir_mkpath(
        dirfd: c_int,
        path: *const c_char,
        how: *const RawHow,
        size: usize,
        leaf_created: *mut c_int,
    ) -> c_int;
    fn ocdir_mkdirat(dirfd: c_int, path: *const c_char, how: *const RawHow, size: usize) -> c_int;
    fn ocdir_prepare(
        dirfd: c_int,
        path: *const c_char,
        how: *const RawHow,
        size: usize,
        prepared: *mut *mut c_void,
    ) -> c_int;
    fn ocdir_publish(prepared: *mut c_void) -> c_int;
    fn ocdir_discard(prepared: *mut c_void) -> c_int;
    fn ocdir_backend(reason: *mut *const c_char) -> c_int;
}

/// Scoping flags for [`How::resolve`] (openat2's `RESOLVE_*` values).
pub mod resolve {
    /// Fail with EXDEV on crossing a mount point.
    pub const NO_XDEV: u64 = 0x01;
    /// Fail with ELOOP on a magic link such as /proc/self/fd/N.
    pub const NO_MAGICLINKS: u64 = 0x02;
    /// Fail with ELOOP on any symlink.
    pub const NO_SYMLINKS: u64 = 0x04;
    /// Stay below the directory: leaving it is EXDEV.
    pub const BENEATH: u64 = 0x08;
    /// Treat the directory as "/".
    pub const IN_ROOT: u64 = 0x10;
}

/// Library options for [`How::options`].
pub mod options {
    /// The descriptor is inherited across exec.
    pub const NO_CLOEXEC: u64 = 1 << 0;
    /// See `OCDIR_ALLOW_WEAK_EMULATION` in ocdir.h.
    pub const ALLOW_WEAK_EMULATION: u64 = 1 << 2;
    /// See `OCDIR_ALWAYS_STAGE` in ocdir.h.
    pub const ALWAYS_STAGE: u64 = 1 << 3;
}

/// How to create or open: `struct ocdir_how`, built step by step.
///
/// `How::new()` is mode 0o777 (before the umask), following symlinks,
/// not exclusive, unscoped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct How {
    raw: RawHow,
}

impl Default for How {
    fn default() -> Self {
        How::new()
    }
}

impl How {
    /// Mode 0o777, no flags, no scoping, no options.
    pub fn new() -> Self {
        How { raw: RawHow { mode: 0o777, ..RawHow::default() } }
    }
    /// Permission bits of a created directory (07777; the umask applies).
    pub fn mode(mut self, mode: u32) -> Self {
        self.raw.mode = u64::from(mode);
        self
    }
    /// The directory must be new (O_EXCL): EEXIST otherwise.
    pub fn exclusive(self, yes: bool) -> Self {
        self.set_flag(libc::O_EXCL, yes)
    }
    /// Whether a trailing symlink is followed (without: O_NOFOLLOW, ENOTDIR).
    pub fn follow_symlinks(self, yes: bool) -> Self {
        self.set_flag(libc::O_NOFOLLOW, !yes)
    }
    /// Further open(2) flags, added to those set so far.
    pub fn flags(mut self, flags: c_int) -> Self {
        self.raw.flags |= flags as u32 as u64;
        self
    }
    /// Scoping: [`resolve`] flags, added to those set so far.
    pub fn resolve(mut self, resolve: u64) -> Self {
        self.raw.resolve |= resolve;
        self
    }
    /// Library [`options`], added to those set so far.
    pub fn options(mut self, options: u64) -> Self {
        self.raw.options |= options;
        self
    }
    fn set_flag(mut self, flag: c_int, yes: bool) -> Self {
        if yes {
            self.raw.flags |= flag as u64;
        } else {
            self.raw.flags &= !(flag as u64);
        }
        self
    }
}

/// Whether a call created the directory or found it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Created {
    /// This call made it.
    New,
    /// It existed; this call opened it.
    Existing,
}

impl Created {
    /// `true` for [`Created::New`].
    pub fn is_new(self) -> bool {
        self == Created::New
    }
    fn from(created: c_int) -> Self {
        if created == 1 {
            Created::New
        } else {
            Created::Existing
        }
    }
}

/// The current working directory as a `dirfd` (AT_FDCWD).
pub fn cwd() -> BorrowedFd<'static> {
    // SAFETY: AT_FDCWD is valid as long as the process lives; it is not -1.
    unsafe { BorrowedFd::borrow_raw(libc::AT_FDCWD) }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn owned(fd: c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the library returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

const HOW_SIZE: usize = std::mem::size_of::<RawHow>();

/// Create the directory `path` (relative to `dirfd`) if it is absent, and
/// open it: `openat(dirfd, path, O_CREAT|O_DIRECTORY)` of a patched kernel,
/// on every kernel (`ocdir_openat2`). The descriptor is O_RDONLY and
/// close-on-exec (unless [`options::NO_CLOEXEC`]).
pub fn open_dir<P: AsRef<Path>>(dirfd: BorrowedFd<'_>, path: P, how: &How) -> io::Result<(OwnedFd, Created)> {
    let path = c_path(path.as_ref())?;
    let mut created: c_int = 0;
    // SAFETY: valid C string and struct for the duration of the call.
    let fd = unsafe { ocdir_openat2(dirfd.as_raw_fd(), path.as_ptr(), &how.raw, HOW_SIZE, &mut created) };
    Ok((owned(fd)?, Created::from(created)))
}

/// `mkdir -p` that returns the last directory (`ocdir_mkpath`): each
/// missing level is created and opened through its parent's descriptor;
/// levels before the leaf get 0o777 minus the umask, plus u+wx, the leaf
/// gets `how`'s mode and flags. On failure the levels it made are removed.
pub fn mkpath<P: AsRef<Path>>(dirfd: BorrowedFd<'_>, path: P, how: &How) -> io::Result<(OwnedFd, Created)> {
    let path = c_path(path.as_ref())?;
    let mut created: c_int = 0;
    // SAFETY: as open_dir.
    let fd = unsafe { ocdir_mkpath(dirfd.as_raw_fd(), path.as_ptr(), &how.raw, HOW_SIZE, &mut created) };
    Ok((owned(fd)?, Created::from(created)))
}

/// Make sure `path` is a directory, without a descriptor (`ocdir_mkdirat`).
pub fn mkdirat<P: AsRef<Path>>(dirfd: BorrowedFd<'_>, path: P, how: &How) -> io::Result<Created> {
    let path = c_path(path.as_ref())?;
    // SAFETY: as open_dir.
    let r = unsafe { ocdir_mkdirat(dirfd.as_raw_fd(), path.as_ptr(), &how.raw, HOW_SIZE) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Created::from(r))
}

/// A new directory nobody else can see yet ([`prepare`]): set it up through
/// [`Prepared::fd`], then [`Prepared::publish`] it. A guard: dropped
/// unpublished, it is discarded (removed with everything put into it).
#[derive(Debug)]
pub struct Prepared {
    handle: *mut c_void,
    fd: Option<OwnedFd>,
}

/// Make a new, empty, still invisible directory destined for `path`
/// (`ocdir_prepare`), in a private staging directory next to it.
/// EEXIST if the name exists already.
pub fn prepare<P: AsRef<Path>>(dirfd: BorrowedFd<'_>, path: P, how: &How) -> io::Result<Prepared> {
    let path = c_path(path.as_ref())?;
    let mut handle: *mut c_void = ptr::null_mut();
    // SAFETY: as open_dir; handle is written on success only.
    let fd = unsafe { ocdir_prepare(dirfd.as_raw_fd(), path.as_ptr(), &how.raw, HOW_SIZE, &mut handle) };
    let fd = owned(fd)?;
    Ok(Prepared { handle, fd: Some(fd) })
}

impl Prepared {
    /// The prepared directory.
    pub fn fd(&self) -> BorrowedFd<'_> {
        use std::os::unix::io::AsFd;
        self.fd.as_ref().expect("a live Prepared has its descriptor").as_fd()
    }

    /// Put the directory at its name in one rename (RENAME_NOREPLACE) and
    /// return its descriptor. On failure (EEXIST: the name was taken
    /// meanwhile) it is handed back with the error: publish again later,
    /// or drop it to discard it.
    pub fn publish(mut self) -> Result<OwnedFd, (Prepared, io::Error)> {
        // SAFETY: handle is live until publish or discard succeed.
        if unsafe { ocdir_publish(self.handle) } < 0 {
            return Err((self, io::Error::last_os_error()));
        }
        self.handle = ptr::null_mut();
        Ok(self.fd.take().expect("a live Prepared has its descriptor"))
    }

    /// Remove the directory and everything put into it now, and say
    /// whether that worked (dropping the guard does the same, silently).
    pub fn discard(mut self) -> io::Result<()> {
        self.discard_now()
    }

    fn discard_now(&mut self) -> io::Result<()> {
        if self.handle.is_null() {
            return Ok(());
        }
        // SAFETY: as publish. After a failure the handle stays valid (the
        // library frees it only on success): kept for a later try.
        if unsafe { ocdir_discard(self.handle) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.handle = ptr::null_mut();
        Ok(())
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let _ = self.discard_now();
    }
}

/// Which backend this process uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The kernel creates with O_CREAT|O_DIRECTORY.
    Native,
    /// libocdir emulates it race-free.
    Emulated,
}

/// The backend and why (`ocdir_backend`).
pub fn backend() -> (Backend, &'static str) {
    let mut reason: *const c_char = ptr::null();
    // SAFETY: reason receives a pointer to a static string.
    let b = unsafe { ocdir_backend(&mut reason) };
    let text = if reason.is_null() {
        ""
    } else {
        // SAFETY: static, NUL-terminated text of the library.
        unsafe { std::ffi::CStr::from_ptr(reason) }.to_str().unwrap_or("")
    };
    (if b == 1 { Backend::Native } else { Backend::Emulated }, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_is_struct_ocdir_how() {
        // OCDIR_HOW_SIZE_VER0: four u64 fields, in this order
        assert_eq!(HOW_SIZE, 32);
        let h = How::new().mode(0o750).exclusive(true).resolve(resolve::BENEATH).options(options::NO_CLOEXEC);
        assert_eq!(h.raw, RawHow { flags: libc::O_EXCL as u64, mode: 0o750, resolve: 8, options: 1 });
        assert_eq!(h.exclusive(false).raw.flags, 0);
    }
}
