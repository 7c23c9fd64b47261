// SPDX-License-Identifier: MIT
//
// The calls table of tests/conformance/calls.h (mkdirat, mkpath, the setup
// calls, prepare with publish or discard, open's options), through the
// crate's API: read from $OCDIR_CALLS_TABLE, else the checkout's
// build/tests/calls.tsv (`build/tests/conformance --print-calls`; columns in
// bindings/README.md). Each case runs in a fresh directory below
// $OCDIR_TEST_DIR, umask 022, with the case directory as the directory
// argument. One test; a PASS/FAIL/SKIP line per case.

use std::cell::Cell;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

mod common;
use common::{check_after, count_fds, setup_op, stage_left};

struct Case {
    name: String,
    call: String,
    setup: String,
    path: String,
    flags: i32,
    mode: u32,
    resolve: u64,
    options: u64,
    action: String,
    err: i32,
    fd_is: String,
    created: i32,
    after: String,
    calls: String,
    need: u32,
}

fn table_path() -> PathBuf {
    match std::env::var_os("OCDIR_CALLS_TABLE") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../build/tests/calls.tsv"),
    }
}

fn read_table(path: &Path) -> Result<Vec<Case>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {}", path.display(), e))?;
    let mut cases = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let x: Vec<&str> = line.split('\t').collect();
        if x.len() != 15 {
            return Err(format!("{}: {} columns, not 15: {:?}", path.display(), x.len(), line));
        }
        let bad = |what: &str| format!("{}: bad {} in {:?}", path.display(), what, line);
        cases.push(Case {
            name: x[0].to_string(),
            call: x[1].to_string(),
            setup: x[2].to_string(),
            path: x[3].to_string(),
            flags: x[4].parse().map_err(|_| bad("flags"))?,
            mode: u32::from_str_radix(x[5], 8).map_err(|_| bad("mode"))?,
            resolve: x[6].parse().map_err(|_| bad("resolve"))?,
            options: x[7].parse().map_err(|_| bad("options"))?,
            action: x[8].to_string(),
            err: x[9].parse().map_err(|_| bad("err"))?,
            fd_is: x[10].to_string(),
            created: x[11].parse().map_err(|_| bad("created"))?,
            after: x[12].to_string(),
            calls: x[13].to_string(),
            need: x[14].parse().map_err(|_| bad("need"))?,
        });
    }
    Ok(cases)
}

// Does the filesystem under dir take renameat2(RENAME_NOREPLACE)?
fn noreplace_works(dir: &Path) -> bool {
    let (a, b) = (dir.join("noreplace-a"), dir.join("noreplace-b"));
    fs::create_dir(&a).unwrap();
    let ca = std::ffi::CString::new(a.to_string_lossy().as_bytes()).unwrap();
    let cb = std::ffi::CString::new(b.to_string_lossy().as_bytes()).unwrap();
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    let _ = fs::remove_dir(&a);
    let _ = fs::remove_dir(&b);
    r == 0
}

fn skip_reason(c: &Case, noreplace: bool) -> Option<&'static str> {
    if c.need & 32 != 0 && !noreplace {
        return Some("publishes by RENAME_NOREPLACE, which this filesystem refuses");
    }
    let root = unsafe { libc::geteuid() } == 0;
    if c.need & 1 != 0 && !root {
        return Some("root only");
    }
    if c.need & 2 != 0 && root {
        return Some("non-root only (the C conformance test's --user run covers it)");
    }
    if c.need & 4 != 0 {
        return Some("needs a private mount namespace (the C conformance test runs it)");
    }
    if c.need & 8 != 0 && !root {
        return Some("setup needs root");
    }
    if c.need & 16 != 0 {
        let on = fs::read_to_string("/proc/sys/fs/protected_symlinks").unwrap_or_default();
        if !on.starts_with('1') {
            return Some("fs.protected_symlinks is off");
        }
    }
    None
}

fn octal(s: &str) -> u32 {
    u32::from_str_radix(s, 8).unwrap()
}

