// SPDX-License-Identifier: MIT
//
// The crate's own calls: results, errors, the prepare guard.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;

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
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn same(fd: &OwnedFd, path: &std::path::Path) -> bool {
    let a = fs::File::from(fd.try_clone().unwrap()).metadata().unwrap();
    let b = fs::metadata(path).unwrap();
    (a.dev(), a.ino()) == (b.dev(), b.ino())
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
fn relative_to_dirfd() {
    let t = TempDir::new("rel");
    let d = t.open();
    let (fd, created) = ocdir::open_dir(d.as_fd(), "b", &How::new()).unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &t.0.join("b")));
}

#[test]
fn errors_carry_the_errno() {
    let t = TempDir::new("err");
    let d = t.open();
    fs::write(t.0.join("file"), b"").unwrap();
    let e = ocdir::open_dir(d.as_fd(), "file", &How::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
    fs::create_dir(t.0.join("c")).unwrap();
    let e = ocdir::open_dir(d.as_fd(), "c", &How::new().exclusive(true)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    let e = ocdir::open_dir(d.as_fd(), "../x", &How::new().resolve(ocdir::resolve::BENEATH)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EXDEV));
    std::os::unix::fs::symlink("c", t.0.join("l")).unwrap();
    let e = ocdir::open_dir(d.as_fd(), "l", &How::new().follow_symlinks(false)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
    let e = ocdir::open_dir(d.as_fd(), "nul\0byte", &How::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn mkpath_and_mkdirat() {
    let t = TempDir::new("mkpath");
    let d = t.open();
    let (fd, created) = ocdir::mkpath(d.as_fd(), "x/y/z", &How::new().mode(0o750)).unwrap();
    assert!(created.is_new());
    assert!(same(&fd, &t.0.join("x/y/z")));
    let (_, created) = ocdir::mkpath(d.as_fd(), "x/y/z", &How::new()).unwrap();
    assert!(!created.is_new());
    assert!(ocdir::mkdirat(d.as_fd(), "m", &How::new()).unwrap().is_new());
    assert!(!ocdir::mkdirat(d.as_fd(), "m", &How::new()).unwrap().is_new());
    fs::write(t.0.join("f"), b"").unwrap();
    let e = ocdir::mkpath(d.as_fd(), "f/g", &How::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
}

#[test]
fn prepare_publish() {
    let t = TempDir::new("publish");
    let d = t.open();
    let p = ocdir::prepare(d.as_fd(), "rel", &How::new().mode(0o755)).unwrap();
    assert!(fs::symlink_metadata(t.0.join("rel")).is_err(), "visible before publish");
    let fd = p.publish().map_err(|(_, e)| e).unwrap();
    assert!(same(&fd, &t.0.join("rel")));
}

#[test]
fn prepare_guard_discards_on_drop() {
    let t = TempDir::new("drop");
    let d = t.open();
    {
        let _p = ocdir::prepare(d.as_fd(), "gone", &How::new()).unwrap();
    }
    assert_eq!(fs::read_dir(&t.0).unwrap().count(), 0, "something left behind");
}

#[test]
fn publish_failure_hands_the_guard_back() {
    let t = TempDir::new("eexist");
    let d = t.open();
    let p = ocdir::prepare(d.as_fd(), "taken", &How::new()).unwrap();
    fs::create_dir(t.0.join("taken")).unwrap();
    let (p, e) = p.publish().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    fs::remove_dir(t.0.join("taken")).unwrap();
    let fd = p.publish().map_err(|(_, e)| e).unwrap(); // still prepared: again
    assert!(same(&fd, &t.0.join("taken")));
}

#[test]
fn explicit_discard() {
    let t = TempDir::new("discard");
    let d = t.open();
    let p = ocdir::prepare(d.as_fd(), "x", &How::new()).unwrap();
    fs::create_dir(t.0.join("y")).unwrap();
    let _ = fs::File::create(format!("/proc/self/fd/{}/inside", p.fd().as_raw_fd())).unwrap();
    p.discard().unwrap();
    let left: Vec<_> = fs::read_dir(&t.0).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("y")]);
}

#[test]
fn backend_says_why() {
    let (b, reason) = ocdir::backend();
    assert!(!reason.is_empty());
    if std::env::var("OCDIR_FORCE_EMULATION").as_deref() == Ok("1") {
        assert_eq!(b, ocdir::Backend::Emulated);
    }
}
