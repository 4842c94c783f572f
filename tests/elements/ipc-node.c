/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ipc-node: one side of a hand-over, as a process of its own. The element
 * tests, the gpu suite and the main job spawn it (never fork: a process may
 * have initialised CUDA).
 *
 *   ipc-node producer SOCKET [--frames N] [--width W --height H]
 *       [--switch-at K --width2 W2 --height2 H2] [--clients C] [--fps F]
 *       [--sink "prop=value ..."] [--upload]
 *     appsrc ! [cudaupload ! video/x-raw(memory:CUDAMemory) !] cuipcsink
 *     (the sink takes system memory too: without the capsfilter cudaupload
 *     would pass the frames through). Frame i is NV12 filled with the
 *     pattern of key (i, 0) and carries offset i. With --clients it waits
 *     for C ready clients before playing. Prints one line:
 *     "producer frames=N published=P dropped=D joined=J left=L warnings=W
 *      from_gpu=G from_host=H in_place=I host_syncs=S elapsed_us=T" (G, H,
 *      I, S: the sink's copies-from-gpu, copies-from-host, frames-in-place
 *      and host-syncs).
 *
 *   ipc-node consumer SOCKET [--hold H] [--src "prop=value ..."]
 *       [--download] [--max-frames M] [--caps CAPS]
 *     cuipcsrc ! [cudadownload ! video/x-raw !] [CAPS !] appsink (the
 *     capsfilter keeps cudadownload from passing CUDA memory through to
 *     appsink, which takes anything), with max-held=0 (every frame, however
 *     many appsink queues) unless --src sets it. Checks every frame against the
 *     pattern of its offset when it arrives, keeps the last H frames held
 *     and checks them again when it lets them go (a slot overwritten while
 *     held is caught). Prints one line:
 *     "consumer frames=N bad=B caps=C recheck_bad=R first=F last=L
 *      warnings=W ok=O output=M peer=P discarded=D connects=N fenced=F
 *      channel=C driver_calls=K metas_ok=A metas_bad=B metas_received=E
 *      metas_refused=X disorder=O peak_kib=R elapsed_us=T", where M is
 *     what the source's frames went out in (0 its imported slots, 1
 *     GstCudaMemory copies, 2 wrapped GstCudaMemory), P is 1 when it read
 *     a producer on another GPU
 *     through peer access, D is the source's frames-discarded, N the
 *     connections it made (connected and reconnected messages), F how many
 *     of them read the fence page, C how many read the producer's
 *     messages through shared memory (announce), K the source's
 *     driver-calls, A and B
 *     the frames whose metas were as --expect-metas says, and not, and E
 *     and X the source's metas-received and metas-refused, O the frames
 *     whose offset was not above the one before, R the process's peak
 *     resident memory (VmHWM) at its end. With --slow-ms N appsink
 *     holds one frame and the consumer takes N ms over each.
 *
 *   ipc-node rogue SOCKET --mode MODE
 *     a consumer that breaks the protocol on purpose (see run_rogue()).
 *
 *   ipc-node probe [--min-devices N]
 *     exits 0 where a CUDA device opens (and, with --min-devices, this
 *     process sees at least N), 77 elsewhere.
 *
 * Both roles take --die-after N: the process kills itself with SIGKILL
 * after N frames (a crash, for the fault tests), and --as-user NAME: run
 * as that user (started as root), for the access-control tests.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include "wire/connection.h"
#include "device/device.h"
#include "test-metas.h"
#include "test-pattern.h"
#include "test-bus.h"
#include "test-util.h"

static gint frames = 30, width = 320, height = 240;
static gint switch_at = -1, width2 = 0, height2 = 0;
static gint clients = 0, hold = 0, max_frames = 0, die_after = -1, fps = 0;
static gint stall_after = -1, min_devices = 1, slow_ms;
static gchar *sink_props, *src_props;
static gboolean upload, download, resources, live;
static gchar *sink_caps;
/* producer: of the frames it wrote; consumer: of those it received, in
 * the caps' layout, as they arrived */
static guint64 checksum = CUDAIPC_TEST_HASH_INIT;
static gchar *mode, *quiet_file, *as_user, *expect_metas, *gpu_free_at;
static gboolean add_metas;

