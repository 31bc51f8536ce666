package io.github.ratelimit.benchmarks;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpServer;

/**
 * The API behind a gateway under measurement: answers every request with 200 and a small JSON body, as cheaply as the
 * JDK's server can, so that what differs between two routes is the gateway's work.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.StubUpstream 18081
 * }
 */
public final class StubUpstream {

	private static final byte[] BODY = "{\"status\":\"success\"}".getBytes(StandardCharsets.UTF_8);

	private StubUpstream() {
	}

	public static void main(String[] args) throws Exception {
		// Without it, a response's headers and body leave in two segments, and Nagle's algorithm holds the second
		// until the gateway's delayed ACK: 40 ms a request.
		System.setProperty("sun.net.httpserver.nodelay", "true");
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 1024);
		server.setExecutor(Executors.newFixedThreadPool(8));
		server.createContext("/", (exchange) -> {
			exchange.getRequestBody().readAllBytes();
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(200, BODY.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(BODY);
			}
		});
		server.start();
		System.out.println("upstream on 127.0.0.1:" + args[0]);
	}

}
