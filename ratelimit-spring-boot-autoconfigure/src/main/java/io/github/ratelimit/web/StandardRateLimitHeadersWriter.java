package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Writes {@code RateLimit-Limit}, {@code RateLimit-Remaining} and {@code RateLimit-Reset} (delay-seconds until the
 * full capacity is back, rounded up) on every response, and {@code Retry-After} (delay-seconds, at least 1) on a
 * rejection. These are the separate fields of the IETF {@code draft-ietf-httpapi-ratelimit-headers} up to draft 06,
 * the form most clients read.
 * <p>
 * When the store failed and the policy lets requests pass uncounted, nothing is known of the counters and no header
 * is written; when it rejects them instead, only {@code Retry-After} is.
 *
 * @since 0.1.0
 */
public class StandardRateLimitHeadersWriter implements RateLimitHeadersWriter {

	/** Header carrying the capacity. */
	public static final String LIMIT = "RateLimit-Limit";

	/** Header carrying the units that could pass now. */
	public static final String REMAINING = "RateLimit-Remaining";

	/** Header carrying the seconds until the full capacity is available again. */
	public static final String RESET = "RateLimit-Reset";

	/** Header carrying the seconds to wait before retrying a rejected request. */
	public static final String RETRY_AFTER = "Retry-After";

	@Override
	public void writeHeaders(HttpServletResponse response, RateLimitPolicy policy, Decision decision) {
		if (decision.isKnown()) {
			response.setHeader(LIMIT, Long.toString(decision.limit()));
			response.setHeader(REMAINING, Long.toString(decision.remaining()));
			response.setHeader(RESET, Long.toString(decision.resetAfterSeconds()));
		}
		if (!decision.allowed()) {
			response.setHeader(RETRY_AFTER, Long.toString(decision.retryAfterSeconds()));
		}
	}

}