static GOptionEntry entries[] = {
  {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "frames to send", "N"},
  {"width", 0, 0, G_OPTION_ARG_INT, &width, "frame width", "W"},
  {"height", 0, 0, G_OPTION_ARG_INT, &height, "frame height", "H"},
  {"switch-at", 0, 0, G_OPTION_ARG_INT, &switch_at, "change caps at", "K"},
  {"width2", 0, 0, G_OPTION_ARG_INT, &width2, "width after K", "W"},
  {"height2", 0, 0, G_OPTION_ARG_INT, &height2, "height after K", "H"},
  {"clients", 0, 0, G_OPTION_ARG_INT, &clients, "clients to wait for", "C"},
  {"sink", 0, 0, G_OPTION_ARG_STRING, &sink_props, "sink properties", "P"},
  {"upload", 0, 0, G_OPTION_ARG_NONE, &upload, "cudaupload first", NULL},
  {"live", 0, 0, G_OPTION_ARG_NONE, &live,
      "producer: a live source (appsrc is-live=true)", NULL},
  {"resources", 0, 0, G_OPTION_ARG_NONE, &resources,
      "report fds, memory and GPU memory after the first frame and at the end",
      NULL},
  {"quiet-file", 0, 0, G_OPTION_ARG_STRING, &quiet_file,
      "with --resources: take the last sample once this file exists", "F"},
  {"hold", 0, 0, G_OPTION_ARG_INT, &hold, "frames to hold", "H"},
  {"min-devices", 0, 0, G_OPTION_ARG_INT, &min_devices,
      "probe: devices needed", "N"},
  {"src", 0, 0, G_OPTION_ARG_STRING, &src_props, "src properties", "P"},
  {"download", 0, 0, G_OPTION_ARG_NONE, &download,
      "cudadownload into system memory", NULL},
  {"caps", 0, 0, G_OPTION_ARG_STRING, &sink_caps,
      "consumer: the caps appsink takes (a capsfilter before it)", "CAPS"},
  {"max-frames", 0, 0, G_OPTION_ARG_INT, &max_frames, "stop after", "M"},
  {"mode", 0, 0, G_OPTION_ARG_STRING, &mode, "rogue behaviour", "M"},
  {"as-user", 0, 0, G_OPTION_ARG_STRING, &as_user,
      "run as this user (needs root)", "NAME"},
  {"fps", 0, 0, G_OPTION_ARG_INT, &fps, "pace the producer (sink syncs)",
      "N"},
  {"slow-ms", 0, 0, G_OPTION_ARG_INT, &slow_ms,
      "consumer: take N ms over each frame, with appsink holding one (the "
        "source waits downstream meanwhile)", "N"},
  {"stall-after", 0, 0, G_OPTION_ARG_INT, &stall_after,
      "consumer: stop taking frames after N (a hung process)", "N"},
  {"metas", 0, 0, G_OPTION_ARG_NONE, &add_metas,
      "producer: put the test metas on every frame (test-metas.h)", NULL},
  {"expect-metas", 0, 0, G_OPTION_ARG_STRING, &expect_metas,
      "consumer: check every frame's metas against the sink's metas "
        "setting (all, none, API names)", "SPEC"},
  {"die-after", 0, 0, G_OPTION_ARG_INT, &die_after,
      "SIGKILL this process after N frames", "N"},
  {"gpu-free-at", 0, 0, G_OPTION_ARG_STRING, &gpu_free_at,
      "producer, cuda backend: after pushing each of these frames "
        "(comma-separated), print the device's free memory as "
        "gpu_free_at_K=BYTES", "LIST"},
  {NULL}
};

static void
set_props (GstElement * element, const gchar * props)
{
  gchar **kv = g_strsplit (props ? props : "", " ", -1);

  for (guint i = 0; kv[i]; i++) {
    gchar **pair;
    if (!kv[i][0])
      continue;
    pair = g_strsplit (kv[i], "=", 2);
    if (pair[1])
      gst_util_set_object_arg (G_OBJECT (element), pair[0], pair[1]);
    g_strfreev (pair);
  }
  g_strfreev (kv);
}

static GstCaps *
nv12_caps (gint w, gint h)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "NV12",
      "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
}

static gint n_warnings, n_joined, n_left;
/* consumer: connections the source announced, and those ordered by the
 * fence page */
static gint n_connects, n_fenced, n_channel;

/* Counts warnings and the sink's client messages as they are posted. */
static GstBusSyncReply
count_messages (GstBus * bus, GstMessage * msg, gpointer data)
{
  const GstStructure *s;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_WARNING:{
      GError *err = NULL;
      gst_message_parse_warning (msg, &err, NULL);
      g_printerr ("warning from %s: %s\n", GST_OBJECT_NAME (msg->src),
          err->message);
      g_clear_error (&err);
      g_atomic_int_inc (&n_warnings);
      break;
    }
    case GST_MESSAGE_ELEMENT:
      s = gst_message_get_structure (msg);
      if (gst_structure_has_name (s, "cudaipcsink-client-joined"))
        g_atomic_int_inc (&n_joined);
      else if (gst_structure_has_name (s, "cudaipcsrc-connected") ||
          gst_structure_has_name (s, "cudaipcsrc-reconnected")) {
        gboolean fenced = FALSE;

        g_atomic_int_inc (&n_connects);
        if (gst_structure_get_boolean (s, "fence", &fenced) && fenced)
          g_atomic_int_inc (&n_fenced);
        if (g_strcmp0 (gst_structure_get_string (s, "announce"),
                "shared-memory") == 0)
          g_atomic_int_inc (&n_channel);
      } else if (gst_structure_has_name (s, "cudaipcsink-client-left")) {
        gchar *text = gst_structure_to_string (s);

        /* for the tests to check what the message says */
        g_printerr ("%s\n", text);
        g_free (text);
        g_atomic_int_inc (&n_left);
      }
      break;
    default:
      break;
  }
  return GST_BUS_PASS;
}

