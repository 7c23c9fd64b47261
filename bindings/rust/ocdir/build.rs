// SPDX-License-Identifier: MIT
//
// Only for this crate's own tests and examples, run from a checkout: the
// run-time path of the uninstalled ocdir.pc (ocdir-sys passes it on as
// DEP_OCDIR_RPATH), so that they load the checkout's build/libocdir.so.1
// (a RUNPATH: LD_LIBRARY_PATH still wins). A program that depends on this
// crate gets nothing from here: see README.md, "Finding libocdir at run
// time".
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_OCDIR_RPATH");
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(dir) = std::env::var("DEP_OCDIR_RPATH") {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", dir);
        println!("cargo:rustc-link-arg-examples=-Wl,-rpath,{}", dir);
    }
    if let Ok(dir) = std::env::var("DEP_OCDIR_LIBDIR") {
        println!("cargo:rustc-env=OCDIR_LINKED_LIBDIR={}", dir);
    }
}
