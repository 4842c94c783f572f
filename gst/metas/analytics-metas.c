/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The codec of GstAnalyticsRelationMeta (metas-private.h has the
 * contract, docs/protocol.md the layout), built with
 * gstreamer-analytics-1.0 (>= 1.24) only: its object detection (1.26:
 * with rotation), classification and tracking entries, and the relations
 * between them. Entries of other kinds (segmentation, tensors, an
 * application's own) are left out, and so are their relations; the
 * consumer adds the entries in order and maps its own ids onto the
 * producer's.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/analytics/analytics.h>

#include "common/debug.h"
#include "metas/metas-private.h"

#define GST_CAT_DEFAULT cudaipc_metas_debug

/* Writing */

typedef enum
{
  MTD_OD = 1,
  MTD_CLS = 2,
  MTD_TRACKING = 3,
} MtdKind;

static gboolean
encode_od (GstAnalyticsMtd * mtd, CudaIpcMetaWriter * mw)
{
  GstByteWriter *w = &mw->w;
  gint x = 0, y = 0, width = 0, height = 0;
  gfloat conf = 0, r = 0;

#if GST_CHECK_VERSION (1, 26, 0)
  if (!gst_analytics_od_mtd_get_oriented_location (mtd, &x, &y, &width,
          &height, &r, &conf))
    return FALSE;
#else
  if (!gst_analytics_od_mtd_get_location (mtd, &x, &y, &width, &height,
          &conf))
    return FALSE;
#endif
  return cudaipc_meta_writer_put_name (mw,
      cudaipc_metas_quark_str (gst_analytics_od_mtd_get_obj_type (mtd)), -1,
      FALSE) && gst_byte_writer_put_int32_le (w, x) &&
      gst_byte_writer_put_int32_le (w, y) &&
      gst_byte_writer_put_int32_le (w, width) &&
      gst_byte_writer_put_int32_le (w, height) &&
      gst_byte_writer_put_float32_le (w, conf) &&
      gst_byte_writer_put_float32_le (w, r);
}

static gboolean
encode_cls (GstAnalyticsMtd * mtd, CudaIpcMetaWriter * mw)
{
  GstByteWriter *w = &mw->w;
  gsize n = gst_analytics_cls_mtd_get_length (mtd);

  if (n > CUDAIPC_MAX_META_ITEMS ||
      !gst_byte_writer_put_uint32_le (w, (guint32) n))
    return FALSE;
  for (gsize i = 0; i < n; i++) {
    if (!cudaipc_meta_writer_put_name (mw,
            cudaipc_metas_quark_str (gst_analytics_cls_mtd_get_quark (mtd,
                    i)), -1, FALSE) ||
        !gst_byte_writer_put_float32_le (w,
            gst_analytics_cls_mtd_get_level (mtd, i)))
      return FALSE;
  }
  return TRUE;
}

static gboolean
encode_tracking (GstAnalyticsMtd * mtd, GstByteWriter * w)
{
  guint64 id = 0;
  GstClockTime first = 0, last = 0;
  gboolean lost = FALSE;

  return gst_analytics_tracking_mtd_get_info (mtd, &id, &first, &last,
      &lost) && gst_byte_writer_put_uint64_le (w, id) &&
      gst_byte_writer_put_uint64_le (w, first) &&
      gst_byte_writer_put_uint64_le (w, last) &&
      gst_byte_writer_put_uint32_le (w, lost ? 1 : 0);
}

/* every bit of the meta's byte a pair */
#define ANY_RELATION ((GstAnalyticsRelTypes) 0xff)

/* The entries this library carries, then the relations between them. */
gboolean
cudaipc_metas_encode_analytics (const CudaIpcMetaCodec * codec, GstMeta * meta,
    CudaIpcMetaWriter * mw)
{
  GstByteWriter *w = &mw->w;
  GstAnalyticsRelationMeta *rm = (GstAnalyticsRelationMeta *) meta;
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (guint));
  const GstAnalyticsMtdType types[] = {
    gst_analytics_od_mtd_get_mtd_type (),
    gst_analytics_cls_mtd_get_mtd_type (),
    gst_analytics_tracking_mtd_get_mtd_type (),
  };
  gpointer state = NULL;
  GstAnalyticsMtd mtd;
  guint n_pos, n_rel = 0, rel_pos, seen = 0;
  gboolean ok = TRUE;

  n_pos = gst_byte_writer_get_pos (w);
  ok = gst_byte_writer_put_uint32_le (w, 0);
  while (ok && gst_analytics_relation_meta_iterate (rm, &state,
          GST_ANALYTICS_MTD_TYPE_ANY, &mtd)) {
    GstAnalyticsMtdType type = gst_analytics_mtd_get_mtd_type (&mtd);
    MtdKind kind;

    if (type == types[0])
      kind = MTD_OD;
    else if (type == types[1])
      kind = MTD_CLS;
    else if (type == types[2])
      kind = MTD_TRACKING;
    else {
      GST_LOG ("analytics entry %u of type %s is not carried", mtd.id,
          gst_analytics_mtd_type_get_name (type));
      continue;
    }
    if (ids->len >= codec->max_items) {
      ok = FALSE;
      break;
    }
    ok = gst_byte_writer_put_uint32_le (w, mtd.id) &&
        gst_byte_writer_put_uint16_le (w, kind) &&
        gst_byte_writer_put_uint16_le (w, 0) &&
        (kind == MTD_OD ? encode_od (&mtd, mw) : kind == MTD_CLS ?
        encode_cls (&mtd, mw) : encode_tracking (&mtd, w));
    g_array_append_val (ids, mtd.id);
    seen |= 1u << (kind - 1);
  }
  rel_pos = gst_byte_writer_get_pos (w);
  ok = ok && gst_byte_writer_put_uint32_le (w, 0);
  /* each entry's relations to the entries carried, found by the meta's
   * own scan of its row for each carried type there is: n calls for a
   * frame of one type, where asking each pair took n * n */
  for (guint i = 0; ok && i < ids->len; i++) {
    guint a = g_array_index (ids, guint, i);

    for (guint t = 0; ok && t < G_N_ELEMENTS (types); t++) {
      gpointer rstate = NULL;
      GstAnalyticsMtd other;

      if (!(seen & (1u << t)))
        continue;
      while (ok && gst_analytics_relation_meta_get_direct_related (rm, a,
              ANY_RELATION, types[t], &rstate, &other)) {
        GstAnalyticsRelTypes rel;

        if (other.id == a)
          continue;
        rel = gst_analytics_relation_meta_get_relation (rm, a, other.id);
        ok = ++n_rel <= codec->max_relations &&
            gst_byte_writer_put_uint32_le (w, a) &&
            gst_byte_writer_put_uint32_le (w, other.id) &&
            gst_byte_writer_put_uint32_le (w, (guint32) rel);
      }
    }
  }
  if (ok) {
    guint end = gst_byte_writer_get_pos (w);

    gst_byte_writer_set_pos (w, n_pos);
    gst_byte_writer_put_uint32_le (w, ids->len);
    gst_byte_writer_set_pos (w, rel_pos);
    gst_byte_writer_put_uint32_le (w, n_rel);
    gst_byte_writer_set_pos (w, end);
  }
  g_array_unref (ids);
  return ok;
}

