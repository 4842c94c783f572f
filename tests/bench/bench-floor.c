/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor, (0): the least a hand-over of a frame between two processes
 * costs here, with no GStreamer and none of this project's protocol, so
 * that every other row can be read against it.
 *
 * The producer makes --ring-size slots of the library's memory (cuda: VMM
 * allocations exported as fds; host: sealed memfds) and one source frame
 * of the same kind, and sends every slot's fds to each consumer once, over
 * SOCK_SEQPACKET; the consumer imports them once. Then, per frame: the
 * stamp (CLOCK_MONOTONIC), one copy of the frame into the next slot (cuda:
 * cuMemcpyDtoDAsync on the producer's stream and cuStreamSynchronize, so
 * the frame is complete before anyone hears of it; host: memcpy), and one
 * 32-byte FRAME message to each consumer, which takes the time of its
 * arrival and answers with a 32-byte RELEASE. A slot is written again only
 * once every consumer released it (on-full=wait). What the row leaves out
 * that the elements do: caps, buffers, pads and their locks, the ring's
 * bookkeeping, the protocol's checks, metadata, a fence or event instead of
 * a host synchronisation.
 *
 * With --transport floor-ring, (0r), the same roles announce frames and
 * take releases through a page of shared memory instead of the messages
 * (bench-floor-ring.c); the socket then carries the set-up alone.
 *
 * It speaks the orchestrator's protocol as the other roles do ("listening",
 * "go", "ready", "result ...", "quit"; latency samples in --samples).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "bench-floor.h"
#include "ring/block.h"
#include "wire/connection.h"
#include "device/cuda-loader.h"
#include "ring/descriptor.h"

/* one per slot, with the slot's fds */
typedef struct
{
  guint32 magic, slot, n_slots, n_fds;
  guint64 size, frame_size;
  guint64 sizes[CUDAIPC_MAX_ALLOCS];
} FloorSetup;

static CudaIpcDevice *
open_device (void)
{
  GError *err = NULL;
  CudaIpcDevice *dev = cudaipc_device_new (bench_use_cuda ()?
      CUDAIPC_BACKEND_CUDA : CUDAIPC_BACKEND_HOST, 0, &err);

  if (dev == NULL) {
    g_printerr ("floor: %s\n", err->message);
    g_clear_error (&err);
  }
  return dev;
}

static gboolean
send_setup (int fd, const FloorSetup * s, const int *fds)
{
  char ctl[CMSG_SPACE (sizeof (int) * CUDAIPC_MAX_ALLOCS)];
  struct iovec iov = { (void *) s, sizeof (*s) };
  struct msghdr mh = { 0, };
  struct cmsghdr *cmsg;

  memset (ctl, 0, sizeof (ctl));
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = CMSG_SPACE (sizeof (int) * s->n_fds);
  cmsg = CMSG_FIRSTHDR (&mh);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int) * s->n_fds);
  memcpy (CMSG_DATA (cmsg), fds, sizeof (int) * s->n_fds);
  return sendmsg (fd, &mh, MSG_NOSIGNAL) == (ssize_t) sizeof (*s);
}

/* One setup message with @magic and its fds (at most CUDAIPC_MAX_ALLOCS,
 * the count the message names), within @timeout_ms. */
static gboolean
recv_setup (int fd, guint32 magic, FloorSetup * s, int *fds, gint timeout_ms)
{
  char ctl[CMSG_SPACE (sizeof (int) * CUDAIPC_MAX_ALLOCS)];
  struct iovec iov = { s, sizeof (*s) };
  struct msghdr mh = { 0, };
  struct pollfd pfd = { fd, POLLIN, 0 };
  guint got = 0;
  ssize_t n;

  if (poll (&pfd, 1, timeout_ms) != 1)
    return FALSE;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof (ctl);
  n = recvmsg (fd, &mh, MSG_CMSG_CLOEXEC);
  for (struct cmsghdr * c = CMSG_FIRSTHDR (&mh); n > 0 && c;
      c = CMSG_NXTHDR (&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      guint k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);

      for (guint i = 0; i < k; i++) {
        int f;

        memcpy (&f, CMSG_DATA (c) + i * sizeof (int), sizeof (int));
        if (got < CUDAIPC_MAX_ALLOCS)
          fds[got++] = f;
        else
          close (f);
      }
    }
  }
  if (n != (ssize_t) sizeof (*s) || s->magic != magic ||
      s->n_fds != got || got == 0 || (mh.msg_flags & MSG_CTRUNC)) {
    for (guint i = 0; i < got; i++)
      close (fds[i]);
    return FALSE;
  }
  return TRUE;
}

