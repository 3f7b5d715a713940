/* convergence.c - a small model trained for real through the codec and
 * the collective (convergence.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/convergence.h"
#include "commsim/rng.h"

const char *const *cs_conv_task_names(void) {
  static const char *const names[] = {"logistic", "mlp", NULL};
  return names;
}

struct CsTrainer {
  CsConvergenceSpec spec;
  CsConvSetup setup;
  uint32_t P, d, C, H; /* workers, features, classes, hidden units (mlp) */
  uint64_t n;          /* parameters */
  float *x;            /* every worker's shard, then the test set: samples x d */
  uint8_t *y;
  uint64_t shard, test;
  float *theta;        /* the parameters */
  float *hist;         /* async ps: the last staleness + 1 parameter versions, a ring */
  uint32_t hist_len, hist_head;
  float *grads;        /* P x n */
  float *result;       /* n */
  double *exact;       /* n */
  float *work;         /* per-sample scratch: hidden pre-activations, activations, deltas, probabilities */
  CsCodec **codecs;    /* each worker's, with its error feedback */
  CsCodec *server;     /* the servers' pull encoding (no error feedback) */
  CsRng *rng;          /* each worker's mini-batch draws */
  uint64_t round;
  uint32_t iteration;
};

uint64_t cs_trainer_params(const CsTrainer *t) { return t->n; }

/* ---- the model ---- */

/* a . b in float, in 8 independent sums (the compiler may not reorder a
 * float reduction, so it cannot vectorize one; eight can). */
#if defined(__GNUC__) || defined(__clang__)
typedef float Lanes __attribute__((vector_size(32)));
static inline float dot(const float *a, const float *b, uint32_t n) {
  Lanes s = {0};
  uint32_t k = 0;
  for (; k + 8 <= n; k += 8) {
    Lanes x, y;
    memcpy(&x, a + k, sizeof x);
    memcpy(&y, b + k, sizeof y);
    s += x * y;
  }
  float r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; k < n; k++) r += a[k] * b[k];
  return r;
}

/* y += alpha x */
static inline void axpy(float *y, float alpha, const float *x, uint32_t n) {
  Lanes al = {alpha, alpha, alpha, alpha, alpha, alpha, alpha, alpha};
  uint32_t k = 0;
  for (; k + 8 <= n; k += 8) {
    Lanes vx, vy;
    memcpy(&vx, x + k, sizeof vx);
    memcpy(&vy, y + k, sizeof vy);
    vy += al * vx;
    memcpy(y + k, &vy, sizeof vy);
  }
  for (; k < n; k++) y[k] += alpha * x[k];
}
#else
static inline float dot(const float *a, const float *b, uint32_t n) {
  float r = 0;
  for (uint32_t k = 0; k < n; k++) r += a[k] * b[k];
  return r;
}

static inline void axpy(float *y, float alpha, const float *x, uint32_t n) {
  for (uint32_t k = 0; k < n; k++) y[k] += alpha * x[k];
}
#endif

/* Layout: logistic W (C x d), b (C); mlp W1 (H x d), b1 (H), W2 (C x H), b2 (C). */
static void forward(const CsTrainer *t, const float *th, const float *xi, float *pre, float *act, float *prob) {
  uint32_t d = t->d, C = t->C, H = t->H;
  const float *in = xi;
  uint32_t in_d = d;
  const float *W = th, *b;
  if (t->spec.task == CS_TASK_MLP) {
    b = th + (size_t)H * d;
    for (uint32_t h = 0; h < H; h++) {
      float s = b[h] + dot(W + (size_t)h * d, xi, d);
      pre[h] = s;
      act[h] = s > 0 ? s : 0.0f;
    }
    in = act;
    in_d = H;
    W = b + H;
  }
  b = W + (size_t)C * in_d;
  float max = -INFINITY;
  for (uint32_t c = 0; c < C; c++) {
    float s = b[c] + dot(W + (size_t)c * in_d, in, in_d);
    prob[c] = s;
    if (s > max) max = s;
  }
  float z = 0;
  for (uint32_t c = 0; c < C; c++) z += (prob[c] = expf(prob[c] - max));
  for (uint32_t c = 0; c < C; c++) prob[c] /= z;
}

