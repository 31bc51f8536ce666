package io.github.ratelimit.sample.gateway;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * The API behind the gateway: answers every request with 200 and a small JSON body, and counts what reaches it, with
 * the raw path the gateway forwarded.
 */
final class Upstream implements AutoCloseable {

	private final HttpServer server;

	private final AtomicInteger requests = new AtomicInteger();

	private final List<String> paths = new CopyOnWriteArrayList<>();

	private Upstream(HttpServer server) {
		this.server = server;
	}

	static Upstream start() throws IOException {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		Upstream upstream = new Upstream(server);
		server.createContext("/", (exchange) -> {
			upstream.requests.incrementAndGet();
			upstream.paths.add(exchange.getRequestURI().getRawPath());
			byte[] body = "{\"status\":\"success\"}".getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(200, body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		});
		server.start();
		return upstream;
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	int requests() {
		return this.requests.get();
	}

	/** The raw paths of the requests that reached the API, in order. */
	List<String> paths() {
		return List.copyOf(this.paths);
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
