/* zoo.c - the model zoo (zoo.h): each model's parameter tensors, built
 * from its architecture as torchvision and Hugging Face transformers
 * define it, with the names those libraries give them. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "commsim/zoo.h"

static void layer_clear(gpointer p) { g_free(((CsLayer *)p)->name); }

GArray *cs_layers_new(void) {
  GArray *a = g_array_new(FALSE, TRUE, sizeof(CsLayer));
  g_array_set_clear_func(a, layer_clear);
  return a;
}

void cs_layers_free(GArray *layers) {
  if (layers) g_array_free(layers, TRUE);
}

static void tensor(GArray *L, int64_t params, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void tensor(GArray *L, int64_t params, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  CsLayer l = {g_strdup_vprintf(fmt, ap), params, 0, 0, 0};
  va_end(ap);
  g_array_append_val(L, l);
}

/* The module just appended ends here: its forward FLOPs go on its last tensor. */
static void flops(GArray *L, double f) { g_array_index(L, CsLayer, L->len - 1).flops += f; }

/* Conv2d (no bias) of k x k, cin -> cout, producing hw x hw. */
static void conv(GArray *L, const char *name, int64_t cin, int64_t cout, int64_t k, int64_t hw, bool bias) {
  tensor(L, cout * cin * k * k, "%s.weight", name);
  if (bias) tensor(L, cout, "%s.bias", name);
  flops(L, 2.0 * (double)(cin * k * k) * (double)cout * (double)(hw * hw));
}
static void batchnorm(GArray *L, const char *name, int64_t c) {
  tensor(L, c, "%s.weight", name);
  tensor(L, c, "%s.bias", name);
}
/* Linear in -> out with bias, applied to `tokens` vectors per sample. */
static void linear(GArray *L, const char *name, int64_t in, int64_t out, int64_t tokens) {
  tensor(L, in * out, "%s.weight", name);
  tensor(L, out, "%s.bias", name);
  flops(L, 2.0 * (double)in * (double)out * (double)tokens);
}
static void layernorm(GArray *L, const char *name, int64_t d) {
  tensor(L, d, "%s.weight", name);
  tensor(L, d, "%s.bias", name);
}

/* torchvision resnet50 (v1.5: the stride on the 3x3), 224 x 224 input. */
static void resnet50(GArray *L) {
  conv(L, "conv1", 3, 64, 7, 112, false);
  batchnorm(L, "bn1", 64);
  static const int blocks[4] = {3, 4, 6, 3};
  int64_t in = 64, hw = 56; /* after the stem's max pool */
  char n[64];
  for (int s = 0; s < 4; s++) {
    int64_t planes = 64 << s;
    for (int b = 0; b < blocks[s]; b++) {
      int64_t out_hw = (b == 0 && s > 0) ? hw / 2 : hw;
      g_snprintf(n, sizeof n, "layer%d.%d.conv1", s + 1, b);
      conv(L, n, in, planes, 1, hw, false);
      g_snprintf(n, sizeof n, "layer%d.%d.bn1", s + 1, b);
      batchnorm(L, n, planes);
      g_snprintf(n, sizeof n, "layer%d.%d.conv2", s + 1, b);
      conv(L, n, planes, planes, 3, out_hw, false);
      g_snprintf(n, sizeof n, "layer%d.%d.bn2", s + 1, b);
      batchnorm(L, n, planes);
      g_snprintf(n, sizeof n, "layer%d.%d.conv3", s + 1, b);
      conv(L, n, planes, 4 * planes, 1, out_hw, false);
      g_snprintf(n, sizeof n, "layer%d.%d.bn3", s + 1, b);
      batchnorm(L, n, 4 * planes);
      if (b == 0) {
        g_snprintf(n, sizeof n, "layer%d.%d.downsample.0", s + 1, b);
        conv(L, n, in, 4 * planes, 1, out_hw, false);
        g_snprintf(n, sizeof n, "layer%d.%d.downsample.1", s + 1, b);
        batchnorm(L, n, 4 * planes);
      }
      in = 4 * planes;
      hw = out_hw;
    }
  }
  linear(L, "fc", 2048, 1000, 1);
}

/* torchvision vgg16 (configuration D, no batch norm), 224 x 224 input. */
static void vgg16(GArray *L) {
  static const int cfg[] = {64, 64, -1, 128, 128, -1, 256, 256, 256, -1, 512, 512, 512, -1, 512, 512, 512, -1};
  int64_t in = 3, hw = 224;
  int idx = 0;
  char n[64];
  for (size_t i = 0; i < G_N_ELEMENTS(cfg); i++) {
    if (cfg[i] < 0) { /* max pool */
      hw /= 2;
      idx += 1;
      continue;
    }
    g_snprintf(n, sizeof n, "features.%d", idx);
    conv(L, n, in, cfg[i], 3, hw, true);
    in = cfg[i];
    idx += 2; /* the conv and its ReLU */
  }
  linear(L, "classifier.0", 512 * 7 * 7, 4096, 1);
  linear(L, "classifier.3", 4096, 4096, 1);
  linear(L, "classifier.6", 4096, 1000, 1);
}