static void
watch_bus (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);

  gst_bus_set_sync_handler (bus, count_messages, NULL, NULL);
  gst_object_unref (bus);
}

static void
maybe_die (gint done)
{
  if (die_after >= 0 && done >= die_after) {
    g_printerr ("dying after %d frames\n", done);
    raise (SIGKILL);
  }
}

/* A pipeline from @desc, or NULL (said why) when an element is missing. */
static GstElement *
parse_pipeline (const gchar * desc)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);

  if (err) {
    g_printerr ("cannot build '%s': %s\n", desc, err->message);
    g_clear_error (&err);
    gst_clear_object (&pipeline);
  }
  return pipeline;
}

#define bus_ok cudaipc_test_bus_ok

typedef struct
{
  guint fds;
  guint other_fds;              /* of them, those that are no socket and
                                 * no consumer's release page */
  gchar *others;                /* what those are, ;-separated, sorted */
  guint64 rss_kb;
  guint64 gpu_free;
} Resources;

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* Open fds, and in @other those that are no socket (memfds, files, the
 * fds a peer sent), listed in @others: a consumer's connection closes
 * between two samples, the rest must match. */
static guint
count_fds (guint * other, gchar ** others)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  GPtrArray *list = g_ptr_array_new_with_free_func (g_free);
  const gchar *name;
  guint n = 0;

  *other = 0;
  while (dir && (name = g_dir_read_name (dir))) {
    g_autofree gchar *path = g_build_filename ("/proc/self/fd", name, NULL);
    g_autofree gchar *target = g_file_read_link (path, NULL);

    n++;
    /* a consumer's release page, like its socket, lives as long as its
     * connection */
    if (target && !g_str_has_prefix (target, "socket:") &&
        !g_str_has_prefix (target, "/memfd:cudaipc-release")) {
      (*other)++;
      /* by what it is: numbers are reused; not the folder being read */
      if (!g_str_has_suffix (target, "/fd"))
        g_ptr_array_add (list, g_strdup (target));
    }
  }
  if (dir)
    g_dir_close (dir);
  g_ptr_array_sort (list, compare_names);
  g_ptr_array_add (list, NULL);
  *others = g_strjoinv (";", (gchar **) list->pdata);
  g_ptr_array_unref (list);
  return n;
}

static guint64
rss_kb (void)
{
  gchar *status = NULL, *at;
  guint64 kb = 0;

  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL) &&
      (at = strstr (status, "VmRSS:")))
    kb = g_ascii_strtoull (at + 6, NULL, 10);
  g_free (status);
  return kb;
}

/* @n is one of the comma-separated numbers of @list. */
static gboolean
in_list (const gchar * list, gint n)
{
  g_auto (GStrv) items = g_strsplit (list, ",", -1);

  for (guint k = 0; items[k] != NULL; k++)
    if (items[k][0] != '\0' && g_ascii_strtoll (items[k], NULL, 10) == n)
      return TRUE;
  return FALSE;
}

static void
sample_resources (Resources * r)
{
  CudaIpcDevice *dev = NULL;

  r->fds = count_fds (&r->other_fds, &r->others);
  r->rss_kb = rss_kb ();
  r->gpu_free = 0;
  if (g_strstr_len (sink_props ? sink_props : "", -1, "backend=cuda"))
    dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, NULL);
  if (dev)
    cudaipc_device_mem_info (dev, &r->gpu_free, NULL, NULL);
  cudaipc_device_unref (dev);
}

