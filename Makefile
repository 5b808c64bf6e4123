# viacam - top-level build.
#
#   make            build the kernel module (against KDIR), the daemon and the tools
#   make run        the main job: bridge + viacamd on conf/viacam.conf (in a QEMU guest here)
#   make check      unit tests on the host, then integration tests in QEMU on each kernel of
#                   the matrix (6.1, 6.12, 6.12-rt, and the self-built 6.1-debug)
#   make check-quick  the same without 6.12-rt and the debug kernel
#   make vm-shell   interactive guest (KERNEL=6.1|6.12) with viacam.ko loaded
#   make kernels    fetch/re-use the Debian kernels of the test matrix (~/.cache/viacam)
#   make deps       install the Debian packages the project needs
#
# KDIR defaults to the running kernel's build directory, or the newest cached Debian
# headers when the running kernel has none (as on our build machines).

SHELL := /bin/bash
CC ?= gcc
BUILD := build
KERNEL ?= 6.12

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -g
CFLAGS_OPT := -O2
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
INCLUDES := -Itools/common -Ikmod/uapi
LIBS_DAEMON := $(shell pkg-config --libs libsystemd 2>/dev/null)

KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; if [ -f $$d/Makefile ]; then echo $$d; \
	else tools/vm/kernels.sh kdir $(KERNEL) 2>/dev/null; fi)

HDRS := $(wildcard tools/common/*.h backend/*.h kmod/uapi/*.h)
PROGS := logscan viacamd viacamctl vctest
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test-*.c))

.PHONY: all host asan kmod kmod-all deps kernels check check-quick unit run vm-shell clean
.DELETE_ON_ERROR:

all: host kmod

host: $(addprefix $(BUILD)/host/,$(PROGS))
asan: $(addprefix $(BUILD)/asan/,$(PROGS)) $(addprefix $(BUILD)/asan/tests/,$(UNIT_TESTS))

# prog NAME, SOURCES, LIBS: an optimized build in build/host and an ASan/UBSan one in build/asan.
define prog
$(BUILD)/host/$(1): $(2) $(HDRS)
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS_OPT) $(INCLUDES) -o $$@ $(2) $(3)
$(BUILD)/asan/$(1): $(2) $(HDRS)
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS_BASE) -O1 $(SAN) $(INCLUDES) -o $$@ $(2) $(3)
endef
$(eval $(call prog,logscan,tools/vm/logscan-main.c tools/common/logscan.c,))
$(eval $(call prog,viacamd,backend/viacamd.c,$(LIBS_DAEMON)))
$(eval $(call prog,viacamctl,tools/viacamctl.c,))
$(eval $(call prog,vctest,tests/guest/vctest.c,-lpthread))

# Unit tests (cmocka), always with the sanitizers. Each links the sources it tests
# (test-NAME_SRC).
test-logscan_SRC := tools/common/logscan.c
.SECONDEXPANSION:
$(BUILD)/asan/tests/test-%: tests/unit/test-%.c $$(test-%_SRC) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 $(SAN) $(INCLUDES) -o $@ $< $(test-$*_SRC) -lcmocka

kmod:
	@[ -n "$(KDIR)" ] || { echo "no kernel build directory: run 'make kernels' or set KDIR" >&2; exit 1; }
	tools/build-kmod.sh $(KDIR)

# The module for every kernel of the test matrix.
kmod-all: kernels
	@set -e; tools/vm/kernels.sh list | while read -r series kver dir; do \
		tools/build-kmod.sh "$$(tools/vm/kernels.sh kdir $$series)"; done

deps:
	scripts/deps.sh

kernels: deps
	tools/vm/kernels.sh fetch

unit: asan
	tests/run.sh --unit-only

check: deps
	$(MAKE) kernels
	$(MAKE) host asan kmod-all
	tests/run.sh

check-quick: deps
	$(MAKE) kernels VIACAM_KERNELS="6.1 6.12"
	$(MAKE) host asan kmod-all VIACAM_KERNELS="6.1 6.12"
	VIACAM_KERNELS="6.1 6.12" tests/run.sh

run: deps
	$(MAKE) kernels
	$(MAKE) host kmod-all
	tools/run-demo.sh

vm-shell: deps
	$(MAKE) kernels
	$(MAKE) host kmod-all
	tools/vm/run.sh --kernel $(KERNEL) --shell

clean:
	rm -rf $(BUILD)
