# viacam - top-level entry points. User space builds with meson (meson.build), the module with
# Kbuild (kmod/, tools/build-kmod.sh; DKMS in the package). This file only sets up meson's
# build directories with the options each job needs and calls ninja there.
#
#   make            the product: viacamd and viacamctl (build/host; nothing of the test lab)
#   make run        the main job: bridge + viacamd on conf/viacam.conf (in a QEMU guest here;
#                   fetches and builds only what that needs: one kernel, its module, viacamd)
#   make check      unit tests on the host, then integration tests in QEMU on each kernel of
#                   the matrix (6.1, 6.12, 6.12-rt, sid's 7.2, and the self-built 7.2-debug)
#                   (6.12-rt and 7.2-debug run the locking and lifetime tests)
#   make check-full   every integration test on every kernel of the matrix
#   make check-quick  only 6.1 and 6.12
#   make host       the product and the test lab (vctest, vcpix, vcfuzz, vcbench, vchostile,
#                   logscan; vccompat32, which needs gcc-multilib) in build/host
#   make asan       the same with ASan/UBSan and the unit tests, in build/asan (make unit runs
#                   them: meson test there is the same)
#   make fuzz       libFuzzer targets (clang) in build/fuzz
#   make kmod       the module for KDIR; make kmod-all for every kernel of the test matrix
#   make vm-shell   interactive guest (KERNEL=6.1|6.12|6.12-rt|7.2|7.2-debug) with viacam.ko
#   make kernels    fetch/re-use the Debian kernels of the test matrix (~/.cache/viacam; 7.2
#                   with the sid root it is built in, tools/vm/sid-root.sh)
#   make deps       install the Debian packages the project needs
#   make install    viacamd, viacamctl, man pages, unit, udev/modprobe files, the uapi header
#                   (meson install: directories from pkg-config), and the module (kbuild
#                   modules_install); PREFIX, DESTDIR, SYSCONFDIR. make install-user leaves out
#                   the module (DKMS builds it), make uninstall removes what install put there
#                   (a changed config stays)
#
# User CFLAGS, CPPFLAGS and LDFLAGS are honoured (packagers: dpkg-buildflags); a change of them
# (or of PREFIX, SYSCONFDIR, WERROR, MESON_OPTS) sets build/host up again. -Werror is on in the
# project's own builds and tests (make check, make run; WERROR=-Werror), not in a plain `make`
# or `make install`, so a newer compiler's new warning never stops an install. The test builds
# (build/asan, build/fuzz) are the project's own: always -Werror, never the user's flags.
#
# KDIR defaults to the running kernel's build directory, or the newest cached Debian
# headers when the running kernel has none (as on our build machines).

SHELL := /bin/bash
BUILD := build
KERNEL ?= 6.12
WERROR ?=
# Extra meson options for build/host (e.g. MESON_OPTS="-Dgst=disabled").
MESON_OPTS ?=

# Where make install puts things. SYSCONFDIR is /etc whatever the prefix: viacamd reads
# $(SYSCONFDIR)/viacam/viacam.conf by default (compiled in), the unit names that path. The
# unit, udev rules and modules-load.d directories come from pkg-config (systemd.pc, udev.pc).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
VERSION := $(shell sed -nE 's/^\#define VIACAM_VERSION "(.*)"$$/\1/p' lib/version.h)

KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; if [ -f $$d/Makefile ]; then echo $$d; \
	else tools/vm/kernels.sh kdir $(KERNEL) 2>/dev/null; fi)

# The build directories and their options. build/host: the user's flags and WERROR; the test
# lab is configured but only built when named (make host, make run); vccompat32 when gcc -m32
# links (make host insists on it). build/asan and build/fuzz: the project's own test builds.
HOST_OPTS := --prefix=$(PREFIX) --sysconfdir=$(SYSCONFDIR) -Dtestlab=true -Dtests=disabled \
	-Dwerror=$(if $(WERROR),true,false) $(MESON_OPTS)
ASAN_OPTS := -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Dwerror=true \
	-Dtestlab=true -Dcompat32=disabled -Dtests=enabled
FUZZ_OPTS := -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Dwerror=true -Dfuzz=true \
	-Dtests=disabled
LAB := logscan vctest vcpix vcfuzz vcbench vchostile vcwbench
FUZZ_TARGETS := fuzz-config fuzz-y4m fuzz-session

.PHONY: all product host asan fuzz fuzz-parsers-nightly kmod kmod-all deps kernels check \
	check-full check-quick unit run vm-shell clean fuzz-nightly stress-nightly bench \
	bench-worker bench-peer install install-user install-kmod uninstall check-build FORCE
.DELETE_ON_ERROR:

all: product

