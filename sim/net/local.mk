# The network: topology generators and routing (later: links, queues, loss, transport).
sim_libcommsim_la_SOURCES += sim/net/topology.c sim/net/routing.c
pkginclude_HEADERS += include/commsim/topology.h include/commsim/routing.h

check_PROGRAMS += tests/test_topology
TESTS += tests/test_topology
tests_test_topology_SOURCES = tests/test_topology.c
tests_test_topology_CFLAGS = $(TEST_CFLAGS)
tests_test_topology_LDADD = $(TEST_LIBS)
