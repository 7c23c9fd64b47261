// SPDX-License-Identifier: MIT
//! Create a directory and get a file descriptor to that very directory,
//! race-free: a thin, safe layer over libocdir (`include/ocdir.h`
//! documents every call, `docs/semantics.md` the behaviour; the raw
//! declarations are the `ocdir-sys` crate).
//!
//! On a kernel with the ocdir patches each call is one
//! `open(O_CREAT|O_DIRECTORY)`; elsewhere libocdir emulates it race-free,
//! with the same errors. Errors are [`io::Error`]s carrying the library's
//! errno ([`io::Error::raw_os_error`]). Calls that fail with EINTR are
//! repeated, as std does for its own system calls.
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
//!
//! # Using the crate
//!
//! `Cargo.toml` (add `libc` only if your own code calls it, as the
//! README's example does for `fchown`):
//!
//! ```toml
//! [dependencies]
//! ocdir = "1.2"
//! libc = "0.2"
//! ```
//!
//! `make install` puts this crate and `ocdir-sys` in
//! `PREFIX/share/cargo/registry` (Debian's layout; use it as a directory
//! source); from a checkout, `ocdir = { path = ".../bindings/rust/ocdir" }`.
//!
//! **Linking**: `ocdir-sys`'s build script runs `pkg-config --libs ocdir`;
//! for a checkout's library set `PKG_CONFIG_PATH` to the *absolute* path of
//! its `build/` (a relative one is refused). Feature `static` links
//! `libocdir.a` instead.
//!
//! **At run time** the program loads `libocdir.so.1`: from a system library
//! directory with nothing to do; from anywhere else (a checkout's
//! `build/`, a custom PREFIX) only with `LD_LIBRARY_PATH` set to it, or an
//! rpath your program's own `build.rs` adds
//! (`cargo:rustc-link-arg=-Wl,-rpath,DIR`), or with feature `static`. This
//! crate's own tests and examples carry a RUNPATH to the checkout; programs
//! that depend on it do not. bindings/rust/README.md has the details.

use std::any::Any;
use std::ffi::{CStr, CString, OsStr};
use std::fmt;
use std::io;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;

use ocdir_sys as sys;

/// Scoping flags for [`How::resolve`] (openat2's `RESOLVE_*` values).
pub mod resolve {
    /// Fail with EXDEV on crossing a mount point.
    pub const NO_XDEV: u64 = ocdir_sys::OCDIR_RESOLVE_NO_XDEV;
    /// Fail with ELOOP on a magic link such as /proc/self/fd/N.
    pub const NO_MAGICLINKS: u64 = ocdir_sys::OCDIR_RESOLVE_NO_MAGICLINKS;
    /// Fail with ELOOP on any symlink.
    pub const NO_SYMLINKS: u64 = ocdir_sys::OCDIR_RESOLVE_NO_SYMLINKS;
    /// Stay below the directory: leaving it is EXDEV.
    pub const BENEATH: u64 = ocdir_sys::OCDIR_RESOLVE_BENEATH;
    /// Treat the directory as "/".
    pub const IN_ROOT: u64 = ocdir_sys::OCDIR_RESOLVE_IN_ROOT;
}

/// Library options for [`How::options`].
pub mod options {
    /// The descriptor is inherited across exec.
    pub const NO_CLOEXEC: u64 = ocdir_sys::OCDIR_NO_CLOEXEC;
    /// See `OCDIR_FAST_EMULATION` in ocdir.h.
    pub const FAST_EMULATION: u64 = ocdir_sys::OCDIR_FAST_EMULATION;
    /// See `OCDIR_ALLOW_WEAK_EMULATION` in ocdir.h.
    pub const ALLOW_WEAK_EMULATION: u64 = ocdir_sys::OCDIR_ALLOW_WEAK_EMULATION;
    /// See `OCDIR_ALWAYS_STAGE` in ocdir.h ([`open_dir_with`](crate::open_dir_with),
    /// [`mkpath_with`](crate::mkpath_with) only).
    pub const ALWAYS_STAGE: u64 = ocdir_sys::OCDIR_ALWAYS_STAGE;
}

