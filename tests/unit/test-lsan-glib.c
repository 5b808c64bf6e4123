// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-lsan-glib.c - GLib's quark table and LeakSanitizer. GLib drops its quark table each
 * time it grows past a multiple of 2,048 quarks (gquark.c: "This leaks the old quarks
 * array"); a machine with many GStreamer plugins registers that many, and every unit test
 * that loads GStreamer failed there with "16384 byte(s) leaked". lsan-glib.c (linked into
 * every unit test) tells LSan to ignore exactly those tables, and nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <sanitizer/lsan_interface.h>

#include "lsan-glib.h"

/* More quarks than two of GLib's blocks: its first table (16 KiB, allocated by its constructor)
 * and its second (32 KiB) are both dropped. */
static void test_quark_tables_are_not_leaks(void **state)
{
	char name[64];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "viacam-test-quark-%d", i);
		g_quark_from_string(name);
	}
	assert_non_null(g_quark_to_string(4097));	/* GLib really has more than 4,096 */
	assert_int_equal(vc_lsan_glib_quark_tables(), 2);
	assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
}

/*
 * Not a blanket suppression: a block of the same size that is not a quark table, dropped, is
 * still a leak. It is made in a function of its own, so that no stack slot of ours keeps it.
 */
static __attribute__((noinline)) uintptr_t drop_a_block(void)
{
	char **p = malloc(2048 * sizeof(char *));

	assert_non_null(p);
	for (size_t i = 0; i < 2048; i++)
		p[i] = (char *)"not a quark";
	return ~(uintptr_t)p;	/* hidden from LSan's scan */
}

static void test_other_leaks_still_found(void **state)
{
	uintptr_t hidden;

	(void)state;
	fprintf(stderr, "test-lsan-glib: a leak report of 16384 bytes from drop_a_block() follows, on purpose\n");
	hidden = drop_a_block();
	vc_lsan_glib_quark_tables();
	assert_int_not_equal(__lsan_do_recoverable_leak_check(), 0);
	free((void *)~hidden);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quark_tables_are_not_leaks),
		cmocka_unit_test(test_other_leaks_still_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