# meson-setup DIR, OPTIONS, ENV: set DIR up when it has none, or again (from scratch) when the
# environment's flags changed since (meson reads CFLAGS and the like only at setup); when
# only OPTIONS changed, `meson configure` applies them in place, so the programs other jobs
# may be running from DIR (a test run's guests) never vanish. DIR/.viacam-setup holds what it
# was set up with. A failed setup (a library missing) ends with the way out.
meson_setup = set -e; opts='$(strip $(2))'; envs='$(strip $(3))'; \
	have=$$(cat $(1)/.viacam-setup 2>/dev/null || true); \
	if [ ! -f $(1)/build.ninja ] || [ "$${have\#* | }" != "$$envs" ]; then \
		rm -rf $(1); \
		if ! env $(3) meson setup $(1) $(2) >$(1).setup.log 2>&1; then \
			grep -E -A3 'ERROR|Dependency.*NO' $(1).setup.log >&2 || cat $(1).setup.log >&2; \
			echo "viacam: meson setup of $(1) failed (log: $(1).setup.log); missing libraries: run 'make deps' (Debian: scripts/deps.sh)" >&2; \
			rm -rf $(1); exit 1; \
		fi; \
	elif [ "$${have%% | *}" != "$$opts" ]; then \
		meson configure $(1) $(2) >$(1).setup.log 2>&1 || { cat $(1).setup.log >&2; exit 1; }; \
	fi; \
	echo "$$opts | $$envs" >$(1)/.viacam-setup
USER_ENV := CFLAGS="$(CFLAGS)" CPPFLAGS="$(CPPFLAGS)" LDFLAGS="$(LDFLAGS)" CC="$(CC)"
# The test builds ignore the user's flags, as the Makefile's test builds always did.
TEST_ENV := -u CFLAGS -u CPPFLAGS -u LDFLAGS -u CXXFLAGS

$(BUILD)/host/build.ninja: FORCE
	@mkdir -p $(BUILD)
	@$(call meson_setup,$(BUILD)/host,$(HOST_OPTS),$(USER_ENV))
$(BUILD)/asan/build.ninja: FORCE
	@mkdir -p $(BUILD)
	@$(call meson_setup,$(BUILD)/asan,$(ASAN_OPTS),$(TEST_ENV))
$(BUILD)/fuzz/build.ninja: FORCE
	@mkdir -p $(BUILD)
	@$(call meson_setup,$(BUILD)/fuzz,$(FUZZ_OPTS),$(TEST_ENV) CC=clang)

# ninja runs NINJA_JOBS compile jobs (it knows no make jobserver): the build directories are
# built one after another (make check's build phase, check-build), each with all cores.
NPROC := $(shell nproc)
NINJA_JOBS ?= $(NPROC)
NINJA := ninja -j$(NINJA_JOBS)
product: $(BUILD)/host/build.ninja
	$(NINJA) -C $(BUILD)/host viacamd viacamctl
# Any one program of build/host by its path (make run, tests/harness/test-install.sh).
$(BUILD)/host/%: $(BUILD)/host/build.ninja FORCE
	$(NINJA) -C $(BUILD)/host $*
host: $(BUILD)/host/build.ninja
	@ninja -C $(BUILD)/host -t targets all | grep -q '^vccompat32:' || { \
		echo "viacam: vccompat32 needs gcc -m32 -static: install gcc-multilib (make deps)" >&2; \
		exit 1; }
	$(NINJA) -C $(BUILD)/host viacamd viacamctl $(LAB) vccompat32
asan: $(BUILD)/asan/build.ninja
	$(NINJA) -C $(BUILD)/asan
fuzz: $(BUILD)/fuzz/build.ninja
	$(NINJA) -C $(BUILD)/fuzz $(FUZZ_TARGETS)
fuzz-parsers-nightly: fuzz
	VIACAM_PARSER_FUZZ_SECONDS=600 bash tests/harness/test-fuzz-parsers.sh $(BUILD)/fuzz-nightly

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
check:
	@$(PHASE) deps scripts/deps.sh
	@$(PHASE) kernels $(MAKE) --no-print-directory kernels
	@$(PHASE) build $(MAKE) --no-print-directory check-build
	tests/run.sh

check-full:
	@$(PHASE) deps scripts/deps.sh
	@$(PHASE) kernels $(MAKE) --no-print-directory kernels
	@$(PHASE) build $(MAKE) --no-print-directory check-build
	VIACAM_MATRIX=full tests/run.sh

# What make check builds: the product and the test lab (-Werror), the ASan/UBSan builds and the
# unit tests, the fuzz targets, and the module for every kernel of the matrix (kbuild runs get
# make's jobserver).
check-build:
	$(MAKE) --no-print-directory WERROR=-Werror host
	$(MAKE) --no-print-directory asan
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory -j$(NPROC) kmod-all

