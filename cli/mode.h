/* SPDX-License-Identifier: MIT */
/* cli/mode.h - the ocdir command's -m (cli/mode.c). */
#ifndef OCDIR_CLI_MODE_H
#define OCDIR_CLI_MODE_H

#include <sys/types.h>

#define MODE_BITS 07777

/* What -m asked for, as cli_new_dir_mode() needs it. */
struct cli_mode {
	int given;		/* -m was given */
	mode_t mode;		/* the mode asked for, from a=rwx */
	mode_t named;		/* the bits the clauses named */
	mode_t umask_bits;	/* the process's umask */
};

/*
 * Read -m's MODE as GNU mkdir reads it, under the umask umask_bits: the
 * mode it asks for and the bits it names. 0, or -1 if MODE is invalid.
 */
int cli_parse_mode(const char *s, mode_t umask_bits, mode_t *mode, mode_t *named);

/*
 * The mode GNU mkdir gives a directory it creates with m, where
 * mkdirat(2) keeps the bits mask of a mode (the umask's complement, or
 * the default ACL's if acl) and the directory inherits setgid.
 */
mode_t cli_new_dir_mode(const struct cli_mode *m, mode_t mask, int acl,
			mode_t setgid);

#endif
