package io.github.ratelimit.samples;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * The API behind the gateway sample, in the test's JVM: answers every request with 200 and the sample API's payload,
 * and counts the requests that reach it, so that a test can tell a request the gateway rejected never left it.
 */
final class EchoUpstream implements AutoCloseable {

	private final HttpServer server;

	private final AtomicInteger requests = new AtomicInteger();

	private EchoUpstream(HttpServer server) {
		this.server = server;
	}

	static EchoUpstream start() {
		try {
			HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
			EchoUpstream upstream = new EchoUpstream(server);
			server.createContext("/", (exchange) -> {
				upstream.requests.incrementAndGet();
				byte[] body = ("{\"status\":\"success\",\"data\":\"the resource payload goes here\",\"path\":\""
						+ exchange.getRequestURI().getPath() + "\"}")
					.getBytes(StandardCharsets.UTF_8);
				exchange.getResponseHeaders().set("Content-Type", "application/json");
				exchange.sendResponseHeaders(200, body.length);
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(body);
				}
			});
			server.start();
			return upstream;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	int requests() {
		return this.requests.get();
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
