// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-ctrlname.c - control values in struct v4l2_ext_control, as viacamctl reads and writes
 * them: the field that holds the value depends on the control's type.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctrlname.h"

/* 32-bit controls are in .value: reading .value64 showed brightness -10 as 4294967286. */
static void test_get_by_type(void **state)
{
	static const uint32_t types32[] = {
		V4L2_CTRL_TYPE_INTEGER, V4L2_CTRL_TYPE_BOOLEAN, V4L2_CTRL_TYPE_MENU,
		V4L2_CTRL_TYPE_INTEGER_MENU, V4L2_CTRL_TYPE_BITMASK, V4L2_CTRL_TYPE_BUTTON,
	};
	struct v4l2_ext_control c;

	(void)state;
	for (size_t i = 0; i < sizeof(types32) / sizeof(types32[0]); i++) {
		memset(&c, 0, sizeof(c));
		c.value = -10;
		assert_int_equal(vc_ctrl_ext_value(types32[i], &c), -10);
		c.value = INT32_MAX;
		assert_int_equal(vc_ctrl_ext_value(types32[i], &c), INT32_MAX);
	}
	memset(&c, 0, sizeof(c));
	c.value64 = -5000000000ll;
	assert_int_equal(vc_ctrl_ext_value(V4L2_CTRL_TYPE_INTEGER64, &c), -5000000000ll);
}

/* A value a 32-bit control cannot hold is refused, not cut (4294967286 would set -10). */
static void test_set_by_type(void **state)
{
	struct v4l2_ext_control c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(vc_ctrl_set_ext_value(V4L2_CTRL_TYPE_INTEGER, -10, &c), 0);
	assert_int_equal(c.value, -10);
	assert_int_equal(vc_ctrl_set_ext_value(V4L2_CTRL_TYPE_INTEGER, 4294967286ll, &c), -ERANGE);
	assert_int_equal(vc_ctrl_set_ext_value(V4L2_CTRL_TYPE_MENU, INT32_MIN - 1ll, &c), -ERANGE);
	memset(&c, 0, sizeof(c));
	assert_int_equal(vc_ctrl_set_ext_value(V4L2_CTRL_TYPE_INTEGER64, -5000000000ll, &c), 0);
	assert_int_equal(c.value64, -5000000000ll);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_by_type),
		cmocka_unit_test(test_set_by_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
