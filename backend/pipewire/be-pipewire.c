// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-pipewire.c - the "pipewire" backend: a PipeWire video source as a V4L2 camera.
 *
 * Keys: target = the node's node.name or object.serial (required); remote = the absolute path
 * of a PipeWire socket (e.g. a desktop user's /run/user/1000/pipewire-0, for viacamd as a
 * system service); without it pipewiresrc finds PipeWire as every client does
 * (PIPEWIRE_REMOTE, XDG_RUNTIME_DIR).
 *
 * Any PipeWire video source (a camera only PipeWire reaches, a pipewiresink in provide mode, a
 * portal's screencast node) becomes a /dev/videoN for V4L2 applications. It is the gst
 * backend (backend/gst/) with the description "pipewiresrc target-object=TARGET": the same
 * conversion, clock, failure reports and restarts. No caps are probed at create: PipeWire may
 * not run yet (at boot), and pipewiresrc knows no caps before it negotiates.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/un.h>

#include <glib.h>

#include "backend.h"
#include "gst-source.h"

static const char *const pw_keys[] = { "target", "remote", NULL };

extern const struct vc_backend_ops vc_backend_pipewire;

/* Its own key check; the rest is the gst backend's. */
static int pw_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	const struct vc_kv *target = vc_conf_key(conf, "target");
	const struct vc_kv *remote = vc_conf_key(conf, "remote");
	char *desc;
	int r;

	if (!target || !target->value[0])
		return vc_err(err, target ? target->line : 0, -EINVAL,
			      "missing key 'target' (the PipeWire node to show: its node.name or object.serial; pw-cli ls Node lists them)");
	/* The name goes into a gst-launch description between quotes. */
	for (const char *c = target->value; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '"' || *c == '\\' || *c == 0x7f)
			return vc_err(err, target->line, -EINVAL,
				      "target: a node name without quotes, backslashes or control characters");
	if (remote && (remote->value[0] != '/' ||
		       strlen(remote->value) >= sizeof(((struct sockaddr_un *)0)->sun_path)))
		return vc_err(err, remote->line, -EINVAL,
			      "remote: the absolute path of a PipeWire socket, e.g. /run/user/1000/pipewire-0");
	desc = g_strdup_printf("pipewiresrc name=vc_pw target-object=\"%s\" client-name=viacamd",
			       target->value);
	/* No probe: PipeWire is not asked before a consumer streams (it may not run yet, at
	 * boot), and pipewiresrc knows no caps before it negotiates. */
	r = vc_gst_create_desc(conf, desc, target->line, remote ? remote->value : NULL, false,
				&vc_backend_pipewire, ret, err);
	g_free(desc);
	return r;
}

const struct vc_backend_ops vc_backend_pipewire = {
	.abi = VC_BACKEND_ABI,
	.name = "pipewire",
	.summary = "a PipeWire video source (a node by name or serial) as a V4L2 camera",
	.keys = pw_keys,
	.create = pw_create,
	.describe = vc_gst_describe,
	.start = vc_gst_start,
	.produce = vc_gst_produce,
	.stop = vc_gst_stop,
	.clock_fd = vc_gst_clock_fd,
	.release = vc_gst_release,
};
