// SPDX-License-Identifier: GPL-2.0-only
/*
 * config.c - reads viacamd's configuration file with libinih and checks its generic keys.
 *
 * libinih parses, but it names only the first syntax error, reads an indented line as more of
 * the previous key's value, and has no notion of sections without keys. So our line reader
 * (reader()) looks at every line first, with libinih's own rules: it reports each bad line at
 * its line and hands libinih a comment instead, and it starts the sections.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>
#include <linux/videodev2.h>

#include "config.h"
#include "text.h"

static void msgs_addv(struct vc_msgs *m, int line, const char *prefix, const char *fmt,
		      va_list ap)
{
	char *raw = NULL, *s, **v;
	int *lines;
	size_t len;

	if (m->n >= VC_MAX_MSGS) {
		m->dropped++;
		return;
	}
	if (vasprintf(&raw, fmt, ap) < 0)
		return;
	/* Escaped: a message echoes bytes from the file (text.h). At most 4 bytes per byte. */
	len = strlen(prefix) + strlen(raw) * 4 + 1;
	s = malloc(len);
	if (!s) {
		free(raw);
		return;
	}
	strcpy(s, prefix);
	vc_escape(s + strlen(prefix), len - strlen(prefix), raw, strlen(raw));
	free(raw);
	v = realloc(m->v, (m->n + 1) * sizeof(*v));
	if (v)
		m->v = v;
	lines = realloc(m->lines, (m->n + 1) * sizeof(*lines));
	if (lines)
		m->lines = lines;
	if (!v || !lines) {
		free(s);
		return;
	}
	m->v[m->n] = s;
	m->lines[m->n++] = line;
}

void vc_msgs_truncate(struct vc_msgs *m, size_t n)
{
	while (m->n > n)
		free(m->v[--m->n]);
}

void vc_msgs_add(struct vc_msgs *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msgs_addv(m, 0, "", fmt, ap);
	va_end(ap);
}

void vc_msgs_add_at(struct vc_msgs *m, const char *path, int line, const char *fmt, ...)
{
	char raw[512], prefix[sizeof(raw) * 4];
	va_list ap;

	/* The path is escaped too: it came from the command line. */
	snprintf(raw, sizeof(raw), "%s:%d: ", path, line);
	vc_escape(prefix, sizeof(prefix), raw, strlen(raw));
	va_start(ap, fmt);
	msgs_addv(m, line, prefix, fmt, ap);
	va_end(ap);
}

struct msg_ref {
	int line;
	size_t index;		/* keeps messages of one line in their order */
	char *text;
};

static int cmp_msg(const void *a, const void *b)
{
	const struct msg_ref *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

void vc_msgs_sort(struct vc_msgs *m)
{
	struct msg_ref *refs;

	if (m->n < 2)
		return;
	refs = malloc(m->n * sizeof(*refs));
	if (!refs)
		return;		/* unsorted, but complete */
	for (size_t i = 0; i < m->n; i++)
		refs[i] = (struct msg_ref){ m->lines[i], i, m->v[i] };
	qsort(refs, m->n, sizeof(*refs), cmp_msg);
	for (size_t i = 0; i < m->n; i++) {
		m->v[i] = refs[i].text;
		m->lines[i] = refs[i].line;
	}
	free(refs);
}

void vc_msgs_free(struct vc_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	free(m->lines);
	m->v = NULL;
	m->lines = NULL;
	m->n = 0;
	m->dropped = 0;
}

/* ---------------------------------------------------------------------------
 * Value parsers
 */

static const struct {
	const char *name;
	uint32_t fourcc;
} fourcc_names[] = {
	{ "YUYV", V4L2_PIX_FMT_YUYV }, { "YUY2", V4L2_PIX_FMT_YUYV },
	{ "UYVY", V4L2_PIX_FMT_UYVY },
	{ "NV12", V4L2_PIX_FMT_NV12 },
	{ "YUV420", V4L2_PIX_FMT_YUV420 }, { "YU12", V4L2_PIX_FMT_YUV420 },
	{ "I420", V4L2_PIX_FMT_YUV420 },
	{ "YVU420", V4L2_PIX_FMT_YVU420 }, { "YV12", V4L2_PIX_FMT_YVU420 },
	{ "RGB24", V4L2_PIX_FMT_RGB24 }, { "RGB3", V4L2_PIX_FMT_RGB24 },
	{ "BGR24", V4L2_PIX_FMT_BGR24 }, { "BGR3", V4L2_PIX_FMT_BGR24 },
	{ "RGB565", V4L2_PIX_FMT_RGB565 }, { "RGBP", V4L2_PIX_FMT_RGB565 },
	{ "GREY", V4L2_PIX_FMT_GREY }, { "GRAY", V4L2_PIX_FMT_GREY },
	{ "MJPEG", V4L2_PIX_FMT_MJPEG }, { "MJPG", V4L2_PIX_FMT_MJPEG },
};

int vc_parse_fourcc(const char *word, uint32_t *ret)
{
	for (size_t i = 0; i < sizeof(fourcc_names) / sizeof(fourcc_names[0]); i++) {
		if (strcasecmp(word, fourcc_names[i].name) == 0) {
			*ret = fourcc_names[i].fourcc;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * @len decimal digits at @s into *@ret, and nothing else: no sign, no blank, no "0x" (strtoul
 * and sscanf("%u") took "-4294966656" as 640). A number too large for the caller's range
 * saturates above any range instead of wrapping. false if not only digits.
 */
#define DIGITS_MAX 0xffffffffffull
static bool parse_digits(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > DIGITS_MAX)
			v = DIGITS_MAX;
	}
	*ret = v;
	return true;
}

/* A decimal integer in @lo..@hi; a '-' only where negative values are allowed. */
static int parse_int(const char *s, long long lo, long long hi, long long *ret)
{
	bool neg = lo < 0 && s[0] == '-';
	uint64_t u;
	long long v;

	if (!parse_digits(s + neg, strlen(s + neg), &u) || u > DIGITS_MAX - 1)
		return -EINVAL;
	v = neg ? -(long long)u : (long long)u;
	if (v < lo || v > hi || (neg && !u))	/* "-0" is a typo, not a value */
		return -EINVAL;
	*ret = v;
	return 0;
}

static bool parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *ret = true, true;
		if (strcasecmp(s, no[i]) == 0)
			return *ret = false, true;
	}
	return false;
}

