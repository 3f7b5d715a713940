/* sweep_mpi.c - `mpirun -np N commsim sweep FILE.yaml -o DIR`: the points
 * of a sweep across MPI ranks (built with ./configure --with-mpi).
 *
 * Dynamic distribution: every rank runs `-j` threads; a rank other than 0
 * asks rank 0 for one point per thread (READY with its thread count) and
 * asks again with each result (RESULT), so a rank that draws slow points
 * simply asks less often.  Rank 0 hands out points in grid order (POINT)
 * or says there are none left (STOP), runs points in its own threads too,
 * collects every summary row and writes the one sweep.csv with the same
 * code as a single-process sweep, so the file is the same byte for byte.
 * Points write their folders themselves: DIR must be on a file system
 * that every rank sees (as on any cluster's shared home or scratch).
 *
 * Only the main thread of each rank calls MPI (MPI_THREAD_FUNNELED); the
 * threads talk to it through an asynchronous queue.
 *
 * Messages: READY and STOP carry one uint32 (the thread count; unused);
 * POINT one uint32 (the point's index); RESULT a uint32 index, a uint32
 * status (ok, failed, interrupted) and the row's fields separated by NUL
 * bytes, or the error message.
 */
#include "config.h"

#define _GNU_SOURCE /* sched_getaffinity */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "commsim/scenario.h"
#include "commsim/sweep.h"
#include "sweep_mpi.h"

enum { TAG_READY = 1, TAG_POINT, TAG_STOP, TAG_RESULT, TAG_ALIVE, TAG_BYE };

/* A rank other than 0 says it is alive every second (its main thread
 * only waits, whatever its points cost); rank 0 gives a rank up after
 * COMMSIM_MPI_TIMEOUT seconds of silence (default 60).  Only with
 * `mpirun --enable-recovery` do the others live on when a rank dies;
 * by default mpirun ends the whole job. */
static double silence_limit(void) {
  const char *t = g_getenv("COMMSIM_MPI_TIMEOUT");
  double s = t ? g_ascii_strtod(t, NULL) : 0;
  return s > 0 ? s : 60;
}

enum { ST_OK, ST_FAILED, ST_INTERRUPTED };

typedef struct {
  uint32_t index;
  uint32_t status;
  GByteArray *payload; /* fields NUL-separated, or the error message */
} Done;

typedef struct {
  CsSweep *sw;
  const char *dir;
  const CsSweepOptions *opt;
  GAsyncQueue *done; /* Done * */
} Local;

static void local_point(gpointer data, gpointer user) {
  Local *l = user;
  uint32_t index = GPOINTER_TO_UINT(data) - 1;
  GError *e = NULL;
  GPtrArray *row = cs_sweep_run_point(l->sw, index, l->dir, l->opt, &e);
  Done *d = g_new0(Done, 1);
  d->index = index;
  d->payload = g_byte_array_new();
  if (row) {
    d->status = ST_OK;
    for (guint i = 0; i < row->len; i++)
      g_byte_array_append(d->payload, (const guint8 *)row->pdata[i], (guint)strlen(row->pdata[i]) + 1);
    g_ptr_array_free(row, TRUE);
  } else {
    d->status = g_error_matches(e, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED) ? ST_INTERRUPTED : ST_FAILED;
    g_byte_array_append(d->payload, (const guint8 *)e->message, (guint)strlen(e->message) + 1);
  }
  g_clear_error(&e);
  g_async_queue_push(l->done, d);
}

static void done_free(Done *d) {
  g_byte_array_free(d->payload, TRUE);
  g_free(d);
}

static GPtrArray *unpack_row(const guint8 *p, gsize len) {
  GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
  for (gsize at = 0; at < len;) {
    gsize n = strnlen((const char *)p + at, len - at);
    g_ptr_array_add(row, g_strndup((const char *)p + at, n));
    at += n + 1;
  }
  return row;
}

static void send_u32(uint32_t v, int to, int tag) { MPI_Send(&v, 1, MPI_UINT32_T, to, tag, MPI_COMM_WORLD); }

/* ---- rank 0 ---- */

typedef struct {
  CsSweep *sw;
  const CsSweepOptions *opt;
  uint32_t *todo, n_todo, next;
  int *owner; /* per point: the rank running it, or -1 */
  GPtrArray **rows;
  char **errors;
  uint32_t results;
  uint64_t stops_sent, slots; /* remote threads told to stop, of all announced */
  int size, readies;
  uint32_t *rank_slots, *rank_stops; /* per rank */
  gint64 *heard;                     /* per rank: when it last said anything */
  bool *dead;                        /* per rank: given up */
  bool *bye;                         /* per rank: said its last word */
  int lost;                          /* ranks given up */
} Coordinator;

