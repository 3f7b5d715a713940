/* plot.h - plots of a run or sweep folder (gnuplot), each in PNG and PDF.
 *
 * A run folder: iteration (compute, codec work outside compute and
 * exposed communication per iteration: they add up to it), utilization
 * and queues (the link directions that carried and held the most, over
 * time, from links.csv), messages_cdf (completion times), convergence
 * (held-out loss and accuracy on the run's clock, from convergence.csv).
 * A sweep folder: iteration (the same breakdown per point, one bar each,
 * up to 300 points); iteration_vs_AXIS for every swept axis with numbers,
 * a line per value of the other axes together; speedup_vs_AXIS (over the
 * method none at the same other values) when a compression-method axis
 * holds none; with workload.convergence, time_to_target_vs_AXIS and
 * time_to_target_speedup_vs_AXIS the same way.
 *
 * Layer 0 (base; docs/design.md). Owns gnuplot scripts over a run or sweep
 * folder's files; does not touch simulator types: it reads files only.
 */
#ifndef COMMSIM_PLOT_H
#define COMMSIM_PLOT_H

#include <glib.h>

/* The names (without extension) of the plots of a run folder, and the
 * extensions each is drawn in; NULL-terminated.  A new run into a folder
 * removes these: they would show the previous run. */
extern const char *const cs_plot_run_stems[];
extern const char *const cs_plot_formats[];

/* Draw what the folder's files allow; returns the file names written (to
 * free), or NULL with an error: CS_SCENARIO_ERROR_INVALID for a folder
 * that is not there or not a run's or sweep's of commsim, IO for nothing
 * to draw or gnuplot missing (the message says how to install it) or
 * failing.  `notes` (may be NULL) gets what the plots leave out, as
 * sentences to show the user (strings to free). */
GPtrArray *cs_plot_dir(const char *dir, GPtrArray *notes, GError **error);

/* Add v x (the time of [a, b) in each bin) to acc[k] for the bins
 * [k bw, (k + 1) bw), k < bins, that the interval overlaps (the last bin
 * takes what lies past it): summed over a link's samples and divided by
 * bw, each bin holds the time-weighted mean of v over it. */
void cs_plot_spread(double *acc, unsigned bins, double bw, double a, double b, double v);

#endif
