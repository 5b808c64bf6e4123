// SPDX-License-Identifier: GPL-2.0-only
/*
 * sandbox.c - a worker process gives up what a media parser must not have.
 *
 * Order matters: the mount namespace needs CAP_SYS_ADMIN, the bounding set CAP_SETPCAP,
 * setgroups/setgid/setuid CAP_SETGID/CAP_SETUID; so the mounts come first, then the bounding
 * set, then the ids (setuid() from root clears the permitted and effective sets), then what
 * needs no privilege (no new privileges, limits, seccomp: the filter forbids the calls above).
 *
 * The user: VC_SANDBOX_USER ("viacam", a system user the package makes with sysusers.d) when
 * it exists, else "nobody". A user of its own is better: processes of one uid may signal and
 * ptrace each other (the filter forbids ptrace, but not kill), and "nobody" is shared with
 * every other daemon that falls back to it (NFS's squashed root among them). nobody keeps the
 * tests and a `make install` without the package's user working.
 *
 * The seccomp filter is a deny list, default allow: GStreamer's plugins (decoders, rtspsrc,
 * v4l2src, pipewiresrc) make a wide and changing set of calls, and an allow list that misses
 * one kills a camera on a machine we never tested. What it forbids is what a parser never
 * needs and an attacker wants: other processes' memory (ptrace, process_vm_*), new namespaces
 * (unshare, setns, clone with CLONE_NEWUSER; clone3 says ENOSYS so glibc uses clone), mounts,
 * exec, kernel modules, kexec, bpf, perf, userfaultfd (a tool for kernel races), keyrings,
 * io_uring, identity changes and the clock. A forbidden call kills the worker (SIGSYS), which
 * the core reports and restarts.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>
#include <seccomp.h>

#include "sandbox.h"

static int fail(char *why, size_t len, int e, const char *what)
{
	snprintf(why, len, "%s: %s", what, strerror(e));
	return -e;
}

void vc_sandbox_devices_of(struct vc_sandbox *sb, const char *desc)
{
	const char *p = desc;

	if (strstr(desc, "v4l2src") || strstr(desc, "libcamerasrc"))
		sb->needs_dev = true;
	while ((p = strstr(p, "device=")) && sb->ndevices < VC_SANDBOX_MAX_DEVICES) {
		size_t n;

		p += strlen("device=");
		if (*p == '"')
			p++;
		n = strcspn(p, " \t\"!");
		/* only plain /dev paths; the element refuses anything odd itself */
		if (n && n < sizeof(sb->devices[0]) && strncmp(p, "/dev/", 5) == 0 &&
		    !memchr(p, '\0', n) && !strstr(p, "..")) {
			memcpy(sb->devices[sb->ndevices], p, n);
			sb->devices[sb->ndevices++][n] = 0;
		}
		p += n;
	}
}

/*
 * An empty read-only /sys and a /dev of its own: null, zero, full, random and urandom, bound
 * from the originals (opened in the new namespace, bound through /proc/self/fd after the old
 * /dev is covered). Private propagation so nothing reaches the host's namespace.
 */
static int private_mounts(const struct vc_sandbox *sb, char *why, size_t len)
{
	static const char *const base[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					    "/dev/urandom" };
	int fds[5];
	const char *paths[5];
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < 5; i++)
		paths[n++] = base[i];
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	if (unshare(CLONE_NEWNS) < 0)
		return fail(why, len, errno, "unshare(CLONE_NEWNS)");
	/* opened in the new namespace: a bind mount's source must be one of its mounts */
	for (size_t i = 0; i < n; i++)
		fds[i] = open(paths[i], O_PATH | O_CLOEXEC);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/sys", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=4k,mode=0555") < 0) {
		r = fail(why, len, errno, "mounting /sys");
		goto out;
	}
	/*
	 * A source that names a device keeps the host's /dev (its uid, the video group and the
	 * unit's DevicePolicy decide what it opens): a device that appears after the worker
	 * started (a camera plugged in again, a node made anew) would never show up in a copy.
	 */
	if (sb->ndevices || sb->needs_dev)
		goto out;
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755") < 0) {
		r = fail(why, len, errno, "mounting /dev");
		goto out;
	}
	if (mkdir("/dev/shm", 01777) < 0 || chmod("/dev/shm", 01777) < 0 ||
	    mkdir("/dev/pts", 0755) < 0) {
		r = fail(why, len, errno, "making /dev");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char src[64];
		int f;

		if (fds[i] < 0)
			continue;	/* not there: the source says so when it opens it */
		f = open(paths[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (f < 0 && errno != EEXIST) {
			r = fail(why, len, errno, paths[i]);
			goto out;
		}
		if (f >= 0)
			close(f);
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
		if (mount(src, paths[i], NULL, MS_BIND, NULL) < 0) {
			r = fail(why, len, errno, paths[i]);
			goto out;
		}
	}
	if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
		  NULL) < 0)
		r = fail(why, len, errno, "/dev read-only");
