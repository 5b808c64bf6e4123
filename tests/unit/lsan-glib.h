/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lsan-glib.h - linked into every unit test (ASan/LSan builds): GLib's quark tables that it
 * drops on purpose are not reported as leaks (see lsan-glib.c).
 */
#ifndef VIACAM_LSAN_GLIB_H
#define VIACAM_LSAN_GLIB_H

/* Tells LSan to ignore the quark tables GLib dropped so far; returns how many it found. Also
 * runs at exit, before LSan's own check. */
int vc_lsan_glib_quark_tables(void);

#endif /* VIACAM_LSAN_GLIB_H */
