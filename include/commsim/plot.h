/* plot.h - PNG plots of a run or sweep folder (gnuplot).
 *
 * A run folder: iteration.png (compute / codec / exposed communication per
 * iteration), utilization.png and queues.png (the busiest link directions
 * over time, from links.csv), messages_cdf.png (completion times).  A
 * sweep folder: iteration.png per point, and speedup.png (speedup over no
 * compression against bandwidth, one line per codec) when the sweep has a
 * bandwidth and a compression-method axis.
 */
#ifndef COMMSIM_PLOT_H
#define COMMSIM_PLOT_H

#include <glib.h>

/* The names (without extension) of the plots of a run folder, and the
 * extensions each is drawn in; NULL-terminated.  A new run into a folder
 * removes these: they would show the previous run. */
extern const char *const cs_plot_run_stems[];
extern const char *const cs_plot_formats[];

/* Draw what the folder's files allow; returns the PNG names written (to
 * free), or NULL with an error (gnuplot missing: the message says how to
 * install it). */
GPtrArray *cs_plot_dir(const char *dir, GError **error);

#endif
