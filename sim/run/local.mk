# The run layer: one simulation assembled, run, traced, summed up and
# written (sim.h), and sweeps of many (sweep.h).
sim_libcommsim_la_SOURCES += sim/run/sim.c sim/run/control.c sim/run/traces.c sim/run/summary.c sim/run/writers.c \
	sim/run/sim_private.h sim/run/sweep.c sim/run/train.c
pkginclude_HEADERS += include/commsim/sim.h include/commsim/sweep.h

check_PROGRAMS += tests/test_run
TESTS += tests/test_run
tests_test_run_SOURCES = tests/test_run.c tests/testutil.h
tests_test_run_CFLAGS = $(TEST_CFLAGS)
tests_test_run_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_sweep
TESTS += tests/test_sweep
tests_test_sweep_SOURCES = tests/test_sweep.c tests/testutil.h
tests_test_sweep_CFLAGS = $(TEST_CFLAGS)
tests_test_sweep_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_traces
TESTS += tests/test_traces
tests_test_traces_SOURCES = tests/test_traces.c
tests_test_traces_CFLAGS = $(TEST_CFLAGS)
tests_test_traces_LDADD = $(TEST_LIBS)
