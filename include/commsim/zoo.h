/* zoo.h - models whose gradients a workload carries: their parameter
 * tensors, in the order PyTorch's named_parameters() lists them, and the
 * forward FLOPs of the module each tensor belongs to.
 *
 * A layer here is one gradient tensor (DDP buckets tensors, not modules).
 * A module's forward FLOPs are put on its last tensor (a bias after its
 * weight), so that when the backward pass reaches the module, all of its
 * tensors become ready together.  Entries without parameters carry
 * compute only (attention's score products, a tied output head).
 * FLOPs count multiply-adds as 2 and cover convolutions, linear layers
 * and attention's products; normalization, activations and pooling are
 * counted as 0.  Backward is taken as twice the forward.
 *
 * Sources and checks: docs/training.md ("The model zoo").
 *
 * Layer 5 (workload; docs/design.md). Owns the zoo's table; does not touch
 * the network, scenarios.
 */
#ifndef COMMSIM_ZOO_H
#define COMMSIM_ZOO_H

#include <glib.h>
#include <stdint.h>

#include "commsim/time.h"

/* One gradient tensor (or a compute-only step) of a model, forward order. */
typedef struct {
  char *name;
  int64_t params;  /* elements; 0 for a compute-only step */
  double flops;    /* forward FLOPs per sample; < 0 when times are given instead */
  CsTime forward;  /* set from flops (workload.device) or given (workload.layers) */
  CsTime backward;
} CsLayer;

typedef struct {
  const char *name;
  const char *help;     /* one line: the model, its input, its parameter count */
  int64_t params;       /* the sum over its tensors (a test checks it) */
  void (*build)(GArray *layers); /* appends CsLayer in forward order */
} CsZooModel;

/* NULL-terminated. */
extern const CsZooModel *const cs_zoo[];
const CsZooModel *cs_zoo_find(const char *name);
const char *const *cs_zoo_names(void);

/* A new array of the model's layers (names owned by the array: free with
 * cs_layers_free). */
GArray *cs_zoo_layers(const CsZooModel *m);
GArray *cs_layers_new(void);
void cs_layers_free(GArray *layers);

#endif
