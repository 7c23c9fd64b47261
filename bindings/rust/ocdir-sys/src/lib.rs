// SPDX-License-Identifier: MIT
//! The C interface of libocdir, as `include/ocdir.h` declares it: the
//! functions, `struct ocdir_how` and the constants, nothing else. Every
//! call is `unsafe`; the [`ocdir`](https://docs.rs/ocdir) crate is the safe
//! API over it. The header documents each call and its errors.
//!
//! Linking: `build.rs` asks `pkg-config --libs ocdir` (no crates needed),
//! or takes `OCDIR_LIB_DIR`; the `static` feature links `libocdir.a`.
//! See the README of bindings/rust for how a program finds
//! `libocdir.so.1` at run time.
#![allow(non_camel_case_types)]

use libc::{c_char, c_int, c_uint, c_void, mode_t};

/// `OCDIR_VERSION_STRING`: the library version these declarations are of.
pub const OCDIR_VERSION_STRING: &str = "1.2.0";

/// Fail with EXDEV on crossing a mount point.
pub const OCDIR_RESOLVE_NO_XDEV: u64 = 0x01;
/// Fail with ELOOP on a magic link such as /proc/self/fd/N.
pub const OCDIR_RESOLVE_NO_MAGICLINKS: u64 = 0x02;
/// Fail with ELOOP on any symlink.
pub const OCDIR_RESOLVE_NO_SYMLINKS: u64 = 0x04;
/// Stay below dirfd: leaving it is EXDEV.
pub const OCDIR_RESOLVE_BENEATH: u64 = 0x08;
/// Treat dirfd as "/".
pub const OCDIR_RESOLVE_IN_ROOT: u64 = 0x10;

/// The returned descriptor is not close-on-exec.
pub const OCDIR_NO_CLOEXEC: u64 = 1 << 0;
/// See ocdir.h.
pub const OCDIR_FAST_EMULATION: u64 = 1 << 1;
/// See ocdir.h.
pub const OCDIR_ALLOW_WEAK_EMULATION: u64 = 1 << 2;
/// See ocdir.h (setup calls only).
pub const OCDIR_ALWAYS_STAGE: u64 = 1 << 3;

/// `flags` bit of an [`ocdir_setup_fn`] call on the directory asked for.
pub const OCDIR_SETUP_LEAF: c_uint = 1;

/// `OCDIR_HOW_SIZE_VER0`: the size of [`ocdir_how`].
pub const OCDIR_HOW_SIZE_VER0: usize = 32;

/// `enum ocdir_backend`: the kernel creates with O_CREAT|O_DIRECTORY.
pub const OCDIR_BACKEND_NATIVE: c_int = 1;
/// `enum ocdir_backend`: the library emulates that.
pub const OCDIR_BACKEND_EMULATED: c_int = 2;

/// `struct ocdir_how`, laid out like `struct open_how`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ocdir_how {
    pub flags: u64,
    pub mode: u64,
    pub resolve: u64,
    pub options: u64,
}

/// `struct ocdir_prepared`: opaque, only ever behind a pointer.
#[repr(C)]
pub struct ocdir_prepared {
    _opaque: [u8; 0],
}

/// `ocdir_setup_fn`: returns 0 or a negative errno value.
pub type ocdir_setup_fn =
    Option<unsafe extern "C" fn(fd: c_int, path: *const c_char, flags: c_uint, arg: *mut c_void) -> c_int>;

extern "C" {
    pub fn ocdir_openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int;
    pub fn ocdir_openat2(
        dirfd: c_int,
        path: *const c_char,
        how: *const ocdir_how,
        size: usize,
        created: *mut c_int,
    ) -> c_int;
    pub fn ocdir_mkdirat(dirfd: c_int, path: *const c_char, how: *const ocdir_how, size: usize) -> c_int;
    pub fn ocdir_mkpath(
        dirfd: c_int,
        path: *const c_char,
        how: *const ocdir_how,
        size: usize,
        leaf_created: *mut c_int,
    ) -> c_int;
    pub fn ocdir_openat2_setup(
        dirfd: c_int,
        path: *const c_char,
        how: *const ocdir_how,
        size: usize,
        setup: ocdir_setup_fn,
        arg: *mut c_void,
        created: *mut c_int,
    ) -> c_int;
    pub fn ocdir_mkpath_setup(
        dirfd: c_int,
        path: *const c_char,
        how: *const ocdir_how,
        size: usize,
        setup: ocdir_setup_fn,
        arg: *mut c_void,
        leaf_created: *mut c_int,
    ) -> c_int;
    pub fn ocdir_prepare(
        dirfd: c_int,
        path: *const c_char,
        how: *const ocdir_how,
        size: usize,
        prepared: *mut *mut ocdir_prepared,
    ) -> c_int;
    pub fn ocdir_publish(prepared: *mut ocdir_prepared) -> c_int;
    pub fn ocdir_discard(prepared: *mut ocdir_prepared) -> c_int;
    pub fn ocdir_backend(reason: *mut *const c_char) -> c_int;
}

#[cfg(test)]
mod tests {
    #[test]
    fn how_is_32_bytes() {
        assert_eq!(std::mem::size_of::<super::ocdir_how>(), super::OCDIR_HOW_SIZE_VER0);
    }
}
