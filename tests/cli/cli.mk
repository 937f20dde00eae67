# cli.mk: tests/cli, what a user meets first (included from tests/tests.mk).
#
#   make cli-test   the launcher, the files graphshim writes, and bad input:
#                   tests/cli/run.sh over the fake driver, a case per promise

$(BUILD)/tests/lateload: tests/cli/lateload.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< -ldl

.PHONY: cli-test
cli-test: $(LIB) $(BUILD)/graphshim $(BUILD)/graphshim-report $(FAKECUDA_LIB) $(BUILD)/tests/drvprog \
          $(BUILD)/tests/guardprog $(BUILD)/tests/lateload
	BUILD=$(BUILD) bash tests/cli/run.sh
