package dev.fleproxy.server;

/**
 * For the metrics: the timings of one connection's forwarded requests whose first reply has not
 * been read yet. The upstream answers a connection's requests in order, so the reply sought is
 * almost always for the oldest: a ring searched from the oldest finds it at once, with no boxed
 * request id or map node per request (a HashMap cost a visible share of the proxy's CPU here).
 */
final class RequestTimings {
    private int[] ids = new int[4];
    private RequestTiming[] timings = new RequestTiming[4];
    private int head;
    private int size;

    void add(int requestId, RequestTiming timing) {
        if (size == ids.length) {
            grow();
        }
        int at = (head + size) & (ids.length - 1);
        ids[at] = requestId;
        timings[at] = timing;
        size++;
    }

    /** Removes and returns the timing of the request this reply answers; null if none is held. */
    RequestTiming take(int responseTo) {
        int mask = ids.length - 1;
        for (int i = 0; i < size; i++) {
            int at = (head + i) & mask;
            if (ids[at] == responseTo) {
                RequestTiming t = timings[at];
                // close the gap: the ones before it move up by one (none, when it is the oldest)
                for (int j = i; j > 0; j--) {
                    int to = (head + j) & mask;
                    int from = (head + j - 1) & mask;
                    ids[to] = ids[from];
                    timings[to] = timings[from];
                }
                timings[head] = null;
                head = (head + 1) & mask;
                size--;
                return t;
            }
        }
        return null;
    }

    int size() {
        return size;
    }

    private void grow() {
        int[] newIds = new int[ids.length * 2];
        RequestTiming[] newTimings = new RequestTiming[ids.length * 2];
        for (int i = 0; i < size; i++) {
            int at = (head + i) & (ids.length - 1);
            newIds[i] = ids[at];
            newTimings[i] = timings[at];
        }
        ids = newIds;
        timings = newTimings;
        head = 0;
    }
}
