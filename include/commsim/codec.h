/* codec.h - gradient compression: real quantization kernels, their wire
 * sizes, their compute cost and the error they introduce (SPEC section 4).
 *
 * Two layers.  The method layer (CsCodecParams, cs_codec_wire_bits(),
 * cs_codec_method_collectives(), cs_codec_cost_resolve()) is arithmetic on
 * parameters only: the collectives use it on the simulated path, where no
 * gradient exists.  The kernel layer (CsCodec, cs_codec_encode(),
 * cs_codec_decode() and the aggregation helpers) runs on real float
 * arrays: `commsim codecs` and the run summary's codec_nmse measure with it.
 *
 * Codecs are pure functions of their input, their parameters and a seed:
 * no engine, no network, no global state.  A CsCodec is one worker's
 * encoder: its parameters, its error-feedback residual and buffers reused
 * from call to call (top-k's candidates, the x + e sum), so nothing is
 * allocated per element.  Payloads are in-memory messages in host byte
 * order, self-describing (a 64-byte header), checked before they are read.
 *
 * Layer 1 (models; docs/design.md). Owns codec parameters, wire sizes, costs
 * and kernels; does not touch the engine (only rng.h), the network,
 * collectives, scenarios.
 */
#ifndef COMMSIM_CODEC_H
#define COMMSIM_CODEC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsim/time.h"

#define CS_CODEC_ERROR (cs_codec_error_quark())
GQuark cs_codec_error_quark(void);
typedef enum {
  CS_CODEC_ERROR_INVALID,    /* bad name, parameter or argument */
  CS_CODEC_ERROR_NONFINITE,  /* NaN or infinity where it cannot be encoded */
  CS_CODEC_ERROR_PAYLOAD,    /* malformed payload, or payloads that do not match */
  CS_CODEC_ERROR_COLLECTIVE, /* a collective that cannot carry the method */
} CsCodecError;

typedef enum {
  CS_CODEC_NONE,
  CS_CODEC_FP16,
  CS_CODEC_BF16,
  CS_CODEC_UNIFORM,
  CS_CODEC_STOCHASTIC,
  CS_CODEC_TOPK,
  CS_CODEC_RANDK,
  CS_CODEC_SIGN,
  CS_CODEC_TERNGRAD,
  CS_CODEC_N_METHODS
} CsCodecMethod;

/* The uncompressed gradient's element type: what `none` sends and what
 * top-k and rand-k send their values in. */
typedef enum { CS_DTYPE_FP32, CS_DTYPE_FP16, CS_DTYPE_BF16, CS_DTYPE_FP64, CS_DTYPE_N } CsDtype;

/* The SPEC's `compression:` keys. */
typedef struct {
  CsCodecMethod method;
  CsDtype dtype;
  int bits;            /* uniform, stochastic: bits per element, 1..16 */
  double ratio;        /* topk, randk: share of elements sent, (0, 1] */
  int index_bits;      /* topk: wire bits per index, 0..64 (0 = count values only) */
  int64_t bucket;      /* uniform, stochastic, sign, terngrad: elements per scale, >= 1 */
  bool error_feedback; /* keep the residual on each worker */
  uint64_t seed;       /* randk's shared indices; stochastic and terngrad rounding */
} CsCodecParams;

#define CS_CODEC_DEFAULT_BITS 8
#define CS_CODEC_DEFAULT_RATIO 0.01
#define CS_CODEC_DEFAULT_INDEX_BITS 32
#define CS_CODEC_DEFAULT_BUCKET 512
/* Kernels take at most this many elements (indices are 32-bit); the method
 * layer takes any count. */
#define CS_CODEC_MAX_ELEMENTS ((uint64_t)UINT32_MAX)

/* Method none, fp32 and the SPEC defaults above. */
void cs_codec_params_init(CsCodecParams *params);
/* Checks every field a method uses (the others are ignored). */
bool cs_codec_params_validate(const CsCodecParams *params, GError **error);
/* "uniform b=8 m=512", "topk r=0.01 idx=32", "none fp32": for tables. */
char *cs_codec_params_describe(const CsCodecParams *params);

