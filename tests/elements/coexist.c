/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: the names our plugin registers, and our plugin beside
 * one that registers the feature names "cudaipcsink" and "cudaipcsrc"
 * with nvcodec's GTypes (GstCudaIpcSink, GstCudaIpcSrc), as GStreamer >=
 * 1.24's nvcodec does (fake-nvcodec.c).
 *
 *  - The names follow the rule of docs/elements.md, Names: "cuipcsink"
 *    and "cuipcsrc" always, "cudaipcsink" and "cudaipcsrc" too before
 *    GStreamer 1.24 and never from 1.24 on; long-names and descriptions
 *    that no one takes for nvcodec's.
 *  - Both plugins load into one process: the GTypes differ.
 *  - Installed as users have them: the stand-in as libgstnvcodec.so in
 *    GST_PLUGIN_SYSTEM_PATH (scanned after GST_PLUGIN_PATH, where ours
 *    is), registering its names, registering nothing (nvcodec without a
 *    GPU), or not installed at all. A child process (this program again,
 *    "--child") lists the names ours holds in the registry and who owns
 *    "cudaipcsink", then makes our elements by the names "cuipcsink" and
 *    "cuipcsrc", from gst_element_factory_make() and from a pipeline
 *    description, first with a fresh registry and again with the
 *    registry file the first run wrote. Ours holds the same names in
 *    every case: what else is installed does not change them. (Which
 *    plugin owns a shared name in a process changes as plugins load:
 *    each load registers its features again.)
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

/* The GStreamer running is older than 1.24, whose nvcodec has no IPC
 * elements. */
static gboolean
before_1_24 (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return major == 1 && minor < 24;
}

/* The rule (docs/elements.md, Names): the GStreamer version running
 * decides, and nothing else. */