static bool stopping(const Coordinator *c) { return c->opt->interrupt && *c->opt->interrupt; }

/* One remote thread of `rank` is told there is nothing more for it. */
static void stop_thread(Coordinator *c, int rank) {
  send_u32(0, rank, TAG_STOP);
  c->stops_sent++;
  c->rank_stops[rank]++;
}

/* One remote thread of `rank` wants work: a point, or STOP. */
static void give(Coordinator *c, int rank) {
  if (c->next < c->n_todo && !stopping(c)) {
    uint32_t i = c->todo[c->next++];
    c->owner[i] = rank;
    send_u32(i, rank, TAG_POINT);
  } else {
    stop_thread(c, rank);
  }
}

/* A rank silent for too long: its points fail (a rerun runs them), its
 * threads count as stopped, and nothing more is sent to it. */
static void give_up(Coordinator *c, int rank) {
  c->dead[rank] = true;
  c->lost++;
  fprintf(stderr, "commsim sweep: rank %d has said nothing for %.0f s: given up\n", rank, silence_limit());
  if (c->rank_slots[rank] == 0) c->readies++; /* it never said READY */
  c->stops_sent += c->rank_slots[rank] - c->rank_stops[rank];
  for (uint32_t i = 0; i < cs_sweep_size(c->sw); i++)
    if (c->owner[i] == rank) {
      c->owner[i] = -1;
      c->results++;
      c->errors[i] = g_strdup_printf("rank %d: point %s: lost with its rank (run the sweep again to fill the gap)",
                                     rank, cs_sweep_point(c->sw, i)->name);
    }
}

static void record(Coordinator *c, int rank, uint32_t index, uint32_t status, const guint8 *p, gsize len) {
  c->results++;
  c->owner[index] = -1;
  if (status == ST_OK) {
    c->rows[index] = unpack_row(p, len);
  } else if (status == ST_FAILED) {
    g_autofree char *msg = g_strndup((const char *)p, len);
    c->errors[index] = g_strdup_printf("rank %d: %s", rank, msg);
  } else if (!stopping(c)) { /* that rank alone got a signal: the point is missing, say so */
    c->errors[index] = g_strdup_printf("rank %d: point %s: interrupted by a signal to that rank (run the sweep "
                                       "again to fill the gap)",
                                       rank, cs_sweep_point(c->sw, index)->name);
  }
}

