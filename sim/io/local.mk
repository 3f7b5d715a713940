# Input and output at the edge: units (later: YAML loading, CSV writers).
sim_libcommsim_la_SOURCES += sim/io/units.c sim/io/error.c
pkginclude_HEADERS += include/commsim/units.h include/commsim/error.h include/commsim/time.h

check_PROGRAMS += tests/test_units
TESTS += tests/test_units
tests_test_units_SOURCES = tests/test_units.c
tests_test_units_CFLAGS = $(TEST_CFLAGS)
tests_test_units_LDADD = $(TEST_LIBS)

# Scenario files: YAML tree with locations, then validated structs.
sim_libcommsim_la_SOURCES += sim/io/yamltree.c sim/io/params.c sim/io/scenario.c sim/io/world.c sim/io/csv.c sim/io/plot.c
pkginclude_HEADERS += include/commsim/yamltree.h include/commsim/params.h include/commsim/scenario.h include/commsim/csv.h include/commsim/plot.h

check_PROGRAMS += tests/test_scenario
TESTS += tests/test_scenario
tests_test_scenario_SOURCES = tests/test_scenario.c tests/testutil.h
tests_test_scenario_CFLAGS = $(TEST_CFLAGS)
tests_test_scenario_LDADD = $(TEST_LIBS)
# test_scenario runs sim/commsim on the corpus: `make check` builds it first (check-am needs all-am)
EXTRA_DIST += tests/scenarios docs topologies


check_PROGRAMS += tests/test_plot
TESTS += tests/test_plot
tests_test_plot_SOURCES = tests/test_plot.c tests/testutil.h
tests_test_plot_CFLAGS = $(TEST_CFLAGS)
tests_test_plot_LDADD = $(TEST_LIBS)

# Hardening: invariants under --check, limits, signals, determinism.
check_PROGRAMS += tests/test_hardening
TESTS += tests/test_hardening
tests_test_hardening_SOURCES = tests/test_hardening.c tests/testutil.h
tests_test_hardening_CFLAGS = $(TEST_CFLAGS)
tests_test_hardening_LDADD = $(TEST_LIBS)

# validate and run refuse alike: the bad and hardening corpora and the
# refusals found once the network is built
check_PROGRAMS += tests/test_refusals
TESTS += tests/test_refusals
tests_test_refusals_SOURCES = tests/test_refusals.c tests/testutil.h
tests_test_refusals_CFLAGS = $(TEST_CFLAGS)
tests_test_refusals_LDADD = $(TEST_LIBS)

# MPI sweeps: only in a build configured --with-mpi.
if MPI
check_PROGRAMS += tests/test_mpi
TESTS += tests/test_mpi
endif
tests_test_mpi_SOURCES = tests/test_mpi.c tests/testutil.h
tests_test_mpi_CFLAGS = $(TEST_CFLAGS)
tests_test_mpi_LDADD = $(TEST_LIBS)
