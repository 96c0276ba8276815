# Makefile — builds one static library per folder (common, legacy, modern, converter, bridge),
# the wfbridge program, native sample/test libraries, and one Check runner for all suites.
# Everything goes under $(BUILD) so sanitizer and fuzz builds live beside the normal one.

MAKEFLAGS += --no-builtin-rules
.SUFFIXES:
BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
PKGS     := libffi libxml-2.0 sqlite3 jansson libpq nettle libmicrohttpd libcurl
WARN     := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wformat=2
OPT      ?= -O2 -g
CFLAGS_EXTRA ?=
LDFLAGS_EXTRA ?=
ifeq ($(WERROR),1)
WARN     += -Werror
endif

# The system packages are installed by the `deps` target (below), which every goal that builds
# runs first; parsing the Makefile only queries pkg-config, so `make -n` runs nothing. The flags
# are computed on first use inside a recipe, i.e. after `deps` ran in this same invocation, and
# then kept (the `$(eval X := ...)` form caches what the first expansion found).
pkg_query = $(shell pkg-config $(1) 2>/dev/null)
PKG_CFLAGS = $(eval PKG_CFLAGS := $(call pkg_query,--cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $(call pkg_query,--libs $(PKGS)) -ldl -lpthread -lm)$(PKG_LIBS)
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $(call pkg_query,--cflags check))$(CHECK_CFLAGS)
CHECK_LIBS = $(eval CHECK_LIBS := $(call pkg_query,--libs check))$(CHECK_LIBS)

CFLAGS_ALL = -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -fPIC $(OPT) $(WARN) \
              $(PKG_CFLAGS) $(CFLAGS_EXTRA) -MMD -MP
LDFLAGS_ALL := $(LDFLAGS_EXTRA)

MODULES  := common legacy modern converter bridge
# Link order: a library comes before the ones it uses.
LINK_ORDER := bridge converter modern legacy common

