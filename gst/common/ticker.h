/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A ticker calls one function every @interval_ms on a thread of its own,
 * until it is freed. The elements use it to post their counters as a
 * periodic bus message (the stats-interval property).
 *
 * Threads: new() and free() from one thread (an element's start() and
 * stop()); @func runs on the ticker's thread only, one call at a time, the
 * first @interval_ms after new(). free() wakes the thread and joins it:
 * once it returns @func is not running and will not be called again, so
 * @user_data may be freed then. @func must not call free().
 *
 * Ownership: the ticker owns its thread; it does not own @user_data.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _CudaIpcTicker CudaIpcTicker;

typedef void (*CudaIpcTickFunc) (gpointer user_data);

/* @interval_ms > 0; @name names the thread (cut to 15 bytes by the OS). */
CudaIpcTicker *cudaipc_ticker_new (const gchar * name, guint interval_ms,
    CudaIpcTickFunc func, gpointer user_data);
/* Stops and joins the thread. NULL is allowed. */
void cudaipc_ticker_free (CudaIpcTicker * ticker);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcTicker, cudaipc_ticker_free);

G_END_DECLS
