/* test_docs.c - what the README shows is what the program prints.
 *
 * Every fenced block of README.md whose lines start with "$ sim/commsim"
 * is run: each command in a scratch folder that holds topologies/ and
 * sim/commsim (so output paths read as in the README), the commands of
 * one block in order, and its output (stdout when it succeeds, stderr
 * when it fails) compared with the lines below it, "..." standing for
 * any lines left out.  And the README stands alone: it cites no file
 * outside the repository.  No table of the README or of docs/ is cut in
 * two by a blank line (the rows after it would show as a paragraph). */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Whether `act` matches `exp`, where an expected "..." matches any run of
 * lines (none included). */
static bool match(char **exp, guint ne, char **act, guint na) {
  if (ne == 0) return na == 0;
  if (!strcmp(exp[0], "...")) {
    for (guint k = 0; k <= na; k++)
      if (match(exp + 1, ne - 1, act + k, na - k)) return true;
    return false;
  }
  return na > 0 && !strcmp(exp[0], act[0]) && match(exp + 1, ne - 1, act + 1, na - 1);
}

static GPtrArray *lines_of(const char *text) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) l = g_strsplit(text, "\n", -1);
  guint n = g_strv_length(l);
  while (n > 0 && !*l[n - 1]) n--; /* the final newline */
  for (guint i = 0; i < n; i++) g_ptr_array_add(out, g_strchomp(g_strdup(l[i])));
  return out;
}

typedef struct {
  char *command; /* after "$ " */
  GPtrArray *want;
} Sample;

static void run_sample(const char *scratch, const Sample *s, bool have_gnuplot) {
  gint argc = 0;
  g_auto(GStrv) argv = NULL;
  ck_assert_msg(g_shell_parse_argv(s->command, &argc, &argv, NULL), "cannot parse: %s", s->command);
  if (!strcmp(argv[1], "plot") && !have_gnuplot) return;
  g_autofree char *out = NULL, *err = NULL;
  int status = -1;
  GError *e = NULL;
  ck_assert_msg(g_spawn_sync(scratch, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &e), "%s: %s",
                s->command, e ? e->message : "");
  bool ok = g_spawn_check_wait_status(status, NULL);
  g_autoptr(GPtrArray) got = lines_of(ok ? out : err);
  bool same = match((char **)s->want->pdata, s->want->len, (char **)got->pdata, got->len);
  if (!same) { /* the whole of both on stderr: check's messages are short */
    g_ptr_array_add(s->want, NULL);
    fprintf(stderr, "README: '$ %s' prints (exit %s):\n%s\n-- but the README shows:\n", s->command,
            ok ? "0" : "non-zero", ok ? out : err);
    for (guint i = 0; s->want->pdata[i]; i++) fprintf(stderr, "%s\n", (char *)s->want->pdata[i]);
    g_ptr_array_remove_index(s->want, s->want->len - 1);
  }
  ck_assert_msg(same, "README: '$ %s' does not print what the README shows (both above)", s->command);
}

