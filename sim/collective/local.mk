# Collectives: the step machine, the table, one file per collective, their
# closed form and the error a codec leaves through them.
sim_libcommsim_la_SOURCES += sim/collective/collective.c sim/collective/collectives.c \
	sim/collective/ps.c sim/collective/ring.c sim/collective/hierarchical.c sim/collective/tree.c \
	sim/collective/halving_doubling.c sim/collective/allgather.c \
	sim/collective/closed_form.c sim/collective/fidelity.c
pkginclude_HEADERS += include/commsim/collective.h include/commsim/closed_form.h

check_PROGRAMS += tests/test_collective
TESTS += tests/test_collective
tests_test_collective_SOURCES = tests/test_collective.c tests/simutil.h
tests_test_collective_CFLAGS = $(TEST_CFLAGS)
tests_test_collective_LDADD = $(TEST_LIBS)
