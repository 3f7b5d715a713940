# Input and output at the edge: units (later: YAML loading, CSV writers).
sim_libcommsim_la_SOURCES += sim/io/units.c
pkginclude_HEADERS += include/commsim/units.h

check_PROGRAMS += tests/test_units
TESTS += tests/test_units
tests_test_units_SOURCES = tests/test_units.c
tests_test_units_CFLAGS = $(TEST_CFLAGS)
tests_test_units_LDADD = $(TEST_LIBS)
