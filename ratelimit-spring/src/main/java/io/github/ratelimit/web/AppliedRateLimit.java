package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * One policy that applied to a request, with its decision.
 *
 * @param policy the policy
 * @param decision its decision for the request
 * @param sharedByEveryClient whether its key is the same for every client (an application-wide quota such as
 * {@code key: "'application'"}): its state is the whole application's, which response headers do not show by default
 * (since 0.2.0)
 * @since 0.1.0
 */
public record AppliedRateLimit(RateLimitPolicy policy, Decision decision, boolean sharedByEveryClient) {

	/**
	 * Create one for a policy keyed per client.
	 * @param policy the policy
	 * @param decision its decision for the request
	 */
	public AppliedRateLimit(RateLimitPolicy policy, Decision decision) {
		this(policy, decision, false);
	}

	/**
	 * Return the seconds a rejected client is told to wait ({@code Retry-After}, and the problem body's
	 * {@code retryAfter}): the decision's wait, but never more than the policy's window. A longer wait is exact but
	 * rare (a sliding counter whose previous window still weighs, a cost above what a bucket refills in a window), and
	 * a client told a whole window comes back then and is told the rest. An unavailable store's wait (503) is the
	 * circuit breaker's and is not shortened.
	 * @return the seconds to wait, at least 1
	 * @since 0.2.0
	 */
	public long retryAfterSeconds() {
		return retryAfterSeconds(this.policy, this.decision);
	}

	static long retryAfterSeconds(RateLimitPolicy policy, Decision decision) {
		long seconds = decision.retryAfterSeconds();
		if (decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return seconds;
		}
		long window = Math.max(1, (policy.windowMillis() + 999) / 1000);
		return Math.min(seconds, window);
	}

}