/* ---------------------------------------------------------------------------
 * The parser
 */

struct parse_state {
	struct vc_conf *conf;
	struct vc_msgs *msgs;
	const char *path;
	int line;		/* counted by our reader */
	bool content;		/* a line that is not blank (a comment counts) */
	FILE *f;
	size_t bytes;		/* read so far (the file may grow while we read it) */
	bool stop;		/* a read error or the size limit: no more lines */
	struct vc_cam_conf *cam;	/* NULL: outside a camera section (or a bad one) */
	char seen[64][64];	/* generic keys seen in this section, for duplicates */
	int seen_line[64];
	size_t nseen;
};

#define perr(st, ...) err_at(st, (st)->line, __VA_ARGS__)
static void err_at(struct parse_state *st, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void err_at(struct parse_state *st, int line, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	vc_msgs_add_at(st->msgs, st->path, line, "%s", buf);
}

static void begin_section(struct parse_state *st, const char *section);

/*
 * libinih's find_chars_or_comment(): the first of @chars in @s, or the start of an inline
 * comment (';' after a blank), or the end of @s.
 */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
	bool was_space = false;

	while (*s && !(chars && strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

/*
 * Checks one line as libinih will read it (start-of-line comments ';' and '#', inline ';'
 * comments, '[' sections, "key = value" or "key: value", a UTF-8 BOM before the first line).
 * Returns false after reporting a line libinih would get wrong; it is not handed on.
 */
static bool check_line(struct parse_state *st, const char *line)
{
	const char *p = line, *q, *end;

	if (st->line == 1 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	for (q = p; *q && isspace((unsigned char)*q); q++)
		;
	if (!*q || *q == ';' || *q == '#')
		return true;	/* blank or a comment, indented or not */
	if (q != p) {
		/* libinih would append it to the previous key's value ("duplicate key") */
		perr(st, "indented line: start it at the first column (an indented line would continue the previous key's value)");
		return false;
	}
	if (*p == '[') {
		char name[128];
		const char *b = p + 1;
		size_t len;

		end = find_chars_or_comment(b, "]");
		if (*end != ']') {
			perr(st, "syntax error: no ']' closes the section header");
			return false;
		}
		/*
		 * libinih ignores what follows the ']': only blanks and a comment may. The section
		 * still starts, so that its keys are not blamed on the one before.
		 */
		for (q = end + 1; isspace((unsigned char)*q); q++)	/* a CRLF's CR too */
			;
		if (*q && *q != ';' && *q != '#')
			perr(st, "text after the section header: '%s' (one section header per line; a comment there starts with ';')",
			     q);
		/* Sections are started here, so that one without keys exists too. */
		while (*b == ' ' || *b == '\t')
			b++;
		len = (size_t)(end - b);
		while (len && (b[len - 1] == ' ' || b[len - 1] == '\t'))
			len--;
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, b, len);
		name[len] = 0;
		begin_section(st, name);
		return true;
	}
	end = find_chars_or_comment(p, "=:");
	if (*end != '=' && *end != ':') {
		perr(st, "syntax error (expected '[camera NAME]' or 'key = value')");
		return false;
	}
	return true;
}

/*
 * libinih's line reader: one line (at most @num - 2 characters and its newline) into @str.
 * A line that is too long, holds a NUL byte or fails check_line() is reported here and
 * becomes a comment for libinih.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	size_t n = 0, max = (size_t)num - 2;
	bool any = false, nul = false, too_long = false;
	const char *cr;
	int c;

	if (st->stop)
		return NULL;
	while ((c = getc(st->f)) != EOF) {
		any = true;
		if (++st->bytes > VC_CONF_MAX_SIZE) {
			vc_msgs_add(st->msgs, "%s: cannot read: it grew beyond %d bytes while it was read",
				    st->path, VC_CONF_MAX_SIZE);
			st->stop = true;
			return NULL;
		}
		if (c == '\n')
			break;
		if (!c)
			nul = true;
		if (n < max)
			str[n++] = (char)c;
		else
			too_long = true;
	}
	if (ferror(st->f)) {
		vc_msgs_add(st->msgs, "%s: cannot read: %s", st->path, strerror(errno));
		st->stop = true;
		return NULL;
	}
	if (!any)
		return NULL;
	st->line++;
	str[n] = 0;
	/*
	 * A CR ends no line for libinih: a file with CR line ends (old Mac editors) was one line,
	 * "[camera a]" and every key after it dropped. A CR before the LF (CRLF) is a blank.
	 */
	for (size_t i = 0; i < n && !st->content; i++)
		st->content = !isspace((unsigned char)str[i]);
	cr = memchr(str, '\r', n);
	if (cr && (size_t)(cr - str) + 1 == n)
		cr = NULL;
	if (too_long)
		perr(st, "line too long (at most %zu characters)", max);
	else if (nul)
		perr(st, "line has a NUL byte (a text file has none)");
	else if (cr)
		perr(st, "carriage return inside a line (a file with CR line ends? save it with LF line ends)");
	if (too_long || nul || cr || !check_line(st, str))
		strcpy(str, "#");	/* make inih ignore it */
	return str;
}

/* One word of a list: 0, or < 0 after reporting it (-E2BIG: the list is full, stop). */
typedef int word_fn(struct parse_state *st, const char *word);

/*
 * Calls @fn for each word of @value (split at blanks and commas), every bad word reported.
 * Returns the number of bad words.
 */
static int for_each_word(struct parse_state *st, const char *value, word_fn *fn)
{
	char *copy = strdup(value), *save = NULL;
	int bad = 0, r;

	if (!copy) {
		perr(st, "out of memory");
		return 1;
	}
	for (char *w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		r = fn(st, w);
		if (r < 0)
			bad++;
		if (r == -E2BIG)
			break;
	}
	free(copy);
	return bad;
}

static int word_format(struct parse_state *st, const char *w)
{
	struct vc_cam_conf *c = st->cam;
	uint32_t f;

	if (vc_parse_fourcc(w, &f) < 0) {
		perr(st, "unknown format '%s' in formats (known: YUYV, UYVY, NV12, YUV420, YVU420, RGB24, BGR24, RGB565, GREY, MJPEG)",
		     w);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->nformats; i++)
		if (c->formats[i] == f)
			return 0;
	if (c->nformats >= VC_MAX_LIST) {
		perr(st, "too many formats (at most %d)", VC_MAX_LIST);
		return -E2BIG;
	}
	c->formats[c->nformats++] = f;
	return 0;
}

static int word_size(struct parse_state *st, const char *w)
{
	struct vc_cam_conf *c = st->cam;
	const char *x = strchr(w, 'x');
	uint64_t wd, ht;

	if (!x || !parse_digits(w, (size_t)(x - w), &wd) ||
	    !parse_digits(x + 1, strlen(x + 1), &ht)) {
		perr(st, "bad size '%s' in sizes (WIDTHxHEIGHT in decimal digits, e.g. 640x480)", w);
		return -EINVAL;
	}
	if (wd < VIACAM_MIN_WIDTH || wd > VIACAM_MAX_WIDTH || ht < VIACAM_MIN_HEIGHT ||
	    ht > VIACAM_MAX_HEIGHT) {
		perr(st, "size '%s' in sizes is out of range (%d-%d x %d-%d)", w, VIACAM_MIN_WIDTH,
		     VIACAM_MAX_WIDTH, VIACAM_MIN_HEIGHT, VIACAM_MAX_HEIGHT);
		return -EINVAL;
	}
	if ((wd | ht) & 1) {
		perr(st, "size '%s' in sizes is odd (widths and heights must be even)", w);
		return -EINVAL;
	}
	if (c->nsizes >= VC_MAX_LIST) {
		perr(st, "too many sizes (at most %d)", VC_MAX_LIST);
		return -E2BIG;
	}
	c->sizes[c->nsizes][0] = (uint32_t)wd;
	c->sizes[c->nsizes][1] = (uint32_t)ht;
	c->nsizes++;
	return 0;
}

/* "30", "7.5" (one decimal digit), "30000/1001" frames per second -> interval num/den s. */
static int word_rate(struct parse_state *st, const char *w)
{
	struct vc_cam_conf *c = st->cam;
	const char *slash = strchr(w, '/'), *dot = strchr(w, '.');
	uint64_t a, b = 1, frac;
	bool ok;

	if (slash)
		ok = parse_digits(w, (size_t)(slash - w), &a) &&
		     parse_digits(slash + 1, strlen(slash + 1), &b);
	else if (dot)
		ok = parse_digits(w, (size_t)(dot - w), &a) &&
		     parse_digits(dot + 1, strlen(dot + 1), &frac) && strlen(dot + 1) == 1;
	else
		ok = parse_digits(w, strlen(w), &a);
	if (!ok) {
		perr(st, "bad rate '%s' in rates (frames per second in decimal digits: 30, 7.5 or 30000/1001)",
		     w);
		return -EINVAL;
	}
	if (dot && !slash) {
		a = a * 10 + frac;	/* a <= DIGITS_MAX: no overflow */
		b = 10;
	}
	if (!a || !b) {
		perr(st, "rate '%s' in rates has a zero", w);
		return -EINVAL;
	}
	if (a * VC_MIN_FPS_DIV < b || a > (uint64_t)VC_MAX_FPS * b || a > 1000000 || b > 1000000) {
		perr(st, "rate '%s' in rates is out of range (1/%d to %d frames per second, numbers up to 1000000)",
		     w, VC_MIN_FPS_DIV, VC_MAX_FPS);
		return -EINVAL;
	}
	if (c->nintervals >= VC_MAX_LIST) {
		perr(st, "too many rates (at most %d)", VC_MAX_LIST);
		return -E2BIG;
	}
	c->intervals[c->nintervals][0] = (uint32_t)b;
	c->intervals[c->nintervals][1] = (uint32_t)a;
	c->nintervals++;
	return 0;
}

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) >= VC_NAME_LEN)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

