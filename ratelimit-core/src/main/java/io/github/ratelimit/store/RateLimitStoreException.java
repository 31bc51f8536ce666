package io.github.ratelimit.store;

/**
 * Thrown when a {@link RateLimitStore} cannot decide: it is unreachable, did not answer in time, or answered with
 * an error. Messages name the policy, never the key (keys can be personal data).
 *
 * @since 0.1.0
 */
public class RateLimitStoreException extends RuntimeException {

	/**
	 * Create a new exception.
	 * @param message the message
	 * @param cause the cause, may be {@code null}
	 */
	public RateLimitStoreException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * Create a new exception.
	 * @param message the message
	 */
	public RateLimitStoreException(String message) {
		super(message);
	}

}
