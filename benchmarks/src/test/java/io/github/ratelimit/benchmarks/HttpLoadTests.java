package io.github.ratelimit.benchmarks;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HttpLoadTests {

	@Test
	void countsStatusesOfAKeepAliveServerAndStops() throws Exception {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		AtomicInteger requests = new AtomicInteger();
		server.createContext("/", (exchange) -> {
			byte[] body = "{\"status\":\"success\"}".getBytes(StandardCharsets.UTF_8);
			int status = (requests.incrementAndGet() % 2 == 0) ? 429 : 200;
			exchange.sendResponseHeaders(status, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		server.start();
		try {
			HttpLoad.Result result = HttpLoad.run(
					URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/api"), 2, 1);
			assertThat(result.ok()).isPositive();
			assertThat(result.tooMany()).isPositive();
			assertThat(result.other()).isZero();
			assertThat(result.requestsPerSecond()).isPositive();
		}
		finally {
			server.stop(0);
		}
	}

	@Test
	void countsAResponseThatClosesTheConnectionByItsStatusAndReconnects() throws Exception {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		AtomicInteger requests = new AtomicInteger();
		server.createContext("/", (exchange) -> {
			byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
			if (requests.incrementAndGet() % 3 == 0) {
				exchange.getResponseHeaders().set("Connection", "close"); // as Tomcat ends every 100th keep-alive
			}
			exchange.sendResponseHeaders(200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		server.start();
		try {
			HttpLoad.Result result = HttpLoad.run(
					URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/api"), 2, 1);
			assertThat(result.ok()).isGreaterThan(3);
			assertThat(result.other()).isZero();
		}
		finally {
			server.stop(0);
		}
	}

}
