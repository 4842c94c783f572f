/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The release page (release-page.h has the contract).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memfd_create, F_ADD_SEALS */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/error.h"
#include "ring/release-page.h"
#include "ring/shared-page.h"
#include "wire/protocol.h"

G_STATIC_ASSERT (CUDAIPC_RELEASE_PAGE_WAITING >= CUDAIPC_MAX_SLOTS);
G_STATIC_ASSERT ((CUDAIPC_RELEASE_PAGE_WAITING + 1) * sizeof (guint64) <=
    CUDAIPC_RELEASE_PAGE_SIZE);

struct _CudaIpcReleasePage
{
  int fd;                       /* producer side; -1 on the consumer's */
  guint64 *words;               /* the mapping, CUDAIPC_RELEASE_PAGE_SIZE */
};

static CudaIpcReleasePage *
fail_errno (GError ** error, gint code, const gchar * what, int fd)
{
  int e = errno;

  g_set_error (error, CUDAIPC_ERROR, code, "%s: %s", what, g_strerror (e));
  if (fd >= 0)
    close (fd);
  return NULL;
}

static CudaIpcReleasePage *
map_page (int fd, gboolean own, GError ** error)
{
  CudaIpcReleasePage *page;
  void *p;

  p = mmap (NULL, CUDAIPC_RELEASE_PAGE_SIZE, PROT_READ | PROT_WRITE,
      MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return fail_errno (error, CUDAIPC_ERROR_IO, "mapping the release page",
        fd);
  if (!own)
    close (fd);
  page = g_new0 (CudaIpcReleasePage, 1);
  page->fd = own ? fd : -1;
  page->words = p;
  return page;
}

CudaIpcReleasePage *
cudaipc_release_page_new (GError ** error)
{
  int fd = memfd_create ("cudaipc-release", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  if (fd < 0)
    return fail_errno (error, CUDAIPC_ERROR_IO,
        "memfd_create (release page)", -1);
  if (ftruncate (fd, CUDAIPC_RELEASE_PAGE_SIZE) < 0)
    return fail_errno (error, CUDAIPC_ERROR_IO, "sizing the release page",
        fd);
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
    return fail_errno (error, CUDAIPC_ERROR_IO, "sealing the release page",
        fd);
  return map_page (fd, TRUE, error);
}

int
cudaipc_release_page_get_fd (CudaIpcReleasePage * page)
{
  g_return_val_if_fail (page != NULL, -1);
  return page->fd;
}

CudaIpcReleasePage *
cudaipc_release_page_open (int fd, GError ** error)
{
  if (!cudaipc_shared_page_check (fd, "release page",
          CUDAIPC_RELEASE_PAGE_SIZE, FALSE, error)) {
    close (fd);
    return NULL;
  }
  return map_page (fd, FALSE, error);
}

void
cudaipc_release_page_free (CudaIpcReleasePage * page)
{
  if (page == NULL)
    return;
  munmap (page->words, CUDAIPC_RELEASE_PAGE_SIZE);
  if (page->fd >= 0)
    close (page->fd);
  g_free (page);
}

gboolean
cudaipc_release_page_release (CudaIpcReleasePage * page, guint slot,
    guint64 seq)
{
  g_return_val_if_fail (page != NULL, TRUE);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, TRUE);

  __atomic_store_n (&page->words[slot], seq, __ATOMIC_SEQ_CST);
  return __atomic_load_n (&page->words[CUDAIPC_RELEASE_PAGE_WAITING],
      __ATOMIC_SEQ_CST) != 0;
}

guint64
cudaipc_release_page_peek (CudaIpcReleasePage * page, guint slot)
{
  g_return_val_if_fail (page != NULL, 0);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, 0);
  return __atomic_load_n (&page->words[slot], __ATOMIC_SEQ_CST);
}

void
cudaipc_release_page_set_waiting (CudaIpcReleasePage * page, gboolean waiting)
{
  g_return_if_fail (page != NULL);
  __atomic_store_n (&page->words[CUDAIPC_RELEASE_PAGE_WAITING],
      (guint64) (waiting ? 1 : 0), __ATOMIC_SEQ_CST);
}
