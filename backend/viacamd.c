// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacamd.c - the viacam daemon: one event loop that serves the bridge's cameras.
 *
 * It reads the configuration (config.c), makes one session per camera section (session.c)
 * and keeps them in line with the file: an inotify watch on the file's directory (editors
 * replace files by renaming a temporary one) and SIGHUP trigger a reload. A reload first
 * checks the whole new file - generic keys, then a fresh backend instance for every section
 * whose backend, offer or control defaults changed - and only then applies it; a file with
 * any problem changes nothing and every problem is logged as FILE:LINE: reason.
 *
 * Cameras outlive the daemon: on SIGTERM the sessions stop their sources and close their
 * nodes, and the bridge keeps consumers alive with repeated frames. The next viacamd adopts
 * them again: by the id it wrote to its state file, else by label. Only removing a section
 * removes its camera.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "log.h"
#include "session.h"
#include "viacam.h"

#define DEFAULT_CONFIG "/etc/viacam/viacam.conf"
#define DEFAULT_STATE "/run/viacamd/cameras"
#define RELOAD_DELAY_US 200000	/* editors write in steps: reload once they are done */

static const char *arg_config = DEFAULT_CONFIG;
static const char *arg_state = DEFAULT_STATE;
static const char *arg_control = "/dev/viacam";
static int arg_check;

struct daemon {
	sd_event *event;
	int ctl_fd;		/* /dev/viacam */
	char config_path[PATH_MAX];
	char config_dir[PATH_MAX];
	char config_base[NAME_MAX + 1];
	struct vc_conf *conf;	/* the configuration in force */
	struct vc_session *sessions[VC_MAX_CAMERAS];	/* by index of conf->cams */
	sd_event_source *reload_timer;
	unsigned long reloads, rejected;
};

static void help(void)
{
	printf("Usage: viacamd [OPTIONS]\n"
	       "Serve viacam cameras: feed frames to the bridge's backend nodes.\n\n"
	       "  -c, --config FILE    configuration file (default %s)\n"
	       "      --state FILE     where camera ids are kept for the next start (default %s)\n"
	       "      --control DEV    the bridge's control node (default /dev/viacam)\n"
	       "      --check          check the configuration (and its backends) and exit\n"
	       "      --list-backends  list the backends and their keys\n"
	       "  -h, --help           show this help\n"
	       "      --version        show the version and the bridge uapi it speaks\n",
	       DEFAULT_CONFIG, DEFAULT_STATE);
}

enum { ARG_VERSION = 0x100, ARG_STATE, ARG_CONTROL, ARG_CHECK, ARG_LIST_BACKENDS };

static void list_backends(void)
{
	const struct vc_backend_ops *o;

	for (size_t i = 0; (o = vc_backend_at(i)); i++) {
		printf("%-10s %s\n", o->name, o->summary);
		printf("%-10s keys:", "");
		for (const char *const *k = o->keys; k && *k; k++)
			printf(" %s", *k);
		printf("\n");
	}
}

/* Returns 1 to go on, 0 to exit successfully, < 0 on error. */
static int parse_argv(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "state", required_argument, NULL, ARG_STATE },
		{ "control", required_argument, NULL, ARG_CONTROL },
		{ "check", no_argument, NULL, ARG_CHECK },
		{ "list-backends", no_argument, NULL, ARG_LIST_BACKENDS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:h", options, NULL)) >= 0) {
		switch (c) {
		case 'c':
			arg_config = optarg;
			break;
		case ARG_STATE:
			arg_state = optarg;
			break;
		case ARG_CONTROL:
			arg_control = optarg;
			break;
		case ARG_CHECK:
			arg_check = 1;
			break;
		case ARG_LIST_BACKENDS:
			list_backends();
			return 0;
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("viacamd 0.2 (bridge uapi %d.%d, backend ops v%d)\n",
			       VIACAM_UAPI_VERSION_MAJOR, VIACAM_UAPI_VERSION_MINOR, VC_BACKEND_ABI);
			return 0;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "viacamd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 1;
}

/* ---------------------------------------------------------------------------
 * The state file, read by viacamctl too:
 *   pid PID                      while viacamd runs
 *   camera NAME ID BACKEND       per camera it serves
 */

static uint32_t state_lookup(const char *name)
{
	char line[128], n[VC_NAME_LEN + 1];
	unsigned int id;
	uint32_t ret = VIACAM_ID_AUTO;
	FILE *f = fopen(arg_state, "re");

	if (!f)
		return ret;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "camera %32s %u", n, &id) == 2 && strcmp(n, name) == 0)
			ret = id;
	fclose(f);
	return ret;
}

