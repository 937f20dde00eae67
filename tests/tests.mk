# tests.mk: the test suite over the fake driver (included by the Makefile).
#
#   make test              everything below; needs libcriterion-dev
#   make unit-test         policy and interposer units, real driver swapped out
#   make integration-test  driver-API programs over tests/fakecuda, with and
#                          without the shim preloaded
#   make floors-test       the folders call only downwards (scripts/floors.sh)
#   make fuzz-test         differential fuzzing for FUZZ_TEST_SECONDS (CI budget)
#   make fuzz              differential fuzzing for FUZZ_SECONDS (default 60),
#                          or of one seed: make fuzz SEED=n (tests/fuzz/README.md);
#                          FUZZ_START: first seed, FUZZ_JOBS: parallel workers

TEST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DBUILD_DIR=\"$(abspath $(BUILD))\"
UNIT_SRC    := $(wildcard tests/unit/*.c)
INTEG_SRC   := tests/integration/test_integration.c tests/integration/test_engine.c tests/integration/test_nvtx.c \
               tests/integration/test_report_tool.c tests/integration/run.c

# One clear line, not a compiler error, where Criterion is missing.
criterion-check:
	@echo '#include <criterion/criterion.h>' | $(CC) -E -x c - >/dev/null 2>&1 || \
	    { echo "make test needs Criterion (criterion/criterion.h not found): apt-get install -y libcriterion-dev"; exit 1; }

$(BUILD)/tests/unit: $(UNIT_SRC) $(LIB_OBJ) | criterion-check
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -o $@ $(UNIT_SRC) $(LIB_OBJ) -lcriterion $(LDLIBS)

$(BUILD)/tests/integration: $(INTEG_SRC) tests/integration/run.h | criterion-check
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $(INTEG_SRC) -lcriterion -ldl

$(BUILD)/tests/drvprog: tests/integration/drvprog.c tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -ldl

$(BUILD)/tests/guardprog: tests/integration/guardprog.c tests/integration/cucheck.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -lpthread -ldl

$(BUILD)/tests/dlopen_tool.so: tests/integration/dlopen_tool.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl

# An NVTX tool that counts the ranges it sees (tests/nvtxprobe/nvtxprobe.c).
$(BUILD)/tests/nvtxprobe.so: tests/nvtxprobe/nvtxprobe.c
	@mkdir -p $(@D)
	$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl -lpthread

unit-test: $(BUILD)/tests/unit $(BUILD)/knobs_doc
	$(BUILD)/tests/unit

integration-test: $(BUILD)/tests/integration $(BUILD)/tests/drvprog $(BUILD)/tests/guardprog $(BUILD)/tests/dlopen_tool.so \
                  $(BUILD)/tests/nvtxprobe.so $(BUILD)/graphshim $(BUILD)/graphshim-report \
                  $(LIB) $(BUILD)/prof/libgraphshim.so $(FAKECUDA_LIB)
	$(BUILD)/tests/integration

FUZZ_SECONDS      ?= 60
FUZZ_TEST_SECONDS ?= 45
FUZZ_START        ?= 1
FUZZ_JOBS         ?= $(shell nproc)
FUZZ_THREADS      ?= 8
FUZZ_DEPS         := $(BUILD)/tests/fuzzprog $(BUILD)/tests/fuzzrun $(LIB) $(FAKECUDA_LIB)

$(BUILD)/tests/fuzzprog: tests/fuzz/fuzzprog.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda -lpthread -ldl

$(BUILD)/tests/fuzzrun: tests/fuzz/fuzzrun.c tests/integration/run.c tests/integration/run.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ tests/fuzz/fuzzrun.c tests/integration/run.c -lpthread

.PHONY: fuzz fuzz-test floors-test criterion-check
fuzz: $(FUZZ_DEPS)
	$(BUILD)/tests/fuzzrun --jobs $(FUZZ_JOBS) --start $(FUZZ_START) --max-threads $(FUZZ_THREADS) \
	    $(if $(SEED),--seed $(SEED),--seconds $(FUZZ_SECONDS))

fuzz-test: $(FUZZ_DEPS)
	$(BUILD)/tests/fuzzrun --jobs $(FUZZ_JOBS) --seconds $(FUZZ_TEST_SECONDS) --timeout 20 --max-threads $(FUZZ_THREADS)

# Every call between the folders goes down: interpose/ -> policy/ -> driver/.
floors-test: $(LIB)
	bash scripts/floors.sh $(BUILD)

include tests/cli/cli.mk

test: unit-test fakecuda-test integration-test floors-test fuzz-test cli-test