check-quick: deps
	$(MAKE) kernels VIACAM_KERNELS="6.1 6.12"
	$(MAKE) check-build VIACAM_KERNELS="6.1 6.12"
	VIACAM_KERNELS="6.1 6.12" tests/run.sh

# Long runs for a nightly job (NIGHTLY_KERNELS, default the lockdep/KASAN kernel): TEST-09-fuzz
# for 600 s (VIACAM_FUZZ_SEED=N replays a seed) and TEST-08-stress with a 600 s ioctl phase.
# VIACAM_TEST_TIMEOUT replaces the tests' own timeout file (tests/run.sh still triples it on
# debug kernels).
NIGHTLY_KERNELS ?= 7.2-debug
fuzz-nightly: deps
	$(MAKE) kernels VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	$(MAKE) WERROR=-Werror host kmod-all VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	VIACAM_KERNELS="$(NIGHTLY_KERNELS)" TEST_MATCH=TEST-09-fuzz VIACAM_FUZZ_SECONDS=600 \
		VIACAM_TEST_TIMEOUT=500 tests/run.sh

stress-nightly: deps
	$(MAKE) kernels VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
	$(MAKE) WERROR=-Werror host kmod-all VIACAM_KERNELS="$(NIGHTLY_KERNELS)"
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
bench: deps bench-worker
	$(MAKE) kernels VIACAM_KERNELS="$(BENCH_KERNELS)"
	$(MAKE) WERROR=-Werror host kmod-all bench-peer VIACAM_KERNELS="$(BENCH_KERNELS)"
	BENCH_KERNELS="$(BENCH_KERNELS)" tools/bench/run.sh

# The cost of a sandboxed worker (docs/architecture.md, "Privilege separation"), on the host
# (as root: the worker drops to viacam or nobody): CPU and wall time per frame in the daemon's
# process and in a worker, and the worker-to-core hop. Results in build/bench/worker.txt.
BENCH_WORKER_FRAMES ?= 2000
bench-worker: $(BUILD)/host/vcwbench
	@mkdir -p $(BUILD)/bench
	$(BUILD)/host/vcwbench $(BENCH_WORKER_FRAMES) | tee $(BUILD)/bench/worker.txt

bench-peer:
	tools/bench/build-peer.sh $(BENCH_KERNELS)

vm-shell: deps
	$(MAKE) kernels
	$(MAKE) WERROR=-Werror host kmod-all
	tools/vm/run.sh --kernel $(KERNEL) --shell

# --- make install / uninstall: meson install of build/host (directories from pkg-config:
# systemd.pc, udev.pc; meson.build). The config is installed only where none is (an admin's
# file is never replaced: the shipped one goes next to it as viacam.conf.dist,
# conf/install-config.sh). Uninstall removes what meson's install log lists, and the config
# unless it was changed.
install: install-user install-kmod
install-user: $(BUILD)/host/viacamd $(BUILD)/host/viacamctl
	@c=$(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf; [ ! -e "$$c" ] || \
		echo "install: kept $$c (the shipped one is viacam.conf.dist)"
	DESTDIR="$(DESTDIR)" meson install --no-rebuild -C $(BUILD)/host
# The module, through kbuild (INSTALL_MOD_PATH=DESTDIR; depmod runs when DESTDIR is empty).
install-kmod: kmod
	$(MAKE) --no-print-directory -C $(KDIR) M=$(CURDIR)/build/kmod/$$(sed -nE \
		's/^\#define UTS_RELEASE "(.*)"$$/\1/p' $(KDIR)/include/generated/utsrelease.h) \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR) DEPMOD=true) modules_install
uninstall: $(BUILD)/host/build.ninja
	@c=$(DESTDIR)$(SYSCONFDIR)/viacam/viacam.conf; \
	if [ -e "$$c" ] && ! cmp -s "$$c" "$$c.dist"; then \
		echo "uninstall: kept $$c (changed since install)"; \
	else \
		rm -f "$$c"; \
	fi
	@set -e; log=$(BUILD)/host/meson-logs/install-log.txt; \
	[ -f $$log ] || { echo "uninstall: no $$log: nothing installed from $(BUILD)/host" >&2; exit 1; }; \
	grep -v '^#' $$log | while read -r f; do [ -d "$$f" ] || rm -f "$$f"; done
	@rmdir $(DESTDIR)$(SYSCONFDIR)/viacam 2>/dev/null || true
	@echo "uninstall: the module stays (remove it with the kernel's modules, or dkms remove)"

clean:
	rm -rf $(BUILD)
