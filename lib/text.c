// SPDX-License-Identifier: GPL-2.0-only
/*
 * text.c - UTF-8 checks and escaping for messages (see text.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

/*
 * The UTF-8 sequence at @s (@len bytes available): its length and code point, or 0 when the
 * bytes there are not a valid sequence. The ranges of the second byte follow the table of
 * well-formed sequences in the Unicode standard (chapter 3, table 3-7), which rules out
 * overlong forms, surrogates and values above U+10FFFF.
 */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;	/* a continuation byte, 0xc0/0xc1 (overlong) or 0xf5-0xff */
	}
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	cp = cp << 6 | (s[1] & 0x3f);
	for (size_t i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	*ret_cp = cp;
	return n;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/*
 * Format characters that show nothing or reorder the text around them: the soft hyphen,
 * zero-width space, non-joiner and joiner, the left-to-right and right-to-left marks, the
 * bidi embeddings, pop and overrides, the bidi isolates, and the BOM (zero-width no-break
 * space). A label with one reads as another label, a message with one reads backwards.
 */
static bool is_invisible(uint32_t cp)
{
	return cp == 0xad || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

const char *vc_text_problem(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	const char *problem = NULL;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_seq(p + i, len - i, &cp);

		if (!n)
			return "is not valid UTF-8";	/* the worse of the two */
		if (is_control(cp))
			problem = "has a control character";
		else if (is_invisible(cp) && !problem)
			problem = "has an invisible or bidi control character";
		i += n;
	}
	return problem;
}

char *vc_escape(char *dst, size_t size, const char *src, size_t len)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t out = 0;

	if (!size)
		return dst;
	for (size_t i = 0; i < len;) {
		char esc[7];
		const char *piece = esc;
		uint32_t cp;
		size_t n = utf8_seq(p + i, len - i, &cp), plen;

		if (n && is_invisible(cp)) {
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned int)cp);
			plen = strlen(esc);
		} else if (n && !is_control(cp)) {
			piece = (const char *)p + i;
			plen = n;
		} else {
			n = 1;
			if (p[i] == '\r' || p[i] == '\n' || p[i] == '\t')
				snprintf(esc, sizeof(esc), "\\%c",
					 p[i] == '\r' ? 'r' : p[i] == '\n' ? 'n' : 't');
			else
				snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			plen = strlen(esc);
		}
		if (out + plen >= size)
			break;
		memcpy(dst + out, piece, plen);
		out += plen;
		i += n;
	}
	dst[out] = 0;
	return dst;
}

const char *vc_fourcc_str(uint32_t fourcc, char buf[5])
{
	for (int i = 0; i < 4; i++) {
		char c = (char)((fourcc >> (8 * i)) & 0xff);

		buf[i] = (c >= 32 && c < 127) ? c : '?';
	}
	buf[4] = 0;
	return buf;
}
