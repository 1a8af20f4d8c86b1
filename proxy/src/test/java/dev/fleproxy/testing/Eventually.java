package dev.fleproxy.testing;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Waits for what the proxy's event loops do on their own time; generous, as both cores may be busy. */
public final class Eventually {
    private Eventually() {
    }

    /** Waits up to 10 s for the condition, or fails naming it. */
    public static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(5);
        }
    }
}
