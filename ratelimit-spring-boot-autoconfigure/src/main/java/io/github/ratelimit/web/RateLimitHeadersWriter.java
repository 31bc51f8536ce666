package io.github.ratelimit.web;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Writes the rate limit headers of a response, 200 or 429 alike: the one place that decides their names and format.
 * Define a bean of this type to replace the default, {@link StandardRateLimitHeadersWriter}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RateLimitHeadersWriter {

	/**
	 * Write the headers for a decision: those of one policy (see {@link #writeHeaders(HttpServletResponse, List)},
	 * through which the interceptor calls it, with the decision that rejected the request or else the most
	 * restrictive one).
	 * @param response the response, not yet committed
	 * @param policy the policy that made the decision
	 * @param decision the decision
	 */
	void writeHeaders(HttpServletResponse response, RateLimitPolicy policy, Decision decision);

	/**
	 * Write the headers for every policy that applied to a request: the one that rejected it or else the most
	 * restrictive first, then the others from most to least restrictive. By default, the headers of the first.
	 * @param response the response, not yet committed
	 * @param limits the policies and their decisions, not empty
	 */
	default void writeHeaders(HttpServletResponse response, List<AppliedRateLimit> limits) {
		AppliedRateLimit first = limits.get(0);
		writeHeaders(response, first.policy(), first.decision());
	}

}
