/* collectives.c - the collectives' table: one row per collective, each
 * defined in its own file beside this one (ring.c, tree.c, ...), in the
 * order the built-in ones are numbered (CsCollective).  Adding one: its
 * file and its row here; the scenario reader, validate, model, --help and
 * the docs' test read the table. */
#include "config.h"

#include <string.h>

#include "commsim/collective.h"

extern const CsCollectiveDef cs_coll_ps, cs_coll_ring, cs_coll_tree, cs_coll_halving_doubling, cs_coll_allgather,
    cs_coll_hierarchical;

const CsCollectiveDef *const cs_collectives[] = {
    &cs_coll_ps, &cs_coll_ring, &cs_coll_tree, &cs_coll_halving_doubling, &cs_coll_allgather, &cs_coll_hierarchical, NULL,
};

const CsCollectiveDef *cs_collective_find(const char *name, CsCollective *c) {
  for (CsCollective i = 0; name && cs_collectives[i]; i++)
    if (!strcmp(cs_collectives[i]->name, name)) {
      if (c) *c = i;
      return cs_collectives[i];
    }
  return NULL;
}

const char *const *cs_collective_names(void) {
  static const char **names = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&names)) {
    const char **n = g_new0(const char *, G_N_ELEMENTS(cs_collectives));
    for (size_t i = 0; cs_collectives[i]; i++) n[i] = cs_collectives[i]->name;
    g_once_init_leave(&names, n);
  }
  return names;
}

char *cs_collective_codec_refusal(CsCollective c, CsCodecMethod m) {
  if (!cs_collective_has(c, CS_COLLF_REDUCES) || cs_codec_method_summable(m)) return NULL;
  /* the collectives that decode every payload instead of adding them on the way */
  GString *names = g_string_new(NULL);
  size_t total = 0, count = 0;
  for (size_t i = 0; cs_collectives[i]; i++) total += !(cs_collectives[i]->flags & CS_COLLF_REDUCES);
  for (size_t i = 0; cs_collectives[i]; i++) {
    if (cs_collectives[i]->flags & CS_COLLF_REDUCES) continue;
    if (count > 0) g_string_append(names, count + 1 == total ? " or " : ", ");
    g_string_append(names, cs_collectives[i]->name);
    count++;
  }
  char *msg = g_strdup_printf("compression method '%s' cannot be carried by collective '%s': %s; use %s",
                              cs_codec_method_name(m), cs_collectives[c]->name, cs_codec_why_not_summable(m), names->str);
  g_string_free(names, TRUE);
  return msg;
}
