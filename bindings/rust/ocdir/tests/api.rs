// SPDX-License-Identifier: MIT
//
// The crate's own calls: results, errors, the setup closures, the prepare
// guard.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use ocdir::{cwd, How};

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let top = std::env::var_os("OCDIR_TEST_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let p = top.join(format!("rust-api.{}.{}", tag, std::process::id()));
        fs::create_dir(&p).unwrap();
        TempDir(p)
    }
    fn open(&self) -> fs::File {
        fs::File::open(&self.0).unwrap()
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
        let _ = fs::set_permissions(&self.0, fs::Permissions::from_mode(0o755));
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn ino(fd: BorrowedFd<'_>) -> (u64, u64) {
    let m = fs::File::from(fd.try_clone_to_owned().unwrap()).metadata().unwrap();
    (m.dev(), m.ino())
}

fn same(fd: &OwnedFd, path: &Path) -> bool {
    let b = fs::symlink_metadata(path).unwrap();
    ino(fd.as_fd()) == (b.dev(), b.ino())
}

#[test]
fn open_dir_creates_then_opens() {
    let t = TempDir::new("open");
    let p = t.0.join("a");
    let (fd, created) = ocdir::open_dir(cwd(), &p, &How::new().mode(0o700)).unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &p));
    assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o700);
    let (fd2, created) = ocdir::open_dir(cwd(), &p, &How::new()).unwrap();
    assert_eq!(created, ocdir::Created::Existing);
    assert!(same(&fd2, &p));
}

#[test]
fn relative_to_any_asfd() {
    let t = TempDir::new("rel");
    let d = t.open();
    // &File, File's BorrowedFd, an OwnedFd: all impl AsFd
    let (fd, created) = ocdir::open_dir(&d, "b", &How::new()).unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &t.0.join("b")));
    let (fd2, _) = ocdir::open_dir(d.as_fd(), "b", &How::new()).unwrap();
    assert!(same(&fd2, &t.0.join("b")));
    let (fd3, created) = ocdir::open_dir(&fd2, "c", &How::new()).unwrap();
    assert!(created.is_new());
    assert!(same(&fd3, &t.0.join("b/c")));
}

