// SPDX-License-Identifier: GPL-2.0-only
/* test-statefile.c - lib/statefile.c reads what viacamd writes, skips what it does not know. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/statefile.h"

static char path[] = "/tmp/test-statefile-XXXXXX";

static void put(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_records(void **state)
{
	struct vc_state *st = malloc(sizeof(*st));
	const char *name = NULL;
	uint32_t id = 0;

	(void)state;
	assert_non_null(st);
	put("pid 4242\nreloads 3 1\nrejected-because viacam.conf:7: unknown key 'x'\n"
	    "camera via 5 via\nsomething new 1 2 3\ncamera pat 7 pattern\ncamera pat 9 gst\n");
	assert_int_equal(vc_state_read(path, st), 0);
	assert_int_equal(st->pid, 4242);
	assert_true(st->have_reloads);
	assert_int_equal(st->reloads_applied, 3);
	assert_int_equal(st->reloads_rejected, 1);
	assert_string_equal(st->rejected_why, "viacam.conf:7: unknown key 'x'");
	assert_int_equal(st->ncams, 3);
	assert_string_equal(vc_state_backend_of(st, 5, &name), "via");
	assert_string_equal(name, "via");
	assert_null(vc_state_backend_of(st, 6, NULL));
	/* the last line for a name wins (a camera re-created under the same name) */
	assert_int_equal(vc_state_id_of(st, "pat", &id), 0);
	assert_int_equal(id, 9);
	assert_int_equal(vc_state_id_of(st, "nope", &id), -ENOENT);
	free(st);
}

static void test_missing_and_empty(void **state)
{
	struct vc_state *st = malloc(sizeof(*st));

	(void)state;
	assert_non_null(st);
	assert_int_equal(vc_state_read("/nonexistent/cameras", st), -ENOENT);
	assert_int_equal(st->pid, -1);
	assert_false(st->have_reloads);
	assert_int_equal(st->ncams, 0);
	put("");
	assert_int_equal(vc_state_read(path, st), 0);
	assert_int_equal(st->pid, -1);
	assert_string_equal(st->rejected_why, "");
	/* more cameras than fit: the rest is left out, nothing overflows */
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		for (int i = 0; i < VC_STATE_CAMERAS + 10; i++)
			fprintf(f, "camera c%d %d pattern\n", i, i);
		fclose(f);
	}
	assert_int_equal(vc_state_read(path, st), 0);
	assert_int_equal(st->ncams, VC_STATE_CAMERAS);
	free(st);
}

/*
 * viacamctl --state /dev/zero spun at 100% CPU (fgets() of NULs, for ever) and a FIFO blocked:
 * only a regular file of bounded size is read, and nothing waits.
 */
static void test_only_regular_files(void **state)
{
	struct vc_state *st = malloc(sizeof(*st));
	char dir[64] = "/tmp/test-statefile-dir-XXXXXX", fifo[80], big[80];
	FILE *f;

	(void)state;
	assert_non_null(st);
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(5);	/* the old reader never returned */
	assert_int_equal(vc_state_read("/dev/zero", st), -EINVAL);
	assert_int_equal(vc_state_read(fifo, st), -EINVAL);
	assert_int_equal(vc_state_read(dir, st), -EISDIR);
	alarm(0);
	assert_int_equal(st->pid, -1);

	/* bigger than any state file viacamd writes */
	snprintf(big, sizeof(big), "%s/big", dir);
	f = fopen(big, "w");
	assert_non_null(f);
	fputs("pid 42\n", f);
	for (int i = 0; i < VC_STATE_MAX_SIZE / 16 + 1; i++)
		fprintf(f, "camera c%05d 1 x\n", i);
	fclose(f);
	assert_int_equal(vc_state_read(big, st), -EFBIG);
	assert_int_equal(st->pid, -1);
	unlink(big);
	unlink(fifo);
	rmdir(dir);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_missing_and_empty),
		cmocka_unit_test(test_only_regular_files),
	};
	int fd = mkstemp(path), r;

	if (fd < 0)
		return 1;
	close(fd);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return r;
}
