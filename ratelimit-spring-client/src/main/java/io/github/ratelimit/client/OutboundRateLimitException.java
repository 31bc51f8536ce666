package io.github.ratelimit.client;

import java.time.Duration;

/**
 * Thrown instead of calling another service when this application's own limit on its calls to it is spent: the
 * policy ({@code ratelimit.policies.<name>}) admits no call now, nor within its {@code max-wait}, or the service said
 * to wait longer ({@code Retry-After}, or its {@code RateLimit} fields with nothing left). Nothing was sent.
 *
 * @since 0.5.0
 */
public class OutboundRateLimitException extends RuntimeException {

	private final String policy;

	private final String host;

	private final Duration retryAfter;

	/**
	 * Create an exception.
	 * @param policy the policy that limits the calls
	 * @param host the host that was not called
	 * @param retryAfter how long until a call may pass, as far as is known
	 */
	public OutboundRateLimitException(String policy, String host, Duration retryAfter) {
		this(policy, host, retryAfter, false);
	}

	/**
	 * Create an exception.
	 * @param policy the policy that limits the calls
	 * @param host the host that was not called
	 * @param retryAfter how long until a call may pass, as far as is known
	 * @param unavailable whether the limit could not be decided (its store failed, and the policy fails closed)
	 */
	public OutboundRateLimitException(String policy, String host, Duration retryAfter, boolean unavailable) {
		super(unavailable ? "Calls to '" + host + "' under rate limit policy '" + policy + "' cannot be counted now "
				+ "(the store failed, and the policy fails closed); a call may pass in "
				+ Math.max(1, retryAfter.toSeconds()) + " s"
				: "Calls to '" + host + "' under rate limit policy '" + policy + "' are spent; a call may pass in "
						+ Math.max(1, retryAfter.toSeconds()) + " s");
		this.policy = policy;
		this.host = host;
		this.retryAfter = retryAfter;
	}

	/**
	 * Return the policy that limits the calls.
	 * @return its name
	 */
	public String getPolicy() {
		return this.policy;
	}

	/**
	 * Return the host that was not called.
	 * @return the host
	 */
	public String getHost() {
		return this.host;
	}

	/**
	 * Return how long until a call may pass, as far as this instance knows.
	 * @return the wait
	 */
	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this; // thrown for every call refused; where it was thrown says nothing useful
	}

}
