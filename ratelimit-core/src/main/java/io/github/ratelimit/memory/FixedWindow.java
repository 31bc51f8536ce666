package io.github.ratelimit.memory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Fixed window, aligned to the epoch: window {@code k} is {@code [k·W, (k+1)·W)}.
 * <ul>
 * <li>Admit iff {@code count + cost ≤ L}, counting only this window's units.
 * <li>Remaining: {@code L - count}. Reset, retry-after and the next unit: the end of the window.
 * <li>Bound: {@code ≤ L} per aligned window, {@code ≤ 2L} in any interval of length {@code W} (reached by {@code L}
 * just before an edge and {@code L} just after it).
 * </ul>
 * Mirrored by {@code fixed-window.lua}.
 */
final class FixedWindow extends WindowState {

	private long start = Long.MIN_VALUE;

	private long count;

	/** The time of the last admission; time never runs backwards for a key. */
	private long last = Long.MIN_VALUE;

	FixedWindow(String key) {
		super(key);
	}

	@Override
	Decision decide(RateLimitPolicy policy, long now, long cost) {
		long limit = policy.limit();
		long window = policy.windowMillis();
		now = Math.max(now, this.last);
		long start = now - Math.floorMod(now, window);
		long count = (this.start == start) ? this.count : 0;
		long reset = start + window - now;
		// Units come back only at the end of the window: that is when the next one does.
		if (cost > limit || count + cost > limit) {
			return Decision.rejected(policy.capacity(), limit - count, reset, (cost > limit) ? Decision.NEVER : reset,
					reset);
		}
		count += cost;
		this.start = start;
		this.count = count;
		this.last = now;
		return Decision.allowed(policy.capacity(), limit - count, reset, reset);
	}

	@Override
	void refund(RateLimitPolicy policy, long at, long cost) {
		at = windowTime(policy, at);
		if (this.start == at - Math.floorMod(at, policy.windowMillis())) {
			this.count -= Math.min(cost, this.count);
		}
	}

	@Override
	void charge(RateLimitPolicy policy, long at, long cost) {
		at = windowTime(policy, at);
		if (this.start == at - Math.floorMod(at, policy.windowMillis())) {
			this.count = Math.min(Long.MAX_VALUE / 4, this.count + Math.min(cost, Long.MAX_VALUE / 4));
		}
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		return epochMillis(policy, this.start + policy.windowMillis());
	}

}
