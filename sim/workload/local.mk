# Training iterations: compute, buckets, accumulation, async ps; and their
# closed-form estimate (commsim model).
sim_libcommsim_la_SOURCES += sim/workload/workload.c sim/workload/model.c sim/workload/convergence.c sim/workload/zoo.c
pkginclude_HEADERS += include/commsim/workload.h include/commsim/model.h include/commsim/convergence.h include/commsim/zoo.h

check_PROGRAMS += tests/test_convergence
TESTS += tests/test_convergence
tests_test_convergence_SOURCES = tests/test_convergence.c tests/simutil.h
tests_test_convergence_CFLAGS = $(TEST_CFLAGS)
tests_test_convergence_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_jobs
TESTS += tests/test_jobs
tests_test_jobs_SOURCES = tests/test_jobs.c tests/simutil.h
tests_test_jobs_CFLAGS = $(TEST_CFLAGS)
tests_test_jobs_LDADD = $(TEST_LIBS)
