# cli.mk: tests/cli, what a user meets first (included from tests/tests.mk).
#
#   make cli-test   the launcher, the files graphshim writes, and bad input:
#                   tests/cli/run.sh over the fake driver, a case per promise

$(BUILD)/tests/lateload: tests/cli/lateload.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< -ldl

$(BUILD)/tests/endprog: tests/cli/endprog.c tests/integration/cucheck.h tests/fakecuda/fakecuda.h $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(CUDA_HOME)/include $(TEST_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/fakecuda -lcuda

$(BUILD)/tests/runname: tests/cli/runname.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $<

# The report tool under the undefined-behaviour sanitizer, for crafted reports
# (a NULL given to qsort, a signed overflow in a sum stop it with status 1).
$(BUILD)/tests/graphshim-report-ubsan: scripts/report.c scripts/report_svg.c scripts/report_strip.c scripts/report.h scripts/report_svg.h policy/base/check.c policy/base/check.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fsanitize=undefined -fno-sanitize-recover=all -o $@ $< scripts/report_svg.c scripts/report_strip.c policy/base/check.c

.PHONY: cli-test
cli-test: $(LIB) $(BUILD)/test/libgraphshim.so $(BUILD)/graphshim $(BUILD)/graphshim-report $(BUILD)/graphshim-gate $(FAKECUDA_LIB) \
          $(BUILD)/tests/drvprog $(BUILD)/tests/guardprog $(BUILD)/tests/lateload $(BUILD)/tests/runname $(BUILD)/tests/endprog \
          $(BUILD)/tests/integration $(BUILD)/tests/graphshim-report-ubsan $(FAKECUDA_TEST)
	$(call gs_suite,cli,s/^cli: \([0-9]*\) passed.*/\1 cases/p,BUILD=$(BUILD) bash tests/cli/run.sh)
