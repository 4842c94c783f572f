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
#include <glib.h>
#include <glib/gstdio.h>

#include "protocol.h"

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

  cudaipc_msg_init (&m, CUDAIPC_MSG_BYE);
  m.u.bye.reason = CUDAIPC_BYE_LOCAL;
  m.u.bye.text = "this consumer could not import slot 0";
  seed_msg (dir, "bye-local", &m);
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

int
main (int argc, char **argv)
{
  gchar *pdir, *ddir;
  const guint8 kinds[3] = { 0, 0, 0 }, bad_kinds[3] = { 1, 2, 3 };
  const guint32 pages[3] = { 2, 2, 1 };
  const guint64 sizes[3] = { 8192, 8192, 4096 };

  if (argc != 2)
    g_error ("usage: make-corpus DIR");
  pdir = g_build_filename (argv[1], "protocol", NULL);
  ddir = g_build_filename (argv[1], "descriptor", NULL);
  g_mkdir_with_parents (pdir, 0755);
  g_mkdir_with_parents (ddir, 0755);
  protocol_seeds (pdir);
  descriptor_seed (ddir, "three-sealed", 3, kinds, pages, sizes, 20000);
  descriptor_seed (ddir, "one-sealed", 1, kinds, pages, sizes, 8192);
  descriptor_seed (ddir, "wrong-kinds", 3, bad_kinds, pages, sizes, 20000);
  descriptor_seed (ddir, "size-too-big", 1, kinds, pages, sizes, 8193);
  g_free (pdir);
  g_free (ddir);
  return 0;
}
