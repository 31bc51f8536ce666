package io.github.ratelimit.integration;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.RateLimitStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Asynchronous results on Spring MVC, over real HTTP on Tomcat, whose cost is known only once they are served: settled
 * when the asynchronous request completes, however it ends, from what the handler reported while the response was
 * written ({@code #reported}) or the value the result completed with ({@code #result}), never when the method
 * returned, before anything was reported. Each reserves 100 of 1,000, and costs 5; the limiter's clock stands still,
 * so the bucket's level is exact.
 */
class StreamedCostOnMvcIntegrationTests {

	private static final int LIMIT = 1000;

	private static ConfigurableApplicationContext app;

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@BeforeAll
	static void start() {
		SpringApplication application = new SpringApplication(StreamingApplication.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		app = application.run("--server.port=0", "--ratelimit.store=memory");
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void anSseEmitterIsSettledWhenItCompletesToWhatItReportedAfterTheMethodReturned() throws Exception {
		try (Stream<String> events = open("/tokens?stream=completed")) {
			// The stream is open: the method returned, and nothing was reported yet.
			OpenStream stream = app.getBean(OpenStreams.class).take("completed");
			stream.send(5);
			assertThat(remaining("tokens", "completed")).as("until it completes, the reservation stands")
				.isEqualTo(LIMIT - 100);
			stream.emitter().complete();
			assertThat(events.filter((line) -> line.startsWith("data:")).count()).isEqualTo(5);
		}
		awaitRemaining("tokens", "completed", LIMIT - 5);
	}

	@Test
	void anSseEmitterWhoseClientWentAwayIsSettledToWhatItReportedBeforeThen() throws Exception {
		OpenStream stream;
		try (Stream<String> events = open("/tokens?stream=abandoned")) {
			stream = app.getBean(OpenStreams.class).take("abandoned");
			stream.send(5);
			assertThat(events.filter((line) -> line.startsWith("data:")).limit(5).count()).isEqualTo(5);
		} // the client goes away before the end
		stream.sendUntilTheClientIsGone();
		awaitRemaining("tokens", "abandoned", LIMIT - 5);
	}

	@Test
	void aStreamingResponseBodyIsSettledToWhatItReportedWhileWriting() throws Exception {
		try (Stream<String> rows = open("/rows")) {
			assertThat(rows.count()).isEqualTo(5);
		}
		// The JDK's client sends a GET again when a connection closes before any byte of a response: each time the
		// handler served it is counted, 5 each, and only that.
		int served = StreamingController.rowsServed.get();
		assertThat(served).isPositive();
		awaitRemaining("rows", "rows", LIMIT - 5L * served);
	}

	@Test
	void aCompletableFutureIsSettledFromTheValueItCompletedWith() throws Exception {
		try (Stream<String> body = open("/export")) {
			assertThat(body.toList()).containsExactly("12345");
		}
		awaitRemaining("export", "export", LIMIT - 5);
	}

	private Stream<String> open(String path) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build();
		HttpResponse<Stream<String>> response = this.client.send(request, HttpResponse.BodyHandlers.ofLines());
		assertThat(response.statusCode()).isEqualTo(200);
		return response.body();
	}

	/** The container completes the request after the response, then the filter settles: wait for it to land. */
	private static void awaitRemaining(String policy, String key, long expected) {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(remaining(policy, key)).isEqualTo(expected));
	}

	private static long remaining(String policy, String key) {
		RateLimitPolicy limit = Objects.requireNonNull(app.getBean(RateLimitEngine.class).catalog().policy(policy))
			.policy();
		return app.getBean(RateLimiter.class).peek(limit, key).remaining();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ StreamingController.class, OpenStreams.class })
	static class StreamingApplication {

		@Bean
		TimeSource rateLimitTimeSource() {
			return MutableTimeSource.at("2030-01-01T00:00:00Z");
		}

		/** Spring Security is on this module's test class path: everything is open. */
		@Bean
		SecurityFilterChain openChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class StreamingController {

		private final OpenStreams streams;

		/** Static: the controller is rate limited, so the bean is a proxy whose fields are not the controller's. */
		static final AtomicInteger rowsServed = new AtomicInteger();

		StreamingController(OpenStreams streams) {
			this.streams = streams;
		}

		/** Tokens the test sends once the method has returned, as a model would generate them. */
		@GetMapping("/tokens")
		@RateLimited(name = "tokens", algorithm = Algorithm.TOKEN_BUCKET, limit = LIMIT, window = "1h", cost = "100",
				settle = "#reported", key = "#stream")
		SseEmitter tokens(@RequestParam String stream, RateLimitStatus status) throws IOException {
			SseEmitter emitter = new SseEmitter(Duration.ofMinutes(1).toMillis());
			// Sent with the headers once the method has returned: the client knows the stream is open.
			emitter.send(SseEmitter.event().comment("open"));
			this.streams.opened(stream, new OpenStream(emitter, status));
			return emitter;
		}

		/** Rows written and reported after the method returned, on Spring MVC's task executor. */
		@GetMapping("/rows")
		@RateLimited(name = "rows", algorithm = Algorithm.TOKEN_BUCKET, limit = LIMIT, window = "1h", cost = "100",
				settle = "#reported", key = "'rows'")
		StreamingResponseBody rows(RateLimitStatus status) {
			rowsServed.incrementAndGet();
			return (body) -> {
				for (int row = 1; row <= 5; row++) {
					body.write(("row " + row + "\n").getBytes(StandardCharsets.UTF_8));
					body.flush();
					status.settle("rows", row);
				}
			};
		}

		/** A value known once the method returned, whose length is its cost. */
		@GetMapping("/export")
		@RateLimited(name = "export", algorithm = Algorithm.TOKEN_BUCKET, limit = LIMIT, window = "1h", cost = "100",
				settle = "#result.length()", key = "'export'")
		CompletableFuture<String> export() {
			return CompletableFuture.supplyAsync(() -> "12345");
		}

	}

	/** The streams being served, each under the name its client gave. */
	static class OpenStreams {

		private final Map<String, CompletableFuture<OpenStream>> streams = new ConcurrentHashMap<>();

		void opened(String name, OpenStream stream) {
			this.streams.computeIfAbsent(name, (key) -> new CompletableFuture<>()).complete(stream);
		}

		OpenStream take(String name) {
			return this.streams.computeIfAbsent(name, (key) -> new CompletableFuture<>()).join();
		}

	}

	/** An emitter with its request's status, for the test to send tokens on. */
	record OpenStream(SseEmitter emitter, RateLimitStatus status) {

		/** Send tokens, each reported once sent. */
		void send(int tokens) throws IOException {
			for (int token = 1; token <= tokens; token++) {
				this.emitter.send("token " + token);
				this.status.settle("tokens", token);
			}
		}

		/**
		 * Keep the connection busy, reporting nothing more, until the server finds the client gone: a write to a
		 * closed connection fails, and the emitter ends with the error.
		 */
		void sendUntilTheClientIsGone() {
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
				try {
					this.emitter.send(SseEmitter.event().comment("still there?"));
					return false;
				}
				catch (IOException | IllegalStateException ex) {
					this.emitter.completeWithError(ex);
					return true;
				}
			});
		}

	}

}