/* Reading */

/* An analytics entry as read, before anything is added. */
typedef struct
{
  guint32 id;
  guint16 kind;
  GQuark type;                  /* OD */
  gint32 x, y, w, h;
  gfloat conf, r;
  guint32 n, item;              /* CLS: n classes from cls[item] */
  guint64 track_id, first, last;        /* TRACKING */
  guint32 lost;
} Mtd;

/* The classes of every classification of a frame, one after another. */
typedef struct
{
  GArray *quarks, *levels;
} Classes;

static gboolean
read_mtd (GstByteReader * r, CudaIpcMetaNames * names, Mtd * m,
    Classes * cls, GError ** error)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->id) ||
      !gst_byte_reader_get_uint16_le (r, &m->kind) ||
      !gst_byte_reader_skip (r, 2))
    return cudaipc_metas_bad (error, "an analytics entry is truncated");
  switch (m->kind) {
    case MTD_OD:
      if (!cudaipc_meta_names_get (names, r, NULL, &m->type, error))
        return FALSE;
      if (!gst_byte_reader_get_int32_le (r, &m->x) ||
          !gst_byte_reader_get_int32_le (r, &m->y) ||
          !gst_byte_reader_get_int32_le (r, &m->w) ||
          !gst_byte_reader_get_int32_le (r, &m->h) ||
          !gst_byte_reader_get_float32_le (r, &m->conf) ||
          !gst_byte_reader_get_float32_le (r, &m->r))
        return cudaipc_metas_bad (error, "an object detection is truncated");
      return TRUE;
    case MTD_CLS:
      if (!cudaipc_metas_get_count (r, CUDAIPC_MAX_META_ITEMS, &m->n, error))
        return FALSE;
      m->item = cls->quarks->len;
      for (guint i = 0; i < m->n; i++) {
        GQuark q;
        gfloat level;

        if (!cudaipc_meta_names_get (names, r, NULL, &q, error))
          return FALSE;
        if (!gst_byte_reader_get_float32_le (r, &level))
          return cudaipc_metas_bad (error, "a classification is truncated");
        g_array_append_val (cls->quarks, q);
        g_array_append_val (cls->levels, level);
      }
      return TRUE;
    case MTD_TRACKING:
      if (!gst_byte_reader_get_uint64_le (r, &m->track_id) ||
          !gst_byte_reader_get_uint64_le (r, &m->first) ||
          !gst_byte_reader_get_uint64_le (r, &m->last) ||
          !gst_byte_reader_get_uint32_le (r, &m->lost) || m->lost > 1)
        return cudaipc_metas_bad (error,
            "a tracking entry is truncated or not valid");
      return TRUE;
    default:
      return cudaipc_metas_bad (error, "an analytics entry of an unknown kind");
  }
}

