# Targets of the attach tests (tests/integration/test_attach.c) that the generic
# rules of tests/tests.mk do not build. Included by tests/tests.mk before the
# check-build rule, which lists $(ATTACH_BUILD) among its prerequisites.
ATTACH_TARGETS := $(OUT)/tests/targets

ATTACH_BUILD += $(ATTACH_TARGETS)/libmarked.so $(ATTACH_TARGETS)/svc \
	$(ATTACH_TARGETS)/svc-linked $(ATTACH_TARGETS)/second

$(ATTACH_TARGETS)/libmarked.so: tests/targets/libmarked.c include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -fPIC -shared $< -o $@

# svc dlopens libmarked.so ("dlopen K") and execs second ("exec K"), both next to it.
$(ATTACH_TARGETS)/svc: tests/targets/svc.c include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -pthread $< -ldl -o $@

# The same service with libmarked.so linked in: markers in a shared library at attach.
# svc.c finds the library with dlsym(RTLD_DEFAULT), so the link needs --no-as-needed.
$(ATTACH_TARGETS)/svc-linked: tests/targets/svc.c include/leanprofiler.h \
		$(ATTACH_TARGETS)/libmarked.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -pthread $< -L$(ATTACH_TARGETS) \
		-Wl,--no-as-needed -lmarked -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl -o $@

# The process family of tests/integration/test_follow.c (tests/targets/family.c):
# libfama.so and libfamb.so from one source (same layout, other texts), and
# famlinked, an executable without markers linked with libfama.so.
ATTACH_BUILD += $(ATTACH_TARGETS)/libfama.so $(ATTACH_TARGETS)/libfamb.so \
	$(ATTACH_TARGETS)/famlinked

$(ATTACH_TARGETS)/libfam%.so: tests/targets/libfam.c tests/targets/famlog.h include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -DFAM_LIB='"$*"' -fPIC -shared $< -o $@

$(ATTACH_TARGETS)/famlinked: tests/targets/famlinked.c tests/targets/famlog.h \
		$(ATTACH_TARGETS)/libfama.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) $< -L$(ATTACH_TARGETS) -lfama \
		-Wl,-rpath,'$$ORIGIN' -o $@

# A library with 3000 more marker sites than a profiler should attach (test_security).
ATTACH_BUILD += $(ATTACH_TARGETS)/libmanyprobes.so

$(ATTACH_TARGETS)/libmanyprobes.so: tests/targets/libmanyprobes.c include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -fPIC -shared $< -o $@

# A small marked library that test_security copies hundreds of times (manylibs loads them).
ATTACH_BUILD += $(ATTACH_TARGETS)/libmany.so

$(ATTACH_TARGETS)/libmany.so: tests/targets/libmany.c tests/targets/famlog.h include/leanprofiler.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -fPIC -shared $< -o $@

# Preloaded into leanprofiler: a target swaps its mapping between maps and map_files (test_security).
ATTACH_BUILD += $(ATTACH_TARGETS)/libopenswap.so

$(ATTACH_TARGETS)/libopenswap.so: tests/targets/libopenswap.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CFLAGS) -fPIC -shared $< -ldl -o $@
