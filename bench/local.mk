# Benchmarks: built by `make bench`, never run by `make check`.
EXTRA_PROGRAMS = bench/hold bench/routes
bench_hold_SOURCES = bench/hold.c
bench_hold_LDADD = sim/libcommsim.la
bench_routes_SOURCES = bench/routes.c
bench_routes_LDADD = sim/libcommsim.la
CLEANFILES = $(EXTRA_PROGRAMS)

bench: $(EXTRA_PROGRAMS)
.PHONY: bench
