/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * statefile.h - viacamd's state file (/run/viacamd/cameras), written by the daemon
 * (backend/core/daemon.c) and read by the daemon when it adopts cameras and by viacamctl.
 * One record per line:
 *   pid PID                      while viacamd runs
 *   reloads APPLIED REJECTED     reloads so far (`viacamctl reload --wait` waits for a change)
 *   rejected-because PROBLEM     the first problem of the last rejected reload, if any
 *   camera NAME ID BACKEND       per camera it serves
 * Unknown lines are skipped, so older readers take newer files.
 */
#ifndef VIACAM_STATEFILE_H
#define VIACAM_STATEFILE_H

#include <stdbool.h>
#include <stdint.h>

#define VC_STATE_CAMERAS 64	/* cameras read from one file; more are left out */
#define VC_STATE_WORD 64	/* NAME and BACKEND, NUL included */
#define VC_STATE_MAX_SIZE 65536	/* 64 cameras and a rejected-because line fit 4 times */

struct vc_state {
	int pid;			/* -1: no pid line */
	bool have_reloads;
	unsigned long reloads_applied, reloads_rejected;
	char rejected_why[512];		/* "" when none */
	struct {
		char name[VC_STATE_WORD];
		uint32_t id;
		char backend[VC_STATE_WORD];
	} cams[VC_STATE_CAMERAS];
	unsigned int ncams;
};

/*
 * Reads @path into @st. Returns 0, or -errno when the file cannot be read (@st is then empty:
 * pid -1, no reloads, no cameras): -EINVAL for what is not a regular file (-EISDIR for a
 * directory), which is not read at all (/dev/zero spun, a FIFO blocked), -EFBIG above
 * VC_STATE_MAX_SIZE bytes.
 */
int vc_state_read(const char *path, struct vc_state *st);

/* The camera of @st called @name / with id @id, or NULL. */
const char *vc_state_backend_of(const struct vc_state *st, uint32_t id, const char **name);
int vc_state_id_of(const struct vc_state *st, const char *name, uint32_t *id);

#endif /* VIACAM_STATEFILE_H */