static void state_save(struct daemon *d, bool running)
{
	char tmp[PATH_MAX + 8], dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", arg_state);
	mkdir(dirname(dir), 0755);
	snprintf(tmp, sizeof(tmp), "%s.new", arg_state);
	f = fopen(tmp, "we");
	if (!f) {
		vc_log("cannot write the state file %s: %s (a restarted viacamd adopts cameras by label)",
		       tmp, strerror(errno));
		return;
	}
	if (running)
		fprintf(f, "pid %d\n", (int)getpid());
	for (size_t i = 0; d->conf && i < d->conf->ncams; i++)
		if (d->sessions[i])
			fprintf(f, "camera %s %u %s\n", d->conf->cams[i].name,
				vc_session_camera_id(d->sessions[i]),
				vc_session_backend_name(d->sessions[i]));
	if (fclose(f) != 0 || rename(tmp, arg_state) != 0)
		vc_log("cannot write the state file %s: %s", arg_state, strerror(errno));
}

/* The id of a camera to adopt for @cc: from the state file, else by label. */
static uint32_t find_camera(struct daemon *d, const struct vc_cam_conf *cc)
{
	struct viacam_list list = { 0 };
	struct viacam_camera c = { .id = state_lookup(cc->name) };

	if (c.id != VIACAM_ID_AUTO && ioctl(d->ctl_fd, VIACAM_IOC_QUERY, &c) == 0)
		return c.id;
	if (ioctl(d->ctl_fd, VIACAM_IOC_LIST, &list) < 0)
		return VIACAM_ID_AUTO;
	for (uint32_t i = 0; i < list.count && i < VIACAM_MAX_CAMERAS; i++) {
		memset(&c, 0, sizeof(c));
		c.id = list.ids[i];
		if (ioctl(d->ctl_fd, VIACAM_IOC_QUERY, &c) == 0 &&
		    strncmp(c.label, cc->label, sizeof(c.label)) == 0)
			return c.id;
	}
	return VIACAM_ID_AUTO;
}

/* ---------------------------------------------------------------------------
 * Loading and applying a configuration
 */

static void log_msgs(struct vc_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		fprintf(stderr, "%s\n", m->v[i]);
}

/*
 * Loads the file and makes the backends it needs (into @prep, by index of the new conf's
 * cameras; NULL where the running session's backend stays). Returns 0 or -EINVAL after
 * logging every problem.
 */
static int load_checked(struct daemon *d, struct vc_conf **ret, struct vc_prepared **prep)
{
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf;
	int r = vc_conf_load(d->config_path, &conf, &msgs);

	*ret = NULL;
	if (r < 0) {
		log_msgs(&msgs);
		vc_msgs_free(&msgs);
		return r;
	}
	for (size_t i = 0; i < conf->ncams; i++) {
		const struct vc_cam_conf *cc = &conf->cams[i];
		const struct vc_cam_conf *old = vc_conf_camera(d->conf, cc->name);

		prep[i] = NULL;
		if (old && vc_cam_same_backend(old, cc) && vc_cam_same_ctrls(old, cc))
			continue;
		if (vc_prepare(cc, d->config_path, &prep[i], &msgs) < 0)
			r = -EINVAL;
	}
	if (r < 0) {
		log_msgs(&msgs);
		for (size_t i = 0; i < conf->ncams; i++)
			vc_prepared_free(prep[i]);
		vc_conf_free(conf);
	} else {
		*ret = conf;
	}
	vc_msgs_free(&msgs);
	return r;
}

static void apply(struct daemon *d, struct vc_conf *conf, struct vc_prepared **prep)
{
	struct vc_session *next[VC_MAX_CAMERAS] = { 0 };

	/* Sections that went away: their cameras go (consumers get ENODEV). */
	for (size_t i = 0; d->conf && i < d->conf->ncams; i++) {
		if (d->sessions[i] && !vc_conf_camera(conf, d->conf->cams[i].name)) {
			vc_log("camera %s: section removed", d->conf->cams[i].name);
			vc_session_free(d->sessions[i], true);
			d->sessions[i] = NULL;
		}
	}
	for (size_t i = 0; i < conf->ncams; i++) {
		const struct vc_cam_conf *cc = &conf->cams[i];
		struct vc_session *s = NULL;

		for (size_t k = 0; d->conf && k < d->conf->ncams; k++) {
			if (d->sessions[k] && strcmp(d->conf->cams[k].name, cc->name) == 0) {
				s = d->sessions[k];
				d->sessions[k] = NULL;
			}
		}
		if (s) {
			vc_session_update(s, cc, prep[i]);
		} else if (prep[i]) {
			if (vc_session_new(d->event, d->ctl_fd, cc, prep[i], find_camera(d, cc),
					   &s) < 0)
				vc_log("camera %s: not served (see above)", cc->name);
		}
		prep[i] = NULL;
		next[i] = s;
	}
	vc_conf_free(d->conf);
	d->conf = conf;
	memcpy(d->sessions, next, sizeof(next));
	state_save(d, true);
}

