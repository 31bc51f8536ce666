package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.limiter.RateLimiter;

/**
 * Settings of the circuit breaker in front of a remote store ({@code ratelimit.circuit-breaker}).
 */
public class CircuitBreakerProperties {

	/**
	 * Number of consecutive store failures that open the circuit; while open, the store is not called and the
	 * failure mode applies.
	 */
	private int failureThreshold = RateLimiter.DEFAULT_FAILURE_THRESHOLD;

	/**
	 * How long the circuit stays open before one request probes the store again.
	 */
	private Duration openDuration = Duration.ofMillis(RateLimiter.DEFAULT_OPEN_DURATION_MILLIS);

	public int getFailureThreshold() {
		return this.failureThreshold;
	}

	public void setFailureThreshold(int failureThreshold) {
		this.failureThreshold = failureThreshold;
	}

	public Duration getOpenDuration() {
		return this.openDuration;
	}

	public void setOpenDuration(Duration openDuration) {
		this.openDuration = openDuration;
	}

}
