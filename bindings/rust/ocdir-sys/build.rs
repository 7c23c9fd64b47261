// SPDX-License-Identifier: MIT
//
// Link libocdir as pkg-config describes it (the pkg-config program, no
// crates): `pkg-config --libs ocdir`, from the ocdir.pc of `make install`,
// or from a checkout's build/ocdir-uninstalled.pc when PKG_CONFIG_PATH
// names that build/ directory (an absolute path: cargo runs this script in
// the crate's directory, so a relative one would name something else and
// pkg-config would quietly fall back to an installed copy; refused here).
// OCDIR_LIB_DIR=DIR (absolute) skips pkg-config and links DIR's library.
// Feature `static`: libocdir.a instead of libocdir.so.
//
// For the ocdir crate's build script (DEP_OCDIR_* there): `libdir`, the
// directory linked from, and `rpath`, the run-time path the .pc asks for
// (the uninstalled .pc's), which the ocdir crate puts on its own tests
// and examples only. A user's program gets no rpath from here: it finds
// libocdir.so.1 in the system's library directories, or through
// LD_LIBRARY_PATH or an rpath of its own (bindings/rust/README.md); when
// another copy in a system directory would be loaded instead of the one
// linked, a cargo warning says so.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fail(msg: String) -> ! {
    eprintln!("error: ocdir-sys: {}", msg);
    std::process::exit(1);
}

fn absolute_dirs(var: &str) -> Vec<PathBuf> {
    let value = match env::var_os(var) {
        Some(v) => v,
        None => return Vec::new(),
    };
    let mut dirs = Vec::new();
    for dir in env::split_paths(&value) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        if dir.is_relative() {
            fail(format!(
                "{}={} has the relative entry {:?}; cargo runs build scripts in {}, so it would not \
                 name the directory you meant (and pkg-config could silently pick an installed \
                 libocdir instead): give an absolute path, e.g. {}=\"$PWD/{}\"",
                var,
                value.to_string_lossy(),
                dir,
                env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
                var,
                dir.display()
            ));
        }
        dirs.push(dir);
    }
    dirs
}

// Where the dynamic linker finds libocdir.so.1 with no LD_LIBRARY_PATH and
// no rpath: its cache, else the usual directories.
fn system_copies() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for ldconfig in ["/sbin/ldconfig", "/usr/sbin/ldconfig"] {
        if let Ok(out) = Command::new(ldconfig).arg("-p").output() {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let line = line.trim();
                if line.starts_with("libocdir.so.1 ") {
                    if let Some((_, path)) = line.rsplit_once("=> ") {
                        found.push(PathBuf::from(path));
                    }
                }
            }
            return found;
        }
    }
    for dir in ["/lib", "/usr/lib", "/usr/local/lib", "/lib64", "/usr/lib64"] {
        let p = Path::new(dir).join("libocdir.so.1");
        if p.exists() {
            found.push(p);
        }
    }
    found
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn main() {
    for var in ["PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR", "PKG_CONFIG", "OCDIR_LIB_DIR"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    println!("cargo:rerun-if-changed=build.rs");
    let want_static = env::var_os("CARGO_FEATURE_STATIC").is_some();

    let mut libdir: Option<PathBuf> = None;
    let mut rpath: Option<String> = None;
    let mut others: Vec<String> = Vec::new();
    if let Some(dir) = absolute_dirs("OCDIR_LIB_DIR").into_iter().next() {
        libdir = Some(dir);
    } else {
        absolute_dirs("PKG_CONFIG_PATH");
        absolute_dirs("PKG_CONFIG_LIBDIR");
        let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
        let mut cmd = Command::new(&pkg_config);
        if want_static {
            cmd.arg("--static");
        }
        let out = cmd
            .args(["--libs", "ocdir"])
            .output()
            .unwrap_or_else(|e| fail(format!("cannot run {}: {} (install pkgconf)", pkg_config, e)));
        if !out.status.success() {
            fail(format!(
                "pkg-config --libs ocdir failed: {}\n(make install libocdir, or set PKG_CONFIG_PATH to \
                 the absolute path of a checkout's build/ directory)",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        if let Ok(pc) = Command::new(&pkg_config).args(["--path", "ocdir"]).output() {
            let pc = String::from_utf8_lossy(&pc.stdout).trim().to_string();
            if !pc.is_empty() {
                println!("cargo:rerun-if-changed={}", pc);
            }
        }
        for arg in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Some(dir) = arg.strip_prefix("-L") {
                libdir.get_or_insert_with(|| PathBuf::from(dir));
            } else if let Some(dir) = arg.strip_prefix("-Wl,-rpath,") {
                rpath = Some(dir.to_string());
            } else if let Some(lib) = arg.strip_prefix("-l") {
                if lib != "ocdir" {
                    others.push(lib.to_string());
                }
            } else if arg == "-pthread" {
                others.push("pthread".to_string());
            }
        }
        if libdir.is_none() {
            // in a default directory of the linker: ask where exactly
            let out = Command::new(&pkg_config).args(["--variable=libdir", "ocdir"]).output();
            if let Ok(out) = out {
                let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if !dir.is_empty() {
                    libdir = Some(PathBuf::from(dir));
                }
            }
        }
    }

    let libdir = libdir.unwrap_or_else(|| fail("no library directory for libocdir".to_string()));
    let file = libdir.join(if want_static { "libocdir.a" } else { "libocdir.so" });
    if !file.exists() {
        fail(format!("{} does not exist (build or install libocdir first)", file.display()));
    }
    println!("cargo:rustc-link-search=native={}", libdir.display());
    if want_static {
        println!("cargo:rustc-link-lib=static=ocdir");
        for lib in others {
            println!("cargo:rustc-link-lib=dylib={}", lib);
        }
    } else {
        println!("cargo:rustc-link-lib=dylib=ocdir");
        let linked = libdir.join("libocdir.so.1");
        let shadows: Vec<PathBuf> = system_copies().into_iter().filter(|p| !same_file(p, &linked)).collect();
        if let Some(other) = shadows.first() {
            println!(
                "cargo:warning=linking {}, but a program started without LD_LIBRARY_PATH={} or an rpath \
                 loads {} instead (bindings/rust/README.md: \"Finding libocdir at run time\")",
                linked.display(),
                libdir.display(),
                other.display()
            );
        }
    }
    println!("cargo:libdir={}", libdir.display());
    if let Some(r) = rpath {
        println!("cargo:rpath={}", r);
    }
}
