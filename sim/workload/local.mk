# Training iterations: compute, buckets, accumulation, async ps; and their
# closed-form estimate (commsim model).
sim_libcommsim_la_SOURCES += sim/workload/workload.c sim/workload/model.c
pkginclude_HEADERS += include/commsim/workload.h include/commsim/model.h
