// SPDX-License-Identifier: MIT
//
// The descriptor is the library's, not one the binding opened by name
// (bindings/README.md; the test-hooks library of `make test-hooks`, loaded
// with LD_LIBRARY_PATH=build/test-hooks): with OCDIR_TEST_SWAP_AFTER=1 set
// at the time of the call, the library moves the directory it made or
// opened to PATH.ocdir-test-moved and makes a fresh PATH just before
// returning. The fd must be the moved one, in every run. Without the hook
// (PATH.ocdir-test-moved absent) each case is a SKIP, or a FAIL with
// OCDIR_TEST_HOOKS_REQUIRED=1. One test (the variable is process-wide); a
// PASS/FAIL/SKIP line per call.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use ocdir::How;

fn nop(_: BorrowedFd<'_>, _: &Path, _: bool) -> io::Result<()> {
    Ok(())
}

fn check(base: &Path, name: &str, path: &str, call: &dyn Fn(&fs::File) -> io::Result<OwnedFd>) -> Result<(), String> {
    let dir = base.join(name);
    fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let d = fs::File::open(&dir).map_err(|e| e.to_string())?;
    std::env::set_var("OCDIR_TEST_SWAP_AFTER", "1");
    let got = call(&d);
    std::env::remove_var("OCDIR_TEST_SWAP_AFTER");
    let fd = got.map_err(|e| format!("the call failed: {}", e))?;
    let st = fs::File::from(fd.as_fd().try_clone_to_owned().unwrap()).metadata().unwrap();
    let moved = match fs::symlink_metadata(dir.join(format!("{}.ocdir-test-moved", path))) {
        Ok(m) => m,
        Err(_) if std::env::var("OCDIR_TEST_HOOKS_REQUIRED").as_deref() == Ok("1") => {
            return Err("no .ocdir-test-moved: the library has no test hooks (OCDIR_TEST_HOOKS_REQUIRED=1)".into())
        }
        Err(_) => return Err("SKIP".into()),
    };
    let fresh = fs::symlink_metadata(dir.join(path)).map_err(|e| format!("{}: {}", path, e))?;
    if (st.dev(), st.ino()) != (moved.dev(), moved.ino()) {
        return Err(format!("the fd is not the directory the library made (now {}.ocdir-test-moved)", path));
    }
    if (st.dev(), st.ino()) == (fresh.dev(), fresh.ino()) {
        return Err(format!("the fd is the fresh {}", path));
    }
    Ok(())
}

#[test]
fn identity() {
    let top = std::env::var_os("OCDIR_TEST_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let base = top.join(format!("rust-identity.{}", std::process::id()));
    fs::create_dir(&base).unwrap();
    type Call = Box<dyn Fn(&fs::File) -> io::Result<OwnedFd>>;
    let cases: Vec<(&str, &str, Call)> = vec![
        ("open_dir", "x", Box::new(|d| ocdir::open_dir(d, "x", &How::new()).map(|r| r.0))),
        (
            "open_dir-existing",
            "x",
            Box::new(|d| {
                ocdir::mkdirat(d, "x", &How::new())?;
                ocdir::open_dir(d, "x", &How::new()).map(|r| r.0)
            }),
        ),
        ("mkpath", "a/b", Box::new(|d| ocdir::mkpath(d, "a/b", &How::new()).map(|r| r.0))),
        ("open_dir_with", "s", Box::new(|d| ocdir::open_dir_with(d, "s", &How::new(), nop).map(|r| r.0))),
        ("mkpath_with", "m/n", Box::new(|d| ocdir::mkpath_with(d, "m/n", &How::new(), nop).map(|r| r.0))),
        (
            "publish",
            "p",
            Box::new(|d| {
                let p = ocdir::prepare(d, "p", &How::new())?;
                Ok(p.publish()?.fd)
            }),
        ),
    ];
    let mut failed = Vec::new();
    for (name, path, call) in &cases {
        match check(&base, name, path, call.as_ref()) {
            Ok(()) => println!("PASS: identity/{}", name),
            Err(why) if why == "SKIP" => {
                println!("SKIP: identity/{}: the library has no test hooks (make test-hooks; LD_LIBRARY_PATH=build/test-hooks)", name)
            }
            Err(why) => {
                println!("FAIL: identity/{}: {}", name, why);
                failed.push(*name);
            }
        }
    }
    let _ = fs::remove_dir_all(&base);
    assert!(failed.is_empty(), "failed: {:?}", failed);
}
