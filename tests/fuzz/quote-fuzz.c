/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/quote-fuzz.c - libFuzzer target: how the ocdir command
 * quotes a name in its messages (cli/quote.c, linked as the command links
 * it), read back by a shell. The input (up to its first NUL, at most 200
 * bytes) is a name; its quoted form must
 *   - be made only of '...' (no quote inside), "..." (only characters
 *     that mean themselves there), \' and $'...' (printable ASCII but '
 *     and \, or the escapes \a \b \f \n \r \t \v \ooo) pieces: so it holds no
 *     newline or control character, and a shell can expand nothing in
 *     it ($, `, ...); this is checked here first, so that nothing else
 *     ever reaches the shell;
 *   - give back the name's bytes, read by bash (printf '%s\0' QUOTED,
 *     one bash for the whole run, which reads a line per name).
 * Under C.UTF-8, so the multibyte path (printable characters as they are)
 * is taken too.
 *
 * One class is exempt from the read-back, and counted: a name with a
 * single quote whose last byte is not printable ASCII. There GNU mkdir
 * 9.1 (gnulib's quotearg, which measures such a name in a first pass and
 * does not reset its state for the second) starts as if a $'...' were
 * open, and its quoting does not read back ($'\367'"'"'L\345' comes out
 * as '\367'\''L'$'\345'); ocdir copies GNU byte for byte on purpose
 * (compare-gnu checks that), so this target found it and says so rather
 * than fail on it. The form is still checked.
 */
#include <locale.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "quote.h"

static FILE *to_sh, *from_sh;
static unsigned long exempt;

/* bash, reading one quoted name a line, printing it back NUL-terminated. */
static void start_shell(void)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in) || pipe(out))
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execlp("bash", "bash", "--norc", "--noprofile", "-c",
		       "while IFS= read -r q; do eval \"printf '%s\\0' $q\"; done",
		       (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_sh = fdopen(in[1], "w");
	from_sh = fdopen(out[0], "r");
	if (!to_sh || !from_sh)
		abort();
	signal(SIGPIPE, SIG_IGN);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "");
	start_shell();
	return 0;
}

/* Is q made only of safe '...', "..." and $'...' pieces? */
static int well_formed(const char *q)
{
	const char *p = q;

	if (!*p)
		return 0;
	while (*p) {
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					return 0;
			if (!*p++)
				return 0;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f ||
				    strchr("$`\\!", *p))
					return 0;
			if (!*p++)
				return 0;
		} else if (p[0] == '\\' && p[1] == '\'') {
			p += 2;		/* a quote between pieces: '\'' */
		} else if (p[0] == '$' && p[1] == '\'') {
			for (p += 2; *p && *p != '\''; p++) {
				if (*p == '\\') {
					p++;
					if (*p >= '0' && *p <= '3' && p[1] >= '0' && p[1] <= '7' &&
					    p[2] >= '0' && p[2] <= '7')
						p += 2;
					else if (!*p || !strchr("abfnrtv", *p))
						return 0;
				} else if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) {
					return 0;
				}
			}
			if (!*p++)
				return 0;
		} else {
			return 0;
		}
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[201], *q = NULL, *back = NULL;
	size_t len = 0, qlen = 0, cap = 0;
	ssize_t got;
	FILE *f;

	while (len < 200 && len < size && data[len]) {
		name[len] = (char)data[len];
		len++;
	}
	name[len] = '\0';
	f = open_memstream(&q, &qlen);
	if (!f)
		abort();
	cli_put_quoted(f, name);
	fclose(f);
	if (!well_formed(q)) {
		fprintf(stderr, "quote-fuzz: name of %zu bytes quoted as [%s]: not made "
			"of safe '...', \"...\" and $'...' pieces\n", len, q);
		abort();
	}
	if (strchr(name, '\'') && len &&
	    ((unsigned char)name[len - 1] < 0x20 || (unsigned char)name[len - 1] >= 0x7f)) {
		if (!exempt++)
			fprintf(stderr, "quote-fuzz: not read back (GNU's quirk, copied): "
				"a name with ' ending in a byte that is not printable ASCII\n");
		free(q);
		return 0;
	}
	fprintf(to_sh, "%s\n", q);
	fflush(to_sh);
	got = getdelim(&back, &cap, '\0', from_sh);
	if (got < 1 || (size_t)got != len + 1 || memcmp(back, name, len)) {
		fprintf(stderr, "quote-fuzz: name of %zu bytes quoted as [%s], read back "
			"by bash as %zd bytes [%s]\n", len, q, got - 1, got > 0 ? back : "");
		abort();
	}
	free(back);
	free(q);
	return 0;
}