/* Names, as in the SPEC.  Parse errors list the accepted names. */
bool cs_codec_method_parse(const char *text, CsCodecMethod *method, GError **error);
const char *cs_codec_method_name(CsCodecMethod method);
bool cs_dtype_parse(const char *text, CsDtype *dtype, GError **error);
const char *cs_dtype_name(CsDtype dtype);
/* The dtypes' names in CsDtype order, NULL-terminated. */
const char *const *cs_dtype_names(void);
int cs_dtype_bits(CsDtype dtype);

/* ---- method layer: no kernel runs ---- */

/* k = ceil(ratio * n) elements kept by topk and randk, at least 1 when
 * n > 0.  A product within 1e-9 (relative) of an integer counts as that
 * integer, so that 0.07 * 100 is 7: the double nearest 0.07 lies above it. */
uint64_t cs_codec_k(double ratio, uint64_t n);
/* Bits on the wire for n elements, the SPEC table exactly (metadata such as
 * bucket scales and indices included).  Saturates at UINT64_MAX. */
uint64_t cs_codec_wire_bits(const CsCodecParams *params, uint64_t n);
/* Whether two payloads combine into one payload of the same size at a
 * reduction hop (decode, add, encode; rand-k adds its values in place),
 * which is what ring, tree and halving-doubling need. */
bool cs_codec_method_summable(CsCodecMethod method);
/* Why a method's payloads cannot be added at a reduction hop (for
 * messages): "each worker keeps different indices, ...". */
const char *cs_codec_why_not_summable(CsCodecMethod method);

/* Collectives, as a mask (their names are the SPEC's). */
typedef enum {
  CS_CODEC_COLL_PS = 1u << 0,
  CS_CODEC_COLL_RING = 1u << 1,
  CS_CODEC_COLL_TREE = 1u << 2,
  CS_CODEC_COLL_HALVING_DOUBLING = 1u << 3,
  CS_CODEC_COLL_ALLGATHER = 1u << 4,
  CS_CODEC_COLL_HIERARCHICAL = 1u << 5,
} CsCodecCollective;
#define CS_CODEC_COLL_ALL 0x3fu

bool cs_codec_collective_parse(const char *text, CsCodecCollective *collective, GError **error);
const char *cs_codec_collective_name(CsCodecCollective collective);
/* The collectives that can carry a method's payloads. */
unsigned cs_codec_method_collectives(CsCodecMethod method);
/* NULL when `collective` can carry `method`; otherwise a message (to free)
 * that says why not and names the collectives that can.  An unknown
 * collective name gets a message listing the names. */
char *cs_codec_collective_refusal(CsCodecMethod method, const char *collective);
/* The same as a check: false with CS_CODEC_ERROR_COLLECTIVE (or _INVALID
 * for an unknown name) and the refusal as the message. */
bool cs_codec_check_collective(CsCodecMethod method, const char *collective, GError **error);

/* Compute cost per element of the uncompressed gradient, in picoseconds
 * (fractional: a speedup of 50 makes 0.2 ns 4 ps): encoding, decoding, and
 * `reduce`, the arithmetic that folds one more payload into a sum at a
 * reduction hop (charged for `none` too). */
typedef struct {
  double encode_ps;
  double decode_ps;
  double reduce_ps;
} CsCodecCost;

/* `compression.cost`: a field set to CS_CODEC_COST_DEFAULT keeps the
 * default; a set field is used as it is (speedup does not scale it). */
typedef struct {
  CsTime encode;
  CsTime decode;
  CsTime reduce;
} CsCodecCostOverride;
#define CS_CODEC_COST_DEFAULT ((CsTime)-1)

/* The measured defaults for a method, at speedup 1 (see codec.c for the
 * command and date that produced them). */
CsCodecCost cs_codec_cost_default(CsCodecMethod method);
/* default / speedup, then the override's set fields.  speedup must be
 * finite and > 0; override may be NULL. */
bool cs_codec_cost_resolve(CsCodecMethod method, double speedup,
                           const CsCodecCostOverride *override, CsCodecCost *cost,
                           GError **error);
