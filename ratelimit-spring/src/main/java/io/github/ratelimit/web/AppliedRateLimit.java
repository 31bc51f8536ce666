package io.github.ratelimit.web;

import io.github.ratelimit.Algorithm;
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
	 * {@code retryAfter}): the decision's wait, never more than the policy's window, except a bucket's, which is never
	 * more than the time until it is full again. A bucket's wait is thus exact however long: a debt a cost settled
	 * after the response left ({@code settle}) is announced for as long as the refill takes to repay it. Of the
	 * others only a sliding counter whose previous window still weighs waits longer than a window; a client told a
	 * whole window comes back then and is told the rest. An unavailable store's wait (503) is the circuit breaker's,
	 * and a locked-out key's the rest of its lock-out: neither is shortened. A concurrency limit's rejection says
	 * nothing of when a slot frees (whenever a request in flight ends): 0, and no {@code Retry-After} is sent.
	 * @return the seconds to wait, at least 1; 0 for a concurrency limit's rejection
	 * @since 0.2.0
	 */
	public long retryAfterSeconds() {
		return retryAfterSeconds(this.policy, this.decision);
	}

	static long retryAfterSeconds(RateLimitPolicy policy, Decision decision) {
		long seconds = decision.retryAfterSeconds();
		if (decision.origin() == Decision.Origin.FAIL_CLOSED || decision.origin() == Decision.Origin.PENALTY) {
			return seconds;
		}
		if (policy.algorithm() == Algorithm.CONCURRENCY) {
			return 0;
		}
		long bound = Math.max(1, (policy.windowMillis() + 999) / 1000);
		if (policy.algorithm().isBucket() && decision.retryAfterMillis() != Decision.NEVER) {
			bound = Math.max(bound, decision.resetAfterSeconds());
		}
		return Math.min(seconds, bound);
	}

	/**
	 * Return the milliseconds until more than the remaining units can have passed: the decision's, but for a bucket
	 * in debt no earlier than the refill repays the debt. A store tells when the level rises by one token, which in
	 * debt is still no unit; the time the bucket takes from one token to full, taken from the time until it is full,
	 * is never later than the debt's end.
	 */
	long nextUnitAfterMillis() {
		long next = this.decision.nextUnitAfterMillis();
		if (!this.policy.algorithm().isBucket() || !this.decision.isKnown()) {
			return next;
		}
		long units;
		try {
			units = Math.multiplyExact(this.policy.capacity() - 1, this.policy.unitsPerToken());
		}
		catch (ArithmeticException ex) {
			return next; // a refill too slow to count in milliseconds: the store's answer stands
		}
		long perMilli = this.policy.unitsPerMilli();
		long fromOneTokenToFull = units / perMilli + ((units % perMilli == 0) ? 0 : 1);
		return Math.max(next, this.decision.resetAfterMillis() - fromOneTokenToFull);
	}

}
