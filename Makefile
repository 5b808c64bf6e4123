# viacam - top-level build.
#
#   make            build the kernel module (against KDIR), the daemon and the tools
#   make run        the main job: bridge + viacamd on conf/viacam.conf (in a QEMU guest here;
#                   fetches and builds only what that needs: one kernel, its module, viacamd)
#   make check      unit tests on the host, then integration tests in QEMU on each kernel of
#                   the matrix (6.1, 6.12, 6.12-rt, sid's 7.2, and the self-built 7.2-debug)
#                   (6.12-rt and 7.2-debug run the locking and lifetime tests)
#   make check-full   every integration test on every kernel of the matrix
#   make check-quick  only 6.1 and 6.12
#   make vm-shell   interactive guest (KERNEL=6.1|6.12|6.12-rt|7.2|7.2-debug) with viacam.ko
#   make kernels    fetch/re-use the Debian kernels of the test matrix (~/.cache/viacam; 7.2
#                   with the sid root it is built in, tools/vm/sid-root.sh)
#   make deps       install the Debian packages the project needs
#   make install    viacamd, viacamctl, man pages, unit, udev/modprobe files, the uapi header,
#                   and the module (kbuild modules_install); PREFIX, DESTDIR, SYSCONFDIR...
#                   make install-user leaves out the module (DKMS builds it), make uninstall
#                   removes what install put there (a changed config stays)
#
# User CFLAGS, CPPFLAGS and LDFLAGS are honoured (packagers: dpkg-buildflags). -Werror is on
# in the project's own builds and tests (make check, make run; WERROR=-Werror), not in a
# plain `make` or `make install`, so a newer compiler's new warning never stops an install.
#
# KDIR defaults to the running kernel's build directory, or the newest cached Debian
# headers when the running kernel has none (as on our build machines).

SHELL := /bin/bash
CC ?= gcc
BUILD := build
KERNEL ?= 6.12

CFLAGS ?= -g -O2
WERROR ?=
CFLAGS_WARN := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wmissing-prototypes
# Test builds (ASan/UBSan, unit tests, test tools in the guest) are the project's own: -Werror.
CFLAGS_TEST := $(CFLAGS_WARN) -Werror -g

# Where make install puts things. SYSCONFDIR is /etc whatever the prefix: viacamd reads
# $(SYSCONFDIR)/viacam/viacam.conf by default (compiled in), the unit names that path.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
MANDIR ?= $(PREFIX)/share/man
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR ?= $(PREFIX)/share/doc/viacam
LIBDIR_SYS ?= $(PREFIX)/lib
UNITDIR ?= $(LIBDIR_SYS)/systemd/system
UDEVRULESDIR ?= $(LIBDIR_SYS)/udev/rules.d
MODPROBEDIR ?= $(LIBDIR_SYS)/modprobe.d
MODULESLOADDIR ?= $(LIBDIR_SYS)/modules-load.d
VERSION := $(shell sed -nE 's/^\#define VIACAM_VERSION "(.*)"$$/\1/p' lib/version.h)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# The libraries (Debian's -dev packages, scripts/deps.sh). A missing one stops the build with
# pkg-config's own message (target pkgcheck), not with a compiler error about a header.
PKGS := libv4l2 libv4lconvert libdrm libsystemd inih gstreamer-1.0 gstreamer-app-1.0 gstreamer-video-1.0
# The sources: lib/ (what the daemon and the tools share), backend/ (the ops table and the
# registry), backend/core/ (the daemon), one folder per backend, tools/.
SRCDIRS := lib backend backend/core backend/pattern backend/file backend/v4l2 backend/gst \
	backend/pipewire backend/via tools/common
INCLUDES := -Ikmod/uapi $(addprefix -I,$(SRCDIRS)) \
	$(shell pkg-config --cflags libdrm gstreamer-app-1.0 gstreamer-video-1.0 2>/dev/null) \
	-DVIACAM_SYSCONFDIR='"$(SYSCONFDIR)"'
LIBS_BACKENDS := $(shell pkg-config --libs libv4l2 libv4lconvert libdrm gstreamer-app-1.0 gstreamer-video-1.0 2>/dev/null) -lm
LIBS_DAEMON := $(shell pkg-config --libs libsystemd inih 2>/dev/null) $(LIBS_BACKENDS)

