package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.RateLimitPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The coalescer against a Redis that never answers: callers are failed by the watchdog, and when the watchdog
 * thread is gone, by deadlines of their own; nobody waits forever.
 */
class CoalescerTests {

	private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

	private final RateLimitPolicy policy = RateLimitPolicy.builder("silent").limit(5).window(Duration.ofMinutes(1))
		.build();

	/** Like the coalescer's sender: a Redis that never answers. */
	private static final ScriptExecutor SILENT = new ScriptExecutor() {

		@Override
		public CompletableFuture<java.util.List<Object>> execute(RateLimitScript script, byte[][] keys,
				byte[][] args) {
			return new CompletableFuture<>();
		}

		@Override
		public CompletableFuture<?> delete(byte[][] keys) {
			return new CompletableFuture<>();
		}

		@Override
		public void close() {
		}

	};

	private PolicyScript script(Coalescer coalescer) {
		RedisKeys keys = new RedisKeys("t");
		return new PolicyScript(this.policy, keys, PolicyScript.EMPTY, coalescer,
				new PolicyVersions(SILENT, keys, null, PolicyScript.EMPTY, new Deadlines("ratelimit-redis-deadlines-t")));
	}

	@Test
	void callersOfARedisThatNeverAnswersAreFailedAsOverdue() throws Exception {
		try (Coalescer coalescer = new Coalescer((script, batch) -> new CompletableFuture<>(), false, TIMEOUT_NANOS, 64,
				4, "ratelimit-redis-timeouts-overdue")) {
			PolicyScript script = script(coalescer);
			coalescer.start(); // else the first caller, seeing no watchdog yet, waits with a deadline of its own
			ExecutionException failure = decideExpectingFailure(coalescer, script);
			assertThat(failure.getCause()).isSameAs(Coalescer.OVERDUE);
			assertThat(coalescer.isWatchdogRunning()).isTrue();
		}
	}

	@Test
	@SuppressWarnings({ "deprecation", "removal" })
	void whenTheWatchdogThreadDiesCallersWaitWithDeadlinesOfTheirOwn() throws Exception {
		String name = "ratelimit-redis-timeouts-dying";
		try (Coalescer coalescer = new Coalescer((script, batch) -> new CompletableFuture<>(), false, TIMEOUT_NANOS, 64,
				4, name)) {
			PolicyScript script = script(coalescer);
			coalescer.start();
			Thread watchdog = Thread.getAllStackTraces()
				.keySet()
				.stream()
				.filter((thread) -> thread.getName().equals(name))
				.findFirst()
				.orElseThrow();
			// Stopped once it waits in its loop: stopped before it reaches it, it would die outside the code that says
			// so, as no Error it could throw would.
			long waiting = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (watchdog.getState() != Thread.State.WAITING && watchdog.getState() != Thread.State.TIMED_WAITING
					&& System.nanoTime() < waiting) {
				Thread.sleep(1);
			}
			boolean stopped;
			try {
				watchdog.stop(); // what an Error thrown inside it would do
				stopped = true;
			}
			catch (UnsupportedOperationException ex) {
				stopped = false; // Java 20 and later cannot stop a thread
			}
			assumeTrue(stopped, "Thread.stop() is not supported on this Java");
			watchdog.join(5_000);
			assertThat(coalescer.isWatchdogRunning()).isFalse();
			long start = System.nanoTime();
			assertThatExceptionOfType(TimeoutException.class)
				.isThrownBy(() -> coalescer.decide(script.lanes, call(script)));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		}
	}

	private ExecutionException decideExpectingFailure(Coalescer coalescer, PolicyScript script) {
		long start = System.nanoTime();
		ExecutionException failure = org.assertj.core.api.Assertions.catchThrowableOfType(ExecutionException.class,
				() -> coalescer.decide(script.lanes, call(script)));
		assertThat(failure).isNotNull();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		return failure;
	}

	private static PendingDecision call(PolicyScript script) {
		return new PendingDecision(script.layout.keys("k"), 1, System.nanoTime());
	}

}
