package io.github.ratelimit;

/**
 * What a {@link io.github.ratelimit.limiter.RateLimiter} does when its store cannot decide in time (an outage, a timeout, an open circuit).
 *
 * @since 0.1.0
 */
public enum FailureMode {

	/**
	 * Fail open: let the request pass without counting it, log at WARN at most once per interval and count the
	 * event.
	 */
	ALLOW,

	/**
	 * Fail closed: reject the request as if the service were unavailable (HTTP 503 with {@code Retry-After}).
	 */
	DENY,

	/**
	 * Fall back to an in-memory store of this instance until the store is back. Limits are then enforced per
	 * instance rather than across instances.
	 */
	LOCAL

}
