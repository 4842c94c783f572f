/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes the fuzz targets' seed corpus: one valid message of every type
 * (protocol/) and a few descriptor layouts (descriptor/). Usage:
 * make-corpus DIR. The output is committed under tests/fuzz/corpus.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <sys/mman.h>
#include <glib.h>
#include <glib/gstdio.h>

#include <gst/gst.h>
#include <gst/video/video.h>

#include "metas/metas.h"
#include "wire/channel.h"
#include "wire/protocol.h"

static void
write_seed (const gchar * dir, const gchar * name, guint8 n_fds,
    const guint8 * data, gsize len)
{
  gchar *path = g_build_filename (dir, name, NULL);
  guint8 *buf = g_malloc (len + 1);

  buf[0] = n_fds;
  memcpy (buf + 1, data, len);
  if (!g_file_set_contents (path, (const gchar *) buf, len + 1, NULL))
    g_error ("cannot write %s", path);
  g_free (buf);
  g_free (path);
}

static void
seed_msg (const gchar * dir, const gchar * name, CudaIpcMsg * msg)
{
  static guint8 buf[CUDAIPC_MAX_MESSAGE];
  gssize len = cudaipc_msg_build (msg, 1, buf, sizeof (buf));

  if (len < 0)
    g_error ("build %s: %s", name, g_strerror (-len));
  write_seed (dir, name, msg->n_fds, buf, len);
}

static void
protocol_seeds (const gchar * dir)
{
  CudaIpcMsg m;

  cudaipc_msg_init (&m, CUDAIPC_MSG_HELLO);
  m.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  m.u.hello.backend = 1;
  memset (m.u.hello.uuid, 0xab, sizeof (m.u.hello.uuid));
  m.u.hello.caps = CUDAIPC_CAP_FENCE | CUDAIPC_CAP_EVENTS;
  m.u.hello.pid = 1234;
  m.u.hello.name = "cudaipcsrc-1234";
  seed_msg (dir, "hello", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_RING);
  m.u.ring.generation = 3;
  m.u.ring.n_slots = 4;
  m.u.ring.slot_size = 12582912;
  seed_msg (dir, "ring", &m);
  /* with the fence page's fd */
  m.u.ring.flags = CUDAIPC_RING_HAS_FENCE;
  m.n_fds = 1;
  seed_msg (dir, "ring-fence", &m);
  /* a live stream's */
  m.u.ring.flags |= CUDAIPC_RING_LIVE;
  seed_msg (dir, "ring-fence-live", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_SLOT);
  m.u.slot.generation = 3;
  m.u.slot.index = 2;
  m.u.slot.size = 12441600;
  m.u.slot.n_allocs = 2;
  m.u.slot.alloc_sizes[0] = 8388608;
  m.u.slot.alloc_sizes[1] = 4194304;
  m.u.slot.flags = CUDAIPC_SLOT_HAS_EVENT;
  memset (m.u.slot.event_handle, 0x5a, sizeof (m.u.slot.event_handle));
  m.fds[0] = 0;
  m.fds[1] = 0;
  m.n_fds = 2;
  seed_msg (dir, "slot", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_CAPS);
  m.u.caps.caps_id = 1;
  m.u.caps.caps = "video/x-raw, format=(string)NV12, width=(int)1920, "
      "height=(int)1080, framerate=(fraction)30/1";
  seed_msg (dir, "caps", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_FRAME);
  m.u.frame.generation = 3;
  m.u.frame.slot = 2;
  m.u.frame.seq = 77;
  m.u.frame.caps_id = 1;
  m.u.frame.pts = 1000000000;
  m.u.frame.dts = G_MAXUINT64;
  m.u.frame.duration = 33333333;
  m.u.frame.size = 3110400;
  m.u.frame.n_planes = 2;
  m.u.frame.planes[0].offset = 0;
  m.u.frame.planes[0].stride = 1920;
  m.u.frame.planes[1].offset = 2073600;
  m.u.frame.planes[1].stride = 1920;
  seed_msg (dir, "frame", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_RELEASE);
  m.u.release.generation = 3;
  m.u.release.slot = 2;
  m.u.release.seq = 77;
  seed_msg (dir, "release", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_EVENT);
  m.u.event.event_type = 28174;  /* GST_EVENT_EOS */
  m.u.event.running_time = G_MAXUINT64;
  m.u.event.structure = "";
  seed_msg (dir, "event", &m);

  cudaipc_msg_init (&m, CUDAIPC_MSG_BYE);
  m.u.bye.reason = CUDAIPC_BYE_VERSION;
  m.u.bye.text = "protocol version 2 is not supported";
  seed_msg (dir, "bye", &m);

  {
    GString *deep = g_string_new ("video/x-raw, format=(string)GRAY8, "
        "width=(int)64, height=(int)4, framerate=(fraction)30/1, x=(int)");

    /* nested far beyond what a consumer parses (media.h) */
    for (guint i = 0; i < 2000; i++)
      g_string_append_c (deep, '{');
    g_string_append_c (deep, '1');
    for (guint i = 0; i < 2000; i++)
      g_string_append_c (deep, '}');
    cudaipc_msg_init (&m, CUDAIPC_MSG_CAPS);
    m.u.caps.caps_id = 9;
    m.u.caps.caps = deep->str;
    seed_msg (dir, "caps-nested", &m);
    g_string_free (deep, TRUE);
  }

  {
    /* a FRAME carrying a crop (metas.c's entry layout) */
    static const guint8 crop[24] = { 3, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0,
      0, 0, 0, 0, 16, 0, 0, 0, 16, 0, 0, 0
    };

    cudaipc_msg_init (&m, CUDAIPC_MSG_FRAME);
    m.u.frame.generation = 3;
    m.u.frame.slot = 1;
    m.u.frame.seq = 77;
    m.u.frame.caps_id = 9;
    m.u.frame.size = 4096;
    m.u.frame.n_planes = 1;
    m.u.frame.planes[0].stride = 64;
    m.u.frame.meta = crop;
    m.u.frame.meta_len = sizeof (crop);
    seed_msg (dir, "frame-metas", &m);
  }

  cudaipc_msg_init (&m, CUDAIPC_MSG_BYE);
  m.u.bye.reason = CUDAIPC_BYE_LOCAL;
  m.u.bye.text = "this consumer could not import slot 0";
  seed_msg (dir, "bye-local", &m);
}

