// SPDX-License-Identifier: GPL-2.0-only
/*
 * config.c - reads viacamd's configuration file with libinih and checks its generic keys.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>
#include <linux/videodev2.h>

#include "config.h"

void vc_msgs_add(struct vc_msgs *m, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL, **v;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	v = realloc(m->v, (m->n + 1) * sizeof(*v));
	if (!v) {
		free(s);
		return;
	}
	m->v = v;
	m->v[m->n++] = s;
}

void vc_msgs_free(struct vc_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = 0;
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

static int parse_int(const char *s, long long lo, long long hi, long long *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
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

/* Splits @value at spaces and commas; calls @fn for each word. Returns the first error. */
static int for_each_word(const char *value, int (*fn)(const char *word, void *data), void *data)
{
	char *copy = strdup(value), *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, " \t,", &save); w && !r; w = strtok_r(NULL, " \t,", &save))
		r = fn(w, data);
	free(copy);
	return r;
}

/* ---------------------------------------------------------------------------
 * The parser
 */

struct parse_state {
	struct vc_conf *conf;
	struct vc_msgs *msgs;
	const char *path;
	int line;		/* counted by our reader */
	FILE *f;
	char section[128];
	struct vc_cam_conf *cam;	/* NULL: outside a camera section (or a bad one) */
	bool bad_section;
	char seen[64][64];	/* generic keys seen in this section, for duplicates */
	int seen_line[64];
	size_t nseen;
	int first_syntax_error;
};

#define perr(st, ...) err_at(st, (st)->line, __VA_ARGS__)
static void err_at(struct parse_state *st, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void err_at(struct parse_state *st, int line, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	vc_msgs_add(st->msgs, "%s:%d: %s", st->path, line, buf);
}

static void begin_section(struct parse_state *st, const char *section);

static char *reader(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	char *r = fgets(str, num, st->f);

	if (r) {
		size_t n = strlen(r);

		st->line++;
		/* A line longer than inih's buffer: inih would read the rest as a new line. */
		if (n == (size_t)num - 1 && r[n - 1] != '\n' && !feof(st->f)) {
			int c;

			perr(st, "line too long (at most %d characters)", num - 2);
			while ((c = fgetc(st->f)) != EOF && c != '\n')
				;
			r[0] = '#';	/* make inih ignore the fragment we return */
			r[1] = 0;
		} else if (r[0] == '[') {
			/* Sections are started here, so that one without keys exists too. */
			char *end = strchr(r, ']'), name[128];
			const char *b = r + 1;
			size_t len;

			if (end) {
				while (*b == ' ' || *b == '\t')
					b++;
				len = (size_t)(end - b);
				while (len && (b[len - 1] == ' ' || b[len - 1] == '\t'))
					len--;
				if (len < sizeof(name)) {
					memcpy(name, b, len);
					name[len] = 0;
					begin_section(st, name);
				}
			}
		}
	}
	return r;
}

static int word_format(const char *w, void *data)
{
	struct vc_cam_conf *c = data;
	uint32_t f;

	if (vc_parse_fourcc(w, &f) < 0)
		return -EINVAL;
	if (c->nformats >= VC_MAX_LIST)
		return -E2BIG;
	for (size_t i = 0; i < c->nformats; i++)
		if (c->formats[i] == f)
			return 0;
	c->formats[c->nformats++] = f;
	return 0;
}

static int word_size(const char *w, void *data)
{
	struct vc_cam_conf *c = data;
	unsigned int wd, ht;
	char tail;

	if (sscanf(w, "%ux%u%c", &wd, &ht, &tail) != 2)
		return -EINVAL;
	if (wd < VIACAM_MIN_WIDTH || wd > VIACAM_MAX_WIDTH || ht < VIACAM_MIN_HEIGHT ||
	    ht > VIACAM_MAX_HEIGHT || (wd | ht) & 1)
		return -ERANGE;
	if (c->nsizes >= VC_MAX_LIST)
		return -E2BIG;
	c->sizes[c->nsizes][0] = wd;
	c->sizes[c->nsizes][1] = ht;
	c->nsizes++;
	return 0;
}

/* "30", "7.5" (tenths), "30000/1001" frames per second -> interval num/den seconds. */
static int word_rate(const char *w, void *data)
{
	struct vc_cam_conf *c = data;
	unsigned int a, b, frac;
	char tail;

	if (sscanf(w, "%u/%u%c", &a, &b, &tail) == 2) {
		/* a/b frames per second */
	} else if (sscanf(w, "%u.%1u%c", &a, &frac, &tail) == 2) {
		a = a * 10 + frac;
		b = 10;
	} else if (sscanf(w, "%u%c", &a, &tail) == 1) {
		b = 1;
	} else {
		return -EINVAL;
	}
	/* 1/60 .. 1000 frames per second */
	if (!a || !b || (uint64_t)a * 60 < b || a > 1000ull * b || a > 1000000 || b > 1000000)
		return -ERANGE;
	if (c->nintervals >= VC_MAX_LIST)
		return -E2BIG;
	c->intervals[c->nintervals][0] = b;
	c->intervals[c->nintervals][1] = a;
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
	if (!c)
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
	snprintf(st->section, sizeof(st->section), "%s", section);
	st->bad_section = true;
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
	c->backend_nr = -1;
	strcpy(c->backend, "pattern");
	st->cam = c;
	st->bad_section = false;
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

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	struct vc_cam_conf *c;
	long long v;
	int r;

	if (strcmp(section, st->section) != 0)	/* a header our reader did not see */
		begin_section(st, section);
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
		if (strlen(value) >= sizeof(c->label))
			perr(st, "label is too long (at most %zu characters)",
			     sizeof(c->label) - 1);
		else if (!*value)
			perr(st, "label is empty");
		else
			strcpy(c->label, value);
	} else if (strcmp(name, "video_nr") == 0 || strcmp(name, "backend_nr") == 0) {
		if (check_duplicate(st, name))
			return 1;
		if (parse_nr(value, name[0] == 'v' ? &c->video_nr : &c->backend_nr) < 0)
			perr(st, "bad value '%s' for %s (a number 0-255, or auto)", value, name);
	} else if (strcmp(name, "timeout_ms") == 0) {
		if (check_duplicate(st, name))
			return 1;
		if (parse_int(value, 0, VIACAM_MAX_TIMEOUT_MS, &v) < 0)
			perr(st, "bad value '%s' for timeout_ms (0-%d; 0 = the module's default)",
			     value, VIACAM_MAX_TIMEOUT_MS);
		else
			c->timeout_ms = (uint32_t)v;
	} else if (strcmp(name, "backend") == 0) {
		if (check_duplicate(st, name))
			return 1;
		if (!valid_name(value))
			perr(st, "bad backend name '%s'", value);
		else
			strcpy(c->backend, value);
		c->backend_line = st->line;
	} else if (strcmp(name, "formats") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->nformats = 0;
		c->formats_line = st->line;
		r = for_each_word(value, word_format, c);
		if (r == -E2BIG)
			perr(st, "too many formats (at most %d)", VC_MAX_LIST);
		else if (r < 0 || !c->nformats)
			perr(st, "bad formats '%s' (a list of YUYV, UYVY, NV12, YUV420, YVU420, RGB24, BGR24, RGB565, GREY, MJPEG)",
			     value);
	} else if (strcmp(name, "sizes") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->nsizes = 0;
		c->sizes_line = st->line;
		r = for_each_word(value, word_size, c);
		if (r == -E2BIG)
			perr(st, "too many sizes (at most %d)", VC_MAX_LIST);
		else if (r == -ERANGE)
			perr(st, "bad sizes '%s' (even widths and heights, %d-%d x %d-%d)", value,
			     VIACAM_MIN_WIDTH, VIACAM_MAX_WIDTH, VIACAM_MIN_HEIGHT,
			     VIACAM_MAX_HEIGHT);
		else if (r < 0 || !c->nsizes)
			perr(st, "bad sizes '%s' (a list of WIDTHxHEIGHT, e.g. 640x480 320x240)",
			     value);
	} else if (strcmp(name, "rates") == 0) {
		if (check_duplicate(st, name))
			return 1;
		c->nintervals = 0;
		c->rates_line = st->line;
		r = for_each_word(value, word_rate, c);
		if (r == -E2BIG)
			perr(st, "too many rates (at most %d)", VC_MAX_LIST);
		else if (r < 0 || !c->nintervals)
			perr(st, "bad rates '%s' (frames per second between 1/60 and 1000: 30 15 7.5 30000/1001)",
			     value);
	} else {
		/* A backend key: its name is checked at the end of the section. */
		if (c->nkeys >= VC_MAX_KEYS) {
			perr(st, "too many backend keys (at most %d)", VC_MAX_KEYS);
			return 1;
		}
		c->keys[c->nkeys].key = strdup(name);
		c->keys[c->nkeys].value = strdup(value);
		c->keys[c->nkeys].line = st->line;
		if (!c->keys[c->nkeys].key || !c->keys[c->nkeys].value)
			return 0;
		c->nkeys++;
	}
	return 1;
}

