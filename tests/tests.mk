# Tests: `make check` runs every one (unit, header, integration with real BPF).
TEST_CFLAGS := $(CFLAGS)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(wildcard tests/unit/*.c))
# Programs; lib*.c are shared libraries (tests/attach.mk builds them), suidsecret.c is
# built by tests/integration/test_security.c itself (without PIE, setuid root).
TARGETS := $(patsubst tests/targets/%.c,$(OUT)/tests/targets/%,$(filter-out tests/targets/lib%.c \
	tests/targets/suidsecret.c,$(wildcard tests/targets/*.c))) \
	$(patsubst tests/targets/%.cc,$(OUT)/tests/targets/%,$(wildcard tests/targets/*.cc))

$(OUT)/tests/unit/%: tests/unit/%.c $(CORE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -fno-lto $< $(CORE_OBJS) $(UNIT_EXTRA) -lcmocka -ljson-c -lz -ldeflate -lm -o $@

# export's batches (user/export/client, zlib): that object with the core.
$(OUT)/tests/unit/test_export_batch: $(OUT)/user/export/client/batch.o
$(OUT)/tests/unit/test_export_batch: UNIT_EXTRA = $(OUT)/user/export/client/batch.o -lz
$(OUT)/san/tests/unit/test_export_batch: $(OUT)/san/user/export/client/batch.o
$(OUT)/san/tests/unit/test_export_batch: UNIT_EXTRA = $(OUT)/san/user/export/client/batch.o -lz

$(OUT)/tests/targets/%: tests/targets/%.c include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -pthread $< -o $@

# Targets whose USDT notes are written by hand (tests/targets/stapsdt.h).
$(OUT)/tests/targets/sizedargs $(OUT)/tests/targets/spanpairs: tests/targets/stapsdt.h

# A libpq client (the extended protocol, as drivers speak it) for test_postgres.
$(OUT)/tests/targets/pgclient: tests/targets/pgclient.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) $$(pkg-config --cflags libpq) $< $$(pkg-config --libs libpq) -o $@

$(OUT)/tests/targets/%: tests/targets/%.cc include/leanprofiler.h
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(CPPFLAGS) -O2 -g -std=c++17 -Wall -Wextra $< -o $@

$(OUT)/tests/integration/%: tests/integration/%.c tests/integration/itest.h \
	tests/integration/itest_record.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) $< -lcmocka -ljson-c -lm -o $@

# The same unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer, and with
# collected texts poisoned (user/core/strtab.h LP_STRTAB_POISON).
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-DLP_STRTAB_POISON
SAN_CORE_OBJS := $(patsubst $(OUT)/user/%,$(OUT)/san/user/%,$(CORE_OBJS))
SAN_UNIT_TESTS := $(patsubst $(OUT)/tests/unit/%,$(OUT)/san/tests/unit/%,$(UNIT_TESTS))

$(OUT)/san/user/%.o: user/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(OUT)/san/tests/unit/%: tests/unit/%.c $(SAN_CORE_OBJS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) $(SAN_FLAGS) $< $(SAN_CORE_OBJS) $(UNIT_EXTRA) -lcmocka -ljson-c -lz -ldeflate -lm -o $@

# The profiler itself under the sanitizers: test_core runs its loads through it too.
SAN_TOOL_OBJS := $(patsubst $(OUT)/user/%,$(OUT)/san/user/%,$(TOOL_OBJS))
$(OUT)/san/user/record/session.o: $(OUT)/leanprofiler.skel.h

$(OUT)/san/leanprofiler: $(SAN_TOOL_OBJS) $(SAN_CORE_OBJS)
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ $(LDLIBS) -o $@

INTEGRATION := $(patsubst tests/integration/%.c,$(OUT)/tests/integration/%,$(wildcard tests/integration/*.c))

include tests/attach.mk
include tests/fuzz/fuzz.mk

.PHONY: check check-build
check-build: all $(UNIT_TESTS) $(SAN_UNIT_TESTS) $(OUT)/san/leanprofiler $(TARGETS) $(INTEGRATION) \
	$(ATTACH_BUILD) \
	$(FUZZERS) $(RUST_CHECK_BUILD)

check:
	$(Q)scripts/deps.sh test
	$(Q)$(MAKE) --no-print-directory check-build
	$(Q)tests/run-all.sh $(OUT)
