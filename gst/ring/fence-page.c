/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fence page (fence-page.h has the contract).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memfd_create, F_ADD_SEALS */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device/backend.h"
#include "device/cuda-loader.h"
#include "common/error.h"
#include "ring/fence-page.h"
#include "ring/shared-page.h"
#include "wire/protocol.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010      /* Linux 5.1 */
#endif

/* wait(): how long to poll busily (microseconds), then the sleep between
 * reads */
#define SPIN_US 20
#define SLEEP_US 20

#define N_WORDS (CUDAIPC_FENCE_PAGE_SIZE / sizeof (guint64))

G_STATIC_ASSERT (N_WORDS >= CUDAIPC_MAX_SLOTS);

struct _CudaIpcFencePage
{
  CudaIpcDevice *dev;           /* producer side; NULL on the consumer's */
  int fd;                       /* producer side; -1 on the consumer's */
  guint64 *words;               /* the mapping, CUDAIPC_FENCE_PAGE_SIZE */
  gboolean registered;          /* with the cuda device */
  CUdeviceptr dptr;             /* the page as the device sees it */
  guint64 seen[CUDAIPC_MAX_SLOTS];      /* consumer: the last value read */
};

static gboolean
errno_error (GError ** error, GQuark code, const gchar * what)
{
  int e = errno;

  g_set_error (error, CUDAIPC_ERROR, code, "%s: %s", what, g_strerror (e));
  return FALSE;
}

/* The cuda device can write the page from a stream: 64-bit stream memory
 * operations, and the page registered. */
static gboolean
register_page (CudaIpcFencePage * page, GError ** error)
{
  const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
  CudaIpcDevice *dev = page->dev;
  int supported = 0;
  gboolean ok;

  if (cu->StreamWriteValue64 == NULL) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "the CUDA driver has no cuStreamWriteValue64 (CUDA 11.7 or newer "
        "has it)");
    return FALSE;
  }
  if (!cudaipc_cuda_check (cu->DeviceGetAttribute (&supported,
              cu->stream_mem_ops_attribute, dev->cu_device),
          "cuDeviceGetAttribute (64-bit stream memory operations)", error))
    return FALSE;
  if (!supported) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "device %d (%s) has no 64-bit stream memory operations", dev->ordinal,
        dev->name ? dev->name : "?");
    return FALSE;
  }

  if (!cudaipc_device_push (dev, error))
    return FALSE;
  ok = cudaipc_cuda_check (cu->MemHostRegister (page->words,
          CUDAIPC_FENCE_PAGE_SIZE, CU_MEMHOSTREGISTER_PORTABLE |
          CU_MEMHOSTREGISTER_DEVICEMAP), "cuMemHostRegister (fence page)",
      error);
  if (ok) {
    page->registered = TRUE;
    ok = cudaipc_cuda_check (cu->MemHostGetDevicePointer (&page->dptr,
            page->words, 0), "cuMemHostGetDevicePointer (fence page)", error);
  }
  cudaipc_device_pop (dev);
  return ok;
}

