// SPDX-License-Identifier: MIT
//
// This test binary defines the library's functions itself: the crate's
// references to ocdir_openat2, ocdir_prepare, ocdir_discard... resolve to
// the definitions below, which record what the crate passed and hand on to
// libocdir's own (dlsym(RTLD_NEXT)). So the tests see, without races or
// sanitizers:
// - every argument as it reaches C (dirfd, path, how, size, the setup
//   callable and its argument, the created pointer);
// - a failure with EINTR on demand, which the crate must repeat (as std
//   does), and must not repeat once the setup closure failed;
// - each prepare handle's life: a publish or discard with a handle the
//   library freed (or never gave out) is caught here, not passed on.
#![cfg(not(feature = "static"))]

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::ffi::CStr;
use std::fs;
use std::io;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::os::unix::io::{AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ocdir::How;
use ocdir_sys::{ocdir_how, ocdir_prepared, ocdir_setup_fn};

// ---- the shims ----

#[derive(Clone, Debug, PartialEq)]
struct Seen {
    call: &'static str,
    dirfd: c_int,
    path: String,
    how: ocdir_how,
    size: usize,
    setup: bool,
    arg: bool,
    created: bool,
}

thread_local! {
    static EINTR: Cell<u32> = Cell::new(0); // fail this many calls with EINTR
    static SEEN: RefCell<Vec<Seen>> = RefCell::new(Vec::new());
    // inside a shim: the library calls its own exported functions (mkpath
    // is mkpath_setup without setup), which land here too; not the crate's
    static INSIDE: Cell<bool> = Cell::new(false);
}

// Run the library's own function, marked as inside.
unsafe fn through<R>(f: impl FnOnce() -> R) -> R {
    INSIDE.with(|i| i.set(true));
    let r = f();
    INSIDE.with(|i| i.set(false));
    r
}

fn inside() -> bool {
    INSIDE.with(|i| i.get())
}

static HANDLES: Mutex<Option<(HashSet<usize>, HashSet<usize>)>> = Mutex::new(None); // (live, freed)
static BAD: Mutex<Vec<String>> = Mutex::new(Vec::new());
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn next<T>(name: &str) -> T {
    let c = std::ffi::CString::new(name).unwrap();
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c.as_ptr()) };
    assert!(!p.is_null(), "{} not found in libocdir", name);
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    unsafe { std::mem::transmute_copy(&p) }
}

fn interrupted() -> bool {
    EINTR.with(|n| {
        if n.get() > 0 {
            n.set(n.get() - 1);
            unsafe { *libc::__errno_location() = libc::EINTR };
            true
        } else {
            false
        }
    })
}

unsafe fn record(
    call: &'static str,
    dirfd: c_int,
    path: *const c_char,
    how: *const ocdir_how,
    size: usize,
    setup: bool,
    arg: bool,
    created: bool,
) {
    let path = if path.is_null() { "(null)".into() } else { CStr::from_ptr(path).to_string_lossy().into_owned() };
    let how = if how.is_null() { ocdir_how::default() } else { *how };
    SEEN.with(|s| s.borrow_mut().push(Seen { call, dirfd, path, how, size, setup, arg, created }));
}

type Plain = unsafe extern "C" fn(c_int, *const c_char, *const ocdir_how, usize, *mut c_int) -> c_int;
type Setup = unsafe extern "C" fn(
    c_int,
    *const c_char,
    *const ocdir_how,
    usize,
    ocdir_setup_fn,
    *mut c_void,
    *mut c_int,
) -> c_int;

