/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What this machine is (GStreamer, GPU, driver, CPU) and what can run on
 * it: CUDA or system memory, and whether nvcodec's cudaipcsink exists.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "bench.h"
#include "device/cuda-loader.h"

BenchEnv bench_env;

static gchar *
read_cpu_model (void)
{
  gchar *text = NULL, *model = NULL;

  if (g_file_get_contents ("/proc/cpuinfo", &text, NULL, NULL)) {
    gchar **lines = g_strsplit (text, "\n", -1);

    for (guint i = 0; lines[i] && !model; i++) {
      if (g_str_has_prefix (lines[i], "model name")) {
        gchar *colon = strchr (lines[i], ':');

        if (colon)
          model = g_strstrip (g_strdup (colon + 1));
      }
    }
    g_strfreev (lines);
    g_free (text);
  }
  return model ? model : g_strdup ("unknown");
}

/* TRUE for a driver version: digits with at least one dot ("580.65.06") */
static gboolean
is_version (const gchar * w)
{
  gboolean dot = FALSE;

  if (!g_ascii_isdigit (*w))
    return FALSE;
  for (; *w; w++) {
    if (*w == '.')
      dot = TRUE;
    else if (!g_ascii_isdigit (*w))
      return FALSE;
  }
  return dot;
}

static gchar *
read_nvidia_driver (void)
{
  gchar *text = NULL, *version = NULL;

  /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  ..." or
   * "... Open Kernel Module for x86_64  580.82.07  Release Build ...":
   * the first word after "Module" that is a version */
  if (g_file_get_contents ("/proc/driver/nvidia/version", &text, NULL, NULL)) {
    gchar **words = g_strsplit_set (text, " \t\n", -1);
    gboolean after_module = FALSE;

    for (guint i = 0; words[i] && !version; i++) {
      if (g_str_equal (words[i], "Module"))
        after_module = TRUE;
      else if (after_module && is_version (words[i]))
        version = g_strdup (words[i]);
    }
    g_strfreev (words);
    g_free (text);
  }
  return version ? version : g_strdup ("n/a");
}

/* Our plugin's folder out of the plugin paths, for (c). */
gchar **
bench_env_without_plugin (gchar ** env, gboolean * changed)
{
  gchar *dir = g_path_get_dirname (opts.plugin);
  gchar *real = realpath (dir, NULL);
  static const gchar *vars[] = { "GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0" };

  *changed = FALSE;
  env = g_strdupv (env);
  for (guint v = 0; v < G_N_ELEMENTS (vars); v++) {
    const gchar *value = g_environ_getenv (env, vars[v]);
    gchar **parts;
    GPtrArray *keep;
    gchar *joined;

    if (value == NULL)
      continue;
    parts = g_strsplit (value, ":", -1);
    keep = g_ptr_array_new ();
    for (guint i = 0; parts[i]; i++) {
      gchar *r = realpath (parts[i], NULL);

      if (r && real && g_str_equal (r, real))
        *changed = TRUE;
      else if (*parts[i])
        g_ptr_array_add (keep, parts[i]);
      free (r);
    }
    g_ptr_array_add (keep, NULL);
    joined = g_strjoinv (":", (gchar **) keep->pdata);
    env = g_environ_setenv (env, vars[v], joined, TRUE);
    g_free (joined);
    g_ptr_array_free (keep, TRUE);
    g_strfreev (parts);
  }
  free (real);
  g_free (dir);
  return env;
}

gchar *
bench_default_plugin_path (const gchar * exe)
{
  gchar *dir, *path;

#ifdef BENCH_PLUGIN_PATH
  if (g_file_test (BENCH_PLUGIN_PATH, G_FILE_TEST_EXISTS))
    return g_strdup (BENCH_PLUGIN_PATH);
#endif
  /* <build>/tests/bench/cudaipc-bench -> <build>/plugin/ */
  dir = g_path_get_dirname (exe);
  path = g_build_filename (dir, "..", "..", "plugin", "libgstcudaipc.so", NULL);
  g_free (dir);
  return path;
}

/* Fills bench_env, settles opts.memory (auto: cuda where cudaupload and a
 * CUDA device are found, else system) and says whether (c) can run, or
 * why not. Returns device 0 in cuda mode (the caller owns it), else NULL. */
