# tests.mk: the test suite over the fake driver (included by the Makefile).
#
#   make test              everything below; needs libcriterion-dev
#   make unit-test         policy and interposer units, real driver swapped out
#   make integration-test  driver-API programs over tests/fakecuda, with and
#                          without the shim preloaded; then, apart (their many
#                          processes would load the timing tests), the faults
#                          injected into graphshim's own driver calls
#   make floors-test       the house as internals.md draws it (scripts/floors.sh),
#                          and that floors.sh finds faults (tests/floors/check.sh)
#   make fuzz-test         the schedule check (tests/fuzz/sched_check.sh), then
#                          differential fuzzing for FUZZ_TEST_SECONDS (CI budget)
#   make load-test         the engine and integration suites LOAD_RUNS (20) times
#                          in a row with every core busy (tests/load.sh)
#   make mutants           the suites' power: each planted bug of tests/mutants/list
#                          in a scratch copy, one at a time, must be caught
#                          (MUTANTS=id,id... for some; tests/mutants/README.md)
#   make fuzz              differential fuzzing for FUZZ_SECONDS (default 60),
#                          or of one seed: make fuzz SEED=n (tests/fuzz/README.md);
#                          FUZZ_START: first seed, FUZZ_JOBS: parallel workers,
#                          FUZZ_FREE=1: threads run free over the host's clocks
#
# Each suite prints one line of what passed, and make test a last line that sums
# them up; a suite's output goes to $(BUILD)/tests/log/SUITE.log and is printed
# whole where the suite fails.  V=1 prints everything as it comes.

