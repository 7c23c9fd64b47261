// SPDX-License-Identifier: MIT

package ocdir

// The discard attacker's program (bindings/README.md, run under ASan by
// the lead's runner as a non-root uid that owns DIR): the test binary with
// OCDIR_DISCARD_ATTACK=DIR prepares DIR/new, makes DIR 0555, discards,
// discards again through the normal API, makes DIR 0755 again and exits 0
// iff the package reported what ocdir.h says: Discard nil with the staging
// directory left (StagingLeft: the rmdir error, EACCES) and the second
// Discard a no-op that does not reach the library (the handle is freed);
// or Discard failing with the handle still valid, and a later Discard (DIR
// writable again) succeeding.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func discardAttack(dir string) int {
	fail := func(format string, args ...interface{}) int {
		fmt.Printf("FAIL: discard-attack: "+format+"\n", args...)
		os.Chmod(dir, 0o755)
		return 1
	}
	p, err := Prepare(nil, filepath.Join(dir, "new"), How{Mode: 0o755})
	if err != nil {
		return fail("Prepare: %v", err)
	}
	defer p.File().Close()
	if err := os.Chmod(dir, 0o555); err != nil {
		return fail("chmod 0555: %v", err)
	}
	err = p.Discard()
	if err != nil {
		// -1: the handle stays valid; once DIR is writable again a
		// Discard must finish it.
		fmt.Printf("discard: %v (the handle stays valid)\n", err)
		if err := os.Chmod(dir, 0o755); err != nil {
			return fail("chmod 0755: %v", err)
		}
		if err := p.Discard(); err != nil {
			return fail("Discard after the failed one, DIR writable: %v", err)
		}
		fmt.Println("PASS: discard-attack: failed, then discarded")
		return 0
	}
	left := p.StagingLeft()
	fmt.Printf("discard: nil, staging directory left: %v\n", left)
	n := discardCalls
	if err := p.Discard(); err != nil {
		return fail("second Discard: %v, want nil (a no-op)", err)
	}
	if discardCalls != n {
		return fail("the second Discard called ocdir_discard on the freed handle")
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail("chmod 0755: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new")); err == nil {
		return fail("DIR/new exists after Discard")
	}
	stage := false
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		stage = stage || strings.HasPrefix(e.Name(), ".ocdir-stage.")
	}
	switch {
	case !errors.Is(left, syscall.EACCES) && os.Geteuid() != 0:
		return fail("StagingLeft: %v, want EACCES (DIR was 0555)", left)
	case (left != nil) != stage:
		return fail("StagingLeft says %v, a .ocdir-stage.* in DIR: %v", left, stage)
	}
	fmt.Println("PASS: discard-attack: discarded, the staging directory left with EACCES, the second Discard a no-op")
	return 0
}