# viacamd: the core, and the backends (registry in backends.c).
# The VIA backend: logic (engine, sensor), the I/O interface and its transports, the model.
VIA_SRC := backend/via/be-via.c backend/via/via-engine.c backend/via/ov7670.c \
	backend/via/via-io.c backend/via/via-i2c.c backend/via/via-pci.c backend/via/via-drm.c \
	backend/via/via-model.c
BACKENDS_SRC := backend/backends.c lib/text.c backend/pattern/pattern.c \
	backend/pattern/be-pattern.c backend/file/y4m.c backend/file/be-file.c \
	backend/v4l2/be-v4l2.c backend/gst/be-gst.c backend/pipewire/be-pipewire.c $(VIA_SRC)
CORE := backend/core
DAEMON_SRC := $(CORE)/viacamd.c $(CORE)/daemon.c $(CORE)/config.c $(CORE)/session.c \
	$(CORE)/offer.c $(CORE)/convert.c lib/ctrlname.c lib/statefile.c \
	$(BACKENDS_SRC)

KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; if [ -f $$d/Makefile ]; then echo $$d; \
	else tools/vm/kernels.sh kdir $(KERNEL) 2>/dev/null; fi)

HDRS := $(wildcard $(addsuffix /*.h,$(SRCDIRS)) kmod/uapi/linux/*.h)
PROGS := logscan viacamd viacamctl vctest vcpix vcfuzz vcbench vchostile
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test-*.c))

.PHONY: all host asan fuzz fuzz-parsers-nightly kmod kmod-all deps kernels check check-full check-quick unit run vm-shell clean \
	fuzz-nightly stress-nightly bench bench-peer pkgcheck install install-user install-kmod uninstall
.DELETE_ON_ERROR:

all: host kmod

host: $(addprefix $(BUILD)/host/,$(PROGS)) $(BUILD)/host/vccompat32
asan: $(addprefix $(BUILD)/asan/,$(PROGS)) $(addprefix $(BUILD)/asan/tests/,$(UNIT_TESTS))

# prog NAME, SOURCES, LIBS: an optimized build in build/host and an ASan/UBSan one in build/asan.
define prog
$(BUILD)/host/$(1): $(2) $(HDRS) | pkgcheck
	@mkdir -p $$(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_WARN) $(WERROR) $(CFLAGS) $(INCLUDES) -o $$@ $(2) $(LDFLAGS) $(3)
$(BUILD)/asan/$(1): $(2) $(HDRS) | pkgcheck
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS_TEST) -O1 $(SAN) $(INCLUDES) -o $$@ $(2) $(3)
endef
pkgcheck:
	@pkg-config --print-errors --exists $(PKGS) || { \
		echo "viacam: the libraries above are missing: run 'make deps' (Debian: scripts/deps.sh)" >&2; \
		exit 1; }
$(eval $(call prog,logscan,tools/vm/logscan-main.c tools/common/logscan.c,))
$(eval $(call prog,viacamd,$(DAEMON_SRC),$(LIBS_DAEMON)))
$(eval $(call prog,viacamctl,tools/viacamctl.c lib/ctrlname.c lib/text.c lib/statefile.c,))
$(eval $(call prog,vctest,tests/guest/vctest.c,-lpthread))
$(eval $(call prog,vcpix,tests/guest/vcpix.c $(BACKENDS_SRC),$(LIBS_BACKENDS)))
$(eval $(call prog,vcfuzz,tests/guest/vcfuzz.c,-lpthread))
$(eval $(call prog,vcbench,tests/guest/vcbench.c,-lpthread))
$(eval $(call prog,vchostile,tests/guest/vchostile.c,-lpthread))
# A 32-bit backend for the compat_ioctl32 test (static: the guest needs no i386 libraries).
$(BUILD)/host/vccompat32: tests/guest/vccompat.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) -m32 -static $(CFLAGS_TEST) -O2 $(INCLUDES) -o $@ $<

# Unit tests (cmocka), always with the sanitizers. Each links the sources it tests
# (test-NAME_SRC).
test-logscan_SRC := tools/common/logscan.c
test-ctrlname_SRC := lib/ctrlname.c
test-config_SRC := $(CORE)/config.c lib/ctrlname.c $(BACKENDS_SRC)
test-config_LIBS := -linih $(LIBS_BACKENDS)
test-convert_SRC := $(CORE)/convert.c $(BACKENDS_SRC)
test-convert_LIBS := $(LIBS_BACKENDS)
test-pattern_SRC := $(BACKENDS_SRC)
test-pattern_LIBS := $(LIBS_BACKENDS)
test-y4m_SRC := $(BACKENDS_SRC)
test-y4m_LIBS := $(LIBS_BACKENDS)
test-via-transport_SRC := backend/via/via-io.c backend/via/via-i2c.c backend/via/via-pci.c \
	backend/via/via-drm.c
test-via-transport_LIBS := $(LIBS_BACKENDS)
test-via-model_SRC := backend/via/via-model.c backend/via/via-io.c backend/via/via-i2c.c
test-via-model_LIBS := -lm
test-via_SRC := $(BACKENDS_SRC)
test-via_LIBS := $(LIBS_BACKENDS)
test-statefile_SRC := lib/statefile.c
test-gst_SRC := $(BACKENDS_SRC)
test-gst_LIBS := $(LIBS_BACKENDS)
test-v4l2_SRC := $(BACKENDS_SRC)
test-v4l2_LIBS := $(LIBS_BACKENDS)
test-daemon_SRC := $(CORE)/daemon.c $(CORE)/session.c $(CORE)/offer.c $(CORE)/config.c lib/statefile.c \
	$(CORE)/convert.c lib/ctrlname.c $(BACKENDS_SRC)
test-daemon_LIBS := $(LIBS_DAEMON)
# The daemon and its sessions against a stand-in for the bridge: the fuzz target's shim sends
# their ioctl(), open(), mmap() and munmap() calls to tests/unit/test-reload.c.
test-reload_SRC := $(test-daemon_SRC)
test-reload_LIBS := $(LIBS_DAEMON)
test-reload_CFLAGS := -include tests/fuzz/fuzz-session-shim.h
# The offer without a backend instance: offer.c, with config.c for the messages (and what
# config.c links: the backend registry) and convert.c for what libv4lconvert makes.
test-offer_SRC := $(CORE)/offer.c $(CORE)/convert.c $(CORE)/config.c lib/ctrlname.c \
	$(BACKENDS_SRC)
test-offer_LIBS := -linih $(LIBS_BACKENDS)
# GLib's quark tables, which it drops on purpose, and LSan (tests/unit/lsan-glib.c).
test-lsan-glib_LIBS := $(shell pkg-config --libs glib-2.0 2>/dev/null)
# Every unit test links lsan-glib.c: GLib's quark tables that it drops on purpose (as it does on
# a machine with many GStreamer plugins) are not leaks; every other block still is.
UNIT_COMMON := tests/unit/lsan-glib.c
.SECONDEXPANSION:
$(BUILD)/asan/tests/test-%: tests/unit/test-%.c $$(test-%_SRC) $(UNIT_COMMON) tests/unit/lsan-glib.h $(HDRS) | pkgcheck
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_TEST) -O1 $(SAN) $(INCLUDES) -Itests/unit $(test-$*_CFLAGS) -o $@ $< \
		$(test-$*_SRC) $(UNIT_COMMON) \
		-lcmocka $(test-$*_LIBS)

# libFuzzer targets (clang): the config and Y4M parsers, a session's event handling.
# tests/harness/test-fuzz-parsers.sh runs each for a short while in `make check`.
FUZZ_TARGETS := fuzz-config fuzz-y4m fuzz-session
fuzz-config_SRC := $(CORE)/config.c lib/ctrlname.c $(BACKENDS_SRC)
fuzz-config_LIBS := -linih $(LIBS_BACKENDS)
fuzz-y4m_SRC := backend/file/y4m.c lib/text.c
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all
fuzz: $(addprefix $(BUILD)/fuzz/,$(FUZZ_TARGETS))
# The session's event handling: session.c built with the shim that sends its ioctl(), open(),
# mmap() and munmap() to the target's stand-in for the bridge (tests/fuzz/fuzz-session.c).
fuzz-session_SRC := $(CORE)/offer.c $(CORE)/config.c $(CORE)/convert.c lib/ctrlname.c \
	$(BACKENDS_SRC)
fuzz-session_LIBS := $(LIBS_DAEMON)
$(BUILD)/fuzz/fuzz-session: tests/fuzz/fuzz-session.c tests/fuzz/fuzz-session-shim.h \
		$(CORE)/session.c $(fuzz-session_SRC) $(HDRS)
	@mkdir -p $(@D)
	clang $(FUZZ_FLAGS) $(INCLUDES) -include tests/fuzz/fuzz-session-shim.h -c \
		-o $@-session.o $(CORE)/session.c
	clang $(FUZZ_FLAGS) $(INCLUDES) -o $@ $< $@-session.o $(fuzz-session_SRC) \
		$(fuzz-session_LIBS)
fuzz-parsers-nightly: fuzz
	VIACAM_PARSER_FUZZ_SECONDS=600 bash tests/harness/test-fuzz-parsers.sh $(BUILD)/fuzz-nightly
$(BUILD)/fuzz/%: tests/fuzz/%.c $$(%_SRC) $(HDRS)
	@mkdir -p $(@D)
	clang $(FUZZ_FLAGS) $(INCLUDES) -o $@ $< $($*_SRC) $($*_LIBS)

kmod:
	@[ -n "$(KDIR)" ] || { echo "no kernel build directory: run 'make kernels' or set KDIR" >&2; exit 1; }
	tools/build-kmod.sh $(KDIR)

# The module for every kernel of the test matrix (7.2's in the sid root, with sid's gcc).
# "+": the kbuild runs get the jobserver of make -jN (one module at a time, each in parallel;
# not in the sid root, whose make starts afresh).
kmod-all: kernels
	+@set -e; tools/vm/kernels.sh list | while read -r series kver dir; do \
		tools/build-kmod.sh "$$(tools/vm/kernels.sh kdir $$series)"; done

deps:
	scripts/deps.sh

kernels: deps
	tools/vm/kernels.sh fetch

unit: asan
	tests/run.sh --unit-only

# make check: what CI runs (.ci/run). Unit tests, host checks, the integration tests of user
# space on 6.12, the bridge's tests on 6.1, 6.12 and 7.2, and the locking and lifetime tests
# (blocking DQBUF, lifecycle, stress, fuzz, races) on 6.12-rt and the lockdep/KASAN kernel;
# each test's "ci-kernels" file says where it runs. make check-full runs every test on every kernel. Each phase prints its wall
# time ("== time ...").
PHASE := scripts/phase.sh
NPROC := $(shell nproc)
check:
	@$(PHASE) deps scripts/deps.sh
	@$(PHASE) kernels $(MAKE) --no-print-directory kernels
	@$(PHASE) build $(MAKE) --no-print-directory -j$(NPROC) WERROR=-Werror host asan fuzz kmod-all
	tests/run.sh

check-full:
	@$(PHASE) deps scripts/deps.sh
	@$(PHASE) kernels $(MAKE) --no-print-directory kernels
	@$(PHASE) build $(MAKE) --no-print-directory -j$(NPROC) WERROR=-Werror host asan fuzz kmod-all
	VIACAM_MATRIX=full tests/run.sh

check-quick: deps
	$(MAKE) kernels VIACAM_KERNELS="6.1 6.12"
	$(MAKE) WERROR=-Werror host asan fuzz kmod-all VIACAM_KERNELS="6.1 6.12"
	VIACAM_KERNELS="6.1 6.12" tests/run.sh

# Long runs for a nightly job (NIGHTLY_KERNELS, default the lockdep/KASAN kernel): TEST-09-fuzz
# for 600 s (VIACAM_FUZZ_SEED=N replays a seed) and TEST-08-stress with a 600 s ioctl phase.
# VIACAM_TEST_TIMEOUT replaces the tests' own timeout file (tests/run.sh still triples it on
# debug kernels).
NIGHTLY_KERNELS ?= 7.2-debug
fuzz-nightly: deps
	$(MAKE) kernels VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	$(MAKE) host kmod-all VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	VIACAM_KERNELS="$(NIGHTLY_KERNELS)" TEST_MATCH=TEST-09-fuzz VIACAM_FUZZ_SECONDS=600 \
		VIACAM_TEST_TIMEOUT=500 tests/run.sh

stress-nightly: deps
	$(MAKE) kernels VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	$(MAKE) host kmod-all VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	VIACAM_KERNELS="$(NIGHTLY_KERNELS)" TEST_MATCH=TEST-08-stress VIACAM_STRESS_SECONDS=600 \
		VIACAM_STRESS_CHURN=3000 VIACAM_STRESS_KILLS=300 \
		VIACAM_TEST_TIMEOUT=1000 tests/run.sh

# make run builds and fetches only what it uses: the packages of `deps.sh run`, the daemon,
# viacamctl and the log scanner, and (where the running kernel cannot load the module) one
# stock kernel (KERNEL, default 6.12) and the module for it; tools/run-demo.sh does the rest.
RUN_PROGS := $(addprefix $(BUILD)/host/,viacamd viacamctl logscan)
run:
	scripts/deps.sh run
	$(MAKE) WERROR=-Werror $(RUN_PROGS)
	KERNEL=$(KERNEL) tools/run-demo.sh

# make bench: viacam vs Debian's v4l2loopback (built here for each kernel, tools/bench/), side
# by side in one QEMU guest run per kernel; writes docs/benchmarks.md and docs/benchmarks.png.
BENCH_KERNELS ?= 6.1 6.12 7.2
bench: deps
	$(MAKE) kernels VIACAM_KERNELS="$(BENCH_KERNELS)"
	$(MAKE) host kmod-all bench-peer VIACAM_KERNELS="$(BENCH_KERNELS)"
	BENCH_KERNELS="$(BENCH_KERNELS)" tools/bench/run.sh

bench-peer:
	tools/bench/build-peer.sh $(BENCH_KERNELS)

vm-shell: deps
	$(MAKE) kernels
	$(MAKE) host kmod-all
	tools/vm/run.sh --kernel $(KERNEL) --shell

# --- make install / uninstall. The unit is made from conf/viacamd.service with the paths of
# this install; the config is installed only where none is (an admin's file is never replaced:
# the shipped one goes next to it as viacam.conf.dist). INSTALLED lists every file install
# writes, so uninstall removes exactly those.
INSTALL ?= install
MAN_PAGES := man/viacamd.8 man/viacamctl.1 man/viacam.conf.5
INSTALLED := $(SBINDIR)/viacamd $(BINDIR)/viacamctl $(UNITDIR)/viacamd.service \
	$(UDEVRULESDIR)/70-viacam.rules $(MODPROBEDIR)/viacam.conf $(MODULESLOADDIR)/viacam.conf \
	$(INCLUDEDIR)/linux/viacam.h $(SYSCONFDIR)/viacam/viacam.conf.dist \
	$(foreach m,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
install: install-user install-kmod
install-user: $(BUILD)/host/viacamd $(BUILD)/host/viacamctl
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(MODPROBEDIR) $(DESTDIR)$(MODULESLOADDIR) \
		$(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(SYSCONFDIR)/viacam \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0755 $(BUILD)/host/viacamd $(DESTDIR)$(SBINDIR)/viacamd
	$(INSTALL) -m 0755 $(BUILD)/host/viacamctl $(DESTDIR)$(BINDIR)/viacamctl
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
		-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' conf/viacamd.service \
		>$(DESTDIR)$(UNITDIR)/viacamd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/viacamd.service
	$(INSTALL) -m 0644 conf/70-viacam.rules $(DESTDIR)$(UDEVRULESDIR)/70-viacam.rules
	$(INSTALL) -m 0644 conf/modprobe.d-viacam.conf $(DESTDIR)$(MODPROBEDIR)/viacam.conf
	$(INSTALL) -m 0644 conf/modules-load.d-viacam.conf $(DESTDIR)$(MODULESLOADDIR)/viacam.conf
	$(INSTALL) -m 0644 kmod/uapi/linux/viacam.h $(DESTDIR)$(INCLUDEDIR)/linux/viacam.h
	$(INSTALL) -m 0644 conf/viacam.conf $(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf.dist
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf ]; then \
		echo "install: kept $(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf (the shipped one is viacam.conf.dist)"; \
	else \
		$(INSTALL) -m 0644 conf/viacam.conf $(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf; \
	fi
	set -e; for m in $(MAN_PAGES); do \
		$(INSTALL) -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m#man/}; done
# The module, through kbuild (INSTALL_MOD_PATH=DESTDIR; depmod runs when DESTDIR is empty).
install-kmod: kmod
	$(MAKE) --no-print-directory -C $(KDIR) M=$(CURDIR)/build/kmod/$$(sed -nE \
		's/^\#define UTS_RELEASE "(.*)"$$/\1/p' $(KDIR)/include/generated/utsrelease.h) \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR) DEPMOD=true) modules_install
uninstall:
	rm -f $(addprefix $(DESTDIR),$(filter-out $(SYSCONFDIR)/%,$(INSTALLED)))
	@c=$(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf; \
	if [ -e "$$c" ] && ! cmp -s "$$c" "$$c.dist"; then \
		echo "uninstall: kept $$c (changed since install)"; \
	else \
		rm -f "$$c"; \
	fi; \
	rm -f "$$c.dist"; rmdir $(DESTDIR)$(SYSCONFDIR)/viacam 2>/dev/null || true
	@echo "uninstall: the module stays (remove it with the kernel's modules, or dkms remove)"

clean:
	rm -rf $(BUILD)
