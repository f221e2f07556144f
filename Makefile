# leanprofiler: `make` builds build/leanprofiler; `sudo make demo` and `sudo make check`
# also install missing Debian packages first; `make install`, `make deb`: install.mk.
# V=1 shows the full commands.
OUT := build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -MMD -MP
# The profiler's own objects: -O3 and link-time optimization (the consumer's calls between
# files, the decoder to the nesting to the statistics, are inlined: ~15% fewer instructions
# per span, bench row 6). Fat objects: the unit tests link them without LTO (-fno-lto), which
# keeps `make check` from optimizing the core again for each test.
OPT_CFLAGS ?= -O3 -flto=auto -ffat-lto-objects
LTO_LDFLAGS ?= -flto=auto
# The sources, by folder (the data path; docs/internals.md "Source tree"):
#   user/core      records -> decoder -> span pairs, nesting -> statistics, call paths, trace ->
#                  report; libbpf-free: the unit tests, fuzzers and bench/pipeline link it
#   user/read      a recording read back: report and diff       (libbpf-free)
#   user/pictures  SVG and HTML pictures of a recording           (libbpf-free)
#   user/record    recording with BPF: the session, targets, /proc, credentials, outputs
#   user/export    a recording as rows of ClickHouse tables       (libcurl-free)
#   user/export/client  export's command, its ClickHouse HTTP client (libcurl) and its gzip
#                       batches (zlib)
#   user/top       top: a recording shown live, on a full screen (ncurses) or as tables
#   user           the commands (main.c) and list
CORE_DIRS := user/core user/read user/pictures user/export
TOOL_DIRS := user user/record user/export/client user/top
CPPFLAGS += -I. -Iinclude -I$(OUT) $(addprefix -I,$(TOOL_DIRS) $(CORE_DIRS))
# -lz: libbpf's, and export's gzip batches (user/export/client/batch.c); -ldeflate: the Perfetto
# trace's packets (user/core/pfzout.c); ncursesw: top's screen.
LDLIBS := -lbpf -lelf -lz -ldeflate -ljson-c -lcurl -lcrypto -lm -pthread \
	$(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)
# The host's system include dirs, after ours: bpf/usdt.bpf.h needs <asm/errno.h>.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -MMD -MP \
	$(CLANG_BPF_SYS_INCLUDES)

# The libbpf-free core: the unit tests link it directly.
CORE_SRCS := $(sort $(wildcard $(addsuffix /*.c,$(CORE_DIRS))))
CORE_OBJS := $(patsubst %.c,$(OUT)/%.o,$(CORE_SRCS))
TOOL_SRCS := $(sort $(wildcard $(addsuffix /*.c,$(TOOL_DIRS))))
TOOL_OBJS := $(patsubst %.c,$(OUT)/%.o,$(TOOL_SRCS))
EXAMPLES := $(patsubst examples/%.c,$(OUT)/examples/%,$(wildcard examples/*.c))
# Programs that time the core without BPF, and the producer the bench records (bench/README.md).
BENCH_PROGS := $(OUT)/bench/pipeline $(OUT)/bench/producer

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps demo check bench clean

all: $(OUT)/leanprofiler $(EXAMPLES) $(BENCH_PROGS)

deps:
	$(Q)scripts/deps.sh build

$(OUT)/vmlinux.h:
	$(call msg,BTF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

# session.c includes the skeleton: build it first.
$(OUT)/user/record/session.o: $(OUT)/leanprofiler.skel.h

# The kernel types the programs' CO-RE relocations use, cut out of this machine's kernel
# BTF and carried in the binary (user/record/corebtf.c; docs/performance.md).
$(OUT)/core_btf.h: $(OUT)/leanprofiler.bpf.o scripts/embed-btf.sh
	$(call msg,BTF,$@)
	$(Q)scripts/embed-btf.sh $(BPFTOOL) $< > $@.tmp && mv $@.tmp $@
$(OUT)/user/record/corebtf.o $(OUT)/san/user/record/corebtf.o: $(OUT)/core_btf.h

# The page of report --html carries its script and style: html.c includes them as C strings.
$(OUT)/page_assets.h: user/pictures/page.js user/pictures/page.css scripts/embed-text.sh
	$(call msg,EMBED,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/embed-text.sh lp_page_js user/pictures/page.js lp_page_css user/pictures/page.css > $@.tmp && mv $@.tmp $@
$(OUT)/user/pictures/html.o $(OUT)/san/user/pictures/html.o: $(OUT)/page_assets.h

$(OUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(OPT_CFLAGS) -c $< -o $@

$(OUT)/leanprofiler: $(TOOL_OBJS) $(CORE_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(OPT_CFLAGS) $(LTO_LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/examples/%: examples/%.c include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@

$(OUT)/bench/%: bench/%.c $(CORE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(OPT_CFLAGS) $(LTO_LDFLAGS) $< $(CORE_OBJS) -ljson-c -lz -ldeflate -lm -o $@

# The bench's producer (rows 5, 7; test_pftrace records it): markers only, no core.
$(OUT)/bench/producer: bench/producer.c include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $< -o $@

# The main job: profile the nested example, print the table, write the two files.
demo:
	$(Q)scripts/deps.sh build
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUT)/leanprofiler record -o $(OUT) -- $(OUT)/examples/nested

# Overhead, side by side in one run (root): see bench/run.sh.
bench:
	$(Q)scripts/deps.sh bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/run.sh $(OUT)

include bindings/rust/rust.mk
include tests/tests.mk
include install.mk
# The Python module: make python, and make install's part (python/python.mk).
include python/python.mk

clean:
	rm -rf $(OUT)

-include $(wildcard $(OUT)/*.d $(OUT)/*/*.d $(OUT)/*/*/*.d $(OUT)/*/*/*/*.d $(OUT)/*/*/*/*/*.d)