static gboolean
add_mtd (GstAnalyticsRelationMeta * rm, const Mtd * m, const Classes * cls,
    guint * id)
{
  GstAnalyticsMtd out;
  gboolean ok;

  switch (m->kind) {
    case MTD_OD:
#if GST_CHECK_VERSION (1, 26, 0)
      ok = gst_analytics_relation_meta_add_oriented_od_mtd (rm, m->type, m->x,
          m->y, m->w, m->h, m->r, m->conf, &out);
#else
      ok = gst_analytics_relation_meta_add_od_mtd (rm, m->type, m->x, m->y,
          m->w, m->h, m->conf, &out);
#endif
      break;
    case MTD_CLS:
      ok = gst_analytics_relation_meta_add_cls_mtd (rm, m->n,
          &g_array_index (cls->levels, gfloat, m->item),
          &g_array_index (cls->quarks, GQuark, m->item), &out);
      break;
    default:
      ok = gst_analytics_relation_meta_add_tracking_mtd (rm, m->track_id,
          m->first, &out);
      if (ok)
        ok = gst_analytics_tracking_mtd_update_last_seen (&out, m->last);
      if (ok && m->lost)
        ok = gst_analytics_tracking_mtd_set_lost (&out);
      break;
  }
  *id = out.id;
  return ok;
}

/* room for an entry in the meta: its header and an object detection's
 * fields, rounded up (a guess: the meta grows where it is short) */
#define MTD_BYTES 96

#define REL_TYPES_KNOWN (GST_ANALYTICS_REL_TYPE_IS_PART_OF | \
    GST_ANALYTICS_REL_TYPE_CONTAIN | GST_ANALYTICS_REL_TYPE_RELATE_TO)

