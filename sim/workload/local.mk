# Training iterations: compute, buckets, accumulation, async ps.
sim_libcommsim_la_SOURCES += sim/workload/workload.c
pkginclude_HEADERS += include/commsim/workload.h
