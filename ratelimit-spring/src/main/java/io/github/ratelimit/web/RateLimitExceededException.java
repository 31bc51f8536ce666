package io.github.ratelimit.web;

import java.net.URI;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpStatus;

/**
 * Thrown when a request exceeds a rate limit; rendered as {@code 429 Too Many Requests} with an RFC 9457 problem
 * body of type {@value #QUOTA_EXCEEDED_TYPE} whose members {@code policy}, {@code violated-policies} (the names of the
 * policies that rejected the request) and {@code retryAfter} (seconds) say which limit and how long to wait.
 *
 * @since 0.1.0
 */
public class RateLimitExceededException extends RateLimitException {

	/** The problem type of the IETF rate limit headers draft, registered with IANA. */
	public static final String QUOTA_EXCEEDED_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** {@link #QUOTA_EXCEEDED_TYPE} as a URI. */
	public static final URI QUOTA_EXCEEDED = URI.create(QUOTA_EXCEEDED_TYPE);

	/**
	 * Create a new exception.
	 * @param policy the policy that rejected the request
	 * @param decision the rejection
	 */
	public RateLimitExceededException(RateLimitPolicy policy, Decision decision) {
		this(policy, decision, List.of(policy.name()));
	}

	/**
	 * Create an exception for a request that several policies rejected.
	 * @param policy the policy whose rejection lasts longest
	 * @param decision its decision
	 * @param violatedPolicies the names of every policy that rejected the request
	 * @since 0.2.0
	 */
	public RateLimitExceededException(RateLimitPolicy policy, Decision decision, List<String> violatedPolicies) {
		super(HttpStatus.TOO_MANY_REQUESTS, detail(policy, decision), policy, decision);
		getBody().setType(QUOTA_EXCEEDED);
		getBody().setProperty("violated-policies", List.copyOf(violatedPolicies));
	}

	private static String detail(RateLimitPolicy policy, Decision decision) {
		if (policy.algorithm() == Algorithm.CONCURRENCY && decision.origin() != Decision.Origin.PENALTY) {
			return "Concurrency limit of policy '" + policy.name() + "' reached: " + policy.limit()
					+ " requests in flight at most. Retry once one of them ended.";
		}
		return decision.exceedsCapacity()
				? "Request exceeds the capacity of rate limit policy '" + policy.name() + "' and can never pass."
				: "Rate limit of policy '" + policy.name() + "' exceeded. Retry after " + AppliedRateLimit.retryAfterSeconds(policy, decision)
						+ " seconds.";
	}

	@Override
	public String getMessage() {
		return "Rate limit of policy '" + getPolicy().name() + "' exceeded";
	}

}