/* Checks the backend keys of the section just finished. */
static void end_section(struct parse_state *st)
{
	struct vc_cam_conf *c = st->cam;
	const struct vc_backend_ops *ops;

	st->cam = NULL;
	st->nseen = 0;
	if (!c || !c->backend[0])	/* no camera, or a bad backend name (reported) */
		return;
	ops = vc_backend_find(c->backend);
	if (!ops) {
		char list[256] = "";
		const struct vc_backend_ops *o;

		for (size_t i = 0; (o = vc_backend_at(i)); i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", o->name);
		err_at(st, c->backend_line ? c->backend_line : c->line,
		       "unknown backend '%s' (known: %s)", c->backend, list);
		return;
	}
	for (size_t i = 0; i < c->nkeys; i++) {
		bool known = false;

		for (const char *const *k = ops->keys; k && *k; k++)
			if (strcmp(*k, c->keys[i].key) == 0)
				known = true;
		if (!known)
			err_at(st, c->keys[i].line, "unknown key '%s' (for backend '%s')",
			       c->keys[i].key, c->backend);
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->keys[j].key, c->keys[i].key) == 0)
				err_at(st, c->keys[i].line, "duplicate key '%s' (first at line %d)",
				       c->keys[i].key, c->keys[j].line);
	}
}