typedef struct
{
  CudaIpcDevice *dev;
  CudaIpcBlock *src, *slots[FLOOR_MAX_SLOTS];
  CUstream stream;
  FloorRing *ring;              /* (0r) */
  int listen_fd, *peers;
  guint n_peers, n_slots;
  guint holders[FLOOR_MAX_SLOTS];
  guint64 size;
} Floor;

/* Reads every RELEASE that is there (@wait_ms: how long to wait for the
 * first); FALSE when a consumer went away or sent something else. */
static gboolean
take_releases (Floor * f, gint wait_ms)
{
  struct pollfd pfd[64];         /* --clients is at most 64 */

  for (guint i = 0; i < f->n_peers; i++) {
    pfd[i].fd = f->peers[i];
    pfd[i].events = POLLIN;
    pfd[i].revents = 0;
  }
  if (poll (pfd, f->n_peers, wait_ms) < 0 && errno != EINTR)
    return FALSE;
  for (guint i = 0; i < f->n_peers; i++) {
    FloorMsg m;
    ssize_t n;

    if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    while ((n = recv (f->peers[i], &m, sizeof (m), MSG_DONTWAIT)) ==
        (ssize_t) sizeof (m)) {
      if (m.type != FLOOR_RELEASE || m.slot >= f->n_slots ||
          f->holders[m.slot] == 0) {
        g_printerr ("floor: consumer %u sent a bad release\n", i);
        return FALSE;
      }
      f->holders[m.slot]--;
    }
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      g_printerr ("floor: consumer %u went away\n", i);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
copy_frame (Floor * f, guint slot)
{
  guintptr dst = cudaipc_block_get_ptr (f->slots[slot]);
  guintptr src = cudaipc_block_get_ptr (f->src);
  const CudaIpcCudaFuncs *cu;
  GError *err = NULL;
  gboolean ok;

  if (cudaipc_device_get_backend (f->dev) == CUDAIPC_BACKEND_HOST) {
    memcpy ((void *) dst, (const void *) src, f->size);
    return TRUE;
  }
  cu = cudaipc_cuda ();
  ok = cudaipc_cuda_check (cu->MemcpyDtoDAsync ((CUdeviceptr) dst,
          (CUdeviceptr) src, f->size, f->stream), "cuMemcpyDtoDAsync", &err)
      && cudaipc_cuda_check (cu->StreamSynchronize (f->stream),
      "cuStreamSynchronize", &err);
  if (!ok) {
    g_printerr ("floor: %s\n", err->message);
    g_clear_error (&err);
  }
  return ok;
}

static gboolean
floor_setup (Floor * f)
{
  GError *err = NULL;
  guint8 *frame;
  gboolean cuda;

  f->dev = open_device ();
  if (f->dev == NULL)
    return FALSE;
  cuda = cudaipc_device_get_backend (f->dev) == CUDAIPC_BACKEND_CUDA;
  f->size = (guint64) opts.width * opts.height * 3 / 2;
  f->n_slots = MIN (opts.ring_size, FLOOR_MAX_SLOTS);
  f->src = cudaipc_block_new (f->dev, f->size, 0, &err);
  for (guint i = 0; f->src && i < f->n_slots; i++) {
    f->slots[i] = cudaipc_block_new (f->dev, f->size, 0, &err);
    if (f->slots[i] == NULL)
      break;
  }
  if (err) {
    g_printerr ("floor: %s\n", err->message);
    g_clear_error (&err);
    return FALSE;
  }
  /* a frame of something, written once */
  frame = g_malloc (f->size);
  for (guint64 i = 0; i < f->size; i++)
    frame[i] = (guint8) (i * 31 + 7);
  if (!cudaipc_device_write (f->dev, cudaipc_block_get_ptr (f->src), frame,
          f->size, &err)) {
    g_printerr ("floor: %s\n", err->message);
    g_clear_error (&err);
    g_free (frame);
    return FALSE;
  }
  g_free (frame);
  if (cuda) {
    const CudaIpcCudaFuncs *cu = cudaipc_cuda ();

    /* the context stays current on this thread for the copies */
    if (!cudaipc_device_push (f->dev, &err) ||
        !cudaipc_cuda_check (cu->StreamCreate (&f->stream,
                CU_STREAM_NON_BLOCKING), "cuStreamCreate", &err)) {
      g_printerr ("floor: %s\n", err->message);
      g_clear_error (&err);
      return FALSE;
    }
  }
  return TRUE;
}

static void
floor_clear (Floor * f)
{
  for (guint i = 0; i < f->n_peers; i++)
    close (f->peers[i]);
  g_free (f->peers);
  g_clear_pointer (&f->ring, floor_ring_free);
  if (f->listen_fd >= 0) {
    close (f->listen_fd);
    cudaipc_socket_unlink (opts.socket);
  }
  if (f->stream) {
    cudaipc_cuda ()->StreamSynchronize (f->stream);
    cudaipc_cuda ()->StreamDestroy (f->stream);
    cudaipc_device_pop (f->dev);
  }
  for (guint i = 0; i < f->n_slots; i++)
    g_clear_pointer (&f->slots[i], cudaipc_block_free);
  g_clear_pointer (&f->src, cudaipc_block_free);
  g_clear_pointer (&f->dev, cudaipc_device_unref);
}

/* Accepts --clients consumers and sends each every slot, then (0r)'s
 * page with the consumer's number. */
static gboolean
floor_accept (Floor * f)
{
  gint64 deadline = bench_now_ns () + (gint64) opts.timeout * GST_SECOND;

  f->peers = g_new0 (int, opts.clients);
  while (f->n_peers < (guint) opts.clients) {
    struct pollfd pfd = { f->listen_fd, POLLIN, 0 };
    int fd = -1;

    if (bench_now_ns () > deadline) {
      g_printerr ("floor: %u of %d consumers connected\n", f->n_peers,
          opts.clients);
      return FALSE;
    }
    if (poll (&pfd, 1, 100) != 1 || cudaipc_socket_accept (f->listen_fd,
            &fd) < 0)
      continue;
    f->peers[f->n_peers++] = fd;
    for (guint s = 0; s < f->n_slots; s++) {
      const CudaIpcDescriptor *d = cudaipc_block_get_descriptor (f->slots[s]);
      FloorSetup set = { FLOOR_MAGIC, s, f->n_slots,
        cudaipc_descriptor_get_n_fds (d), f->size, f->size, {0,}
      };

      memcpy (set.sizes, cudaipc_descriptor_get_sizes (d),
          sizeof (guint64) * set.n_fds);
      if (!send_setup (fd, &set, cudaipc_descriptor_get_fds (d))) {
        g_printerr ("floor: cannot send slot %u: %s\n", s, g_strerror (errno));
        return FALSE;
      }
    }
    if (f->ring) {
      FloorSetup set = { FLOOR_RING_MAGIC, f->n_peers - 1, f->n_slots, 1,
        floor_ring_size (), f->size, {floor_ring_size (),}
      };
      int ring_fd = floor_ring_get_fd (f->ring);

      if (!send_setup (fd, &set, &ring_fd)) {
        g_printerr ("floor: cannot send the ring: %s\n", g_strerror (errno));
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* Waits until frame @i's slot is free: every consumer released it. */
static gboolean
wait_free (Floor * f, guint64 i)
{
  guint slot = (guint) (i % f->n_slots);

  if (f->ring)
    return floor_ring_wait_free (f->ring, i, opts.timeout * 1000);
  /* releases that came, without waiting; then wait for this slot */
  if (!take_releases (f, 0))
    return FALSE;
  while (f->holders[slot] > 0)
    if (!take_releases (f, 1000))
      return FALSE;
  return TRUE;
}

static gboolean
announce (Floor * f, const FloorMsg * m)
{
  if (f->ring) {
    floor_ring_announce (f->ring, m);
    return TRUE;
  }
  f->holders[m->slot] = f->n_peers;
  for (guint c = 0; c < f->n_peers; c++) {
    if (send (f->peers[c], m, sizeof (*m), MSG_NOSIGNAL) != sizeof (*m)) {
      g_printerr ("floor: cannot send to consumer %u: %s\n", c,
          g_strerror (errno));
      return FALSE;
    }
  }
  return TRUE;
}

int
bench_run_floor_producer (gboolean ring)
{
  Floor f = { 0, };
  guint64 total = (guint64) opts.warmup + opts.frames, pushed = 0;
  gint64 t0 = 0, t1, cpu0 = 0, cpu1, start;
  gboolean ok = FALSE;
  gchar *line;
  gint r;

  f.listen_fd = -1;
  if (!floor_setup (&f))
    goto done;
  if (ring && (f.ring = floor_ring_new (f.n_slots, opts.clients)) == NULL)
    goto done;
  r = cudaipc_socket_listen (opts.socket, 0600, &f.listen_fd);
  if (r < 0) {
    g_printerr ("floor: cannot listen on %s: %s\n", opts.socket,
        g_strerror (-r));
    goto done;
  }
  bench_say ("listening");
  if (!floor_accept (&f) || !bench_wait_command (NULL, "go", opts.timeout))
    goto done;

  start = bench_now_ns ();
  for (guint64 i = 0; i < total; i++) {
    guint slot = (guint) (i % f.n_slots);
    FloorMsg m = { FLOOR_FRAME, slot, i, 0, 0, 0 };
    gboolean last = i + 1 == total;

    bench_pace (start, i);
    if (i == (guint64) opts.warmup) {
      t0 = bench_now_ns ();
      cpu0 = bench_cpu_ns ();
    }
    if (i >= (guint64) opts.warmup && opts.seconds > 0 &&
        bench_now_ns () - t0 >= (gint64) opts.seconds * GST_SECOND)
      last = TRUE;
    if (!wait_free (&f, i))
      goto done;
    m.stamp = (guint64) bench_now_ns ();
    if (!copy_frame (&f, slot))
      goto done;
    m.flags = last ? FLOOR_LAST : 0;
    if (!announce (&f, &m))
      goto done;
    pushed = i + 1;
    if (last)
      break;
  }
  if (pushed <= (guint64) opts.warmup) {
    t0 = bench_now_ns ();
    cpu0 = bench_cpu_ns ();
  }
  /* every frame taken, as the sink's EOS says for the other rows */
  if (f.ring && !floor_ring_wait_free (f.ring, pushed + f.n_slots - 1,
          opts.timeout * 1000))
    goto done;
  for (guint s = 0; s < f.n_slots; s++)
    while (f.holders[s] > 0)
      if (!take_releases (&f, 1000))
        goto done;
  t1 = bench_now_ns ();
  cpu1 = bench_cpu_ns ();

  line = g_strdup_printf ("result pushed=%" G_GUINT64_FORMAT " measured=%"
      G_GUINT64_FORMAT " push_ns=%" G_GINT64_FORMAT " cpu_ns=%"
      G_GINT64_FORMAT " cpu_total_ns=%" G_GINT64_FORMAT " published=%"
      G_GUINT64_FORMAT " dropped=0 warnings=0 sink_latency_ns=0 "
      "ipc_mode=none host_syncs=%" G_GUINT64_FORMAT " sink_type=floor",
      pushed, pushed > (guint64) opts.warmup ? pushed - opts.warmup : 0,
      t1 - t0, cpu1 - cpu0, cpu1, pushed, f.stream ? pushed : 0);
  bench_say (line);
  g_free (line);
  ok = TRUE;
  bench_wait_command (NULL, "quit", opts.timeout);

done:
  floor_clear (&f);
  return ok ? 0 : 1;
}

/* Connects (the producer listens before consumers start, but a retry
 * costs nothing) and imports every slot. */
static gboolean
consumer_connect (CudaIpcDevice * dev, int *fd_out, CudaIpcBlock ** slots,
    guint * n_slots)
{
  gint64 deadline = bench_now_ns () + (gint64) opts.timeout * GST_SECOND;
  GError *err = NULL;
  guint n = 0, want = 1;
  int fd = -1;

  while (cudaipc_socket_connect (opts.socket, &fd) < 0) {
    if (bench_now_ns () > deadline) {
      g_printerr ("floor consumer: no producer on %s\n", opts.socket);
      return FALSE;
    }
    g_usleep (10000);
  }
  *fd_out = fd;
  while (n < want) {
    FloorSetup s;
    int fds[CUDAIPC_MAX_ALLOCS];
    CudaIpcDescriptor *d;

    if (!recv_setup (fd, FLOOR_MAGIC, &s, fds, opts.timeout * 1000) ||
        s.slot != n ||
        s.n_slots == 0 || s.n_slots > FLOOR_MAX_SLOTS || s.n_fds >
        CUDAIPC_MAX_ALLOCS) {
      g_printerr ("floor consumer: bad or no slot %u\n", n);
      return FALSE;
    }
    want = s.n_slots;
    d = cudaipc_descriptor_new_from_fds (dev, fds, s.sizes, s.n_fds, s.size,
        &err);
    slots[n] = d ? cudaipc_block_import (dev, d, &err) : NULL;
    if (d)
      cudaipc_descriptor_free (d);
    if (slots[n] == NULL) {
      g_printerr ("floor consumer: slot %u: %s\n", n, err->message);
      g_clear_error (&err);
      return FALSE;
    }
    n++;
    *n_slots = n;
  }
  return TRUE;
}

int
bench_run_floor_consumer (gboolean ring)
{
  CudaIpcDevice *dev = open_device ();
  FloorRing *r = NULL;
  CudaIpcBlock *slots[FLOOR_MAX_SLOTS] = { NULL, };
  GArray *samples = g_array_sized_new (FALSE, FALSE, sizeof (gint64),
      opts.frames);
  guint n_slots = 0;
  guint64 received = 0, measured = 0;
  gint64 first_stamp = 0, last_arrival = 0, cpu0 = 0, cpu1 = 0;
  gint64 last_index = -1, p50, p99;
  const gchar *ended = "error";
  gboolean ok = FALSE;
  gchar *line;
  int fd = -1;

  if (dev == NULL || !consumer_connect (dev, &fd, slots, &n_slots))
    goto done;
  if (ring) {
    FloorSetup s;
    int ring_fd;

    if (!recv_setup (fd, FLOOR_RING_MAGIC, &s, &ring_fd, opts.timeout * 1000)
        || s.n_fds != 1) {
      g_printerr ("floor consumer: no ring page\n");
      goto done;
    }
    if ((r = floor_ring_open (ring_fd, n_slots, s.slot)) == NULL)
      goto done;
  }
  bench_say ("ready");
  for (;;) {
    FloorMsg m;
    gint64 now;
    ssize_t n;

    if (r) {
      gint got = floor_ring_next (r, &m, opts.spin_us, opts.idle * 1000);

      now = bench_now_ns ();
      if (got == 0) {
        ended = "idle";
        break;
      }
      if (got < 0) {
        g_printerr ("floor consumer: bad ring entry\n");
        break;
      }
    } else {
      struct pollfd pfd = { fd, POLLIN, 0 };

      if (poll (&pfd, 1, opts.idle * 1000) != 1) {
        ended = "idle";
        break;
      }
      n = recv (fd, &m, sizeof (m), 0);
      now = bench_now_ns ();
      if (n == 0) {
        ended = "closed";
        break;
      }
      if (n != sizeof (m) || m.type != FLOOR_FRAME || m.slot >= n_slots) {
        g_printerr ("floor consumer: bad message\n");
        break;
      }
    }
    received++;
    last_index = (gint64) m.index;
    if (m.index >= (guint64) opts.warmup) {
      if (measured == 0) {
        first_stamp = (gint64) m.stamp;
        cpu0 = bench_cpu_ns ();
      }
      measured++;
      last_arrival = now;
      if ((gint64) m.stamp <= now) {
        gint64 lat = now - (gint64) m.stamp;

        g_array_append_val (samples, lat);
      }
    }
    m.type = FLOOR_RELEASE;
    if (r) {
      floor_ring_release (r);
    } else if (send (fd, &m, sizeof (m), MSG_NOSIGNAL) != sizeof (m)) {
      g_printerr ("floor consumer: cannot release: %s\n", g_strerror (errno));
      break;
    }
    if (m.flags & FLOOR_LAST) {
      ended = "last";
      ok = TRUE;
      break;
    }
  }
  cpu1 = bench_cpu_ns ();

done:
  g_array_sort (samples, bench_cmp_i64);
  p50 = bench_percentile ((gint64 *) samples->data, samples->len, 0.50);
  p99 = bench_percentile ((gint64 *) samples->data, samples->len, 0.99);
  if (opts.samples)
    g_file_set_contents (opts.samples, samples->data,
        (gssize) (samples->len * sizeof (gint64)), NULL);
  line = g_strdup_printf ("result received=%" G_GUINT64_FORMAT " measured=%"
      G_GUINT64_FORMAT " samples=%u bad_stamps=%" G_GUINT64_FORMAT
      " repeats=0 first_stamp=%" G_GINT64_FORMAT " last_arrival=%"
      G_GINT64_FORMAT " cpu_ns=%" G_GINT64_FORMAT " cpu_total_ns=%"
      G_GINT64_FORMAT " last_index=%" G_GINT64_FORMAT " p50_ns=%"
      G_GINT64_FORMAT " p99_ns=%" G_GINT64_FORMAT " pushed=0 ended=%s "
      "ids=carried memory=%s driver_calls=0 src_type=floor", received,
      measured, samples->len, measured - samples->len, first_stamp,
      last_arrival, measured ? cpu1 - cpu0 : 0, bench_cpu_ns (), last_index,
      p50, p99, ended, bench_use_cuda ()? "cuda" : "system");
  bench_say (line);
  g_free (line);
  g_array_unref (samples);
  /* the producer quits once every consumer has reported */
  if (fd >= 0) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    char b[64];

    while (poll (&pfd, 1, opts.timeout * 1000) == 1 && recv (fd, b,
            sizeof (b), 0) > 0);
    close (fd);
  }
  floor_ring_free (r);
  for (guint i = 0; i < n_slots; i++)
    cudaipc_block_free (slots[i]);
  if (dev)
    cudaipc_device_unref (dev);
  return ok ? 0 : 1;
}