/* g += the gradient of sample (xi, yi)'s cross-entropy, scaled by `scale`. */
static void backward(const CsTrainer *t, const float *th, const float *xi, uint32_t yi, float scale, float *g, float *pre,
                     float *act, float *prob) {
  uint32_t d = t->d, C = t->C, H = t->H;
  forward(t, th, xi, pre, act, prob);
  prob[yi] -= 1.0f; /* dL/dlogits */
  if (t->spec.task == CS_TASK_LOGISTIC) {
    float *gW = g, *gb = g + (size_t)C * d;
    for (uint32_t c = 0; c < C; c++) {
      float dz = prob[c] * scale;
      axpy(gW + (size_t)c * d, dz, xi, d);
      gb[c] += dz;
    }
    return;
  }
  const float *W2 = th + (size_t)H * d + H;
  float *gW1 = g, *gb1 = g + (size_t)H * d, *gW2 = gb1 + H, *gb2 = gW2 + (size_t)C * H;
  float *dh = pre + H; /* scratch after pre: H more floats */
  for (uint32_t h = 0; h < H; h++) dh[h] = 0;
  for (uint32_t c = 0; c < C; c++) {
    float dz = prob[c] * scale;
    float *w = gW2 + (size_t)c * H;
    const float *w2 = W2 + (size_t)c * H;
    for (uint32_t h = 0; h < H; h++) {
      w[h] += dz * act[h];
      dh[h] += dz * w2[h];
    }
    gb2[c] += dz;
  }
  for (uint32_t h = 0; h < H; h++) {
    if (pre[h] <= 0) continue;
    axpy(gW1 + (size_t)h * d, dh[h], xi, d);
    gb1[h] += dh[h];
  }
}

void cs_trainer_evaluate(const CsTrainer *t, double *loss, double *accuracy) {
  const float *xs = t->x + (size_t)t->P * t->shard * t->d;
  const uint8_t *ys = t->y + (size_t)t->P * t->shard;
  float *pre = t->work, *act = pre + 2 * t->H, *prob = act + t->H;
  double l = 0;
  uint64_t right = 0;
  for (uint64_t i = 0; i < t->test; i++) {
    forward(t, t->theta, xs + i * t->d, pre, act, prob);
    uint32_t best = 0;
    for (uint32_t c = 1; c < t->C; c++)
      if (prob[c] > prob[best]) best = c;
    right += best == ys[i];
    l -= log(fmax((double)prob[ys[i]], 1e-30));
  }
  *loss = l / (double)t->test;
  *accuracy = (double)right / (double)t->test;
}

/* ---- set-up ---- */

static void draw_samples(CsTrainer *t, const float *means, CsRng *rng, uint64_t count, float *x, uint8_t *y, int32_t own,
                         double h) {
  for (uint64_t i = 0; i < count; i++) {
    uint32_t c = own >= 0 && cs_rng_uniform(rng) < h ? (uint32_t)own : (uint32_t)cs_rng_below(rng, t->C);
    y[i] = (uint8_t)c;
    for (uint32_t k = 0; k < t->d; k++) x[i * t->d + k] = means[(size_t)c * t->d + k] + (float)cs_rng_normal(rng, 0, 1);
  }
}