fn fchmod(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    if unsafe { libc::fchmod(fd.as_raw_fd(), mode) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// fill: a file f, a directory sub, a file sub/g, by *at calls on fd.
fn fill(fd: BorrowedFd<'_>) -> io::Result<()> {
    let raw = fd.as_raw_fd();
    let chk = |r: libc::c_int| if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) };
    unsafe {
        libc::close(chk(libc::openat(
            raw,
            b"f\0".as_ptr().cast(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o644,
        ))?);
        chk(libc::mkdirat(raw, b"sub\0".as_ptr().cast(), 0o755))?;
        libc::close(chk(libc::openat(
            raw,
            b"sub/g\0".as_ptr().cast(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o644,
        ))?);
    }
    Ok(())
}

fn want_errno(c: &Case, got: &io::Result<()>, what: &str) -> Result<(), String> {
    match (got, c.err) {
        (Ok(()), 0) => Ok(()),
        (Ok(()), e) => Err(format!("{} succeeded, want errno {}", what, e)),
        (Err(e), 0) => Err(format!("{}: {} (errno {:?}), want success", what, e, e.raw_os_error())),
        (Err(e), want) if e.raw_os_error() != Some(want) => {
            Err(format!("{}: {} (errno {:?}), want errno {}", what, e, e.raw_os_error(), want))
        }
        _ => Ok(()),
    }
}

// The descriptor: a directory, O_RDONLY, close-on-exec as the C test wants
// it, and the directory fd_is names.
fn check_fd(c: &Case, fd: &OwnedFd) -> Result<(), String> {
    let raw = fd.as_raw_fd();
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(raw, &mut st) } < 0 || st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err("fd is not a directory".into());
    }
    let fl = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    if fl & (libc::O_ACCMODE | libc::O_PATH) != libc::O_RDONLY {
        return Err("fd is not O_RDONLY".into());
    }
    let cloexec = unsafe { libc::fcntl(raw, libc::F_GETFD) } & libc::FD_CLOEXEC != 0;
    // the C test's rule: NO_CLOEXEC drops it unless O_CLOEXEC is asked
    let want_cloexec = c.options & ocdir::options::NO_CLOEXEC == 0 || c.flags & libc::O_CLOEXEC != 0;
    if cloexec != want_cloexec {
        return Err(format!("fd close-on-exec is {}, want {}", cloexec, want_cloexec));
    }
    if c.fd_is != "-" {
        match fs::metadata(&c.fd_is) {
            Ok(m) if m.dev() == st.st_dev && m.ino() == st.st_ino => {}
            Ok(_) => return Err(format!("fd is not {}", c.fd_is)),
            Err(_) => return Err(format!("fd_is {} is missing", c.fd_is)),
        }
    }
    Ok(())
}

fn check_created(c: &Case, created: bool) -> Result<(), String> {
    if c.created >= 0 && created != (c.created == 1) {
        return Err(format!("created={}, want {}", created, c.created));
    }
    Ok(())
}

