/* testutil.h - what the suites that run the program share. */
#ifndef COMMSIM_TESTUTIL_H
#define COMMSIM_TESTUTIL_H

#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* The source tree (for topologies/ and tests/scenarios/) and the build
 * tree (for sim/commsim), as `make check` exports them. */
static inline const char *test_srcdir(void) {
  const char *d = g_getenv("top_srcdir");
  return d ? d : ".";
}

static inline const char *test_builddir(void) {
  const char *d = g_getenv("top_builddir");
  return d ? d : ".";
}

/* Run `commsim ARGS...`; its exit status, stdout and stderr (to free). */
static inline int run_commsim(const char *const *args, char **out, char **err) {
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(argv, g_build_filename(test_builddir(), "sim", "commsim", NULL));
  for (const char *const *a = args; *a; a++) g_ptr_array_add(argv, g_strdup(*a));
  g_ptr_array_add(argv, NULL);
  int status = -1;
  GError *e = NULL;
  gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &e);
  ck_assert_msg(ok, "cannot run commsim: %s", e ? e->message : "?");
  g_ptr_array_free(argv, TRUE);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Remove a folder and everything in it. */
static inline void rm_rf(const char *path) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", path);
  ck_assert_int_eq(system(cmd), 0);
}

/* DIR/NAME's contents (to free), or NULL when it does not exist. */
static inline char *slurp(const char *dir, const char *name) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return NULL;
  return text;
}

/* A temporary .yaml file holding `text` (its path, to free and unlink). */
static inline char *write_temp_yaml(const char *text) {
  char *path = NULL;
  int fd = g_file_open_tmp("commsim-XXXXXX.yaml", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  return path;
}

/* Everything a pipe yields until it is closed (to free); closes it. */
static inline char *read_to_end(int fd) {
  GString *text = g_string_new(NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) g_string_append_len(text, buf, n);
  close(fd);
  return g_string_free(text, FALSE);
}

#endif
