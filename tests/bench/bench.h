/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the parts of cudaipc-bench share (cudaipc-bench.c says what the
 * program does).
 *
 *   cudaipc-bench.c   options, main(), small helpers
 *   bench-pipeline.c  helpers of the two roles: elements, the frame, the
 *                     orchestrator's commands, the time limit
 *   bench-producer.c  the producer role
 *   bench-consumer.c  the consumer role
 *   bench-run.c       the orchestrator: child processes, one row at a time
 *   bench-plan.c      the rows a run makes (transports, nvcodec ipc-modes,
 *                     resolutions, consumer counts, rates) and its estimate
 *   bench-figures.c   a row's figures from what its children reported, and
 *                     the (a)/(b), (a)/(c) ratios
 *   bench-env.c       what this machine is and what can run on it
 *   bench-report.c    the Markdown table and the results file
 *   bench-gstcuda.c   the optional gstreamer-cuda-1.0 check of the frame
 *   bench-floor.c     the floor's two roles, without GStreamer
 *   bench-floor-ring.c the floor's second row: frames through shared memory
 *
 * Each process is single-purpose: a role's process runs one pipeline; the
 * orchestrator runs a GMainLoop on its main thread and touches Rows only
 * there. The options are parsed once in main() and read-only after.
 */
#pragma once

#include <gst/gst.h>

#include "device/device.h"

G_BEGIN_DECLS typedef enum
{
  TRANSPORT_CUDAIPC,            /* (a) this project's cudaipcsink/src */
  TRANSPORT_SHM,                /* (b) [cudadownload !] shmsink, shmsrc */
  TRANSPORT_NVCODEC,            /* (c) nvcodec's cudaipcsink/src, >= 1.24 */
  TRANSPORT_FLOOR,              /* (0) a bare hand-over, no GStreamer */
  TRANSPORT_FLOOR_RING,         /* (0r) the same, announced in shared memory */
  N_TRANSPORTS
} Transport;

/* (b): stamp, frame index and flags, in front of the frame's pixels */
#define BENCH_HDR_WORDS 3
#define BENCH_HDR_SIZE (BENCH_HDR_WORDS * sizeof (guint64))
#define BENCH_FLAG_LAST 1

/* (c): frame index and last-frame flag in a custom meta, which nvcodec's
 * sink serializes with the frame (GStreamer >= 1.24) and its source
 * restores where the consumer registered the same name */
#define BENCH_META_NAME "CuIpcBenchFrame"

#define BENCH_CUDA_CAPS "video/x-raw(memory:CUDAMemory)"
#define BENCH_EXIT_TIMEOUT 124
/* a role that reported its result but did not tear down in time */
#define BENCH_EXIT_TEARDOWN 125
#define BENCH_TEARDOWN_S 10

typedef struct
{
  /* run */
  gchar *transports, *resolutions, *consumers, *output, *wrapper, *label;
  gchar *producer_wrapper;
  gchar **consumer_wrap, **producer_wrap;      /* run: the wrappers' words */
  gchar *rates, *ipc_modes, *orderings, *rois_list;
  gboolean verbose, keep, dry_run, python_consumer, in_place;
  gboolean detections;          /* run, producer: --rois as analytics */
  gint kill_after;
  /* every role (rate: the row's; for run, --rates wins over it) */
  gchar *memory, *plugin, *stamp;
  gint frames, warmup, seconds, ring_size, shm_frames, timeout, consumer_device,
      rate;
  /* producer and consumer */
  gchar *transport, *socket, *samples, *ipc_mode;
  gint width, height, clients, index, idle, grace_ms, parent, rois;
  gint hold;                    /* consumer: its last N frames kept */
  gint spin_us;                 /* (0r) consumer: spin before sleeping */
  gchar *announce;              /* (a) consumer: cuipcsrc announce= */
} BenchOptions;

extern BenchOptions opts;

/* What the orchestrator reports about this machine. */
typedef struct
{
  gchar *gst_version, *gpu_name, *driver, *cuda_api, *cpu_model, *kernel;
  gchar *date, *memory_reason;
  guint cores;
} BenchEnv;

extern BenchEnv bench_env;

typedef struct _Child Child;

/* One rate x transport (x nvcodec ipc-mode) x resolution x consumer
 * count. */