static int
run_producer (const gchar * socket_path)
{
  GstElement *pipeline, *src, *sink;
  GstStructure *stats = NULL;
  guint64 published = 0, dropped = 0, from_gpu = 0, from_host = 0;
  guint64 in_place = 0;
  guint64 host_syncs = 0;
  Resources steady = { 0 }, end = { 0 };
  gint64 t0, t1;
  gboolean eos = FALSE;
  gchar *desc;

  desc = g_strdup_printf ("appsrc name=src format=time is-live=%s "
      "block=true max-bytes=1 ! %s cuipcsink name=sink sync=false "
      "socket-path=\"%s\"", live ? "true" : "false",
      upload ? "cudaupload ! video/x-raw(memory:CUDAMemory) !" : "",
      socket_path);
  pipeline = parse_pipeline (desc);
  g_free (desc);
  if (!pipeline)
    return 1;
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  if (fps > 0)
    g_object_set (sink, "sync", TRUE, NULL);
  set_props (sink, sink_props);
  watch_bus (pipeline);
  {
    GstCaps *caps = nv12_caps (width, height);
    gst_app_src_set_caps (GST_APP_SRC (src), caps);
    gst_caps_unref (caps);
  }

  /* a sink that cannot start (no driver, a live producer on the path)
   * posts why; appsrc would block on the first frame otherwise */
  if (gst_element_set_state (pipeline, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE) {
    bus_ok (pipeline, 0, NULL);
    g_printerr ("producer: the pipeline does not start\n");
    return 1;
  }
  for (gint waited = 0; clients > 0; waited += 10) {
    guint n = 0;
    g_object_get (sink, "num-clients", &n, NULL);
    if ((gint) n >= clients)
      break;
    if (waited > 30000 || !bus_ok (pipeline, 10 * GST_MSECOND, NULL)) {
      g_printerr ("producer: %u of %d clients came\n", n, clients);
      return 1;
    }
  }
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    bus_ok (pipeline, 0, NULL);
    g_printerr ("producer: the pipeline does not play\n");
    return 1;
  }

  t0 = g_get_monotonic_time ();
  for (gint i = 0; i < frames; i++) {
    GstVideoInfo info;
    GstCaps *caps;
    GstBuffer *buf;
    GstMapInfo map;

    if (i == switch_at) {
      caps = nv12_caps (width2, height2);
      gst_app_src_set_caps (GST_APP_SRC (src), caps);
      gst_caps_unref (caps);
    }
    caps = gst_app_src_get_caps (GST_APP_SRC (src));
    gst_video_info_from_caps (&info, caps);
    gst_caps_unref (caps);
    buf = gst_buffer_new_allocate (NULL, info.size, NULL);
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    cudaipc_test_fill_pattern (map.data, map.size, i, 0);
    checksum = cudaipc_test_hash (checksum, map.data, map.size);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = i * GST_SECOND / (fps > 0 ? fps : 30);
    GST_BUFFER_DURATION (buf) = GST_SECOND / (fps > 0 ? fps : 30);
    GST_BUFFER_OFFSET (buf) = i;
    GST_BUFFER_OFFSET_END (buf) = i + 1;
    if (add_metas)
      cudaipc_test_add_metas (buf, i);
    if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK)
      break;
    /* the ring exists by the first frame (it is made at caps); sample
     * before any consumer starts (GPU memory is counted for the whole
     * device) */
    if (resources && i == 0) {
      g_usleep (300000);
      sample_resources (&steady);
      g_print ("steady\n");
      fflush (stdout);
    }
    if (gpu_free_at != NULL && in_list (gpu_free_at, i)) {
      Resources r;

      sample_resources (&r);
      g_print ("sample gpu_free_at_%d=%" G_GUINT64_FORMAT "\n", i, r.gpu_free);
      fflush (stdout);
      g_free (r.others);
    }
    maybe_die (i + 1);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  if (!bus_ok (pipeline, 120 * GST_SECOND, &eos) || !eos) {
    g_printerr ("producer: no EOS\n");
    return 1;
  }
  t1 = g_get_monotonic_time ();

  if (resources) {
    g_print ("eos-reached\n");
    fflush (stdout);
    /* wait until whoever drives us says the device is quiet again */
    for (gint waited = 0; quiet_file && waited < 120000; waited += 10) {
      if (g_file_test (quiet_file, G_FILE_TEST_EXISTS))
        break;
      g_usleep (10000);
    }
    /* every consumer has had EOS: let them go, then look again */
    for (gint waited = 0; waited < 10000; waited += 10) {
      guint n = 0;
      g_object_get (sink, "num-clients", &n, NULL);
      if (n == 0)
        break;
      g_usleep (10000);
    }
    sample_resources (&end);
    g_print ("resources fds_start=%u fds_end=%u other_fds_start=%u "
        "other_fds_end=%u rss_start_kb=%" G_GUINT64_FORMAT " rss_end_kb=%"
        G_GUINT64_FORMAT " gpu_free_start=%" G_GUINT64_FORMAT
        " gpu_free_end=%" G_GUINT64_FORMAT "\n", steady.fds, end.fds,
        steady.other_fds, end.other_fds, steady.rss_kb, end.rss_kb,
        steady.gpu_free, end.gpu_free);
    /* which they were: an fd open at the end that was not at the start
     * is one that was never closed */
    g_print ("resources-others start %s\nresources-others end %s\n",
        steady.others, end.others);
    g_free (steady.others);
    g_free (end.others);
  }

  g_object_get (sink, "stats", &stats, NULL);
  if (stats) {
    gst_structure_get_uint64 (stats, "frames-published", &published);
    gst_structure_get_uint64 (stats, "frames-dropped", &dropped);
    gst_structure_get_uint64 (stats, "copies-from-gpu", &from_gpu);
    gst_structure_get_uint64 (stats, "copies-from-host", &from_host);
    gst_structure_get_uint64 (stats, "frames-in-place", &in_place);
    gst_structure_get_uint64 (stats, "host-syncs", &host_syncs);
    gst_structure_free (stats);
  }
  g_print ("producer frames=%d published=%" G_GUINT64_FORMAT " dropped=%"
      G_GUINT64_FORMAT " joined=%d left=%d warnings=%d from_gpu=%"
      G_GUINT64_FORMAT " from_host=%" G_GUINT64_FORMAT " in_place=%"
      G_GUINT64_FORMAT " host_syncs=%" G_GUINT64_FORMAT " checksum=%016"
      G_GINT64_MODIFIER "x elapsed_us=%" G_GINT64_FORMAT "\n", frames,
      published, dropped, g_atomic_int_get (&n_joined),
      g_atomic_int_get (&n_left), g_atomic_int_get (&n_warnings), from_gpu,
      from_host, in_place, host_syncs, checksum, t1 - t0);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return 0;
}