gboolean
cudaipc_metas_decode_analytics (const CudaIpcMetaCodec * codec,
    GstByteReader * r, CudaIpcMetaNames * names, GstBuffer * buf,
    gboolean * added, GError ** error)
{
  GArray *mtds = g_array_new (FALSE, TRUE, sizeof (Mtd));
  Classes cls = { g_array_new (FALSE, FALSE, sizeof (GQuark)),
    g_array_new (FALSE, FALSE, sizeof (gfloat))
  };
  GArray *rels = g_array_new (FALSE, FALSE, sizeof (guint32) * 3);
  GHashTable *ids = g_hash_table_new (NULL, NULL);
  GstAnalyticsRelationMetaInitParams init;
  GstAnalyticsRelationMeta *rm;
  guint32 n, n_rel;
  gboolean ok = FALSE;

  if (!cudaipc_metas_get_count (r, codec->max_items, &n, error))
    goto out;
  g_array_set_size (mtds, n);
  for (guint i = 0; i < n; i++) {
    Mtd *m = &g_array_index (mtds, Mtd, i);

    if (!read_mtd (r, names, m, &cls, error))
      goto out;
    if (g_hash_table_contains (ids, GUINT_TO_POINTER (m->id))) {
      cudaipc_metas_bad (error, "two analytics entries of one id");
      goto out;
    }
    g_hash_table_insert (ids, GUINT_TO_POINTER (m->id), NULL);
  }
  if (!cudaipc_metas_get_count (r, codec->max_relations, &n_rel, error))
    goto out;
  for (guint i = 0; i < n_rel; i++) {
    guint32 rel[3];

    if (!gst_byte_reader_get_uint32_le (r, &rel[0]) ||
        !gst_byte_reader_get_uint32_le (r, &rel[1]) ||
        !gst_byte_reader_get_uint32_le (r, &rel[2])) {
      cudaipc_metas_bad (error, "a relation is truncated");
      goto out;
    }
#if GST_CHECK_VERSION (1, 26, 0)
    if (rel[2] & ~(REL_TYPES_KNOWN | GST_ANALYTICS_REL_TYPE_N_TO_N)
#else
    if (rel[2] & ~REL_TYPES_KNOWN
#endif
        || rel[2] == 0 || rel[0] == rel[1] ||
        !g_hash_table_contains (ids, GUINT_TO_POINTER (rel[0])) ||
        !g_hash_table_contains (ids, GUINT_TO_POINTER (rel[1]))) {
      cudaipc_metas_bad (error, "a relation of an unknown type or entry");
      goto out;
    }
    g_array_append_val (rels, rel);
  }
  if (!cudaipc_metas_at_end (r, error))
    goto out;

  /* all of it read: now the meta, each entry under its new id, sized for
   * them at once (it grows five entries at a time, copying its matrix) */
  init.initial_relation_order = MAX (n, 5);
  init.initial_buf_size = MAX (n * MTD_BYTES + cls.quarks->len * 8, 1024);
  rm = gst_buffer_add_analytics_relation_meta_full (buf, &init);
  for (guint i = 0; i < n; i++) {
    const Mtd *m = &g_array_index (mtds, Mtd, i);
    guint id;

    if (!add_mtd (rm, m, &cls, &id)) {
      cudaipc_metas_bad (error, "an analytics entry was refused");
      goto out;
    }
    g_hash_table_insert (ids, GUINT_TO_POINTER (m->id), GUINT_TO_POINTER (id));
  }
  for (guint i = 0; i < rels->len; i++) {
    const guint32 *rel = (const guint32 *) (rels->data + i * sizeof (guint32)
        * 3);
    guint a = GPOINTER_TO_UINT (g_hash_table_lookup (ids,
            GUINT_TO_POINTER (rel[0])));
    guint b = GPOINTER_TO_UINT (g_hash_table_lookup (ids,
            GUINT_TO_POINTER (rel[1])));

    if (!gst_analytics_relation_meta_set_relation (rm, rel[2], a, b)) {
      cudaipc_metas_bad (error, "a relation was refused");
      goto out;
    }
  }
  ok = TRUE;

out:
  g_hash_table_unref (ids);
  g_array_unref (rels);
  g_array_unref (mtds);
  g_array_unref (cls.quarks);
  g_array_unref (cls.levels);
  return ok;
}