/* n elements at ps_per_element, rounded to the nearest picosecond;
 * CS_TIME_MAX when it does not fit (the engine then reports the overflow). */
CsTime cs_codec_cost_time(double ps_per_element, uint64_t n);

/* ---- the methods: one row each ----
 * A method is a row (CsCodecMethodDef) in the file of its family under
 * sim/codec/ (cast.c: none, fp16, bf16; quantize.c: uniform, stochastic,
 * terngrad; sign.c; sparse.c: topk, randk).  The table (methods.c) lists
 * the rows in CsCodecMethod's order: a method's number is its row, and the
 * number a payload's header carries.  Adding one: its file, its row in
 * methods.c and its name at the end of CsCodecMethod.
 *
 * Which CsCodecParams fields a method reads (validation checks them, a
 * payload's header keeps them, the others are ignored): */
enum {
  CS_CODEC_USES_BITS = 1u << 0,       /* bits, 1..16: the width of its codes */
  CS_CODEC_USES_RATIO = 1u << 1,      /* ratio: it sends k = cs_codec_k(ratio, n) values, not n */
  CS_CODEC_USES_INDEX_BITS = 1u << 2, /* index_bits, 0..64: wire bits per value's index */
  CS_CODEC_USES_BUCKET = 1u << 3,     /* bucket, >= 1: elements per scale */
};

/* A method's payload hooks (encode, decode, a reduction hop), in the
 * private sim/codec/codec_private.h: only the codec's files frame
 * payloads. */
typedef struct CsCodecKernelOps CsCodecKernelOps;

typedef struct {
  const char *name; /* as in the SPEC */
  const char *help; /* one line: what it sends */
  unsigned uses;    /* CS_CODEC_USES_* */
  /* cs_codec_method_summable(); a method that is not says why (for
   * messages: "each worker keeps different indices, ...") */
  bool summable;
  const char *why_not_summable;
  CsCodecCost cost; /* the measured defaults, at speedup 1 */
  /* its parameters for tables, appended to out: "b=8 m=512" */
  void (*describe)(const CsCodecParams *params, GString *out);
  /* the SPEC's wire bits for n elements of which the payload carries k
   * values (k = n unless it uses ratio), saturated at UINT64_MAX */
  uint64_t (*wire_bits)(const CsCodecParams *params, uint64_t n, uint64_t k);
  const CsCodecKernelOps *kernel;
} CsCodecMethodDef;

/* The table (methods.c): indexed by CsCodecMethod, terminated by NULL. */
extern const CsCodecMethodDef *const cs_codec_methods[];
/* The row of `name`, or NULL; its number into *method when method is not
 * NULL. */
const CsCodecMethodDef *cs_codec_method_find(const char *name, CsCodecMethod *method);
/* The names in table order, NULL-terminated (for messages and the
 * scenario reader). */
const char *const *cs_codec_method_names(void);
/* The row of a method, or NULL for a number outside the table. */
static inline const CsCodecMethodDef *cs_codec_method_def(CsCodecMethod method) {
  return (unsigned)method < CS_CODEC_N_METHODS ? cs_codec_methods[method] : NULL;
}

/* A scenario's workload.compression section. */
typedef struct {
  CsCodecMethod method;
  int64_t bits;
  double ratio;
  int64_t index_bits;
  int64_t bucket;
  bool error_feedback;
  bool cost_set;      /* compression.cost given (then speedup does not apply) */
  CsTime cost_encode; /* per element, ps */
  CsTime cost_decode;
  CsTime cost_reduce;
  double speedup; /* divides the default (measured) costs */
} CsCompressionSpec;

/* The codec parameters and costs a compression section gives for a
 * gradient of `dtype`, `seed` driving its random choices. */
bool cs_codec_from_spec(const CsCompressionSpec *c, CsDtype dtype, uint64_t seed, CsCodecParams *params,
                        CsCodecCost *cost, GError **error);

/* ---- kernel layer ---- */

typedef struct CsCodec CsCodec;

/* One worker's encoder.  `worker` keeps the rounding noise of stochastic
 * and terngrad independent between workers (randk's indices do not depend
 * on it: every worker must pick the same ones). */