START_TEST(test_readme_samples) {
  g_autofree char *path = g_build_filename(test_srcdir(), "README.md", NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  /* a scratch folder in which the README's relative paths hold */
  g_autofree char *scratch = g_dir_make_tmp("commsim-docs-XXXXXX", NULL);
  g_autofree char *sim = g_build_filename(scratch, "sim", NULL);
  ck_assert_int_eq(g_mkdir(sim, 0755), 0);
  g_autofree char *topo_from = g_build_filename(test_srcdir(), "topologies", NULL);
  g_autofree char *topo_to = g_build_filename(scratch, "topologies", NULL);
  g_autofree char *bin_from = g_build_filename(test_builddir(), "sim", "commsim", NULL);
  g_autofree char *bin_to = g_build_filename(sim, "commsim", NULL);
  g_autofree char *abs_topo = g_canonicalize_filename(topo_from, NULL), *abs_bin = g_canonicalize_filename(bin_from, NULL);
  ck_assert_int_eq(symlink(abs_topo, topo_to), 0);
  ck_assert_int_eq(symlink(abs_bin, bin_to), 0);
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");

  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  bool in_block = false;
  GPtrArray *block = g_ptr_array_new(); /* Sample *, of the block being read */
  guint samples = 0;
  for (guint i = 0; lines[i]; i++) {
    const char *l = lines[i];
    if (g_str_has_prefix(l, "```")) {
      if (in_block) { /* the block ends: run its commands in order */
        for (guint k = 0; k < block->len; k++) {
          Sample *s = block->pdata[k];
          run_sample(scratch, s, gnuplot != NULL);
          g_free(s->command);
          g_ptr_array_free(s->want, TRUE);
          g_free(s);
          samples++;
        }
        g_ptr_array_set_size(block, 0);
      }
      in_block = !in_block;
      continue;
    }
    if (!in_block) continue;
    if (g_str_has_prefix(l, "$ sim/commsim ")) {
      Sample *s = g_new0(Sample, 1);
      s->command = g_strdup(l + 2);
      s->want = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(block, s);
    } else if (block->len) {
      g_ptr_array_add(((Sample *)block->pdata[block->len - 1])->want, g_strchomp(g_strdup(l)));
    }
  }
  ck_assert_uint_ge(samples, 8);
  g_ptr_array_free(block, TRUE);
  /* the README stands alone: it cites no contract file outside the repository */
  ck_assert_ptr_null(strstr(text, "SPEC"));
  rm_rf(scratch);
}
END_TEST

/* A table row after a blank line that follows a table row, unless it
 * heads a table of its own (a delimiter row under it): Markdown ends the
 * table at the blank line and shows the rest as text. */
static guint broken_tables(const char *path) {
  g_autofree char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
  g_autoptr(GPtrArray) l = lines_of(text);
  guint bad = 0;
  for (guint i = 2; i < l->len; i++) {
    const char *before = l->pdata[i - 2], *blank = l->pdata[i - 1], *row = l->pdata[i];
    const char *under = i + 1 < l->len ? l->pdata[i + 1] : "";
    bool delimiter = under[0] == '|' && strspn(under, "|-: ") == strlen(under);
    if (before[0] == '|' && !blank[0] && row[0] == '|' && !delimiter) {
      fprintf(stderr, "%s:%u: a table cut by the blank line above\n", path, i + 1);
      bad++;
    }
  }
  return bad;
}

START_TEST(test_tables_whole) {
  g_autofree char *readme = g_build_filename(test_srcdir(), "README.md", NULL);
  guint bad = broken_tables(readme), files = 1;
  g_autofree char *docs = g_build_filename(test_srcdir(), "docs", NULL);
  GDir *dir = g_dir_open(docs, 0, NULL);
  ck_assert_ptr_nonnull(dir);
  for (const char *name; (name = g_dir_read_name(dir));) {
    if (!g_str_has_suffix(name, ".md")) continue;
    g_autofree char *path = g_build_filename(docs, name, NULL);
    bad += broken_tables(path);
    files++;
  }
  g_dir_close(dir);
  ck_assert_uint_ge(files, 5);
  ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The check itself: a table cut in two is found, a second table is not. */
START_TEST(test_tables_whole_finds_a_cut) {
  g_autofree char *path = g_build_filename(g_get_tmp_dir(), "commsim-table-XXXXXX.md", NULL);
  int fd = g_mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  const char *cut = "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| 3 | 4 |\n";
  ck_assert(g_file_set_contents(path, cut, -1, NULL));
  ck_assert_uint_eq(broken_tables(path), 1);
  const char *two = "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| c | d |\n| :-- | --: |\n| 3 | 4 |\n";
  ck_assert(g_file_set_contents(path, two, -1, NULL));
  ck_assert_uint_eq(broken_tables(path), 0);
  g_unlink(path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("docs");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_readme_samples);
  tcase_add_test(tc, test_tables_whole);
  tcase_add_test(tc, test_tables_whole_finds_a_cut);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
