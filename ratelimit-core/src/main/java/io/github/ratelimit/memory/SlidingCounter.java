package io.github.ratelimit.memory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Sliding window counter: the count of the current aligned window plus the previous window's count weighted by the
 * part of it the sliding window still covers. With {@code e} the time elapsed in the current window:
 * <ul>
 * <li>Admit iff {@code previous·(W - e) + (current + cost)·W ≤ L·W} (exact, no rounding).
 * <li>Remaining: {@code ⌊(L·W - previous·(W - e)) / W⌋ - current}.
 * <li>Reset: the end of the next window if the current one has units, else the end of the current one if the
 * previous one had units.
 * <li>Bound: {@code ≤ 2L - 1} in any interval of length {@code W}; {@code ≤ L + ⌈L·τ/W⌉} in an interval of length
 * {@code τ} that straddles an edge (a fixed window admits {@code 2L} there).
 * </ul>
 * Mirrored by {@code sliding-counter.lua}.
 */
final class SlidingCounter extends KeyState {

	private long start = Long.MIN_VALUE;

	private long current;

	private long previous;

	private long last = Long.MIN_VALUE;

	SlidingCounter(String key) {
		super(key);
	}

	@Override
	Decision acquire(RateLimitPolicy policy, long now, long cost) {
		long limit = policy.limit();
		long window = policy.windowMillis();
		now = Math.max(now, this.last);
		long start = now - Math.floorMod(now, window);
		long elapsed = now - start;
		long current = 0;
		long previous = 0;
		if (this.start == start) {
			current = this.current;
			previous = this.previous;
		}
		else if (this.start == start - window) {
			previous = this.current;
		}
		long budget = limit * window - previous * (window - elapsed);
		if (cost <= limit && (current + cost) * window <= budget) {
			this.start = start;
			this.current = current + cost;
			this.previous = previous;
			this.last = now;
			return Decision.allowed(policy.capacity(), budget / window - this.current,
					reset(start, window, now, this.current, previous, elapsed));
		}
		long remaining = budget / window - current;
		long reset = reset(start, window, now, current, previous, elapsed);
		if (cost > limit) {
			return Decision.rejected(policy.capacity(), remaining, reset, Decision.NEVER);
		}
		long retry;
		if (current + cost <= limit) {
			// Passes later in this window, once the previous window's weight has faded enough.
			retry = window - (limit - current - cost) * window / previous - elapsed;
		}
		else {
			// Passes in the next window, once this window's units (then the previous ones) have faded enough.
			retry = window - elapsed + Math.max(0, window - (limit - cost) * window / current);
		}
		return Decision.rejected(policy.capacity(), remaining, reset, retry);
	}

	private static long reset(long start, long window, long now, long current, long previous, long elapsed) {
		if (current > 0) {
			return start + 2 * window - now;
		}
		return (previous > 0) ? window - elapsed : 0;
	}

	@Override
	void refund(RateLimitPolicy policy, long at, long cost) {
		long window = policy.windowMillis();
		long start = at - Math.floorMod(at, window);
		if (this.start == start) {
			this.current -= Math.min(cost, this.current);
		}
		else if (this.start == start + window) {
			this.previous -= Math.min(cost, this.previous);
		}
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		return this.start + 2 * policy.windowMillis();
	}

}
