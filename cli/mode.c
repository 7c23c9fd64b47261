/* SPDX-License-Identifier: MIT */
/*
 * cli/mode.c - the ocdir command's -m: the mode string read as GNU mkdir
 * (coreutils 9.1, gnulib's modechange) reads it, and the mode GNU mkdir
 * gives a directory it creates with it. A file of its own so that the
 * fuzz target (tests/fuzz/mode-fuzz.c) links the very code the command
 * runs.
 */
#include <sys/stat.h>

#include "mode.h"

/*
 * -m MODE is read as GNU mkdir (coreutils 9.1) reads it: into the mode it
 * asks for (*mode, computed from a=rwx) and the bits its clauses name
 * (*named). A directory's setuid/setgid bits are named only by a
 * clause that says s (or by five octal digits); mkdir leaves the others
 * as mkdir(2) made them. cli_new_dir_mode() below gives the resulting mode.
 */

/*
 * An octal mode: every permission bit and the sticky bit are named; with
 * fewer than five digits setuid/setgid only where the mode sets them, so
 * 750 keeps an inherited setgid bit and 00750 clears it.
 */
static int parse_octal_mode(const char *s, mode_t *mode, mode_t *named)
{
	unsigned long v = 0;
	const char *p;

	for (p = s; *p; p++) {
		if (*p < '0' || *p > '7')
			return -1;
		v = v * 8 + (unsigned long)(*p - '0');
		if (v > MODE_BITS)
			return -1;
	}
	if (p == s)
		return -1;
	*mode = (mode_t)v;
	*named = p - s < 5 ? ((mode_t)v & (S_ISUID | S_ISGID)) | S_ISVTX | 0777 :
			     MODE_BITS;
	return 0;
}

/*
 * A symbolic mode ("u+rwx,g-w,o=", "a+X", "g=u", "+t", "=750,g+w"),
 * applied clause by clause to a=rwx as chmod(1) applies it: without a who letter the umask
 * masks what a clause changes; a clause changes setuid/setgid only if it
 * says s; X always means x (the target is a directory). *named collects
 * the bits some clause set, cleared or (with =) reset.
 */
static int parse_symbolic_mode(const char *s, mode_t umask_bits, mode_t *mode_out,
			       mode_t *named_out)
{
	const char *p = s;
	mode_t mode = 0777, named = 0;

	for (;;) {
		mode_t who = 0;

		for (;; p++) {
			if (*p == 'u')
				who |= S_ISUID | S_IRWXU;
			else if (*p == 'g')
				who |= S_ISGID | S_IRWXG;
			else if (*p == 'o')
				who |= S_ISVTX | S_IRWXO;
			else if (*p == 'a')
				who |= MODE_BITS;
			else
				break;
		}
		if (*p != '+' && *p != '-' && *p != '=')
			return -1;
		while (*p == '+' || *p == '-' || *p == '=') {
			char op = *p++;
			mode_t value = 0, said, kept;

			if (*p >= '0' && *p <= '7') {
				/*
				 * An operator and octal digits ("=750", "-022",
				 * "+2000", "=755,g+w"), as gnulib's modechange
				 * reads them: alone in their clause (no who
				 * letter, nothing after them but a comma), every
				 * bit affected and named, setuid/setgid included
				 * and the umask not applied, whatever the number
				 * of digits.
				 */
				unsigned long v = 0;

				do {
					v = v * 8 + (unsigned long)(*p++ - '0');
					if (v > MODE_BITS)
						return -1;
				} while (*p >= '0' && *p <= '7');
				if (who || (*p && *p != ','))
					return -1;
				who = MODE_BITS;
				value = (mode_t)v;
				said = MODE_BITS;
			} else if (*p == 'u' || *p == 'g' || *p == 'o') {
				/* Copy one class's rwx (as it is now) to the others. */
				mode_t src = *p == 'u' ? (mode & S_IRWXU) >> 6 :
					     *p == 'g' ? (mode & S_IRWXG) >> 3 :
							 (mode & S_IRWXO);
				value = src << 6 | src << 3 | src;
				said = 0;
				p++;
			} else {
				for (;; p++) {
					if (*p == 'r')
						value |= S_IRUSR | S_IRGRP | S_IROTH;
					else if (*p == 'w')
						value |= S_IWUSR | S_IWGRP | S_IWOTH;
					else if (*p == 'x' || *p == 'X')
						value |= S_IXUSR | S_IXGRP | S_IXOTH;
					else if (*p == 's')
						value |= S_ISUID | S_ISGID;
					else if (*p == 't')
						value |= S_ISVTX;
					else
						break;
				}
				said = who ? who & value : value;
			}
			/* A directory's setuid/setgid: only where the clause says s. */
			kept = (S_ISUID | S_ISGID) & ~said;
			value &= (who ? who : ~umask_bits) & ~kept;
			if (op == '+') {
				named |= value;
				mode |= value;
			} else if (op == '-') {
				named |= value;
				mode &= ~value;
			} else {
				mode_t preserved = (who ? ~who : 0) | kept;

				named |= MODE_BITS & ~preserved;
				mode = (mode & preserved) | value;
			}
		}
		if (*p == '\0')
			break;
		if (*p != ',')
			return -1;
		p++;
	}
	*mode_out = mode & MODE_BITS;
	*named_out = named & MODE_BITS;
	return 0;
}

int cli_parse_mode(const char *s, mode_t umask_bits, mode_t *mode, mode_t *named)
{
	if (*s >= '0' && *s <= '7')
		return parse_octal_mode(s, mode, named);
	return parse_symbolic_mode(s, umask_bits, mode, named);
}

/*
 * The mode GNU mkdir (coreutils 9.1) gives a directory it creates, for
 * -m (m), in a parent where mkdirat(2) keeps the bits `mask` of a
 * mode (creation_mask) and the directory inherits the setgid bit `setgid`:
 *  - without -m, mkdirat with 0777;
 *  - with -m, mkdirat with -m's mode, less group and other write if that
 *    mode sets the sticky bit or names setuid/setgid, and with the umask
 *    lifted for the bits -m's mode has (a default ACL still applies);
 *    then, where that differs from -m's mode in a bit -m named, chmod to
 *    -m's mode plus the other bits as mkdirat left them.
 * So `-m +t` gives 1755 under umask 022 (mkdirat(1755), only the sticky
 * bit named), `-m g+w` 0777 (the umask lifted for the bits asked for).
 */
mode_t cli_new_dir_mode(const struct cli_mode *m, mode_t mask, int acl,
			mode_t setgid)
{
	mode_t asked = m->mode, named = m->named, made;

	if (!m->given)
		return (0777 & mask) | setgid;
	if ((named & (S_ISUID | S_ISGID)) || (asked & S_ISVTX))
		asked &= ~(mode_t)(S_IWGRP | S_IWOTH);
	if (!acl)
		mask = ~(m->umask_bits & ~m->mode);
	made = (asked & S_ISVTX) | (asked & mask & 0777) | setgid;
	if ((made ^ m->mode) & named)
		return (m->mode | (made & ~named)) & MODE_BITS;
	return made;
}
