package io.github.ratelimit.memory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Sliding log: the time and cost of every admitted request within the last window, oldest first. Requests admitted
 * in the same millisecond share one entry, so the log never holds more than {@code min(L, W)} entries.
 * <ul>
 * <li>An entry counts while {@code now - W < time}: the window is the half-open interval {@code (now - W, now]}.
 * <li>Admit iff {@code sum + cost ≤ L}.
 * <li>Remaining: {@code L - sum}. Reset: until the newest entry leaves the window. Retry-after: until enough of the
 * oldest entries have left for {@code cost} to fit. Next unit: until the oldest entry leaves (a window, if there
 * is none).
 * <li>Bound: exact, {@code ≤ L} in every half-open interval of length {@code W}.
 * </ul>
 * An entry whose units are all given back is removed, so the log holds only entries that hold units.
 * <p>
 * Memory: an entry takes 16 bytes, in two arrays that double as the log grows and do not shrink while the key is
 * held, so a key holding up to {@code n ≤ min(L, W, admitted requests in a window)} entries takes at most about
 * {@code 32·n} bytes on top of its fixed couple of hundred. Unlike the other algorithms this grows with the limit, and
 * the bound on the number of keys does not cap it: a policy's keys take at most
 * {@code maxKeysPerPolicy × 32·min(L, W)} bytes for their logs.
 * <p>
 * Mirrored by {@code sliding-log.lua}.
 */
final class SlidingLog extends KeyState {

	/** How much later than its clock read an admission may have been logged (another's, merged): a moment. */
	private static final long MAX_LOGGED_LATER_MILLIS = 1_000;

	private long[] times = new long[4];

	private long[] costs = new long[4];

	/** Index of the oldest entry in the ring. */
	private int head;

	private int size;

	private long sum;

	/** Entries up to this time have left the window: a refund of an admission at or before it gives nothing. */
	private long cutoff = Long.MIN_VALUE;

	SlidingLog(String key) {
		super(key);
	}

	@Override
	Decision acquire(RateLimitPolicy policy, long now, long cost) {
		long limit = policy.limit();
		long window = policy.windowMillis();
		if (this.size > 0) {
			now = Math.max(now, newest());
		}
		while (this.size > 0 && this.times[this.head] <= now - window) {
			this.sum -= this.costs[this.head];
			this.head = (this.head + 1) % this.times.length;
			this.size--;
		}
		this.cutoff = Math.max(this.cutoff, now - window);
		if (cost <= limit && this.sum + cost <= limit) {
			append(now, cost);
			return Decision.allowed(policy.capacity(), limit - this.sum, newest() + window - now,
					this.times[this.head] + window - now);
		}
		long reset = (this.size > 0) ? newest() + window - now : 0;
		// Units come back as the oldest entries leave the window; one used now, a window from now.
		long next = (this.size > 0) ? this.times[this.head] + window - now : window;
		if (cost > limit) {
			return Decision.rejected(policy.capacity(), limit - this.sum, reset, Decision.NEVER, next);
		}
		long toFree = this.sum + cost - limit;
		int index = this.head;
		while (true) {
			toFree -= this.costs[index];
			if (toFree <= 0) {
				return Decision.rejected(policy.capacity(), limit - this.sum, reset, this.times[index] + window - now,
						next);
			}
			index = (index + 1) % this.times.length;
		}
	}

	private long newest() {
		return this.times[(this.head + this.size - 1) % this.times.length];
	}

	private void append(long now, long cost) {
		this.sum += cost;
		if (this.size > 0 && newest() == now) {
			this.costs[(this.head + this.size - 1) % this.times.length] += cost;
			return;
		}
		if (this.size == this.times.length) {
			grow();
		}
		int tail = (this.head + this.size) % this.times.length;
		this.times[tail] = now;
		this.costs[tail] = cost;
		this.size++;
	}

	private void grow() {
		long[] times = new long[this.times.length * 2];
		long[] costs = new long[this.costs.length * 2];
		for (int i = 0; i < this.size; i++) {
			times[i] = this.times[(this.head + i) % this.times.length];
			costs[i] = this.costs[(this.head + i) % this.costs.length];
		}
		this.times = times;
		this.costs = costs;
		this.head = 0;
	}

	@Override
	void refund(RateLimitPolicy policy, long at, long cost) {
		if (at <= this.cutoff) {
			return; // its window has passed: the units came back then
		}
		// Its own entry, else the earliest after it that holds units: a clock read before the key's lock ran behind
		// another admission's, which logged this one at its later time (at most a moment later). Refunds are of
		// recent admissions: search from the newest.
		int found = -1;
		for (int i = this.size - 1; i >= 0; i--) {
			int index = (this.head + i) % this.times.length;
			long time = this.times[index];
			if (time < at) {
				break;
			}
			if (time - at <= MAX_LOGGED_LATER_MILLIS && this.costs[index] > 0) {
				found = i;
			}
		}
		if (found < 0) {
			return;
		}
		int index = (this.head + found) % this.times.length;
		long back = Math.min(cost, this.costs[index]);
		this.costs[index] -= back;
		this.sum -= back;
		if (this.costs[index] == 0) {
			remove(found); // so that the log holds only entries that hold units: a concurrency limit's slots
		}
	}

	/** Remove the {@code i}-th entry from the oldest, keeping the others in order. */
	private void remove(int i) {
		for (int j = i; j < this.size - 1; j++) {
			int to = (this.head + j) % this.times.length;
			int from = (this.head + j + 1) % this.times.length;
			this.times[to] = this.times[from];
			this.costs[to] = this.costs[from];
		}
		this.size--;
	}

	@Override
	void charge(RateLimitPolicy policy, long at, long cost) {
		// The admission's entry weighs what it really cost, and leaves the window when it would have.
		for (int i = this.size - 1; i >= 0; i--) {
			int index = (this.head + i) % this.times.length;
			long time = this.times[index];
			if (time == at) {
				long extra = Math.min(cost, Long.MAX_VALUE / 4 - this.sum);
				this.costs[index] += extra;
				this.sum += extra;
				return;
			}
			if (time < at) {
				return;
			}
		}
	}

	@Override
	long expiresAt(RateLimitPolicy policy) {
		return (this.size > 0) ? newest() + policy.windowMillis() : Long.MIN_VALUE;
	}

}
