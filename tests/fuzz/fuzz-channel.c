/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: a consumer reading an announce channel (wire/channel.h)
 * whose page a hostile producer wrote.
 *
 * Input: 8 bytes of the producer's head and 8 of the consumer's tail
 * (little endian, as the consumer finds them when it opens the page),
 * then the bytes of the records (at most the 4096 of the channel). The consumer reads
 * records until the channel is empty, a mark, or an error, and parses each
 * message as it would; nothing it reads may crash, hang or leak, and an
 * error must be one of the peer's (-EPROTO) or the parser's.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <gst/gst.h>

#include "wire/channel.h"
#include "wire/protocol.h"
#include "fuzz-util.h"

#define CAPACITY 4096

int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  static guint8 buf[CUDAIPC_MAX_MESSAGE + 1];
  CudaIpcChannel *tx, *rx;
  CudaIpcWake *wake;
  guint8 *page;
  guint before;

  if (size < 16)
    return 0;
  before = fuzz_count_fds ();
  wake = cudaipc_wake_new (0, NULL);
  tx = wake ? cudaipc_channel_new (CAPACITY, wake, NULL) : NULL;
  cudaipc_wake_unref (wake);
  if (tx == NULL)
    abort ();
  page = mmap (NULL, 4096 + CAPACITY, PROT_READ | PROT_WRITE, MAP_SHARED,
      cudaipc_channel_get_memfd (tx), 0);
  if (page == MAP_FAILED)
    abort ();
  memcpy (page + 4096, data + 16, MIN (size - 16, CAPACITY));
  memcpy (page, data, 8);
  memcpy (page + 64, data + 8, 8);
  rx = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)),
      dup (cudaipc_channel_get_wake_fd (tx)), CAPACITY, NULL);
  if (rx == NULL)
    abort ();

  /* each record takes at least 8 bytes: this many reads empty it */
  for (guint i = 0; i <= CAPACITY / 8 + 1; i++) {
    gsize len = 0;
    gint ret = cudaipc_channel_read (rx, buf, sizeof (buf), &len);
    CudaIpcMsg msg;

    if (ret == CUDAIPC_CHANNEL_MESSAGE) {
      if (len > CUDAIPC_CHANNEL_MAX_RECORD)
        abort ();
      if (cudaipc_msg_parse (buf, len, NULL, 0, &msg) == 0)
        cudaipc_msg_clear (&msg);
      continue;
    }
    if (ret < 0 && ret != -EPROTO)
      abort ();
    break;
  }
  cudaipc_channel_free (rx);
  munmap (page, 4096 + CAPACITY);
  cudaipc_channel_free (tx);
  if (fuzz_count_fds () != before)
    abort ();
  return 0;
}
