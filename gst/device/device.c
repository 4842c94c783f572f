/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gst.h>

#include "device/backend.h"
#include "common/error.h"
#include "common/debug.h"

#define GST_CAT_DEFAULT cudaipc_device_debug

const gchar *
cudaipc_backend_name (CudaIpcBackend backend)
{
  switch (backend) {
    case CUDAIPC_BACKEND_HOST:
      return "host";
    case CUDAIPC_BACKEND_CUDA:
      return "cuda";
    case CUDAIPC_BACKEND_AUTO:
      return "auto";
  }
  return "unknown";
}

gboolean
cudaipc_backend_from_name (const gchar * name, CudaIpcBackend * backend)
{
  if (g_strcmp0 (name, "host") == 0)
    *backend = CUDAIPC_BACKEND_HOST;
  else if (g_strcmp0 (name, "cuda") == 0)
    *backend = CUDAIPC_BACKEND_CUDA;
  else
    return FALSE;
  return TRUE;
}

CudaIpcDevice *
cudaipc_device_new (CudaIpcBackend backend, gint ordinal, GError ** error)
{
  CudaIpcDevice *dev;

  g_return_val_if_fail (backend == CUDAIPC_BACKEND_HOST ||
      backend == CUDAIPC_BACKEND_CUDA, NULL);

  cudaipc_debug_init ();

  dev = g_new0 (CudaIpcDevice, 1);
  dev->refcount = 1;
  dev->backend = backend;
  dev->ordinal = ordinal;
  dev->ops = backend == CUDAIPC_BACKEND_CUDA ? &cudaipc_backend_cuda :
      &cudaipc_backend_host;
  if (!dev->ops->open (dev, error)) {
    GST_INFO ("%s backend, device %d: %s", cudaipc_backend_name (backend),
        ordinal, error && *error ? (*error)->message : "failed");
    dev->ops->close (dev);
    g_free (dev->name);
    g_free (dev);
    return NULL;
  }
  GST_INFO ("%s backend, device %d: %s, allocation granularity %"
      G_GUINT64_FORMAT " bytes", cudaipc_backend_name (backend), ordinal,
      dev->name ? dev->name : "(unnamed)", dev->granularity);
  return dev;
}

CudaIpcDevice *
cudaipc_device_ref (CudaIpcDevice * dev)
{
  g_return_val_if_fail (dev != NULL, NULL);
  g_atomic_int_inc (&dev->refcount);
  return dev;
}

void
cudaipc_device_unref (CudaIpcDevice * dev)
{
  if (!dev || !g_atomic_int_dec_and_test (&dev->refcount))
    return;
  dev->ops->close (dev);
  /* nothing of the device uses the lent context any more */
  if (dev->context_owner_release)
    dev->context_owner_release (dev->context_owner);
  g_free (dev->name);
  g_free (dev);
}

CudaIpcBackend
cudaipc_device_get_backend (CudaIpcDevice * dev)
{
  return dev->backend;
}

gint
cudaipc_device_get_ordinal (CudaIpcDevice * dev)
{
  return dev->ordinal;
}

guint64
cudaipc_device_get_granularity (CudaIpcDevice * dev)
{
  return dev->granularity;
}

void
cudaipc_device_get_uuid (CudaIpcDevice * dev, guint8 uuid[CUDAIPC_UUID_LEN])
{
  memcpy (uuid, dev->uuid, CUDAIPC_UUID_LEN);
}

const gchar *
cudaipc_device_get_name (CudaIpcDevice * dev)
{
  return dev->name;
}

CUcontext
cudaipc_device_get_context (CudaIpcDevice * dev)
{
  return g_atomic_pointer_get (&dev->context);
}

void
cudaipc_device_use_context (CudaIpcDevice * dev, CUcontext context,
    gpointer owner, GDestroyNotify release)
{
  g_return_if_fail (dev->backend == CUDAIPC_BACKEND_CUDA);
  g_return_if_fail (context != NULL);
  g_return_if_fail (dev->context_owner_release == NULL);
  /* the primary context stays retained: close() releases it by device */
  dev->context_owner = owner;
  dev->context_owner_release = release;
  g_atomic_pointer_set (&dev->context, context);
}

gboolean
cudaipc_device_push (CudaIpcDevice * dev, GError ** error)
{
  return dev->ops->push (dev, error);
}

void
cudaipc_device_pop (CudaIpcDevice * dev)
{
  dev->ops->pop (dev);
}

void
cudaipc_uuid_format (const guint8 u[CUDAIPC_UUID_LEN],
    gchar out[CUDAIPC_UUID_STRING_LEN])
{
  g_snprintf (out, CUDAIPC_UUID_STRING_LEN, "GPU-%02x%02x%02x%02x-%02x%02x-"
      "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
      u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
      u[15]);
}

gboolean
cudaipc_device_find_peer (CudaIpcDevice * dev,
    const guint8 uuid[CUDAIPC_UUID_LEN], gint * ordinal, gboolean * can_access)
{
  gint o = -1;
  gboolean can = FALSE;

  g_return_val_if_fail (dev != NULL, FALSE);
  if (dev->ops->find_peer == NULL || !dev->ops->find_peer (dev, uuid, &o, &can))
    return FALSE;
  *ordinal = o;
  *can_access = can;
  return TRUE;
}

gboolean
cudaipc_device_mem_info (CudaIpcDevice * dev, guint64 * free_bytes,
    guint64 * total_bytes, GError ** error)
{
  guint64 f = 0, t = 0;
  gboolean ok;

  if (!dev->ops->push (dev, error))
    return FALSE;
  ok = dev->ops->mem_info (dev, &f, &t, error);
  dev->ops->pop (dev);
  if (ok) {
    if (free_bytes)
      *free_bytes = f;
    if (total_bytes)
      *total_bytes = t;
  }
  return ok;
}

gboolean
cudaipc_device_write (CudaIpcDevice * dev, guintptr dst, const void *src,
    gsize size, GError ** error)
{
  gboolean ok;

  if (!dev->ops->push (dev, error))
    return FALSE;
  ok = dev->ops->write (dev, dst, src, size, error);
  dev->ops->pop (dev);
  return ok;
}

gboolean
cudaipc_device_read (CudaIpcDevice * dev, void *dst, guintptr src,
    gsize size, GError ** error)
{
  gboolean ok;

  if (!dev->ops->push (dev, error))
    return FALSE;
  ok = dev->ops->read (dev, dst, src, size, error);
  dev->ops->pop (dev);
  return ok;
}

guint64
cudaipc_device_round_up (CudaIpcDevice * dev, guint64 size)
{
  guint64 g = dev->granularity;

  if (size == 0 || size > G_MAXUINT64 - (g - 1))
    return 0;
  return (size + g - 1) / g * g;
}