/* A transformer layer's attention products (Q K^T and A V), per sample. */
static void attention_core(GArray *L, const char *name, int64_t d, int64_t seq) {
  tensor(L, 0, "%s", name);
  flops(L, 4.0 * (double)seq * (double)seq * (double)d);
}

/* Hugging Face BertModel, bert-large-uncased (24 layers, 1024 wide, 16
 * heads, 4096 feed-forward, 30522 tokens), with the pooler; 512 tokens. */
static void bert_large(GArray *L) {
  const int64_t d = 1024, ff = 4096, S = 512;
  tensor(L, 30522 * d, "embeddings.word_embeddings.weight");
  tensor(L, 512 * d, "embeddings.position_embeddings.weight");
  tensor(L, 2 * d, "embeddings.token_type_embeddings.weight");
  layernorm(L, "embeddings.LayerNorm", d);
  char n[96];
  for (int i = 0; i < 24; i++) {
    static const char *const qkv[] = {"query", "key", "value"};
    for (int k = 0; k < 3; k++) {
      g_snprintf(n, sizeof n, "encoder.layer.%d.attention.self.%s", i, qkv[k]);
      linear(L, n, d, d, S);
    }
    g_snprintf(n, sizeof n, "encoder.layer.%d.attention.self.scores", i);
    attention_core(L, n, d, S);
    g_snprintf(n, sizeof n, "encoder.layer.%d.attention.output.dense", i);
    linear(L, n, d, d, S);
    g_snprintf(n, sizeof n, "encoder.layer.%d.attention.output.LayerNorm", i);
    layernorm(L, n, d);
    g_snprintf(n, sizeof n, "encoder.layer.%d.intermediate.dense", i);
    linear(L, n, d, ff, S);
    g_snprintf(n, sizeof n, "encoder.layer.%d.output.dense", i);
    linear(L, n, ff, d, S);
    g_snprintf(n, sizeof n, "encoder.layer.%d.output.LayerNorm", i);
    layernorm(L, n, d);
  }
  linear(L, "pooler.dense", d, d, 1);
}

/* Hugging Face GPT2Model, gpt2-xl (48 layers, 1600 wide, 25 heads, 50257
 * tokens, 1024 positions), with the output head tied to wte; 1024 tokens. */
static void gpt2_xl(GArray *L) {
  const int64_t d = 1600, V = 50257, S = 1024;
  tensor(L, V * d, "wte.weight");
  tensor(L, 1024 * d, "wpe.weight");
  char n[64];
  for (int i = 0; i < 48; i++) {
    g_snprintf(n, sizeof n, "h.%d.ln_1", i);
    layernorm(L, n, d);
    g_snprintf(n, sizeof n, "h.%d.attn.c_attn", i);
    linear(L, n, d, 3 * d, S);
    g_snprintf(n, sizeof n, "h.%d.attn.scores", i);
    attention_core(L, n, d, S);
    g_snprintf(n, sizeof n, "h.%d.attn.c_proj", i);
    linear(L, n, d, d, S);
    g_snprintf(n, sizeof n, "h.%d.ln_2", i);
    layernorm(L, n, d);
    g_snprintf(n, sizeof n, "h.%d.mlp.c_fc", i);
    linear(L, n, d, 4 * d, S);
    g_snprintf(n, sizeof n, "h.%d.mlp.c_proj", i);
    linear(L, n, 4 * d, d, S);
  }
  layernorm(L, "ln_f", d);
  tensor(L, 0, "lm_head (tied to wte.weight)");
  flops(L, 2.0 * (double)d * (double)V * (double)S);
}

static const CsZooModel resnet50_m = {"resnet50", "torchvision ResNet-50 v1.5, 224x224 images: 25,557,032 parameters in 161 tensors",
                                      25557032, resnet50};
static const CsZooModel vgg16_m = {"vgg16", "torchvision VGG-16, 224x224 images: 138,357,544 parameters in 32 tensors",
                                   138357544, vgg16};
static const CsZooModel bert_m = {"bert-large", "BERT-large (BertModel with pooler), 512 tokens: 335,141,888 parameters in 391 tensors",
                                  335141888, bert_large};
static const CsZooModel gpt2_m = {"gpt2-xl", "GPT-2 XL (GPT2Model, head tied to the embedding), 1024 tokens: 1,557,611,200 parameters in 580 tensors",
                                  1557611200, gpt2_xl};

const CsZooModel *const cs_zoo[] = {&resnet50_m, &vgg16_m, &bert_m, &gpt2_m, NULL};

const CsZooModel *cs_zoo_find(const char *name) {
  for (size_t i = 0; name && cs_zoo[i]; i++)
    if (!strcmp(cs_zoo[i]->name, name)) return cs_zoo[i];
  return NULL;
}

const char *const *cs_zoo_names(void) {
  static const char **names = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&names)) {
    const char **n = g_new0(const char *, G_N_ELEMENTS(cs_zoo));
    for (size_t i = 0; cs_zoo[i]; i++) n[i] = cs_zoo[i]->name;
    g_once_init_leave(&names, n);
  }
  return names;
}

GArray *cs_zoo_layers(const CsZooModel *m) {
  GArray *a = cs_layers_new();
  m->build(a);
  return a;
}
