// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacamd.c - the viacam daemon: one event loop that serves the bridge's cameras.
 *
 * Foundation stage: the event loop, signal handling and systemd readiness are
 * real; sessions, backends and the config file arrive with the daemon issue.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "viacam.h"

#define DEFAULT_CONFIG "/etc/viacam/viacam.conf"

static const char *arg_config = DEFAULT_CONFIG;

static void help(void)
{
	printf("Usage: viacamd [OPTIONS]\n"
	       "Serve viacam cameras: feed frames to the bridge's backend nodes.\n\n"
	       "  -c, --config FILE  configuration file (default %s)\n"
	       "  -h, --help         show this help\n"
	       "      --version      show the version and the bridge uapi it speaks\n",
	       DEFAULT_CONFIG);
}

enum { ARG_VERSION = 0x100 };

/* Returns 1 to go on, 0 to exit successfully, < 0 on error. */
static int parse_argv(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
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
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("viacamd 0.1 (bridge uapi %d.%d)\n", VIACAM_UAPI_VERSION_MAJOR,
			       VIACAM_UAPI_VERSION_MINOR);
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

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)userdata;
	fprintf(stderr, "viacamd: %s received, stopping\n", strsignal((int)si->ssi_signo));
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

int main(int argc, char **argv)
{
	sd_event *event = NULL;
	sigset_t mask;
	int r;

	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	r = sd_event_default(&event);
	if (r < 0) {
		fprintf(stderr, "viacamd: cannot create the event loop: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	if (sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL) < 0 ||
	    sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL) < 0) {
		fprintf(stderr, "viacamd: cannot watch signals\n");
		sd_event_unref(event);
		return EXIT_FAILURE;
	}
	fprintf(stderr, "viacamd: started (config %s; sessions are not implemented yet)\n",
		arg_config);
	sd_notify(0, "READY=1");
	r = sd_event_loop(event);
	sd_event_unref(event);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
