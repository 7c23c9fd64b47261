// SPDX-License-Identifier: MIT

//go:build !cgo

package ocdir

// Package ocdir is a cgo package (it calls libocdir). Built with
// CGO_ENABLED=0, or where go finds no C compiler and turns cgo off, the
// only file left is this one, and the compiler stops at the name below:
// build with CGO_ENABLED=1 and a C compiler (gcc) in PATH.
var _ = ocdir_requires_cgo_set_CGO_ENABLED_1_and_install_a_C_compiler
