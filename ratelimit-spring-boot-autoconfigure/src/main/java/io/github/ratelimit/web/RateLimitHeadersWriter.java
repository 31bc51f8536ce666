package io.github.ratelimit.web;

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
	 * Write the headers for a decision. When a method has several policies, this is called once, with the decision
	 * that rejected the request or else the most restrictive one.
	 * @param response the response, not yet committed
	 * @param policy the policy that made the decision
	 * @param decision the decision
	 */
	void writeHeaders(HttpServletResponse response, RateLimitPolicy policy, Decision decision);

}
