/* sweep_launch.c - whether mpirun started this process (any build). */
#include "config.h"

#include <glib.h>

#include "sweep_mpi.h"

bool cs_sweep_mpi_launched(void) {
  return g_getenv("OMPI_COMM_WORLD_SIZE") || g_getenv("PMI_SIZE") || g_getenv("PMIX_RANK");
}