CsTrainer *cs_trainer_new(const CsConvergenceSpec *spec, const CsConvSetup *setup, GError **error) {
  CsTrainer *t = g_new0(CsTrainer, 1);
  t->spec = *spec;
  t->setup = *setup;
  t->P = setup->workers;
  t->d = (uint32_t)spec->features;
  t->C = (uint32_t)spec->classes;
  t->H = spec->task == CS_TASK_MLP ? (uint32_t)spec->hidden : 0;
  t->n = t->H ? (uint64_t)t->H * t->d + t->H + (uint64_t)t->C * t->H + t->C : (uint64_t)t->C * t->d + t->C;
  t->shard = (uint64_t)spec->samples_per_worker;
  t->test = (uint64_t)spec->test_samples;
  uint64_t total = t->shard * t->P + t->test;
  t->x = g_new(float, total * t->d);
  t->y = g_new(uint8_t, total);
  /* the task: class means, then each shard, then the held-out set */
  CsRng rng;
  cs_rng_init(&rng, setup->seed, cs_rng_stream_id("convergence-task", t->d, t->C));
  float *means = g_new(float, (size_t)t->C * t->d);
  double sd = spec->separation / sqrt((double)t->d);
  for (size_t i = 0; i < (size_t)t->C * t->d; i++) means[i] = (float)cs_rng_normal(&rng, 0, sd);
  for (uint32_t w = 0; w < t->P; w++) {
    CsRng r;
    cs_rng_init(&r, setup->seed, cs_rng_stream_id("convergence-shard", w, 0));
    draw_samples(t, means, &r, t->shard, t->x + (size_t)w * t->shard * t->d, t->y + (size_t)w * t->shard,
                 (int32_t)(w % t->C), spec->heterogeneity);
  }
  CsRng r;
  cs_rng_init(&r, setup->seed, cs_rng_stream_id("convergence-test", 0, 0));
  draw_samples(t, means, &r, t->test, t->x + (size_t)t->P * t->shard * t->d, t->y + (size_t)t->P * t->shard, -1, 0);
  g_free(means);
  /* the model: zero for logistic regression; the MLP's weights drawn (He) */
  t->theta = g_new0(float, t->n);
  if (t->H) {
    CsRng wr;
    cs_rng_init(&wr, setup->seed, cs_rng_stream_id("convergence-init", t->H, t->d));
    for (uint64_t i = 0; i < (uint64_t)t->H * t->d; i++) t->theta[i] = (float)cs_rng_normal(&wr, 0, sqrt(2.0 / t->d));
    float *W2 = t->theta + (size_t)t->H * t->d + t->H;
    for (uint64_t i = 0; i < (uint64_t)t->C * t->H; i++) W2[i] = (float)cs_rng_normal(&wr, 0, sqrt(1.0 / t->H));
  }
  bool async = cs_collective_has(setup->collective, CS_COLLF_SERVERS) && !setup->sync;
  if (async) {
    t->hist_len = setup->staleness + 1;
    t->hist = g_new(float, (size_t)t->hist_len * t->n);
    for (uint32_t i = 0; i < t->hist_len; i++) memcpy(t->hist + (size_t)i * t->n, t->theta, t->n * sizeof(float));
  }
  t->grads = g_new(float, (size_t)t->P * t->n);
  t->result = g_new(float, t->n);
  t->exact = g_new(double, t->n);
  t->work = g_new(float, 3 * (size_t)MAX(t->H, 1) + t->C + 8);
  t->codecs = g_new0(CsCodec *, t->P);
  t->rng = g_new(CsRng, t->P);
  for (uint32_t w = 0; w < t->P; w++) {
    t->codecs[w] = cs_codec_new(&setup->codec, w, error);
    if (!t->codecs[w]) goto fail;
    cs_rng_init(&t->rng[w], setup->seed, cs_rng_stream_id("convergence-batch", w, 0));
  }
  CsCodecParams plain = setup->codec;
  plain.error_feedback = false;
  t->server = cs_codec_new(&plain, t->P, error);
  if (!t->server) goto fail;
  return t;
fail:
  cs_trainer_free(t);
  return NULL;
}

void cs_trainer_free(CsTrainer *t) {
  if (!t) return;
  for (uint32_t w = 0; t->codecs && w < t->P; w++) cs_codec_free(t->codecs[w]);
  cs_codec_free(t->server);
  g_free(t->codecs);
  g_free(t->rng);
  g_free(t->x);
  g_free(t->y);
  g_free(t->theta);
  g_free(t->hist);
  g_free(t->grads);
  g_free(t->result);
  g_free(t->exact);
  g_free(t->work);
  g_free(t);
}

