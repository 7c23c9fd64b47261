/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/mode-fuzz.c - libFuzzer target: the ocdir command's -m
 * parser (cli/mode.c, linked as the command links it) against a small
 * reference of gnulib's modechange written here from its documented
 * behaviour, in gnulib's own two steps (compile the string into a list
 * of changes, then apply them to a=rwx of a directory), not in the
 * command's one pass.
 *
 * Input: two bytes of umask (& 0777), then the mode string (up to the
 * first NUL or newline, at most 64 bytes). Checked: both accept or both
 * reject; the same mode and named bits; everything within 07777; the
 * mode cli_new_dir_mode() gives is within 07777 and has every named bit
 * as asked (plain parent, no ACL). The reference itself is checked
 * against GNU mkdir by tests/suites/90-fuzz, which replays the corpus
 * through /bin/mkdir -m and ocdir -m.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mode.h"

#define ALL 07777

struct change {
	char op;	/* '+', '-', '=' */
	int copy;	/* g=u: value names the class to copy */
	mode_t who;	/* the who letters; 0: none */
	mode_t value;
	mode_t named;	/* the bits said, for the setuid/setgid rule */
};

/* gnulib's mode_compile, as documented; the number of changes or -1. */
static int ref_compile(const char *s, struct change *c, int max)
{
	int n = 0;

	if (*s >= '0' && *s <= '7') {
		unsigned long v = 0;
		size_t len;

		for (len = 0; s[len] >= '0' && s[len] <= '7'; len++)
			if ((v = v * 8 + (unsigned long)(s[len] - '0')) > ALL)
				return -1;
		if (s[len])
			return -1;
		c[0] = (struct change){ .op = '=', .who = ALL, .value = (mode_t)v,
			.named = len < 5 ? ((mode_t)v & 06000) | 01777 : ALL };
		return 1;
	}
	for (;;) {
		mode_t who = 0;

		for (; strchr("ugoa", *s) && *s; s++)
			who |= *s == 'u' ? 04700 : *s == 'g' ? 02070 :
			       *s == 'o' ? 01007 : ALL;
		if (!*s || !strchr("+-=", *s))
			return -1;
		while (*s && strchr("+-=", *s)) {
			struct change *x = &c[n];

			if (n == max)
				return -1;
			*x = (struct change){ .op = *s++, .who = who };
			if (*s >= '0' && *s <= '7') {
				unsigned long v = 0;

				while (*s >= '0' && *s <= '7')
					if ((v = v * 8 + (unsigned long)(*s++ - '0')) > ALL)
						return -1;
				if (who || (*s && *s != ','))
					return -1;
				x->who = who = ALL;
				x->value = (mode_t)v;
				x->named = ALL;
			} else if (*s && strchr("ugo", *s)) {
				x->copy = 1;
				x->value = *s == 'u' ? 0700 : *s == 'g' ? 0070 : 0007;
				s++;
			} else {
				for (; *s && strchr("rwxXst", *s); s++)
					x->value |= *s == 'r' ? 0444 : *s == 'w' ? 0222 :
						    *s == 'x' || *s == 'X' ? 0111 :
						    *s == 's' ? 06000 : 01000;
				x->named = who ? who & x->value : x->value;
			}
			if (x->copy)
				x->named = who ? who & x->value : x->value;
			n++;
		}
		if (*s != ',')
			break;
		s++;
	}
	return *s ? -1 : n;
}

/* gnulib's mode_adjust on a directory of mode 0777. */
static mode_t ref_adjust(const struct change *c, int n, mode_t umask_bits,
			 mode_t *named)
{
	mode_t mode = 0777;
	int i;

	*named = 0;
	for (i = 0; i < n; i++) {
		mode_t value = c[i].value, omit = 06000 & ~c[i].named, keep;

		if (c[i].copy) {
			mode_t b = value & mode;

			value = (b & 0444 ? 0444 : 0) | (b & 0222 ? 0222 : 0) |
				(b & 0111 ? 0111 : 0);
		}
		value &= (c[i].who ? c[i].who : ~umask_bits) & ~omit;
		switch (c[i].op) {
		case '=':
			keep = (c[i].who ? ~c[i].who : 0) | omit;
			*named |= ALL & ~keep;
			mode = (mode & keep) | value;
			break;
		case '+':
			*named |= value;
			mode |= value;
			break;
		default:
			*named |= value;
			mode &= ~value;
		}
	}
	return mode & ALL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct change changes[80];
	char s[65];
	size_t len = 0;
	mode_t um, mode = 0, named = 0, rmode = 0, rnamed = 0, made;
	int r, n;

	if (size < 2)
		return 0;
	um = (mode_t)((data[0] << 8 | data[1]) & 0777);
	while (len < 64 && 2 + len < size && data[2 + len] && data[2 + len] != '\n') {
		s[len] = (char)data[2 + len];
		len++;
	}
	s[len] = '\0';
	r = cli_parse_mode(s, um, &mode, &named);
	n = ref_compile(s, changes, 80);
	if (n >= 0)
		rmode = ref_adjust(changes, n, um, &rnamed);
	if ((r == 0) != (n >= 0) || (r == 0 && (mode != rmode || named != rnamed)) ||
	    (mode & ~ALL) || (named & ~ALL)) {
		fprintf(stderr, "mode-fuzz: umask %03o, -m '%s': ocdir %s %04o named %04o, "
			"reference %s %04o named %04o\n", (unsigned)um, s,
			r ? "invalid" : "valid", (unsigned)mode, (unsigned)named,
			n < 0 ? "invalid" : "valid", (unsigned)rmode, (unsigned)rnamed);
		abort();
	}
	if (r)
		return 0;
	{
		const struct cli_mode m = { .given = 1, .mode = mode, .named = named,
					    .umask_bits = um };

		made = cli_new_dir_mode(&m, 0777 & ~um, 0, 0);
		if ((made & ~ALL) || ((made ^ mode) & named)) {
			fprintf(stderr, "mode-fuzz: umask %03o, -m '%s': new directory %04o, "
				"asked %04o named %04o\n", (unsigned)um, s, (unsigned)made,
				(unsigned)mode, (unsigned)named);
			abort();
		}
	}
	return 0;
}
