# tests/fakecuda/fakecuda.mk - CPU fake of the CUDA driver (libcuda.so.1).
# Included by the top-level Makefile; also usable standalone:
#   make -f tests/fakecuda/fakecuda.mk fakecuda-test
CUDA_HOME ?= /usr/local/cuda
BUILD ?= build
CC ?= cc
# Standalone, every command is shown and the test runs as it is; the Makefile
# defines these (quiet commands, a suite's output in a log: tests/tests.mk).
Q ?=
SAY ?= @:
gs_suite ?= $(3)

FAKECUDA_DIR := tests/fakecuda
FAKECUDA_OUT := $(BUILD)/fakecuda
FAKECUDA_LIB := $(FAKECUDA_OUT)/libcuda.so.1
FAKECUDA_TEST := $(FAKECUDA_OUT)/test_fakecuda
FAKECUDA_SRCS := $(addprefix $(FAKECUDA_DIR)/,fakecuda.c fake_queue.c fake_kernel.c fake_graph.c fake_log.c fake_exports.c fake_vmm.c)
FAKECUDA_DEPS := $(FAKECUDA_SRCS) $(wildcard $(FAKECUDA_DIR)/*.h $(FAKECUDA_DIR)/*.inc $(FAKECUDA_DIR)/*.def)
FAKECUDA_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -O1 -g \
                   -I$(CUDA_HOME)/include -I$(FAKECUDA_DIR)

# -Bsymbolic: addresses handed out by cuGetProcAddress are this library's own
# definitions even when a preloaded library exports the same names.
$(FAKECUDA_LIB): $(FAKECUDA_DEPS)
	@mkdir -p $(@D)
	$(SAY) CC $@
	$(Q)$(CC) $(FAKECUDA_CFLAGS) -shared -o $@ $(FAKECUDA_SRCS) \
	    -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -ldl -lpthread
	$(Q)ln -sf libcuda.so.1 $(FAKECUDA_OUT)/libcuda.so

$(FAKECUDA_TEST): $(FAKECUDA_DIR)/test_fakecuda.c $(FAKECUDA_DIR)/test_order.c $(FAKECUDA_DIR)/fakecuda.h $(FAKECUDA_LIB) | criterion-check
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -g -I$(CUDA_HOME)/include -I$(FAKECUDA_DIR) \
	    -o $@ $(filter %.c,$^) -rdynamic -L$(FAKECUDA_OUT) -Wl,-rpath,$(abspath $(FAKECUDA_OUT)) \
	    -lcuda -lcriterion -ldl -lpthread

.PHONY: fakecuda fakecuda-test
fakecuda: $(FAKECUDA_LIB)

fakecuda-test: $(FAKECUDA_TEST)
	$(call gs_suite,fakecuda,$(CRITERION_PASSED),FAKECUDA_TEST_LIB=$(abspath $(FAKECUDA_LIB)) $(FAKECUDA_TEST))