static bool check_duplicate(struct parse_state *st, const char *name)
{
	for (size_t i = 0; i < st->nseen; i++) {
		if (strcmp(st->seen[i], name) == 0) {
			perr(st, "duplicate key '%s' (first at line %d)", name, st->seen_line[i]);
			return true;
		}
	}
	if (st->nseen < 64 && strlen(name) < sizeof(st->seen[0])) {
		strcpy(st->seen[st->nseen], name);
		st->seen_line[st->nseen++] = st->line;
	}
	return false;
}

static void begin_section(struct parse_state *st, const char *section)
{
	struct vc_conf *conf = st->conf;
	struct vc_cam_conf *c, *cams;
	char name[128];

	end_section(st);
	if (strncmp(section, "camera ", 7) != 0) {
		perr(st, "unknown section [%s] (expected [camera NAME])", section);
		return;
	}
	snprintf(name, sizeof(name), "%s", section + 7);
	if (!valid_name(name)) {
		perr(st, "bad camera name '%s' (1-%d letters, digits, '_', '.', '-')", name,
		     VC_NAME_LEN - 1);
		return;
	}
	for (size_t i = 0; i < conf->ncams; i++) {
		if (strcmp(conf->cams[i].name, name) == 0) {
			perr(st, "camera '%s' is defined twice (first at line %d)", name,
			     conf->cams[i].line);
			return;
		}
	}
	if (conf->ncams >= VC_MAX_CAMERAS) {
		perr(st, "too many cameras (at most %d)", VC_MAX_CAMERAS);
		return;
	}
	cams = realloc(conf->cams, (conf->ncams + 1) * sizeof(*cams));
	if (!cams) {
		perr(st, "out of memory");
		return;
	}
	conf->cams = cams;
	c = &conf->cams[conf->ncams++];
	memset(c, 0, sizeof(*c));
	strcpy(c->name, name);
	c->line = st->line;
	strcpy(c->label, c->name);	/* valid_name() bounds it */
	c->video_nr = -1;
	c->consumers = 1;
	c->backend_nr = -1;
	strcpy(c->backend, "pattern");
	st->cam = c;
}

