package dev.fleproxy.ycsb;

import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import site.ycsb.measurements.exporter.MeasurementsExporter;

/**
 * YCSB's measurements as one document: {OPERATION: {measurement: value}}, with the names YCSB's
 * text exporter prints ("Operations", "AverageLatency(us)", "95thPercentileLatency(us)",
 * "Return=OK", "Return=NOT_FOUND", …), so that readers of either agree.
 */
final class CollectingExporter implements MeasurementsExporter {
    private final BsonDocument collected = new BsonDocument();

    @Override
    public void write(String metric, String measurement, int i) {
        put(metric, measurement, new BsonInt64(i));
    }

    @Override
    public void write(String metric, String measurement, long i) {
        put(metric, measurement, new BsonInt64(i));
    }

    @Override
    public void write(String metric, String measurement, double d) {
        put(metric, measurement, Double.isFinite(d) ? new BsonDouble(d) : new BsonDouble(0));
    }

    private void put(String metric, String measurement, BsonValue value) {
        if (!collected.containsKey(metric)) {
            collected.put(metric, new BsonDocument());
        }
        collected.getDocument(metric).put(measurement, value);
    }

    BsonDocument collected() {
        return collected;
    }

    @Override
    public void close() {
        // nothing to release: the document is the output
    }
}
