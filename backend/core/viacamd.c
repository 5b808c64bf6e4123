// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacamd.c - the viacam daemon: one event loop that serves the bridge's cameras.
 *
 * It reads the configuration (config.c), makes one session per camera section (session.c)
 * and keeps them in line with the file (daemon.c): an inotify watch on the file's directory
 * (editors replace files by renaming a temporary one) and SIGHUP trigger a reload. A reload
 * first checks the whole new file - generic keys, then a fresh backend instance for every
 * section whose backend, offer or control defaults changed - and only then applies it; a
 * file with any problem changes nothing and every problem is logged as FILE:LINE: reason.
 *
 * Cameras outlive the daemon: on SIGTERM the sessions stop their sources and close their
 * nodes, and the bridge keeps consumers alive with repeated frames. The next viacamd adopts
 * them again: by the id it wrote to its state file, else by label. Only removing a section
 * removes its camera.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <linux/viacam.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "version.h"
#include "worker.h"

#ifndef VIACAM_SYSCONFDIR
#define VIACAM_SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONFIG VIACAM_SYSCONFDIR "/viacam/viacam.conf"
#define DEFAULT_STATE "/run/viacamd/cameras"
#define RELOAD_DELAY_US 200000	/* editors write in steps: reload once they are done */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static const char *arg_config = DEFAULT_CONFIG;
static const char *arg_state = DEFAULT_STATE;
static const char *arg_control = "/dev/viacam";
static int arg_check;

/*
 * -c is opened by its name at every reload, so a repointed symlink is followed. Two inotify
 * watches: the directory of -c as given (a symlink repointed, or the file saved there) and,
 * when -c is a symlink, the directory of the file it names now (that file saved).
 */
struct daemon {
	struct vc_daemon d;	/* the configuration in force and its sessions */
	char config_dir[PATH_MAX];
	char config_base[NAME_MAX + 1];
	char target_dir[PATH_MAX];	/* "" when -c is no symlink */
	char target_base[NAME_MAX + 1];
	sd_event_source *target_watch;
	sd_event_source *reload_timer;
};

#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)

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
			printf("viacamd %s (bridge uapi %d.%d, backend ops v%d)\n", VIACAM_VERSION,
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

/* Splits absolute @path into its directory and last name; -ENAMETOOLONG if they do not fit. */
static int split_path(const char *path, char *dir, size_t dlen, char *base, size_t blen)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1])
		return -EINVAL;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= dlen || strlen(slash + 1) >= blen)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = 0;
	strcpy(base, slash + 1);
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata);

/* Watches the directory of the file -c names now, if -c is a symlink (see struct daemon). */
static void watch_target(struct daemon *d)
{
	char real[PATH_MAX], dir[PATH_MAX], base[NAME_MAX + 1];
	int r;

	if (!realpath(d->d.config_path, real) ||
	    split_path(real, dir, sizeof(dir), base, sizeof(base)) < 0 ||
	    (!strcmp(dir, d->config_dir) && !strcmp(base, d->config_base))) {
		/* missing (a reload says so), or no symlink: the first watch sees it */
		d->target_watch = sd_event_source_disable_unref(d->target_watch);
		d->target_dir[0] = d->target_base[0] = 0;
		return;
	}
	if (!strcmp(dir, d->target_dir) && !strcmp(base, d->target_base))
		return;
	d->target_watch = sd_event_source_disable_unref(d->target_watch);
	strcpy(d->target_dir, dir);
	strcpy(d->target_base, base);
	if (!strcmp(dir, d->config_dir))
		return;		/* the same directory: the first watch sees it */
	r = sd_event_add_inotify(d->d.event, &d->target_watch, dir, WATCH_MASK, on_inotify, d);
	if (r < 0)
		vc_warn("cannot watch '%s' (where '%s' points), ignoring: %s (saving it needs a SIGHUP)",
			dir, d->d.config_path, strerror(-r));
}

static int on_reload_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	(void)s;
	(void)usec;
	watch_target(d);
	vc_daemon_reload(&d->d, "the file changed");
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t now;

	(void)s;
	if (!ev->len || (strcmp(ev->name, d->config_base) && strcmp(ev->name, d->target_base)))
		return 0;
	sd_event_now(d->d.event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(d->reload_timer, now + RELOAD_DELAY_US);
	sd_event_source_set_enabled(d->reload_timer, SD_EVENT_ONESHOT);
	return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	(void)s;
	(void)si;
	watch_target(d);
	vc_daemon_reload(&d->d, "SIGHUP");
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)userdata;
	vc_log("%s received, stopping", strsignal((int)si->ssi_signo));
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

/*
 * @path made absolute in @ret (the working directory in front of a relative one), symlinks
 * kept. A path that does not fit is an error: cut, it named another, existing file.
 */