static void check_cross(struct parse_state *st)
{
	struct vc_conf *conf = st->conf;

	for (size_t i = 0; i < conf->ncams; i++) {
		const struct vc_cam_conf *a = &conf->cams[i];

		for (size_t j = 0; j < i; j++) {
			const struct vc_cam_conf *b = &conf->cams[j];

			if (strcmp(a->label, b->label) == 0)
				err_at(st, a->line, "camera '%s' has the label '%s' of camera '%s' (line %d); labels must differ",
				       a->name, a->label, b->name, b->line);
			int nra[2] = { a->video_nr, a->backend_nr };
			int nrb[2] = { b->video_nr, b->backend_nr };

			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 2; y++)
					if (nra[x] >= 0 && nra[x] == nrb[y])
						err_at(st, a->line, "camera '%s' wants /dev/video%d, which camera '%s' (line %d) wants too",
						       a->name, nra[x], b->name, b->line);
		}
		if (a->video_nr >= 0 && a->video_nr == a->backend_nr)
			err_at(st, a->line, "camera '%s': video_nr and backend_nr are both %d",
			       a->name, a->video_nr);
	}
}

int vc_conf_load(const char *path, struct vc_conf **ret, struct vc_msgs *msgs)
{
	struct parse_state st = { .path = path, .msgs = msgs };
	size_t before = msgs->n;
	int r;

	*ret = NULL;
	st.conf = calloc(1, sizeof(*st.conf));
	if (!st.conf)
		return -ENOMEM;
	st.conf->path = strdup(path);
	st.f = fopen(path, "re");
	if (!st.f) {
		r = -errno;
		vc_msgs_add(msgs, "%s: cannot read: %s", path, strerror(-r));
		vc_conf_free(st.conf);
		return r;
	}
	r = ini_parse_stream(reader, &st, handler, &st);
	end_section(&st);
	fclose(st.f);
	if (r > 0)
		vc_msgs_add(msgs, "%s:%d: syntax error (expected '[camera NAME]' or 'key = value')",
			    path, r);
	else if (r < 0)
		vc_msgs_add(msgs, "%s: cannot parse (out of memory)", path);
	check_cross(&st);
	if (msgs->n != before) {
		vc_conf_free(st.conf);
		return -EINVAL;
	}
	*ret = st.conf;
	return 0;
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
	       a->timeout_ms == b->timeout_ms;
}
