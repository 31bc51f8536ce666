package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.FailureMode;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on the 'redis' profile while its Redis is paused ({@code CLIENT PAUSE}, so every call times out) or
 * killed and restarted mid-load. Whatever the failure mode: no 500, every answer within the timeout plus a margin,
 * the mode honoured, enforcement back within seconds of recovery, and nothing in the logs beyond the documented
 * lines.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisOutageTests {

	/** The decision timeout under test. */
	private static final Duration TIMEOUT = Duration.ofMillis(200);

	/** What a request may take at most: the timeout plus a margin for a loaded 2-core CI machine. */
	private static final Duration BOUND = TIMEOUT.plusMillis(1300);

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private RedisServer redis;

	private ConfigurableApplicationContext app;

	private int port;

	@BeforeEach
	void startRedis() {
		this.redis = RedisServer.spawn();
	}

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
		this.redis.close();
	}

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void aPausedRedisCostsATimeoutAtMostAndTheFailureModeDecides(FailureMode mode, CapturedOutput output)
			throws Exception {
		start(mode);
		assertEnforcementReturnsWithin(Duration.ofSeconds(10)); // the first requests may pay for connecting
		assertThat(get("/api/v1/resources").statusCode()).isEqualTo(200);
		assertThat(stored("resources", "127.0.0.1")).as("counted in Redis").isTrue();
		this.redis.pause(Duration.ofSeconds(3));
		long pausedAt = System.nanoTime();
		List<Answer> answers = new ArrayList<>();
		while (System.nanoTime() - pausedAt < Duration.ofMillis(2500).toNanos()) {
			answers.add(timedGet("/api/v1/resources"));
		}
		assertThat(answers).hasSizeGreaterThan(5).allSatisfy((answer) -> {
			assertThat(answer.status()).isNotEqualTo(500);
			assertThat(answer.took()).isLessThan(BOUND);
		});
		switch (mode) {
			case ALLOW -> assertThat(answers).allSatisfy((answer) -> {
				assertThat(answer.status()).isEqualTo(200);
				assertThat(answer.response().headers().firstValue("RateLimit-Remaining")).isEmpty();
			});
			case DENY -> assertThat(answers).allSatisfy((answer) -> {
				assertThat(answer.status()).isEqualTo(503);
				assertThat(answer.response().headers().firstValue("Retry-After")).isPresent();
				assertThat(answer.response().body()).contains("\"status\":503").contains("\"policy\":\"resources\"")
					.contains("http-problem-types#temporary-reduced-capacity");
			});
			case LOCAL -> {
				assertThat(answers.stream().filter((answer) -> answer.status() == 200)).hasSize(5);
				assertThat(answers.stream().skip(5)).allSatisfy((answer) -> {
					assertThat(answer.status()).isEqualTo(429);
					assertThat(answer.response().headers().firstValue("Retry-After")).isPresent();
				});
			}
		}
		assertEnforcementReturnsWithin(Duration.ofSeconds(10));
		assertLogsShowOnlyTheDocumentedLines(output);
		assertThat(output).contains("Rate limit store could not decide for policy 'resources' (Redis did not answer "
				+ "within 200ms for policy 'resources'); failure mode " + mode);
	}

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void aRedisKilledMidLoadAndRestartedNeverCausesA500AndEnforcementComesBack(FailureMode mode, CapturedOutput output)
			throws Exception {
		start(mode);
		AtomicBoolean running = new AtomicBoolean(true);
		ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
		ExecutorService load = Executors.newFixedThreadPool(4);
		for (int i = 0; i < 4; i++) {
			int user = i;
			load.execute(() -> {
				while (running.get()) {
					try {
						answers.add(timedGet("/api/v1/users/user-" + user + "/orders"));
					}
					catch (Exception ex) {
						answers.add(new Answer(-1, Duration.ZERO, null));
					}
				}
			});
		}
		try {
			Thread.sleep(500);
			this.redis.kill();
			Thread.sleep(3000);
			this.redis.restart();
			assertEnforcementReturnsWithin(Duration.ofSeconds(20));
		}
		finally {
			running.set(false);
			load.shutdown();
			assertThat(load.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(answers).hasSizeGreaterThan(20).allSatisfy((answer) -> {
			assertThat(answer.status()).isIn(200, 429, 503);
			assertThat(answer.took()).isLessThan(BOUND);
		});
		if (mode != FailureMode.DENY) {
			assertThat(answers).noneMatch((answer) -> answer.status() == 503);
		}
		assertLogsShowOnlyTheDocumentedLines(output);
	}

	/**
	 * Enforcement is back when a request is counted in Redis again.
	 */
	private void assertEnforcementReturnsWithin(Duration limit) throws Exception {
		long deadline = System.nanoTime() + limit.toNanos();
		String key = "recovery-" + System.nanoTime();
		while (System.nanoTime() < deadline) {
			Answer answer = timedGet("/api/v1/users/" + key + "/orders");
			assertThat(answer.status()).isNotEqualTo(500);
			if (this.redis.answersPing() && stored("orders", key)) {
				return;
			}
			Thread.sleep(100);
		}
		throw new AssertionError("Rate limiting did not use Redis again within " + limit);
	}

	private static void assertLogsShowOnlyTheDocumentedLines(CapturedOutput output) {
		for (String line : output.getAll().split("\n")) {
			assertThat(line).as("no errors or stack traces in the logs").doesNotContain(" ERROR ").doesNotStartWith("\tat ");
			if (line.contains(" WARN ")) {
				assertThat(line).as("only the documented WARN lines")
					.containsAnyOf("Rate limit store could not decide", "Rate limit store failed",
							"io.lettuce.core.protocol.ConnectionWatchdog", "Cannot reconnect",
							// At start-up, on a store with no secret for its stored changes (docs/reliability.md).
							"ratelimit.changes.secret is not set",
							// Redis restarted without its data: cached denials and leased blocks are forgotten.
							"Redis lost this instance's key",
							// The read of the stored changes, once a second, met the outage (docs/reliability.md).
							"Could not read the rate limit policies' changes");
			}
		}
	}

	/**
	 * Whether Redis holds a counter for the key (the sliding log's summary, or a fixed window's state).
	 */
	private boolean stored(String policy, String key) {
		String base = "ratelimit:{" + policy + ":" + key + "}:";
		return !((List<?>) this.redis.call("KEYS", base + "*")).isEmpty();
	}

	private void start(FailureMode mode) {
		this.app = SpringApplication.run(SampleApplication.class, "--spring.profiles.active=redis", "--server.port=0",
				"--ratelimit.filters.edge.enabled=false",
				"--spring.data.redis.host=" + this.redis.host(), "--spring.data.redis.port=" + this.redis.port(),
				"--ratelimit.failure-mode=" + mode, "--ratelimit.redis.timeout=" + TIMEOUT.toMillis() + "ms",
				"--ratelimit.circuit-breaker.open-duration=1s", "--ratelimit.failure-log-interval=1h",
				// A sliding log has no window edge that a test could straddle: 5 per minute means 5.
				"--ratelimit.policies.resources.algorithm=sliding-log");
		this.port = Integer.parseInt(this.app.getEnvironment().getProperty("local.server.port"));
	}

	private Answer timedGet(String path) throws Exception {
		long start = System.nanoTime();
		HttpResponse<String> response = get(path);
		return new Answer(response.statusCode(), Duration.ofNanos(System.nanoTime() - start), response);
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	record Answer(int status, Duration took, HttpResponse<String> response) {
	}

}
