/* SPDX-License-Identifier: MIT */
/*
 * cli/quote.c - names in the ocdir command's messages, quoted as coreutils'
 * mkdir -v quotes them. A file of its own so that the fuzz target
 * (tests/fuzz/quote-fuzz.c) links the very code the command runs.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "quote.h"

/*
 * One pass of coreutils' single-quote style over s: printable characters
 * as they are, ' as '\'', the rest as $'\ooo' escapes. With f NULL nothing
 * is written; *in_escape is the state the pass ends in.
 */
static void quote_pass(FILE *f, const char *s, size_t len, int *in_escape)
{
	mbstate_t st;
	size_t i;

	memset(&st, 0, sizeof(st));
	for (i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = 1;
		wchar_t wc;

		if (c >= 0x80) {
			n = mbrtowc(&wc, s + i, len - i, &st);
			if (n == (size_t)-1 || n == (size_t)-2 || !iswprint((wint_t)wc)) {
				memset(&st, 0, sizeof(st));
				n = 0;
			}
		} else if (c < 0x20 || c == 0x7f) {
			n = 0;
		}
		if (n == 0) {	/* not printable: $'...' */
			static const char esc[] = "\a\b\f\n\r\t\v";
			static const char letter[] = "abfnrtv";
			const char *e = strchr(esc, c);

			if (f && !*in_escape)
				fputs("'$'", f);
			*in_escape = 1;
			if (f && c && e)
				fprintf(f, "\\%c", letter[e - esc]);
			else if (f)
				fprintf(f, "\\%03o", c);
			i++;
			continue;
		}
		if (c == '\'') {
			/* closes a $'...' as well as a '...' */
			if (f)
				fputs("'\\''", f);
			*in_escape = 0;
		} else {
			if (f && *in_escape)
				fputs("''", f);
			*in_escape = 0;
			if (f)
				fwrite(s + i, 1, n, f);
		}
		i += n;
	}
}

/*
 * A name as GNU mkdir -v quotes it (gnulib's shell-escape-always style),
 * byte for byte, so that scripts comparing the output see no difference.
 * Bytes that cannot be printed come out as escapes (\n, \177), never raw,
 * so a name cannot forge a line or send escape sequences to a terminal.
 */
void cli_put_quoted(FILE *f, const char *s)
{
	size_t len = strlen(s), i;
	int has_quote = 0, all_plain = 1, in_escape = 0;

	/*
	 * A name with a single quote is put in double quotes when every other
	 * byte means the same inside double quotes and to the shell (letters,
	 * digits, space and " %+,-.:@]_", '#' and '~' at the start).
	 */
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\'')
			has_quote = 1;
		else if (!(isascii(c) && isalnum(c)) && !strchr(" %+,-.:@]_", c) &&
			 !(i == 0 && (c == '#' || c == '~')))
			all_plain = 0;
	}
	if (has_quote && all_plain) {
		fprintf(f, "\"%s\"", s);
		return;
	}
	/*
	 * gnulib measures a name with a single quote in a first pass and then
	 * quotes it without resetting its state: a name that ends in an
	 * escape starts as if one were open. Done the same here.
	 */
	if (has_quote)
		quote_pass(NULL, s, len, &in_escape);
	fputc('\'', f);
	quote_pass(f, s, len, &in_escape);
	fputc('\'', f);
}
