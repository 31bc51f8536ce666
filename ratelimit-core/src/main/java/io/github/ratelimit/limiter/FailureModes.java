package io.github.ratelimit.limiter;

import java.lang.System.Logger.Level;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;
import org.jspecify.annotations.Nullable;

/**
 * What a policy's {@link FailureMode} decides when the store cannot: admit uncounted ({@code allow}), reject with a
 * 503 until the breaker probes again ({@code deny}), or decide in this instance's own memory ({@code local}); told to
 * the listener and logged, at most once per interval.
 */
final class FailureModes {

	private final RateLimitListener listener;

	private final TimeSource clock;

	private final RateLimitStore fallbackStore;

	private final ThrottledLogger failureLogger;

	FailureModes(RateLimitListener listener, TimeSource clock, RateLimitStore fallbackStore,
			ThrottledLogger failureLogger) {
		this.listener = listener;
		this.clock = clock;
		this.fallbackStore = fallbackStore;
		this.failureLogger = failureLogger;
	}

	/** The in-memory store that decides for policies failing {@code local}. */
	RateLimitStore fallbackStore() {
		return this.fallbackStore;
	}

	Decision onStoreFailure(RateLimitPolicy policy, String key, long cost, long now, CircuitBreaker breaker,
			@Nullable RuntimeException failure) {
		logFailure(policy, now, failure);
		FailureMode mode = policy.failureMode();
		Decision decision = switch (mode) {
			case ALLOW -> new Decision(true, policy.capacity(), policy.capacity(), 0, 0, Decision.Origin.FAIL_OPEN);
			case DENY -> {
				long retry = breaker.millisUntilRetry(this.clock.currentTimeMillis());
				yield new Decision(false, policy.capacity(), 0, retry, retry, Decision.Origin.FAIL_CLOSED);
			}
			case LOCAL -> this.fallbackStore.tryAcquire(policy, key, cost).withOrigin(Decision.Origin.LOCAL_FALLBACK);
		};
		this.listener.onDecision(policy, decision);
		return decision;
	}

	void logFailure(RateLimitPolicy policy, long now, @Nullable RuntimeException failure) {
		this.listener.onStoreFailure(policy, failure);
		FailureMode mode = policy.failureMode();
		String cause = (failure != null) ? failure.getMessage() : "circuit open after repeated failures";
		this.failureLogger.log(Level.WARNING, now, (skipped) -> "Rate limit store could not decide for policy '"
				+ policy.name() + "' (" + cause + "); failure mode " + mode + ": " + describe(mode)
				+ ((skipped > 0) ? " (" + skipped + " more failures since the last message)" : ""), null);
	}

	private static String describe(FailureMode mode) {
		return switch (mode) {
			case ALLOW -> "requests pass uncounted";
			case DENY -> "requests are rejected with 503";
			case LOCAL -> "requests are limited by this instance alone";
		};
	}

}
