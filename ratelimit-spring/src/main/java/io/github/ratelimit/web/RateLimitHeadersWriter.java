package io.github.ratelimit.web;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpHeaders;

/**
 * Writes the rate limit headers of a response, 200 or 429 alike: the one place that decides their names and format.
 * Define a bean of this type to replace the default, {@link StandardRateLimitHeadersWriter}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RateLimitHeadersWriter {

	/**
	 * Write the headers for a decision: those of one policy (see {@link #writeHeaders(HttpHeaders, List)}, through
	 * which the engine calls it, with the decision that rejected the request or else the most restrictive one).
	 * @param headers the response's headers, which the web stack sets on the response (replacing any of the same
	 * name an earlier layer set)
	 * @param policy the policy that made the decision
	 * @param decision the decision
	 */
	void writeHeaders(HttpHeaders headers, RateLimitPolicy policy, Decision decision);

	/**
	 * Write the headers for every policy that applied to a request: the one that rejected it or else the most
	 * restrictive first, then the others from most to least restrictive. By default, the headers of the first.
	 * @param headers the response's headers, which the web stack sets on the response
	 * @param limits the policies and their decisions, not empty
	 */
	default void writeHeaders(HttpHeaders headers, List<AppliedRateLimit> limits) {
		AppliedRateLimit first = limits.get(0);
		writeHeaders(headers, first.policy(), first.decision());
	}

}
