#include "server/geojson.h"

json_t *ss_geojson_position(const struct ss_graph *g, uint32_t v)
{
        return json_pack("[f,f]", g->x[v] / 1e6, g->y[v] / 1e6);
}

json_t *ss_geojson_feature(json_t *geometry, json_t *properties)
{
        if (!properties)
                properties = json_object();
        return json_pack("{s:s, s:o, s:o}", "type", "Feature", "geometry", geometry, "properties",
                         properties);
}

static json_t *ss__positions(const struct ss_graph *g, const uint32_t *nodes, size_t n, bool close)
{
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
                if (json_array_append_new(a, ss_geojson_position(g, nodes[i])) != 0) {
                        json_decref(a);
                        return NULL;
                }
        if (a && close && n && json_array_append_new(a, ss_geojson_position(g, nodes[0])) != 0) {
                json_decref(a);
                return NULL;
        }
        return a;
}

json_t *ss_geojson_line(const struct ss_graph *g, const uint32_t *nodes, size_t n)
{
        return json_pack("{s:s, s:o}", "type", "LineString", "coordinates",
                         ss__positions(g, nodes, n, false));
}

json_t *ss_geojson_points(const struct ss_graph *g, const uint32_t *nodes, size_t n)
{
        return json_pack("{s:s, s:o}", "type", "MultiPoint", "coordinates",
                         ss__positions(g, nodes, n, false));
}

json_t *ss_geojson_outline(const struct ss_graph *g, const uint32_t *ring, size_t n)
{
        if (n >= 3)
                return json_pack("{s:s, s:[o]}", "type", "Polygon", "coordinates",
                                 ss__positions(g, ring, n, true));
        if (n == 2)
                return ss_geojson_line(g, ring, n);
        return json_pack("{s:s, s:o}", "type", "Point", "coordinates",
                         n ? ss_geojson_position(g, ring[0]) : json_array());
}