CsCodec *cs_codec_new(const CsCodecParams *params, uint64_t worker, GError **error);
void cs_codec_free(CsCodec *codec);
/* Let go of the codec's scratch buffers, keeping its state (error
 * feedback's residual): for a codec that is done for a while. */
void cs_codec_release_scratch(CsCodec *codec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsCodec, cs_codec_free)
const CsCodecParams *cs_codec_get_params(const CsCodec *codec);

/* Bytes a payload of n elements takes (header and alignment included). */
size_t cs_codec_payload_size(const CsCodecParams *params, uint64_t n);

/* Encode x[0..n) into out (out_cap bytes, 8-byte aligned, as malloc gives)
 * and set *out_len.  `round` names this encoding: with the seed it selects
 * randk's indices (same on every worker) and, with the worker, the random
 * stream of stochastic and terngrad; use a new one per iteration.
 * With error feedback, x + e is encoded and e becomes x + e - decode, where
 * e starts at zero and keeps n elements for the codec's life.
 * Non-finite input: see docs/codecs.md; on failure out is unspecified and
 * the residual is unchanged. */
bool cs_codec_encode(CsCodec *codec, uint64_t round, const float *x, size_t n, void *out,
                     size_t out_cap, size_t *out_len, GError **error);

/* Which instruction set the kernels run with on this CPU, for reports:
 * "avx2+f16c", "sse2+f16c" or "baseline". */
const char *cs_codec_kernel_isa(void);

/* What a payload holds. */
typedef struct {
  CsCodecMethod method;
  CsDtype dtype;
  int bits;       /* bits per code (uniform, stochastic: b; sign 1; terngrad 2) */
  int index_bits; /* topk */
  uint64_t n;     /* elements of the gradient */
  uint64_t k;     /* values carried (topk, randk); n otherwise */
  uint64_t bucket;
  uint64_t wire_bits; /* the SPEC formula for this payload */
} CsCodecPayloadInfo;

bool cs_codec_payload_info(const void *payload, size_t len, CsCodecPayloadInfo *info,
                           GError **error);
/* out[0..n) = decode(payload); n must be the payload's. */
bool cs_codec_decode(const void *payload, size_t len, float *out, size_t n, GError **error);
/* acc[0..n) += decode(payload): how a server or a reduction hop sums. */
bool cs_codec_decode_add(const void *payload, size_t len, float *acc, size_t n, GError **error);

/* The error-feedback residual (NULL before the first encode or without
 * error feedback), and its length. */
const float *cs_codec_residual(const CsCodec *codec, size_t *n);

/* ---- aggregation helpers for the collectives ----
 * Their output buffer must not overlap their inputs. */

/* acc[0..n) += y[0..n): the addition at a reduction hop, vectorized (what
 * the `reduce` cost measures for dense methods). */
void cs_codec_add(float *acc, const float *y, size_t n);

/* A reduction hop of a summable method: out = encode(decode(a) + decode(b))
 * with the codec's parameters, no error feedback; randk adds its values in
 * place (a and b must share seed and round).  out_cap >= the payload size. */
bool cs_codec_reduce(CsCodec *codec, uint64_t round, const void *a, size_t a_len, const void *b,
                     size_t b_len, void *out, size_t out_cap, size_t *out_len, GError **error);
/* Sum of two topk (or randk) payloads of the same gradient as one sparse
 * payload: the union of their indices, values added where both have one
 * (nothing is dropped, so k may grow up to k_a + k_b).  out_cap >= a_len +
 * b_len always suffices. */
bool cs_codec_sparse_merge(const void *a, size_t a_len, const void *b, size_t b_len, void *out,
                           size_t out_cap, size_t *out_len, GError **error);
/* signSGD's majority vote of `count` sign payloads of one gradient: each
 * element's sign is the majority's (a tie votes +), each bucket's scale
 * is the mean of the voters' scales. */
bool cs_codec_sign_vote(const void *const *payloads, const size_t *lens, size_t count, void *out,
                        size_t out_cap, size_t *out_len, GError **error);

#endif
