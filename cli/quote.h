/* SPDX-License-Identifier: MIT */
/* cli/quote.h - names quoted for messages (cli/quote.c). */
#ifndef OCDIR_CLI_QUOTE_H
#define OCDIR_CLI_QUOTE_H

#include <stdio.h>

/*
 * Write s to f as GNU mkdir -v quotes a name (gnulib's
 * shell-escape-always style, in the LC_CTYPE locale): read back by a
 * POSIX shell with $'...' (bash), it gives s's bytes again.
 */
void cli_put_quoted(FILE *f, const char *s);

#endif
