/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The release page: one page of shared memory per consumer connection
 * (a sealed memfd the producer makes and sends with the RING, where both
 * sides' HELLOs name CUDAIPC_CAP_RELEASE_PAGE), through which the consumer
 * gives frames of the current ring back without a message.
 *
 * Word i (i < CUDAIPC_MAX_SLOTS) is the sequence number of the last frame
 * of slot i the consumer released; the producer, under its lock, compares
 * it with the number it published in that slot and frees the consumer's
 * hold where they are equal. Numbers never repeat, so a stale or made-up
 * word frees nothing but a frame the consumer holds itself: a consumer
 * can only give back what is its own, as with a RELEASE message.
 *
 * The waiting word is the producer's: non-zero while it waits for a free
 * slot. A consumer that finds it set after storing a release sends the
 * RELEASE message as well, so that the waiting producer wakes; the store,
 * then the load (and the producer's store of the flag, then its reads of
 * the words) are sequentially consistent, so one of the two sides always
 * sees the other's.
 *
 * The page is host memory on every backend; the producer keeps it sealed
 * against shrinking and growing (a consumer cannot cut it under the
 * producer's mapping) and the consumer checks those seals (nor can the
 * producer cut it under the consumer's).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CUDAIPC_RELEASE_PAGE_SIZE 4096
/* the word index of the producer's waiting flag */
#define CUDAIPC_RELEASE_PAGE_WAITING 64

typedef struct _CudaIpcReleasePage CudaIpcReleasePage;

/* Producer: a new page, zeroed, sealed; NULL with @error. */
CudaIpcReleasePage *cudaipc_release_page_new (GError ** error);
/* Producer: the memfd, borrowed (to send with a RING). */
int cudaipc_release_page_get_fd (CudaIpcReleasePage * page);
/* Consumer: maps the page of @fd (taken), after checking that it is a
 * sealed memory file of the right size; NULL with @error. */
CudaIpcReleasePage *cudaipc_release_page_open (int fd, GError ** error);
void cudaipc_release_page_free (CudaIpcReleasePage * page);

/* Consumer: frame @seq of @slot released; returns whether the producer
 * waits (then send the RELEASE message too). */
gboolean cudaipc_release_page_release (CudaIpcReleasePage * page, guint slot,
    guint64 seq);
/* Producer: the word of @slot. */
guint64 cudaipc_release_page_peek (CudaIpcReleasePage * page, guint slot);
/* Producer: sets or clears the waiting flag (a full barrier after). */
void cudaipc_release_page_set_waiting (CudaIpcReleasePage * page,
    gboolean waiting);

G_END_DECLS