#[test]
fn errors_carry_the_errno() {
    let t = TempDir::new("err");
    let d = t.open();
    fs::write(t.0.join("file"), b"").unwrap();
    let e = ocdir::open_dir(&d, "file", &How::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
    fs::create_dir(t.0.join("c")).unwrap();
    let e = ocdir::open_dir(&d, "c", &How::new().exclusive(true)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    let e = ocdir::open_dir(&d, "../x", &How::new().resolve(ocdir::resolve::BENEATH)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EXDEV));
    std::os::unix::fs::symlink("c", t.0.join("l")).unwrap();
    let e = ocdir::open_dir(&d, "l", &How::new().follow_symlinks(false)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
}

#[test]
fn nul_in_path_is_invalid_input_and_creates_nothing() {
    let t = TempDir::new("nul");
    let d = t.open();
    let how = How::new();
    let nop = |_: BorrowedFd<'_>, _: &Path, _: bool| Ok(());
    let calls: Vec<(&str, io::Result<()>)> = vec![
        ("open_dir", ocdir::open_dir(&d, "nul\0byte", &how).map(drop)),
        ("mkpath", ocdir::mkpath(&d, "nul\0byte", &how).map(drop)),
        ("mkdirat", ocdir::mkdirat(&d, "nul\0byte", &how).map(drop)),
        ("open_dir_with", ocdir::open_dir_with(&d, "nul\0byte", &how, nop).map(drop)),
        ("mkpath_with", ocdir::mkpath_with(&d, "nul\0byte", &how, nop).map(drop)),
        ("prepare", ocdir::prepare(&d, "nul\0byte", &how).map(drop)),
    ];
    for (name, r) in calls {
        let e = r.expect_err(name);
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{}: {}", name, e);
        assert!(t.names().is_empty(), "{} created {:?}", name, t.names());
    }
}

#[test]
fn mkpath_and_mkdirat() {
    let t = TempDir::new("mkpath");
    let d = t.open();
    let (fd, created) = ocdir::mkpath(&d, "x/y/z", &How::new().mode(0o750)).unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &t.0.join("x/y/z")));
    let (_, created) = ocdir::mkpath(&d, "x/y/z", &How::new()).unwrap();
    assert!(!created.is_new());
    assert!(ocdir::mkdirat(&d, "m", &How::new()).unwrap().is_new());
    assert!(!ocdir::mkdirat(&d, "m", &How::new()).unwrap().is_new());
    fs::write(t.0.join("f"), b"").unwrap();
    let e = ocdir::mkpath(&d, "f/g", &How::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
}

#[test]
fn open_dir_with_sets_up_before_use() {
    let t = TempDir::new("setup");
    let d = t.open();
    let mut seen = Vec::new();
    let (fd, created) = ocdir::open_dir_with(&d, "s", &How::new().mode(0o750), |fd, path, leaf| {
        seen.push((ino(fd), path.to_path_buf(), leaf));
        // what the library promises: owner-only until set up
        let m = fs::File::from(fd.try_clone_to_owned()?).metadata()?;
        assert_eq!(m.mode() & 0o077, 0, "usable by others before setup");
        let r = unsafe { libc::fchmod(fd.as_raw_fd(), 0o751) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    })
    .unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &t.0.join("s")));
    assert_eq!(seen, vec![(ino(fd.as_fd()), PathBuf::from("s"), true)]);
    assert_eq!(fs::metadata(t.0.join("s")).unwrap().mode() & 0o7777, 0o751);
    // existing: opened, not set up
    let mut ran = 0;
    let (fd2, created) = ocdir::open_dir_with(&d, "s", &How::new(), |_, _, _| {
        ran += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!((created, ran), (ocdir::Created::Existing, 0));
    assert!(same(&fd2, &t.0.join("s")));
}

#[test]
fn mkpath_with_sees_every_level() {
    let t = TempDir::new("mkpathsetup");
    let d = t.open();
    fs::create_dir(t.0.join("a")).unwrap();
    let mut seen = Vec::new();
    let (fd, created) = ocdir::mkpath_with(&d, "a/b/c/leaf", &How::new().mode(0o700), |fd, path, leaf| {
        seen.push((ino(fd), path.to_path_buf(), leaf));
        Ok(())
    })
    .unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &t.0.join("a/b/c/leaf")));
    let at = |p: &str| {
        let m = fs::metadata(t.0.join(p)).unwrap();
        (m.dev(), m.ino())
    };
    let want = vec![
        (at("a/b"), PathBuf::from("a/b"), false),
        (at("a/b/c"), PathBuf::from("a/b/c"), false),
        (at("a/b/c/leaf"), PathBuf::from("a/b/c/leaf"), true),
    ];
    assert_eq!(seen, want);
}

#[test]
fn setup_errno_fails_the_call_with_it() {
    let t = TempDir::new("setuperr");
    let d = t.open();
    let e = ocdir::open_dir_with(&d, "x", &How::new(), |_, _, _| Err(io::Error::from_raw_os_error(libc::EDQUOT)))
        .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EDQUOT));
    let e = ocdir::mkpath_with(&d, "p/q", &How::new(), |_, _, leaf| {
        if leaf {
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    assert!(t.names().is_empty(), "left behind: {:?}", t.names());
}

#[derive(Debug)]
struct Mine(u32);
impl std::fmt::Display for Mine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mine {}", self.0)
    }
}
impl std::error::Error for Mine {}

