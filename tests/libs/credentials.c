/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libs suite: the producer's access control lists (credentials.h): names
 * and ids, unknown names, the producer's own group, and many lists parsed
 * at once from several threads (two sinks starting together), which the
 * non-reentrant getpwnam/getgrnam could mix up.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "wire/credentials.h"
#include "common/error.h"
#include "test-main.h"

static guint
id_at (GArray * ids, guint i)
{
  return g_array_index (ids, guint, i);
}

GST_START_TEST (test_users)
{
  GError *err = NULL;
  GArray *ids = NULL;

  fail_unless (cudaipc_credentials_parse_ids ("root, 1234,,  42", FALSE, &ids,
          &err));
  fail_unless_equals_int (ids->len, 3);
  fail_unless_equals_int (id_at (ids, 0), 0);
  fail_unless_equals_int (id_at (ids, 1), 1234);
  fail_unless_equals_int (id_at (ids, 2), 42);
  g_array_unref (ids);

  fail_unless (cudaipc_credentials_parse_ids (NULL, FALSE, &ids, &err));
  fail_unless_equals_int (ids->len, 0);
  g_array_unref (ids);

  ids = NULL;
  fail_if (cudaipc_credentials_parse_ids ("root,no-such-user-here", FALSE,
          &ids, &err));
  fail_unless (ids == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  fail_unless_equals_string (err->message,
      "allowed-users: no user named \"no-such-user-here\"");
  g_clear_error (&err);
}

GST_END_TEST;

GST_START_TEST (test_groups)
{
  struct group *gr = getgrgid (0);
  GError *err = NULL;
  GArray *ids = NULL;
  gchar *list;

  fail_unless (gr != NULL);
  list = g_strdup_printf ("%s 77", gr->gr_name);
  fail_unless (cudaipc_credentials_parse_ids (list, TRUE, &ids, &err));
  g_free (list);
  /* the producer's own group first, always */
  fail_unless_equals_int (ids->len, 3);
  fail_unless_equals_int (id_at (ids, 0), getegid ());
  fail_unless_equals_int (id_at (ids, 1), 0);
  fail_unless_equals_int (id_at (ids, 2), 77);
  g_array_unref (ids);

  fail_if (cudaipc_credentials_parse_ids ("no-such-group-here", TRUE, &ids,
          &err));
  fail_unless_equals_string (err->message,
      "allowed-groups: no group named \"no-such-group-here\"");
  g_clear_error (&err);
}

GST_END_TEST;

/* Each thread parses its own list, again and again, and checks it. */

typedef struct
{
  const gchar *list;
  gboolean groups;
  guint expect;                 /* the id the name stands for */
  gint bad;
} Worker;

static gpointer
parse_often (gpointer data)
{
  Worker *w = data;

  for (guint i = 0; i < 2000; i++) {
    GArray *ids = NULL;

    if (!cudaipc_credentials_parse_ids (w->list, w->groups, &ids, NULL)) {
      w->bad++;
      continue;
    }
    if (id_at (ids, ids->len - 1) != w->expect)
      w->bad++;
    g_array_unref (ids);
  }
  return NULL;
}

GST_START_TEST (test_parallel)
{
  struct passwd *pw;
  struct group *gr;
  gchar *user0, *user1, *group0;
  Worker w[4];
  GThread *t[4];

  /* two users and a group that this machine has: root, and another */
  pw = getpwuid (0);
  fail_unless (pw != NULL);
  user0 = g_strdup (pw->pw_name);
  pw = getpwnam ("nobody");
  if (pw == NULL)
    pw = getpwuid (1);
  fail_unless (pw != NULL, "no second user on this machine");
  user1 = g_strdup (pw->pw_name);
  w[1].expect = pw->pw_uid;
  gr = getgrgid (0);
  fail_unless (gr != NULL);
  group0 = g_strdup (gr->gr_name);

  w[0] = (Worker) {
  user0, FALSE, 0, 0};
  w[1] = (Worker) {
  user1, FALSE, w[1].expect, 0};
  w[2] = (Worker) {
  group0, TRUE, 0, 0};
  w[3] = (Worker) {
  user1, FALSE, w[1].expect, 0};
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = g_thread_new ("parse", parse_often, &w[i]);
  for (guint i = 0; i < G_N_ELEMENTS (t); i++) {
    g_thread_join (t[i]);
    fail_unless_equals_int (w[i].bad, 0);
  }
  g_free (user0);
  g_free (user1);
  g_free (group0);
}

GST_END_TEST;

static Suite *
credentials_suite (void)
{
  Suite *s = suite_create ("credentials");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_users);
  tcase_add_test (tc, test_groups);
  tcase_add_test (tc, test_parallel);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "credentials",
  .suite = credentials_suite,
};
