# Collectives: ps, ring, tree, halving-doubling, allgather as step lists.
sim_libcommsim_la_SOURCES += sim/collective/collective.c
pkginclude_HEADERS += include/commsim/collective.h
