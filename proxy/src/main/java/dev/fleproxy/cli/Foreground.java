package dev.fleproxy.cli;

import java.util.concurrent.CountDownLatch;

/** Keeps a server in the foreground until SIGTERM or SIGINT, then closes it. */
final class Foreground {
    private Foreground() {
    }

    static void runUntilStopped(AutoCloseable server) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (Exception e) {
                System.err.println("fle-proxy: error while stopping: " + e);
            } finally {
                stopped.countDown();
            }
        }, "shutdown"));
        stopped.await();
    }
}
