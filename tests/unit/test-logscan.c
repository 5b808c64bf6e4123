// SPDX-License-Identifier: GPL-2.0-only
/* test-logscan.c - the guest kernel-log scanner catches every report kind, and only those. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "logscan.h"

static const char *match(const char *s)
{
	return logscan_match(s, strlen(s));
}

static void test_reports_are_caught(void **state)
{
	static const char *const bad[] = {
		"[   12.345678] WARNING: CPU: 1 PID: 321 at drivers/media/common/videobuf2/videobuf2-core.c:1234 vb2_foo+0x1/0x2",
		"[    3.000001] BUG: kernel NULL pointer dereference, address: 0000000000000008",
		"[    3.000002] Oops: 0000 [#1] PREEMPT SMP NOPTI",
		"[    3.000003] general protection fault, probably for non-canonical address 0xdead: 0000 [#1]",
		"[    3.000004] INFO: lockdep is turned off.",
		"[    3.000004] WARNING: possible circular locking dependency detected",
		"[    3.000005] BUG: KASAN: slab-use-after-free in viacam_work+0x10/0x20",
		"[    3.000006] UBSAN: shift-out-of-bounds in kmod/viacam-queue.c:12:3",
		"[  123.000007] INFO: task v4l2-ctl:123 blocked for more than 30 seconds.",
		"[    3.000008] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!",
		"[    3.000009] rcu: INFO: rcu_preempt self-detected stall on CPU",
		"[    3.000010] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
		"[    3.000011] Kernel panic - not syncing: Fatal exception",
		"[    3.000012] kmemleak: Kernel memory leak detector disabled",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(logscan_is_kernel_line(bad[i], strlen(bad[i])));
		if (!match(bad[i]))
			fail_msg("not caught: %s", bad[i]);
	}
}

static void test_clean_log_passes(void **state)
{
	static const char *const good[] = {
		"[    0.000000] Linux version 6.12.118+deb12-amd64 (debian-kernel@lists.debian.org)",
		"[    1.190203] audit: type=2000 audit(1796257266.816:1): state=initialized",
		"[    4.731318] netfs: FS-Cache loaded",
		"[    5.000000] viacam: camera 0: capture /dev/video4, backend /dev/video5",
		"[    6.000000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15798)",
		"[    6.100000] KernelAddressSanitizer initialized (generic)",
		"[   10.440750] reboot: Power down",
		"[    1.277216] rcu: \tRCU lockdep checking is enabled.",
		"[    1.432487] ... MAX_LOCKDEP_SUBCLASSES:  8",
		"[    1.432000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (match(good[i]))
			fail_msg("false alarm ('%s'): %s", match(good[i]), good[i]);
}

static void test_kernel_line_detection(void **state)
{
	(void)state;
	assert_true(logscan_is_kernel_line("[    0.000000] x", 16));
	assert_true(logscan_is_kernel_line("<4>[ 1.5] WARNING: x", 20));
	/* Test output on the console is not kernel output, even if it says WARNING:. */
	assert_false(logscan_is_kernel_line("WARNING: something a test printed", 33));
	assert_false(logscan_is_kernel_line("[x] 12", 6));
	assert_false(logscan_is_kernel_line("[12] no dot", 11));
	assert_false(logscan_is_kernel_line("", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reports_are_caught),
		cmocka_unit_test(test_clean_log_passes),
		cmocka_unit_test(test_kernel_line_detection),
	};
	return cmocka_run_group_tests_name("logscan", tests, NULL, NULL);
}
