package io.github.ratelimit.limiter;

import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/** A key's block, and what sizes its next one; guarded by its own monitor. */
final class LeaseBlock {

	/** The units of the block last taken, which requests take without the monitor; {@code null} before. */
	volatile @Nullable LeaseGrant grant;

	/** The size of the last block taken. */
	long size;

	/** Until this instance's time, the store has too little left for a block: requests ask for their own. */
	long scarceUntil = Long.MIN_VALUE;

	/** For a bucket: the most whole tokens the store last said it had left, and this instance's time then. */
	long lastRemaining;

	long lastKnownAt = Long.MIN_VALUE;

	/** Whether the block was reset or dropped: it admits nothing more, and takes no more units from the store. */
	volatile boolean dropped;

	/** The block being taken, which the key's other requests wait for rather than take one each. */
	@Nullable CompletableFuture<Void> refilling;

	boolean live(long now) {
		LeaseGrant grant = this.grant;
		return grant != null && grant.live(now);
	}

	/** The units the key's next store call takes: a block, or the request's own. Called with the monitor held. */
	static long plannedSize(RateLimitPolicy policy, LeaseBlock block, long cost, long now) {
		if (policy.algorithm().isBucket() && !bucketHasRoom(policy, block, cost, now)) {
			return cost;
		}
		return Math.max(cost, nextSize(policy, block, now));
	}

	static void noteRemaining(LeaseBlock block, Decision decision, long at) {
		synchronized (block) {
			block.lastRemaining = decision.remaining();
			block.lastKnownAt = at;
		}
	}

	/**
	 * Whether a bucket, as the store last described it, has room for a block to live: it must not be full, or the
	 * block's units would lapse at once (see {@link #lifetime}). A bucket not heard of yet is asked for the request's
	 * units alone, which tells.
	 */
	private static boolean bucketHasRoom(RateLimitPolicy policy, LeaseBlock block, long cost, long now) {
		if (block.lastKnownAt == Long.MIN_VALUE || now < block.lastKnownAt) {
			return false;
		}
		long tokens = policy.burst() - (block.lastRemaining + 1) + cost;
		// What refilled since, rounded up: tokens × unitsPerToken ≤ elapsed × unitsPerMilli.
		long elapsed = Math.min(now - block.lastKnownAt, policy.windowMillis());
		long refilled = (elapsed * policy.unitsPerMilli() + policy.unitsPerToken() - 1) / policy.unitsPerToken();
		return tokens - refilled > 0;
	}

	/**
	 * The size of the key's next block: the policy's, or, for {@link RateLimitPolicy#LEASE_AUTO}, twice the last one
	 * if it was used up before it lapsed, else half of it; at least 1, at most the capacity divided by
	 * {@value LeasingStore#AUTO_SHARE}. None while the store had too little left for the last one, until the time it gave.
	 * Called with the block's monitor held.
	 */
	private static long nextSize(RateLimitPolicy policy, LeaseBlock block, long now) {
		if (now < block.scarceUntil) {
			return 1; // what the request costs: no block until the store has one to give
		}
		if (policy.lease() != RateLimitPolicy.LEASE_AUTO) {
			return policy.lease();
		}
		long most = Math.max(1, policy.capacity() / LeasingStore.AUTO_SHARE);
		long last = Math.max(1, block.size);
		LeaseGrant grant = block.grant;
		boolean usedUp = grant == null || grant.live(now) || grant.left.get() == 0;
		long next = usedUp ? 2 * last : Math.max(1, last / 2);
		return Math.min(most, next);
	}

	/**
	 * How long units counted at {@code countedAt} may be admitted from a block, so that every admission is one the
	 * store would have made then. In a window ({@code FIXED}, and the current window of {@code SLIDING_COUNTER}): until
	 * it ends. In a bucket: while the bucket, refilling at its rate from what it had left, could not yet have reached
	 * its burst with the block's unspent units still out of it, since the units a full bucket would have lost are
	 * what admitting them later could add; so a block taken from a nearly full bucket lapses at once.
	 */
	static long lifetime(RateLimitPolicy policy, long countedAt, long storeRemaining, long unspent) {
		long window = policy.windowMillis();
		if (policy.algorithm() == Algorithm.FIXED || policy.algorithm() == Algorithm.SLIDING_COUNTER) {
			return window - Math.floorMod(countedAt, window);
		}
		// The store reports whole tokens: up to one more may be there in part.
		long room = policy.burst() - (storeRemaining + 1) - unspent;
		if (room <= 0) {
			return 0;
		}
		// room × unitsPerToken stays below 2^51: the policy checks burst × unitsPerToken.
		return Math.min(window, room * policy.unitsPerToken() / policy.unitsPerMilli());
	}

	/** A decision of the store that took a block: what it had left, with the block's unspent units. */
	static Decision reported(RateLimitPolicy policy, Decision decision, long left) {
		return new Decision(true, decision.limit(), Math.min(decision.limit(), decision.remaining() + left),
				decision.resetAfterMillis(), 0, decision.nextUnitAfterMillis(), decision.origin());
	}

}
