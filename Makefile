# graphshim: turn repeated CUDA launch sequences into CUDA graphs, via LD_PRELOAD.
#
# Variables:
#   CC         C compiler (default cc)
#   CUDA_HOME  CUDA toolkit, for its headers (default /usr/local/cuda)
#   PREFIX     install prefix (default /usr/local)
#   BUILD      build directory (default build)
#   WHEEL_PYTHON  the Python whose build, setuptools and wheel packages build the
#              wheel (default /usr/bin/python3, where apt installs them)
#   V          V=1 prints every command and every test's output; otherwise a
#              compile is one short line ("CC file"), none under the test
#              targets, and each test suite one line (its output kept in
#              $(BUILD)/tests/log/, printed whole where it fails)
#
# Targets:
#   all        build/libgraphshim.so, the graphshim launcher, graphshim-report and
#              graphshim-gate
#   test       unit and integration tests over the fake driver (no GPU needed)
#   mutants    planted bugs, one at a time, each caught by the tests (tests/mutants/)
#   demo       a sample under the shim with its report (fake driver without a GPU)
#   gpu-test   samples with and without the shim on a GPU, compared bit for bit
#   gpu-jobs   the multi-GPU samples, no rank stranded, the jobs' bench rows
#              (scripts/gpu-jobs.sh; 2 GPUs or more)
#   bench      eager vs graphshim vs hand-written graphs, on a GPU
#   bench-apps real applications (bench/apps/), eager vs graphshim in one process;
#              part of bench unless APPS=0
#   bench-steps   loops synchronizing every 1, 10, 100 steps, and a JAX jit loop
#              whose steps end in event records (bench/steps.sh), on a GPU
#   bench-decode  an LLM engine's decode loop (samples/decode_loop.cu): eager,
#              graphshim and the engine's own graphs, on a GPU (bench/decode.sh)
#   bench-xstream  steps across two streams (bench/xstream.sh): the capture rules
#              on the GPU's driver beside the fake's, samples two_branch and
#              copy_overlap with and without the shim, and eager / graphshim / a
#              hand graph of the step; xstream-probe: the rules alone;
#              xstream-probe-fake: the probe against the fake driver, no GPU
#              (its "fake:" column checked against the fake)
#   profile    $(BUILD)/prof/libgraphshim.so: the engine's phases timed, a table at
#              exit (policy/base/prof.h); bench/profile.sh runs it on bench workloads
#   coverage   the lines and branches of policy/, interpose/ and driver/ that
#              generated programs reach (a fuzz run over the test build with
#              gcov's counters, its assertions and rule switches compiled away
#              as in the library users run), and the hooks.def rows they call
#              (scripts/coverage.sh; COVERAGE_SECONDS, default 600;
#              COVERAGE_INJECT injected faults a seed, default 3)
#   test-lib   $(BUILD)/test/libgraphshim.so: the test build, with the switches
#              that exist only to prove graphshim (GRAPHSHIM_TEST_FAULT)
#   docs       regenerate docs/knobs.md from the knob table, docs/names.md from
#              the lists of call classes, bails and rules
#   wheel      dist/graphshim-VERSION-py3-none-PLATFORM.whl: the library, the
#              launcher, the report tool and the graphshim Python module
#   wheel-test the wheel installed into a new virtual environment and used there
#              (tests/wheel/check.sh)
#   install, clean

CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden
CPPFLAGS += -I$(CUDA_HOME)/include -Iinclude -I$(BUILD)/gen -Idriver -Iinterpose
# The profile build's switch, set only by the profile target on the sub-make's
# command line: the assignment keeps it out of the environment (PROFILE=yes make
# once turned the timers on in the normal build).
GS_PROFILE_BUILD :=
CPPFLAGS += $(if $(GS_PROFILE_BUILD),-DGS_PROFILE)
# The test build's switch, the same way.
GS_TEST_BUILD :=
COMMA := ,
CPPFLAGS += $(if $(GS_TEST_BUILD),-DGS_TEST)
# ... and graphshim's own allocations through interpose/test_alloc.c, which
# fails those GRAPHSHIM_TEST_FAIL_ALLOC names.
LDLIBS   += $(if $(GS_TEST_BUILD),-Wl$(COMMA)--wrap=malloc$(COMMA)--wrap=calloc$(COMMA)--wrap=realloc$(COMMA)--wrap=aligned_alloc)
LDLIBS   += -ldl -lpthread
# The coverage build's switch (make coverage): gcov's counters in every object,
# updated atomically, since the engine's threads share them.
GS_COVERAGE_BUILD :=
CFLAGS   += $(if $(GS_COVERAGE_BUILD),--coverage -fprofile-update=atomic -O0 -DGS_COVERAGE)
LDLIBS   += $(if $(GS_COVERAGE_BUILD),--coverage)

# Quiet commands unless V=1.  SAY prints a short line per step; under the test
# targets (GS_QUIET, passed down to the profile build's sub-make) not even that.
GS_QUIET ?= $(if $(filter test %-test fuzz,$(MAKECMDGOALS)),1)
ifeq ($(V),1)
Q   :=
SAY := @:
else
Q   := @
SAY := $(if $(GS_QUIET),@:,@printf '  %-4s %s\n')
endif

LIB      := $(BUILD)/libgraphshim.so
LIB_SRC  := $(wildcard driver/*.c) $(wildcard interpose/*.c) $(wildcard policy/*/*.c)
LIB_SRC  := $(filter-out policy/base/knobs_doc.c,$(LIB_SRC))
LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/interpose/trampoline.o
GEN      := $(BUILD)/gen/driver_names.def

# The version's one source (policy/base/version.c checks the public header
# against it): 0.1.0, and as a number major * 10000 + minor * 100 + patch.
GS_VERSION        := $(shell cat VERSION)
GS_VERSION_NUMBER := $(shell echo $(GS_VERSION) | awk -F. '{ print $$1 * 10000 + $$2 * 100 + $$3 }')

.PHONY: all test unit-test integration-test demo coverage gpu-test gpu-jobs sanitize bench bench-apps bench-steps bench-decode bench-xstream xstream-probe xstream-probe-fake shim-cost profile test-lib docs \
        install clean wheel wheel-test

all: $(LIB) $(BUILD)/graphshim $(BUILD)/graphshim-report $(BUILD)/graphshim-gate

# Without the toolkit's headers, one line on what to install, not make's "No
# rule to make target".
$(CUDA_HOME)/include/cuda.h:
	@echo "make: graphshim is built against the CUDA driver API's header, and $@ is missing:" \
	    "install the CUDA toolkit 13.0 or newer (or only its driver headers, the package cuda-driver-dev-13-0" \
	    "of NVIDIA's repository), or name its folder: make CUDA_HOME=/usr/local/cuda-13.0" >&2; exit 2

# The driver entry points of cuda.h that hooks.def does not list: each gets an
# exported trampoline, so programs linked with -lcuda are guarded everywhere.
$(GEN): $(CUDA_HOME)/include/cuda.h driver/hooks.def
	@mkdir -p $(@D)
	$(SAY) GEN $@
	$(Q)printf '#define __CUDA_API_VERSION_INTERNAL 1\n#include <cuda.h>\n' \
	  | $(CC) -E -I$(CUDA_HOME)/include - | tr '\n' ' ' \
	  | grep -oE 'CUresult +cu[A-Za-z0-9_]+ *\(' | sed -E 's/CUresult +(cu[A-Za-z0-9_]+).*/\1/' \
	  | sort -u > $@.all
	$(Q)printf '#define GS_HOOK(n, a, ...) GSNAME a\n#define GS_HAND(n, a, ...) GSNAME a\n#define GS_PASS(n, a, ...) GSNAME a\n#include "hooks.def"\n' \
	  | $(CC) -E -P -Idriver - | grep -oE 'GSNAME +[A-Za-z0-9_]+' | sed 's/GSNAME *//' | sort -u > $@.hooked
	$(Q)comm -23 $@.all $@.hooked | sed 's/.*/GS_DRIVER(&)/' > $@
	$(Q)rm -f $@.all $@.hooked

