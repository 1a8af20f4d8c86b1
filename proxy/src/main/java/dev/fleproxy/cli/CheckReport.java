package dev.fleproxy.cli;

import java.io.PrintWriter;

/** The lines of {@code fle-proxy check}: one per thing checked, {@code ok}, {@code WARN} or {@code FAIL}. */
final class CheckReport {
    private final PrintWriter out;
    private int failures;
    private int warnings;

    CheckReport(PrintWriter out) {
        this.out = out;
    }

    void ok(String what) {
        line("ok  ", what);
    }

    void warn(String what) {
        warnings++;
        line("WARN", what);
    }

    void fail(String what) {
        failures++;
        line("FAIL", what);
    }

    /** A line of its own (the table, the summary). */
    void print(String text) {
        out.println(text);
        out.flush();
    }

    int failures() {
        return failures;
    }

    int warnings() {
        return warnings;
    }

    private void line(String status, String what) {
        // one line each, whatever a message from a library holds
        out.println(status + "  " + what.replaceAll("[\\r\\n]+", " "));
        out.flush();
    }
}
