/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: our plugin beside one that registers the feature names
 * "cudaipcsink" and "cudaipcsrc" with nvcodec's GTypes (GstCudaIpcSink,
 * GstCudaIpcSrc), as GStreamer >= 1.24's nvcodec does.
 *
 *  - Both plugins load into one process: the GTypes differ.
 *  - Installed as users have them: the stand-in as libgstnvcodec.so in
 *    GST_PLUGIN_SYSTEM_PATH (scanned after GST_PLUGIN_PATH, where ours
 *    is). A child process (this program again, "--child") then makes our
 *    elements by the names "cuipcsink" and "cuipcsrc", from
 *    gst_element_factory_make() and from a pipeline description, first
 *    with a fresh registry and again with the registry file the first run
 *    wrote. It also reports who owns "cudaipcsink" in the registry: the
 *    stand-in, which shows why a user of nvcodec needs names of ours
 *    alone. (Which plugin owns a shared name in a process changes as
 *    plugins load: each load registers its features again.)
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "test-main.h"
#include "test-util.h"

static GstPlugin *
load (const gchar * env)
{
  const gchar *path = g_getenv (env);
  GError *err = NULL;
  GstPlugin *plugin;

  fail_unless (path != NULL, "%s is not set", env);
  plugin = gst_plugin_load_file (path, &err);
  fail_unless (plugin != NULL, "loading %s: %s", path, err ? err->message : "");
  return plugin;
}

GST_START_TEST (test_both_plugins_load)
{
  GstPlugin *fake = load ("CUDAIPC_FAKE_NVCODEC");
  GstPlugin *ours = load ("CUDAIPC_OUR_PLUGIN");
  GType sink, src;
  GstElement *e;
  guint ring = 0;

  /* no GType clash: both sets of types exist side by side */
  sink = g_type_from_name ("GstCuIpcSink");
  src = g_type_from_name ("GstCuIpcSrc");
  fail_unless (sink != 0 && src != 0);
  fail_unless (g_type_from_name ("GstCudaIpcSink") != 0);
  fail_unless (g_type_from_name ("GstCudaIpcSrc") != 0);
  fail_unless (sink != g_type_from_name ("GstCudaIpcSink"));
  fail_unless (src != g_type_from_name ("GstCudaIpcSrc"));

  /* ours by type, whoever owns the shared names */
  e = g_object_new (sink, NULL);
  g_object_get (e, "ring-size", &ring, NULL);
  fail_unless_equals_int (ring, 4);
  gst_object_unref (gst_object_ref_sink (e));

  gst_object_unref (fake);
  gst_object_unref (ours);
}

GST_END_TEST;

/* The child's report: one "key=value" line per finding. */

static const gchar *
type_of_factory (const gchar * name)
{
  GstElement *e = gst_element_factory_make (name, NULL);
  const gchar *type = "none";

  if (e) {
    type = g_type_name (G_OBJECT_TYPE (e));
    gst_object_unref (gst_object_ref_sink (e));
  }
  return type;
}

static const gchar *
type_in_pipeline (const gchar * desc, const gchar * name)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  static gchar type[64];
  GstElement *e;

  g_strlcpy (type, "none", sizeof type);
  if (pipe == NULL) {
    g_clear_error (&err);
    return type;
  }
  g_clear_error (&err);
  e = gst_bin_get_by_name (GST_BIN (pipe), name);
  if (e) {
    g_strlcpy (type, g_type_name (G_OBJECT_TYPE (e)), sizeof type);
    gst_object_unref (e);
  }
  gst_object_unref (pipe);
  return type;
}

/* The plugin a feature of the registry belongs to, without loading it. */
static const gchar *
owner_of (const gchar * name)
{
  GstPluginFeature *f = gst_registry_lookup_feature (gst_registry_get (),
      name);
  static gchar owner[64];

  g_strlcpy (owner, f ? gst_plugin_feature_get_plugin_name (f) : "none",
      sizeof owner);
  gst_clear_object (&f);
  return owner;
}

