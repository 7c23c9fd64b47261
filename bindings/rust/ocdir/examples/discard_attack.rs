// SPDX-License-Identifier: MIT
//
// discard_attack DIR: the discard of bindings/discard-attack (run as a
// non-root uid owning DIR, against the library built with ASan). Prepares
// DIR/new, makes DIR 0555 so that the empty staging directory cannot be
// removed, and discards. The library then returns 0, frees its handle and
// says EACCES; the binding must report exactly that (Ok, staging_left
// EACCES) and never touch the handle again: the guard is consumed by
// discard(), so a second discard of it does not compile, and its drop
// (which runs inside discard) must not call the library. Should the
// library return -1 instead, the guard comes back valid and is discarded
// again, as the contract allows. DIR is made 0755 again; exit 0 iff the
// binding said what the C contract says.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::exit;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: discard_attack DIR");
        exit(2)
    });
    let d = fs::File::open(&dir).expect("DIR");
    let p = ocdir::prepare(&d, "new", &ocdir::How::new().mode(0o700)).expect("prepare DIR/new");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).expect("chmod DIR 0555");
    let ok = match p.discard() {
        Ok(done) => {
            // the handle is gone; the guard was consumed (its drop ran)
            let errno = done.staging_left.as_ref().and_then(|e| e.raw_os_error());
            println!("discard: 0, the staging directory stays: {:?} (errno {:?})", done.staging_left, errno);
            errno == Some(libc::EACCES)
        }
        Err(e) => {
            println!("discard: -1 ({}): the guard is valid, discarding again", e.error);
            match e.prepared.discard() {
                Ok(done) => {
                    println!("second discard: 0, staging left: {:?}", done.staging_left);
                    true
                }
                Err(e) => {
                    println!("second discard: -1 ({}), the guard dropped", e.error);
                    e.error.raw_os_error().is_some()
                }
            }
        }
    };
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod DIR 0755");
    if !ok {
        eprintln!("discard_attack: the binding did not report what libocdir's contract says");
    }
    exit(if ok { 0 } else { 1 })
}
