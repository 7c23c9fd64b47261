// SPDX-License-Identifier: MIT
//
// The conformance table of tests/conformance/cases.h, through the crate:
// read from $OCDIR_CONFORMANCE_TABLE, else from the checkout's
// build/tests/conformance.tsv (written by `build/tests/conformance
// --print-table`), so the cases and their expected errno are the C
// conformance test's. Each case runs in a fresh directory below
// $OCDIR_TEST_DIR (default: the system's temporary directory), umask 022,
// on the backend the library picks (OCDIR_FORCE_EMULATION=1: the
// emulation). One test; it prints a PASS/FAIL/SKIP line per case (seen
// with `cargo test -- --nocapture`) and fails if any case failed.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

mod common;
use common::{check_after, count_fds, setup_op, stage_left};

struct Case {
    name: String,
    setup: String,
    path: String,
    api: String,
    flags: i32,
    mode: u32,
    resolve: u64,
    errno: i32,
    errname: String,
    fd_is: String,
    created: i32,
    after: String,
    need: Vec<String>,
}

fn table_path() -> PathBuf {
    match std::env::var_os("OCDIR_CONFORMANCE_TABLE") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../build/tests/conformance.tsv"),
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
        if x.len() != 13 {
            return Err(format!("{}: bad line {:?}", path.display(), line));
        }
        let bad = |what: &str| format!("{}: bad {} in {:?}", path.display(), what, line);
        cases.push(Case {
            name: x[0].to_string(),
            setup: x[1].to_string(),
            path: x[2].to_string(),
            api: x[3].to_string(),
            flags: x[4].parse().map_err(|_| bad("flags"))?,
            mode: u32::from_str_radix(x[5], 8).map_err(|_| bad("mode"))?,
            resolve: x[6].parse().map_err(|_| bad("resolve"))?,
            errno: x[7].parse().map_err(|_| bad("errno"))?,
            errname: x[8].to_string(),
            fd_is: x[9].to_string(),
            created: x[10].parse().map_err(|_| bad("created"))?,
            after: x[11].to_string(),
            need: x[12].split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
        });
    }
    Ok(cases)
}

fn needs(c: &Case, what: &str) -> bool {
    c.need.iter().any(|n| n == what)
}

fn skip_reason(c: &Case) -> Option<&'static str> {
    let root = unsafe { libc::geteuid() } == 0;
    if needs(c, "root") && !root {
        return Some("root only");
    }
    if needs(c, "user") && root {
        return Some("non-root only (the C conformance test's --user run covers it)");
    }
    if needs(c, "root-setup") && !root {
        return Some("setup needs root");
    }
    if needs(c, "mount") {
        return Some("needs a private mount namespace (the C conformance test runs it)");
    }
    if needs(c, "protected-symlinks") {
        let on = fs::read_to_string("/proc/sys/fs/protected_symlinks").unwrap_or_default();
        if !on.starts_with('1') {
            return Some("fs.protected_symlinks is off");
        }
    }
    None
}

fn run_case(base: &Path, idx: usize, c: &Case) -> Option<String> {
    let casedir = base.join(format!("{:03}", idx));
    if let Err(e) = fs::create_dir(&casedir).and_then(|_| std::env::set_current_dir(&casedir)) {
        return Some(format!("setup: {}", e));
    }
    let casefd = match fs::File::open(&casedir) {
        Ok(f) => f,
        Err(e) => return Some(format!("setup: {}", e)),
    };
    for op in c.setup.split_whitespace() {
        if let Err(e) = setup_op(&casedir, op) {
            return Some(format!("setup {}: {}", op, e));
        }
    }
    let path = c.path.replace("%D", &casedir.to_string_lossy());
    let mode = if c.api == "at" { c.mode & 0o7777 } else { c.mode };
    let how = ocdir::How::new().mode(mode).flags(c.flags).resolve(c.resolve);
    let before = count_fds();
    let got = ocdir::open_dir(casefd.as_fd(), &path, &how);
    match (&got, c.errno) {
        (Ok(_), e) if e != 0 => return Some(format!("got an fd, want {}", c.errname)),
        (Err(e), 0) => return Some(format!("got {} (errno {:?}), want an fd", e, e.raw_os_error())),
        (Err(e), want) if e.raw_os_error() != Some(want) => {
            return Some(format!("got {} (errno {:?}), want {}", e, e.raw_os_error(), c.errname))
        }
        _ => {}
    }
    if let Ok((fd, created)) = got {
        let raw = fd.as_raw_fd();
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(raw, &mut st) } < 0 || st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Some("fd is not a directory".into());
        }
        if unsafe { libc::fcntl(raw, libc::F_GETFL) } & libc::O_ACCMODE != libc::O_RDONLY {
            return Some("fd is not O_RDONLY".into());
        }
        if unsafe { libc::fcntl(raw, libc::F_GETFD) } & libc::FD_CLOEXEC == 0 {
            return Some("fd is not O_CLOEXEC".into());
        }
        if c.fd_is != "-" {
            match fs::metadata(&c.fd_is) {
                Ok(m) if m.dev() == st.st_dev && m.ino() == st.st_ino => {}
                Ok(_) => return Some(format!("fd is not {}", c.fd_is)),
                Err(_) => return Some("fd_is path missing".into()),
            }
        }
        if c.api == "at2" && c.created >= 0 && created.is_new() != (c.created == 1) {
            return Some(format!("created={:?}, want {}", created, c.created));
        }
        drop(fd);
    }
    if let Some(why) = check_after(&c.after) {
        return Some(why);
    }
    if count_fds() != before {
        return Some("fd leaked".into());
    }
    if stage_left(&casedir, 1) {
        return Some("a .ocdir-stage.* directory was left behind".into());
    }
    None
}

#[test]
fn conformance() {
    let cases = read_table(&table_path()).unwrap_or_else(|e| panic!("the conformance table: {}", e));
    assert!(!cases.is_empty(), "no cases in {}", table_path().display());
    let top = std::env::var_os("OCDIR_TEST_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let base = top.join(format!("rust-conformance.{}", std::process::id()));
    fs::create_dir(&base).unwrap();
    fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
    let cwd = std::env::current_dir().unwrap();
    let old = unsafe { libc::umask(0o022) };
    let mut failed = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if let Some(why) = skip_reason(c) {
            println!("SKIP: {}: {}", c.name, why);
            continue;
        }
        match run_case(&base, i, c) {
            None => println!("PASS: {}", c.name),
            Some(why) => {
                println!("FAIL: {}: {}", c.name, why);
                failed.push(c.name.clone());
            }
        }
    }
    unsafe { libc::umask(old) };
    std::env::set_current_dir(cwd).unwrap();
    let _ = fs::remove_dir_all(&base);
    assert!(failed.is_empty(), "failed: {:?}", failed);
}