$(BUILD)/obj/%.o: %.c $(GEN) $(wildcard driver/*.h interpose/*.h policy/*/*.h include/*.h) driver/hooks.def
	@mkdir -p $(@D)
	$(SAY) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/policy/base/version.o: CPPFLAGS += -DGS_VERSION_TEXT='"$(GS_VERSION)"' -DGS_VERSION_NUMBER=$(GS_VERSION_NUMBER)
$(BUILD)/obj/policy/base/version.o: VERSION

$(BUILD)/obj/interpose/trampoline.o: interpose/trampoline.S interpose/nslots.h driver/hooks.def $(GEN)
	@mkdir -p $(@D)
	$(SAY) AS $<
	$(Q)$(CC) $(CPPFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ) interpose/graphshim.map
	$(SAY) LD $@
	$(Q)$(CC) -shared -o $@ $(LIB_OBJ) -Wl,--version-script=interpose/graphshim.map -Wl,-z,defs $(LDLIBS)

$(BUILD)/graphshim: scripts/graphshim VERSION
	@mkdir -p $(@D)
	$(Q)sed 's/@VERSION@/$(GS_VERSION)/' $< > $@.tmp && chmod 755 $@.tmp && mv $@.tmp $@

# `graphshim report FILE...`: the launcher execs it from its own directory or
# from ../lib/graphshim/.
$(BUILD)/graphshim-report: scripts/report.c scripts/report_svg.c scripts/report_strip.c scripts/report.h scripts/report_svg.h policy/base/check.c policy/base/check.h
	@mkdir -p $(@D)
	$(SAY) CC $<
	$(Q)$(CC) $(CFLAGS) -o $@ $< scripts/report_svg.c scripts/report_strip.c policy/base/check.c

# `graphshim run` under GRAPHSHIM_CHECK: the launcher execs it, to judge the
# whole run once it ends (scripts/gate.c).
$(BUILD)/graphshim-gate: scripts/gate.c policy/base/check.c policy/base/check.h
	@mkdir -p $(@D)
	$(SAY) CC $<
	$(Q)$(CC) $(CFLAGS) -o $@ $< policy/base/check.c

# --- Documentation generated from tables ----------------------------------
$(BUILD)/knobs_doc: policy/base/knobs_doc.c policy/base/config.c policy/base/log.c policy/base/config.h \
                   policy/base/names.h driver/driver.h
	@mkdir -p $(@D)
	$(SAY) CC policy/base/knobs_doc.c
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ policy/base/knobs_doc.c policy/base/config.c policy/base/log.c

docs: $(BUILD)/knobs_doc
	$(BUILD)/knobs_doc > docs/knobs.md
	$(BUILD)/knobs_doc names > docs/names.md

# --- Tests over the fake driver ---------------------------------------------
-include tests/fakecuda/fakecuda.mk
-include tests/tests.mk

# --- On a GPU machine ---------------------------------------------------------
demo: all
	bash scripts/demo.sh

gpu-test: all $(BUILD)/test/libgraphshim.so $(BUILD)/test/graphshim
	@sh scripts/need-gpu.sh gpu-test
	bash samples/gpu-test.sh

# the multi-GPU samples, no rank stranded, and the jobs' bench rows (2+ GPUs)
gpu-jobs: all $(BUILD)/test/libgraphshim.so
	@sh scripts/need-gpu.sh gpu-jobs
	bash scripts/gpu-jobs.sh

# compute-sanitizer memcheck over the samples, without and with the shim
sanitize: all
	@sh scripts/need-gpu.sh sanitize
	bash samples/sanitize.sh

bench: all
	@sh scripts/need-gpu.sh bench
	bash bench/bench.sh
	@if [ "$(APPS)" != 0 ]; then bash bench/apps.sh; fi

bench-apps: all
	@sh scripts/need-gpu.sh bench-apps
	bash bench/apps.sh

# loops that synchronize every 1, 10 and 100 steps, and a JAX jit loop whose
# steps end in event records and a host function (bench/steps.sh; issue 57)
bench-steps: all
	@sh scripts/need-gpu.sh bench-steps
	bash bench/steps.sh

# an LLM engine's decode loop: eager, graphshim and the engine's own graphs
# (samples/decode_loop.cu), and its prompt step (bench/decode.sh)
bench-decode: all
	@sh scripts/need-gpu.sh bench-decode
	bash bench/decode.sh

# Steps across two streams (a fork and a join by events): the capture rules on
# this driver beside the fake's (bench/xstream_probe.cu), samples two_branch and
# copy_overlap with and without graphshim, and eager / graphshim / a hand graph
# of the step (bench/xstream.sh; logs in OUT, default $(BUILD)/xstream).
bench-xstream: all
	@sh scripts/need-gpu.sh bench-xstream
	bash bench/xstream.sh

# The probe alone (its log: OUT/probe.log).
xstream-probe:
	@sh scripts/need-gpu.sh xstream-probe
	SAMPLES=0 BENCH=0 bash bench/xstream.sh

# The probe built with the host compiler and run against the fake driver: fails
# where its "fake:" column says what the fake does not (bench/xstream_probe_fake.sh).
xstream-probe-fake: $(FAKECUDA_LIB)
	BUILD=$(BUILD) bash bench/xstream_probe_fake.sh

# Node updates, host against device (issue 40): node_update_cost (what a host
# node set costs) and device_update_cost (N host sets against device-updatable
# nodes set by one kernel), built with nvcc for NODE_UPDATE_ARCH and run.
NVCC             ?= $(CUDA_HOME)/bin/nvcc
NODE_UPDATE_ARCH ?= -arch=sm_90
.PHONY: bench-node-update
$(BUILD)/bench/node_update_cost: bench/node_update_cost.cu bench/check.cuh
	@mkdir -p $(@D)
	$(SAY) NVCC bench/node_update_cost.cu
	$(Q)$(NVCC) -O2 $(NODE_UPDATE_ARCH) -o $@ bench/node_update_cost.cu

$(BUILD)/bench/device_update_cost: bench/device_update_cost.cu bench/check.cuh
	@mkdir -p $(@D)
	$(SAY) NVCC bench/device_update_cost.cu
	$(Q)$(NVCC) -O2 $(NODE_UPDATE_ARCH) -rdc=true -o $@ bench/device_update_cost.cu -lcudadevrt

# The GPU is checked before nvcc runs: a machine without one stops in one line.
bench-node-update:
	@sh scripts/need-gpu.sh bench-node-update
	@$(MAKE) --no-print-directory $(BUILD)/bench/node_update_cost $(BUILD)/bench/device_update_cost
	$(BUILD)/bench/node_update_cost
	$(BUILD)/bench/device_update_cost

# The library with the engine's phase timers (a separate build: the normal one
# times nothing).
$(BUILD)/prof/libgraphshim.so: $(LIB_SRC) $(wildcard driver/*.h interpose/*.h policy/*/*.h include/*.h) \
                               interpose/trampoline.S driver/hooks.def interpose/graphshim.map
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/prof GS_PROFILE_BUILD=1 GS_QUIET=$(GS_QUIET) $@

profile: $(BUILD)/prof/libgraphshim.so

# The library with the test switches (a separate build: the one users run has none).
$(BUILD)/test/libgraphshim.so: $(LIB_SRC) $(wildcard driver/*.h interpose/*.h policy/*/*.h include/*.h) \
                               interpose/trampoline.S driver/hooks.def interpose/graphshim.map
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/test GS_TEST_BUILD=1 GS_QUIET=$(GS_QUIET) $@

# The launcher beside the test build preloads the test build (it finds the
# library in its own directory): gpu-test's runs through the launcher, with
# GRAPHSHIM_LIB=$(BUILD)/test/libgraphshim.so.
$(BUILD)/test/graphshim: $(BUILD)/graphshim
	@mkdir -p $(@D)
	$(Q)cp $< $@

test-lib: $(BUILD)/test/libgraphshim.so $(BUILD)/test/graphshim

# Coverage by generated programs alone: its own build tree, $(BUILD)/cov.
COVERAGE_SECONDS ?= 600
.PHONY: coverage
coverage: | criterion-check
	BUILD=$(BUILD)/cov SECONDS_BUDGET=$(COVERAGE_SECONDS) bash scripts/coverage.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/graphshim $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/graphshim $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(BUILD)/graphshim-report $(BUILD)/graphshim-gate $(DESTDIR)$(PREFIX)/lib/graphshim/
	install -m 644 include/graphshim.h $(DESTDIR)$(PREFIX)/include/

clean:
	rm -rf $(BUILD)

# --- The Python wheel ---------------------------------------------------------
# Built from a copy of python/ in $(BUILD)/wheel that also holds the binaries and
# _version.py.  The platform tag is the oldest manylinux whose glibc has every
# symbol version the binaries need (scripts/wheel-platform.sh).
WHEEL_PYTHON ?= /usr/bin/python3
WHEEL_STAGE  := $(BUILD)/wheel
WHEEL_BINS   := $(LIB) $(BUILD)/graphshim $(BUILD)/graphshim-report $(BUILD)/graphshim-gate

wheel: $(WHEEL_BINS) python/pyproject.toml $(wildcard python/graphshim/*.py)
	@$(WHEEL_PYTHON) -c 'import build, setuptools, wheel' 2>/dev/null || \
	    { echo "make wheel needs build, setuptools and wheel for $(WHEEL_PYTHON): apt-get install -y python3-build python3-setuptools python3-wheel"; exit 1; }
	$(Q)rm -rf $(WHEEL_STAGE) dist/graphshim-*.whl && mkdir -p $(WHEEL_STAGE)/graphshim dist
	$(Q)cp python/pyproject.toml $(WHEEL_STAGE)/
	$(Q)cp python/graphshim/*.py $(WHEEL_BINS) $(WHEEL_STAGE)/graphshim/
	$(Q)echo '__version__ = "$(GS_VERSION)"' > $(WHEEL_STAGE)/graphshim/_version.py
	$(Q)plat=$$(sh scripts/wheel-platform.sh $(LIB) $(BUILD)/graphshim-report $(BUILD)/graphshim-gate) && \
	    cd $(WHEEL_STAGE) && $(WHEEL_PYTHON) -m build --wheel --no-isolation --outdir $(abspath dist) \
	        -C--build-option=--plat-name=$$plat $(if $(filter 1,$(V)),,>build.log 2>&1 || { cat build.log; exit 1; })
	@ls dist/graphshim-$(GS_VERSION)-*.whl

wheel-test: wheel $(FAKECUDA_LIB) $(BUILD)/tests/guardprog
	$(call gs_suite,wheel,s/^wheel: \([0-9]*\) passed.*/\1 checks/p,BUILD=$(BUILD) WHEEL_PYTHON=$(WHEEL_PYTHON) bash tests/wheel/check.sh)

# --- Host cost of the shim itself, with the driver stubbed out (no GPU needed)
$(BUILD)/bench/shim_cost: bench/shim_cost.c bench/mix64.h $(LIB_OBJ)
	@mkdir -p $(@D)
	$(SAY) CC bench/shim_cost.c
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/shim_cost.c $(LIB_OBJ) $(LDLIBS)

shim-cost: $(BUILD)/bench/shim_cost
	$(BUILD)/bench/shim_cost
