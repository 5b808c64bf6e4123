// SPDX-License-Identifier: GPL-2.0-only
/*
 * lsan-glib.c - linked into every unit test (ASan/LSan builds): the quark tables GLib drops
 * on purpose are not leaks; every other block still is.
 *
 * GLib keeps its quarks in an array that it replaces by a bigger copy each time the count
 * reaches a multiple of 2,048 (gquark.c, quark_new(): "This leaks the old quarks array. Its
 * unfortunate, but it allows us to do lockless lookup"). The first array is allocated by
 * GLib's constructor. GStreamer registers a quark per element, pad template, caps field...:
 * on a machine with many plugins (OBS Studio's packages) the count passes 2,048 and every
 * test that loads GStreamer failed with "LeakSanitizer: 16384 byte(s) leaked".
 *
 * A suppression file cannot name that block and no other: Debian's libglib has no symbols
 * and no frame pointers, so LSan's stack of it is "g_malloc" alone (its fast unwinder) or
 * g_malloc, two unnamed libglib frames and _dl_init (the slow one); "leak:g_malloc" or
 * "leak:libglib" would hide every GLib leak. So the blocks are recognised by what they are:
 * a heap block of N x 2,048 pointers whose entry 0 is NULL and whose entry i is
 * g_quark_to_string(i) for every i - a full quark table - is handed to __lsan_ignore_object()
 * before LSan's check at exit. ASan's allocation hooks note the candidates (blocks of that
 * size that are still allocated), hidden from LSan's scan so that noting them keeps nothing
 * alive.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <sanitizer/lsan_interface.h>

#include "lsan-glib.h"

#define QUARK_BLOCK 2048	/* GLib's QUARK_BLOCK_SIZE */
#define TABLE_BYTES (QUARK_BLOCK * sizeof(char *))
#define SLOTS 1024

/* ASan's allocator interface (GCC 12 ships no header for it). */
int __sanitizer_get_ownership(const volatile void *p);
size_t __sanitizer_get_allocated_size(const volatile void *p);
void __sanitizer_malloc_hook(const volatile void *p, size_t size);
void __sanitizer_free_hook(const volatile void *p);

/* Candidates, stored inverted: a pointer LSan finds here would make the block reachable. */
static uintptr_t slots[SLOTS];

void __sanitizer_malloc_hook(const volatile void *p, size_t size)
{
	uintptr_t none = 0;

	if (!size || size % TABLE_BYTES)
		return;
	for (size_t i = 0; i < SLOTS; i++)
		if (__atomic_compare_exchange_n(&slots[i], &none, ~(uintptr_t)p, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return;
		else
			none = 0;
}

void __sanitizer_free_hook(const volatile void *p)
{
	size_t size;

	if (!p || !__sanitizer_get_ownership(p))
		return;
	size = __sanitizer_get_allocated_size(p);
	if (!size || size % TABLE_BYTES)
		return;
	for (size_t i = 0; i < SLOTS; i++) {
		uintptr_t mine = ~(uintptr_t)p;

		if (__atomic_compare_exchange_n(&slots[i], &mine, 0, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return;
	}
}

int vc_lsan_glib_quark_tables(void)
{
	const char *(*to_string)(uint32_t quark);
	int found = 0;

	/* Not every test loads GLib. */
	*(void **)&to_string = dlsym(RTLD_DEFAULT, "g_quark_to_string");
	if (!to_string)
		return 0;
	for (size_t i = 0; i < SLOTS; i++) {
		uintptr_t v = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
		const char *const *t = (const char *const *)~v;
		size_t n, k;

		if (!v || !__sanitizer_get_ownership(t))
			continue;
		n = __sanitizer_get_allocated_size(t) / sizeof(char *);
		if (!n || n % QUARK_BLOCK || t[0])
			continue;
		for (k = 1; k < n && t[k] && t[k] == to_string((uint32_t)k); k++)
			;
		if (k < n)
			continue;	/* not a full quark table (the one in use has room left) */
		__lsan_ignore_object(t);
		found++;
	}
	return found;
}

static void at_exit(void)
{
	vc_lsan_glib_quark_tables();
}

/* atexit() handlers run in reverse order: this one before LSan's check (registered earlier). */
__attribute__((constructor)) static void lsan_glib_init(void)
{
	atexit(at_exit);
}