/* ---- an iteration ---- */

/* Worker w's mini-batch gradient at parameters th, into g. */
static void gradient(CsTrainer *t, uint32_t w, const float *th, float *g) {
  memset(g, 0, t->n * sizeof(float));
  const float *xs = t->x + (size_t)w * t->shard * t->d;
  const uint8_t *ys = t->y + (size_t)w * t->shard;
  float *pre = t->work, *act = pre + 2 * t->H, *prob = act + t->H;
  float scale = 1.0f / (float)t->spec.batch;
  for (int64_t b = 0; b < t->spec.batch; b++) {
    uint64_t i = cs_rng_below(&t->rng[w], t->shard);
    backward(t, th, xs + i * t->d, ys[i], scale, g, pre, act, prob);
  }
}

/* The aggregate of grads[0..count) (workers first..first+count) as the
 * collective carries it, as a mean; its error against the exact mean
 * added to *num and *den. */
static bool diverged(const CsTrainer *t, GError **error) {
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_NONFINITE,
              "workload.convergence: the parameters diverged at iteration %u (lower lr)", t->iteration + 1);
  return false;
}

static bool aggregate(CsTrainer *t, uint32_t first, uint32_t count, double *num, double *den, GError **error) {
  t->round++;
  const float *g = t->grads + (size_t)first * t->n;
  /* parameters still finite can give a gradient that is not (an overflow
   * in the forward pass): that is the divergence, not a codec's failure
   * to encode it */
  for (uint64_t i = 0; i < (uint64_t)count * t->n; i++)
    if (!isfinite(g[i])) return diverged(t, error);
  if (!cs_coll_reduce_real(t->setup.collective, t->codecs + first, t->server, count, t->setup.group, g, t->n, t->round, t->setup.pull,
                           false, t->result, error))
    return false;
  for (uint64_t i = 0; i < t->n; i++) {
    double e = 0;
    for (uint32_t w = 0; w < count; w++) e += g[(size_t)w * t->n + i];
    e /= count;
    double r = (double)t->result[i] / count;
    t->result[i] = (float)r;
    *num += (r - e) * (r - e);
    *den += e * e;
  }
  return true;
}

bool cs_trainer_step(CsTrainer *t, CsConvPoint *out, GError **error) {
  double num = 0, den = 0;
  float lr = (float)t->spec.lr;
  if (!t->hist) { /* synchronous: every worker's gradient at the same parameters, one update with their mean */
    for (uint32_t w = 0; w < t->P; w++) gradient(t, w, t->theta, t->grads + (size_t)w * t->n);
    if (!aggregate(t, 0, t->P, &num, &den, error)) return false;
    for (uint64_t i = 0; i < t->n; i++) t->theta[i] -= lr * t->result[i];
  } else { /* asynchronous ps: each worker's gradient alone, at parameters `staleness` updates old */
    for (uint32_t w = 0; w < t->P; w++) {
      uint32_t oldest = (t->hist_head + 1) % t->hist_len; /* hist_len - 1 updates ago */
      gradient(t, w, t->hist + (size_t)oldest * t->n, t->grads + (size_t)w * t->n);
      if (!aggregate(t, w, 1, &num, &den, error)) return false;
      for (uint64_t i = 0; i < t->n; i++) t->theta[i] -= lr / (float)t->P * t->result[i];
      t->hist_head = (t->hist_head + 1) % t->hist_len;
      memcpy(t->hist + (size_t)t->hist_head * t->n, t->theta, t->n * sizeof(float));
    }
  }
  for (uint64_t i = 0; i < t->n; i++)
    if (!isfinite(t->theta[i])) return diverged(t, error);
  t->iteration++;
  out->iteration = t->iteration;
  out->grad_nmse = den > 0 ? num / den : 0;
  cs_trainer_evaluate(t, &out->loss, &out->accuracy);
  out->reached = t->spec.target_is_loss ? out->loss <= t->spec.target : out->accuracy >= t->spec.target;
  return true;
}