static void
write_blob (const gchar * dir, const gchar * name, GstBuffer * buf)
{
  CudaIpcMetaCounts counts = { 0, };
  GByteArray *blob = g_byte_array_new ();
  gchar *path = g_build_filename (dir, name, NULL);

  cudaipc_metas_encode (buf, NULL, blob, &counts);
  if (!g_file_set_contents (path, (const gchar *) blob->data, blob->len,
          NULL))
    g_error ("cannot write %s", path);
  g_byte_array_unref (blob);
  g_free (path);
  gst_buffer_unref (buf);
}

/* One valid blob of each kind this build encodes, and a frame of 50
 * regions of interest. */
static void
metas_seeds (const gchar * dir)
{
  GstBuffer *buf = gst_buffer_new ();
  GstVideoRegionOfInterestMeta *roi;
  GstVideoCropMeta *crop;
  GstCaps *ref = gst_caps_from_string ("timestamp/x-ntp, port=(int)123");
  GDateTime *jam = g_date_time_new_utc (2026, 12, 1, 0, 0, 0);

  roi = gst_buffer_add_video_region_of_interest_meta (buf, "face", 1, 2, 3,
      4);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, 0.5,
          NULL));
  write_blob (dir, "roi", buf);

  buf = gst_buffer_new ();
  gst_buffer_add_video_time_code_meta_full (buf, 30000, 1001, jam,
      GST_VIDEO_TIME_CODE_FLAGS_DROP_FRAME, 1, 2, 3, 4, 0);
  crop = gst_buffer_add_video_crop_meta (buf);
  crop->width = 10;
  crop->height = 10;
  gst_buffer_add_reference_timestamp_meta (buf, ref, 1, 2);
  write_blob (dir, "timecode-crop-reference", buf);

  buf = gst_buffer_new ();
  for (guint i = 0; i < 50; i++)
    gst_buffer_add_video_region_of_interest_meta (buf, "car", i, i, 8, 8);
  write_blob (dir, "fifty-regions", buf);

  gst_caps_unref (ref);
  g_date_time_unref (jam);
}

