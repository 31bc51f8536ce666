package io.github.ratelimit.web;

import java.net.URI;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpStatus;

/**
 * Thrown when the rate limit store cannot decide and the policy fails closed
 * ({@link io.github.ratelimit.FailureMode#DENY}); rendered as {@code 503 Service Unavailable} with
 * {@code Retry-After} and an RFC 9457 problem body of type {@value #TEMPORARY_REDUCED_CAPACITY_TYPE}.
 *
 * @since 0.1.0
 */
public class RateLimitUnavailableException extends RateLimitException {

	/**
	 * The problem type of the IETF rate limit headers draft for a service that cannot serve requests it would admit
	 * at full capacity.
	 * @since 0.4.0
	 */
	public static final String TEMPORARY_REDUCED_CAPACITY_TYPE =
			"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	/**
	 * {@link #TEMPORARY_REDUCED_CAPACITY_TYPE} as a URI.
	 * @since 0.4.0
	 */
	public static final URI TEMPORARY_REDUCED_CAPACITY = URI.create(TEMPORARY_REDUCED_CAPACITY_TYPE);

	/**
	 * Create a new exception.
	 * @param policy the policy whose store failed
	 * @param decision the decision of the failure mode
	 */
	public RateLimitUnavailableException(RateLimitPolicy policy, Decision decision) {
		super(HttpStatus.SERVICE_UNAVAILABLE, "Rate limiting for policy '" + policy.name()
				+ "' is temporarily unavailable. Retry after " + decision.retryAfterSeconds() + " seconds.", policy,
				decision);
		getBody().setType(TEMPORARY_REDUCED_CAPACITY);
	}

	@Override
	public String getMessage() {
		return "Rate limit store unavailable for policy '" + getPolicy().name() + "'";
	}

}