static int
child_main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  /* first, before anything loads a plugin: loading one registers its
   * features again, and the shared names go to the one loaded last */
  g_print ("owner-cudaipcsink=%s\n", owner_of ("cudaipcsink"));
  g_print ("owner-cudaipcsrc=%s\n", owner_of ("cudaipcsrc"));
  g_print ("factory-cuipcsink=%s\n", type_of_factory ("cuipcsink"));
  g_print ("factory-cuipcsrc=%s\n", type_of_factory ("cuipcsrc"));
  g_print ("launch-cuipcsink=%s\n", type_in_pipeline ("fakesrc num-buffers=1 "
          "! cuipcsink name=e socket-path=@coexist-test", "e"));
  g_print ("launch-cuipcsrc=%s\n", type_in_pipeline ("cuipcsrc name=e "
          "socket-path=@coexist-test ! fakesink", "e"));
  /* ours is loaded now: the shared names kept their meaning */
  g_print ("loaded-owner-cudaipcsink=%s\n", owner_of ("cudaipcsink"));
  g_print ("loaded-owner-cudaipcsrc=%s\n", owner_of ("cudaipcsrc"));
  g_print ("loaded-factory-cudaipcsink=%s\n", type_of_factory ("cudaipcsink"));
  gst_deinit ();
  return 0;
}

/* Runs the child with @registry, the stand-in's folder as the system
 * plugin folder and @path (ours where NULL) as GST_PLUGIN_PATH; returns
 * its report. */
static gchar *
run_child_with (const gchar * registry, const gchar * sysdir,
    const gchar * path)
{
  g_autofree gchar *ours = path ? g_strdup (path) :
      g_path_get_dirname (g_getenv ("CUDAIPC_OUR_PLUGIN"));
  gchar *argv[] = { (gchar *) "/proc/self/exe", (gchar *) "--child", NULL };
  gchar **env = g_get_environ ();
  gchar *out = NULL, *err = NULL;
  GError *error = NULL;
  gint status = 0;

  env = g_environ_setenv (env, "GST_REGISTRY_1_0", registry, TRUE);
  env = g_environ_setenv (env, "GST_PLUGIN_SYSTEM_PATH_1_0", sysdir, TRUE);
  env = g_environ_setenv (env, "GST_PLUGIN_PATH_1_0", ours, TRUE);
  env = g_environ_unsetenv (env, "GST_PLUGIN_PATH");
  fail_unless (g_spawn_sync (NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, &status, &error), "spawn: %s",
      error ? error->message : "");
  fail_unless (g_spawn_check_wait_status (status, NULL),
      "child failed: %s", err);
  g_strfreev (env);
  g_free (err);
  return out;
}

static gchar *
run_child (const gchar * registry, const gchar * sysdir)
{
  return run_child_with (registry, sysdir, NULL);
}

static void
check_report (const gchar * report, const gchar * when)
{
  static const gchar *expected[] = {
    "factory-cuipcsink=GstCuIpcSink\n",
    "factory-cuipcsrc=GstCuIpcSrc\n",
    "launch-cuipcsink=GstCuIpcSink\n",
    "launch-cuipcsrc=GstCuIpcSrc\n",
    /* the stand-in, scanned last, owns the shared names: what users of
     * nvcodec >= 1.24 see, and why the names above exist */
    "owner-cudaipcsink=nvcodec\n",
    "owner-cudaipcsrc=nvcodec\n",
    /* and loading ours does not take them back in the middle of a
     * process */
    "loaded-owner-cudaipcsink=nvcodec\n",
    "loaded-owner-cudaipcsrc=nvcodec\n",
    "loaded-factory-cudaipcsink=GstCudaIpcSink\n",
  };

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    fail_unless (strstr (report, expected[i]) != NULL,
        "%s: expected \"%.*s\" in the child's report:\n%s", when,
        (int) strlen (expected[i]) - 1, expected[i], report);
}

/* A system plugin folder in @dir with the stand-in as libgstnvcodec.so,
 * where nvcodec lives, and coreelements; returns its path. */
