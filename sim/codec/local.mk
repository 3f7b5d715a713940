# Gradient codecs (kernels, wire sizes, cost): see issue "Gradient codecs".
#
# The kernels are a library of their own so that they alone get the flags
# that let GCC vectorize them at -O2: its default "very cheap" cost model
# at -O2 gives up on loops that need an epilogue, and -ftrapping-math keeps
# it from if-converting selects that contain a float add.  Nothing in
# commsim reads the FPU's exception flags.
noinst_LTLIBRARIES += sim/codec/libcodeckernels.la
sim_codec_libcodeckernels_la_SOURCES = sim/codec/kernels.c sim/codec/kernels.h
sim_codec_libcodeckernels_la_CFLAGS = $(AM_CFLAGS) $(CODEC_VEC_CFLAGS)
# (configure drops the GCC-only ones for other compilers)

# A method family is one file holding its rows; methods.c is the table.
sim_libcommsim_la_SOURCES += sim/codec/codec.c sim/codec/codec_private.h sim/codec/methods.c \
	sim/codec/cast.c sim/codec/quantize.c sim/codec/sign.c sim/codec/sparse.c
sim_libcommsim_la_LIBADD += sim/codec/libcodeckernels.la
pkginclude_HEADERS += include/commsim/codec.h
EXTRA_DIST += docs/codecs.md

check_PROGRAMS += tests/test_codec
TESTS += tests/test_codec
tests_test_codec_SOURCES = tests/test_codec.c
tests_test_codec_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sim/codec
tests_test_codec_CFLAGS = $(TEST_CFLAGS)
tests_test_codec_LDADD = $(TEST_LIBS)
# The test also runs `commsim codecs`, which `make check` builds first (all).

# `make vec-report`: what GCC vectorized in the kernels (-fopt-info-vec).
vec-report:
	$(AM_V_at)$(COMPILE) $(CODEC_VEC_CFLAGS) -fopt-info-vec-optimized -c \
	  $(srcdir)/sim/codec/kernels.c -o /dev/null 2>&1 | sort -u | sort -t: -k2,2n -s
.PHONY: vec-report