/// The errno a setup closure's error without an OS error code
/// ([`io::Error::raw_os_error`] `None`), or its panic, fails the C call
/// with; the caller gets the closure's own error (or the panic) back.
pub const SETUP_FAILED_ERRNO: i32 = libc::ECANCELED;

/// How to create or open: `struct ocdir_how`, built step by step.
///
/// `How::new()` is mode 0o777 (before the umask), following symlinks,
/// not exclusive, unscoped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct How {
    raw: sys::ocdir_how,
}

impl Default for How {
    fn default() -> Self {
        How::new()
    }
}

impl How {
    /// Mode 0o777, no flags, no scoping, no options.
    pub fn new() -> Self {
        How { raw: sys::ocdir_how { mode: 0o777, ..sys::ocdir_how::default() } }
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
    /// The C struct, as passed to the library.
    pub fn as_raw(&self) -> &sys::ocdir_how {
        &self.raw
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

/// The current working directory as a directory argument (AT_FDCWD).
pub fn cwd() -> BorrowedFd<'static> {
    // SAFETY: AT_FDCWD is valid as long as the process lives; it is not -1.
    unsafe { BorrowedFd::borrow_raw(libc::AT_FDCWD) }
}

/// The path as C wants it; a NUL byte in it is InvalidInput (nothing is
/// created: C would see a shorter path).
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn set_errno(value: i32) {
    // SAFETY: the calling thread's errno.
    unsafe { *libc::__errno_location() = value };
}

/// Call `f` again while it fails (-1) with EINTR, as std does.
fn no_eintr(mut f: impl FnMut() -> c_int) -> c_int {
    loop {
        let r = f();
        if r >= 0 || errno() != libc::EINTR {
            return r;
        }
    }
}

fn owned(fd: c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the library returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

const HOW_SIZE: usize = std::mem::size_of::<sys::ocdir_how>();

/// Create the directory `path` (relative to `dir`, e.g. a `&File` or
/// [`cwd()`]) if it is absent, and open it: `openat(dir, path,
/// O_CREAT|O_DIRECTORY)` of a patched kernel, on every kernel
/// (`ocdir_openat2`). The descriptor is O_RDONLY and close-on-exec (unless
/// [`options::NO_CLOEXEC`]).
pub fn open_dir<D: AsFd, P: AsRef<Path>>(dir: D, path: P, how: &How) -> io::Result<(OwnedFd, Created)> {
    let path = c_path(path.as_ref())?;
    let dirfd = dir.as_fd().as_raw_fd();
    let mut created: c_int = 0;
    // SAFETY: valid C string and struct for the duration of the call.
    let fd = no_eintr(|| unsafe { sys::ocdir_openat2(dirfd, path.as_ptr(), &how.raw, HOW_SIZE, &mut created) });
    Ok((owned(fd)?, Created::from(created)))
}

/// `mkdir -p` that returns the last directory (`ocdir_mkpath`): each
/// missing level is created and opened through its parent's descriptor;
/// levels before the leaf get 0o777 minus the umask, plus u+wx, the leaf
/// gets `how`'s mode and flags. On failure the levels it made are removed.
pub fn mkpath<D: AsFd, P: AsRef<Path>>(dir: D, path: P, how: &How) -> io::Result<(OwnedFd, Created)> {
    let path = c_path(path.as_ref())?;
    let dirfd = dir.as_fd().as_raw_fd();
    let mut created: c_int = 0;
    // SAFETY: as open_dir.
    let fd = no_eintr(|| unsafe { sys::ocdir_mkpath(dirfd, path.as_ptr(), &how.raw, HOW_SIZE, &mut created) });
    Ok((owned(fd)?, Created::from(created)))
}

/// Make sure `path` is a directory, without a descriptor (`ocdir_mkdirat`).
pub fn mkdirat<D: AsFd, P: AsRef<Path>>(dir: D, path: P, how: &How) -> io::Result<Created> {
    let path = c_path(path.as_ref())?;
    let dirfd = dir.as_fd().as_raw_fd();
    // SAFETY: as open_dir.
    let r = no_eintr(|| unsafe { sys::ocdir_mkdirat(dirfd, path.as_ptr(), &how.raw, HOW_SIZE) });
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Created::from(r))
}

// What the setup closure did, kept across the C call.
enum Failure {
    Other(io::Error),
    Panic(Box<dyn Any + Send + 'static>),
}

struct Setup<F> {
    f: F,
    failure: Option<Failure>,
    failed: bool,
}

unsafe extern "C" fn setup_trampoline<F>(fd: c_int, path: *const c_char, flags: c_uint, arg: *mut c_void) -> c_int
where
    F: FnMut(BorrowedFd<'_>, &Path, bool) -> io::Result<()>,
{
    // SAFETY: arg is the &mut Setup<F> open_dir_with/mkpath_with passed,
    // alive and not otherwise used during the C call; fd is open for the
    // duration of this call; path is NUL-terminated.
    let state = &mut *(arg as *mut Setup<F>);
    let fd = BorrowedFd::borrow_raw(fd);
    let bytes = if path.is_null() { &b""[..] } else { CStr::from_ptr(path).to_bytes() };
    let path = Path::new(OsStr::from_bytes(bytes));
    let leaf = flags & sys::OCDIR_SETUP_LEAF != 0;
    // A panic must not unwind into C: caught here, the call fails, and it
    // is resumed once the C call has returned.
    let got = catch_unwind(AssertUnwindSafe(|| (state.f)(fd, path, leaf)));
    if !matches!(got, Ok(Ok(()))) {
        state.failed = true;
    }
    match got {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => match e.raw_os_error() {
            Some(n) if n > 0 && n <= 4095 => -n,
            _ => {
                state.failure = Some(Failure::Other(e));
                -SETUP_FAILED_ERRNO
            }
        },
        Err(payload) => {
            state.failure = Some(Failure::Panic(payload));
            -SETUP_FAILED_ERRNO
        }
    }
}

type SetupCall = unsafe extern "C" fn(
    c_int,
    *const c_char,
    *const sys::ocdir_how,
    usize,
    sys::ocdir_setup_fn,
    *mut c_void,
    *mut c_int,
) -> c_int;

fn call_with_setup<D, P, F>(call: SetupCall, dir: D, path: P, how: &How, f: F) -> io::Result<(OwnedFd, Created)>
where
    D: AsFd,
    P: AsRef<Path>,
    F: FnMut(BorrowedFd<'_>, &Path, bool) -> io::Result<()>,
{
    let path = c_path(path.as_ref())?;
    let dirfd = dir.as_fd().as_raw_fd();
    let mut state = Setup { f, failure: None, failed: false };
    let mut created: c_int = 0;
    let (fd, err) = loop {
        // SAFETY: C string, struct and state outlive the call; the
        // trampoline is instantiated for this F.
        let r = unsafe {
            call(
                dirfd,
                path.as_ptr(),
                &how.raw,
                HOW_SIZE,
                Some(setup_trampoline::<F>),
                &mut state as *mut Setup<F> as *mut c_void,
                &mut created,
            )
        };
        let err = io::Error::last_os_error();
        // EINTR of the library's own calls is repeated; not when the
        // closure failed (its error is the answer).
        if r < 0 && err.raw_os_error() == Some(libc::EINTR) && !state.failed {
            continue;
        }
        break (r, err);
    };
    // SAFETY: a new descriptor of the call's, owned from here on (so it is
    // closed if a panic resumes below).
    let fd = if fd >= 0 { Some(unsafe { OwnedFd::from_raw_fd(fd) }) } else { None };
    match state.failure.take() {
        Some(Failure::Panic(payload)) => {
            drop(fd);
            resume_unwind(payload)
        }
        Some(Failure::Other(e)) if fd.is_none() && err.raw_os_error() == Some(SETUP_FAILED_ERRNO) => return Err(e),
        _ => {}
    }
    match fd {
        Some(fd) => Ok((fd, Created::from(created))),
        None => Err(err),
    }
}

/// [`open_dir`], and if the call creates the directory, `setup(fd, path,
/// leaf)` runs on it before anyone else can use it (`ocdir_openat2_setup`):
/// set its owner, mode, xattrs through `fd`. `leaf` is always true here;
/// it runs at most once, and never for a directory that existed (then
/// [`Created::Existing`]).
///
/// If `setup` fails, what the call made is removed and the call fails:
/// with the error's errno when it has one ([`io::Error::raw_os_error`],
/// 1 to 4095), else the C call fails with [`SETUP_FAILED_ERRNO`] and this
/// returns `setup`'s own error. A panic in `setup` fails the C call the
/// same way and is resumed once it has returned. Should the removal fail,
/// its error is returned instead (ocdir.h).
pub fn open_dir_with<D, P, F>(dir: D, path: P, how: &How, setup: F) -> io::Result<(OwnedFd, Created)>
where
    D: AsFd,
    P: AsRef<Path>,
    F: FnMut(BorrowedFd<'_>, &Path, bool) -> io::Result<()>,
{
    call_with_setup(sys::ocdir_openat2_setup, dir, path, how, setup)
}

/// [`mkpath`] with a setup closure (`ocdir_mkpath_setup`): it runs with
/// `leaf` false on each intermediate directory the call makes (top down,
/// already at its name), and with `leaf` true on the leaf if the call makes
/// it, before anyone else can use it. Errors and panics as
/// [`open_dir_with`]; the directories the call made are removed again.
pub fn mkpath_with<D, P, F>(dir: D, path: P, how: &How, setup: F) -> io::Result<(OwnedFd, Created)>
where
    D: AsFd,
    P: AsRef<Path>,
    F: FnMut(BorrowedFd<'_>, &Path, bool) -> io::Result<()>,
{
    call_with_setup(sys::ocdir_mkpath_setup, dir, path, how, setup)
}

/// A new directory nobody else can see yet ([`prepare`]): set it up through
/// [`Prepared::fd`], then [`Prepared::publish`] it. A guard: dropped
/// unpublished, it is discarded (removed with everything put into it).
///
/// `Prepared` is [`Send`]: the C handle is heap memory of the library's,
/// tied to no thread (libocdir's calls are thread-safe and keep no
/// per-thread state for it), and this type hands it to C only through
/// `self` (publish, discard, drop), so one thread at a time uses it.
#[derive(Debug)]
pub struct Prepared {
    handle: *mut sys::ocdir_prepared,
    fd: Option<OwnedFd>,
}

// SAFETY: see the type's documentation.
unsafe impl Send for Prepared {}

/// A published directory ([`Prepared::publish`]).
#[derive(Debug)]
pub struct Published {
    /// The directory, now at its name.
    pub fd: OwnedFd,
    /// `None` once the empty staging directory was removed too; else why
    /// it stays (ENOENT: someone moved it away; the rmdir error, e.g.
    /// EACCES). Nothing to retry: the handle is gone.
    pub staging_left: Option<io::Error>,
}

/// The outcome of a successful [`Prepared::discard`]: nothing of the
/// prepared tree is left.
#[derive(Debug)]
pub struct Discarded {
    /// As [`Published::staging_left`].
    pub staging_left: Option<io::Error>,
}

/// [`Prepared::publish`] failed: the directory is still prepared (publish
/// again later, or drop it to discard it). `?` turns it into its
/// [`io::Error`], and the directory is then discarded on drop.
#[derive(Debug)]
pub struct PublishError {
    /// Why (EEXIST: the name was taken meanwhile).
    pub error: io::Error,
    /// The guard, still valid.
    pub prepared: Prepared,
}

/// [`Prepared::discard`] failed (something in the tree could not be
/// removed): the guard is still valid, the call can be repeated.
#[derive(Debug)]
pub struct DiscardError {
    /// Why (EBUSY, EACCES, ESTALE...).
    pub error: io::Error,
    /// The guard, still valid.
    pub prepared: Prepared,
}

macro_rules! guard_error {
    ($t:ident, $what:expr) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}: {}", $what, self.error)
            }
        }
        impl std::error::Error for $t {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.error)
            }
        }
        impl From<$t> for io::Error {
            fn from(e: $t) -> io::Error {
                e.error
            }
        }
    };
}
guard_error!(PublishError, "publishing the prepared directory");
guard_error!(DiscardError, "discarding the prepared directory");

/// Make a new, empty, still invisible directory destined for `path`
/// (`ocdir_prepare`), in a private staging directory next to it.
/// EEXIST if the name exists already.
pub fn prepare<D: AsFd, P: AsRef<Path>>(dir: D, path: P, how: &How) -> io::Result<Prepared> {
    let path = c_path(path.as_ref())?;
    let dirfd = dir.as_fd().as_raw_fd();
    let mut handle: *mut sys::ocdir_prepared = ptr::null_mut();
    // SAFETY: as open_dir; handle is written on success only.
    let fd = no_eintr(|| unsafe { sys::ocdir_prepare(dirfd, path.as_ptr(), &how.raw, HOW_SIZE, &mut handle) });
    let fd = owned(fd)?;
    Ok(Prepared { handle, fd: Some(fd) })
}

fn staging_left() -> Option<io::Error> {
    match errno() {
        0 => None,
        e => Some(io::Error::from_raw_os_error(e)),
    }
}

impl Prepared {
    /// The prepared directory.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_ref().expect("a live Prepared has its descriptor").as_fd()
    }

