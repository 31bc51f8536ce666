package io.github.ratelimit.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.TimeSource;

/**
 * A clock for the limiter that tests move by hand, so that windows end and buckets refill without waiting. Define it
 * as the bean {@code rateLimitTimeSource} (the starter's own then backs off); the in-memory and DynamoDB stores count
 * with it (Redis uses its own clock).
 * <pre class="code">
 * &#64;TestConfiguration
 * static class Clock {
 *     &#64;Bean
 *     RateLimitTestClock rateLimitTimeSource() {
 *         return RateLimitTestClock.at("2030-01-01T00:00:00Z");
 *     }
 * }
 * </pre>
 *
 * @since 0.1.0
 */
public final class RateLimitTestClock implements TimeSource {

	private final AtomicLong millis;

	private RateLimitTestClock(long millis) {
		this.millis = new AtomicLong(millis);
	}

	/**
	 * Return a clock at the given instant.
	 * @param instant an ISO-8601 instant, such as {@code 2030-01-01T00:00:00Z}
	 * @return the clock
	 */
	public static RateLimitTestClock at(String instant) {
		return new RateLimitTestClock(Instant.parse(instant).toEpochMilli());
	}

	/**
	 * Return a clock at the current time.
	 * @return the clock
	 */
	public static RateLimitTestClock now() {
		return new RateLimitTestClock(System.currentTimeMillis());
	}

	@Override
	public long currentTimeMillis() {
		return this.millis.get();
	}

	/**
	 * Move the clock forward.
	 * @param duration how far
	 */
	public void advance(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("A test clock moves forward only, but was asked to move " + duration);
		}
		this.millis.addAndGet(duration.toMillis());
	}

	/**
	 * Set the clock to an instant, no earlier than its time.
	 * @param instant the instant
	 */
	public void set(Instant instant) {
		this.millis.accumulateAndGet(instant.toEpochMilli(), Math::max);
	}

	@Override
	public String toString() {
		return "RateLimitTestClock[" + Instant.ofEpochMilli(this.millis.get()) + "]";
	}

}
