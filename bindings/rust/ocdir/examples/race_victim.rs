// SPDX-License-Identifier: MIT
//
// The victim of tests/race/race.c -x, in Rust (bindings/README.md):
//
//   race -v ext-emulated -x build/bindings/rust/target/debug/examples/race_victim
//
// race adds two arguments, ARENA and shared|sticky. For each "r" on stdin
// it creates ARENA/target with ocdir::open_dir (mode 0700, no trailing
// symlink followed), and if it created it (or the arena is sticky, where it
// acts like mkdir -p) sets mode 0710, owner 4242 and the xattr
// user.ocdir.race through the descriptor, then answers
// "fd CREATED DEV INO UID ISDIR" (an fstat taken before the changes) or
// "err ERRNO". --naive (first argument) is the deliberately broken victim:
// fs::create_dir, then File::open by name.

use std::fs;
use std::io::{self, BufRead, Write};
use std::os::unix::io::{AsFd, AsRawFd, OwnedFd};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let naive = args.first().map_or(false, |a| a == "--naive");
    if naive {
        args.remove(0);
    }
    let (arena, kind) = (&args[0], &args[1]);
    let sticky = kind == "sticky";
    let target = std::path::Path::new(arena).join("target");
    let dir = fs::File::open(arena).expect("the arena");
    let how = ocdir::How::new().mode(0o700).follow_symlinks(false);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for _ in io::stdin().lock().lines() {
        let got: io::Result<(OwnedFd, bool)> = if naive {
            match fs::create_dir(&target) {
                Ok(()) => fs::File::open(&target).map(|f| (OwnedFd::from(f), true)),
                Err(e) if sticky && e.kind() == io::ErrorKind::AlreadyExists => {
                    fs::File::open(&target).map(|f| (OwnedFd::from(f), false))
                }
                Err(e) => Err(e),
            }
        } else {
            ocdir::open_dir(dir.as_fd(), "target", &how).map(|(fd, c)| (fd, c.is_new()))
        };
        match got {
            Err(e) => writeln!(out, "err {}", e.raw_os_error().unwrap_or(libc::EIO)).unwrap(),
            Ok((fd, created)) => {
                let raw = fd.as_raw_fd();
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                unsafe { libc::fstat(raw, &mut st) };
                if created || sticky {
                    unsafe {
                        libc::fchmod(raw, 0o710);
                        libc::fchown(raw, 4242, 4242);
                        libc::fsetxattr(raw, b"user.ocdir.race\0".as_ptr().cast(), b"victim".as_ptr().cast(), 6, 0);
                    }
                }
                drop(fd);
                let is_dir = (st.st_mode & libc::S_IFMT == libc::S_IFDIR) as i32;
                writeln!(out, "fd {} {} {} {} {}", created as i32, st.st_dev, st.st_ino, st.st_uid, is_dir).unwrap();
            }
        }
        out.flush().unwrap();
    }
}