    /// Put the directory at its name in one rename (RENAME_NOREPLACE) and
    /// return its descriptor. On failure (EEXIST: the name was taken
    /// meanwhile) the guard comes back in the [`PublishError`].
    pub fn publish(mut self) -> Result<Published, PublishError> {
        let handle = self.handle;
        // SAFETY: handle is live: publish and discard take self, and it is
        // nulled once the library freed it.
        let r = no_eintr(|| {
            set_errno(0);
            unsafe { sys::ocdir_publish(handle) }
        });
        if r < 0 {
            return Err(PublishError { error: io::Error::last_os_error(), prepared: self });
        }
        let staging_left = staging_left();
        self.handle = ptr::null_mut(); // freed by the library
        let fd = self.fd.take().expect("a live Prepared has its descriptor");
        Ok(Published { fd, staging_left })
    }

    /// Remove the directory and everything put into it now, and say what
    /// became of the staging directory. On failure the guard comes back in
    /// the [`DiscardError`]: discard again (after closing descriptors, say).
    pub fn discard(mut self) -> Result<Discarded, DiscardError> {
        match self.discard_now() {
            Ok(staging_left) => Ok(Discarded { staging_left }),
            Err(error) => Err(DiscardError { error, prepared: self }),
        }
    }

    fn discard_now(&mut self) -> io::Result<Option<io::Error>> {
        if self.handle.is_null() {
            return Ok(None);
        }
        let handle = self.handle;
        // SAFETY: as publish. After a failure the handle stays valid (the
        // library frees it only on success): kept for a later try.
        let r = no_eintr(|| {
            set_errno(0);
            unsafe { sys::ocdir_discard(handle) }
        });
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let left = staging_left();
        self.handle = ptr::null_mut(); // freed by the library
        Ok(left)
    }
}

impl Drop for Prepared {
    /// Discards, silently. Should that fail, the C handle (still valid) is
    /// left allocated: nothing else can be done with it here.
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
    let b = unsafe { sys::ocdir_backend(&mut reason) };
    let text = if reason.is_null() {
        ""
    } else {
        // SAFETY: static, NUL-terminated text of the library.
        unsafe { CStr::from_ptr(reason) }.to_str().unwrap_or("")
    };
    (if b == sys::OCDIR_BACKEND_NATIVE { Backend::Native } else { Backend::Emulated }, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_is_struct_ocdir_how() {
        assert_eq!(HOW_SIZE, sys::OCDIR_HOW_SIZE_VER0);
        let h = How::new().mode(0o750).exclusive(true).resolve(resolve::BENEATH).options(options::NO_CLOEXEC);
        assert_eq!(h.raw, sys::ocdir_how { flags: libc::O_EXCL as u64, mode: 0o750, resolve: 8, options: 1 });
        assert_eq!(h.exclusive(false).raw.flags, 0);
    }

    #[test]
    fn prepared_is_send() {
        fn send<T: Send>() {}
        send::<Prepared>();
        send::<PublishError>();
    }
}
