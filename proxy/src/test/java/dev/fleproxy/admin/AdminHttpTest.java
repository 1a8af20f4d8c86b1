package dev.fleproxy.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The admin listener's HTTP over raw sockets: what it answers, and who makes room at the connection limit. */
class AdminHttpTest {
    private AdminHttp http;

    @BeforeEach
    void start() throws Exception {
        http = AdminHttp.start(new InetSocketAddress("127.0.0.1", 0),
                path -> new AdminHttp.Response(path.equals("/gone") ? 404 : 200, "text/plain", "at " + path + "\n"),
                Set.of("/healthz"));
    }

    @AfterEach
    void stop() {
        http.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", http.address().getPort());
        s.setSoTimeout(10_000);
        return s;
    }

    private String exchange(String request) throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void answersGetAndHeadAndRefusesTheRest() throws Exception {
        String get = exchange("GET /metrics?name=x HTTP/1.1\r\nHost: a\r\n\r\n");
        assertTrue(get.startsWith("HTTP/1.1 200 OK\r\n") && get.contains("Content-Length: 12\r\n")
                && get.contains("Connection: close\r\n") && get.endsWith("\r\n\r\nat /metrics\n"), get);
        String head = exchange("HEAD /healthz HTTP/1.0\r\n\r\n");
        assertTrue(head.startsWith("HTTP/1.1 200 OK\r\n") && head.endsWith("Content-Length: 12\r\n"
                + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"), head);
        assertTrue(exchange("GET /gone HTTP/1.1\r\n\r\n").startsWith("HTTP/1.1 404 Not Found\r\n"));
        String post = exchange("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
        assertTrue(post.startsWith("HTTP/1.1 405 Method Not Allowed\r\n") && post.contains("Allow: GET, HEAD\r\n"), post);
        assertTrue(exchange("hello\r\n\r\n").startsWith("HTTP/1.1 400 Bad Request\r\n"));
        assertTrue(tooLong().startsWith("HTTP/1.1 431 "));
    }

    /** What a head over the limit gets: a 431, or a reset if that came first (the rest is never read). */
    private String tooLong() throws IOException {
        try {
            return exchange("GET /x HTTP/1.1\r\nX: " + "y".repeat(AdminHttp.MAX_HEAD_BYTES) + "\r\n\r\n");
        } catch (java.net.SocketException reset) {
            return "HTTP/1.1 431 (reset before it could be read)";
        }
    }

    @Test
    void atTheLimitTheOldestConnectionMakesRoom() throws Exception {
        List<Socket> unfinished = new ArrayList<>();
        try {
            for (int i = 0; i < AdminHttp.MAX_CONNECTIONS; i++) {
                Socket s = connect();
                s.getOutputStream().write("GET /metr".getBytes(StandardCharsets.ISO_8859_1));
                unfinished.add(s);
            }
            // the limit is reached: a new request is still answered, and the oldest waiting peer is closed for it
            assertTrue(exchange("GET /healthz HTTP/1.1\r\n\r\n").startsWith("HTTP/1.1 200 OK\r\n"));
            InputStream oldest = unfinished.get(0).getInputStream();
            assertEquals(-1, oldest.read());
        } finally {
            for (Socket s : unfinished) {
                s.close();
            }
        }
    }
}