CudaIpcDevice *
bench_env_detect (gboolean * nvcodec_ok, gchar ** nvcodec_why)
{
  CudaIpcDevice *dev;
  GstElementFactory *f;
  GError *err = NULL;
  guint major, minor, micro, nano;
  struct utsname uts;
  GDateTime *now;

  gst_version (&major, &minor, &micro, &nano);
  bench_env.gst_version = g_strdup_printf ("%u.%u.%u", major, minor, micro);
  bench_env.cpu_model = read_cpu_model ();
  bench_env.driver = read_nvidia_driver ();
  bench_env.cores = g_get_num_processors ();
  bench_env.kernel = uname (&uts) == 0 ? g_strdup_printf ("%s %s", uts.sysname,
      uts.release) : g_strdup ("unknown");
  now = g_date_time_new_now_local ();
  bench_env.date = g_date_time_format_iso8601 (now);
  g_date_time_unref (now);

  /* the GPU, when there is one */
  dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &err);
  if (dev) {
    gint v = 0;

    bench_env.gpu_name = g_strdup (cudaipc_device_get_name (dev));
    if (cudaipc_cuda ()->DriverGetVersion (&v) == CUDA_SUCCESS)
      bench_env.cuda_api = g_strdup_printf ("%d.%d", v / 1000, (v % 1000) / 10);
  } else {
    bench_env.gpu_name = g_strdup ("none");
  }
  if (bench_env.cuda_api == NULL)
    bench_env.cuda_api = g_strdup ("n/a");

  f = gst_element_factory_find ("cudaupload");
  if (opts.memory == NULL || g_str_equal (opts.memory, "auto")) {
    if (f == NULL) {
      bench_env.memory_reason = g_strdup ("no cudaupload element (no nvcodec, "
          "or nvcodec found no CUDA device)");
    } else if (dev == NULL) {
      bench_env.memory_reason = g_strdup_printf ("no usable CUDA device: %s",
          err->message);
    }
    opts.memory = g_strdup (bench_env.memory_reason ? "system" : "cuda");
    if (bench_env.memory_reason == NULL)
      bench_env.memory_reason = g_strdup ("a CUDA device and cudaupload found");
  } else {
    bench_env.memory_reason = g_strdup ("chosen with --memory");
  }
  if (f)
    gst_object_unref (f);
  if (!bench_use_cuda ())
    g_clear_pointer (&dev, cudaipc_device_unref);
  g_clear_error (&err);

  /* (c) */
  *nvcodec_ok = FALSE;
  if (major == 1 && minor < 24) {
    *nvcodec_why = g_strdup_printf ("skipped: GStreamer %u.%u has no nvcodec "
        "cudaipcsink (needs >= 1.24)", major, minor);
  } else if (!bench_use_cuda ()) {
    *nvcodec_why = g_strdup ("skipped: nvcodec's cudaipcsink needs CUDA "
        "memory (system-memory mode)");
  } else {
    GstElementFactory *fs = gst_element_factory_find ("cudaipcsink");
    GstElementFactory *fc = gst_element_factory_find ("cudaipcsrc");
    GstPlugin *plugin = gst_plugin_load_by_name ("nvcodec");

    if (fs && fc && plugin && g_type_from_name ("GstCudaIpcSink") &&
        g_type_from_name ("GstCudaIpcSrc"))
      *nvcodec_ok = TRUE;
    else
      *nvcodec_why = g_strdup_printf ("skipped: GStreamer %u.%u, but no "
          "nvcodec cudaipcsink/cudaipcsrc here (GstCudaIpcSink)", major, minor);
    if (fs)
      gst_object_unref (fs);
    if (fc)
      gst_object_unref (fc);
    if (plugin)
      gst_object_unref (plugin);
  }
  return dev;
}

void
bench_env_clear (void)
{
  g_free (bench_env.gst_version);
  g_free (bench_env.gpu_name);
  g_free (bench_env.driver);
  g_free (bench_env.cuda_api);
  g_free (bench_env.cpu_model);
  g_free (bench_env.kernel);
  g_free (bench_env.date);
  g_free (bench_env.memory_reason);
  memset (&bench_env, 0, sizeof (bench_env));
}
