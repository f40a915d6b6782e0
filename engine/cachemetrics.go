package engine

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/toolround/toolround/tools"
)

// cacheTools are the tools whose results the result cache keeps (K1); a key
// of any other shape is counted as "other", so the label stays bounded.
var cacheTools = []string{"fetch_page", "search_web", "http_request"}

// countedCache counts the result cache's lookups as
// toolround_cache_requests_total{tool,result="hit"|"miss"}.
type countedCache struct {
	tools.ResultCache
	requests metric.Int64Counter
	hit      map[string]metric.MeasurementOption
	miss     map[string]metric.MeasurementOption
}

func countCache(c tools.ResultCache, m metric.Meter) (tools.ResultCache, error) {
	n, err := m.Int64Counter("toolround_cache_requests",
		metric.WithDescription("Result cache lookups by tool and result (hit or miss)."))
	if err != nil {
		return nil, err
	}
	cc := &countedCache{ResultCache: c, requests: n, hit: map[string]metric.MeasurementOption{}, miss: map[string]metric.MeasurementOption{}}
	for _, t := range append(cacheTools, "other") {
		cc.hit[t] = metric.WithAttributeSet(attribute.NewSet(attribute.String("tool", t), attribute.String("result", "hit")))
		cc.miss[t] = metric.WithAttributeSet(attribute.NewSet(attribute.String("tool", t), attribute.String("result", "miss")))
		if t != "other" {
			// The series exist from the start, so a rate over them is
			// defined before the first lookup.
			n.Add(context.Background(), 0, cc.hit[t])
			n.Add(context.Background(), 0, cc.miss[t])
		}
	}
	return cc, nil
}

func (c *countedCache) Get(ctx context.Context, key string) (string, bool) {
	v, ok := c.ResultCache.Get(ctx, key)
	tool := cacheTool(key)
	if ok {
		c.requests.Add(ctx, 1, c.hit[tool])
	} else {
		c.requests.Add(ctx, 1, c.miss[tool])
	}
	return v, ok
}

func (c *countedCache) Set(ctx context.Context, key, content string, ttl time.Duration) {
	c.ResultCache.Set(ctx, key, content, ttl)
}

// cacheTool is the tool a cache key belongs to (tools.FetchPageCacheKey and
// the others: "toolround:cache:<tool>:...").
func cacheTool(key string) string {
	rest, ok := strings.CutPrefix(key, "toolround:cache:")
	if ok {
		for _, t := range cacheTools {
			if strings.HasPrefix(rest, t+":") {
				return t
			}
		}
	}
	return "other"
}
