package dev.fleproxy.ycsb;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;

/**
 * What the proxy adds to each request, per collection, read from its /metrics (the histogram
 * {@code fleproxy_proxy_duration_seconds}, label {@code collection}): scraped before and after a
 * window, the difference is the window's own histogram, which the matrix runner turns into p50
 * and p99. A scrape that fails says so on stderr and gives null: the cell goes on without it.
 */
final class ProxyHistogram {
    static final String METRIC = "fleproxy_proxy_duration_seconds";
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** One collection's cumulative counts by upper bound, with the sum of seconds and the count. */
    record Series(TreeMap<Double, Double> buckets, double sum, double count) {
    }

    private ProxyHistogram() {
    }

    /** The histogram of every collection, or null if /metrics could not be read. */
    static Map<String, Series> scrape(String url) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                System.err.println("session: " + url + " answered " + r.statusCode() + "; no proxy-added latency");
                return null;
            }
            return parse(r.body());
        } catch (java.io.IOException | IllegalArgumentException e) {
            System.err.println("session: cannot read " + url + ": " + e + "; no proxy-added latency");
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Reads the histogram's lines out of a Prometheus text exposition. */
    static Map<String, Series> parse(String text) {
        Map<String, TreeMap<Double, Double>> buckets = new HashMap<>();
        Map<String, double[]> sumCount = new HashMap<>();
        for (String line : text.split("\n")) {
            if (!line.startsWith(METRIC + "_")) {
                continue;
            }
            int brace = line.indexOf('{');
            int close = line.lastIndexOf('}');
            if (brace < 0 || close < brace) {
                continue;
            }
            String suffix = line.substring(METRIC.length() + 1, brace);
            Map<String, String> labels = new HashMap<>();
            Matcher m = LABEL.matcher(line.substring(brace + 1, close));
            while (m.find()) {
                labels.put(m.group(1), m.group(2));
            }
            String collection = labels.get("collection");
            double value;
            try {
                value = Double.parseDouble(line.substring(close + 1).trim().split(" ")[0]);
            } catch (NumberFormatException e) {
                continue;
            }
            if (collection == null) {
                continue;
            }
            switch (suffix) {
                case "bucket" -> {
                    String le = labels.get("le");
                    if (le != null) {
                        double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                        buckets.computeIfAbsent(collection, c -> new TreeMap<>()).put(bound, value);
                    }
                }
                case "sum" -> sumCount.computeIfAbsent(collection, c -> new double[2])[0] = value;
                case "count" -> sumCount.computeIfAbsent(collection, c -> new double[2])[1] = value;
                default -> { }
            }
        }
        Map<String, Series> out = new HashMap<>();
        buckets.forEach((c, b) -> {
            double[] sc = sumCount.getOrDefault(c, new double[2]);
            out.put(c, new Series(b, sc[0], sc[1]));
        });
        return out;
    }

    /**
     * The window's histogram of one collection: {@code buckets} as [upper bound in s (null for
     * +Inf), cumulative count], {@code sum_s}, {@code count}; null when either scrape lacks it.
     */
    static BsonDocument between(Map<String, Series> before, Map<String, Series> after, String collection) {
        if (before == null || after == null || !after.containsKey(collection)) {
            return null;
        }
        Series a = after.get(collection);
        Series b = before.getOrDefault(collection, new Series(new TreeMap<>(), 0, 0));
        BsonArray buckets = new BsonArray();
        a.buckets().forEach((le, n) -> buckets.add(new BsonArray(java.util.List.of(
                Double.isInfinite(le) ? new org.bson.BsonNull() : new BsonDouble(le),
                new BsonDouble(n - b.buckets().getOrDefault(le, 0.0))))));
        return new BsonDocument("buckets", buckets).append("sum_s", new BsonDouble(a.sum() - b.sum()))
                .append("count", new BsonDouble(a.count() - b.count()));
    }
}
