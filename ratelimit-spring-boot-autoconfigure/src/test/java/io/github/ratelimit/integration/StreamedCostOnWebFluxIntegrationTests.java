package io.github.ratelimit.integration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A metered stream on WebFlux, over real HTTP on Reactor Netty: tokens sent as server-sent events, each reported as it
 * goes ({@code settle = "#reported"}) against a reservation of 100. However the stream ends (completed, cancelled by
 * a client that went away, failed midway, timed out) the reservation is settled to the 5 tokens reported until
 * then, not left at 100. The limiter's clock stands still, so the bucket's level is exact.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class StreamedCostOnWebFluxIntegrationTests {

	private static final int LIMIT = 1000;

	private static ConfigurableApplicationContext app;

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@BeforeAll
	static void start() {
		SpringApplication application = new SpringApplication(StreamingApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		app = application.run("--server.port=0", "--ratelimit.store=memory");
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void aStreamThatCompletesIsSettledToWhatItReported() throws Exception {
		try (Stream<String> events = open("complete")) {
			assertThat(tokens(events.iterator(), 6)).as("every token, then the end")
				.containsExactly("token 1", "token 2", "token 3", "token 4", "token 5");
		}
		awaitRemaining("complete", LIMIT - 5);
	}

	@Test
	void aStreamTheClientCancelsIsSettledToWhatItReportedBeforeItWentAway() throws Exception {
		try (Stream<String> events = open("cancel")) {
			assertThat(tokens(events.iterator(), 5)).hasSize(5);
			assertThat(remaining("cancel")).as("while the stream is open, the reservation stands").isEqualTo(LIMIT - 100);
		} // the client goes away, the stream waiting for a sixth token
		awaitRemaining("cancel", LIMIT - 5);
	}

	@Test
	void aStreamThatFailsMidwayIsSettledToWhatItReportedBeforeItFailed() throws Exception {
		try (Stream<String> events = open("error")) {
			tokens(events.iterator(), 6);
		}
		awaitRemaining("error", LIMIT - 5);
	}

	@Test
	void aStreamThatTimesOutIsSettledToWhatItReportedBeforeTheTimeout() throws Exception {
		try (Stream<String> events = open("timeout")) {
			tokens(events.iterator(), 6);
		}
		awaitRemaining("timeout", LIMIT - 5);
	}

	/** The stream's events, as lines read as they arrive. */
	private Stream<String> open(String end) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tokens?end=" + end))
			.header("Accept", MediaType.TEXT_EVENT_STREAM_VALUE)
			.build();
		HttpResponse<Stream<String>> response = this.client.send(request, HttpResponse.BodyHandlers.ofLines());
		assertThat(response.statusCode()).isEqualTo(200);
		return response.body();
	}

	/** Read up to a number of events' data, fewer if the stream ends (or breaks) first. */
	private static List<String> tokens(Iterator<String> lines, int atMost) {
		List<String> tokens = new ArrayList<>();
		try {
			while (tokens.size() < atMost && lines.hasNext()) {
				String line = lines.next();
				if (line.startsWith("data:")) {
					tokens.add(line.substring("data:".length()));
				}
			}
		}
		catch (RuntimeException ex) {
			// a stream that failed after its response was committed is cut short: what was read is what it sent
		}
		return tokens;
	}

	/** The settlement is made off the event loop once the stream ended: wait for it to land. */
	private static void awaitRemaining(String key, long expected) {
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(remaining(key)).isEqualTo(expected));
	}

	private static long remaining(String key) {
		RateLimitPolicy tokens = Objects.requireNonNull(app.getBean(RateLimitEngine.class).catalog().policy("tokens"))
			.policy();
		return app.getBean(RateLimiter.class).peek(tokens, key).remaining();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(TokenController.class)
	static class StreamingApplication {

		@Bean
		TimeSource rateLimitTimeSource() {
			return MutableTimeSource.at("2030-01-01T00:00:00Z");
		}

		/** Spring Security is on this module's test class path: everything is open. */
		@Bean
		SecurityWebFilterChain openChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

	}

	@RestController
	static class TokenController {

		/** Five tokens, each reported as it is generated, then the stream ends as the client asks. */
		@GetMapping(path = "/tokens", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		@RateLimited(name = "tokens", algorithm = Algorithm.TOKEN_BUCKET, limit = LIMIT, window = "1h", cost = "100",
				settle = "#reported", key = "#end")
		Flux<String> tokens(@RequestParam String end, RateLimitStatus status) {
			AtomicLong generated = new AtomicLong();
			Flux<String> five = Flux.range(1, 5)
				.map((i) -> "token " + i)
				.doOnNext((token) -> status.settle("tokens", generated.incrementAndGet()));
			return switch (end) {
				case "cancel" -> five.concatWith(Flux.never());
				case "error" -> five.concatWith(Flux.error(new IllegalStateException("the model failed")));
				// the model stalls after its fifth token, and the handler stops waiting for a sixth
				case "timeout" -> five.concatWith(Flux.<String>never().timeout(Duration.ofMillis(100)));
				default -> five;
			};
		}

	}

}
