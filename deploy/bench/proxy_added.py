"""What the proxy adds to each request in one cell, from the histogram the YCSB session read off
the proxy's /metrics before and after the window (`fleproxy_proxy_duration_seconds`, the proxy's
own time per request: reading it to forwarding it, plus reading the reply to writing it)."""


def quantile(buckets, q):
    """The q-quantile (0..1) in seconds of a cumulative histogram [[upper bound or None for +Inf,
    count], ...], interpolated linearly inside its bucket as Prometheus's histogram_quantile does;
    a quantile in the +Inf bucket is the largest finite bound. None without observations."""
    finite = sorted((b, n) for b, n in buckets if b is not None)
    total = max((n for _, n in buckets), default=0)
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, count in finite:
        if count >= rank:
            inside = count - below
            return lower + (bound - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = bound, count
    return finite[-1][0] if finite else None


def summarize(histogram):
    """{p50_us, p99_us, mean_us, count} of a session's `proxy_added` histogram, or None."""
    if not isinstance(histogram, dict) or not histogram.get("count"):
        return None
    buckets = histogram.get("buckets") or []
    count = histogram["count"]
    p50, p99 = quantile(buckets, 0.5), quantile(buckets, 0.99)
    return {"p50_us": None if p50 is None else round(p50 * 1e6, 1),
            "p99_us": None if p99 is None else round(p99 * 1e6, 1),
            "mean_us": round(histogram.get("sum_s", 0) / count * 1e6, 1), "count": int(count)}
