/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api suite: libcudaipc's frames as arrays (cudaipc.h, version 2), host
 * backend, its producer and consumer in one process: each plane's shape,
 * element size and strides for the formats that are arrays, a clear
 * refusal for those that are not, and a DLPack tensor that holds its
 * frame until its deleter runs.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <unistd.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "api/cudaipc.h"
#include "test-main.h"

/* dlpack.h's unversioned DLManagedTensor, which is ABI */
typedef struct
{
  void *data;
  int32_t device_type, device_id;
  int32_t ndim;
  uint8_t code, bits;
  uint16_t lanes;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
  void *manager_ctx;
  void (*deleter) (void *self);
} Managed;

static gchar *sock;

static void
setup (void)
{
  sock = g_strdup_printf ("@cudaipc-api-planes-%d", getpid ());
}

static void
teardown (void)
{
  g_clear_pointer (&sock, g_free);
}

typedef struct
{
  cudaipc_producer *prod;
  cudaipc_consumer *cons;
  GstVideoInfo info;
  guint8 *data;
} Pair;

/* A producer of one frame of @format, @width x @height, and a consumer
 * that holds it in *@frame. */
static void
pair_start (Pair * p, const gchar * format, guint width, guint height,
    cudaipc_frame ** frame)
{
  cudaipc_producer_options po;
  cudaipc_consumer_options co;
  gchar *caps = g_strdup_printf ("video/x-raw, format=%s, width=%u, "
      "height=%u, framerate=30/1", format, width, height);
  cudaipc_status st;

  fail_unless (gst_video_info_set_format (&p->info,
          gst_video_format_from_string (format), width, height));
  cudaipc_producer_options_init (&po);
  po.backend = CUDAIPC_BACKEND_TYPE_HOST;
  p->prod = cudaipc_producer_new (sock, caps, &po);
  fail_unless (p->prod != NULL, "%s", cudaipc_producer_last_error ());
  cudaipc_consumer_options_init (&co);
  co.reconnect = 0;
  p->cons = cudaipc_consumer_new (sock, &co);
  /* connects, and finds nothing published yet */
  st = cudaipc_consumer_next (p->cons, 200, frame);
  fail_unless_equals_int (st, CUDAIPC_STATUS_TIMEOUT);
  for (gint i = 0; i < 500 && cudaipc_producer_n_consumers (p->prod) == 0;
      i++)
    g_usleep (10000);
  p->data = g_malloc0 (p->info.size);
  fail_unless_equals_int (cudaipc_producer_publish (p->prod,
          (uintptr_t) p->data, p->info.size, 0, 0, 0), CUDAIPC_STATUS_OK);
  fail_unless_equals_int (cudaipc_consumer_next (p->cons, 10000, frame),
      CUDAIPC_STATUS_OK);
  g_free (caps);
}

static void
pair_stop (Pair * p)
{
  cudaipc_consumer_free (p->cons);
  cudaipc_producer_free (p->prod);
  g_free (p->data);
}

/* Plane @i of @f is @ndim-dimensional, of @bits elements, (@rows, @cols,
 * @comps), over the producer's plane offset and stride. */
static void
check_plane (cudaipc_frame * f, const GstVideoInfo * vi, guint i,
    guint ndim, guint bits, gint64 rows, gint64 cols, gint64 comps)
{
  cudaipc_frame_info info = { sizeof (info), };
  cudaipc_plane p;

  fail_unless_equals_int (cudaipc_frame_get_info (f, &info),
      CUDAIPC_STATUS_OK);
  fail_unless_equals_int (cudaipc_frame_get_plane (f, i, &p),
      CUDAIPC_STATUS_OK);
  fail_unless_equals_int (p.ndim, ndim);
  fail_unless_equals_int (p.element_bits, bits);
  fail_unless_equals_uint64 (p.data, info.data + info.plane_offset[i]);
  fail_unless_equals_int64 (p.shape[0], rows);
  fail_unless_equals_int64 (p.shape[1], cols);
  fail_unless_equals_int64 (p.strides[0],
      GST_VIDEO_INFO_PLANE_STRIDE (vi, i) / (bits / 8));
  fail_unless_equals_int64 (p.strides[1], ndim == 3 ? comps : 1);
  if (ndim == 3) {
    fail_unless_equals_int64 (p.shape[2], comps);
    fail_unless_equals_int64 (p.strides[2], 1);
  }
}

/* What each plane of a format of a size is, as check_plane() reads it */
typedef struct
{
  const gchar *format;
  guint width, height;
  guint n_planes;
  struct
  {
    guint ndim, bits;
    gint64 rows, cols, comps;
  } planes[3];
} Layout;