static int parse_nr(const char *value, int *ret)
{
	long long v;

	if (strcasecmp(value, "auto") == 0) {
		*ret = -1;
		return 0;
	}
	if (parse_int(value, 0, 255, &v) < 0)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

static void parse_label(struct parse_state *st, const char *value)
{
	struct vc_cam_conf *c = st->cam;
	size_t len = strlen(value);
	const char *problem = vc_text_problem(value, len);

	c->label_line = st->line;
	/*
	 * The label becomes the card name of VIDIOC_QUERYCAP (32 bytes with the NUL), which
	 * applications show: printable UTF-8 only, and too long is an error, never a label cut
	 * in the middle of a character.
	 */
	if (!*value)
		perr(st, "label is empty");
	else if (problem)
		perr(st, "label '%s' %s (a label is shown as the card name: printable UTF-8 only)",
		     value, problem);
	else if (len >= sizeof(c->label))
		perr(st, "label is too long (%zu bytes; at most %zu)", len, sizeof(c->label) - 1);
	else
		strcpy(c->label, value);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	struct vc_cam_conf *c;
	long long v;
	int bad;

	if (!name)		/* inih built to call us with name == NULL for a new section */
		return 1;
	if (!*section) {
		perr(st, "key '%s' outside a section (start with [camera NAME])", name);
		return 1;
	}
	c = st->cam;
	if (!c)
		return 1;	/* the section header was reported already */

	if (strncmp(name, "ctrl.", 5) == 0) {
		struct vc_ctrl_default *d;

		if (c->nctrls >= VC_MAX_CTRLS) {
			perr(st, "too many control defaults (at most %d)", VC_MAX_CTRLS);
			return 1;
		}
		if (!name[5]) {
			perr(st, "'ctrl.' needs a control name, e.g. ctrl.brightness");
			return 1;
		}
		for (size_t i = 0; i < c->nctrls; i++) {
			if (strcmp(c->ctrls[i].name, name + 5) == 0) {
				perr(st, "duplicate key '%s' (first at line %d)", name,
				     c->ctrls[i].line);
				return 1;
			}
		}
		bool b;

		if (parse_int(value, INT32_MIN, INT32_MAX, &v) < 0) {
			if (!parse_bool(value, &b)) {
				perr(st, "bad value '%s' for %s (an integer, or yes/no)", value,
				     name);
				return 1;
			}
			v = b;
		}
		d = &c->ctrls[c->nctrls];
		d->name = strdup(name + 5);
		if (!d->name)
			return 0;
		d->value = v;
		d->line = st->line;
		c->nctrls++;
		return 1;
	}

	if (strcmp(name, "label") == 0) {
		if (check_duplicate(st, name))
			return 1;
		parse_label(st, value);
	} else if (strcmp(name, "video_nr") == 0 || strcmp(name, "backend_nr") == 0) {
		bool video = name[0] == 'v';

		if (check_duplicate(st, name))
			return 1;
		*(video ? &c->video_nr_line : &c->backend_nr_line) = st->line;
		if (parse_nr(value, video ? &c->video_nr : &c->backend_nr) < 0)
			perr(st, "bad value '%s' for %s (a number 0-255, or auto)", value, name);
	} else if (strcmp(name, "consumers") == 0) {
		if (check_duplicate(st, name))
			return 1;
		if (parse_int(value, 1, VIACAM_MAX_CAPTURES, &v) < 0)
			perr(st, "bad value '%s' for consumers (1-%d: capture nodes, one application each)",
			     value, VIACAM_MAX_CAPTURES);
		else
			c->consumers = (uint32_t)v;
	} else if (strcmp(name, "timeout_ms") == 0) {
		if (check_duplicate(st, name))
			return 1;
		if (parse_int(value, 0, VIACAM_MAX_TIMEOUT_MS, &v) < 0)
			perr(st, "bad value '%s' for timeout_ms (0-%d; 0 = the module's default)",
			     value, VIACAM_MAX_TIMEOUT_MS);
		else
			c->timeout_ms = (uint32_t)v;
	} else if (strcmp(name, "optional") == 0) {
		bool b;

		if (check_duplicate(st, name))
			return 1;
		c->optional_line = st->line;
		if (!parse_bool(value, &b))
			perr(st, "bad value '%s' for optional (yes or no)", value);
		else
			c->optional = b;
	} else if (strcmp(name, "backend") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->backend_line = st->line;
		if (!valid_name(value)) {
			perr(st, "bad backend name '%s'", value);
			c->backend[0] = 0;	/* end_section() and the backend checks skip it */
		} else {
			strcpy(c->backend, value);
		}
	} else if (strcmp(name, "formats") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->formats_line = st->line;
		bad = for_each_word(st, value, word_format);
		if (!bad && !c->nformats)
			perr(st, "formats is empty (a list of YUYV, UYVY, NV12, YUV420, YVU420, RGB24, BGR24, RGB565, GREY, MJPEG)");
		if (bad)
			c->nformats = 0;
	} else if (strcmp(name, "sizes") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->sizes_line = st->line;
		bad = for_each_word(st, value, word_size);
		if (!bad && !c->nsizes)
			perr(st, "sizes is empty (a list of WIDTHxHEIGHT, e.g. 640x480 320x240)");
		if (bad)
			c->nsizes = 0;
	} else if (strcmp(name, "rates") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->rates_line = st->line;
		bad = for_each_word(st, value, word_rate);
		if (!bad && !c->nintervals)
			perr(st, "rates is empty (frames per second: 30 15 7.5 30000/1001)");
		if (bad)
			c->nintervals = 0;
	} else {
		/* A backend key: its name is checked at the end of the section. */
		if (c->nkeys >= VC_MAX_KEYS) {
			perr(st, "too many backend keys (at most %d)", VC_MAX_KEYS);
			return 1;
		}
		c->keys[c->nkeys].key = strdup(name);
		c->keys[c->nkeys].value = strdup(value);
		c->keys[c->nkeys].line = st->line;
		if (!c->keys[c->nkeys].key || !c->keys[c->nkeys].value) {
			free(c->keys[c->nkeys].key);
			free(c->keys[c->nkeys].value);
			return 0;
		}
		c->nkeys++;
	}
	return 1;
}

/* Clashes between sections, each reported at the key of the later section that clashes. */
static void check_cross(struct parse_state *st)
{
	struct vc_conf *conf = st->conf;

	for (size_t i = 0; i < conf->ncams; i++) {
		const struct vc_cam_conf *a = &conf->cams[i];
		int nra[2] = { a->video_nr, a->backend_nr };
		int la[2] = { a->video_nr_line, a->backend_nr_line };

		for (size_t j = 0; j < i; j++) {
			const struct vc_cam_conf *b = &conf->cams[j];
			int nrb[2] = { b->video_nr, b->backend_nr };
			int lb[2] = { b->video_nr_line, b->backend_nr_line };

			if (strcmp(a->label, b->label) == 0)
				err_at(st, a->label_line ? a->label_line : a->line,
				       "camera '%s' has the label '%s' of camera '%s' (line %d); labels must differ",
				       a->name, a->label, b->name,
				       b->label_line ? b->label_line : b->line);
			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 2; y++)
					if (nra[x] >= 0 && nra[x] == nrb[y])
						err_at(st, la[x], "camera '%s' wants /dev/video%d, which camera '%s' (line %d) wants too",
						       a->name, nra[x], b->name, lb[y]);
		}
		if (a->video_nr >= 0 && a->video_nr == a->backend_nr)
			err_at(st, la[0] > la[1] ? la[0] : la[1],
			       "camera '%s': video_nr and backend_nr are both %d", a->name,
			       a->video_nr);
	}
}

