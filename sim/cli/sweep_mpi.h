/* sweep_mpi.h - a sweep's points across MPI ranks (configure --with-mpi). */
#ifndef COMMSIM_CLI_SWEEP_MPI_H
#define COMMSIM_CLI_SWEEP_MPI_H

#include <stdbool.h>

#include "commsim/sweep.h"

/* Whether this process was started by mpirun (or srun) as one of two or
 * more ranks (with one, a sweep needs no MPI). */
bool cs_sweep_mpi_launched(void);

#ifdef HAVE_MPI
/* Run the sweep on every rank of MPI_COMM_WORLD (MPI_Init to
 * MPI_Finalize); rank 0 writes DIR/sweep.csv and prints the summary.
 * Returns the exit status. */
int cs_sweep_mpi(CsSweep *sw, const char *dir, const CsSweepOptions *opt, bool quiet);
#endif

#endif