static int reload(struct daemon *d, const char *why)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_conf *conf;
	int r;

	sd_notify(0, "RELOADING=1");
	vc_log("reloading %s (%s)", d->config_path, why);
	r = load_checked(d, &conf, prep);
	if (r < 0) {
		d->rejected++;
		vc_log("%s is invalid; the running configuration stays (%zu cameras)",
		       d->config_path, d->conf ? d->conf->ncams : 0);
	} else {
		apply(d, conf, prep);
		d->reloads++;
		vc_log("configuration applied: %zu cameras", conf->ncams);
	}
	sd_notifyf(0, "READY=1\nSTATUS=%zu cameras; %lu reloads, %lu rejected",
		   d->conf ? d->conf->ncams : 0, d->reloads, d->rejected);
	return r;
}

static int on_reload_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	reload(userdata, "the file changed");
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t now;

	(void)s;
	if (!ev->len || strcmp(ev->name, d->config_base) != 0)
		return 0;
	sd_event_now(d->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(d->reload_timer, now + RELOAD_DELAY_US);
	sd_event_source_set_enabled(d->reload_timer, SD_EVENT_ONESHOT);
	return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s;
	(void)si;
	reload(userdata, "SIGHUP");
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)userdata;
	vc_log("%s received, stopping", strsignal((int)si->ssi_signo));
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int setup_paths(struct daemon *d)
{
	char tmp[PATH_MAX];

	if (!realpath(arg_config, d->config_path)) {
		/* The file may be missing at start only if we are told to check it. */
		snprintf(d->config_path, sizeof(d->config_path), "%s", arg_config);
	}
	snprintf(tmp, sizeof(tmp), "%s", d->config_path);
	snprintf(d->config_dir, sizeof(d->config_dir), "%s", dirname(tmp));
	snprintf(tmp, sizeof(tmp), "%s", d->config_path);
	snprintf(d->config_base, sizeof(d->config_base), "%s", basename(tmp));
	return 0;
}

static int check_only(struct daemon *d)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_conf *conf;

	if (load_checked(d, &conf, prep) < 0)
		return EXIT_FAILURE;
	printf("%s: OK, %zu cameras\n", d->config_path, conf->ncams);
	for (size_t i = 0; i < conf->ncams; i++) {
		printf("  %s: backend %s, %zu formats offered\n", conf->cams[i].name,
		       conf->cams[i].backend, prep[i] ? prep[i]->noffers : 0);
		vc_prepared_free(prep[i]);
	}
	vc_conf_free(conf);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct daemon d = { .ctl_fd = -1 };
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_conf *conf;
	sigset_t mask;
	int r;

	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	setup_paths(&d);
	if (arg_check)
		return check_only(&d);

	d.ctl_fd = open(arg_control, O_RDWR | O_CLOEXEC);
	if (d.ctl_fd < 0) {
		int e = errno;

		vc_log("%s: %s%s", arg_control, strerror(e),
		       e == ENOENT ? " (is the viacam module loaded?)" :
		       e == EACCES ? " (need root)" : "");
		return EXIT_FAILURE;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	r = sd_event_default(&d.event);
	if (r < 0) {
		vc_log("cannot create the event loop: %s", strerror(-r));
		return EXIT_FAILURE;
	}
	if (sd_event_add_signal(d.event, NULL, SIGTERM, on_signal, NULL) < 0 ||
	    sd_event_add_signal(d.event, NULL, SIGINT, on_signal, NULL) < 0 ||
	    sd_event_add_signal(d.event, NULL, SIGHUP, on_sighup, &d) < 0) {
		vc_log("cannot watch signals");
		return EXIT_FAILURE;
	}
	r = sd_event_add_time(d.event, &d.reload_timer, CLOCK_MONOTONIC, UINT64_MAX, 0,
			      on_reload_timer, &d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d.reload_timer, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_inotify(d.event, NULL, d.config_dir,
					 IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
					 IN_CREATE, on_inotify, &d);
	if (r < 0) {
		vc_log("cannot watch %s: %s", d.config_dir, strerror(-r));
		return EXIT_FAILURE;
	}

	vc_log("starting with %s", d.config_path);
	if (load_checked(&d, &conf, prep) < 0) {
		vc_log("%s is invalid; not starting", d.config_path);
		return EXIT_FAILURE;
	}
	apply(&d, conf, prep);
	vc_log("ready: %zu cameras", d.conf->ncams);
	sd_notifyf(0, "READY=1\nSTATUS=%zu cameras", d.conf->ncams);

	r = sd_event_loop(d.event);

	/* Detach: sources stop, cameras stay (a restarted viacamd adopts them). */
	state_save(&d, false);
	for (size_t i = 0; d.conf && i < d.conf->ncams; i++)
		vc_session_free(d.sessions[i], false);
	vc_conf_free(d.conf);
	sd_event_source_unref(d.reload_timer);
	sd_event_unref(d.event);
	close(d.ctl_fd);
	vc_log("stopped");
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
