# Collectives: ps, ring, tree, halving-doubling, allgather as step lists.
sim_libcommsim_la_SOURCES += sim/collective/collective.c sim/collective/model.c sim/collective/fidelity.c
pkginclude_HEADERS += include/commsim/collective.h include/commsim/model.h

check_PROGRAMS += tests/test_collective
TESTS += tests/test_collective
tests_test_collective_SOURCES = tests/test_collective.c
tests_test_collective_CFLAGS = $(TEST_CFLAGS)
tests_test_collective_LDADD = $(TEST_LIBS)