static const gchar *
expected_names (void)
{
  if (before_1_24 ())
    return "cudaipcsink,cudaipcsrc,cuipcsink,cuipcsrc";
  return "cuipcsink,cuipcsrc";
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The names of the features plugin "cudaipc" holds in the registry,
 * sorted and comma-separated, without loading it. */
static gchar *
our_names (void)
{
  GList *features = gst_registry_get_feature_list_by_plugin
      (gst_registry_get (), "cudaipc");
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  gchar *joined;

  for (GList * l = features; l; l = l->next)
    g_ptr_array_add (names, g_strdup (GST_OBJECT_NAME (l->data)));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  joined = g_strjoinv (",", (gchar **) names->pdata);
  g_ptr_array_unref (names);
  gst_plugin_feature_list_free (features);
  return joined;
}

GST_START_TEST (test_names_follow_the_rule)
{
  g_autofree gchar *names = our_names ();
  g_auto (GStrv) list = g_strsplit (names, ",", -1);

  fail_unless_equals_string (names, expected_names ());
  for (guint i = 0; list[i] != NULL; i++) {
    GstElementFactory *f = gst_element_factory_find (list[i]);
    gboolean sink = g_str_has_suffix (list[i], "sink");
    const gchar *longname, *klass, *desc;

    fail_unless (f != NULL);
    longname = gst_element_factory_get_metadata (f,
        GST_ELEMENT_METADATA_LONGNAME);
    klass = gst_element_factory_get_metadata (f, GST_ELEMENT_METADATA_KLASS);
    desc = gst_element_factory_get_metadata (f,
        GST_ELEMENT_METADATA_DESCRIPTION);
    /* nvcodec's are "CUDA IPC Sink" and "CUDA IPC Src": ours must not
     * read like them in a gst-inspect-1.0 listing */
    fail_unless (g_str_has_prefix (longname, "cuipc "), "%s: %s", list[i],
        longname);
    fail_if (g_ascii_strncasecmp (longname, "CUDA IPC", 8) == 0);
    fail_unless (strstr (desc, "gst-cudaipc") != NULL, "%s: %s", list[i], desc);
    fail_unless (strstr (desc, "host memory") != NULL, "%s: %s", list[i], desc);
    fail_unless_equals_string (klass, sink ? "Sink/Video" : "Source/Video");
    gst_object_unref (f);
  }
}

GST_END_TEST;

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
  g_autofree gchar *ours = NULL;

  gst_init (&argc, &argv);
  /* first, before anything loads a plugin: loading one registers its
   * features again, and the shared names go to the one loaded last */
  ours = our_names ();
  g_print ("ours=%s\n", ours);
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

/* Runs the child with @registry, @sysdir as the system plugin folder,
 * @path (ours where NULL) as GST_PLUGIN_PATH and the stand-in's @gpu
 * ("0": none, so it registers nothing); returns its report. */
static gchar *
run_child_with (const gchar * registry, const gchar * sysdir,
    const gchar * path, const gchar * gpu)
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
  env = g_environ_setenv (env, "CUDAIPC_FAKE_NVCODEC_GPU", gpu, TRUE);
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
run_child (const gchar * registry, const gchar * sysdir, const gchar * gpu)
{
  return run_child_with (registry, sysdir, NULL, gpu);
}

/* What the stand-in installed as nvcodec does on this version, with a
 * GPU (@gpu): takes the shared names from 1.24 on. */
static gboolean
stand_in_has_names (gboolean gpu)
{
  return gpu && !before_1_24 ();
}

static void
expect (const gchar * report, const gchar * line, const gchar * when)
{
  fail_unless (strstr (report, line) != NULL, "%s: expected \"%.*s\" in "
      "the child's report:\n%s", when, (int) strlen (line) - 1, line, report);
}

/* The report of a child where the stand-in holds the shared names
 * (@nvcodec) or nobody but ours may. */
static void
check_report (const gchar * report, gboolean nvcodec, const gchar * when)
{
  g_autofree gchar *ours = g_strdup_printf ("ours=%s\n", expected_names ());
  gboolean shared = before_1_24 ();
  const gchar *owner = nvcodec ? "nvcodec" : shared ? "cudaipc" : "none";
  const gchar *type = nvcodec ? "GstCudaIpcSink" : shared ? "GstCuIpcSink" :
      "none";
  g_autofree gchar *owner_sink = g_strdup_printf ("owner-cudaipcsink=%s\n",
      owner);
  g_autofree gchar *owner_src = g_strdup_printf ("owner-cudaipcsrc=%s\n",
      owner);
  g_autofree gchar *loaded_sink = g_strdup_printf ("loaded-owner-"
      "cudaipcsink=%s\n", owner);
  g_autofree gchar *loaded_src = g_strdup_printf ("loaded-owner-"
      "cudaipcsrc=%s\n", owner);
  g_autofree gchar *loaded_type = g_strdup_printf ("loaded-factory-"
      "cudaipcsink=%s\n", type);

  /* the same names for ours whatever else is installed */
  expect (report, ours, when);
  expect (report, "factory-cuipcsink=GstCuIpcSink\n", when);
  expect (report, "factory-cuipcsrc=GstCuIpcSrc\n", when);
  expect (report, "launch-cuipcsink=GstCuIpcSink\n", when);
  expect (report, "launch-cuipcsrc=GstCuIpcSrc\n", when);
  /* the shared names: nvcodec's where it has them, ours before 1.24, and
   * loading ours does not change that in the middle of a process */
  expect (report, owner_sink, when);
  expect (report, owner_src, when);
  expect (report, loaded_sink, when);
  expect (report, loaded_src, when);
  expect (report, loaded_type, when);
}

/* A system plugin folder in @dir with coreelements and, with @nvcodec,
 * the stand-in as libgstnvcodec.so, where nvcodec lives; returns its
 * path. */
static gchar *
make_sysdir (const gchar * dir, gboolean nvcodec)
{
  gchar *sysdir = g_build_filename (dir, "system", NULL);
  g_autofree gchar *fake = g_build_filename (sysdir, "libgstnvcodec.so",
      NULL);
  g_autofree gchar *core = g_build_filename (sysdir,
      "libgstcoreelements.so", NULL);
  g_autofree gchar *core_src = NULL;
  const gchar *test_sys = g_getenv ("GST_PLUGIN_SYSTEM_PATH_1_0");

  fail_unless (test_sys != NULL);
  core_src = g_build_filename (test_sys, "libgstcoreelements.so", NULL);
  fail_unless (g_mkdir_with_parents (sysdir, 0700) == 0);
  if (nvcodec)
    fail_unless (symlink (g_getenv ("CUDAIPC_FAKE_NVCODEC"), fake) == 0);
  fail_unless (symlink (core_src, core) == 0);
  return sysdir;
}

/* A fresh registry, then the registry file the first run wrote (as a
 * user's next start reads it): the same report both times. */
static void
check_installed (gboolean nvcodec, gboolean gpu, const gchar * when)
{
  g_autofree gchar *dir = cudaipc_test_tmpdir ("coexist");
  g_autofree gchar *sysdir = make_sysdir (dir, nvcodec);
  g_autofree gchar *registry = g_build_filename (dir, "registry.bin", NULL);
  g_autofree gchar *first = NULL, *second = NULL;
  const gchar *g = gpu ? "1" : "0";
  gboolean names = nvcodec && stand_in_has_names (gpu);
  struct stat before, after;

  first = run_child (registry, sysdir, g);
  check_report (first, names, when);
  fail_unless (stat (registry, &before) == 0, "no registry was written");

  second = run_child (registry, sysdir, g);
  check_report (second, names, when);
  fail_unless (stat (registry, &after) == 0);
  fail_unless (before.st_ino == after.st_ino &&
      before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
      before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
      "the second run rewrote the registry instead of reading the cache");

  cudaipc_test_rmtree (dir);
}

GST_START_TEST (test_names_with_nvcodec_scanned_last)
{
  check_installed (TRUE, TRUE, "nvcodec with a GPU");
}

GST_END_TEST;

GST_START_TEST (test_names_with_nvcodec_without_gpu)
{
  check_installed (TRUE, FALSE, "nvcodec without a GPU");
}

GST_END_TEST;

GST_START_TEST (test_names_without_nvcodec)
{
  check_installed (FALSE, FALSE, "no nvcodec");
}

GST_END_TEST;

/* Ours installed into a registry that already knows nvcodec (a user's
 * registry, then `meson install`): only our plugin is scanned, in a
 * scanner process that knows no other plugin, and what it registers goes
 * in last. It registers the same names all the same, and on GStreamer >=
 * 1.24 the shared ones stay nvcodec's. */
GST_START_TEST (test_names_when_ours_joins_a_registry)
{
  g_autofree gchar *dir = cudaipc_test_tmpdir ("coexist");
  g_autofree gchar *sysdir = make_sysdir (dir, TRUE);
  g_autofree gchar *empty = g_build_filename (dir, "empty", NULL);
  g_autofree gchar *registry = g_build_filename (dir, "registry.bin", NULL);
  g_autofree gchar *first = NULL, *second = NULL;

  fail_unless (g_mkdir_with_parents (empty, 0700) == 0);
  first = run_child_with (registry, sysdir, empty, "1");
  expect (first, "ours=\n", "without ours");
  expect (first, "factory-cuipcsink=none\n", "without ours");

  second = run_child (registry, sysdir, "1");
  check_report (second, stand_in_has_names (TRUE),
      "ours scanned into a registry with nvcodec");
  cudaipc_test_rmtree (dir);
}

GST_END_TEST;

static Suite *
coexist_suite (void)
{
  Suite *s = suite_create ("coexist");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_names_follow_the_rule);
  tcase_add_test (tc, test_both_plugins_load);
  tcase_add_test (tc, test_names_with_nvcodec_scanned_last);
  tcase_add_test (tc, test_names_with_nvcodec_without_gpu);
  tcase_add_test (tc, test_names_without_nvcodec);
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
