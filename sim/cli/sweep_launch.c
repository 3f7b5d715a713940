/* sweep_launch.c - whether mpirun started this process (any build). */
#include "config.h"

#include <glib.h>

#include "sweep_mpi.h"

static bool above_one(const char *var) {
  const char *v = g_getenv(var);
  return v && g_ascii_strtoll(v, NULL, 10) > 1;
}

bool cs_sweep_mpi_launched(void) {
  /* Open MPI's mpirun; MPICH's hydra; srun (PMIx sets no size: Slurm's) */
  return above_one("OMPI_COMM_WORLD_SIZE") || above_one("PMI_SIZE") ||
         (g_getenv("PMIX_RANK") && above_one("SLURM_STEP_NUM_TASKS"));
}
