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
 * <li>Next unit: while the previous window weighs, when its fading frees one more unit; else
 * {@code W - e + W - ⌊(L - 1)·W / L⌋}, when the first of {@code L} units used now fades back.
 * <li>Bound: {@code ≤ 2L - 1} in any interval of length {@code W}; {@code ≤ L + ⌈L·τ/W⌉} in an interval of length
 * {@code τ} that straddles an edge (a fixed window admits {@code 2L} there).
 * </ul>
 * Mirrored by {@code sliding-counter.lua}.
 */
final class SlidingCounter extends WindowState {

	private long start = Long.MIN_VALUE;

	private long current;

	private long previous;

	private long last = Long.MIN_VALUE;

	SlidingCounter(String key) {
		super(key);
	}

	@Override
	Decision decide(RateLimitPolicy policy, long now, long cost) {
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
			long remaining = budget / window - this.current;
			return Decision.allowed(policy.capacity(), remaining,
					reset(start, window, now, this.current, previous, elapsed),
					nextUnit(limit, window, elapsed, this.current, previous, remaining));
		}
		long remaining = budget / window - current;
		long reset = reset(start, window, now, current, previous, elapsed);
		long next = nextUnit(limit, window, elapsed, current, previous, remaining);
		if (cost > limit) {
			return Decision.rejected(policy.capacity(), remaining, reset, Decision.NEVER, next);
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
		return Decision.rejected(policy.capacity(), remaining, reset, retry, next);
	}

	/**
	 * The earliest time more than {@code remaining} units can have passed: while the previous window weighs, when
	 * its fading frees one more; else when, all of them used now, the first comes back once this window has ended
	 * and its units fade.
	 */
	private static long nextUnit(long limit, long window, long elapsed, long current, long previous, long remaining) {
		if (previous > 0 && current + remaining + 1 <= limit) {
			return window - (limit - current - remaining - 1) * window / previous - elapsed;
		}
		return window - elapsed + window - (limit - 1) * window / limit;
	}

	private static long reset(long start, long window, long now, long current, long previous, long elapsed) {
		if (current > 0) {
			return start + 2 * window - now;
		}
		return (previous > 0) ? window - elapsed : 0;
	}

	@Override
	void refund(RateLimitPolicy policy, long at, long cost) {
		at = windowTime(policy, at);
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
	void charge(RateLimitPolicy policy, long at, long cost) {
		at = windowTime(policy, at);
		long window = policy.windowMillis();
		long start = at - Math.floorMod(at, window);
		long extra = Math.min(cost, Long.MAX_VALUE / 4);
		if (this.start == start) {
			this.current = Math.min(Long.MAX_VALUE / 4, this.current + extra);
		}
		else if (this.start == start + window) {
			this.previous = Math.min(Long.MAX_VALUE / 4, this.previous + extra);
		}
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		return epochMillis(policy, this.start + 2 * policy.windowMillis());
	}

}
