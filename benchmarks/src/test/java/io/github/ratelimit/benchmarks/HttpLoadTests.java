package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HttpLoadTests {

	@Test
	void countsStatusesOfAKeepAliveServerAndStops() throws Exception {
		AtomicInteger requests = new AtomicInteger();
		HttpLoad.Result result = loadFor1Second((exchange) -> {
			byte[] body = "{\"status\":\"success\"}".getBytes(StandardCharsets.UTF_8);
			int status = (requests.incrementAndGet() % 2 == 0) ? 429 : 200;
			exchange.sendResponseHeaders(status, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		assertThat(result.ok()).isPositive();
		assertThat(result.tooMany()).isPositive();
		assertThat(result.other()).isZero();
		assertThat(result.requestsPerSecond()).isPositive();
	}

	@Test
	void countsAResponseThatClosesTheConnectionByItsStatusAndReconnects() throws Exception {
		AtomicInteger requests = new AtomicInteger();
		HttpLoad.Result result = loadFor1Second((exchange) -> {
			byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
			if (requests.incrementAndGet() % 3 == 0) {
				exchange.getResponseHeaders().set("Connection", "close"); // as Tomcat ends every 100th keep-alive
			}
			exchange.sendResponseHeaders(200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		assertThat(result.ok()).isGreaterThan(3);
		assertThat(result.other()).isZero();
	}

	@Test
	void readsChunkedResponsesWholeBeforeTheNextRequest() throws Exception {
		HttpLoad.Result result = loadFor1Second((exchange) -> {
			exchange.getResponseHeaders().set("X-Padding", "p".repeat(3000));
			exchange.sendResponseHeaders(200, 0); // chunked
			for (int i = 0; i < 5; i++) {
				exchange.getResponseBody().write(("chunk " + "x".repeat(5000 * i)).getBytes(StandardCharsets.UTF_8));
				exchange.getResponseBody().flush();
			}
			exchange.close();
		});
		assertThat(result.ok()).isGreaterThan(3);
		assertThat(result.other()).isZero();
	}

	@Test
	void interleavedLoadSendsToEveryEndpointInTurnAndCountsEachApart() throws Exception {
		HttpServer server = plainAndLimitedServer();
		try {
			URI base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
			List<HttpLoad.Result> results = HttpLoad.runInterleaved(List.of(base.resolve("/plain"),
					base.resolve("/limited")), 2, 1);
			assertThat(results.get(0).ok()).isPositive();
			assertThat(results.get(0).tooMany()).isZero();
			assertThat(results.get(1).tooMany()).isPositive();
			assertThat(results.get(1).ok()).isZero();
			// Each connection alternates, so the counts differ by at most one per connection.
			assertThat(Math.abs(results.get(0).ok() - results.get(1).tooMany())).isLessThanOrEqualTo(2);
			assertThat(results.get(0).meanMicros()).isPositive();
		}
		finally {
			server.stop(0);
		}
	}

	@Test
	void phasedLoadSendsEachPhaseToItsEndpointAndReadsTheServersCpuAtEverySwitch() throws Exception {
		HttpServer server = plainAndLimitedServer();
		try {
			URI base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
			AtomicLong cpu = new AtomicLong();
			List<HttpLoad.Phase> phases = HttpLoad.runPhased(List.of(base.resolve("/plain"), base.resolve("/limited")),
					2, Duration.ofMillis(300), 4, HttpOverhead::phaseEndpoint, () -> cpu.addAndGet(1_000));
			assertThat(phases).extracting(HttpLoad.Phase::endpoint).containsExactly(0, 1, 1, 0);
			assertThat(phases).allSatisfy((phase) -> {
				assertThat(phase.serverCpuNanos()).isEqualTo(1_000);
				assertThat(phase.nanos()).isGreaterThanOrEqualTo(250_000_000L);
				// The limited endpoint answers 429, counted apart; at a switch, a connection may still be answered
				// by the endpoint it sent to before.
				long sentElsewhere = (phase.endpoint() == 0) ? phase.failures() : phase.responses();
				long sentHere = (phase.endpoint() == 0) ? phase.responses() : phase.failures();
				assertThat(sentElsewhere).isLessThanOrEqualTo(2);
				assertThat(sentHere).isPositive();
			});
		}
		finally {
			server.stop(0);
		}
	}

	private static HttpLoad.Result loadFor1Second(HttpHandler handler) throws IOException, InterruptedException {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		server.createContext("/", handler);
		server.start();
		try {
			return HttpLoad.run(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/api"), 2, 1);
		}
		finally {
			server.stop(0);
		}
	}

	/** A started server answering 429 at {@code /limited} and 200 everywhere else, with the same small body. */
	private static HttpServer plainAndLimitedServer() throws IOException {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		server.createContext("/", (exchange) -> {
			byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(exchange.getRequestURI().getPath().equals("/limited") ? 429 : 200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		server.start();
		return server;
	}

}