#[test]
fn setup_error_without_errno_comes_back_as_it_was() {
    let t = TempDir::new("setupother");
    let d = t.open();
    for mk in [false, true] {
        let f = |_: BorrowedFd<'_>, _: &Path, _: bool| Err(io::Error::new(io::ErrorKind::Other, Mine(42)));
        let e = if mk {
            ocdir::mkpath_with(&d, "m/n", &How::new(), f)
        } else {
            ocdir::open_dir_with(&d, "o", &How::new(), f)
        }
        .unwrap_err();
        assert_eq!(e.raw_os_error(), None);
        let inner = e.get_ref().and_then(|i| i.downcast_ref::<Mine>()).expect("the closure's own error");
        assert_eq!(inner.0, 42);
        assert!(t.names().is_empty(), "left behind: {:?}", t.names());
    }
}

#[test]
fn setup_panic_resumes_after_c_returned() {
    let t = TempDir::new("setuppanic");
    let d = t.open();
    for mk in [false, true] {
        let got = std::panic::catch_unwind(|| {
            let f = |_: BorrowedFd<'_>, _: &Path, _: bool| -> io::Result<()> { panic!("setup panics {}", 7) };
            let _ = if mk {
                ocdir::mkpath_with(&d, "m/n", &How::new(), f)
            } else {
                ocdir::open_dir_with(&d, "o", &How::new(), f)
            };
        });
        let payload = got.expect_err("the panic comes back");
        let msg = payload.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(msg, "setup panics 7");
        assert!(t.names().is_empty(), "left behind: {:?}", t.names());
    }
}

#[test]
fn prepare_publish() {
    let t = TempDir::new("publish");
    let d = t.open();
    let p = ocdir::prepare(&d, "rel", &How::new().mode(0o755)).unwrap();
    assert!(fs::symlink_metadata(t.0.join("rel")).is_err(), "visible before publish");
    let got = p.publish().unwrap();
    assert!(same(&got.fd, &t.0.join("rel")));
    assert!(got.staging_left.is_none(), "{:?}", got.staging_left);
    assert_eq!(t.names(), vec!["rel"]);
}

#[test]
fn prepared_is_send() {
    let t = TempDir::new("send");
    let p = ocdir::prepare(&t.open(), "other-thread", &How::new()).unwrap();
    let fd = std::thread::spawn(move || p.publish().map(|x| x.fd)).join().unwrap().unwrap();
    assert!(same(&fd, &t.0.join("other-thread")));
}

#[test]
fn prepare_guard_discards_on_drop() {
    let t = TempDir::new("drop");
    let d = t.open();
    {
        let _p = ocdir::prepare(&d, "gone", &How::new()).unwrap();
    }
    assert!(t.names().is_empty(), "left behind: {:?}", t.names());
}

#[test]
fn publish_failure_hands_the_guard_back() {
    let t = TempDir::new("eexist");
    let d = t.open();
    let p = ocdir::prepare(&d, "taken", &How::new()).unwrap();
    fs::create_dir(t.0.join("taken")).unwrap();
    let e = p.publish().unwrap_err();
    assert_eq!(e.error.raw_os_error(), Some(libc::EEXIST));
    assert!(e.to_string().contains("File exists"), "{}", e);
    fs::remove_dir(t.0.join("taken")).unwrap();
    let fd = e.prepared.publish().unwrap().fd; // still prepared: again
    assert!(same(&fd, &t.0.join("taken")));
}

#[test]
fn publish_error_works_with_question_mark() {
    let t = TempDir::new("qmark");
    let d = t.open();
    fn publish(d: &fs::File) -> io::Result<OwnedFd> {
        let p = ocdir::prepare(d, "q", &How::new())?;
        fs::create_dir("/proc/self/fd/".to_string() + &d.as_raw_fd().to_string() + "/q")?;
        Ok(p.publish()?.fd)
    }
    let e = publish(&d).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    // the guard was dropped: discarded, only the planted q stays
    assert_eq!(t.names(), vec!["q"]);
}

