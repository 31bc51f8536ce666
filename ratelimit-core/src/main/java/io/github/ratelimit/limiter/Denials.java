package io.github.ratelimit.limiter;

import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.ResetListener;
import org.jspecify.annotations.Nullable;

/**
 * The denials this limiter remembers in front of a remote store ({@link LocalDenyCache}), across resets: a denial
 * decided while a key was being reset, here or through any instance sharing the store, is not remembered.
 */
final class Denials {

	private final @Nullable LocalDenyCache cache;

	/** What decisions go to: the store, behind this instance's leased blocks if it is shared. */
	private final RateLimitStore asked;

	/** How many resets and deny-cache clears there have been: a denial learned across one is not remembered. */
	private final AtomicLong resets = new AtomicLong();

	Denials(@Nullable LocalDenyCache cache, RateLimitStore store, RateLimitStore asked) {
		this.cache = cache;
		this.asked = asked;
		if (cache != null) {
			store.addResetListener(new ForgetResetDenials(cache, this.resets));
		}
	}

	/** Whether no denial is remembered: the store decides every request. */
	boolean isOff() {
		return this.cache == null;
	}

	/** Return how many resets and clears this limiter has seen: a denial decided across one is not cached. */
	long resets() {
		return this.resets.get();
	}

	/**
	 * Return the cached denial of a request, unless this instance holds leased units of the key that it can admit
	 * from: a denial learned while another request of this instance was taking a block must not shadow the block.
	 */
	@Nullable Decision cached(RateLimitPolicy policy, String key, long cost, long now) {
		LocalDenyCache denyCache = this.cache;
		if (denyCache == null) {
			return null;
		}
		Decision denied = denyCache.check(policy, key, cost, now);
		if (denied != null && LeasingStore.leases(policy) && this.asked instanceof LeasingStore leasing
				&& leasing.holds(policy, key, cost)) {
			return null;
		}
		return denied;
	}

	/**
	 * Remember a denial the store decided, unless a reset happened since {@code resetsBefore}. Never a concurrency
	 * limit's: a slot frees whenever a request ends, which no delay foretells.
	 */
	void remember(RateLimitPolicy policy, String key, long cost, Decision decision, long now, long resetsBefore) {
		if (this.cache != null && !decision.allowed() && this.resets.get() == resetsBefore
				&& policy.algorithm() != Algorithm.CONCURRENCY) {
			this.cache.remember(policy, key, cost, decision, now);
		}
	}

	/** A reset or clear begins: decisions under way may have been made on the old state. */
	void resetting() {
		this.resets.incrementAndGet();
	}

	void forget(RateLimitPolicy policy, String key) {
		if (this.cache != null) {
			this.cache.evict(policy, key);
		}
	}

	void forgetAll() {
		if (this.cache != null) {
			this.cache.clear();
		}
	}

	/** Forgets the denials of keys reset through any instance sharing the store. */
	private record ForgetResetDenials(LocalDenyCache denyCache, AtomicLong resets) implements ResetListener {

		@Override
		public void onReset(String policy, String variant, String key) {
			this.resets.incrementAndGet(); // decisions under way may have been made on the old state
			this.denyCache.evict(policy, variant, key);
		}

		@Override
		public void onClear() {
			this.resets.incrementAndGet();
			this.denyCache.clear();
		}

	}

}
