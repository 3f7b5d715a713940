# Event engine, random streams, scratch arenas.
sim_libcommsim_la_SOURCES += sim/engine/engine.c sim/engine/rng.c sim/engine/arena.c
pkginclude_HEADERS += include/commsim/engine.h include/commsim/rng.h include/commsim/arena.h include/commsim/ring.h

check_PROGRAMS += tests/test_engine tests/test_rng
TESTS += tests/test_engine tests/test_rng
tests_test_engine_SOURCES = tests/test_engine.c
tests_test_engine_CFLAGS = $(TEST_CFLAGS)
tests_test_engine_LDADD = $(TEST_LIBS)
tests_test_rng_SOURCES = tests/test_rng.c
tests_test_rng_CFLAGS = $(TEST_CFLAGS)
tests_test_rng_LDADD = $(TEST_LIBS)