CudaIpcFencePage *
cudaipc_fence_page_new (CudaIpcDevice * dev, GError ** error)
{
  CudaIpcFencePage *page;
  void *p;

  g_return_val_if_fail (dev != NULL, NULL);

  page = g_new0 (CudaIpcFencePage, 1);
  page->dev = cudaipc_device_ref (dev);
  page->fd = memfd_create ("cudaipc-fence", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (page->fd < 0) {
    errno_error (error, CUDAIPC_ERROR_IO, "memfd_create (fence page)");
    goto fail;
  }
  if (ftruncate (page->fd, CUDAIPC_FENCE_PAGE_SIZE) < 0) {
    errno_error (error, CUDAIPC_ERROR_IO, "sizing the fence page");
    goto fail;
  }
  if (fcntl (page->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
    errno_error (error, CUDAIPC_ERROR_IO, "sealing the fence page");
    goto fail;
  }
  p = mmap (NULL, CUDAIPC_FENCE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
      page->fd, 0);
  if (p == MAP_FAILED) {
    errno_error (error, CUDAIPC_ERROR_IO, "mapping the fence page");
    goto fail;
  }
  page->words = p;

  if (cudaipc_device_get_backend (dev) == CUDAIPC_BACKEND_CUDA &&
      !register_page (page, error))
    goto fail;
  /* Every consumer is sent this fd: sealed, none of them can write the
   * words the others read. The mapping above (and the device's, through
   * its registration) was made before and stays writable. */
  if (fcntl (page->fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0) {
    int e = errno;

    /* EINVAL: a seal this kernel does not know */
    g_set_error (error, CUDAIPC_ERROR, e == EINVAL ?
        CUDAIPC_ERROR_NOT_SUPPORTED : CUDAIPC_ERROR_IO,
        "sealing the fence page against writes by its consumers "
        "(F_SEAL_FUTURE_WRITE, Linux 5.1 or newer): %s", g_strerror (e));
    goto fail;
  }
  return page;

fail:
  cudaipc_fence_page_free (page);
  return NULL;
}

int
cudaipc_fence_page_get_fd (CudaIpcFencePage * page)
{
  g_return_val_if_fail (page != NULL, -1);
  return page->fd;
}

gboolean
cudaipc_fence_page_signal (CudaIpcFencePage * page, guint slot,
    guint64 value, CUstream stream, guint * calls, GError ** error)
{
  g_return_val_if_fail (page != NULL && page->fd >= 0, FALSE);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, FALSE);

  if (!page->registered) {
    /* after the memcpy into the slot, in program order */
    __atomic_store_n (&page->words[slot], value, __ATOMIC_RELEASE);
    return TRUE;
  }
  (*calls)++;
  return cudaipc_cuda_check (cudaipc_cuda ()->StreamWriteValue64 (stream,
          page->dptr + slot * sizeof (guint64), value,
          CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue64 (fence)",
      error);
}

void
cudaipc_fence_page_store (CudaIpcFencePage * page, guint slot, guint64 value)
{
  g_return_if_fail (page != NULL && page->fd >= 0);
  g_return_if_fail (slot < CUDAIPC_MAX_SLOTS);

  /* the page is host memory on both backends, mapped by every consumer */
  __atomic_store_n (&page->words[slot], value, __ATOMIC_RELEASE);
}

guint64
cudaipc_fence_page_peek (CudaIpcFencePage * page, guint slot)
{
  g_return_val_if_fail (page != NULL, 0);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, 0);
  return __atomic_load_n (&page->words[slot], __ATOMIC_ACQUIRE);
}

CudaIpcFencePage *
cudaipc_fence_page_open (int fd, GError ** error)
{
  CudaIpcFencePage *page;
  void *p;

  if (!cudaipc_shared_page_check (fd, "fence page", CUDAIPC_FENCE_PAGE_SIZE,
          TRUE, error)) {
    close (fd);
    return NULL;
  }
  p = mmap (NULL, CUDAIPC_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    errno_error (error, CUDAIPC_ERROR_IO, "mapping the fence page");
    close (fd);
    return NULL;
  }
  close (fd);

  page = g_new0 (CudaIpcFencePage, 1);
  page->fd = -1;
  page->words = p;
  return page;
}

gint
cudaipc_fence_page_check (CudaIpcFencePage * page, guint slot, guint64 value,
    GError ** error)
{
  guint64 v;

  g_return_val_if_fail (page != NULL, -1);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, -1);

  v = __atomic_load_n (&page->words[slot], __ATOMIC_ACQUIRE);
  if (v < page->seen[slot]) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
        "the fence of slot %u went back from %" G_GUINT64_FORMAT " to %"
        G_GUINT64_FORMAT, slot, page->seen[slot], v);
    return -1;
  }
  page->seen[slot] = v;
  if (v > value) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
        "the fence of slot %u is at %" G_GUINT64_FORMAT ", past frame %"
        G_GUINT64_FORMAT " in it: the slot was rewritten", slot, v, value);
    return -1;
  }
  return v == value ? 1 : 0;
}

gboolean
cudaipc_fence_page_wait (CudaIpcFencePage * page, guint slot, guint64 value,
    gint64 timeout_us, GError ** error)
{
  gint64 start = 0, now;
  gint r;

  g_return_val_if_fail (page != NULL, FALSE);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, FALSE);

  while ((r = cudaipc_fence_page_check (page, slot, value, error)) == 0) {
    now = g_get_monotonic_time ();
    if (start == 0)
      start = now;
    if (now - start > timeout_us) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
          "the producer's copy did not complete within %" G_GINT64_FORMAT
          " ms (the fence of slot %u is at %" G_GUINT64_FORMAT ", frame %"
          G_GUINT64_FORMAT " waits for it)", timeout_us / 1000, slot,
          page->seen[slot], value);
      return FALSE;
    }
    /* a copy that is done by the time the FRAME arrives answers the first
     * read; one just finishing is polled for busily, a while, then with
     * sleeps, so that the process does not burn a core on a slow copy */
    if (now - start >= SPIN_US)
      g_usleep (SLEEP_US);
  }
  return r > 0;
}

void
cudaipc_fence_page_free (CudaIpcFencePage * page)
{
  if (page == NULL)
    return;
  if (page->registered && cudaipc_device_push (page->dev, NULL)) {
    cudaipc_cuda ()->MemHostUnregister (page->words);
    cudaipc_device_pop (page->dev);
  }
  if (page->words)
    munmap (page->words, CUDAIPC_FENCE_PAGE_SIZE);
  if (page->fd >= 0)
    close (page->fd);
  g_clear_pointer (&page->dev, cudaipc_device_unref);
  g_free (page);
}
