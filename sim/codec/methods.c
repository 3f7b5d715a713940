/* methods.c - the codec methods' table: one row per method, each defined
 * in the file of its family beside this one (cast.c, quantize.c, sign.c,
 * sparse.c), in the order of CsCodecMethod, whose numbers payload headers
 * carry.  Adding one: its file, its row here and its name at the end of
 * CsCodecMethod; names, validation, wire sizes, costs and payloads read
 * the table. */
#include "config.h"

#include <string.h>

#include "commsim/codec.h"

extern const CsCodecMethodDef cs_codec_none, cs_codec_fp16, cs_codec_bf16, cs_codec_uniform,
    cs_codec_stochastic, cs_codec_topk, cs_codec_randk, cs_codec_sign, cs_codec_terngrad;

const CsCodecMethodDef *const cs_codec_methods[] = {
    &cs_codec_none, &cs_codec_fp16,  &cs_codec_bf16, &cs_codec_uniform,  &cs_codec_stochastic,
    &cs_codec_topk, &cs_codec_randk, &cs_codec_sign, &cs_codec_terngrad, NULL,
};
G_STATIC_ASSERT(G_N_ELEMENTS(cs_codec_methods) == CS_CODEC_N_METHODS + 1);

const CsCodecMethodDef *cs_codec_method_find(const char *name, CsCodecMethod *method) {
  for (CsCodecMethod m = 0; name && cs_codec_methods[m]; m++)
    if (!strcmp(cs_codec_methods[m]->name, name)) {
      if (method) *method = m;
      return cs_codec_methods[m];
    }
  return NULL;
}

const char *const *cs_codec_method_names(void) {
  static const char **names = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&names)) {
    const char **n = g_new0(const char *, G_N_ELEMENTS(cs_codec_methods));
    for (size_t i = 0; cs_codec_methods[i]; i++) n[i] = cs_codec_methods[i]->name;
    g_once_init_leave(&names, n);
  }
  return names;
}
