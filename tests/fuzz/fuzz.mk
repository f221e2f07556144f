# libFuzzer targets (tests/fuzz/run.sh runs them for a bounded time):
#   build/fuzz/fuzz_decode  records -> decoder (-> span pairs) -> nesting -> stats, trace, table,
#                           summary
#   build/fuzz/fuzz_meta    metadata parser and the text functions
#   build/fuzz/fuzz_summary a summary file read back: report's views, diff
#   build/fuzz/fuzz_pftrace a Perfetto trace read back (report's and export's reader)
# clang only: -fsanitize=fuzzer needs clang's runtime (Debian: libclang-rt-14-dev).
# Included by tests/tests.mk; uses the Makefile's OUT, CLANG, CPPFLAGS and CORE_SRCS.
FUZZ_CC ?= $(CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# LP_STRTAB_POISON: collected texts are poisoned, a freed id marked again aborts (user/core/strtab.h).
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -Wno-unused-parameter -MMD -MP $(FUZZ_SAN) \
	-DLP_STRTAB_POISON
FUZZ_OBJS := $(patsubst %.c,$(OUT)/fuzz/obj/%.o,$(CORE_SRCS))
# report --html's page is compiled in.
$(OUT)/fuzz/obj/user/pictures/html.o: $(OUT)/page_assets.h
FUZZERS := $(OUT)/fuzz/fuzz_decode $(OUT)/fuzz/fuzz_meta $(OUT)/fuzz/fuzz_summary \
	$(OUT)/fuzz/fuzz_pftrace

# The core, instrumented for coverage (fuzzer-no-link: libFuzzer's main comes at the link).
$(OUT)/fuzz/obj/%.o: %.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(OUT)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(FUZZ_OBJS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -ljson-c -lz -ldeflate -lm -o $@

.PHONY: fuzz-build fuzz
fuzz-build: $(FUZZERS)

# FUZZ_SECONDS=N make fuzz: run each fuzzer N seconds (default 20).
fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(OUT)

-include $(wildcard $(OUT)/fuzz/obj/*/*/*.d $(OUT)/fuzz/*.d)