static gchar *
make_sysdir (const gchar * dir)
{
  gchar *sysdir = g_build_filename (dir, "system", NULL);
  g_autofree gchar *nvcodec = g_build_filename (sysdir, "libgstnvcodec.so",
      NULL);
  g_autofree gchar *core = g_build_filename (sysdir,
      "libgstcoreelements.so", NULL);
  g_autofree gchar *core_src = NULL;
  const gchar *test_sys = g_getenv ("GST_PLUGIN_SYSTEM_PATH_1_0");

  fail_unless (test_sys != NULL);
  core_src = g_build_filename (test_sys, "libgstcoreelements.so", NULL);
  fail_unless (g_mkdir_with_parents (sysdir, 0700) == 0);
  fail_unless (symlink (g_getenv ("CUDAIPC_FAKE_NVCODEC"), nvcodec) == 0);
  fail_unless (symlink (core_src, core) == 0);
  return sysdir;
}

GST_START_TEST (test_names_with_nvcodec_scanned_last)
{
  g_autofree gchar *dir = cudaipc_test_tmpdir ("coexist");
  g_autofree gchar *sysdir = make_sysdir (dir);
  g_autofree gchar *registry = g_build_filename (dir, "registry.bin", NULL);
  g_autofree gchar *first = NULL, *second = NULL;
  struct stat before, after;

  first = run_child (registry, sysdir);
  check_report (first, "fresh registry");
  fail_unless (stat (registry, &before) == 0, "no registry was written");

  /* the registry file of the first run, as a user's next start reads it */
  second = run_child (registry, sysdir);
  check_report (second, "registry from the cache");
  fail_unless (stat (registry, &after) == 0);
  fail_unless (before.st_ino == after.st_ino &&
      before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
      before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
      "the second run rewrote the registry instead of reading the cache");

  cudaipc_test_rmtree (dir);
}

GST_END_TEST;

/* Ours installed into a registry that already knows nvcodec (a user's
 * registry, then `meson install`): only our plugin is scanned, in a
 * scanner process that knows no other plugin, and what it registers goes
 * in last. On GStreamer >= 1.24 it must still leave the shared names to
 * nvcodec; on 1.22, whose nvcodec has no such elements, our own names
 * must work. */
GST_START_TEST (test_names_when_ours_joins_a_registry)
{
  g_autofree gchar *dir = cudaipc_test_tmpdir ("coexist");
  g_autofree gchar *sysdir = make_sysdir (dir);
  g_autofree gchar *empty = g_build_filename (dir, "empty", NULL);
  g_autofree gchar *registry = g_build_filename (dir, "registry.bin", NULL);
  g_autofree gchar *first = NULL, *second = NULL;

  fail_unless (g_mkdir_with_parents (empty, 0700) == 0);
  first = run_child_with (registry, sysdir, empty);
  fail_unless (strstr (first, "owner-cudaipcsink=nvcodec\n") != NULL,
      "without ours:\n%s", first);
  fail_unless (strstr (first, "factory-cuipcsink=none\n") != NULL,
      "without ours:\n%s", first);

  second = run_child (registry, sysdir);
#if GST_CHECK_VERSION (1, 24, 0)
  check_report (second, "ours scanned into a registry with nvcodec");
#else
  /* who holds the shared names then depends on whether ours was scanned
   * in this process (it sees the stand-in and leaves them) or in a
   * scanner process (it takes them): only ours by our names is sure */
  fail_unless (strstr (second, "factory-cuipcsink=GstCuIpcSink\n") != NULL,
      "ours added:\n%s", second);
  fail_unless (strstr (second, "launch-cuipcsrc=GstCuIpcSrc\n") != NULL,
      "ours added:\n%s", second);
#endif
  cudaipc_test_rmtree (dir);
}

GST_END_TEST;

static Suite *
coexist_suite (void)
{
  Suite *s = suite_create ("coexist");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_both_plugins_load);
  tcase_add_test (tc, test_names_with_nvcodec_scanned_last);
  tcase_add_test (tc, test_names_when_ours_joins_a_registry);
  return s;
}

/* run again as its own child (run_child_with()) */
static gint
early (gint argc, gchar ** argv)
{
  if (argc > 1 && strcmp (argv[1], "--child") == 0)
    return child_main (argc, argv);
  return -1;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "coexist",
  .suite = coexist_suite,
  .early = early,
};