static const Layout layouts[] = {
  {"NV12", 66, 50, 2, {{2, 8, 50, 66, 1}, {3, 8, 25, 33, 2}}},
  {"I420", 65, 49, 3, {{2, 8, 49, 65, 1}, {2, 8, 25, 33, 1},
          {2, 8, 25, 33, 1}}},
  /* three components, four bytes a pixel */
  {"RGBx", 8, 4, 1, {{3, 8, 4, 8, 4}}},
  {"P010_10LE", 64, 48, 2, {{2, 16, 48, 64, 1}, {3, 16, 24, 32, 2}}},
  {"GRAY16_LE", 16, 8, 1, {{2, 16, 8, 16, 1}}},
};

GST_START_TEST (test_planes_as_arrays)
{
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++) {
    const Layout *l = &layouts[i];
    Pair p;
    cudaipc_frame *f;
    cudaipc_plane plane;

    pair_start (&p, l->format, l->width, l->height, &f);
    for (guint j = 0; j < l->n_planes; j++)
      check_plane (f, &p.info, j, l->planes[j].ndim, l->planes[j].bits,
          l->planes[j].rows, l->planes[j].cols, l->planes[j].comps);
    fail_unless_equals_int (cudaipc_frame_get_plane (f, l->n_planes, &plane),
        CUDAIPC_STATUS_INVALID);
    cudaipc_frame_release (f);
    pair_stop (&p);
  }
}

GST_END_TEST;

/* Formats whose planes are no array: refused, and no tensor either. */
GST_START_TEST (test_planes_refused)
{
  const gchar *formats[] = { "YUY2", "GRAY16_BE", "v210" };

  for (guint i = 0; i < G_N_ELEMENTS (formats); i++) {
    Pair p;
    cudaipc_frame *f;
    cudaipc_plane plane;

    pair_start (&p, formats[i], 48, 16, &f);
    fail_unless_equals_int (cudaipc_frame_get_plane (f, 0, &plane),
        CUDAIPC_STATUS_FAILED);
    fail_unless (cudaipc_frame_to_dlpack (f, 0) == NULL, "%s", formats[i]);
    /* all its bytes are still an array */
    {
      Managed *m = cudaipc_frame_to_dlpack (f, -1);

      fail_unless (m != NULL);
      fail_unless_equals_int (m->ndim, 1);
      fail_unless_equals_int64 (m->shape[0], p.info.size);
      m->deleter (m);
    }
    cudaipc_frame_release (f);
    pair_stop (&p);
  }
}

GST_END_TEST;

GST_START_TEST (test_dlpack_holds_frame)
{
  Pair p;
  cudaipc_frame *f;
  cudaipc_frame_info info = { sizeof (info), };
  Managed *y, *uv;

  pair_start (&p, "NV12", 64, 48, &f);
  fail_unless_equals_int (cudaipc_frame_get_info (f, &info),
      CUDAIPC_STATUS_OK);
  y = cudaipc_frame_to_dlpack (f, 0);
  uv = cudaipc_frame_to_dlpack (f, 1);
  fail_unless (y != NULL && uv != NULL);
  fail_unless (cudaipc_frame_to_dlpack (f, 2) == NULL);
  fail_unless (cudaipc_frame_to_dlpack (f, -2) == NULL);
  /* kDLCPU, unsigned 8-bit elements */
  fail_unless_equals_int (y->device_type, 1);
  fail_unless_equals_int (y->code, 1);
  fail_unless_equals_int (y->bits, 8);
  fail_unless_equals_int (y->lanes, 1);
  fail_unless_equals_uint64 ((uintptr_t) y->data, info.data);
  fail_unless_equals_uint64 ((uintptr_t) uv->data,
      info.data + info.plane_offset[1]);
  fail_unless_equals_int (uv->ndim, 3);
  fail_unless_equals_int64 (uv->shape[0], 24);
  fail_unless_equals_int64 (uv->shape[1], 32);
  fail_unless_equals_int64 (uv->shape[2], 2);
  fail_unless_equals_int64 (uv->strides[0], info.plane_stride[1]);
  fail_unless_equals_int64 (uv->byte_offset, 0);

  /* the frame's own reference goes; the tensors still hold the slot */
  cudaipc_frame_release (f);
  fail_unless_equals_int (cudaipc_consumer_held (p.cons), 1);
  y->deleter (y);
  fail_unless_equals_int (cudaipc_consumer_held (p.cons), 1);
  uv->deleter (uv);
  fail_unless_equals_int (cudaipc_consumer_held (p.cons), 0);
  pair_stop (&p);
}

GST_END_TEST;

static Suite *
api_planes_suite (void)
{
  Suite *s = suite_create ("api-planes");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_planes_as_arrays);
  tcase_add_test (tc, test_planes_refused);
  tcase_add_test (tc, test_dlpack_holds_frame);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "api_planes",
  .suite = api_planes_suite,
};