#[no_mangle]
pub unsafe extern "C" fn ocdir_openat2(
    dirfd: c_int,
    path: *const c_char,
    how: *const ocdir_how,
    size: usize,
    created: *mut c_int,
) -> c_int {
    if inside() {
        return next::<Plain>("ocdir_openat2")(dirfd, path, how, size, created);
    }
    record("openat2", dirfd, path, how, size, false, false, !created.is_null());
    if interrupted() {
        return -1;
    }
    through(|| next::<Plain>("ocdir_openat2")(dirfd, path, how, size, created))
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_mkpath(
    dirfd: c_int,
    path: *const c_char,
    how: *const ocdir_how,
    size: usize,
    created: *mut c_int,
) -> c_int {
    if inside() {
        return next::<Plain>("ocdir_mkpath")(dirfd, path, how, size, created);
    }
    record("mkpath", dirfd, path, how, size, false, false, !created.is_null());
    if interrupted() {
        return -1;
    }
    through(|| next::<Plain>("ocdir_mkpath")(dirfd, path, how, size, created))
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_mkdirat(dirfd: c_int, path: *const c_char, how: *const ocdir_how, size: usize) -> c_int {
    record("mkdirat", dirfd, path, how, size, false, false, false);
    if interrupted() {
        return -1;
    }
    next::<unsafe extern "C" fn(c_int, *const c_char, *const ocdir_how, usize) -> c_int>("ocdir_mkdirat")(
        dirfd, path, how, size,
    )
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_openat2_setup(
    dirfd: c_int,
    path: *const c_char,
    how: *const ocdir_how,
    size: usize,
    setup: ocdir_setup_fn,
    arg: *mut c_void,
    created: *mut c_int,
) -> c_int {
    if inside() {
        return next::<Setup>("ocdir_openat2_setup")(dirfd, path, how, size, setup, arg, created);
    }
    record("openat2_setup", dirfd, path, how, size, setup.is_some(), !arg.is_null(), !created.is_null());
    if interrupted() {
        return -1;
    }
    through(|| next::<Setup>("ocdir_openat2_setup")(dirfd, path, how, size, setup, arg, created))
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_mkpath_setup(
    dirfd: c_int,
    path: *const c_char,
    how: *const ocdir_how,
    size: usize,
    setup: ocdir_setup_fn,
    arg: *mut c_void,
    created: *mut c_int,
) -> c_int {
    if inside() {
        return next::<Setup>("ocdir_mkpath_setup")(dirfd, path, how, size, setup, arg, created);
    }
    record("mkpath_setup", dirfd, path, how, size, setup.is_some(), !arg.is_null(), !created.is_null());
    if interrupted() {
        return -1;
    }
    through(|| next::<Setup>("ocdir_mkpath_setup")(dirfd, path, how, size, setup, arg, created))
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_prepare(
    dirfd: c_int,
    path: *const c_char,
    how: *const ocdir_how,
    size: usize,
    prepared: *mut *mut ocdir_prepared,
) -> c_int {
    record("prepare", dirfd, path, how, size, false, false, !prepared.is_null());
    if interrupted() {
        return -1;
    }
    type F = unsafe extern "C" fn(c_int, *const c_char, *const ocdir_how, usize, *mut *mut ocdir_prepared) -> c_int;
    let r = next::<F>("ocdir_prepare")(dirfd, path, how, size, prepared);
    if r >= 0 {
        let h = *prepared as usize;
        let mut g = HANDLES.lock().unwrap();
        let (live, freed) = g.get_or_insert_with(Default::default);
        live.insert(h);
        freed.remove(&h); // malloc may give the address out again
    }
    r
}

// publish and discard: only with a live handle; freed by a 0 return.
unsafe fn end(name: &'static str, p: *mut ocdir_prepared) -> c_int {
    let h = p as usize;
    {
        let mut g = HANDLES.lock().unwrap();
        let (live, freed) = g.get_or_insert_with(Default::default);
        if !live.contains(&h) {
            let what = if freed.contains(&h) { "freed" } else { "unknown" };
            BAD.lock().unwrap().push(format!("{} with a {} handle {:#x}", name, what, h));
            *libc::__errno_location() = libc::EFAULT;
            return -1;
        }
    }
    SEEN.with(|s| {
        s.borrow_mut().push(Seen {
            call: name,
            dirfd: -1,
            path: String::new(),
            how: ocdir_how::default(),
            size: 0,
            setup: false,
            arg: false,
            created: false,
        })
    });
    if interrupted() {
        return -1;
    }
    let r = next::<unsafe extern "C" fn(*mut ocdir_prepared) -> c_int>(name)(p);
    if r == 0 {
        let e = *libc::__errno_location();
        let mut g = HANDLES.lock().unwrap();
        let (live, freed) = g.get_or_insert_with(Default::default);
        live.remove(&h);
        freed.insert(h);
        *libc::__errno_location() = e;
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_publish(p: *mut ocdir_prepared) -> c_int {
    end("ocdir_publish", p)
}

#[no_mangle]
pub unsafe extern "C" fn ocdir_discard(p: *mut ocdir_prepared) -> c_int {
    end("ocdir_discard", p)
}

// ---- helpers ----

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let top = std::env::var_os("OCDIR_TEST_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let p = top.join(format!("rust-shim.{}.{}", tag, std::process::id()));
        fs::create_dir(&p).unwrap();
        TempDir(p)
    }
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn seen() -> Vec<Seen> {
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

fn calls() -> Vec<&'static str> {
    seen().into_iter().map(|s| s.call).collect()
}

fn no_bad_handles() {
    let bad = std::mem::take(&mut *BAD.lock().unwrap());
    assert!(bad.is_empty(), "the crate called C with a dead handle: {:?}", bad);
}

fn eintr(n: u32) {
    EINTR.with(|c| c.set(n));
}

fn nop(_: BorrowedFd<'_>, _: &Path, _: bool) -> io::Result<()> {
    Ok(())
}

// ---- tests ----

#[test]
fn arguments_reach_c_unchanged() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = TempDir::new("args");
    let d = fs::File::open(&t.0).unwrap();
    let how = How::new()
        .mode(0o1751)
        .flags(libc::O_NOFOLLOW)
        .exclusive(true)
        .resolve(ocdir::resolve::BENEATH | ocdir::resolve::NO_XDEV)
        .options(ocdir::options::NO_CLOEXEC | ocdir::options::ALWAYS_STAGE);
    let raw = ocdir_how {
        flags: (libc::O_NOFOLLOW | libc::O_EXCL) as u64,
        mode: 0o1751,
        resolve: 0x08 | 0x01,
        options: 1 | 8,
    };
    assert_eq!(*how.as_raw(), raw);
    seen();
    let _ = ocdir::open_dir(&d, "o1", &how).unwrap();
    let _ = ocdir::mkpath(&d, "m1/m2", &how).unwrap();
    let _ = ocdir::mkdirat(&d, "k1", &how).unwrap();
    let _ = ocdir::open_dir_with(&d, "s1", &how, nop).unwrap();
    let _ = ocdir::mkpath_with(&d, "t1/t2", &how, nop).unwrap();
    let p = ocdir::prepare(&d, "p1", &How::new().mode(0o700)).unwrap();
    drop(p);
    let want = |call, path: &str, how, setup, created| Seen {
        call,
        dirfd: d.as_raw_fd(),
        path: path.to_string(),
        how,
        size: 32,
        setup,
        arg: setup,
        created,
    };
    let got = seen();
    let p_how = *How::new().mode(0o700).as_raw();
    assert_eq!(
        got[..6],
        vec![
            want("openat2", "o1", raw, false, true),
            want("mkpath", "m1/m2", raw, false, true),
            want("mkdirat", "k1", raw, false, false),
            want("openat2_setup", "s1", raw, true, true),
            want("mkpath_setup", "t1/t2", raw, true, true),
            want("prepare", "p1", p_how, false, true),
        ][..]
    );
    // AT_FDCWD through cwd()
    let _ = ocdir::open_dir(ocdir::cwd(), t.0.join("o2"), &How::new()).unwrap();
    let got = seen();
    assert_eq!((got[0].dirfd, got[0].path.clone()), (libc::AT_FDCWD, t.0.join("o2").to_string_lossy().into_owned()));
    no_bad_handles();
}

#[test]
fn created_comes_from_c() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = TempDir::new("created");
    let d = fs::File::open(&t.0).unwrap();
    for round in 0..2 {
        let want = if round == 0 { ocdir::Created::New } else { ocdir::Created::Existing };
        assert_eq!(ocdir::open_dir(&d, "a", &How::new()).unwrap().1, want);
        assert_eq!(ocdir::mkpath(&d, "b/c", &How::new()).unwrap().1, want);
        assert_eq!(ocdir::mkdirat(&d, "e", &How::new()).unwrap(), want);
        assert_eq!(ocdir::open_dir_with(&d, "f", &How::new(), nop).unwrap().1, want);
        assert_eq!(ocdir::mkpath_with(&d, "g/h", &How::new(), nop).unwrap().1, want);
    }
}

#[test]
fn eintr_is_repeated() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = TempDir::new("eintr");
    let d = fs::File::open(&t.0).unwrap();
    seen();
    eintr(2);
    assert!(ocdir::open_dir(&d, "a", &How::new()).unwrap().1.is_new());
    assert_eq!(calls(), ["openat2"; 3]);
    eintr(1);
    assert!(ocdir::mkpath(&d, "b/c", &How::new()).unwrap().1.is_new());
    assert_eq!(calls(), ["mkpath"; 2]);
    eintr(1);
    assert!(ocdir::mkdirat(&d, "e", &How::new()).unwrap().is_new());
    assert_eq!(calls(), ["mkdirat"; 2]);
    eintr(1);
    assert!(ocdir::open_dir_with(&d, "f", &How::new(), nop).unwrap().1.is_new());
    assert_eq!(calls(), ["openat2_setup"; 2]);
    eintr(1);
    assert!(ocdir::mkpath_with(&d, "g/h", &How::new(), nop).unwrap().1.is_new());
    assert_eq!(calls(), ["mkpath_setup"; 2]);
    eintr(1);
    let p = ocdir::prepare(&d, "p", &How::new()).unwrap();
    eintr(1);
    let fd = p.publish().expect("publish after EINTR").fd;
    assert_eq!(calls(), ["prepare", "prepare", "ocdir_publish", "ocdir_publish"]);
    drop(fd);
    let p = ocdir::prepare(&d, "q", &How::new()).unwrap();
    eintr(1);
    p.discard().expect("discard after EINTR");
    assert_eq!(calls(), ["prepare", "ocdir_discard", "ocdir_discard"]);
    eintr(0);
    assert_eq!(t.names(), ["a", "b", "e", "f", "g", "p"]);
    no_bad_handles();
}

// The closure's own EINTR is its answer: not a reason to call again.
#[test]
fn setup_eintr_is_not_repeated() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = TempDir::new("setupeintr");
    let d = fs::File::open(&t.0).unwrap();
    seen();
    let mut runs = 0;
    // (a second run would succeed: a crate that repeats the call returns Ok)
    let e = ocdir::open_dir_with(&d, "a", &How::new(), |_, _, _| {
        runs += 1;
        if runs == 1 {
            Err(io::Error::from_raw_os_error(libc::EINTR))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert_eq!((e.raw_os_error(), runs), (Some(libc::EINTR), 1));
    assert_eq!(calls(), ["openat2_setup"]);
}

#[test]
fn freed_handles_never_reach_c() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = TempDir::new("freed");
    let d = fs::File::open(&t.0).unwrap();
    // publish, then the Published and its fd dropped
    let p = ocdir::prepare(&d, "a", &How::new()).unwrap();
    drop(p.publish().unwrap());
    // discard
    let p = ocdir::prepare(&d, "b", &How::new()).unwrap();
    let done = p.discard().unwrap();
    assert!(done.staging_left.is_none());
    // discard with the staging directory moved away: 0 and ENOENT, freed
    let p = ocdir::prepare(&d, "c", &How::new()).unwrap();
    let stage = t.names().into_iter().find(|n| n.starts_with(".ocdir-stage.")).unwrap();
    fs::create_dir(t.0.join("away")).unwrap();
    fs::rename(t.0.join(&stage), t.0.join("away/stage")).unwrap();
    let done = p.discard().expect("0 from C is success");
    assert_eq!(done.staging_left.and_then(|e| e.raw_os_error()), Some(libc::ENOENT));
    // dropped unpublished
    drop(ocdir::prepare(&d, "e", &How::new()).unwrap());
    // a failed publish hands the live guard back; it is dropped
    let p = ocdir::prepare(&d, "a", &How::new()).unwrap_err();
    assert_eq!(p.raw_os_error(), Some(libc::EEXIST));
    let p = ocdir::prepare(&d, "f", &How::new()).unwrap();
    fs::create_dir(t.0.join("f")).unwrap();
    let e = p.publish().unwrap_err();
    drop(e);
    assert_eq!(t.names(), ["a", "away", "f"]);
    no_bad_handles();
    let g = HANDLES.lock().unwrap();
    assert!(g.as_ref().map_or(false, |(_, freed)| freed.len() >= 5), "the shim saw the handles freed");
}

#[test]
fn the_shim_is_in_use() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    seen();
    let e = ocdir::open_dir(ocdir::cwd(), "/proc/nonexistent/x", &How::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    assert_eq!(calls(), ["openat2"]);
    let _ = ocdir::backend();
}