/* Plane @p of @info: its visible bytes per row, and its rows. */
static void
plane_rows (const GstVideoInfo * info, guint p, gsize * row_bytes,
    guint * rows)
{
  gint comp[GST_VIDEO_MAX_COMPONENTS];

  gst_video_format_info_component (info->finfo, p, comp);
  *row_bytes = (gsize) GST_VIDEO_INFO_COMP_WIDTH (info, comp[0]) *
      GST_VIDEO_INFO_COMP_PSTRIDE (info, comp[0]);
  *rows = GST_VIDEO_INFO_COMP_HEIGHT (info, comp[0]);
}

/* Where a frame with the layout of @meta (strides or offsets other than
 * the caps' own, e.g. nvcodec's pitched GstCudaMemory) first differs from
 * the pattern of @key: the pattern is written in the caps' layout, so each
 * row's visible bytes are compared with the same row of a frame filled
 * that way. Returns the byte of @data that differs, or -1. */
static gssize
check_pattern_rows (const guint8 * data, gsize size, const GstVideoInfo * info,
    const GstVideoMeta * meta, guint key)
{
  g_autofree guint8 *want = g_malloc (info->size);

  cudaipc_test_fill_pattern (want, info->size, key, 0);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    gsize row_bytes;
    guint rows;

    plane_rows (info, p, &row_bytes, &rows);
    for (guint r = 0; r < rows; r++) {
      gsize at = meta->offset[p] + (gsize) r * meta->stride[p];
      const guint8 *w = want + info->offset[p] + (gsize) r * info->stride[p];

      if (at + row_bytes > size)
        return (gssize) MIN (at, size);
      if (memcmp (data + at, w, row_bytes) != 0)
        return (gssize) at;
    }
  }
  return -1;
}

static gboolean
same_layout (const GstVideoInfo * info, const GstVideoMeta * meta)
{
  for (guint p = 0; meta && p < GST_VIDEO_INFO_N_PLANES (info); p++)
    if (meta->offset[p] != info->offset[p] ||
        meta->stride[p] != info->stride[p])
      return FALSE;
  return TRUE;
}

/* Folds a frame into the consumer's checksum, in the caps' layout (each
 * row's visible bytes where its own layout, @meta, differs). */
static void
fold_checksum (const guint8 * data, gsize size, const GstVideoInfo * info,
    const GstVideoMeta * meta)
{
  g_autofree guint8 *flat = NULL;

  if (same_layout (info, meta)) {
    checksum = cudaipc_test_hash (checksum, data, MIN (size, info->size));
    return;
  }
  flat = g_malloc0 (info->size);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    gsize row_bytes;
    guint rows;

    plane_rows (info, p, &row_bytes, &rows);
    for (guint r = 0; r < rows; r++) {
      gsize at = meta->offset[p] + (gsize) r * meta->stride[p];

      if (at + row_bytes <= size)
        memcpy (flat + info->offset[p] + (gsize) r * info->stride[p],
            data + at, row_bytes);
    }
  }
  checksum = cudaipc_test_hash (checksum, flat, info->size);
}

/* Checks a frame against the pattern of its offset; TRUE when intact.
 * With @fold (a frame that just arrived, not a recheck) it also goes into
 * the checksum, from the same mapping. */
