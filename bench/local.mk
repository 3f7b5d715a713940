# Benchmarks: built by `make bench`, never run by `make check`.
EXTRA_PROGRAMS = bench/hold
bench_hold_SOURCES = bench/hold.c
bench_hold_LDADD = sim/libcommsim.la
CLEANFILES = $(EXTRA_PROGRAMS)

bench: $(EXTRA_PROGRAMS)
.PHONY: bench