static const char *file_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" :
	       S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" :
	       S_ISSOCK(mode) ? "a socket" : "not a file";
}

/*
 * Opens @path for reading if it is a regular file of at most VC_CONF_MAX_SIZE bytes. A
 * directory read as "OK, 0 cameras", /dev/zero made the reader spin, /dev/urandom grow
 * without bound and a FIFO block forever: O_NONBLOCK and fstat() refuse them before a read.
 */
static void stamp_of(const struct stat *st, struct vc_file_stamp *ret)
{
	*ret = (struct vc_file_stamp){
		.dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
		.mtime = st->st_mtim, .ctime = st->st_ctim,
	};
}

bool vc_file_stamp_equal(const struct vc_file_stamp *a, const struct vc_file_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static int open_config(const char *path, FILE **ret, struct vc_file_stamp *stamp,
		       struct vc_msgs *msgs)
{
	struct stat st;
	int fd, r;

	*ret = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		vc_msgs_add(msgs, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		vc_msgs_add(msgs, "%s: cannot read: %s", path, strerror(-r));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		vc_msgs_add(msgs, "%s: cannot read: %s, not a regular file", path,
			    file_kind(st.st_mode));
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto fail;
	}
	if (st.st_size > VC_CONF_MAX_SIZE) {
		vc_msgs_add(msgs, "%s: cannot read: too big (%lld bytes; a configuration file has at most %d)",
			    path, (long long)st.st_size, VC_CONF_MAX_SIZE);
		r = -EFBIG;
		goto fail;
	}
	stamp_of(&st, stamp);
	*ret = fdopen(fd, "r");
	if (!*ret) {
		r = -errno;
		vc_msgs_add(msgs, "%s: cannot read: %s", path, strerror(-r));
		goto fail;
	}
	return 0;
fail:
	close(fd);
	return r;
}

/*
 * Whether the file read through @f (stamped @before when it was opened, @bytes read) changed
 * while it was read: its stamp after the read differs, or @path names another file now. The
 * stamp after the read goes to @after.
 */
static bool changed_while_read(const char *path, FILE *f, const struct vc_file_stamp *before,
			       size_t bytes, struct vc_file_stamp *after)
{
	struct vc_file_stamp now;
	struct stat st;

	if (fstat(fileno(f), &st) < 0)
		return true;
	stamp_of(&st, after);
	if (!vc_file_stamp_equal(before, after) || (off_t)bytes != after->size)
		return true;
	if (stat(path, &st) < 0)
		return true;
	stamp_of(&st, &now);
	return !vc_file_stamp_equal(after, &now);
}

int vc_conf_parse(const char *path, struct vc_conf **ret, struct vc_msgs *msgs)
{
	struct parse_state st = { .path = path, .msgs = msgs };
	size_t before = msgs->n + msgs->dropped, n0 = msgs->n, dropped0 = msgs->dropped;
	struct vc_file_stamp opened;
	bool changed;
	int r;

	*ret = NULL;
	st.conf = calloc(1, sizeof(*st.conf));
	if (!st.conf)
		return -ENOMEM;
	st.conf->path = strdup(path);
	r = open_config(path, &st.f, &opened, msgs);
	if (r < 0) {
		vc_conf_free(st.conf);
		return r;
	}
	r = ini_parse_stream(reader, &st, handler, &st);
	end_section(&st);
	changed = !st.stop && changed_while_read(path, st.f, &opened, st.bytes, &st.conf->stamp);
	fclose(st.f);
	if (changed) {
		/* Half a file, or two: what it said is not worth a message. */
		vc_msgs_truncate(msgs, n0);
		msgs->dropped = dropped0;
		vc_msgs_add(msgs, "%s: cannot read: it changed while it was read (read it again once it is written)",
			    path);
		vc_conf_free(st.conf);
		return -EAGAIN;
	}
	/*
	 * Nothing but blanks: an in-place rewrite caught at its start, a "> file" by mistake or a
	 * full disk leave such a file, and applying it would remove every camera. A file that
	 * means to serve none says so in a comment.
	 */
	if (!st.content && !st.stop)
		vc_msgs_add_at(msgs, path, 1, "the file is empty (it would remove every camera; to serve none, write a comment such as '; no cameras')");
	/* Our reader reports syntax errors itself; this is in case libinih disagrees. */
	if (r > 0)
		vc_msgs_add_at(msgs, path, r, "syntax error (expected '[camera NAME]' or 'key = value')");
	else if (r < 0)
		vc_msgs_add(msgs, "%s: cannot parse (out of memory)", path);
	check_cross(&st);
	*ret = st.conf;
	return msgs->n + msgs->dropped != before ? -EINVAL : 0;
}

int vc_conf_load(const char *path, struct vc_conf **ret, struct vc_msgs *msgs)
{
	int r = vc_conf_parse(path, ret, msgs);

	vc_msgs_sort(msgs);
	if (r == -EINVAL) {
		vc_conf_free(*ret);
		*ret = NULL;
	}
	return r;
}

void vc_conf_free(struct vc_conf *conf)
{
	if (!conf)
		return;
	for (size_t i = 0; i < conf->ncams; i++) {
		struct vc_cam_conf *c = &conf->cams[i];

		for (size_t k = 0; k < c->nkeys; k++) {
			free(c->keys[k].key);
			free(c->keys[k].value);
		}
		for (size_t k = 0; k < c->nctrls; k++)
			free(c->ctrls[k].name);
	}
	free(conf->cams);
	free(conf->path);
	free(conf);
}

const struct vc_cam_conf *vc_conf_camera(const struct vc_conf *conf, const char *name)
{
	for (size_t i = 0; conf && i < conf->ncams; i++)
		if (strcmp(conf->cams[i].name, name) == 0)
			return &conf->cams[i];
	return NULL;
}

void vc_cam_backend_conf(const struct vc_cam_conf *cam, struct vc_backend_conf *bc)
{
	memset(bc, 0, sizeof(*bc));
	bc->camera = cam->name;
	bc->keys = cam->keys;
	bc->nkeys = cam->nkeys;
	bc->formats = cam->formats;
	bc->nformats = cam->nformats;
	bc->sizes = (const uint32_t (*)[2])cam->sizes;
	bc->nsizes = cam->nsizes;
	bc->intervals = (const uint32_t (*)[2])cam->intervals;
	bc->nintervals = cam->nintervals;
	bc->formats_line = cam->formats_line;
	bc->sizes_line = cam->sizes_line;
	bc->rates_line = cam->rates_line;
}

bool vc_cam_same_backend(const struct vc_cam_conf *a, const struct vc_cam_conf *b)
{
	if (strcmp(a->backend, b->backend) || a->nkeys != b->nkeys)
		return false;
	for (size_t i = 0; i < a->nkeys; i++)
		if (strcmp(a->keys[i].key, b->keys[i].key) ||
		    strcmp(a->keys[i].value, b->keys[i].value))
			return false;
	/* A pattern backend builds its modes from the offer. */
	return vc_cam_same_offer(a, b);
}

bool vc_cam_same_offer(const struct vc_cam_conf *a, const struct vc_cam_conf *b)
{
	return a->nformats == b->nformats && a->nsizes == b->nsizes &&
	       a->nintervals == b->nintervals &&
	       !memcmp(a->formats, b->formats, a->nformats * sizeof(a->formats[0])) &&
	       !memcmp(a->sizes, b->sizes, a->nsizes * sizeof(a->sizes[0])) &&
	       !memcmp(a->intervals, b->intervals, a->nintervals * sizeof(a->intervals[0]));
}

bool vc_cam_same_ctrls(const struct vc_cam_conf *a, const struct vc_cam_conf *b)
{
	if (a->nctrls != b->nctrls)
		return false;
	for (size_t i = 0; i < a->nctrls; i++)
		if (strcmp(a->ctrls[i].name, b->ctrls[i].name) ||
		    a->ctrls[i].value != b->ctrls[i].value)
			return false;
	return true;
}

bool vc_cam_same_nodes(const struct vc_cam_conf *a, const struct vc_cam_conf *b)
{
	return a->video_nr == b->video_nr && a->backend_nr == b->backend_nr &&
	       a->timeout_ms == b->timeout_ms && a->consumers == b->consumers;
}
