// SPDX-License-Identifier: MIT
//
// Link against libocdir as pkg-config describes it (no external crates):
// `pkg-config --libs ocdir`, from ocdir.pc of `make install`, or from the
// checkout's build/ocdir-uninstalled.pc when PKG_CONFIG_PATH names build/.
// OCDIR_LIB_DIR=DIR skips pkg-config and links DIR/libocdir.so.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=OCDIR_LIB_DIR");
    if let Ok(dir) = env::var("OCDIR_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-lib=dylib=ocdir");
        return;
    }
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = Command::new(&pkg_config)
        .args(["--libs", "ocdir"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {} (install pkgconf)", pkg_config, e));
    if !out.status.success() {
        panic!(
            "pkg-config --libs ocdir failed: {}\n(make install libocdir, or set \
             PKG_CONFIG_PATH to a checkout's build/ directory)",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut linked = false;
    for arg in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        if let Some(dir) = arg.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", dir);
        } else if let Some(lib) = arg.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={}", lib);
            linked |= lib == "ocdir";
        } else if arg.starts_with("-Wl,") {
            // the uninstalled .pc's rpath: tests find build/libocdir.so.1
            println!("cargo:rustc-link-arg={}", arg);
        }
    }
    if !linked {
        println!("cargo:rustc-link-lib=dylib=ocdir");
    }
}
