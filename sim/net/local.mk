# The network: topology generators, routing, links, queues, loss, transport, background traffic.
sim_libcommsim_la_SOURCES += sim/net/topology.c sim/net/routing.c \
	sim/net/net.c sim/net/msgstats.c sim/net/msgstats.h sim/net/fabric.c sim/net/fabric_packet.c sim/net/hybrid.c sim/net/fabric_flow.c sim/net/link.c sim/net/transport.c sim/net/background.c sim/net/loss.c sim/net/net_private.h \
	sim/net/cc/protocols.c sim/net/cc/fixed.c sim/net/cc/reno.c sim/net/cc/dctcp.c sim/net/cc/cubic.c sim/net/cc/bbr.c sim/net/cc/dcqcn.c \
	sim/net/topo/generators.c sim/net/topo/builder.h sim/net/topo/star.c sim/net/topo/ring.c sim/net/topo/dumbbell.c \
	sim/net/topo/fat_tree.c sim/net/topo/torus2d.c sim/net/topo/tree.c
pkginclude_HEADERS += include/commsim/topology.h include/commsim/routing.h \
	include/commsim/net.h include/commsim/loss.h include/commsim/cc.h include/commsim/fabric.h include/commsim/netstats.h

check_PROGRAMS += tests/test_topology
TESTS += tests/test_topology
tests_test_topology_SOURCES = tests/test_topology.c
tests_test_topology_CFLAGS = $(TEST_CFLAGS)
tests_test_topology_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_net
TESTS += tests/test_net
tests_test_net_SOURCES = tests/test_net.c tests/simutil.h
tests_test_net_CFLAGS = $(TEST_CFLAGS)
tests_test_net_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_flow
TESTS += tests/test_flow
tests_test_flow_SOURCES = tests/test_flow.c tests/testutil.h tests/simutil.h
tests_test_flow_CFLAGS = $(TEST_CFLAGS)
tests_test_flow_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_cc
TESTS += tests/test_cc
tests_test_cc_SOURCES = tests/test_cc.c tests/simutil.h
tests_test_cc_CFLAGS = $(TEST_CFLAGS)
tests_test_cc_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_pfc
TESTS += tests/test_pfc
tests_test_pfc_SOURCES = tests/test_pfc.c tests/simutil.h
tests_test_pfc_CFLAGS = $(TEST_CFLAGS)
tests_test_pfc_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_roce
TESTS += tests/test_roce
tests_test_roce_SOURCES = tests/test_roce.c tests/simutil.h
tests_test_roce_CFLAGS = $(TEST_CFLAGS)
tests_test_roce_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/test_hybrid
TESTS += tests/test_hybrid
tests_test_hybrid_SOURCES = tests/test_hybrid.c tests/testutil.h tests/simutil.h
tests_test_hybrid_CFLAGS = $(TEST_CFLAGS)
tests_test_hybrid_LDADD = $(TEST_LIBS)
