package dev.fleproxy.ycsb;

import site.ycsb.DB;
import site.ycsb.WorkloadException;
import site.ycsb.generator.ExponentialGenerator;
import site.ycsb.workloads.CoreWorkload;

import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * YCSB's CoreWorkload plus deletes, which CoreWorkload 0.17 lacks and seed 002's SNS messenger
 * workload needs (messages are removed as well as read and written). Property
 * {@code deleteproportion} (default 0): that share of transactions deletes one existing record
 * chosen like a read; the other proportions then share the rest, as CoreWorkload draws them.
 */
public class DeletingWorkload extends CoreWorkload {
    private double deleteProportion;

    @Override
    public void init(Properties p) throws WorkloadException {
        super.init(p);
        try {
            deleteProportion = Double.parseDouble(p.getProperty("deleteproportion", "0"));
        } catch (NumberFormatException e) {
            throw new WorkloadException("deleteproportion must be a number in [0, 1]");
        }
        if (deleteProportion < 0 || deleteProportion > 1) {
            throw new WorkloadException("deleteproportion must be in [0, 1], not " + deleteProportion);
        }
    }

    @Override
    public boolean doTransaction(DB db, Object threadstate) {
        if (deleteProportion > 0 && ThreadLocalRandom.current().nextDouble() < deleteProportion) {
            db.delete(table, buildKeyName(existingKey()));
            return true;
        }
        return super.doTransaction(db, threadstate);
    }

    /** A key already inserted, drawn from the workload's request distribution (as CoreWorkload does). */
    private long existingKey() {
        long last = transactioninsertkeysequence.lastValue();
        if (keychooser instanceof ExponentialGenerator) {
            return Math.max(0, last - keychooser.nextValue().longValue());
        }
        long k;
        do {
            k = keychooser.nextValue().longValue();
        } while (k > last);
        return k;
    }
}
