package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpStatus;

/**
 * Thrown when the rate limit store cannot decide and the policy fails closed
 * ({@link io.github.ratelimit.FailureMode#DENY}); rendered as {@code 503 Service Unavailable} with
 * {@code Retry-After} and an RFC 9457 problem body.
 *
 * @since 0.1.0
 */
public class RateLimitUnavailableException extends RateLimitException {

	/**
	 * Create a new exception.
	 * @param policy the policy whose store failed
	 * @param decision the decision of the failure mode
	 */
	public RateLimitUnavailableException(RateLimitPolicy policy, Decision decision) {
		super(HttpStatus.SERVICE_UNAVAILABLE, "Rate limiting for policy '" + policy.name()
				+ "' is temporarily unavailable. Retry after " + decision.retryAfterSeconds() + " seconds.", policy,
				decision);
	}

	@Override
	public String getMessage() {
		return "Rate limit store unavailable for policy '" + getPolicy().name() + "'";
	}

}