fn run_case(base: &Path, idx: usize, c: &Case) -> Result<(), String> {
    let casedir = base.join(format!("{:03}", idx));
    fs::create_dir(&casedir).and_then(|_| std::env::set_current_dir(&casedir)).map_err(|e| format!("setup: {}", e))?;
    let d = fs::File::open(&casedir).map_err(|e| format!("setup: {}", e))?;
    for op in c.setup.split_whitespace() {
        setup_op(&casedir, op).map_err(|e| format!("setup {}: {}", op, e))?;
    }
    let path = c.path.replace("%D", &casedir.to_string_lossy());
    let how = ocdir::How::new().mode(c.mode).flags(c.flags).resolve(c.resolve).options(c.options);
    let (kind, arg) = c.action.split_once(':').unwrap_or((&c.action, ""));
    let before = count_fds();
    match c.call.as_str() {
        "open" | "mkpath" => {
            let got = if c.call == "open" { ocdir::open_dir(&d, &path, &how) } else { ocdir::mkpath(&d, &path, &how) };
            want_errno(c, &got.as_ref().map(|_| ()).map_err(copy), "the call")?;
            if let Ok((fd, created)) = got {
                check_fd(c, &fd)?;
                check_created(c, created.is_new())?;
            }
        }
        "mkdir" => {
            let got = ocdir::mkdirat(&d, &path, &how);
            want_errno(c, &got.as_ref().map(|_| ()).map_err(copy), "the call")?;
            if let Ok(created) = got {
                check_created(c, created.is_new())?;
            }
        }
        "open-setup" | "mkpath-setup" => {
            let (leaf_runs, inter_runs) = (Cell::new(0), Cell::new(0));
            let setup = |fd: BorrowedFd<'_>, _: &Path, leaf: bool| -> io::Result<()> {
                if leaf {
                    leaf_runs.set(leaf_runs.get() + 1);
                } else {
                    inter_runs.set(inter_runs.get() + 1);
                }
                match kind {
                    "chmod" => fchmod(fd, octal(arg)),
                    "leafchmod" if leaf => fchmod(fd, octal(arg)),
                    "fail" if leaf => Err(io::Error::from_raw_os_error(arg.parse().unwrap())),
                    _ => Ok(()),
                }
            };
            let got = if c.call == "open-setup" {
                ocdir::open_dir_with(&d, &path, &how, setup)
            } else {
                ocdir::mkpath_with(&d, &path, &how, setup)
            };
            want_errno(c, &got.as_ref().map(|_| ()).map_err(copy), "the call")?;
            if let Ok((fd, created)) = got {
                check_fd(c, &fd)?;
                check_created(c, created.is_new())?;
            }
            if c.calls != "-" {
                let runs = format!("{}/{}", leaf_runs.get(), inter_runs.get());
                if runs != c.calls {
                    return Err(format!("the setup closure ran {} times (leaf/intermediate), want {}", runs, c.calls));
                }
            }
        }
        "prepare-publish" | "prepare-discard" => {
            let p = ocdir::prepare(&d, &path, &how);
            if kind != "plant" {
                want_errno(c, &p.as_ref().map(|_| ()).map_err(copy), "prepare")?;
            } else if let Err(e) = &p {
                return Err(format!("prepare: {}, want success (the plant comes after)", e));
            }
            if let Ok(p) = p {
                let fd = p.fd().try_clone_to_owned().map_err(|e| e.to_string())?;
                check_fd(&Case { fd_is: "-".into(), ..clone(c) }, &fd)?;
                drop(fd);
                match kind {
                    "chmod" => fchmod(p.fd(), octal(arg)).map_err(|e| format!("fchmod: {}", e))?,
                    "fill" => fill(p.fd()).map_err(|e| format!("fill: {}", e))?,
                    "plant" => fs::create_dir(arg).map_err(|e| format!("plant {}: {}", arg, e))?,
                    _ => {}
                }
                if c.call == "prepare-discard" {
                    let done = p.discard().map_err(|e| format!("discard: {}", e))?;
                    if let Some(e) = done.staging_left {
                        return Err(format!("discard left the staging directory: {}", e));
                    }
                } else {
                    match p.publish() {
                        Ok(published) => {
                            if kind == "plant" {
                                return Err(format!("publish succeeded, want errno {}", c.err));
                            }
                            if let Some(e) = &published.staging_left {
                                return Err(format!("publish left the staging directory: {}", e));
                            }
                            check_fd(c, &published.fd)?;
                        }
                        Err(e) if kind == "plant" => {
                            want_errno(c, &Err(copy(&e.error)), "publish")?;
                            e.prepared.discard().map_err(|e| format!("discard after the failed publish: {}", e))?;
                        }
                        Err(e) => return Err(format!("publish: {}", e)),
                    }
                }
            }
        }
        other => return Err(format!("unknown call {}", other)),
    }
    if let Some(why) = check_after(&c.after) {
        return Err(why);
    }
    if count_fds() != before {
        return Err("fd leaked".into());
    }
    if stage_left(&casedir, 2) {
        return Err("a .ocdir-stage.* directory was left behind".into());
    }
    Ok(())
}

fn copy(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(n) => io::Error::from_raw_os_error(n),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}

fn clone(c: &Case) -> Case {
    Case {
        name: c.name.clone(),
        call: c.call.clone(),
        setup: c.setup.clone(),
        path: c.path.clone(),
        action: c.action.clone(),
        fd_is: c.fd_is.clone(),
        after: c.after.clone(),
        calls: c.calls.clone(),
        ..*c
    }
}

#[test]
fn calls() {
    let cases = read_table(&table_path()).unwrap_or_else(|e| panic!("the calls table: {}", e));
    assert!(!cases.is_empty(), "no cases in {}", table_path().display());
    let top = std::env::var_os("OCDIR_TEST_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let base = top.join(format!("rust-calls.{}", std::process::id()));
    fs::create_dir(&base).unwrap();
    fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
    let cwd = std::env::current_dir().unwrap();
    let noreplace = noreplace_works(&base);
    let old = unsafe { libc::umask(0o022) };
    let mut failed = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if let Some(why) = skip_reason(c, noreplace) {
            println!("SKIP: calls/{}: {}", c.name, why);
            continue;
        }
        match run_case(&base, i, c) {
            Ok(()) => println!("PASS: calls/{}", c.name),
            Err(why) => {
                println!("FAIL: calls/{}: {}", c.name, why);
                failed.push(c.name.clone());
            }
        }
    }
    unsafe { libc::umask(old) };
    std::env::set_current_dir(cwd).unwrap();
    let _ = fs::remove_dir_all(&base);
    assert!(failed.is_empty(), "failed: {:?}", failed);
}