typedef struct
{
  Transport transport;
  const gchar *ipc_mode;        /* (c): "legacy" or "mmap"; (a): the sink's
                                 * ordering, with --orderings; "copy" or
                                 * "in-place" with --in-place; else NULL */
  gint width, height;
  guint n_consumers;
  gint rate;                    /* frames/s pushed; 0: flat out */
  guint rois;                   /* (a): regions of interest per frame */
  gboolean python;              /* (a): consumers in Python (cudaipc) */

  /* outcome */
  gboolean skipped, failed;
  gchar *skip_reason;
  GString *reasons;             /* why it failed */
  GString *notes;               /* remarks that do not fail it */
  gdouble fps, fps_min, producer_fps, wall_s;
  gdouble p50, p99, mean, max;
  guint n_samples;
  gdouble producer_cpu, producer_cpu_total, consumer_cpu, consumer_cpu_total;
  /* (a): the time a consumer waited for the producer's write into the
   * slot to land (its source's copy-wait-ns over the frames it received,
   * us, mean of the consumers) and the fraction of frames that waited */
  gdouble copy_wait, copy_waited;
  gboolean have_copy_wait;
  gdouble gpu_mib;
  /* measured frames a consumer got over those pushed: mean, smallest */
  gdouble delivered, delivered_min;
  /* (b), (c): (a)'s figure over this row's, same size, consumers, rate */
  gdouble ratio_fps, ratio_p50;
  /* every row but the floor's: its figure over the floor's, same size,
   * consumers, rate (frames/s: the fraction of the floor's; p50: times) */
  gdouble floor_fps, floor_p50;
  gboolean have_floor_fps, have_floor_p50;
  gboolean have_gpu, have_latency, have_fps, have_pcpu, have_ccpu;
  gboolean have_delivered, have_ratio_fps, have_ratio_p50;
  gboolean ids_counted;         /* a consumer had to count arrivals */
  guint64 pushed, published, dropped, missing;
  GHashTable *producer_result;  /* its "result" line: key -> value */
  GPtrArray *consumer_results;  /* GHashTable*, NULL for none */

  /* while it runs (bench-run.c) */
  GMainLoop *loop;
  Child *producer;
  GPtrArray *consumers;         /* Child* */
  guint n_running, n_ready;
  gboolean go_sent, quit_sent, timed_out;
  guint deadline_id, kill_id;
  gint64 started, go_time;
  gchar *dir, *socket;
  guint64 mem_base, mem_max;
} Row;

/* cudaipc-bench.c */
gint64 bench_now_ns (void);
gint64 bench_cpu_ns (void);
const gchar *bench_transport_name (Transport t);
const gchar *bench_transport_label (Transport t);
gchar *bench_row_label (const Row * row);
gboolean bench_transport_from_name (const gchar * name, Transport * t);
void bench_pace (gint64 start, guint64 i);
gboolean bench_use_cuda (void);
gboolean bench_stamp_at_sink (void);
gint bench_cmp_i64 (gconstpointer a, gconstpointer b);
gint64 bench_percentile (const gint64 * sorted, guint n, gdouble q);

/* bench-pipeline.c */
gboolean bench_role_guard (void);
void bench_say (const gchar * line);
gboolean bench_bus_ok (GstElement * pipeline, GstClockTime wait,
    gboolean * eos);
GstElement *bench_make (const gchar * factory, const gchar * name);
GstElement *bench_make_capsfilter (const gchar * name, const gchar * caps_str);
GstElement *bench_make_ipc_element (Transport t, gboolean sink,
    const gchar * name);
GstBuffer *bench_make_frame (GstElement ** holder, GstCaps ** caps_out);
gboolean bench_wait_command (GstElement * pipeline, const gchar * what,
    gint timeout_s);
gchar *bench_poll_command (gboolean * closed);
void bench_arm_teardown (void);
const GstMetaInfo *bench_frame_meta_register (void);

/* bench-producer.c, bench-consumer.c: exit codes */
int bench_run_producer (Transport t);
int bench_run_consumer (Transport t);

/* bench-floor.c */
int bench_run_floor_producer (gboolean ring);
int bench_run_floor_consumer (gboolean ring);

/* bench-env.c */
CudaIpcDevice *bench_env_detect (gboolean * nvcodec_ok, gchar ** nvcodec_why);
gchar **bench_env_without_plugin (gchar ** env, gboolean * changed);
gchar *bench_default_plugin_path (const gchar * exe);
void bench_env_clear (void);

/* bench-run.c */
int bench_run (void);

/* bench-plan.c */
gboolean bench_plan_rows (GPtrArray * rows, gboolean nvcodec_ok,
    const gchar * nvcodec_why);
void bench_plan_estimate (GPtrArray * rows);
void bench_row_free (Row * row);
/* *INDENT-OFF* */
void bench_row_fail (Row * row, const gchar * format, ...) G_GNUC_PRINTF (2, 3);
void bench_row_note (Row * row, const gchar * format, ...) G_GNUC_PRINTF (2, 3);
/* *INDENT-ON* */

/* bench-figures.c */
void bench_row_compute (Row * row, gboolean have_gpu_base);
void bench_rows_ratios (GPtrArray * rows);

/* bench-report.c */
void bench_report_table (GPtrArray * rows);
gboolean bench_report_json (const gchar * path, GPtrArray * rows,
    GError ** error);
gboolean bench_report_tsv (const gchar * path, GPtrArray * rows,
    GError ** error);

G_END_DECLS
