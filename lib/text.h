/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text.h - text from files and users, checked before it reaches the bridge and quoted before
 * it reaches a message.
 *
 * A config file or a clip can hold any bytes. A label goes into the capture node's card name,
 * which applications show; a message goes to a terminal or the journal, where an escape
 * sequence would act and a bare CR would hide what came before it. Invisible and bidi
 * control characters (U+00AD, U+200B-U+200F, U+202A-U+202E, U+2066-U+2069, U+FEFF) make a
 * label read as another one, or a message read backwards. So labels must be valid UTF-8
 * without control or invisible characters, and every message is escaped: control characters
 * and bytes that are not valid UTF-8 become \xNN (\r, \n and \t their C spelling), the
 * invisible characters \uXXXX. Other valid UTF-8 (letters with accents, symbols) stays as
 * it is. A backslash is not escaped: messages carry none of their own, and the output is
 * unambiguous enough for a person.
 */
#ifndef VIACAM_TEXT_H
#define VIACAM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "YUYV", ... from a V4L2 fourcc into @buf (5 bytes); bytes that are not printable as '?'. */
const char *vc_fourcc_str(uint32_t fourcc, char buf[5]);

/*
 * Why @len bytes at @s are not printable text: NULL when they are valid UTF-8 (no overlong
 * forms, surrogates or code points above U+10FFFF) without control characters (U+0000-U+001F,
 * U+007F, U+0080-U+009F) or invisible ones (above); else "is not valid UTF-8", "has a control
 * character" or "has an invisible or bidi control character" (the worst, in that order).
 */
const char *vc_text_problem(const char *s, size_t len);

/*
 * Copies @len bytes of @src into @dst (@size bytes, always NUL-terminated) with everything
 * but printable text escaped as described above. Stops before an escape or character that
 * does not fit, so the result is never cut inside one. Returns @dst.
 */
char *vc_escape(char *dst, size_t size, const char *src, size_t len);

#endif /* VIACAM_TEXT_H */
