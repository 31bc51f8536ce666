package io.github.ratelimit.web;

import java.net.URI;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Thrown for a request of a key that is locked out: it broke a policy with a penalty, and every policy of the
 * penalty group rejects it until the lock ends. Rendered as {@code 429 Too Many Requests} with a problem body of the
 * rate limit headers draft's type {@value #ABNORMAL_USAGE_DETECTED_TYPE}, whose {@code retryAfter} (and the
 * {@code Retry-After} header) says when the lock ends.
 *
 * @since 0.5.0
 */
public class RateLimitLockedOutException extends RateLimitExceededException {

	/** The problem type of the IETF rate limit headers draft for a client penalised for its usage. */
	public static final String ABNORMAL_USAGE_DETECTED_TYPE =
			"https://iana.org/assignments/http-problem-types#abnormal-usage-detected";

	/** {@link #ABNORMAL_USAGE_DETECTED_TYPE} as a URI. */
	public static final URI ABNORMAL_USAGE_DETECTED = URI.create(ABNORMAL_USAGE_DETECTED_TYPE);

	/**
	 * Create a new exception.
	 * @param policy the policy of the penalty group that the request was rejected under
	 * @param decision the rejection, whose retry delay is the rest of the lock-out
	 * @param violatedPolicies the names of every policy that rejected the request
	 */
	public RateLimitLockedOutException(RateLimitPolicy policy, Decision decision, List<String> violatedPolicies) {
		super(policy, decision, violatedPolicies);
		getBody().setType(ABNORMAL_USAGE_DETECTED);
		getBody().setDetail("Locked out of rate limit policy '" + policy.name() + "' for abnormal usage. Retry after "
				+ AppliedRateLimit.retryAfterSeconds(policy, decision) + " seconds.");
	}

	@Override
	public String getMessage() {
		return "Locked out of rate limit policy '" + getPolicy().name() + "'";
	}

}