static int absolute_path(const char *path, const char *what, char *ret, size_t size)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/') {
		n = snprintf(ret, size, "%s", path);
	} else if (!getcwd(cwd, sizeof(cwd))) {
		n = -errno;
		vc_logp(LOG_ERR, "%s: cannot make '%s' absolute: %s", what, path, strerror(-n));
		return n;
	} else {
		n = snprintf(ret, size, "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= size) {
		vc_logp(LOG_ERR, "%s: the path is too long (%d bytes; at most %zu)", what, n,
			size - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int setup_paths(struct daemon *d)
{
	static char state[PATH_MAX];
	int r;

	r = absolute_path(arg_config, "--config", d->d.config_path, sizeof(d->d.config_path));
	if (r >= 0)
		r = absolute_path(arg_state, "--state", state, sizeof(state));
	if (r < 0)
		return r;
	d->d.state_path = state;
	r = split_path(d->d.config_path, d->config_dir, sizeof(d->config_dir), d->config_base,
		       sizeof(d->config_base));
	if (r < 0)
		vc_logp(LOG_ERR, "--config: '%s' is not a file name%s", d->d.config_path,
			r == -ENAMETOOLONG ? " (a name is at most " STRINGIFY(NAME_MAX) " bytes)" : "");
	return r;
}

static int check_only(struct daemon *d)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf;
	int r;

	/* Nothing but checks: no source runs (a gst pipeline stays in NULL, backend.h). */
	d->d.check_only = true;
	r = vc_daemon_check(&d->d, &conf, prep, &msgs);
	vc_daemon_log_msgs(&msgs);
	vc_msgs_free(&msgs);
	if (r < 0)
		return EXIT_FAILURE;
	printf("%s: OK, %zu cameras\n", d->d.config_path, conf->ncams);
	for (size_t i = 0; i < conf->ncams; i++) {
		if (conf->cams[i].absent[0])
			printf("  %s: backend %s, optional and absent, not served: %s\n",
			       conf->cams[i].name, conf->cams[i].backend, conf->cams[i].absent);
		else
			printf("  %s: backend %s, %zu formats offered\n", conf->cams[i].name,
			       conf->cams[i].backend, prep[i] ? prep[i]->noffers : 0);
		vc_prepared_free(prep[i]);
	}
	vc_conf_free(conf);
	return EXIT_SUCCESS;
}

/* Whether stderr is the journal: systemd's JOURNAL_STREAM names it as DEVICE:INODE. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

int main(int argc, char **argv)
{
	struct daemon d = { .d.ctl_fd = -1 };
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf;
	char summary[4096], why[PATH_MAX + 128];
	int r, lock_fd;
	pid_t holder;
	sigset_t mask;

	vc_log_journal = stderr_is_journal();
	/* A worker process (worker.h): the core re-executed itself for one backend instance. */
	if (argc == 2 && strcmp(argv[1], VC_WORKER_ARG) == 0)
		return vc_worker_main(VC_WORKER_FD, vc_backend_find);
	/* The gst, pipewire and file backends run in workers: this very binary, re-executed. */
	vc_worker_exe = "/proc/self/exe";
	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	if (setup_paths(&d) < 0)
		return EXIT_FAILURE;
	if (arg_check)
		return check_only(&d);

	/* One viacamd per state file: a second one adopted the first one's cameras. */
	lock_fd = vc_daemon_lock(d.d.state_path, &holder, why, sizeof(why));
	if (lock_fd == -EBUSY) {
		vc_logp(LOG_ERR, "another viacamd (pid %d) runs with the state file '%s'; not starting",
			(int)holder, d.d.state_path);
		return EXIT_FAILURE;
	}
	if (lock_fd < 0) {
		vc_logp(LOG_ERR, "cannot take the lock next to the state file '%s': %s; not starting",
			d.d.state_path, why);
		return EXIT_FAILURE;
	}

	d.d.ctl_fd = open(arg_control, O_RDWR | O_CLOEXEC);
	if (d.d.ctl_fd < 0) {
		int e = errno;

		vc_logp(LOG_ERR, "%s: %s%s", arg_control, strerror(e),
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

	r = sd_event_default(&d.d.event);
	if (r < 0) {
		vc_logp(LOG_ERR, "cannot create the event loop: %s", strerror(-r));
		return EXIT_FAILURE;
	}
	if (sd_event_add_signal(d.d.event, NULL, SIGTERM, on_signal, NULL) < 0 ||
	    sd_event_add_signal(d.d.event, NULL, SIGINT, on_signal, NULL) < 0 ||
	    sd_event_add_signal(d.d.event, NULL, SIGHUP, on_sighup, &d) < 0) {
		vc_logp(LOG_ERR, "cannot watch signals");
		return EXIT_FAILURE;
	}
	r = sd_event_add_time(d.d.event, &d.reload_timer, CLOCK_MONOTONIC, UINT64_MAX, 0,
			      on_reload_timer, &d);
	if (r >= 0)
		r = sd_event_source_set_enabled(d.reload_timer, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_inotify(d.d.event, NULL, d.config_dir, WATCH_MASK, on_inotify, &d);
	if (r < 0) {
		vc_logp(LOG_ERR, "cannot watch %s: %s", d.config_dir, strerror(-r));
		return EXIT_FAILURE;
	}
	watch_target(&d);

	vc_log("starting with %s", d.d.config_path);
	/* Reloads wait for the file to hold still (daemon.h); so does the start, if it changed
	 * while it was read. */
	d.d.settle_us = VC_SETTLE_US;
	for (int i = 0; (r = vc_daemon_check(&d.d, &conf, prep, &msgs)) == -EAGAIN &&
			i < VC_SETTLE_TRIES; i++) {
		vc_msgs_free(&msgs);
		usleep(VC_SETTLE_US);
	}
	vc_daemon_log_msgs(&msgs);
	vc_msgs_free(&msgs);
	if (r < 0) {
		vc_logp(LOG_ERR, "%s is invalid; not starting", d.d.config_path);
		return EXIT_FAILURE;
	}
	vc_daemon_apply(&d.d, conf, prep);
	vc_log("ready: %s", vc_daemon_summary(&d.d, summary, sizeof(summary)));
	sd_notifyf(0, "READY=1\nSTATUS=%zu of %zu cameras served", vc_daemon_served(&d.d),
		   d.d.conf->ncams);

	r = sd_event_loop(d.d.event);

	vc_daemon_stop(&d.d);
	sd_event_source_unref(d.reload_timer);
	sd_event_source_unref(d.target_watch);
	sd_event_unref(d.d.event);
	close(d.d.ctl_fd);
	vc_log("stopped");
	close(lock_fd);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