static gboolean
frame_ok (GstSample * sample, gboolean fold)
{
  static gboolean reported;
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  guint key = (guint) GST_BUFFER_OFFSET (buf);
  GstVideoInfo info;
  GstMapInfo map;
  gssize at;

  if (!gst_video_info_from_caps (&info, gst_sample_get_caps (sample)))
    return FALSE;
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return FALSE;
  if (same_layout (&info, meta))
    at = map.size >= info.size ?
        cudaipc_test_check_pattern (map.data, info.size, key, 0) : 0;
  else
    at = check_pattern_rows (map.data, map.size, &info, meta, key);
  if (fold)
    fold_checksum (map.data, map.size, &info, meta);
  if (at >= 0 && !reported) {
    GstMemory *mem = gst_buffer_peek_memory (buf, 0);

    /* once: where the first damaged frame differs, and its layout */
    reported = TRUE;
    g_printerr ("frame %u differs at byte %" G_GSSIZE_FORMAT " of %"
        G_GSIZE_FORMAT " (%u memories, first %s); planes at %" G_GSIZE_FORMAT
        "/%" G_GSIZE_FORMAT ", strides %d/%d\n", key, at, map.size,
        gst_buffer_n_memory (buf), mem->allocator ?
        mem->allocator->mem_type : "?",
        meta ? meta->offset[0] : info.offset[0],
        meta ? meta->offset[1] : info.offset[1],
        meta ? meta->stride[0] : info.stride[0],
        meta ? meta->stride[1] : info.stride[1]);
  }
  gst_buffer_unmap (buf, &map);
  return at < 0;
}

static int
run_consumer (const gchar * socket_path)
{
  GstElement *pipeline, *src, *sink;
  GQueue held = G_QUEUE_INIT;
  GstCaps *last_caps = NULL;
  guint n = 0, bad = 0, recheck_bad = 0, n_caps = 0, disorder = 0;
  guint metas_ok = 0, metas_bad = 0;
  guint64 first = G_MAXUINT64, last = 0;
  gint64 t0 = 0, t1 = 0;
  gboolean ok = TRUE;
  GstStructure *stats = NULL;
  const gchar *output;
  gboolean peer = FALSE;
  guint64 discarded = 0, driver_calls = 0, metas_received = 0;
  guint64 metas_refused = 0, copied = 0;
  gchar *desc;

  /* a custom meta is rebuilt only where its API is registered */
  if (expect_metas)
    cudaipc_test_register_metas ();
  desc = g_strdup_printf ("cuipcsrc name=src socket-path=\"%s\" ! %s %s%s"
      "appsink name=sink sync=false", socket_path,
      download ? "cudadownload ! video/x-raw !" : "",
      sink_caps ? sink_caps : "", sink_caps ? " ! " : "");
  pipeline = parse_pipeline (desc);
  g_free (desc);
  if (!pipeline)
    return 1;
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  /* a checker sees every frame: no limit on what it holds (appsink queues
   * frames), unless --src says otherwise */
  g_object_set (src, "max-held", 0, NULL);
  set_props (src, src_props);
  if (slow_ms > 0)
    g_object_set (sink, "max-buffers", 1, NULL);
  watch_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        60 * GST_SECOND);
    GstBuffer *buf;

    if (!sample) {
      if (!gst_app_sink_is_eos (GST_APP_SINK (sink)) || !bus_ok (pipeline, 0,
              NULL))
        ok = FALSE;
      break;
    }
    if (n == 0)
      t0 = g_get_monotonic_time ();
    t1 = g_get_monotonic_time ();
    buf = gst_sample_get_buffer (sample);
    if (n > 0 && GST_BUFFER_OFFSET (buf) <= last)
      disorder++;
    n++;
    first = MIN (first, GST_BUFFER_OFFSET (buf));
    last = GST_BUFFER_OFFSET (buf);
    if (!last_caps || !gst_caps_is_equal (last_caps,
            gst_sample_get_caps (sample))) {
      n_caps++;
      gst_caps_replace (&last_caps, gst_sample_get_caps (sample));
    }
    if (!frame_ok (sample, TRUE))
      bad++;
    if (expect_metas) {
      const gchar *wrong = cudaipc_test_check_metas (buf,
          GST_BUFFER_OFFSET (buf), expect_metas);

      if (wrong == NULL) {
        metas_ok++;
      } else {
        if (metas_bad++ == 0)
          g_printerr ("frame %" G_GUINT64_FORMAT ": metas: %s\n",
              GST_BUFFER_OFFSET (buf), wrong);
      }
    }
    g_queue_push_tail (&held, sample);
    while (g_queue_get_length (&held) > (guint) hold) {
      GstSample *old = g_queue_pop_head (&held);
      if (!frame_ok (old, FALSE))
        recheck_bad++;
      gst_sample_unref (old);
    }
    if (max_frames > 0 && n >= (guint) max_frames)
      break;
    maybe_die ((gint) n);
    if (slow_ms > 0)
      g_usleep ((gulong) slow_ms * 1000);
    if (stall_after >= 0 && n >= (guint) stall_after) {
      /* hung: frames pile up in appsink, none is released */
      g_printerr ("stalling after %u frames\n", n);
      g_usleep (120 * G_USEC_PER_SEC);
    }
  }
  while (!g_queue_is_empty (&held)) {
    GstSample *old = g_queue_pop_head (&held);
    if (!frame_ok (old, FALSE))
      recheck_bad++;
    gst_sample_unref (old);
  }
  g_object_get (src, "stats", &stats, NULL);
  output = gst_structure_get_string (stats, "output");
  gst_structure_get_uint64 (stats, "frames-discarded", &discarded);
  gst_structure_get_uint64 (stats, "driver-calls", &driver_calls);
  gst_structure_get_uint64 (stats, "metas-received", &metas_received);
  gst_structure_get_uint64 (stats, "metas-refused", &metas_refused);
  gst_structure_get_uint64 (stats, "frames-copied", &copied);
  g_print ("consumer frames=%u bad=%u caps=%u recheck_bad=%u first=%"
      G_GUINT64_FORMAT " last=%" G_GUINT64_FORMAT " warnings=%d ok=%d "
      "output=%d peer=%d discarded=%" G_GUINT64_FORMAT " connects=%d "
      "fenced=%d channel=%d driver_calls=%" G_GUINT64_FORMAT " metas_ok=%u "
      "metas_bad=%u metas_received=%" G_GUINT64_FORMAT " metas_refused=%"
      G_GUINT64_FORMAT " disorder=%u copied=%" G_GUINT64_FORMAT
      " checksum=%016" G_GINT64_MODIFIER "x peak_kib=%" G_GUINT64_FORMAT
      " elapsed_us=%" G_GINT64_FORMAT "\n", n, bad, n_caps, recheck_bad,
      first == G_MAXUINT64 ? 0 : first, last,
      g_atomic_int_get (&n_warnings), ok,
      g_strcmp0 (output, "gst-cuda-copied") == 0 ? 1 :
      g_strcmp0 (output, "gst-cuda-wrapped") == 0 ? 2 : 0,
      gst_structure_get_boolean (stats, "peer", &peer) && peer, discarded,
      g_atomic_int_get (&n_connects), g_atomic_int_get (&n_fenced),
      g_atomic_int_get (&n_channel), driver_calls, metas_ok, metas_bad,
      metas_received, metas_refused, disorder, copied, checksum,
      cudaipc_test_status_kib (0, "VmHWM"), t1 - t0);
  gst_structure_free (stats);

  gst_caps_replace (&last_caps, NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return ok && bad == 0 && recheck_bad == 0 && metas_bad == 0 ? 0 : 1;
}