#[test]
fn explicit_discard() {
    let t = TempDir::new("discard");
    let d = t.open();
    let p = ocdir::prepare(&d, "x", &How::new()).unwrap();
    fs::create_dir(t.0.join("y")).unwrap();
    let _ = fs::File::create(format!("/proc/self/fd/{}/inside", p.fd().as_raw_fd())).unwrap();
    let done = p.discard().unwrap();
    assert!(done.staging_left.is_none(), "{:?}", done.staging_left);
    assert_eq!(t.names(), vec!["y"]);
}

// The staging directory moved away by someone else: discard still
// succeeds (the handle is freed) and says why the staging dir stays.
#[test]
fn discard_reports_the_staging_directory_left() {
    let t = TempDir::new("stageleft");
    let d = t.open();
    let p = ocdir::prepare(&d, "x", &How::new()).unwrap();
    let stage = t.names().into_iter().find(|n| n.starts_with(".ocdir-stage.")).expect("a staging directory");
    fs::create_dir(t.0.join("elsewhere")).unwrap();
    fs::rename(t.0.join(&stage), t.0.join("elsewhere/moved")).unwrap();
    let done = p.discard().expect("discard succeeds");
    let left = done.staging_left.expect("the staging directory stays");
    assert_eq!(left.raw_os_error(), Some(libc::ENOENT));
    assert_eq!(t.names(), vec!["elsewhere"]);
}

// The same for publish: the directory is at its name, the handle freed,
// and the staging directory (moved away) stays, said with ENOENT.
#[test]
fn publish_reports_the_staging_directory_left() {
    let t = TempDir::new("pubstageleft");
    let d = t.open();
    let p = ocdir::prepare(&d, "x", &How::new()).unwrap();
    let stage = t.names().into_iter().find(|n| n.starts_with(".ocdir-stage.")).expect("a staging directory");
    fs::create_dir(t.0.join("elsewhere")).unwrap();
    fs::rename(t.0.join(&stage), t.0.join("elsewhere/moved")).unwrap();
    let done = p.publish().expect("publish succeeds");
    assert!(same(&done.fd, &t.0.join("x")));
    let left = done.staging_left.expect("the staging directory stays");
    assert_eq!(left.raw_os_error(), Some(libc::ENOENT));
    assert_eq!(t.names(), vec!["elsewhere", "x"]);
}

// Something the discard cannot remove (a mount point inside): the guard
// comes back, valid; the second discard succeeds.
#[test]
fn discard_failure_hands_the_guard_back() {
    let t = TempDir::new("busy");
    let d = t.open();
    let p = ocdir::prepare(&d, "x", &How::new()).unwrap();
    let sub = format!("/proc/self/fd/{}/m", p.fd().as_raw_fd());
    fs::create_dir(&sub).unwrap();
    let target = fs::read_link(&sub).unwrap_or_else(|_| PathBuf::from(&sub));
    let target = std::ffi::CString::new(target.to_string_lossy().as_bytes()).unwrap();
    let r = unsafe {
        libc::mount(b"tmpfs\0".as_ptr().cast(), target.as_ptr(), b"tmpfs\0".as_ptr().cast(), 0, std::ptr::null())
    };
    if r < 0 {
        eprintln!("SKIP: discard_failure_hands_the_guard_back: mount: {}", io::Error::last_os_error());
        return;
    }
    let e = p.discard().unwrap_err();
    assert_eq!(e.error.raw_os_error(), Some(libc::EBUSY), "{}", e);
    assert_eq!(unsafe { libc::umount(target.as_ptr()) }, 0);
    let done = e.prepared.discard().expect("the second discard");
    assert!(done.staging_left.is_none());
    assert!(t.names().is_empty(), "left behind: {:?}", t.names());
}

#[test]
fn backend_says_why() {
    let (b, reason) = ocdir::backend();
    assert!(!reason.is_empty());
    if std::env::var("OCDIR_FORCE_EMULATION").as_deref() == Ok("1") {
        assert_eq!(b, ocdir::Backend::Emulated);
    }
}