TEST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DBUILD_DIR=\"$(abspath $(BUILD))\"
UNIT_SRC    := $(wildcard tests/unit/*.c)
TEST_LOG    := $(BUILD)/tests/log
TEST_SUITES := unit fakecuda integration faults floors fuzz cli

# $(call gs_suite,NAME,SED,COMMAND): runs COMMAND (no comma in it), its output in
# $(TEST_LOG)/NAME.log (shown as it comes with V=1), with TMPDIR a fresh folder
# of its own (mktemp -d in TMPDIR or /tmp: run.c's paths under it stay short),
# removed after it: two make test at once share no temporary file.  The sed
# script SED picks
# from that output what passed ("28 tests"), which goes to $(TEST_LOG)/NAME.passed
# and to one line ("unit: 28 tests passed"); a suite that fails has its whole output printed, then a line
# that names it, and stops make.
gs_suite = @mkdir -p $(TEST_LOG); log=$(TEST_LOG)/$(1).log; rm -f $(TEST_LOG)/$(1).passed; \
    tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/gs-$(1).XXXXXX") || exit 1; \
    if [ "$(V)" = 1 ]; then { TMPDIR=$$tmp $(3); echo $$? >$$log.rc; } 2>&1 | tee $$log; rc=$$(cat $$log.rc); rm -f $$log.rc; \
    else TMPDIR=$$tmp $(3) >$$log 2>&1; rc=$$?; fi; rm -rf $$tmp; \
    if [ "$$rc" != 0 ]; then [ "$(V)" = 1 ] || cat $$log; \
        echo "make test: $(1) FAILED (exit status $$rc; its whole output: $$log)"; exit 1; fi; \
    n=$$(sed -n '$(2)' $$log | tail -n 1); echo "$(1)$${n:+ $$n}" >$(TEST_LOG)/$(1).passed; \
    echo "  $(1): $${n:+$$n }passed"
CRITERION_PASSED := s/^\[====\] Synthesis: Tested: [0-9]* | Passing: \([0-9]*\).*/\1 tests/p
INTEG_SRC   := tests/integration/test_integration.c tests/integration/test_engine.c tests/integration/test_nvtx.c tests/integration/test_faults.c \
               tests/integration/test_report_tool.c tests/integration/test_ranks.c tests/integration/test_segments.c \
               tests/integration/test_cost.c tests/integration/test_checked.c tests/integration/test_steps.c \
               tests/integration/test_period.c tests/integration/test_xstream.c \
               tests/integration/run.c

# One clear line, not a compiler error, where Criterion is missing.
criterion-check:
	@echo '#include <criterion/criterion.h>' | $(CC) -E -x c - >/dev/null 2>&1 || \
	    { echo "make test needs Criterion (criterion/criterion.h not found): apt-get install -y libcriterion-dev"; exit 1; }

$(BUILD)/tests/unit: $(UNIT_SRC) $(LIB_OBJ) | criterion-check
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -o $@ $(UNIT_SRC) $(LIB_OBJ) -lcriterion $(LDLIBS)

$(BUILD)/tests/integration: $(INTEG_SRC) tests/integration/run.h | criterion-check
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $(INTEG_SRC) -lcriterion -ldl

$(BUILD)/tests/drvprog: tests/integration/drvprog.c tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -ldl

GUARDPROG_SRC := $(wildcard tests/integration/guardprog/*.c)
$(BUILD)/tests/guardprog: $(GUARDPROG_SRC) tests/integration/guardprog/guardprog.h tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $(GUARDPROG_SRC) -L$(BUILD)/fakecuda -lcuda -lpthread -ldl

$(BUILD)/tests/stepprog: tests/integration/stepprog.c tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -ldl

$(BUILD)/tests/periodprog: tests/integration/periodprog.c tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -ldl

$(BUILD)/tests/xsprog: tests/integration/xsprog.c tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -ldl

$(BUILD)/tests/dlopen_tool.so: tests/integration/dlopen_tool.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl

# An NVTX tool that counts the ranges it sees (tests/nvtxprobe/nvtxprobe.c).
$(BUILD)/tests/nvtxprobe.so: tests/nvtxprobe/nvtxprobe.c
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl -lpthread

unit-test: $(BUILD)/tests/unit $(BUILD)/knobs_doc
	$(call gs_suite,unit,$(CRITERION_PASSED),$(BUILD)/tests/unit)

integration-test: $(BUILD)/tests/integration $(BUILD)/tests/drvprog $(BUILD)/tests/guardprog $(BUILD)/tests/stepprog \
                  $(BUILD)/tests/periodprog $(BUILD)/tests/xsprog $(BUILD)/tests/fuzzprog $(BUILD)/tests/dlopen_tool.so \
                  $(BUILD)/tests/nvtxprobe.so $(BUILD)/graphshim $(BUILD)/graphshim-report $(BUILD)/graphshim-gate \
                  $(LIB) $(BUILD)/prof/libgraphshim.so $(BUILD)/test/libgraphshim.so $(FAKECUDA_LIB)
	$(call gs_suite,integration,$(CRITERION_PASSED),$(BUILD)/tests/integration --filter '!(faults)/*')
	$(call gs_suite,faults,$(CRITERION_PASSED),$(BUILD)/tests/integration --filter 'faults/*')

FUZZ_SECONDS      ?= 60
FUZZ_TEST_SECONDS ?= 45
FUZZ_START        ?= 1
FUZZ_JOBS         ?= $(shell nproc)
FUZZ_THREADS      ?= 8
FUZZ_DEPS         := $(BUILD)/tests/fuzzprog $(BUILD)/tests/fuzzrun $(LIB) $(BUILD)/test/libgraphshim.so $(FAKECUDA_LIB)

FUZZPROG_SRC := tests/fuzz/fuzzprog.c tests/fuzz/fuzz_gen.c tests/fuzz/fuzz_ops.c tests/fuzz/fuzz_xops.c tests/fuzz/fuzz_sched.c tests/fuzz/fuzz_loop.c tests/fuzz/fuzz_period.c tests/fuzz/fuzz_end.c tests/fuzz/fuzz_xs.c tests/fuzz/fuzz_sites.c
$(BUILD)/tests/fuzzprog: $(FUZZPROG_SRC) tests/fuzz/fuzzprog.h tests/fakecuda/fakecuda.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $(FUZZPROG_SRC) -L$(BUILD)/fakecuda -lcuda -lpthread -ldl

FUZZRUN_SRC := tests/fuzz/fuzzrun.c tests/fuzz/fuzz_settings.c tests/fuzz/fuzz_xinject.c tests/fuzz/fuzz_oracle.c tests/integration/run.c
$(BUILD)/tests/fuzzrun: $(FUZZRUN_SRC) tests/fuzz/fuzz_oracle.h tests/fuzz/fuzzrun.h tests/integration/run.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $(FUZZRUN_SRC) -lpthread

.PHONY: fuzz fuzz-test floors-test criterion-check mutants load-test
LOAD_RUNS ?= 20
load-test: integration-test
	bash tests/load.sh $(LOAD_RUNS)
mutants: | criterion-check
	bash tests/mutants/run.sh $(if $(MUTANTS),--only $(MUTANTS))

fuzz: $(FUZZ_DEPS)
	$(BUILD)/tests/fuzzrun --jobs $(FUZZ_JOBS) --start $(FUZZ_START) --max-threads $(FUZZ_THREADS) \
	    $(if $(filter 1,$(FUZZ_FREE)),--free) $(if $(SEED),--seed $(SEED),--seconds $(FUZZ_SECONDS))

fuzz-test: $(FUZZ_DEPS)
	$(call gs_suite,fuzz,s/^fuzz: \([0-9]*\) programs.*/\1 programs/p,bash tests/fuzz/sched_check.sh $(BUILD) && $(BUILD)/tests/fuzzrun --jobs $(FUZZ_JOBS) --seconds $(FUZZ_TEST_SECONDS) --timeout 20 --max-threads $(FUZZ_THREADS))

# The house stays as docs/internals.md draws it: every edge between files goes
# down or stays on its floor, no circle among files, no file over 400 lines, no
# function over 80, fields written by their owners alone (scripts/owners).
floors-test: $(LIB)
	$(call gs_suite,floors,s/^floors: \([0-9]* edges among [0-9]* files in [0-9]* modules\).*/\1/p,bash tests/floors/check.sh $(BUILD))

include tests/cli/cli.mk

# The last line of make test: what each suite passed (its NAME.passed).
test: unit-test fakecuda-test integration-test floors-test fuzz-test cli-test
	@echo "make test: $$(cd $(TEST_LOG) && cat $(TEST_SUITES:=.passed) | paste -sd, - | sed 's/,/, /g'): all passed"