define module_srcs
$(filter-out bridge/wfb_main.c,$(wildcard $(1)/*.c))
endef

lib_of = $(BUILD)/lib/libwf$(1).a
PRESENT_MODULES := $(foreach m,$(MODULES),$(if $(strip $(call module_srcs,$(m))),$(m)))
LIBS_ALL := $(foreach m,$(LINK_ORDER),$(if $(filter $(m),$(PRESENT_MODULES)),$(call lib_of,$(m))))

.PHONY: all deps libs act-api native test asan demo bench fuzz fuzz-run install clean check-%
all: deps libs act-api $(BUILD)/bin/wfbridge native

# Check the system packages with pkg-config; when some are missing run the install script
# (apt-get as root; otherwise it prints the exact command and the build stops).
deps:
	@pkg-config --exists $(PKGS) check 2>/dev/null || { \
	  echo "wfbridge: system packages missing, running scripts/install-deps.sh"; \
	  sh scripts/install-deps.sh >&2 || { \
	    echo "wfbridge: missing system packages: run the command printed above, then make again" >&2; \
	    exit 1; }; }

# ---- libraries ---------------------------------------------------------------------------
define module_rules
$(call lib_of,$(1)): $(patsubst %.c,$(BUILD)/obj/%.o,$(call module_srcs,$(1)))
	@mkdir -p $$(dir $$@)
	@rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach m,$(PRESENT_MODULES),$(eval $(call module_rules,$(m))))

libs: $(LIBS_ALL)

# Activities use only the public activity API (wfm_activity.h, wfm_ctx.h, wfm_node.h, ...), as an
# activity written elsewhere must: the build fails when a modern/wfm_act_*.c file includes an
# internal *_int.h header, directly or through another header (the preprocessor lists them).
ACT_SRCS := $(wildcard modern/wfm_act_*.c)
$(BUILD)/check/act_public.ok: $(ACT_SRCS) $(wildcard modern/*.h common/*.h) | deps
	@mkdir -p $(dir $@)
	@for f in $(ACT_SRCS); do \
	  bad=$$($(CC) $(CFLAGS_ALL) -MT x -MF /dev/null -E -H $$f -o /dev/null 2>&1 | grep '_int\.h') ; \
	  if [ -n "$$bad" ]; then echo "$$f: error: an activity file includes internal headers:" >&2; \
	    echo "$$bad" >&2; exit 1; fi; done
	@touch $@
act-api: $(if $(ACT_SRCS),$(BUILD)/check/act_public.ok)

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/bin/wfbridge: $(BUILD)/obj/bridge/wfb_main.o $(LIBS_ALL) | deps
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -rdynamic

# ---- native libraries: samples/*/libs/NAME/*.c and tests/*/libs/NAME/*.c ----------------------
# Each directory becomes libNAME.so in $(BUILD)/samples/lib or $(BUILD)/tests/lib (the library
# paths the demo and the tests use), and each *.xml beside the sources (NAME.activities.xml) and
# each *.xoml (the bodies of composite activity types) is copied there by its own rule, so
# editing a type library alone updates the build.
SAMPLE_LIB_DIRS := $(wildcard samples/*/libs/*)
TEST_LIB_DIRS   := $(wildcard tests/*/libs/*)
define native_rules
$(2)/lib$(notdir $(1)).so: $(wildcard $(1)/*.c) $(wildcard $(1)/*.h) | deps
	@mkdir -p $(2)
	$(CC) -std=c11 -D_DEFAULT_SOURCE -shared -fPIC $(OPT) -Wall -Wextra $(CFLAGS_EXTRA) -o $$@ $(wildcard $(1)/*.c) $(LDFLAGS_EXTRA)
NATIVE_OUT += $(2)/lib$(notdir $(1)).so
endef
define native_file_rule
$(2)/$(notdir $(1)): $(1)
	@mkdir -p $(2)
	cp $$< $$@
NATIVE_OUT += $(2)/$(notdir $(1))
endef
native_dir_rules = $(eval $(call native_rules,$(1),$(2)))$(foreach f,$(wildcard $(1)/*.xml) $(wildcard $(1)/*.xoml),$(eval $(call native_file_rule,$(f),$(2))))
$(foreach d,$(SAMPLE_LIB_DIRS),$(call native_dir_rules,$(d),$(BUILD)/samples/lib))
$(foreach d,$(TEST_LIB_DIRS),$(call native_dir_rules,$(d),$(BUILD)/tests/lib))
native: $(NATIVE_OUT)

# ---- tests -------------------------------------------------------------------------------
TEST_SRCS   := $(wildcard tests/*/test_*.c)
TEST_CFLAGS = $(CFLAGS_ALL) $(CHECK_CFLAGS) -Wno-missing-prototypes -DWF_BUILD_DIR='"$(BUILD)"'

$(BUILD)/tests/obj/%.o: tests/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(BUILD)/tests -c $< -o $@

# The runner's suite list is generated from every `Suite *NAME_suite(void)` definition.
$(BUILD)/tests/suites-%.inc: $(TEST_SRCS) Makefile
	@mkdir -p $(dir $@)
	@grep -ho '^Suite \*[a-z0-9_]*_suite(void)' $(if $(filter all,$*),$(TEST_SRCS),$(wildcard tests/$*/test_*.c)) \
	  | sed 's/^Suite \*\([a-z0-9_]*\)_suite(void)/WF_SUITE(\1_suite)/' > $@.tmp; mv $@.tmp $@

$(BUILD)/tests/obj/main-%.o: tests/wf_test_main.c $(BUILD)/tests/suites-%.inc | deps
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DWF_SUITES_INC='"suites-$*.inc"' -I$(BUILD)/tests -c $< -o $@

# Shared test helpers: tests/wf_test_util.c and any tests/FOLDER/support_*.c.
TEST_SUPPORT := $(BUILD)/tests/obj/wf_test_util.o \
                $(patsubst tests/%.c,$(BUILD)/tests/obj/%.o,$(wildcard tests/*/support_*.c))

$(BUILD)/tests/wftest: $(BUILD)/tests/obj/main-all.o $(TEST_SUPPORT) $(patsubst tests/%.c,$(BUILD)/tests/obj/%.o,$(TEST_SRCS)) $(LIBS_ALL) | deps
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS) -rdynamic

TEST_MODULES := $(sort $(patsubst tests/%/,%,$(dir $(TEST_SRCS))))
define test_module_rules
$(BUILD)/tests/wftest-$(1): $(BUILD)/tests/obj/main-$(1).o $(TEST_SUPPORT) $(patsubst tests/%.c,$(BUILD)/tests/obj/%.o,$(wildcard tests/$(1)/test_*.c)) $(LIBS_ALL) | deps
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$^ $$(CHECK_LIBS) $$(PKG_LIBS) -rdynamic
endef
$(foreach m,$(TEST_MODULES),$(eval $(call test_module_rules,$(m))))

# The crash harness's host process (run and killed by tests/modern/test_crash.c), built with
# the native libraries so check-modern has it; test_durable runs $(BUILD)/bin/wfbridge.
$(BUILD)/tests/crash_host: $(BUILD)/tests/obj/modern/crash_host.o $(LIBS_ALL) | deps
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -rdynamic
native: $(BUILD)/tests/crash_host $(BUILD)/bin/wfbridge
.SECONDARY:

# `make check-legacy` runs one folder's suites (handy while several people work at once).
check-%: deps act-api native $(BUILD)/tests/wftest-%
	WF_BUILD=$(BUILD) $(BUILD)/tests/wftest-$*

test: deps all $(BUILD)/tests/wftest
	WF_BUILD=$(BUILD) $(BUILD)/tests/wftest

# Check's per-test timeouts are set for the plain build; ASan + UBSan runs the same work 2-3
# times slower (measured on the verify suites), so `make asan` scales every timeout by
# CK_TIMEOUT_MULTIPLIER (Check's own knob; 4 unless set). What the tests check is unchanged.
# intercept_tls_get_addr=0: GCC 12's runtime takes a dynamic TLS block (a dlopen'ed library's
# thread-local, as in tests/bridge/libs/holdorders) that happens to start 16 bytes into a page
# for an old glibc layout and reads a bogus range from before it, so the leak check at a test
# process's exit sometimes dies ("Tracer caught signal 11", exit 1). Our own thread-locals are
# static TLS, and no library we load keeps heap pointers only in its thread-locals.
asan: deps
	ASAN_OPTIONS=intercept_tls_get_addr=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS} \
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-4} \
	$(MAKE) --no-print-directory BUILD=build-asan OPT="-g -O1" \
	  CFLAGS_EXTRA="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  LDFLAGS_EXTRA="-fsanitize=address,undefined" test

# ---- fuzzing (clang + libFuzzer): tests/fuzz/fuzz_NAME.c -> build-fuzz/fuzz/fuzz_NAME -------
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1
fuzz: deps
	@command -v clang >/dev/null 2>&1 || sh scripts/install-deps.sh --fuzz >&2
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT="-g -O1" \
	  CFLAGS_EXTRA="-fsanitize=fuzzer-no-link,address,undefined" libs
	@mkdir -p build-fuzz/fuzz
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  echo "clang $$f -> build-fuzz/fuzz/$$n"; \
	  clang -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -g -O1 $(PKG_CFLAGS) \
	    -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz/$$n $$f \
	    $(foreach m,$(LINK_ORDER),$(if $(filter $(m),$(PRESENT_MODULES)),build-fuzz/lib/libwf$(m).a)) \
	    $(PKG_LIBS) || exit 1; done
# Each target runs over its seed corpus, then mutates for FUZZ_SECONDS with a fixed seed
# (FUZZ_SEED), so a CI run is repeatable; a crash leaves its input in build-fuzz/.
fuzz-run: fuzz
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); c=tests/fuzz/corpus/$$n; \
	  rm -rf build-fuzz/corpus/$$n; mkdir -p build-fuzz/corpus/$$n; \
	  echo "fuzzing $$n for $(FUZZ_SECONDS)s (seed $(FUZZ_SEED))"; \
	  build-fuzz/fuzz/$$n -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	    -print_final_stats=0 -artifact_prefix=build-fuzz/$$n- \
	    build-fuzz/corpus/$$n $$( [ -d $$c ] && echo $$c ) 2>build-fuzz/$$n.log >/dev/null \
	    || { tail -40 build-fuzz/$$n.log; exit 1; }; done; echo "fuzzing: no crashes"

# ---- demo, bench, install ------------------------------------------------------------------
demo: deps all
	@BUILD=$(BUILD) sh scripts/demo.sh

bench: deps all
	@BUILD=$(BUILD) QUICK=$(QUICK) PKGS="$(PKGS)" sh scripts/bench.sh

HEADERS := $(foreach m,$(PRESENT_MODULES),$(filter-out %_int.h,$(wildcard $(m)/*.h)))
# What `make install` adds to the program: one library of every module, shared (versioned,
# soname libwfbridge.so.0) and static, a .pc whose Libs.private lists plain -l flags (so
# `pkg-config --static` does not pull in libpq's own private dependencies), a man page per
# verb generated from its --help, bash completion and the docs.
SO_VERSION := 0.1.0
SO_NAME    := libwfbridge.so.0
LIB_OBJS = $(foreach m,$(PRESENT_MODULES),$(patsubst %.c,$(BUILD)/obj/%.o,$(call module_srcs,$(m))))
$(BUILD)/dist/lib/libwfbridge.so.$(SO_VERSION): $(LIB_OBJS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-soname,$(SO_NAME) -o $@ $^ $(PKG_LIBS)
$(BUILD)/dist/lib/libwfbridge.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/dist/man/wfbridge.1: $(BUILD)/bin/wfbridge scripts/gen-man.sh
	sh scripts/gen-man.sh $(BUILD)/bin/wfbridge $(BUILD)/dist/man $(SO_VERSION)
DIST := $(BUILD)/dist/lib/libwfbridge.so.$(SO_VERSION) $(BUILD)/dist/lib/libwfbridge.a \
        $(BUILD)/dist/man/wfbridge.1

install: all $(DIST)
	@for h in $(HEADERS); do install -D -m 644 $$h $(DESTDIR)$(PREFIX)/include/wfbridge/$$h; done
	install -D -m 755 $(BUILD)/dist/lib/libwfbridge.so.$(SO_VERSION) \
	  $(DESTDIR)$(PREFIX)/lib/libwfbridge.so.$(SO_VERSION)
	ln -sf libwfbridge.so.$(SO_VERSION) $(DESTDIR)$(PREFIX)/lib/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(PREFIX)/lib/libwfbridge.so
	install -D -m 644 $(BUILD)/dist/lib/libwfbridge.a $(DESTDIR)$(PREFIX)/lib/libwfbridge.a
	install -D -m 755 $(BUILD)/bin/wfbridge $(DESTDIR)$(PREFIX)/bin/wfbridge
	@for f in $(BUILD)/dist/man/*.1; do \
	  install -D -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man1/$$(basename $$f); done
	install -D -m 644 scripts/wfbridge.bash \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/wfbridge
	@for f in README.md docs/*.md; do \
	  install -D -m 644 $$f $(DESTDIR)$(PREFIX)/share/doc/wfbridge/$$(basename $$f); done
	@mkdir -p $(DESTDIR)$(PREFIX)/lib/pkgconfig
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SO_VERSION)|' \
	  -e 's|@LIBS_PRIVATE@|$(PKG_LIBS)|' scripts/wfbridge.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/wfbridge.pc
	@echo "installed under $(DESTDIR)$(PREFIX)"

# `make test` also installs into a scratch DESTDIR and links a program against the result.
.PHONY: install-check
install-check: all
	+CC="$(CC)" LDFLAGS_EXTRA="$(LDFLAGS_EXTRA)" sh tests/install/test_install.sh $(BUILD)
test: install-check

clean:
	rm -rf build build-asan build-fuzz

DEP_FILES := $(shell find $(BUILD) -name '*.d' 2>/dev/null)
$(DEP_FILES): ;
-include $(DEP_FILES)
