/* rng.c - stream derivation and non-uniform draws for xoshiro256**. */
#include "config.h"

#include <glib.h>
#include <math.h>

#include "commsim/rng.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t mix64(uint64_t z) {
  uint64_t x = z;
  return splitmix64(&x);
}

void cs_rng_init(CsRng *rng, uint64_t seed, uint64_t stream) {
  /* Two rounds of mixing make (seed, stream) and (seed', stream') with
   * seed ^ stream == seed' ^ stream' land far apart. */
  uint64_t x = mix64(seed) ^ mix64(stream ^ 0x5851f42d4c957f2dULL) * 0x2545f4914f6cdd1dULL;
  for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
  if ((rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]) == 0) rng->s[0] = 1;
}

uint64_t cs_rng_stream_id(const char *tag, uint64_t a, uint64_t b) {
  /* FNV-1a over the tag, then mixed with the numbers. */
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char *p = (const unsigned char *)tag; *p; p++) {
    h ^= *p;
    h *= 0x100000001b3ULL;
  }
  h = mix64(h ^ mix64(a + 1));
  return mix64(h ^ mix64(b + 0x632be59bd9b4e019ULL));
}

unsigned int cs_int64_hash(const void *key) {
  uint64_t z = mix64((uint64_t)*(const int64_t *)key);
  return (unsigned int)(z ^ (z >> 32));
}

uint64_t cs_rng_below(CsRng *rng, uint64_t bound) {
  /* Lemire, "Fast random integer generation in an interval" (2019). */
  unsigned __int128 m = (unsigned __int128)cs_rng_next(rng) * bound;
  uint64_t l = (uint64_t)m;
  if (l < bound) {
    uint64_t t = -bound % bound;
    while (l < t) {
      m = (unsigned __int128)cs_rng_next(rng) * bound;
      l = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

double cs_rng_exponential(CsRng *rng, double mean) {
  /* u in (0, 1]: log never sees 0 (and log is cheaper than log1p). */
  double u = (double)((cs_rng_next(rng) >> 11) + 1) * 0x1.0p-53;
  return -mean * log(u);
}

double cs_rng_normal(CsRng *rng, double mu, double sigma) {
  double u, v, s;
  do {
    u = 2.0 * cs_rng_uniform(rng) - 1.0;
    v = 2.0 * cs_rng_uniform(rng) - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  return mu + sigma * u * sqrt(-2.0 * log(s) / s);
}

/* ---- the ziggurat for arrays of normals ----
 * Marsaglia and Tsang's ziggurat (2000) as Doornik corrected it (2005,
 * "An improved ziggurat method to generate normal random samples"): 128
 * layers of equal area V under the density, the base strip with its tail
 * beyond R.  The layer comes from the low 7 bits of one draw and the
 * abscissa from its high 53 bits, so the two are independent; 98.8 % of
 * the draws end at the first comparison. */
#define ZIG_C 128
#define ZIG_R 3.442619855899
#define ZIG_V 9.91256303526217e-3
static double zig_x[ZIG_C + 1], zig_ratio[ZIG_C];
static GOnce zig_once = G_ONCE_INIT;

static gpointer zig_init(gpointer unused) {
  (void)unused;
  double f = exp(-0.5 * ZIG_R * ZIG_R);
  zig_x[0] = ZIG_V / f; /* the base strip's width, tail included */
  zig_x[1] = ZIG_R;
  zig_x[ZIG_C] = 0;
  for (int i = 2; i < ZIG_C; i++) {
    zig_x[i] = sqrt(-2.0 * log(ZIG_V / zig_x[i - 1] + f));
    f = exp(-0.5 * zig_x[i] * zig_x[i]);
  }
  for (int i = 0; i < ZIG_C; i++) zig_ratio[i] = zig_x[i + 1] / zig_x[i];
  return NULL;
}

/* Uniform on (0, 1), never 0. */
static inline double open_uniform(CsRng *rng) { return ((double)(cs_rng_next(rng) >> 11) + 0.5) * 0x1.0p-53; }

static double zig_normal(CsRng *rng) {
  for (;;) {
    uint64_t r = cs_rng_next(rng);
    double u = 2.0 * ((double)(r >> 11) * 0x1.0p-53) - 1.0;
    unsigned i = (unsigned)(r & (ZIG_C - 1));
    if (fabs(u) < zig_ratio[i]) return u * zig_x[i]; /* inside the layer's rectangle */
    if (i == 0) { /* the tail beyond R (Marsaglia, 1964) */
      double x, y;
      do {
        x = log(open_uniform(rng)) / ZIG_R;
        y = log(open_uniform(rng));
      } while (-2.0 * y < x * x);
      return u < 0 ? x - ZIG_R : ZIG_R - x;
    }
    /* the wedge between the rectangle and the density */
    double x = u * zig_x[i];
    double f0 = exp(-0.5 * (zig_x[i] * zig_x[i] - x * x)), f1 = exp(-0.5 * (zig_x[i + 1] * zig_x[i + 1] - x * x));
    if (f1 + cs_rng_uniform(rng) * (f0 - f1) < 1.0) return x;
  }
}

void cs_rng_normal_fill(CsRng *rng, float *x, size_t n) {
  g_once(&zig_once, zig_init, NULL);
  for (size_t i = 0; i < n; i++) x[i] = (float)zig_normal(rng);
}

double cs_rng_lognormal(CsRng *rng, double mu, double sigma) {
  return exp(cs_rng_normal(rng, mu, sigma));
}

double cs_rng_lognormal_mean_cv(CsRng *rng, double mean, double cv) {
  if (cv <= 0.0) return mean;
  /* For lognormal: mean = exp(mu + s^2/2), cv^2 = exp(s^2) - 1. */
  double s2 = log1p(cv * cv);
  return cs_rng_lognormal(rng, log(mean) - 0.5 * s2, sqrt(s2));
}