static bool coordinate(CsSweep *sw, const char *dir, const CsSweepOptions *opt, int size, uint32_t *failed,
                       int *lost, GError **error) {
  uint32_t n = cs_sweep_size(sw);
  Coordinator c = {sw, opt, g_new(uint32_t, n + 1), 0, 0, g_new(int, n + 1), g_new0(GPtrArray *, n + 1),
                   g_new0(char *, n + 1), 0, 0, 0, size, 0, g_new0(uint32_t, size), g_new0(uint32_t, size),
                   g_new0(gint64, size), g_new0(bool, size), g_new0(bool, size), 0};
  for (int r = 0; r < size; r++) c.heard[r] = g_get_monotonic_time();
  gint64 limit = (gint64)(silence_limit() * 1e6);
  for (uint32_t i = 0; i < n; i++) {
    c.owner[i] = -1;
    if (cs_sweep_mine(opt, i)) c.todo[c.n_todo++] = i;
  }
  guint jobs = opt->jobs ? opt->jobs : g_get_num_processors();
  Local l = {sw, dir, opt, g_async_queue_new()};
  GThreadPool *pool = g_thread_pool_new(local_point, &l, (gint)jobs, TRUE, NULL);
  guint local_free = jobs;
  gint64 t0 = g_get_monotonic_time(), shown = 0;
  bool reported = false;
  gint64 stopped_at = 0;
  while (c.results < c.next || c.next < c.n_todo || c.readies < size - 1 || c.stops_sent < c.slots) {
    /* Stopped: once our threads are done, give the other ranks two seconds
     * to stop theirs cleanly (they got the signal too), not more: one may
     * be dead. */
    if (stopping(&c) && reported && local_free == jobs &&
        (c.results == c.next || g_get_monotonic_time() - stopped_at > 2000000))
      break;
    if (stopping(&c) && !reported) { /* say what is still running, and where */
      reported = true;
      stopped_at = g_get_monotonic_time();
      for (uint32_t i = 0; i < n; i++)
        if (c.owner[i] >= 0)
          fprintf(stderr, "commsim sweep: interrupted while rank %d ran point %s\n", c.owner[i],
                  cs_sweep_point(sw, i)->name);
    }
    while (local_free > 0 && c.next < c.n_todo && !stopping(&c)) {
      uint32_t i = c.todo[c.next++];
      c.owner[i] = 0;
      g_thread_pool_push(pool, GUINT_TO_POINTER(i + 1), NULL);
      local_free--;
    }
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
      int count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      guint8 *buf = g_malloc((gsize)count + 1);
      MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      c.heard[st.MPI_SOURCE] = g_get_monotonic_time();
      if (st.MPI_TAG == TAG_BYE) {
        c.bye[st.MPI_SOURCE] = true;
      } else if (c.dead[st.MPI_SOURCE]) {
        /* given up already: its points are failed; say nothing more to it */
      } else if ((st.MPI_TAG == TAG_READY && count != 4) || (st.MPI_TAG == TAG_RESULT && count < 8)) {
        fprintf(stderr, "commsim sweep: a malformed message from rank %d (tag %d, %d bytes)\n", st.MPI_SOURCE,
                st.MPI_TAG, count);
        give_up(&c, st.MPI_SOURCE);
      } else if (st.MPI_TAG == TAG_READY) {
        uint32_t threads;
        memcpy(&threads, buf, 4);
        c.readies++;
        c.slots += threads;
        c.rank_slots[st.MPI_SOURCE] = threads;
        for (uint32_t k = 0; k < threads; k++) give(&c, st.MPI_SOURCE);
      } else if (st.MPI_TAG == TAG_RESULT) {
        uint32_t head[2];
        memcpy(head, buf, 8);
        if (head[0] < n && c.owner[head[0]] == st.MPI_SOURCE)
          record(&c, st.MPI_SOURCE, head[0], head[1], buf + 8, (gsize)count - 8);
        else
          fprintf(stderr, "commsim sweep: rank %d sent a result for point %u, which it was not running: ignored\n",
                  st.MPI_SOURCE, head[0]);
        if (head[1] == ST_INTERRUPTED) /* that rank is stopping: no more points for it */
          stop_thread(&c, st.MPI_SOURCE);
        else
          give(&c, st.MPI_SOURCE);
      }
      g_free(buf);
      continue;
    }
    Done *d = g_async_queue_timeout_pop(l.done, 1000);
    if (d) {
      record(&c, 0, d->index, d->status, d->payload->data, d->payload->len);
      done_free(d);
      local_free++;
    }
    gint64 now = g_get_monotonic_time();
    for (int r = 1; r < size; r++) /* a rank done with every thread need not speak */
      if (!c.dead[r] && !(c.rank_slots[r] && c.rank_stops[r] == c.rank_slots[r]) && now - c.heard[r] > limit)
        give_up(&c, r);
    if (opt->progress && g_get_monotonic_time() - shown > 250000) {
      shown = g_get_monotonic_time();
      double el = (double)(shown - t0) * 1e-6;
      char eta[32] = "?";
      if (c.results) cs_sweep_format_eta(el / c.results * (c.n_todo - c.results), eta, sizeof eta);
      fprintf(stderr, "\r[commsim sweep] %u/%u points done on %d ranks, ETA %s   ", c.results, c.n_todo, size, eta);
      fflush(stderr);
    }
  }
  if (opt->progress) fputc('\n', stderr);
  /* Every live rank says BYE after its last message: receiving it (MPI
   * keeps each sender's order) leaves nothing unreceived for MPI_Finalize. */
  for (int r = 1; r < size && !stopping(&c); r++) {
    if (c.dead[r] || c.bye[r]) continue;
    for (;;) {
      MPI_Status st;
      MPI_Probe(r, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      int count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      guint8 *buf = g_malloc((gsize)count + 1);
      MPI_Recv(buf, count, MPI_BYTE, r, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      g_free(buf);
      if (st.MPI_TAG == TAG_BYE) break;
    }
  }
  g_thread_pool_free(pool, FALSE, TRUE);
  g_async_queue_unref(l.done);
  bool ok = cs_sweep_finish(sw, dir, opt, c.rows, c.errors, c.n_todo, failed, error);
  for (uint32_t i = 0; i < n; i++) {
    if (c.rows[i]) g_ptr_array_free(c.rows[i], TRUE);
    g_free(c.errors[i]);
  }
  g_free(c.rows);
  g_free(c.errors);
  g_free(c.todo);
  g_free(c.owner);
  g_free(c.rank_slots);
  g_free(c.rank_stops);
  g_free(c.heard);
  g_free(c.dead);
  g_free(c.bye);
  *lost = c.lost;
  return ok;
}

/* ---- the other ranks ---- */

static void work(CsSweep *sw, const char *dir, const CsSweepOptions *opt) {
  guint jobs = opt->jobs ? opt->jobs : g_get_num_processors();
  Local l = {sw, dir, opt, g_async_queue_new()};
  GThreadPool *pool = g_thread_pool_new(local_point, &l, (gint)jobs, TRUE, NULL);
  send_u32(jobs, 0, TAG_READY);
  guint open = jobs, running = 0;
  gint64 said = g_get_monotonic_time();
  while (open > 0 || running > 0) {
    if (opt->interrupt && *opt->interrupt && running == 0) break; /* stopped: no more points */
    if (g_get_monotonic_time() - said > 1000000) {
      send_u32(0, 0, TAG_ALIVE);
      said = g_get_monotonic_time();
    }
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
      uint32_t v;
      MPI_Recv(&v, 1, MPI_UINT32_T, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (st.MPI_TAG == TAG_POINT) {
        g_thread_pool_push(pool, GUINT_TO_POINTER(v + 1), NULL);
        running++;
      } else {
        open--;
      }
      continue;
    }
    Done *d = g_async_queue_timeout_pop(l.done, 1000);
    if (!d) continue;
    GByteArray *msg = g_byte_array_sized_new(8 + d->payload->len);
    g_byte_array_append(msg, (const guint8 *)&d->index, 4);
    g_byte_array_append(msg, (const guint8 *)&d->status, 4);
    g_byte_array_append(msg, d->payload->data, d->payload->len);
    MPI_Send(msg->data, (int)msg->len, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    g_byte_array_free(msg, TRUE);
    done_free(d);
    running--;
  }
  if (!(opt->interrupt && *opt->interrupt)) send_u32(0, 0, TAG_BYE);
  g_thread_pool_free(pool, FALSE, TRUE);
  g_async_queue_unref(l.done);
}

/* mpirun binds each rank to one core by default (for up to 2 ranks):
 * -j threads would then share it.  Say so, with the remedy. */
static void warn_binding(int rank, const CsSweepOptions *opt) {
  guint jobs = opt->jobs ? opt->jobs : g_get_num_processors();
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  int cores = CPU_COUNT(&set);
  if (cores < (int)jobs)
    fprintf(stderr,
            "commsim sweep: rank %d runs %u threads (-j) on %d core%s it is bound to: use mpirun --bind-to none, "
            "or --map-by slot:PE=%u\n",
            rank, jobs, cores, cores == 1 ? "" : "s", jobs);
}

int cs_sweep_mpi(CsSweep *sw, const char *dir, const CsSweepOptions *opt, bool quiet) {
  int provided, rank, size;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  warn_binding(rank, opt);
  int status = CS_EXIT_OK;
  CsSweepOptions o = *opt;
  if (rank != 0) o.progress = false;
  if (rank == 0) {
    g_autoptr(GError) error = NULL;
    uint32_t failed = 0;
    int lost = 0;
    if (g_mkdir_with_parents(dir, 0755) != 0) {
      fprintf(stderr, "%s: error: cannot create the output folder\n", dir);
      MPI_Abort(MPI_COMM_WORLD, CS_EXIT_RUNTIME);
    }
    if (!coordinate(sw, dir, &o, size, &failed, &lost, &error)) {
      fprintf(stderr, "%s\n", error->message);
      status = g_error_matches(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED) ? cs_cli_signal_status()
                                                                                          : CS_EXIT_RUNTIME;
    } else {
      if (!quiet) {
        uint32_t n = cs_sweep_size(sw), mine = 0;
        for (uint32_t i = 0; i < n; i++) mine += cs_sweep_mine(opt, i);
        printf("%u of %u points%s in %s/sweep.csv (%d MPI ranks)", mine - failed, n,
               opt->shard_n ? " (this shard's)" : "", dir, size);
        printf(failed ? "; %u failed (see above)\n" : "\n", failed);
      }
      status = failed ? CS_EXIT_RUNTIME : CS_EXIT_OK;
    }
    if (lost) {
      /* a rank given up for dead cannot take part in MPI_Finalize: end the
       * job here, every result being written */
      fflush(stdout);
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, status ? status : CS_EXIT_RUNTIME);
    }
  } else {
    work(sw, dir, &o);
    if (opt->interrupt && *opt->interrupt) status = cs_cli_signal_status();
  }
  fflush(stdout);
  fflush(stderr);
  /* Interrupted (mpirun is ending the job, or the user): every point of
   * this rank has stopped cleanly; the other ranks may be gone, so no
   * collective MPI_Finalize. */
  if (opt->interrupt && *opt->interrupt) _exit(status);
  MPI_Finalize();
  return status;
}
