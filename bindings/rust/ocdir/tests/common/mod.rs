// SPDX-License-Identifier: MIT
//
// What the table tests share: the setup language and the after checks of
// tests/conformance (cases.h, calls.h), run in the case's directory.
#![allow(dead_code)]

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

pub fn cstr(p: &str) -> CString {
    CString::new(p.as_bytes()).unwrap()
}

pub fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

// One setup operation in the current directory (the case's).
pub fn setup_op(casedir: &Path, op: &str) -> io::Result<()> {
    let (kind, arg) = op.split_once(':').unwrap_or((op, ""));
    if kind == "l" {
        let (name, target) = arg.split_once('>').unwrap_or((arg, ""));
        let target = target.replace("%D", &casedir.to_string_lossy());
        return std::os::unix::fs::symlink(target, name);
    }
    let (name, value) = match arg.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (arg, None),
    };
    match kind {
        "d" => {
            fs::create_dir(name)?;
            let mode = value.map(|v| u32::from_str_radix(v, 8).unwrap()).unwrap_or(0o755);
            fs::set_permissions(name, fs::Permissions::from_mode(mode))
        }
        "f" => fs::OpenOptions::new().write(true).create_new(true).open(name).map(drop),
        "p" => check(unsafe { libc::mkfifo(cstr(name).as_ptr(), 0o644) }),
        "o" => {
            let uid: u32 = value.unwrap_or("0").parse().unwrap();
            check(unsafe { libc::lchown(cstr(name).as_ptr(), uid, uid) })
        }
        "chain" => {
            let n: usize = name.parse().unwrap();
            for i in 1..=n {
                let target = if i == n { "d".to_string() } else { format!("s{}", i + 1) };
                std::os::unix::fs::symlink(target, format!("s{}", i))?;
            }
            Ok(())
        }
        _ => Err(io::Error::new(io::ErrorKind::Other, format!("unknown setup op {}", op))),
    }
}

pub fn check_after(after: &str) -> Option<String> {
    for tok in after.split_whitespace() {
        let kind = tok.as_bytes()[0];
        let (path, want) = match tok[2..].split_once('=') {
            Some((p, w)) => (p, Some(w)),
            None => (&tok[2..], None),
        };
        let md = fs::symlink_metadata(path).ok();
        let is_dir = md.as_ref().map_or(false, |m| m.file_type().is_dir());
        match kind {
            b'-' if md.is_some() => return Some(format!("{} exists", path)),
            b'D' | b'E' | b'M' => {
                if !is_dir {
                    return Some(format!("{} is not a directory", path));
                }
                let mode = md.as_ref().unwrap().mode() & 0o7777;
                if kind == b'M' && Some(mode) != want.map(|w| u32::from_str_radix(w, 8).unwrap()) {
                    return Some(format!("{} has mode {:04o}, want {}", path, mode, want.unwrap()));
                }
                if kind == b'E' {
                    if let Ok(mut rd) = fs::read_dir(path) {
                        if rd.next().is_some() {
                            return Some(format!("{} is not empty", path));
                        }
                    }
                }
            }
            b'F' if !md.as_ref().map_or(false, |m| m.file_type().is_file()) => {
                return Some(format!("{} is not a regular file", path))
            }
            b'L' if !md.as_ref().map_or(false, |m| m.file_type().is_symlink()) => {
                return Some(format!("{} is not a symlink", path))
            }
            _ => {}
        }
    }
    None
}

pub fn stage_left(dir: &Path, depth: u32) -> bool {
    let entries = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(_) => return false,
    };
    for e in entries.flatten() {
        if e.file_name().as_bytes().starts_with(b".ocdir-stage.") {
            return true;
        }
        if depth > 0 && e.file_type().map_or(false, |t| t.is_dir()) && stage_left(&e.path(), depth - 1) {
            return true;
        }
    }
    false
}

pub fn count_fds() -> usize {
    fs::read_dir("/proc/self/fd").map(|rd| rd.count()).unwrap_or(0)
}