/* A misbehaving consumer speaking the protocol directly. Modes:
 *   garbage      a datagram of random bytes after the handshake
 *   bad-release  a RELEASE for a slot it does not hold
 *   flood        thousands of RELEASEs of generation 0 (before the first
 *                ring: none of them for a frame it was sent), as fast as
 *                it can
 *   bad-version  a HELLO with protocol version 99
 *   bad-backend  a HELLO naming the other backend
 *   fd-junk      a SLOT, a message only a producer sends, with an fd that
 *                is no memory handle (/dev/null), once the producer's
 *                frame 1 came: after its first resources sample
 *   mute         reads nothing for 3 s after the handshake (so it never
 *                releases the frames it is sent)
 * Prints "rogue mode=M closed=1" once the producer closed the connection
 * (what every mode must lead to), "closed=0" if it did not within 10 s. */
static int
run_rogue (const gchar * socket_path)
{
  CudaIpcConn *conn;
  CudaIpcMsg msg;
  guint8 uuid[CUDAIPC_UUID_LEN];
  guint32 backend;
  gint64 deadline;
  gboolean closed = FALSE;
  int fd = -1, ret;

  for (gint i = 0; i < 200; i++) {
    if (cudaipc_socket_connect (socket_path, &fd) == 0)
      break;
    g_usleep (50000);
  }
  if (fd < 0)
    return 1;
  conn = cudaipc_conn_new (fd);
  if (cudaipc_conn_recv (conn, &msg) < 0 || msg.type != CUDAIPC_MSG_HELLO)
    return 1;
  backend = msg.u.hello.backend;
  memcpy (uuid, msg.u.hello.uuid, sizeof (uuid));
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = backend;
  memcpy (msg.u.hello.uuid, uuid, sizeof (uuid));
  msg.u.hello.name = "rogue";
  if (g_str_equal (mode, "bad-version"))
    msg.u.hello.version = 99;
  else if (g_str_equal (mode, "bad-backend"))
    msg.u.hello.backend = !backend;
  cudaipc_conn_send (conn, &msg);

  /* let the handshake finish (and the producer see us) before misbehaving */
  g_usleep (300000);
  if (g_str_equal (mode, "garbage")) {
    guint8 junk[512];
    for (guint i = 0; i < sizeof (junk); i++)
      junk[i] = g_random_int ();
    ret = send (cudaipc_conn_get_fd (conn), junk, sizeof (junk), 0);
    (void) ret;
  } else if (g_str_equal (mode, "bad-release")) {
    cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
    msg.u.release.slot = 63;
    cudaipc_conn_send (conn, &msg);
  } else if (g_str_equal (mode, "flood")) {
    cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
    msg.u.release.generation = 0;
    msg.u.release.slot = 0;
    cudaipc_conn_set_nonblocking (conn, TRUE);
    for (guint i = 0; i < 20000; i++)
      if (cudaipc_conn_send (conn, &msg) < 0)
        break;
    cudaipc_conn_set_nonblocking (conn, FALSE);
  } else if (g_str_equal (mode, "mute")) {
    g_usleep (3 * G_USEC_PER_SEC);
  } else if (g_str_equal (mode, "fd-junk")) {
    /* the producer samples its fds after frame 0 (--resources): an fd
     * sent before could be open at both samples, and its leak unseen */
    deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
    while (g_get_monotonic_time () < deadline) {
      gboolean later = FALSE;

      if (cudaipc_conn_wait (conn, 100) <= 0)
        continue;
      if (cudaipc_conn_recv (conn, &msg) < 0)
        break;
      later = msg.type == CUDAIPC_MSG_FRAME && msg.u.frame.offset >= 1;
      cudaipc_msg_clear (&msg);
      if (later)
        break;
    }
    /* a SLOT, which only a producer sends, with an fd attached */
    cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
    msg.u.slot.index = 0;
    msg.u.slot.size = 4096;
    msg.u.slot.n_allocs = 1;
    msg.u.slot.alloc_sizes[0] = 4096;
    msg.fds[0] = open ("/dev/null", O_RDONLY | O_CLOEXEC);
    msg.n_fds = 1;
    cudaipc_conn_send (conn, &msg);
    close (msg.fds[0]);
  }

  /* read (and drop) whatever comes until the producer hangs up */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline) {
    if (cudaipc_conn_wait (conn, 100) <= 0)
      continue;
    ret = cudaipc_conn_recv (conn, &msg);
    if (ret == -EPIPE || ret == -ECONNRESET) {
      closed = TRUE;
      break;
    }
    if (ret == 0) {
      gboolean bye = msg.type == CUDAIPC_MSG_BYE;
      cudaipc_msg_clear (&msg);
      if (bye) {
        closed = TRUE;
        break;
      }
    }
  }
  g_print ("rogue mode=%s closed=%d\n", mode, closed);
  cudaipc_conn_free (conn);
  return 0;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("producer|consumer|probe "
      "[SOCKET]");
  GError *err = NULL;
  int ret = 2;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);

  if (as_user) {
    struct passwd *pw = getpwnam (as_user);

    if (!pw || setgroups (0, NULL) < 0 || setgid (pw->pw_gid) < 0 ||
        setuid (pw->pw_uid) < 0) {
      g_printerr ("cannot become %s: %s\n", as_user, g_strerror (errno));
      return 2;
    }
  }

  if (argc == 2 && g_str_equal (argv[1], "probe")) {
    CudaIpcDevice *dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &err);
    CudaIpcDevice *last;

    if (!dev) {
      g_print ("no GPU: %s\n", err->message);
      return CUDAIPC_TEST_SKIP;
    }
    g_print ("GPU: %s\n", cudaipc_device_get_name (dev));
    cudaipc_device_unref (dev);
    last = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, min_devices - 1, &err);
    if (!last) {
      g_print ("fewer than %d GPUs: %s\n", min_devices, err->message);
      return CUDAIPC_TEST_SKIP;
    }
    cudaipc_device_unref (last);
    return 0;
  }
  if (argc == 3 && g_str_equal (argv[1], "producer"))
    ret = run_producer (argv[2]);
  else if (argc == 3 && g_str_equal (argv[1], "consumer"))
    ret = run_consumer (argv[2]);
  else if (argc == 3 && g_str_equal (argv[1], "rogue") && mode)
    ret = run_rogue (argv[2]);
  else
    g_printerr ("usage: %s producer|consumer SOCKET [options] | probe\n",
        argv[0]);
  return ret;
}