out:
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

static int drop_ids(const struct vc_sandbox *sb, char *why, size_t len)
{
	uid_t uid = sb->uid;
	gid_t gid = sb->gid;
	gid_t groups[1];
	size_t ngroups = 0;

	if (uid == (uid_t)-1) {
		struct passwd *pw = getpwnam(VC_SANDBOX_USER);

		if (!pw)
			pw = getpwnam(VC_SANDBOX_FALLBACK_USER);
		if (!pw)
			return fail(why, len, ENOENT, "no user " VC_SANDBOX_USER " nor "
				    VC_SANDBOX_FALLBACK_USER);
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (uid == 0 || gid == 0)
		return fail(why, len, EPERM, "a worker never runs as root");
	if (sb->ndevices || sb->needs_dev) {	/* capture devices are the video group's */
		struct group *gr = getgrnam("video");

		if (gr)
			groups[ngroups++] = gr->gr_gid;
	}
	for (unsigned long cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return fail(why, len, errno, "dropping the bounding set");
	if (setgroups(ngroups, groups) < 0)
		return fail(why, len, errno, "setgroups");
	if (setresgid(gid, gid, gid) < 0)
		return fail(why, len, errno, "setresgid");
	if (setresuid(uid, uid, uid) < 0)
		return fail(why, len, errno, "setresuid");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return fail(why, len, errno, "clearing the ambient set");
	/* Whatever fd, mapping or capability might be left: a setuid back must fail. */
	if (setresuid(0, 0, 0) == 0)
		return fail(why, len, EPERM, "could become root again");
	return 0;
}

static int seccomp_filter(char *why, size_t len)
{
	static const char *const deny[] = {
		"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
		"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
		"fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
		"execve", "execveat", "init_module", "finit_module", "delete_module",
		"kexec_load", "kexec_file_load", "bpf", "perf_event_open", "userfaultfd",
		"keyctl", "add_key", "request_key", "acct", "swapon", "swapoff", "reboot",
		"syslog", "quotactl", "quotactl_fd", "iopl", "ioperm", "settimeofday",
		"clock_settime", "clock_adjtime", "adjtimex", "open_by_handle_at",
		"name_to_handle_at", "lookup_dcookie", "fanotify_init", "vhangup",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "setuid", "setgid",
		"setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid",
		"setfsgid", "capset", "sethostname", "setdomainname", "nfsservctl",
		"uselib", "memfd_secret", "landlock_create_ruleset",
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = 0;

	if (!ctx)
		return fail(why, len, ENOMEM, "seccomp_init");
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]) && r >= 0; i++) {
		int nr = seccomp_syscall_resolve_name(deny[i]);

		if (nr != __NR_SCMP_ERROR)	/* not on this architecture */
			r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, nr, 0);
	}
	/* New user namespaces: clone's flag (clone3's flags are behind a pointer: ENOSYS,
	 * and glibc falls back to clone). */
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r >= 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r < 0 ? fail(why, len, -r, "seccomp filter") : 0;
}

int vc_sandbox_enter(const struct vc_sandbox *sb, char *why, size_t len)
{
	struct rlimit core = { 0, 0 };
	int r;

	if (geteuid() == 0) {
		r = private_mounts(sb, why, len);
		if (r < 0)
			return r;
		r = drop_ids(sb, why, len);
		if (r < 0)
			return r;
	}
	/* else (viacamd --check by a user): already without privileges; the rest applies */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(why, len, errno, "PR_SET_NO_NEW_PRIVS");
	/* The parent-death signal does not survive the change of ids: set it again. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return fail(why, len, errno, "PR_SET_PDEATHSIG");
	setrlimit(RLIMIT_CORE, &core);
#ifndef __SANITIZE_ADDRESS__
	/* (ASan's shadow memory is a private writable mapping of terabytes: no limit there.) */
	{
		uint64_t lim = sb->data_limit ? sb->data_limit : (uint64_t)VC_SANDBOX_DATA_MB << 20;
		struct rlimit data = { lim, lim };

		if (setrlimit(RLIMIT_DATA, &data) < 0)
			return fail(why, len, errno, "RLIMIT_DATA");
	}
#endif
	return seccomp_filter(why, len);
}
