# Fuzzing.  The targets (tests/fuzz/fuzz_*.c) are replayed by the suite on
# their seeds and on every input a fuzzer found (tests/fuzz/regress/).
# With `./configure CC=clang --enable-fuzzing`, `make fuzz` builds the
# libFuzzer harnesses and `make fuzz-run FUZZ_SECONDS=N` runs each for N
# seconds (scripts/fuzz does both in a build of its own).
check_PROGRAMS += tests/test_fuzz
TESTS += tests/test_fuzz
tests_test_fuzz_SOURCES = tests/test_fuzz.c tests/testutil.h tests/fuzz/fuzz.h \
	tests/fuzz/fuzz_scenario.c tests/fuzz/fuzz_units.c
tests_test_fuzz_CFLAGS = $(TEST_CFLAGS)
tests_test_fuzz_LDADD = $(TEST_LIBS)

FUZZ_TARGETS = tests/fuzz/fuzz_scenario tests/fuzz/fuzz_units
EXTRA_PROGRAMS += $(FUZZ_TARGETS)
tests_fuzz_fuzz_scenario_SOURCES = tests/fuzz/fuzz_scenario.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_scenario_CPPFLAGS = $(AM_CPPFLAGS) -DCS_LIBFUZZER
tests_fuzz_fuzz_scenario_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_scenario_LDADD = sim/libcommsim.la
tests_fuzz_fuzz_units_SOURCES = tests/fuzz/fuzz_units.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_units_CPPFLAGS = $(AM_CPPFLAGS) -DCS_LIBFUZZER
tests_fuzz_fuzz_units_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_units_LDADD = sim/libcommsim.la
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/scenario.dict tests/fuzz/seeds tests/fuzz/regress tests/fuzz/README.md \
	scripts/fuzz

FUZZ_SECONDS = 60
if FUZZING
fuzz: $(FUZZ_TARGETS)
fuzz-run: fuzz
	$(SHELL) $(top_srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS)
else
fuzz fuzz-run:
	@echo "fuzzing is not configured: ./configure CC=clang --enable-fuzzing (or run scripts/fuzz)" >&2; exit 1
endif
.PHONY: fuzz fuzz-run