static void
descriptor_seed (const gchar * dir, const gchar * name, guint n,
    const guint8 * kinds, const guint32 * pages, const guint64 * sizes,
    guint64 size)
{
  GByteArray *b = g_byte_array_new ();
  gchar *path = g_build_filename (dir, name, NULL);
  guint8 nb = n;

  g_byte_array_append (b, &nb, 1);
  for (guint i = 0; i < n; i++) {
    guint32 le = GUINT32_TO_LE (pages[i]);
    g_byte_array_append (b, &kinds[i], 1);
    g_byte_array_append (b, (guint8 *) & le, 4);
  }
  for (guint i = 0; i < n; i++) {
    guint64 le = GUINT64_TO_LE (sizes[i]);
    g_byte_array_append (b, (guint8 *) & le, 8);
  }
  {
    guint64 le = GUINT64_TO_LE (size);
    g_byte_array_append (b, (guint8 *) & le, 8);
  }
  if (!g_file_set_contents (path, (const gchar *) b->data, b->len, NULL))
    g_error ("cannot write %s", path);
  g_byte_array_free (b, TRUE);
  g_free (path);
}

/* A channel's page as a producer writes it: its head, the consumer's
 * tail, then the records of @n messages (a mark after the second), with
 * @skip bytes of records written and read first, so that they wrap. */
static void
channel_seed (const gchar * dir, const gchar * name, guint n, gsize skip)
{
  static guint8 buf[CUDAIPC_MAX_MESSAGE];
  CudaIpcWake *wake = cudaipc_wake_new (0, NULL);
  CudaIpcChannel *tx = cudaipc_channel_new (4096, wake, NULL);
  guint8 *page, *seed;

  cudaipc_wake_unref (wake);
  gchar *path;

  page = mmap (NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
      cudaipc_channel_get_memfd (tx), 0);
  for (gsize done = 0; done < skip; done += 72) {
    memset (buf, 0, 64);
    cudaipc_channel_write (tx, buf, 64);
    /* the consumer's tail follows */
    memcpy (page + 64, page, 8);
  }
  for (guint i = 0; i < n; i++) {
    CudaIpcMsg m;
    gssize len;

    cudaipc_msg_init (&m, i % 2 ? CUDAIPC_MSG_EVENT : CUDAIPC_MSG_FRAME);
    if (i % 2) {
      m.u.event.event_type = GST_EVENT_EOS;
      m.u.event.structure = "";
    } else {
      m.u.frame.slot = i % 4;
      m.u.frame.seq = i;
      m.u.frame.size = 4096;
      m.u.frame.n_planes = 1;
      m.u.frame.planes[0].stride = 64;
    }
    len = cudaipc_msg_build (&m, i + 1, buf, sizeof (buf));
    cudaipc_channel_write (tx, buf, len);
    if (i == 1)
      cudaipc_channel_write (tx, NULL, 0);
  }
  seed = g_malloc (16 + 4096);
  memcpy (seed, page, 8);
  memcpy (seed + 8, page + 64, 8);
  memcpy (seed + 16, page + 4096, 4096);
  path = g_build_filename (dir, name, NULL);
  if (!g_file_set_contents (path, (const gchar *) seed, 16 + 4096, NULL))
    g_error ("cannot write %s", path);
  g_free (path);
  g_free (seed);
  munmap (page, 8192);
  cudaipc_channel_free (tx);
}

int
main (int argc, char **argv)
{
  gchar *pdir, *ddir, *mdir, *cdir;
  const guint8 kinds[3] = { 0, 0, 0 }, bad_kinds[3] = { 1, 2, 3 };
  const guint32 pages[3] = { 2, 2, 1 };
  const guint64 sizes[3] = { 8192, 8192, 4096 };

  if (argc != 2)
    g_error ("usage: make-corpus DIR");
  pdir = g_build_filename (argv[1], "protocol", NULL);
  ddir = g_build_filename (argv[1], "descriptor", NULL);
  g_mkdir_with_parents (pdir, 0755);
  mdir = g_build_filename (argv[1], "metas", NULL);
  g_mkdir_with_parents (ddir, 0755);
  g_mkdir_with_parents (mdir, 0755);
  gst_init (NULL, NULL);
  protocol_seeds (pdir);
  metas_seeds (mdir);
  descriptor_seed (ddir, "three-sealed", 3, kinds, pages, sizes, 20000);
  descriptor_seed (ddir, "one-sealed", 1, kinds, pages, sizes, 8192);
  descriptor_seed (ddir, "wrong-kinds", 3, bad_kinds, pages, sizes, 20000);
  descriptor_seed (ddir, "size-too-big", 1, kinds, pages, sizes, 8193);
  cdir = g_build_filename (argv[1], "channel", NULL);
  g_mkdir_with_parents (cdir, 0755);
  channel_seed (cdir, "four", 4, 0);
  channel_seed (cdir, "wrapped", 6, 4000);
  g_free (cdir);
  g_free (pdir);
  g_free (ddir);
  g_free (mdir);
  return 0;
}
